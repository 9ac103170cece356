// jiang22: the baseline curve of the EDF ready-queue paper's Fig. 7 — the default
// multi-threaded executor analysis of Jiang et al., RTSS 2022 ([16] there). NOT a shipped
// analysis (not in the registry, never a verdict of `chainrt analyze`): Teper et al. (EMSOFT
// 2024) refuted it — the default executor's readySet, refreshed only at polling points, can
// starve callbacks. It exists so that `chainrt experiment schedulability` can show the paper's
// comparison next to chainrt's sound baselines. UNVERIFIED against Jiang et al.'s paper, which
// is not part of chainrt's specification.
//
// What is computed (reference page, "Multi-threaded executors", integer nanoseconds):
//   R_i = L* + e_i^last,  L* the least L >= 0 with  L >= (C_i − e_i^last) + ⌈Σ_{k≠i} W_k(L) / m⌉
//   W_k(L) = N·C_k + min(C_k, L + T_k − C_k − N·T_k),  N = ⌊(L + T_k − C_k)/T_k⌋
// m = the executor's threads, C_k = the WCETs of everything chain k runs on the executor.
// The page prints W_k(L) = ⌈(L − C_k)/T_k⌉·C_k + min((L − C_k) mod T_k, C_k). That is the same
// function except where L − C_k is a positive multiple of T_k, where it counts one job fewer
// and DROPS (e.g. from 2·C_k at L = T_k + C_k − 1 to C_k at L = T_k + C_k), so its fixed point
// is not well defined; the form above is Bertogna & Cirinei's carry-in workload with R_k = T_k
// (= D_k in the Fig. 7 generator), which the printed one matches everywhere else — we take it
// as the intended one.
// Callback groups: the EDF paper only names [16]'s two kinds of group blocking (P-blocked
// before entering the readySet, R-blocked after; Remark 1) without their equations, so no
// group blocking is derivable from the material we have; none is charged. The paper's Fig. 7d/e
// text is consistent with that ([16] "largely invariant" to b, handles α >= 0.6 "especially
// well"). This makes the curve more optimistic still: with mutually exclusive groups threads can
// idle while a chain waits, which the "m threads busy" argument behind the 1/m ignores.
// Work a chain triggers off its path counts in its C_k for the others and in C_i − e_i^last for
// itself. Schedulable: every chain has L* + e_i^last <= D_i.
#include <algorithm>

#include "chainrt/analysis/reference.hpp"
#include "fixed_point.hpp"
#include "rta_terms.hpp"
#include "workload.hpp"

namespace chainrt::reference {

namespace {

using detail::View;

// W_k(L) for L >= 0 (see above).
Duration workload(Duration L, Duration C, Duration T) {
  if (C <= 0) return 0;
  const Duration span = L + T - C;
  if (span < 0) return 0;
  const Duration N = span / T;
  return N * C + std::min(C, span - N * T);
}

// Slope-1 room of W_k above L0 (W_k(L) >= W_k(L0) + min(room, L − L0) for L >= L0).
Duration room(Duration L0, Duration C, Duration T) {
  const Duration span = L0 + T - C;
  if (C <= 0 || span < 0) return 0;
  return C - std::min(C, span % T);
}

struct Other {
  Duration C, T;
};

// Least fixed point L* <= Lmax, or nullopt: the one search (fixed_point.hpp) from L = A, with a
// jump like chain_rta.cpp's: the lower envelope Σ_k (W_k(L0) + min(room_k, L − L0)) is concave,
// so the least L where A + ⌈envelope/m⌉ <= L is found by bisection and no fixed point is skipped.
std::optional<Duration> least_fixed_point(Duration A, const std::vector<Other>& others, Duration m, Duration Lmax) {
  auto f = [&](Duration L) {
    Duration s = 0;
    for (const auto& o : others) s += workload(L, o.C, o.T);
    return A + detail::ceil_div(s, m);
  };
  int steps = 0;
  auto jump = [&](Duration L0, Duration fl) -> Duration {
    if (steps++ < 3) return fl;
    std::vector<std::pair<Duration, Duration>> env;  // (W(L0), room)
    for (const auto& o : others) env.emplace_back(workload(L0, o.C, o.T), room(L0, o.C, o.T));
    auto ok = [&](Duration x) {
      Duration s = 0;
      for (const auto& [w, r] : env) s += w + std::min(r, x - L0);
      return A + detail::ceil_div(s, m) <= x;
    };
    return detail::least_in_upset(ok, fl, Lmax, Lmax - fl);  // (the envelope is >= its value at L0)
  };
  return detail::least_fixed_point(A, Lmax, f, jump).value;
}

}  // namespace

Jiang22Result jiang22(const Model& model) {
  Jiang22Result res;
  const View v = detail::build_view(model, detail::model_hop_cost(model));
  res.wcrt.assign(model.chains.size(), std::nullopt);
  for (const auto& t : v.tasks) {
    if (!t.reported) continue;
    if (!t.linear || t.segments.size() != 1) {
      res.why = "chain '" + t.name + "' is not a linear chain on one executor";
      return res;
    }
    const int X = t.segments[0].executor;
    for (std::size_t th = 0; th < v.supply[X].size(); ++th)
      if (v.thread_shared[X][th] || v.supply[X][th].reservation) {
        res.why = "executor '" + model.executors[X].name + "' has threads without a dedicated core";
        return res;
      }
  }
  res.applicable = true;
  res.schedulable = true;
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    const auto& ti = v.tasks[i];
    if (!ti.reported) continue;
    const int X = ti.segments[0].executor;
    const Duration m = static_cast<Duration>(v.supply[X].size());
    const Duration elast = v.cbs[ti.path.back()].wcet;
    Duration A = 0;
    for (int c : ti.work)
      if (v.cbs[c].executor == X) A += v.cbs[c].wcet;
    A -= elast;
    std::vector<Other> others;
    for (std::size_t k = 0; k < v.tasks.size(); ++k) {
      if (k == i) continue;
      Duration C = 0;
      for (int c : v.tasks[k].work)
        if (v.cbs[c].executor == X) C += v.cbs[c].wcet;
      if (C > 0) others.push_back({C, v.tasks[k].T});
    }
    const Duration D = ti.has_deadline ? ti.D : ti.T;
    auto L = m > 0 ? least_fixed_point(A, others, m, D - elast) : std::nullopt;
    if (L) res.wcrt[static_cast<std::size_t>(ti.chain)] = *L + elast;
    else res.schedulable = false;
  }
  return res;
}

}  // namespace chainrt::reference
