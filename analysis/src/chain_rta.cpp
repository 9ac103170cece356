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
//   (3) J's ready callback c blocked by its mutually exclusive group g (readyQueue Case B; the
//       group is handed over only at a completion, to the most urgent queued member): at most
//       one member of any rank is running when c becomes ready (B_g, its largest WCET — the
//       refined Lemma 5), after that only members that outrank c (FP: priority >= c's; EDF:
//       deadline <= d_k) run first — their full workload, NOT divided by m (see (1) above)
//   (4) J's callback eligible but not running: then every thread that may run it is busy
//       (the readyQueue is refreshed before every selection, so an idle thread would take it).
// During (4) the threads run (a) work that outranks J (EDF: jobs with deadline <= d_k, at most
// min(W_i(x), I^EDF_i) per chain; FP: callbacks with priority >= J's lowest; W_i is the
// carry-in workload N·C + min(C, x + R_i − C − N·T) of a chain whose instance work lies in
// [r, r + R_i]) or (b) lower-ranked callbacks that started before the current "eligibility
// event" of J. Events are J's release and the end of each hop delay ("full": up to m
// lower-ranked callbacks may be running), and each callback boundary without delay and each
// group hand-over ("charged": the thread that just finished is free, so J waits only if that
// thread starts an outranking callback at that instant — so there are at most as many as
// outranking executions in the window — and at most m − 1 lower-ranked callbacks are running).
// A chain runs one callback at a time (w_i at most), and never more than its workload W_i(x):
// its share e_i of (4) obeys e_i <= min(I_i + L_i, W_i(x), w_i·|(4)|), with L_i its blocking
// (one blocker per event, at most the lower-ranked jobs it can have in the window); the
// blocking of all chains together is at most the `slots` largest blocker executions.
// With Bertogna & Cirinei's lemma (if Σ I^i >= m·X and every I^i <= X then Σ min(I^i, y) >= m·y
// for y <= X) the last callback has started before a + x whenever
//     E' + S + G(x) + ⌊Ψ(x) / m⌋ + 1 <= x                                               (cf. Eq. 8/11)
//     Ψ(x) = Σ_i min(I_i, M_i) + min(LP_cross, Σ_i min(L_i, M_i − min(I_i, M_i))),  M_i = min(W_i(x), w_i·(x − E' − S))
// and R_seg = x − 1 + e_last                                                          (Eq. 9/12).
// On reserved threads (SCHED_DEADLINE) the per-chain caps are dropped and the supply form is
// used: m·(E'_w + S + G(x)) + Ψ_∞(x) < sbf_Π(x), R_seg = x − 1 + sbf⁻¹(e_last),
// with E'_w = Σ sbf⁻¹(e_j): any window of x time units carries >= sbf_Π(x) supply; supply
// outside (4) is at most m per instant, inside (4) it is all spent on other work.
// A branching chain on one executor is analysed to its completion (E' = all its work,
// e_last = 0); one that spans executors path by path (Task::paths: each path piece in the start
// form, the chain's other branches as parallel own work; the holistic driver takes the largest
// path bound). Other chains' work that may run on p > 1 threads at once (fan-out, branches)
// uses the parallel carry-in form (carry_in_workload, workload.hpp). The bound assumes R_k <= T_k (no two instances of a chain overlap), which the
// holistic driver checks.
#include "chain_rta.hpp"
#include "fixed_point.hpp"
#include "join_wait.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <set>

