// ros-default-st: the default single-threaded executor, Casini, Biondi, Nelissen, Buttazzo,
// "Response-Time Analysis of ROS 2 Processing Chains under Reservation-Based Scheduling",
// ECRTS 2019 (the chain-segment form quoted in shared/reference/response-time-analyses.md):
//   busy window     L* = min{L : sbf(L) >= Σ_all rbf(L)}
//   per offset A    F(A) = min{F : sbf(F) >= rbf_e(A + ε) + rbf_p(F − C_e + ε) + Σ_other rbf(F − C_e + ε)}
//   segment bound   R = max_{A < L*} (F(A) − A)
// with e the segment's last callback, p its earlier ones, rbf_x(Δ) = ⌈(Δ + J_x)/T_x⌉·C_x.
// How we evaluate it (integer ns, ε = 1): the start of e is found first, as the least s with
// sbf(s) > [work released in [0, s) other than e itself] (the executor is busy from the start
// of the busy window until e starts), and then F = s − 1 + sbf⁻¹(C_e): once started, e runs
// non-preemptively on the reservation. With a dedicated core this is exactly the equation
// above; with a reservation it does not assume that the last C_e units arrive back to back.
// The candidates for A are the instants where rbf_e(A + ε) steps: A_n = max(0, (n−1)T − J).
// Deliberate simplifications, all on the safe side: the polling-point order is not used (any
// work released before e starts may run before it, as in Casini's rbf_other), so timers get no
// special treatment; release jitter of a chain's first callback is its timer's jitter, that of
// later callbacks J_x = R_i − C_x (they run inside their chain's response window); a segment with an intra-executor hop cost is split
// into one segment per callback (a suspension would break the busy-window argument).
#include <algorithm>

#include "chain_rta.hpp"
#include "fixed_point.hpp"

namespace chainrt::detail {

namespace {

struct Rbf {
  Duration C = 0, T = 1, J = 0;
  Duration at(Duration d) const { return d <= 0 ? 0 : ((d + J + T - 1) / T) * C; }
};

std::optional<Duration> casini_one(const View& v, int k, const std::vector<int>& cbs, int X, const Windows& W,
                                   Duration offset, Duration limit) {
  const Task& tk = v.tasks[k];
  if (v.supply[X].size() != 1) return std::nullopt;
  const Supply& sup = v.supply[X][0];
  std::vector<Rbf> others;
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    const Task& ti = v.tasks[i];
    for (int c : ti.work) {
      if (v.cbs[c].executor != X) continue;
      if ((static_cast<int>(i) == k || ti.shadow_of == k) && std::find(cbs.begin(), cbs.end(), c) != cbs.end()) continue;
      // The first callback of a chain is released by its timer (jitter: the timer's); later
      // ones anywhere before their own end (Windows: each callback of an instance's work, its
      // fan-out included, completes by its end bound; without one there is no busy window).
      const Duration end = W.end_of(i, c);
      if (end == kUnbounded && c != ti.path.front()) return std::nullopt;
      Duration J = c == ti.path.front() ? ti.src_jitter : std::max<Duration>(0, end - v.cbs[c].wcet);
      others.push_back(Rbf{v.cbs[c].wcet, ti.T, J});
    }
  }
  Duration Cp = 0;
  for (std::size_t j = 0; j + 1 < cbs.size(); ++j) Cp += v.cbs[cbs[j]].wcet;
  const Duration Ce = v.cbs[cbs.back()].wcet;
  const Rbf p{Cp, tk.T, offset}, e{Ce, tk.T, offset};
  auto other = [&](Duration d) {
    Duration s = 0;
    for (const auto& o : others) s += o.at(d);
    return s;
  };
  // Busy window.
  const Duration horizon = std::max<Duration>(limit, tk.T) * 64;
  SupplySet one{{sup}};
  // Busy window (Casini et al., Sec. 6): the least L with sbf(L) >= rbf(L) of everything.
  const auto busy = least_fixed_point(1, horizon, [&](Duration L) {
    return one.first_at_least(p.at(L) + e.at(L) + other(L), L, horizon).value_or(horizon + 1);
  });
  if (!busy) return std::nullopt;
  const Duration L = *busy.value;
  const Duration ce_wall = sup.sbf_inverse(Ce);
  if (ce_wall < 0) return std::nullopt;
  Duration worst = 0;
  for (Duration n = 1;; ++n) {
    Duration A = std::max<Duration>(0, (n - 1) * tk.T - offset);
    if (A >= L) break;
    // Start of e: least s with sbf(s) > W(s), W(s) = work released in [0, s) except e itself.
    const auto start = least_fixed_point(1, horizon, [&](Duration s) {
      return one.first_at_least(e.at(A + 1) - Ce + p.at(s) + other(s) + 1, s, horizon).value_or(horizon + 1);
    });
    if (!start) return std::nullopt;
    const Duration s = *start.value;
    Duration F = s - 1 + ce_wall;
    worst = std::max(worst, F - A);
    if (worst > limit) return std::nullopt;
  }
  return worst;
}

}  // namespace

std::optional<Duration> casini_segment_bound(const View& v, int k, const Segment& seg, const Windows& W,
                                             Duration offset, Duration limit) {
  if (seg.intra_comm == 0) return casini_one(v, k, seg.cbs, seg.executor, W, offset, limit);
  // Split at the hops (each hop's cost as a delay between the parts). The hop costs are the
  // view's (model_hop_cost), as for every other analysis: until 2026-11-23 this split charged
  // only the declared cost, below the measured latencies the simulator replays (--comm sampled).
  Duration total = 0;
  for (std::size_t j = 0; j < seg.cbs.size(); ++j) {
    total += seg.hop_into[j];
    auto b = casini_one(v, k, {seg.cbs[j]}, seg.executor, W, offset + total, limit - total);
    if (!b) return std::nullopt;
    total += *b;
    if (total > limit) return std::nullopt;
  }
  return total;
}

}  // namespace chainrt::detail
