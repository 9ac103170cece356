// The chain response-time engine behind edf-mt, fp-mt and picas-st.
//
// Source: EDF ready-queue paper (Al Arafat et al., TCAD 2024), Sec. V: Theorem 1 (Eq. 8-9,
// after Zhou et al. TECS 2019, GEDF with fixed preemption points) and Theorem 2 (Eq. 10-12,
// mutually exclusive group blocking, Lemma 5); for the supply side LaME Sec. 4.2 Theorem 1
// (Sobhani et al. RTAS 2023: dbf(Δ) < sbf_Π(Δ), R = Δ + sbf⁻¹(e_last − 1)).
//
// Why not the published formulas verbatim: the extracted Lemma 2 (carry-in interference,
// terms D and E) is garbled, the range of A_k in Eq. 8 is not given, and two steps do not
// hold for the executor we simulate: (1) Theorem 2 adds one group blocking per callback
// (Eq. 10), but a callback can wait for SEVERAL earlier-deadline callbacks of its group while
// m−1 threads idle (three chains of one group released together on m = 4 threads: the last
// one waits for the other two, which Eq. 11 counts only as ⌊Ψ/m⌋); (2) lower-priority
// callbacks that start while the chain's previous callback runs can block it again at every
// callback boundary, not only once. So we re-derive the bound with the same structure (the
// "problem window" from the chain's release, the time the last callback needs to START,
// Eq. 9's R = t' + e_last − 1) and safe interference terms, and we say so here.
//
// Derivation (integer time, chain instance J of task k, segment released at a):
// every instant of [a, s_last) (s_last: start of the segment's last callback) is one of
//   (1) J executing one of its earlier callbacks        — at most E' = Σ_{j<q} e_j in total
//   (2) J suspended in an intra-executor hop             — at most S = Σ hop costs
//   (3) J's ready callback blocked by its mutually exclusive group: another callback of the
//       group runs (readyQueue Case B; the group is freed only by a completion) — at most
//       G(x) = Σ_g Σ_{i≠k} n_i(x)·C_{i,g}, n_i(x) = ⌈(x + R_i)/T_i⌉ instances overlapping
//   (4) J's callback eligible but not running: then every thread that may run it is busy
//       (the readyQueue is refreshed before every selection, so an idle thread would take it).
// During (4) the threads run (a) work that outranks J (EDF: jobs with deadline <= d_k, at most
// min(W_i(x), I^EDF_i) per chain; FP: callbacks with priority >= J's lowest; W_i is the
// carry-in workload N·C + min(C, x + R_i − C − N·T) of a chain whose instance work lies in
// [r, r + R_i]) or (b) lower-ranked callbacks that started before the current "eligibility
// event" of J (its release, each callback boundary, each group release): one per other chain
// per event (chains run one callback at a time), at most m per event.
// Each chain's share of (4) is at most |(4)| (it runs on one thread at a time), so with
// Bertogna & Cirinei's lemma (if Σ I^i >= m·X and every I^i <= X then Σ min(I^i, y) >= m·y for
// y <= X) the last callback has started before a + x whenever
//     E' + S + G(x) + ⌊(Σ_i min(I_i(x), w_i·(x − E' − S)) + LP(x)) / m⌋ + 1 <= x       (cf. Eq. 8/11)
// and R_seg = x − 1 + e_last                                                          (Eq. 9/12).
// On reserved threads (SCHED_DEADLINE) the per-chain caps are dropped and the supply form is
// used: m·(E'_w + S + G(x)) + Σ_i I_i(x) + LP(x) < sbf_Π(x), R_seg = x − 1 + sbf⁻¹(e_last),
// with E'_w = Σ sbf⁻¹(e_j): any window of x time units carries >= sbf_Π(x) supply; supply
// outside (4) is at most m per instant, inside (4) it is all spent on other work.
// A branching chain on one executor is analysed to its completion (E' = all its work,
// e_last = 0). The bound assumes R_k <= T_k (no two instances of a chain overlap), which the
// holistic driver checks.
#include "chain_rta.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