namespace chainrt::detail {

namespace {

struct Other {
  Duration C_all = 0;         // all its work that may run on the segment's threads
  Duration C_hp = 0;          // work that may interfere after an eligibility event
  Duration n_hp = 0;          // number of those callbacks
  bool edf_limited = false;   // EDF: interference also limited by I^EDF
  std::vector<Duration> blockers;  // callbacks that can only block (sorted, largest first)
  Duration R = 0, T = 1, D = 0;  // D: the earliest relative key of its work (Task::key_lo)
  Duration D_blk = 0;             // the latest (Task::key_hi): how late a blocker job can be keyed
  int width = 1;
  Duration par = 1;               // threads its work may occupy at once: min(width, m)
  bool bounded = true;
};

// EDF: number of jobs of chain i with absolute deadline in (a_k, d_k] that can still run after
// a_k (the earliest one only when its tail r − (D_i − R_i) is positive).
Duration edf_jobs(Duration Dk, Duration Ti, Duration Di, Duration Ri) {
  Duration q = Dk / Ti;
  Duration r = Dk - q * Ti;
  return q + (r - (Di - Ri) > 0 ? 1 : 0);
}

Duration edf_interference(Duration C, Duration Dk, Duration Ti, Duration Di, Duration Ri, Duration p = 1) {
  // Jobs of chain i with absolute deadline in (a_k, d_k]; the earliest of them has at most
  // r − (D_i − R_i) time left after a_k, so p·(r − (D_i − R_i)) work on p threads.
  Duration q = Dk / Ti;
  Duration r = Dk - q * Ti;
  Duration tail = std::max<Duration>(0, r - (Di - Ri));
  return q * C + std::min(C, p * tail);
}


// Eq. 9 (and Eq. 12), EDF ready-queue paper, Thm 1: the last callback has started by a + x − 1
// (x the least point satisfying the start condition), so the segment completes by
// x − 1 + e_last (on a reservation e_last is its supply time sbf⁻¹(e_last)). In the completion
// form (branching chains, foreign threads) e_last = 0.
Duration rta_eq9_response(Duration x, Duration e_last) { return x - 1 + e_last; }

// Eq. 4 and 5, EDF ready-queue paper (Lemma 4): chain i's share of the window is capped by the
// room the window leaves it, FI = min(I, t − E_k + e_last). Here (the derivation above) its share
// of time (4) is at most M_i = min(W_i(x), w_i·(x − E' − S)): its carry-in workload, and w_i
// threads busy for the whole window after J's own work and hop suspension.
Duration rta_eq4_5_room(Duration W, Duration width, Duration window_after_own) {
  const Duration cap = width * window_after_own;
  return W == kUnbounded ? cap : std::min(cap, W);
}

// Eq. 6, EDF ready-queue paper (Ψ1: Σ FI^NC plus the m − 1 largest carry-in differences). Here
// Ψ(x) = Σ_i min(I_i, M_i) + min(LP_cross, Σ_i min(L_i, M_i − min(I_i, M_i))): the outranking
// interference fills each chain's room first (`hp`), the blocking the rest of it (`room`), and
// all chains together block at most with the `slots` largest blocker executions (`lp_cross`).
Duration rta_eq6_psi(Duration hp, Duration lp_cross, Duration room) { return hp + std::min(lp_cross, room); }

// Eq. 10, EDF ready-queue paper (Lemma 5): I^X_k = Σ over J's callbacks in mutually exclusive
// groups of the largest WCET in that group — `q[g]` callbacks of J in group g, `B[g]` its
// largest member WCET. (Only the one member running when J's callback becomes ready; the
// outranking members that run after it are added by the caller, see the header.)
Duration rta_eq10_group_blocking(const std::vector<Duration>& q, const std::vector<Duration>& B) {
  Duration ix = 0;
  for (std::size_t g = 0; g < q.size(); ++g) ix += q[g] * B[g];
  return ix;
}

// Eq. 8 (Theorem 1) and Eq. 11 (Theorem 2), EDF ready-queue paper: the last callback has
// started by a + x when  E_k − e_last + 1 + I^X_k + ⌊Ψ/m⌋ <= x;  the value returned is the
// left-hand side. Here E' (J's work before its last callback; all of it in the completion
// form), S (hop suspension), G (group time: Eq. 10 and the outranking members) and F (work of
// other executors' threads on the segment's core, PiCAS's shared cores) are charged in full.
Duration rta_eq11_start_demand(Duration E1, Duration S, Duration G, Duration F, Duration psi, Duration m) {
  return E1 + S + G + F + psi / m + 1;
}

// Not in the paper (the phase argument of the derivation above, a second sufficient
// condition): E' + S + G + F + Σ ρ per eligibility event + outranking work + 1 <= x.
Duration rta_phase_start_demand(Duration E1, Duration S, Duration G, Duration F, Duration rho, Duration hp) {
  return E1 + S + G + F + rho + hp + 1;
}

// LaME Sec. 4.2 Theorem 1 (Sobhani et al. 2023) on reserved threads: the demand
// dbf(x) = m·(E'_w + S + G) + own parallel work + Ψ_∞(x) that must stay below sbf_Π(x).
Duration lame_thm1_demand(Duration m, Duration E1w, Duration S, Duration G, Duration own, Duration psi) {
  return m * (E1w + S + G) + own + psi;
}

}  // namespace

std::optional<Duration> global_segment_bound(const View& v, Order order, int k, const Segment& seg,
                                             const Windows& W, Duration limit) {
  const Task& tk = v.tasks[k];
  // EDF: J's pending work is keyed at most a + Dk (Task::key_hi); other chains' work counts as
  // interference from its earliest key (Other::D), as blocking up to its latest (Other::D_blk).
  const Duration Dk = tk.key_hi;
  const int X = seg.executor;
  std::uint64_t mask = ~std::uint64_t{0};
  for (int c : seg.cbs) mask &= v.cbs[c].threads;
  std::vector<const Supply*> threads;
  for (std::size_t t = 0; t < v.supply[X].size() && t < 64; ++t)
    if (mask & (std::uint64_t{1} << t)) threads.push_back(&v.supply[X][t]);
  const Duration m = static_cast<Duration>(threads.size());
  if (m == 0) return std::nullopt;
  bool dedicated = true;
  // Threads of other executors that share the segment's cores and may preempt or run ahead of
  // its threads (PiCAS: executors sharing a core, ordered by SCHED_FIFO priority).
  std::vector<View::ThreadRef> foreign;
  for (std::size_t t = 0; t < v.supply[X].size() && t < 64; ++t)
    if ((mask >> t & 1) && v.thread_shared[X][t]) {
      if (!v.foreign_ok[X][t]) return std::nullopt;  // no supply bound
      for (const auto& f : v.foreign[X][t])
        if (std::none_of(foreign.begin(), foreign.end(),
                         [&](const View::ThreadRef& g) { return g.executor == f.executor && g.thread == f.thread; }))
          foreign.push_back(f);
    }
  for (auto* s : threads)
    if (s->reservation && s->reservation->budget < s->reservation->period) dedicated = false;
  auto on_foreign = [&](int c) {
    for (const auto& f : foreign)
      if (v.cbs[c].executor == f.executor && (v.cbs[c].threads >> f.thread & 1)) return true;
    return false;
  };

  int minprio = INT_MAX;
  for (int c : seg.cbs) minprio = std::min(minprio, v.cbs[c].prio);
  // J's mutually exclusive groups, how many of its callbacks are in each, and the lowest
  // priority among them.
  std::vector<int> groups;
  std::vector<Duration> qg;
  std::vector<int> gminprio;
  for (int c : seg.cbs) {
    int g = v.cbs[c].mutex_group;
    if (g < 0) continue;
    auto it = std::find(groups.begin(), groups.end(), g);
    if (it == groups.end()) {
      groups.push_back(g);
      qg.push_back(1);
      gminprio.push_back(v.cbs[c].prio);
    } else {
      qg[it - groups.begin()]++;
      gminprio[it - groups.begin()] = std::min(gminprio[it - groups.begin()], v.cbs[c].prio);
    }
  }
  // All of the segment in one group g0: group-mates of g0 can only delay J through the group
  // (time (3)), never while J's callback is eligible (time (4)).
  const int g0 = (groups.size() == 1 && qg[0] == static_cast<Duration>(seg.cbs.size())) ? groups[0] : -1;
  auto group_index = [&](int g) -> int {
    if (g < 0) return -1;
    auto it = std::find(groups.begin(), groups.end(), g);
    return it == groups.end() ? -1 : static_cast<int>(it - groups.begin());
  };

  // Group blocking (3), refined Lemma 5: when J's callback c of group g becomes ready, at most
  // one group-mate is running (any priority: B_g = its largest WCET); after that the group is
  // handed to the most urgent queued member, so only members that outrank c (FP: priority >=
  // c's; EDF: deadline <= d_k) can run before c. When a member may run on threads the segment
  // cannot use (affinity), the refinement is not used: all group-mates' work counts.
  struct GroupWork {
    Duration C = 0, cnt = 0, R = 0, T = 1, D = 0;
    bool edf_limited = false;
  };
  const std::size_t ng = groups.size();
  std::vector<Duration> Bg(ng, 0);
  std::vector<bool> fallback(ng, false);
  std::vector<std::vector<GroupWork>> ghp(ng), gall(ng);
  std::vector<Duration> own_group_C(ng, 0);

  std::vector<Other> others;
  std::vector<std::vector<std::vector<Duration>>> gblockers;  // [other][group] sorted
  Duration own_extra = 0, own_extra_n = 0;
  // The instance's own work off the segment's path: its extras and, on a path piece of a
  // chain branching across executors, the chain's other branches.
  std::vector<int> own_side = tk.extras;
  own_side.insert(own_side.end(), seg.side.begin(), seg.side.end());
  for (int c : own_side) {
    const CbInfo& cb = v.cbs[c];
    if (cb.executor == X && (cb.threads & mask)) {
      own_extra += cb.wcet;
      own_extra_n++;
    }
    int gi = group_index(cb.mutex_group);
    if (gi >= 0) own_group_C[gi] += cb.wcet;
  }
  // A join shadow (join_wait.hpp): its owner's segments before the join do not count it.
  auto skip_shadow = [&](std::size_t i) { return v.tasks[i].shadow_of == k && !seg.after_join; };
  // R_work, priority-aware (Windows): the callbacks of task i that can delay J other than by
  // blocking — on the segment's threads and outranking J (FP: priority >= J's lowest; EDF: any
  // with a deadline, keyed at most as late as J's) or in one of J's groups. Those must lie in a
  // bounded window of i's instance; the rest of i's work without an end bound (a fan-out at the
  // lowest priorities, say) can only block J, at most once per eligibility event and thread,
  // however many instances of it are pending — or, on a foreign thread of the segment's cores,
  // preempt it as often as its releases allow (executions_in_window, below).
  // (A group-mate that may run on other threads than J's callbacks: all of the group's work
  // counts, without the refinement — `fallback`.)
  for (std::size_t i = 0; i < v.tasks.size(); ++i)
    if (static_cast<int>(i) != k && !skip_shadow(i))
      for (int c : v.tasks[i].work) {
        const int gi = group_index(v.cbs[c].mutex_group);
        if (gi >= 0 && v.cbs[c].threads != mask) fallback[gi] = true;
      }
  // A group-mate of task i that outranks J's callbacks of group gi (FP: priority >= their
  // lowest; EDF: keyed with a deadline).
  auto group_outranks = [&](const Task& ti, const CbInfo& cb, int gi) {
    return order == Order::FixedPriority ? cb.prio >= gminprio[gi] : (!tk.has_deadline || ti.has_deadline);
  };
  auto counts = [&](const Task& ti, int c) {
    const CbInfo& cb = v.cbs[c];
    if (const int gi = group_index(cb.mutex_group); gi >= 0) return fallback[gi] || group_outranks(ti, cb, gi);
    if (on_foreign(c) || cb.executor != X || !(cb.threads & mask)) return false;
    return order == Order::FixedPriority ? cb.prio >= minprio : (!tk.has_deadline || ti.has_deadline);
  };
  auto on_segment_threads = [&](int c) { return v.cbs[c].executor == X && (v.cbs[c].threads & mask); };
  // Callback c of some task's work as a tail: a group-mate of J blocks it once (time (3), B_g);
  // on the segment's threads it is a blocker (not one of J's own group g0: only time (3)).
  auto block_only = [&](int c, std::vector<Duration>& tail) {
    if (const int gi = group_index(v.cbs[c].mutex_group); gi >= 0) Bg[gi] = std::max(Bg[gi], v.cbs[c].wcet);
    if (on_segment_threads(c) && !(g0 >= 0 && v.cbs[c].mutex_group == g0)) tail.push_back(v.cbs[c].wcet);
  };
  std::vector<Duration> Rwin(v.tasks.size(), kUnbounded);  // the window of each task's counted work
  for (std::size_t i = 0; i < v.tasks.size(); ++i)
    Rwin[i] = W.window(v.tasks[i].work, i, [&](int c) { return counts(v.tasks[i], c); });
  // Work of task i that may run at any time (no end bound), on the segment's threads and never
  // outranking J: blocking only, as a chain without a bound (m parallel blockers, any number).
  auto add_tail = [&](const Task& ti, const std::vector<Duration>& tail) {
    if (tail.empty()) return;
    Other o;
    for (Duration e : tail) o.C_all += e;
    o.blockers = tail;
    std::sort(o.blockers.begin(), o.blockers.end(), std::greater<>());
    o.R = kUnbounded;
    o.T = ti.T;
    o.D = ti.key_lo;
    o.D_blk = ti.key_hi;
    o.width = static_cast<int>(m);
    o.par = m;
    o.bounded = false;
    others.push_back(std::move(o));
    gblockers.emplace_back(ng);
  };
  std::vector<int> tail_foreign;  // J's own earlier instances' work on foreign threads without an end bound
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    const Task& ti = v.tasks[i];
    if ((static_cast<int>(i) == k && !tk.join) || skip_shadow(i)) {
      // Earlier instances of J's own chain (of its prefix, for a chain that waits at a fusion
      // node): their work that may still run at J's release (end > T, or none) must not be
      // counted work for this segment; on its threads it blocks. (The rest of a joining chain's
      // earlier instances is counted through the other members' chains: join_wait.cpp.)
      std::vector<Duration> tail;
      for (int c : static_cast<int>(i) == k ? tk.extras : ti.work) {
        const Duration e = W.end_of(i, c);
        if (e != kUnbounded && e <= tk.T) continue;
        if (counts(ti, c)) return std::nullopt;
        if (on_foreign(c)) tail_foreign.push_back(c);
        block_only(c, tail);
      }
      add_tail(ti, tail);
      continue;
    }
    if (static_cast<int>(i) == k) continue;
    std::vector<Duration> tail;
    Other o;
    bool relevant = false;
    std::vector<GroupWork> hpw(ng), allw(ng);
    std::vector<std::vector<Duration>> gb(ng);
    bool in_group = false;
    const bool edf_pair = order == Order::Edf && tk.has_deadline && ti.has_deadline;
    for (int c : ti.work) {
      const CbInfo& cb = v.cbs[c];
      if (Rwin[i] != kUnbounded && W.end_of(i, c) == kUnbounded) {  // (counts(ti, c) is false)
        block_only(c, tail);
        continue;
      }
      int gi = group_index(cb.mutex_group);
      if (gi >= 0) {
        in_group = true;
        Bg[gi] = std::max(Bg[gi], cb.wcet);
        const bool outranks = group_outranks(ti, cb, gi);
        allw[gi].C += cb.wcet;
        allw[gi].cnt++;
        if (outranks) {
          hpw[gi].C += cb.wcet;
          hpw[gi].cnt++;
        }
      }
      if (cb.executor != X || !(cb.threads & mask)) continue;
      if (g0 >= 0 && cb.mutex_group == g0) continue;  // only ever time (3)
      relevant = true;
      o.C_all += cb.wcet;
      bool hp;
      if (order == Order::FixedPriority) {
        hp = cb.prio >= minprio;
      } else {
        // EDF: chains without a deadline (pseudo-tasks) are queued last (sched tier 1).
        hp = !tk.has_deadline || ti.has_deadline;
        if (edf_pair) o.edf_limited = true;
      }
      if (hp) {
        o.C_hp += cb.wcet;
        o.n_hp++;
      }
      if (!hp || o.edf_limited) {
        if (gi >= 0) gb[gi].push_back(cb.wcet);
        else o.blockers.push_back(cb.wcet);
      }
    }
    add_tail(ti, tail);
    if (!relevant && !in_group) continue;
    // A chain without a bound (its instances may overlap) can still block: its callbacks
    // count as up to m parallel blockers; its interference or group work cannot be bounded.
    const bool unbounded = Rwin[i] == kUnbounded;
    if (unbounded) {
      if (o.C_hp > 0) return std::nullopt;
      for (std::size_t g = 0; g < ng; ++g)
        if (hpw[g].C > 0 || (fallback[g] && allw[g].C > 0)) return std::nullopt;
    }
    for (std::size_t g = 0; g < ng; ++g) {
      for (auto* w : {&hpw[g], &allw[g]}) {
        w->R = Rwin[i];
        w->T = ti.T;
        w->D = ti.key_lo;
        w->edf_limited = edf_pair;
      }
      allw[g].edf_limited = false;
      if (hpw[g].C > 0) ghp[g].push_back(hpw[g]);
      if (allw[g].C > 0) gall[g].push_back(allw[g]);
    }
    if (relevant) {
      o.R = Rwin[i];
      o.T = ti.T;
      o.D = ti.key_lo;
      o.D_blk = ti.key_hi;
      o.width = unbounded ? static_cast<int>(m) : ti.width;
      o.par = std::min<Duration>(o.width, m);
      o.bounded = !unbounded;
      std::sort(o.blockers.begin(), o.blockers.end(), std::greater<>());
      for (auto& b : gb) std::sort(b.begin(), b.end(), std::greater<>());
      others.push_back(std::move(o));
      gblockers.push_back(std::move(gb));
    }
  }
  for (std::size_t g = 0; g < ng; ++g)
    if (fallback[g]) {
      Bg[g] = 0;
      ghp[g] = gall[g];
      // (a group-mate's chain without a bound has no workload bound)
      for (const auto& w : ghp[g])
        if (w.R == kUnbounded) return std::nullopt;
    }
  // Foreign work (5): every instant a foreign thread runs on one of the segment's cores, at
  // most Σ_i W_i(x) over the chains' callbacks on those threads (carry-in workload with R_i;
  // the chain's own instance only with its extra work — its path runs one callback at a time,
  // here). It can preempt J's running callback too, so with foreign work the bound is taken to
  // the segment's COMPLETION (its last callback counted in E', R = x − 1).
  struct ForeignWork {
    Duration C = 0, R = 0, T = 1;
  };
  std::vector<ForeignWork> fwork;
  std::vector<std::pair<int, Duration>> frate;  // callbacks of chains without a bound: (callback, WCET)
  Duration own_foreign = 0;
  if (!foreign.empty()) {
    if (!dedicated) return std::nullopt;
    // Foreign work without an end bound (of a chain without a bound, or a fan-out tail): its
    // executions are bounded by their release rates and the messages that can be queued
    // (executions_in_window).
    auto by_rate = [&](int c) {
      if (!executions_in_window(*v.model, static_cast<std::size_t>(c), 1)) return false;
      frate.emplace_back(c, v.cbs[c].wcet);
      return true;
    };
    for (int c : tail_foreign)
      if (!by_rate(c)) return std::nullopt;
    for (std::size_t i = 0; i < v.tasks.size(); ++i) {
      if (skip_shadow(i)) continue;
      Duration C = 0;
      for (int c : static_cast<int>(i) == k ? own_side : v.tasks[i].work) {
        if (!on_foreign(c)) continue;
        if (static_cast<int>(i) != k && W.end_of(i, c) == kUnbounded) {
          if (!by_rate(c)) return std::nullopt;
        } else {
          C += v.cbs[c].wcet;
        }
      }
      if (C == 0) continue;
      if (static_cast<int>(i) == k) {
        own_foreign = C;
        continue;
      }
      fwork.push_back({C, W.inside(i), v.tasks[i].T});
    }
  }
  // The platform (model Host::blackout, supply.hpp): a top-priority interferer on every core.
  // Any instant of the window at which a core of the segment is taken by it is either one at
  // which J's running callback is stopped or one at which J waits with some thread's core gone;
  // together they number at most the blackout on those cores, n_cores·S(x), charged in full
  // like foreign work. (Deviation: the papers assume a CPU that is always there; this VM's is
  // not. Checked by the soundness harness's `platform` feature.)
  static const std::vector<BlackoutPoint> no_blackout;
  const auto& curve = v.model->hosts.empty() ? no_blackout : v.model->hosts[v.host_of[X]].blackout;
  Duration platform_cores = 0;
  if (!curve.empty()) {
    const int host_cores = v.model->hosts[v.host_of[X]].cores;
    std::set<int> cores;
    const auto& ths = v.model->executors[X].threads;
    for (std::size_t t = 0; t < ths.size() && t < 64; ++t) {
      if (!(mask >> t & 1)) continue;
      if (ths[t].cores.empty())
        for (int c = 0; c < host_cores; ++c) cores.insert(c);
      for (int c : ths[t].cores) cores.insert(c);
    }
    platform_cores = static_cast<Duration>(cores.size());
  }
  auto platform_at = [&](Duration x) { return platform_cores * platform_blackout(curve, x); };
  auto foreign_at = [&](Duration x) {
    Duration F = own_foreign + platform_at(x);
    for (const auto& w : fwork) F += carry_in_workload(x, w.C, w.R, w.T);
    for (const auto& [c, e] : frate) F += e * *executions_in_window(*v.model, static_cast<std::size_t>(c), x);
    return F;
  };
  const std::size_t q = seg.cbs.size();
  const bool completion_mode = !tk.linear && !seg.path_piece;
  const bool finish_form = completion_mode || !foreign.empty();
  Duration E1 = 0, elast = 0;
  for (std::size_t j = 0; j < q; ++j) {
    if (!finish_form && j + 1 == q) elast = v.cbs[seg.cbs[j]].wcet;
    else E1 += v.cbs[seg.cbs[j]].wcet;
  }
  const Duration S = seg.intra_comm;
  // Once J's last callback has started (start form), only the platform can stop it on its
  // dedicated core: it ends within platform_stretch(e_last) (= e_last without a curve).
  Duration elast_span = elast;
  if (!curve.empty() && elast > 0) {
    auto st = platform_stretch(curve, elast, limit);
    if (!st) return std::nullopt;
    elast_span = *st;
  }

