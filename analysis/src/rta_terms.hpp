// The terms of the shared engine's equations (private to analysis/), one function per term,
// each cited; chain_rta.cpp composes them (its header has the derivation) and
// tests/cpp/analysis/test_terms.cpp checks each against values computed by hand.
// Sources: the EDF ready-queue paper (Al Arafat et al., TCAD 2024), Sec. V, Lemmas 4-5,
// Theorems 1-2 (Eq. 4-12); Bertogna & Cirinei (RTSS 2007) and Bertogna, Cirinei, Lipari
// (OPODIS 2005) for the carry-in workload and the EDF interference bound; LaME Sec. 4.2
// Theorem 1 (Sobhani et al., RTAS 2023) for the supply form.
// All functions: integer nanoseconds, pure, no allocation unless they take a vector; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workload.hpp"

namespace chainrt::detail {

// ---- interference of other chains -------------------------------------------------------

// Bertogna, Cirinei & Lipari's EDF interference bound I^EDF (used in Eq. 1-2's place): the
// number of jobs of chain i (period T_i, deadline D_i, response bound R_i) with an absolute
// deadline in (a_k, d_k] that can still run after a_k, d_k − a_k = Dk: ⌊Dk/T_i⌋ whole jobs, and
// the earliest one only when its tail r − (D_i − R_i) is positive (r = Dk mod T_i).
inline Duration edf_jobs(Duration Dk, Duration Ti, Duration Di, Duration Ri) {
  const Duration q = Dk / Ti;
  const Duration r = Dk - q * Ti;
  return q + (r - (Di - Ri) > 0 ? 1 : 0);
}

// The work of those jobs: q·C plus, of the earliest, at most p·(r − (D_i − R_i)) on p threads.
inline Duration edf_interference(Duration C, Duration Dk, Duration Ti, Duration Di, Duration Ri, Duration p = 1) {
  const Duration q = Dk / Ti;
  const Duration r = Dk - q * Ti;
  const Duration tail = std::max<Duration>(0, r - (Di - Ri));
  return q * C + std::min(C, p * tail);
}

// ---- offset-based interference (guaranteed phases) -------------------------------------

// The releases of task i relative to a release of task k when both are on one host's release
// grid (sched/timer.hpp; model TimerPhase::Guaranteed) at offsets phi_i, phi_k with periods
// T_i, T_k: i's releases lie at δ + b·T_i, b ∈ ℤ, for a δ in (phi_i − phi_k) + g·ℤ, g =
// gcd(T_i, T_k) — the δ in [0, T_i) returned (every one occurs for some instance of k). Empty
// when there would be more than `limit` (then the phase gives too little to be worth it).
inline std::vector<Duration> relative_phases(Duration phi_i, Duration T_i, Duration phi_k, Duration T_k,
                                             std::size_t limit = 64) {
  Duration a = T_i, b = T_k;
  while (b != 0) {
    const Duration t = a % b;
    a = b;
    b = t;
  }
  const Duration g = a;
  if (g <= 0 || static_cast<std::size_t>(T_i / g) > limit) return {};
  const Duration first = (((phi_i - phi_k) % g) + g) % g;
  std::vector<Duration> out;
  for (Duration d = first; d < T_i; d += g) out.push_back(d);
  return out;
}

// Offset-based interference (Tindell, "Adding time-offsets to schedulability analysis", 1994;
// Palencia & González Harbour, RTSS 1998): the work of a task whose instances are released at
// δ + b·T (b ∈ ℤ) relative to J's release, each executing inside [release, release + R] with at
// most C units on p threads, inside J's window [0, h) (h: J's latest arrival plus the window
// length), for one phase δ:
//   W_δ(h) = Σ_b min(C, p·|[δ + bT, δ + bT + R] ∩ [0, h)|).
// Closed form (the same sum, term by term): with δ taken in [0, T), the instances released in
// [0, h − R] lie wholly inside the window and give min(C, p·R) each,
//   n_body = ⌊(h − R − δ)/T⌋ + 1  (0 when h − R < δ),
// and only the carry-in instances (released in (−R, 0)) and the carry-out ones (released in
// (max(0, h − R), h)) are summed one by one — at most ⌈R/T⌉ + 1 of each, whatever h is.
// Cost O(R/T + 1), against O(h/T) for the walk over every instance (phased_workload_walk).
inline Duration phased_workload_at(Duration h, Duration C, Duration R, Duration T, Duration p, Duration delta) {
  if (C <= 0 || h <= 0 || T <= 0) return 0;
  if (p < 1) p = 1;
  if (R < 0) R = 0;
  const Duration d = ((delta % T) + T) % T;
  auto part = [&](Duration s) {  // one instance released at s
    const Duration lo = std::max<Duration>(0, s), hi = std::min(h, s + R);
    return hi > lo ? std::min(C, p * (hi - lo)) : Duration{0};
  };
  Duration w = 0;
  for (Duration s = d - T; s + R > 0; s -= T) w += part(s);  // carry-in: released before 0
  Duration s = d;                                              // the first release at or after 0
  if (h - R >= d) {
    const Duration n_body = (h - R - d) / T + 1;
    w += n_body * std::min(C, p * R);
    s = d + n_body * T;
  }
  for (; s < h; s += T) w += part(s);  // carry-out: released in (h − R, h)
  return w;
}

// The largest W_δ(h) over the phases `deltas` its releases may have relative to J's
// (relative_phases). At most the carry-in workload of the same window, and much less where the
// offsets keep its instances away from J's.
inline Duration phased_workload(Duration h, Duration C, Duration R, Duration T, Duration p,
                                const std::vector<Duration>& deltas) {
  if (C <= 0 || h <= 0) return 0;
  Duration best = 0;
  for (const Duration d : deltas) best = std::max(best, phased_workload_at(h, C, R, T, p, d));
  return best;
}

// The reference form of W_δ(h), maximised over `deltas`: every instance whose window can meet
// [0, h) walked one by one. Kept for the tests (they compare the closed form against it).
inline Duration phased_workload_walk(Duration h, Duration C, Duration R, Duration T, Duration p,
                                     const std::vector<Duration>& deltas) {
  if (C <= 0 || h <= 0) return 0;
  Duration best = 0;
  for (const Duration d : deltas) {
    Duration w = 0;
    // the first instance whose window can reach 0: s = d + b·T with s + R >= 0
    Duration s = d - ((d + R) / T + 1) * T;
    for (; s < h; s += T) {
      const Duration lo = std::max<Duration>(0, s), hi = std::min(h, s + R);
      if (hi > lo) w += std::min(C, p * (hi - lo));
    }
    best = std::max(best, w);
  }
  return best;
}

// ---- Theorem 1 / 2 (EDF ready-queue paper) -----------------------------------------------

// Eq. 9 (and Eq. 12), Thm 1: the last callback has started by a + x − 1 (x the least point
// satisfying the start condition), so the segment completes by x − 1 + e_last (on a
// reservation e_last is its supply time sbf⁻¹(e_last)). In the completion form (branching
// chains, foreign threads) e_last = 0.
inline Duration rta_eq9_response(Duration x, Duration e_last) { return x - 1 + e_last; }

// Eq. 4 and 5 (Lemma 4): chain i's share of the window is capped by the room the window leaves
// it, FI = min(I, t − E_k + e_last). Here its share of time (4) is at most
// M_i = min(W_i(x), w_i·(x − E' − S)): its carry-in workload, and w_i threads busy for the whole
// window after J's own work and hop suspension. W = kUnbounded: no workload bound.
inline Duration rta_eq4_5_room(Duration W, Duration width, Duration window_after_own) {
  const Duration cap = width * window_after_own;
  return W == kUnbounded ? cap : std::min(cap, W);
}

// Eq. 6 (Ψ1: Σ FI^NC plus the m − 1 largest carry-in differences). Here
// Ψ(x) = Σ_i min(I_i, M_i) + min(LP_cross, Σ_i min(L_i, M_i − min(I_i, M_i))): the outranking
// interference fills each chain's room first (`hp`), the blocking the rest of it (`room`), and
// all chains together block at most with the `slots` largest blocker executions (`lp_cross`).
inline Duration rta_eq6_psi(Duration hp, Duration lp_cross, Duration room) { return hp + std::min(lp_cross, room); }

// One chain's part of Eq. 6's sums: (min(I, M), min(L, M − min(I, M))) for its interference I,
// blocking L and room M (Eq. 4/5).
struct PsiShare {
  Duration hp = 0, room = 0;
};
inline PsiShare rta_eq6_share(Duration I, Duration L, Duration M) {
  const Duration h = std::min(I, M);
  return {h, std::min(L, M - h)};
}

// Eq. 10 (Lemma 5): I^X_k = Σ over J's callbacks in mutually exclusive groups of the largest
// WCET in that group — `q[g]` callbacks of J in group g, `B[g]` its largest member WCET. (Only
// the one member running when J's callback becomes ready; the outranking members that run
// after it are added by the caller, chain_rta.cpp.)
inline Duration rta_eq10_group_blocking(const std::vector<Duration>& q, const std::vector<Duration>& B) {
  Duration ix = 0;
  for (std::size_t g = 0; g < q.size(); ++g) ix += q[g] * B[g];
  return ix;
}

// Eq. 8 (Theorem 1) and Eq. 11 (Theorem 2): the last callback has started by a + x when
// E_k − e_last + 1 + I^X_k + ⌊Ψ/m⌋ <= x; the value returned is the left-hand side. Here E'
// (J's work before its last callback; all of it in the completion form), S (hop suspension),
// G (group time: Eq. 10 and the outranking members) and F (work of other executors' threads on
// the segment's core, PiCAS's shared cores, and the platform) are charged in full.
inline Duration rta_eq11_start_demand(Duration E1, Duration S, Duration G, Duration F, Duration psi, Duration m) {
  return E1 + S + G + F + psi / m + 1;
}

// Not in the paper (the phase argument, chain_rta.cpp, a second sufficient condition):
// E' + S + G + F + Σ ρ per eligibility event + outranking work + 1 <= x; the left-hand side.
inline Duration rta_phase_start_demand(Duration E1, Duration S, Duration G, Duration F, Duration rho, Duration hp) {
  return E1 + S + G + F + rho + hp + 1;
}

// LaME Sec. 4.2 Theorem 1 (Sobhani et al. 2023) on reserved threads: the demand
// dbf(x) = m·(E'_w + S + G) + own parallel work + Ψ_∞(x) that must stay below sbf_Π(x).
inline Duration lame_thm1_demand(Duration m, Duration E1w, Duration S, Duration G, Duration own, Duration psi) {
  return m * (E1w + S + G) + own + psi;
}

// ---- which work of another chain needs an end bound (R_work, chain_rta.cpp) -------------

// Whether a callback of another chain can delay J other than by blocking, so that it must lie
// in a bounded window of its instance (the carry-in workload needs one): it outranks J in one
// of J's mutually exclusive groups (time (3), Eq. 10-11's outranking members; every member of a
// group that may run on other threads), or it is on the segment's threads, not only a member
// of the one group all of J's segment is in, and outranks J's lowest callback in the ready
// queue (time (4): FP priority >= J's lowest; EDF keyed with a deadline). Both hold
// independently: a group-mate below J's callbacks of that group can still outrank J's earlier
// callbacks in the queue and run before them — a single-threaded PiCAS executor ran a chain's
// low-priority head (blocking J) and then its two higher-priority group-mates ahead of J, while
// the bound charged them, as work without an end bound, one blocking only
// (tests/python/data/picas_st_counterexample.yaml).
inline bool counted_work(bool group_outranks, bool only_own_group, bool on_segment_threads, bool queue_outranks) {
  return group_outranks || (!only_own_group && on_segment_threads && queue_outranks);
}

// ---- eligibility events (the blocking argument of chain_rta.cpp) -------------------------

// "Full" events — J's release and the end of each delay (a hop's cost, a branch's later
// release) — can find all m threads running lower-ranked callbacks. In the completion form on
// several threads every callback of J is one (a branching instance may leave threads free while
// some of its callbacks run, and lower-ranked work may start on them). On one thread a
// lower-ranked callback can start only while J has nothing eligible: J's callbacks are released
// by its own completions, so that happens only during a delay — full events are J's release and
// the delay ends there too.
inline Duration full_eligibility_events(Duration callbacks, Duration delayed_hops, bool completion_form,
                                        Duration threads = 1) {
  return completion_form && threads > 1 ? callbacks : 1 + delayed_hops;
}

// Callback boundaries without delay ("quiet": the thread that ran J's previous callback is free,
// so J waits only if that thread starts an outranking callback right then).
inline Duration quiet_boundaries(Duration callbacks, Duration delayed_hops, bool completion_form, Duration threads = 1) {
  return completion_form && threads > 1 ? 0 : std::max<Duration>(0, callbacks - 1 - delayed_hops);
}

// "Charged" events: quiet boundaries and group hand-overs, at most as many as outranking
// executions in the window (each needs one to start at that instant).
inline Duration charged_eligibility_events(Duration quiet, Duration handovers, Duration outranking_executions) {
  return std::min(quiet + handovers, outranking_executions);
}

// Blocker executions across all chains: m per full event, m − 1 per charged one.
inline Duration blocker_slots(Duration full, Duration charged, Duration m) { return full * m + charged * (m - 1); }

// The blocker executions of one chain: its lower-ranked callbacks b (largest first, prefix sums
// `pre`), each repeated `mult` times (once per lower-ranked job in the window), the first n.
struct BlockerRun {
  const std::vector<Duration>* b = nullptr;
  const std::vector<Duration>* pre = nullptr;  // prefix sums of b
  Duration mult = 1, n = 0;
  Duration at(Duration i) const { return (*b)[static_cast<std::size_t>(i / mult)]; }
  Duration sum() const {
    const Duration g = n / mult, r = n % mult;
    return mult * (*pre)[static_cast<std::size_t>(g)] + (r > 0 ? r * (*b)[static_cast<std::size_t>(g)] : 0);
  }
};

// Prefix sums of a sorted blocker list (BlockerRun::pre).
inline std::vector<Duration> prefix_sums(const std::vector<Duration>& b) {
  std::vector<Duration> p(b.size() + 1, 0);
  for (std::size_t i = 0; i < b.size(); ++i) p[i + 1] = p[i] + b[i];
  return p;
}

// LP_cross of Eq. 6's blocking part: the sum of the `slots` largest blocker executions over all
// chains' runs (a merge of the sorted runs), computed only as far as `enough` (callers take the
// minimum with it). `heads` is scratch space (one per run).
inline Duration largest_blockers_sum(const std::vector<BlockerRun>& runs, Duration slots, Duration enough,
                                     std::vector<Duration>& heads) {
  Duration sum = 0;
  heads.assign(runs.size(), 0);
  for (Duration s = 0; s < slots && sum < enough; ++s) {
    Duration best = -1;
    std::size_t which = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (heads[i] < runs[i].n && runs[i].at(heads[i]) > best) {
        best = runs[i].at(heads[i]);
        which = i;
      }
    if (best < 0) break;
    sum += best;
    heads[which]++;
  }
  return sum;
}

// ρ of the phase argument: the m-th largest of the first blockers (0 with fewer than m).
// Reorders `firsts`.
inline Duration mth_largest_blocker(std::vector<Duration>& firsts, Duration m) {
  if (m <= 0 || static_cast<Duration>(firsts.size()) < m) return 0;
  std::nth_element(firsts.begin(), firsts.begin() + (m - 1), firsts.end(), std::greater<>());
  return firsts[static_cast<std::size_t>(m - 1)];
}

// ---- the concave lower envelope of the start conditions (exact acceleration) -------------

// A carry-in workload frozen at x0 as v0 + min(room, par·(x − x0)): exact up to the next
// release, below the workload afterwards (chain_rta.cpp, "Exact acceleration").
struct EnvelopePiece {
  Duration v0 = 0, room = 0, par = 1;
  Duration at(Duration d) const { return v0 + std::min(room, par * d); }
};

// A term frozen at its value v0 (a constant lower envelope of any non-decreasing term).
inline EnvelopePiece frozen_piece(Duration v0) { return EnvelopePiece{v0, 0, 1}; }

// The piece of carry_in_workload(·, C, R, T, par) at x0, capped by edf_interference when
// `edf_limited` (Dk, Di: its arguments).
inline EnvelopePiece envelope_piece(Duration x0, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited,
                                    Duration Dk, Duration par = 1) {
  EnvelopePiece p;
  p.par = par;
  p.v0 = carry_in_workload(x0, C, Ri, Ti, par);
  const Duration span = x0 + Ri - C / par;
  if (C > 0 && x0 > 0 && span >= 0) p.room = C - std::min(C, par * (span % Ti));
  if (edf_limited) {
    const Duration cap = edf_interference(C, Dk, Ti, Di, Ri, par);
    p.room = std::max<Duration>(0, std::min(p.room, cap - p.v0));
    p.v0 = std::min(p.v0, cap);
  }
  return p;
}

// A lower envelope of min(a, b) for two pieces: v0 = min(a.v0, b.v0), room up to the smaller of
// their final values, the smaller slope. Below both: for a.v0 >= v0,
// a.v0 + min(a.room, a.par·d) = min(a.v0 + a.room, a.v0 + a.par·d) >= v0 + min(a.v0 + a.room − v0, par·d).
inline EnvelopePiece min_piece(const EnvelopePiece& a, const EnvelopePiece& b) {
  EnvelopePiece p;
  p.v0 = std::min(a.v0, b.v0);
  p.room = std::max<Duration>(0, std::min(a.v0 + a.room, b.v0 + b.room) - p.v0);
  p.par = std::min(a.par, b.par);
  return p;
}

// A lower envelope of the offset-based workload (phased_workload) from window h0 on, at window
// h0 + d: v0 = its value at h0 (the phase δ* that gives it), and the growth of δ*'s instance
// whose window straddles h0 (released at s < h0 < s + R; the one with the most room): it goes on
// at slope p up to min(C, p·(s + R − max(0, s))), the others never decrease. Exact up to that
// instance's end or cap, below the workload afterwards.
inline EnvelopePiece phased_piece(Duration h0, Duration C, Duration R, Duration T, Duration p,
                                  const std::vector<Duration>& deltas) {
  EnvelopePiece e;
  e.par = std::max<Duration>(1, p);
  if (C <= 0 || h0 <= 0 || T <= 0) return e;
  if (deltas.empty()) return e;
  Duration best_d = deltas.front();
  e.v0 = phased_workload_at(h0, C, R, T, p, best_d);
  for (const Duration d : deltas) {
    const Duration w = phased_workload_at(h0, C, R, T, p, d);
    if (w > e.v0) {
      e.v0 = w;
      best_d = d;
    }
  }
  const Duration d = ((best_d % T) + T) % T;
  // releases s = d + b·T in (h0 − R, h0): the last one at or before h0 − 1 going back
  Duration s = h0 - 1 - (((h0 - 1 - d) % T) + T) % T;
  for (; s + R > h0; s -= T) {
    const Duration lo = std::max<Duration>(0, s);
    const Duration now = std::min(C, e.par * (h0 - lo));
    const Duration full = std::min(C, e.par * (s + R - lo));
    e.room = std::max(e.room, full - now);
  }
  return e;
}

// The least x in [from, xmax] with ok(x), where ok holds on an up-set of [from, ∞) (a concave
// envelope's condition), or xmax + 1: a gallop from `from` (steps of `first_step`, doubling)
// and a bisection.
template <class Ok>
Duration least_in_upset(Ok&& ok, Duration from, Duration xmax, Duration first_step) {
  if (from > xmax) return xmax + 1;
  if (ok(from)) return from;
  if (!ok(xmax)) return xmax + 1;
  Duration lo = from, hi = xmax;  // ok(lo) false, ok(hi) true
  for (Duration step = std::max<Duration>(1, first_step); lo + step < hi; step *= 2) {
    if (ok(lo + step)) {
      hi = lo + step;
      break;
    }
    lo += step;
  }
  while (hi - lo > 1) {
    const Duration mid = lo + (hi - lo) / 2;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

}  // namespace chainrt::detail