namespace chainrt::detail {

namespace {

struct Other {
  Duration C_hp = 0;          // work that may interfere after an eligibility event
  bool edf_limited = false;   // EDF: interference also limited by I^EDF
  std::vector<Duration> blockers;  // callbacks that can only block (sorted, largest first)
  Duration R = 0, T = 1, D = 0;
  int width = 1;
};

Duration edf_interference(Duration C, Duration Dk, Duration Ti, Duration Di, Duration Ri) {
  // Jobs of chain i with absolute deadline in (a_k, d_k]; the earliest of them has at most
  // r − (D_i − R_i) of its work after a_k.
  Duration q = Dk / Ti;
  Duration r = Dk - q * Ti;
  Duration tail = std::max<Duration>(0, r - (Di - Ri));
  return q * C + std::min(C, tail);
}

Duration lp_of(const std::vector<Duration>& b, Duration events) {
  if (b.empty() || events <= 0) return 0;
  Duration s = 0;
  Duration n = std::min<Duration>(events, static_cast<Duration>(b.size()));
  for (Duration j = 0; j < n; ++j) s += b[j];
  if (events > n) s += (events - n) * b[0];
  return s;
}

}  // namespace

std::optional<Duration> global_segment_bound(const View& v, Order order, int k, const Segment& seg,
                                             const std::vector<Duration>& R, Duration limit) {
  const Task& tk = v.tasks[k];
  const int X = seg.executor;
  std::uint64_t mask = ~std::uint64_t{0};
  for (int c : seg.cbs) mask &= v.cbs[c].threads;
  std::vector<const Supply*> threads;
  for (std::size_t t = 0; t < v.supply[X].size() && t < 64; ++t)
    if (mask & (std::uint64_t{1} << t)) threads.push_back(&v.supply[X][t]);
  const Duration m = static_cast<Duration>(threads.size());
  if (m == 0) return std::nullopt;
  bool dedicated = !v.shared_core[X];
  for (auto* s : threads)
    if (s->reservation && s->reservation->budget < s->reservation->period) dedicated = false;

  int minprio = INT_MAX;
  for (int c : seg.cbs) minprio = std::min(minprio, v.cbs[c].prio);
  std::vector<int> groups;
  for (int c : seg.cbs)
    if (v.cbs[c].mutex_group >= 0 && std::find(groups.begin(), groups.end(), v.cbs[c].mutex_group) == groups.end())
      groups.push_back(v.cbs[c].mutex_group);

  // Other work on the threads of the segment.
  std::vector<Other> others;
  struct GroupLoad {
    Duration C = 0, cnt = 0, R = 0, T = 1;
  };
  std::vector<GroupLoad> gload;   // per (other task, group) with C > 0
  Duration own_extra = 0, own_extra_n = 0, own_group_C = 0, own_group_cnt = 0;
  for (int c : tk.extras) {
    const CbInfo& cb = v.cbs[c];
    if (cb.executor == X && (cb.threads & mask)) {
      own_extra += cb.wcet;
      own_extra_n++;
    }
    if (std::find(groups.begin(), groups.end(), cb.mutex_group) != groups.end() && cb.mutex_group >= 0) {
      own_group_C += cb.wcet;
      own_group_cnt++;
    }
  }
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    if (static_cast<int>(i) == k) continue;
    const Task& ti = v.tasks[i];
    Other o;
    bool relevant = false;
    std::vector<Duration> gC(groups.size(), 0), gN(groups.size(), 0);
    bool in_group = false;
    for (int c : ti.work) {
      const CbInfo& cb = v.cbs[c];
      for (std::size_t g = 0; g < groups.size(); ++g)
        if (cb.mutex_group == groups[g]) {
          gC[g] += cb.wcet;
          gN[g]++;
          in_group = true;
        }
      if (cb.executor != X || !(cb.threads & mask)) continue;
      relevant = true;
      bool hp;
      if (order == Order::FixedPriority) {
        hp = cb.prio >= minprio;
      } else {
        // EDF: chains without a deadline (pseudo-tasks) are queued last (sched tier 1).
        hp = !tk.has_deadline || ti.has_deadline;
        if (tk.has_deadline && ti.has_deadline) o.edf_limited = true;
      }
      if (hp) o.C_hp += cb.wcet;
      if (!hp || o.edf_limited) o.blockers.push_back(cb.wcet);
    }
    if (!relevant && !in_group) continue;
    if (R[i] == kUnbounded) return std::nullopt;
    o.R = R[i];
    o.T = ti.T;
    o.D = ti.D;
    o.width = ti.width;
    std::sort(o.blockers.begin(), o.blockers.end(), std::greater<>());
    if (relevant) others.push_back(std::move(o));
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (gC[g] > 0) gload.push_back(GroupLoad{gC[g], gN[g], R[i], ti.T});
  }
  // Blocking per event is also bounded by the m largest first-blockers (m threads).
  std::vector<Duration> firsts;
  for (const auto& o : others)
    for (int w = 0; w < std::min<Duration>(o.width, m) && !o.blockers.empty(); ++w) firsts.push_back(o.blockers[0]);
  std::sort(firsts.begin(), firsts.end(), std::greater<>());
  Duration topm = 0;
  for (std::size_t j = 0; j < firsts.size() && static_cast<Duration>(j) < m; ++j) topm += firsts[j];