  // (Group work runs one member at a time: p = 1.)
  auto workload = [&](Duration x, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited, Duration p = 1) {
    Duration w = carry_in_workload(x, C, Ri, Ti, p);
    if (edf_limited) w = std::min(w, edf_interference(C, Dk, Ti, Di, Ri, p));
    return w;
  };
  auto interference = [&](const Other& o, Duration x) {
    return workload(x, o.C_hp, o.R, o.T, o.D, o.edf_limited, o.par);
  };

  // Eligibility events. "Full" events — J's release and the end of each hop delay — can find
  // all m threads running lower-ranked callbacks. At a callback boundary without hop delay the
  // thread that ran J's previous callback is free, and at a group hand-over the thread that ran
  // the group-mate is free: J's callback is then delayed only if that thread starts a callback
  // that outranks it at that instant, so these "charged" events number at most the executions
  // of outranking callbacks in the window, and find at most m − 1 lower-ranked callbacks.
  const Duration full_events = completion_mode ? static_cast<Duration>(q) : 1 + seg.delayed_hops;
  const Duration quiet_boundaries =
      completion_mode ? 0 : std::max<Duration>(0, static_cast<Duration>(q) - 1 - seg.delayed_hops);
  std::vector<Duration> hprel(ng, 0);
  Duration hprel_total = 0, hprel_fallback = 0;  // hand-overs of groups without the refinement are full events
  // G(x): group time (3); hprel[g]: hand-overs of group g to members that outrank J's callback.
  auto group_terms = [&](Duration x) {
    Duration G = rta_eq10_group_blocking(qg, Bg);
    hprel_total = 0;
    hprel_fallback = 0;
    for (std::size_t g = 0; g < ng; ++g) {
      G += own_group_C[g];
      hprel[g] = 0;
      for (const auto& w : ghp[g]) {
        G += workload(x, w.C, w.R, w.T, w.D, w.edf_limited);
        Duration n = overlapping_instances(x, w.R, w.T);
        if (w.edf_limited) n = std::min(n, edf_jobs(Dk, w.T, w.D, w.R));
        hprel[g] += n * w.cnt;
      }
      if (fallback[g]) hprel_fallback += hprel[g];
      else hprel_total += hprel[g];
    }
    return G;
  };
  // Jobs of chain j whose outranking callbacks can run in the window.
  auto hp_jobs = [&](const Other& o, Duration x) -> Duration {
    if (o.edf_limited) return edf_jobs(Dk, o.T, o.D, o.R);
    return o.bounded ? overlapping_instances(x, o.R, o.T) : x;  // (unbounded chains have no HP work)
  };
  struct Terms {
    Duration I = 0, L = 0, W = 0;
  };
  std::vector<Terms> terms(others.size());
  // Per-chain interference I, blocking L and workload W at window x, and the blocking bound
  // across chains: the `slots` largest blocker executions (m per full event, m − 1 per charged
  // one), each chain giving at most one per event (w_j in parallel).
  // Blocker executions of one chain: its lower-ranked callbacks, largest first, each repeated
  // once per lower-ranked job it can have in the window (EDF: jobs with deadline > d_k
  // released before a + x <= d_k, at most ⌈D_j/T_j⌉; FP: the instances overlapping the
  // window; a chain without a bound: any number), the first n of them.
  struct Seq {
    const std::vector<Duration>* b = nullptr;
    const std::vector<Duration>* pre = nullptr;  // prefix sums of b
    Duration mult = 1, n = 0;
    Duration at(Duration k) const { return (*b)[static_cast<std::size_t>(k / mult)]; }
    Duration sum() const {
      const Duration g = n / mult, r = n % mult;
      return mult * (*pre)[static_cast<std::size_t>(g)] + (r > 0 ? r * (*b)[static_cast<std::size_t>(g)] : 0);
    }
  };
  auto prefix = [](const std::vector<Duration>& b) {
    std::vector<Duration> p(b.size() + 1, 0);
    for (std::size_t k = 0; k < b.size(); ++k) p[k + 1] = p[k] + b[k];
    return p;
  };
  std::vector<std::vector<Duration>> pre_free(others.size());
  std::vector<std::vector<std::vector<Duration>>> pre_group(others.size());
  for (std::size_t j = 0; j < others.size(); ++j) {
    pre_free[j] = prefix(others[j].blockers);
    for (const auto& gbl : gblockers[j]) pre_group[j].push_back(prefix(gbl));
  }
  std::vector<Seq> seqs;
  std::vector<Duration> heads;
  Duration ev_full = 0, ev_charged = 0, slots_now = 0;
  Duration rho_full = 0, rho_charged = 0;
  std::vector<Duration> firsts;
  auto evaluate = [&](Duration x) {
    Duration hp_exec = own_extra_n;
    for (std::size_t j = 0; j < others.size(); ++j) hp_exec += hp_jobs(others[j], x) * others[j].n_hp;
    const Duration full = full_events + hprel_fallback;
    const Duration charged = std::min(quiet_boundaries + hprel_total, hp_exec);
    const Duration events = full + charged;
    const Duration events_raw = full + quiet_boundaries + hprel_total;
    const Duration slots = full * m + charged * (m - 1);
    ev_full = full;
    ev_charged = charged;
    seqs.clear();
    firsts.clear();
    for (std::size_t j = 0; j < others.size(); ++j) {
      const Other& o = others[j];
      Terms& t = terms[j];
      t.I = interference(o, x);
      t.W = o.bounded ? carry_in_workload(x, o.C_all, o.R, o.T, o.par) : kUnbounded;
      const Duration par = std::min<Duration>(o.width, m);
      // Lower-ranked jobs of j that can start before J's last event: EDF — deadline > d_k, so
      // released in (a + D_k − D_j, a + x): ⌈(x + D_j − D_k)/T_j⌉ (none when x <= D_k − D_j);
      // FP — the instances overlapping the window; a chain without a bound — any number.
      const bool unlimited = !o.edf_limited && !o.bounded;
      const Duration mult = o.edf_limited ? ceil_div(x + o.D_blk - tk.key_lo, o.T)
                                          : o.bounded ? overlapping_instances(x, o.R, o.T) : 0;
      Duration L = 0;
      auto add = [&](const std::vector<Duration>& b, const std::vector<Duration>& pre, Duration n) {
        if (b.empty() || n <= 0 || (!unlimited && mult <= 0)) return;
        Seq q;
        q.b = &b;
        q.pre = &pre;
        q.mult = unlimited ? n : mult;  // unbounded: the largest, again and again
        q.n = std::min(n, q.mult * static_cast<Duration>(b.size()));
        L += q.sum();
        seqs.push_back(q);
        for (Duration w = 0; w < par; ++w) firsts.push_back(b[0]);
      };
      add(o.blockers, pre_free[j], events * par);
      // Blockers of J's own groups cannot block at the events of J's callbacks in that group
      // or at that group's hand-overs.
      for (std::size_t g = 0; g < ng; ++g)
        add(gblockers[j][g], pre_group[j][g], std::min(events, std::max<Duration>(0, events_raw - qg[g] - hprel[g])) * par);
      t.L = L;
    }
    // The m-th largest first blocker (the phase argument in f below); a chain's free and group
    // blockers both counted is a safe over-approximation.
    if (static_cast<Duration>(firsts.size()) >= m) {
      std::nth_element(firsts.begin(), firsts.begin() + (m - 1), firsts.end(), std::greater<>());
      rho_full = firsts[static_cast<std::size_t>(m - 1)];
    } else {
      rho_full = 0;
    }
    // At a charged event the freed thread has just started an outranking callback, so the
    // callback that ends first there is bounded by outranking work already counted: no ρ.
    rho_charged = 0;
    slots_now = slots;
  };
  // Across chains: the sum of the `slots` largest blocker executions (merge of the sorted
  // sequences), computed only as far as `enough` (the caller takes the minimum with it).
  auto lp_cross_upto = [&](Duration enough) {
    Duration sum = 0;
    heads.assign(seqs.size(), 0);
    for (Duration k = 0; k < slots_now && sum < enough; ++k) {
      Duration best = -1;
      std::size_t which = 0;
      for (std::size_t i = 0; i < seqs.size(); ++i)
        if (heads[i] < seqs[i].n && seqs[i].at(heads[i]) > best) {
          best = seqs[i].at(heads[i]);
          which = i;
        }
      if (best < 0) break;
      sum += best;
      heads[which]++;
    }
    return sum;
  };