  const std::size_t q = seg.cbs.size();
  const bool completion_mode = !tk.linear;
  Duration E1 = 0, elast = 0;
  for (std::size_t j = 0; j < q; ++j) {
    if (!completion_mode && j + 1 == q) elast = v.cbs[seg.cbs[j]].wcet;
    else E1 += v.cbs[seg.cbs[j]].wcet;
  }
  const Duration S = seg.intra_comm;

  auto group_terms = [&](Duration x, Duration& G, Duration& events) {
    G = own_group_C;
    events = static_cast<Duration>(q) + own_group_cnt;
    for (const auto& gl : gload) {
      Duration n = overlapping_instances(x, gl.R, gl.T);
      G += n * gl.C;
      events += n * gl.cnt;
    }
  };
  auto interference = [&](const Other& o, Duration x) {
    Duration w = carry_in_workload(x, o.C_hp, o.R, o.T);
    if (o.edf_limited) w = std::min(w, edf_interference(o.C_hp, tk.D, o.T, o.D, o.R));
    return w;
  };

  if (dedicated) {
    Duration x = E1 + S + 1;
    for (int it = 0; it < 100000; ++it) {
      const Duration cap = x - E1 - S;
      Duration G, events;
      group_terms(x, G, events);
      Duration psi = 0, lp = 0;
      for (const auto& o : others) {
        psi += std::min(interference(o, x), o.width * cap);
        lp += std::min(lp_of(o.blockers, events), o.width * cap);
      }
      lp = std::min(lp, events * topm);
      psi += lp + std::min(own_extra, own_extra_n * cap);
      Duration xn = E1 + S + G + psi / m + 1;
      if (xn > limit + 1 - elast) return std::nullopt;
      if (xn <= x) return x - 1 + elast;
      x = xn;
    }
    return std::nullopt;
  }
  // Reserved threads: supply form.
  SupplySet pi;
  for (auto* s : threads) pi.threads.push_back(*s);
  auto wall = [&](Duration e) {
    Duration w = 0;
    for (auto* s : threads) {
      Duration inv = s->sbf_inverse(e);
      if (inv < 0) return kUnbounded;
      w = std::max(w, inv);
    }
    return w;
  };
  Duration E1w = 0;
  for (std::size_t j = 0; j < q; ++j) {
    if (!completion_mode && j + 1 == q) continue;
    Duration w = wall(v.cbs[seg.cbs[j]].wcet);
    if (w == kUnbounded) return std::nullopt;
    E1w += w;
  }
  Duration elastw = elast > 0 ? wall(elast) : 0;
  if (elastw == kUnbounded) return std::nullopt;
  Duration x = 1;
  for (int it = 0; it < 100000; ++it) {
    Duration G, events;
    group_terms(x, G, events);
    Duration demand = m * (E1w + S + G) + own_extra;
    Duration lp = 0;
    for (const auto& o : others) {
      demand += interference(o, x);
      lp += lp_of(o.blockers, events);
    }
    demand += std::min(lp, events * topm);
    auto xn = pi.first_at_least(demand + 1, x, limit + 1);
    if (!xn) return std::nullopt;
    if (*xn <= x) {
      Duration r = x - 1 + elastw;
      if (r > limit) return std::nullopt;
      return r;
    }
    x = *xn;
  }
  return std::nullopt;
}

AnalysisResult holistic(const View& v, const SegmentBound& segfn, const HolisticOptions& opt,
                        const std::function<bool(int, std::string*)>& skip) {
  const std::size_t n = v.tasks.size();
  std::vector<Duration> R(n, 0);
  std::vector<std::string> failed(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Task& t = v.tasks[k];
    std::string why;
    if (skip && skip(static_cast<int>(k), &why)) failed[k] = why.empty() ? "not analysed" : why;
    else if (t.segments.empty()) failed[k] = "a branching chain that spans several executors is not supported";
    Duration lower = t.src_jitter + t.path_wcet;
    for (const auto& s : t.segments) lower += s.comm_before + s.intra_comm;
    R[k] = failed[k].empty() ? lower : kUnbounded;
  }
  // Executors each task touches, for the propagation of unbounded tasks.
  std::vector<std::set<int>> execs(n);
  for (std::size_t k = 0; k < n; ++k) {
    for (int c : v.tasks[k].work) execs[k].insert(v.cbs[c].executor);
  }
  auto share = [&](std::size_t a, std::size_t b) {
    for (int x : execs[a])
      if (execs[b].count(x)) return true;
    return false;
  };
  auto propagate = [&]() {
    bool grew = true;
    while (grew) {
      grew = false;
      for (std::size_t a = 0; a < n; ++a) {
        if (failed[a].empty()) continue;
        for (std::size_t b = 0; b < n; ++b) {
          if (!failed[b].empty() || !share(a, b)) continue;
          failed[b] = "depends on " + std::string(v.tasks[a].reported ? "chain '" : "callback '") + v.tasks[a].name +
                      "', which has no bound";
          R[b] = kUnbounded;
          grew = true;
        }
      }
    }
  };
  propagate();
  for (int round = 0; round < opt.max_rounds; ++round) {
    bool changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!failed[k].empty()) continue;
      const Task& t = v.tasks[k];
      Duration total = t.src_jitter;
      bool ok = true;
      for (const auto& s : t.segments) {
        total += s.comm_before;
        Duration limit = t.T - total;
        auto b = limit > 0 ? segfn(v, static_cast<int>(k), s, R, total, limit) : std::nullopt;
        if (!b) {
          ok = false;
          break;
        }
        total += *b;
      }
      if (!ok || total > t.T) {
        failed[k] = "no bound within the period " + std::to_string(t.T) +
                    " ns (the analysis needs every instance to finish before the next is released)";
        R[k] = kUnbounded;
        propagate();
        changed = true;
        continue;
      }
      if (total > R[k]) {
        R[k] = total;
        changed = true;
      }
    }
    if (!changed) break;
    if (round + 1 == opt.max_rounds)
      for (std::size_t k = 0; k < n; ++k)
        if (failed[k].empty()) {
          failed[k] = "the fixed point did not converge";
          R[k] = kUnbounded;
        }
  }
  if (opt.require_deadlines_met) {
    std::vector<std::size_t> late;
    for (std::size_t k = 0; k < n; ++k)
      if (failed[k].empty() && v.tasks[k].has_deadline && R[k] > v.tasks[k].D) late.push_back(k);
    for (std::size_t k : late) {
      std::string who = v.tasks[k].name;
      std::string fixed_point = std::to_string(R[k]);
      for (std::size_t b = 0; b < n; ++b)
        if (failed[b].empty() && (b == k || share(k, b)))
          failed[b] = b == k ? "may miss its deadline (fixed point " + fixed_point +
                                   " ns > deadline); the bounds assume every chain on the executor meets its deadline"
                             : "chain '" + who + "' may miss its deadline, and this bound assumes every chain on the executor meets it";
    }
  }
  AnalysisResult res;
  res.analysis = opt.analysis;
  res.schedulable = true;
  for (std::size_t k = 0; k < n; ++k) {
    const Task& t = v.tasks[k];
    if (!t.reported) continue;
    ChainBound b;
    b.chain = t.name;
    b.deadline = t.D;
    b.bcrt_bound = t.bcrt_lower;
    if (failed[k].empty()) {
      b.bounded = true;
      b.wcrt_bound = R[k];
      b.slack = t.D - R[k];
      b.schedulable = R[k] <= t.D;
      if (!b.schedulable) b.reason = "bound exceeds the deadline by " + std::to_string(R[k] - t.D) + " ns";
    } else {
      b.bounded = false;
      b.reason = failed[k];
      b.slack = 0;
      b.schedulable = false;
    }
    res.schedulable = res.schedulable && b.schedulable;
    res.chains.push_back(std::move(b));
  }
  return res;
}

}  // namespace chainrt::detail