  // Σ_j min(e_j, cap_j) is at most Σ_j min(I_j, M_j) + min(LP_cross, Σ_j min(L_j, M_j − min(I_j, M_j)))
  // with M_j = min(W_j, cap_j): the interference fills each chain's room first, the blocking
  // (bounded per chain and across chains) the rest.
  auto combine = [&](auto room_of) {
    Duration hp = 0, room = 0;
    for (std::size_t j = 0; j < others.size(); ++j) {
      const Terms& t = terms[j];
      const Duration M = room_of(others[j], t.W);
      const Duration h = std::min(t.I, M);
      hp += h;
      room += std::min(t.L, M - h);
    }
    return rta_eq6_psi(hp, lp_cross_upto(room), room);
  };

  if (dedicated) {
    // f(x) = min(f1(x), f2(x)) (two sufficient conditions, below); every x with f(x) <= x is a
    // valid bound (the contrapositive above holds for each x on its own) and the bound is the
    // LEAST such x. Every term is non-decreasing in x, so Kleene iteration from below reaches
    // exactly that x, and it is non-decreasing in every WCET, in 1/period and in R of the other
    // chains (each term is); that is what makes the analysis sustainable. A search that stops
    // at "some" x with f(x) <= x (the former gallop + bisection after 48 steps) is safe but
    // not monotone: it returned 1 ns more for a system than for the same system with a larger
    // WCET (tests/cpp/analysis/test_sustainability.cpp).
    struct Eval {
      Duration f1, f2, G;
    };
    auto eval = [&](Duration x) -> Eval {
      const Duration cap = x - E1 - S;
      const Duration G = group_terms(x);
      evaluate(x);
      const Duration psi = combine([&](const Other& o, Duration W) { return rta_eq4_5_room(W, o.width, cap); }) +
                           std::min(own_extra, own_extra_n * cap);
      const Duration F = foreign_at(x);
      const Duration f1 = rta_eq11_start_demand(E1, S, G, F, psi, m);
      // Phase argument (a second, independent sufficient condition): split (4) into maximal
      // "phases", each starting at an eligibility event. During a phase all threads are busy;
      // the thread θ whose running callback ends first must, if the phase goes on, start an
      // outranking callback, and runs only such callbacks until the phase ends. So a phase
      // lasts at most r_min + (outranking work on θ in the phase), where r_min is at most the
      // outranking work another thread does in the phase when an outranking callback was
      // running at the phase start (always the case at a charged event), else — all m running
      // callbacks lower-ranked — at most the m-th largest blocker: |(4)| <= full·ρ + Σ_i
      // min(I_i, W_i). Not divided by m, so it helps where little work outranks J.
      Duration hp = own_extra;
      for (std::size_t j = 0; j < others.size(); ++j)
        hp += terms[j].W == kUnbounded ? terms[j].I : std::min(terms[j].I, terms[j].W);
      const Duration f2 = rta_phase_start_demand(E1, S, G, F, ev_full * rho_full + ev_charged * rho_charged, hp);
      return {f1, f2, G};
    };
    const Duration xmax = limit + 1 - elast_span;  // largest x whose bound stays within the limit

    // Exact acceleration. Where the caps w_j·(x − E' − S) bind, or carry-in workloads grow
    // with slope 1, f(x) − x can stay small for millions of nanoseconds and the iteration
    // creeps. At an iterate x0 (f(x0) > x0) we build a lower envelope of f on [x0, ∞): the
    // step terms (events, blockers L_j, LP_cross, ρ, hand-overs) frozen at their x0 values,
    // the carry-in workloads (interference I_j, workload W_j, group work) as
    // v0 + min(room, x − x0) (exact up to the next release, below it afterwards), the caps
    // linear. Ψ is min(Σ min(I_j, M_j) + LP_cross, Σ min(I_j + L_j, M_j)), non-decreasing in
    // every term, so the envelope is below f; it is concave in x, so the set where it is
    // <= x is an up-set of [x0, ∞) and its least element z is found by bisection. No x in
    // [x0, z) satisfies f(x) <= x, so jumping to z keeps the iteration below the least fixed
    // point — the result is the same as plain Kleene iteration.
    struct Piece {  // v0 + min(room, par·(x − x0))
      Duration v0 = 0, room = 0, par = 1;
      Duration at(Duration d) const { return v0 + std::min(room, par * d); }
    };
    auto piece = [&](Duration x0, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited, Duration par = 1) {
      Piece p;
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
    };
    struct Frozen {
      Piece I, W;
      bool W_unbounded = false;
      Duration L = 0, w = 1;
    };
    std::vector<Frozen> fz(others.size());
    std::vector<Piece> gz;
    auto jump = [&](Duration x0, const Eval& e0) -> Duration {
      // Group work G(x): constant part plus the outranking members' carry-in workloads.
      gz.clear();
      Duration G_const = rta_eq10_group_blocking(qg, Bg);
      for (std::size_t g = 0; g < ng; ++g) {
        G_const += own_group_C[g];
        for (const auto& w : ghp[g]) gz.push_back(piece(x0, w.C, w.R, w.T, w.D, w.edf_limited));
      }
      Duration hp_lp_room_max = 0;
      for (std::size_t j = 0; j < others.size(); ++j) {
        const Other& o = others[j];
        Frozen& z = fz[j];
        z.I = piece(x0, o.C_hp, o.R, o.T, o.D, o.edf_limited, o.par);
        z.W_unbounded = !o.bounded;
        if (o.bounded) z.W = piece(x0, o.C_all, o.R, o.T, o.D, false, o.par);
        z.L = terms[j].L;
        z.w = o.width;
        hp_lp_room_max += z.L;
      }
      // LP_cross at x0 (only its value up to the largest room it can ever fill matters).
      const Duration lpx = lp_cross_upto(hp_lp_room_max);
      const Duration rho = ev_full * rho_full + ev_charged * rho_charged;
      // Foreign work is added to the group term: both conditions charge it in full.
      for (const auto& w : fwork) gz.push_back(piece(x0, w.C, w.R, w.T, 0, false));
      G_const += own_foreign + platform_at(x0);  // (S is non-decreasing: S(x0) is below it on [x0, ∞))
      for (const auto& [c, e] : frate) G_const += e * *executions_in_window(*v.model, static_cast<std::size_t>(c), x0);
      auto G_at = [&](Duration d) {
        Duration G = G_const;
        for (const auto& p : gz) G += p.at(d);
        return G;
      };
      // Envelope of f1 <= x  and of f2 <= x at x = x0 + d.
      auto ok1 = [&](Duration x) {
        const Duration d = x - x0, cap = x - E1 - S;
        Duration h = 0, room = 0;
        for (const auto& z : fz) {
          const Duration I = z.I.at(d);
          const Duration M = rta_eq4_5_room(z.W_unbounded ? kUnbounded : z.W.at(d), z.w, cap);
          const Duration hj = std::min(I, M);
          h += hj;
          room += std::min(z.L, M - hj);
        }
        const Duration psi = rta_eq6_psi(h, lpx, room) + std::min(own_extra, own_extra_n * cap);
        return rta_eq11_start_demand(E1, S, G_at(d), 0, psi, m) <= x;
      };
      auto ok2 = [&](Duration x) {
        const Duration d = x - x0;
        Duration hp = own_extra;
        for (const auto& z : fz) hp += z.W_unbounded ? z.I.at(d) : std::min(z.I.at(d), z.W.at(d));
        return rta_phase_start_demand(E1, S, G_at(d), 0, rho, hp) <= x;
      };
      // Least x in (x0, xmax] with ok(x) (an up-set there), or xmax + 1.
      auto least = [&](auto ok, Duration from) {
        if (from > xmax) return xmax + 1;
        if (ok(from)) return from;
        if (!ok(xmax)) return xmax + 1;
        Duration lo = from, hi = xmax;  // ok(lo) false, ok(hi) true; gallop first: z is usually near
        for (Duration step = std::max<Duration>(1, (from - E1 - S) / 8); lo + step < hi; step *= 2) {
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
      };
      // Below f1(x0) (resp. f2(x0)) neither envelope can hold (each is >= its value at x0).
      return std::min(least(ok1, e0.f1), least(ok2, e0.f2));
    };

    const Duration x0 = E1 + S + 1;
    if (x0 > xmax) {  // (already beyond the limit: the bound of x0 itself, as before)
      const Eval e = eval(x0);
      if (std::min(e.f1, e.f2) <= x0) return rta_eq9_response(x0, elast_span);
      return std::nullopt;
    }
    Eval last{};
    int steps = 0;
    const auto found = least_fixed_point(
        x0, xmax,
        [&](Duration x) {
          last = eval(x);
          return std::min(last.f1, last.f2);
        },
        [&](Duration x, Duration fx) { return steps++ >= 3 ? jump(x, last) : fx; });
    if (!found) return std::nullopt;
    return rta_eq9_response(*found.value, elast_span);
  }
  // Reserved threads: supply form (no platform curve: the analyses refuse that combination,
  // platform_refusal in analyses.cpp).
  if (!curve.empty()) return std::nullopt;
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
  // LaME Sec. 4.2 Thm 1's form: the least x with dbf(x) < sbf_Π(x), i.e. the least fixed point
  // of x ↦ (first point where the supply exceeds the demand at x).
  const auto found = least_fixed_point(1, limit + 1, [&](Duration x) {
    const Duration G = group_terms(x);
    evaluate(x);
    const Duration demand = lame_thm1_demand(m, E1w, S, G, own_extra, combine([](const Other&, Duration W) {
      return W == kUnbounded ? std::numeric_limits<Duration>::max() / 4 : std::min(std::numeric_limits<Duration>::max() / 4, W);
    }));
    return pi.first_at_least(demand + 1, x, limit + 1).value_or(limit + 2);
  });
  if (!found) return std::nullopt;
  const Duration r = rta_eq9_response(*found.value, elastw);
  if (r > limit) return std::nullopt;
  return r;
}

std::optional<Duration> segments_end(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                                     const std::vector<Segment>& segs, std::size_t from, std::size_t to,
                                     Duration start, const std::function<Duration(Duration)>& limit,
                                     Duration* seg_ends, std::size_t* failed) {
  Duration total = start;
  for (std::size_t i = from; i < to; ++i) {
    total += segs[i].comm_before;
    const Duration l = limit(total);
    auto b = l > 0 ? segfn(v, k, segs[i], W, total, l) : std::nullopt;
    if (!b) {
      if (failed) *failed = i;
      return std::nullopt;
    }
    total += *b;
    if (seg_ends) seg_ends[i - from] = total;
  }
  if (failed) *failed = to;
  return total;
}

namespace {

constexpr Duration kUnset = -2;

// The end of every callback of `segs` (those with a bound up to segment `failed`, kUnbounded
// from there on), raised into `cb_end` (kUnbounded stays).
void record_ends(const std::vector<Segment>& segs, const std::vector<Duration>& seg_ends, std::size_t failed,
                 std::vector<Duration>& cb_end) {
  for (std::size_t i = 0; i < segs.size(); ++i)
    for (int c : segs[i].cbs) {
      Duration& e = cb_end[static_cast<std::size_t>(c)];
      if (e == kUnbounded) continue;
      e = i >= failed ? kUnbounded : std::max(e, seg_ends[i]);
    }
}

}  // namespace

void work_path_ends(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                    const std::vector<std::vector<Segment>>& paths, Duration start,
                    const std::function<Duration(Duration)>& limit, const std::function<bool(const Segment&)>& refuse,
                    std::vector<Duration>& cb_end) {
  std::vector<Duration> seg_ends;
  for (const auto& p : paths) {
    seg_ends.assign(p.size(), 0);
    std::size_t failed = p.size();
    for (std::size_t i = 0; i < p.size() && failed == p.size(); ++i)
      if (refuse(p[i])) failed = i;
    const std::size_t refused = failed;
    const auto end = segments_end(v, k, segfn, W, p, 0, failed, start, limit, seg_ends.data(), &failed);
    record_ends(p, seg_ends, failed, cb_end);
    if (end || failed >= refused) continue;
    // The segment without a bound: its leading callbacks may still have one (a fan-out that
    // runs a high-priority callback, then a lowest-priority one on the same executor). A
    // segment's prefix bounds the completion of its last callback (the callbacks after it are
    // released later), so the longest prefix with a bound gives those callbacks an end.
    const Segment& seg = p[failed];
    const Duration arrival = (failed == 0 ? start : seg_ends[failed - 1]) + seg.comm_before;
    const Duration l = limit(arrival);
    // (A longer prefix's bound is at least a shorter one's: from the first callback on, up to
    // the first prefix without a bound.)
    for (std::size_t len = 1; len < seg.cbs.size() && l > 0; ++len) {
      Segment pre = seg;
      pre.cbs.resize(len);
      pre.hop_into.resize(len);
      recompute_hops(pre);
      const auto b = segfn(v, k, pre, W, arrival, l);
      if (!b) break;
      cb_end[static_cast<std::size_t>(pre.cbs.back())] = arrival + *b;  // (it was set kUnbounded)
    }
  }
}

AnalysisResult holistic(const View& v_in, const SegmentBound& segfn, const HolisticOptions& opt,
                        const std::function<bool(int, std::string*)>& skip) {
  const View v = with_join_shadows(v_in);  // chains that wait at a fusion node (join_wait.hpp)
  const std::size_t n = v.tasks.size();
  Windows W;
  std::vector<Duration>& R = W.R;
  R.assign(n, 0);
  if (opt.work_windows) {
    W.end.assign(n, std::vector<Duration>(v.cbs.size(), 0));
    W.finite.assign(n, 0);
  }
  std::vector<std::string> failed(n);
  std::vector<std::vector<Duration>> ends(n);  // bound at the end of each segment (join_wait.hpp)
  for (std::size_t k = 0; k < n; ++k) ends[k].assign(v.tasks[k].segments.size(), 0);
  for (std::size_t k = 0; k < n; ++k) {
    const Task& t = v.tasks[k];
    std::string why;
    if (!t.join_wait.empty() && !t.join) failed[k] = t.join_refused.empty() ? t.join_wait : t.join_refused;
    else if (skip && k < v_in.tasks.size() && skip(static_cast<int>(k), &why)) failed[k] = why.empty() ? "not analysed" : why;
    else if (t.segments.empty() && t.paths.empty()) failed[k] = "a branching chain that spans several executors is not supported";
    Duration lower = t.src_jitter + t.path_wcet;
    for (const auto& s : t.segments) lower += s.comm_before + s.intra_comm;
    if (!t.paths.empty()) {  // the longest path
      lower = t.src_jitter;
      for (const auto& p : t.paths) {
        Duration l = t.src_jitter;
        for (const auto& s : p) {
          l += s.comm_before + s.intra_comm;
          for (int c : s.cbs) l += v.cbs[c].wcet;
        }
        lower = std::max(lower, l);
      }
    }
    R[k] = failed[k].empty() ? lower : kUnbounded;
    if (opt.work_windows && failed[k].empty()) W.finite[k] = lower;
  }
  // Windows::end of task x from one instance's callback ends (kUnset: on no path that was
  // bounded — the largest end of the instance then, as a window for all of its work); true when
  // something grew. Ends only grow, and an unbounded one stays so: the iteration is monotone.
  auto raise_ends = [&](std::size_t x, const std::vector<Duration>& cb_end) {
    if (!opt.work_windows) return false;
    Duration all = 0;
    for (Duration e : cb_end)
      if (e == kUnbounded || all == kUnbounded) all = kUnbounded;
      else all = std::max(all, e);
    bool grew = false;
    for (int c : v.tasks[x].work) {
      Duration e = cb_end[static_cast<std::size_t>(c)];
      if (e == kUnset) e = all;
      Duration& old = W.end[x][static_cast<std::size_t>(c)];
      if (old == kUnbounded || (e != kUnbounded && e <= old)) continue;
      old = e;
      grew = true;
    }
    for (int c : v.tasks[x].work) {
      const Duration e = W.end[x][static_cast<std::size_t>(c)];
      if (e != kUnbounded && e > W.finite[x]) {
        W.finite[x] = e;
        grew = true;
      }
    }
    return grew;
  };
  const std::vector<Duration> unbounded_ends(v.cbs.size(), kUnbounded);
  auto set_unbounded = [&](std::size_t x) {
    R[x] = kUnbounded;
    raise_ends(x, unbounded_ends);
  };
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
  auto failing_neighbour = [&](std::size_t k) -> std::string {
    for (std::size_t i = 0; i < n; ++i)
      if (i != k && R[i] == kUnbounded && share(i, k) && v.tasks[i].shadow_of < 0) return v.tasks[i].name;
    return "";
  };
  auto quick_fail = [&]() {
    AnalysisResult quick;
    quick.analysis = opt.analysis;
    quick.schedulable = false;
    return quick;
  };
  std::vector<Duration> cb_end(v.cbs.size(), kUnset);
  for (int round = 0; round < opt.max_rounds; ++round) {
    bool changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!failed[k].empty()) continue;
      const Task& t = v.tasks[k];
      if (t.shadow_of >= 0) continue;  // its bound is its owner's prefix bound (below)
      std::fill(cb_end.begin(), cb_end.end(), kUnset);
      // Work off the path: with no work paths (a topic cycle, too many paths), no end bound.
      if (!t.work_paths_why.empty())
        for (int c : t.extras) cb_end[static_cast<std::size_t>(c)] = kUnbounded;
      if (t.join) {
        std::string why;
        const Duration cap = (opt.require_deadlines_met || opt.verdict_only) && t.has_deadline ? t.D : 0;
        Duration join_at = 0;
        auto b = join_chain_bound(v, static_cast<int>(k), segfn, W, ends, cap, &why, &join_at);
        const auto first_after = static_cast<std::size_t>(t.join->first_after);
        if (b && opt.work_windows) {
          record_ends(t.segments, ends[k], t.segments.size(), cb_end);
          join_work_ends(v, static_cast<int>(k), segfn, W, join_at, cb_end);
        }
        for (std::size_t s = k + 1; s < n; ++s)  // its shadow: the prefix bound, or none
          if (v.tasks[s].shadow_of == static_cast<int>(k) && failed[s].empty()) {
            const Duration pre = b ? ends[k][first_after - 1] : kUnbounded;
            if (pre != R[s]) changed = true;
            R[s] = pre;
            if (b) changed |= raise_ends(s, cb_end);
            else set_unbounded(s), failed[s] = why;
          }
        if (!b) {
          if (opt.verdict_only && t.reported) return quick_fail();
          const std::string dep = failing_neighbour(k);
          failed[k] = dep.empty() || why.rfind("no bound within", 0) != 0
                          ? why
                          : why + ": '" + dep + "', which shares its executor, has no bound itself";
          set_unbounded(k);
          changed = true;
        } else {
          if (*b > R[k]) {
            R[k] = *b;
            changed = true;
          }
          changed |= raise_ends(k, cb_end);
        }
        continue;
      }
      // R_k = src_jitter + Σ_segments (comm_before + segment bound); of a chain branching
      // across executors the largest over its paths (Task::paths). `ends` (linear chains): the
      // bound at the end of each segment, which the join term of other chains reads.
      // EDF bounds are only used when every deadline is met: stop at the deadline (at the
      // earliest its callbacks are keyed with, key_lo: a shared timer's shortest).
      const Duration dl = opt.require_deadlines_met ? t.key_lo : t.D;
      const Duration cap = (opt.require_deadlines_met || opt.verdict_only) && t.has_deadline ? std::min(t.T, dl) : t.T;
      const std::function<Duration(Duration)> within_cap = [cap](Duration total) { return cap - total; };
      Duration total = 0;
      bool ok = true;
      if (t.paths.empty()) {
        const auto e = segments_end(v, static_cast<int>(k), segfn, W, t.segments, 0, t.segments.size(), t.src_jitter,
                                    within_cap, ends[k].data());
        ok = e.has_value();
        if (ok) {
          total = *e;
          record_ends(t.segments, ends[k], t.segments.size(), cb_end);
        }
      } else {
        for (const auto& p : t.paths) {
          const auto e = segments_end(v, static_cast<int>(k), segfn, W, p, 0, p.size(), t.src_jitter, within_cap);
          if (!(ok = e.has_value())) break;
          total = std::max(total, *e);
        }
        if (ok)
          for (int c : t.path) cb_end[static_cast<std::size_t>(c)] = total;
      }
      if (!ok || total > t.T) {
        if (opt.verdict_only && t.reported) return quick_fail();
        std::string dep = failing_neighbour(k);
        failed[k] = dep.empty() ? "no bound within the period " + std::to_string(t.T) +
                                      " ns (the analysis needs every instance to finish before the next is released)"
                                : "no bound within the period: '" + dep +
                                      "', which shares its executor, has no bound itself";
        set_unbounded(k);
        changed = true;
        continue;
      }
      // When each callback of the instance's work (its fan-out) is done: each work path within
      // the period (EDF: its deadline, the key its callbacks run with); a fan-out without such a
      // bound is a tail that only blocks others (global_segment_bound).
      if (opt.work_windows) {
        const Duration wcap = opt.require_deadlines_met && t.has_deadline ? std::min(t.T, t.key_lo) : t.T;
        work_path_ends(v, static_cast<int>(k), segfn, W, t.work_paths, t.src_jitter,
                       [wcap](Duration tot) { return wcap - tot; }, [](const Segment&) { return false; }, cb_end);
      }
      if (total > R[k]) {
        R[k] = total;
        changed = true;
      }
      changed |= raise_ends(k, cb_end);
    }
    if (!changed) break;
    if (round + 1 == opt.max_rounds)
      for (std::size_t k = 0; k < n; ++k)
        if (failed[k].empty()) {
          failed[k] = "the fixed point did not converge";
          set_unbounded(k);
        }
  }
  if (opt.require_deadlines_met) {
    std::vector<std::size_t> late;
    for (std::size_t k = 0; k < n; ++k)
      if (failed[k].empty() && v.tasks[k].has_deadline && R[k] > v.tasks[k].key_lo) late.push_back(k);
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
  return collect_result(opt.analysis, v.tasks, R, failed);
}

}  // namespace chainrt::detail
