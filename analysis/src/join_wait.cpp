// The join wait at an implicit fusion set (join_wait.hpp).
//
// Fusion semantics (model/facts.hpp; the simulator's complete_exec and the reference-system
// benchmark's Fusion node implement the same rule): every member of a set caches the stamps of
// the input it last processed (a member's next execution OVERWRITES its cache: the simulator at
// its completion, the benchmark at its start); when a member completes while every member
// holds a fresh input, it publishes one message carrying all cached stamps and every member
// becomes stale. So an instance J of chain k, cached by k's member c at time a, either is
// published at the first member completion in [a, ∞) at which all members are fresh, or is
// lost (overwritten) — a lost instance has no response time. Its part after the join is the
// processing of that publication.
//
// Notation: r = J's nominal release (the chain's timer; every bound is measured from it, as
// the simulator and the runtime measure chains), Rpre = bound from r to c's completion (the
// driver's segment bounds up to c, jitter included), Bpre = a lower bound of the same (Σ BCET
// of the path callbacks strictly between the source and c: the source timer's and the cache-only
// member runs may be shorter in a real run, so they count 0), T = the chain's period.
//
// (J1, own overwrite) J is published before the NEXT instance of k completes c, or never: the
//     next instance is released at r + T and completes c by r + T + Rpre, provided every
//     instance reaches c (the source is a timer, every subscription on the path to c hears only
//     its predecessor on the path — no message of another publisher can push one out of a
//     queue — and Rpre ≤ T, so an instance finishes c before the next one arrives anywhere on
//     the path). So the publication time P satisfies   P − r ≤ T + Rpre.
// (J2, the other inputs' arrival) for every other member c' fed by a declared chain i (linear,
//     timer source, the same no-loss conditions, bounds R'pre and B'pre to c'): if c' is stale
//     at a, its next completion comes from an instance of i not yet through c' at a — the first
//     one released after a − B'pre at the latest (one released later cannot have completed c'
//     by a), i.e. before a − B'pre + T', completing c' by then + R'pre. Once every other
//     member has completed after a (or was fresh at a) and J is still cached, the last of those
//     completions publishes J. So   P − r ≤ Rpre + max_{c'} (T' + R'pre − B'pre).
//     The join bound is the smaller of J1 and J2 (J2 only where every other input is known).
// (G, the gap between publications) after a publication triggered by member m's completion,
//     the next one needs m to complete again: at least T_m + B_mpre − R_mpre later. So two
//     publications are at least G = min over all members of (T_m − (R_mpre − B_mpre)) apart.
//     Where a segment after the join may run on several threads, it is bounded only up to G:
//     then its processing of one publication ends before the next publication enters it (the
//     engine's categories assume a callback never waits for its own earlier instance while
//     threads idle). G needs every member's bounds: without them such a chain gets no bound
//     (reason given). On one thread an earlier publication queued ahead keeps the thread busy
//     with work counted anyway (it belongs to an instance of every member's chain), so no G.
//     (The benchmark's node decides to publish when the completing member STARTS; an instance
//     released after a − B'pre also starts c' after a, so J2 holds there too.)
// The chain's bound:  R = J + Σ_{segments after the join} (hop + segment bound),  J = min(J1, J2),
// the first hop charged at the largest cost any member's publication may take into it.
//
// What changes for the others. R may exceed T (the join takes up to a period): other chains
// see the chain's prefix as a pseudo-task (with_join_shadows: window [r, r + Rpre], period T)
// and the rest of its work through the carry-in workload with R (Bertogna & Cirinei's W(x)
// counts every instance whose window [r, r + R] meets the window, whatever R/T), its width
// raised to one per callback (a callback runs one instance at a time; a later instance's
// prefix runs while the rest runs). A publication carries one instance of every member's
// chain, so every execution after the join belongs to an instance of each of them and is
// counted in each one's workload. Its own segments after the join count the prefix
// pseudo-task too (later instances); ros-default-st's busy window counts every own callback
// outside the segment.
//
// Phase-aware bounds (timers released together or at declared offsets) are not derived: the
// runtime arms each executor's timers on that executor's own epoch, so offsets across
// executors are not guaranteed, and the soundness harness draws offsets freely. J1 does not
// depend on the other inputs' phases at all.
#include "join_wait.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "chainrt/model/facts.hpp"

namespace chainrt::detail {

namespace {

// Every callback on path[1..upto] hears only its predecessor on the path, and path[0] is a
// timer: no instance is pushed out of a queue by another publisher's message.
bool no_loss_to(const Model& m, const std::vector<int>& path, std::size_t upto) {
  if (!m.callbacks[path[0]].is_timer() || m.callbacks[path[0]].period <= 0) return false;
  for (std::size_t j = 1; j <= upto; ++j) {
    const Callback& cb = m.callbacks[path[j]];
    if (cb.kind != CallbackKind::Subscription && cb.kind != CallbackKind::Service && cb.kind != CallbackKind::Client)
      return false;  // (a lowered service or client is released by its topic's messages alone)
    int publishers = 0;
    bool pred = false;
    for (std::size_t u = 0; u < m.callbacks.size(); ++u)
      for (const auto& t : m.callbacks[u].publishes)
        if (t == cb.topic) {
          ++publishers;
          pred = pred || static_cast<int>(u) == path[j - 1];
        }
    if (publishers != 1 || !pred) return false;
  }
  return true;
}

// Lower bound from the nominal release to the completion of path[upto] (see Bpre above).
Duration bpre_to(const View& v, const std::vector<int>& path, std::size_t upto) {
  Duration b = 0;
  for (std::size_t j = 1; j < upto; ++j) b += v.cbs[path[j]].bcet;
  return b;
}

// Threads that may run every callback of the segment.
int segment_threads(const View& v, const Segment& seg) {
  std::uint64_t mask = ~std::uint64_t{0};
  for (int c : seg.cbs) mask &= v.cbs[c].threads;
  int n = 0;
  for (std::size_t t = 0; t < v.supply[seg.executor].size() && t < 64; ++t) n += static_cast<int>(mask >> t & 1);
  return n;
}

}  // namespace

void resolve_joins(const Model& m, View& v, const HopCost& cost) {
  const auto sets = implicit_fusion_sets(m);
  // Pass 1: find each joining chain's fusion input and split its segments after it.
  std::vector<int> member_pos(v.tasks.size(), -1);
  std::vector<const std::vector<std::size_t>*> member_set(v.tasks.size(), nullptr);
  for (std::size_t k = 0; k < v.tasks.size(); ++k) {
    Task& t = v.tasks[k];
    if (t.join_wait.empty()) continue;
    if (!t.linear) {
      t.join_refused = "its data waits at a fusion node for inputs the chain does not contain, and that wait is "
                       "bounded for linear chains only";
      continue;
    }
    auto on_path = [&](std::size_t c) { return std::find(t.path.begin(), t.path.end(), static_cast<int>(c)) != t.path.end(); };
    int joins = 0;
    for (const auto& set : sets) {
      if (std::all_of(set.begin(), set.end(), on_path)) continue;
      for (std::size_t j = 0; j + 1 < t.path.size(); ++j)
        if (std::find(set.begin(), set.end(), static_cast<std::size_t>(t.path[j])) != set.end()) {
          if (joins++ == 0 || static_cast<int>(j) < member_pos[k]) {
            member_pos[k] = static_cast<int>(j);
            member_set[k] = &set;
          }
        }
    }
    if (joins != 1) {
      t.join_refused = "its data waits at " + std::to_string(joins) +
                       " fusion nodes for inputs the chain does not contain; that wait is bounded for one per chain";
      member_pos[k] = -1;
      continue;
    }
    // Split the segment holding the member after it.
    const int c = t.path[member_pos[k]];
    std::size_t s = 0, idx = 0;
    for (; s < t.segments.size(); ++s) {
      auto it = std::find(t.segments[s].cbs.begin(), t.segments[s].cbs.end(), c);
      if (it != t.segments[s].cbs.end()) {
        idx = static_cast<std::size_t>(it - t.segments[s].cbs.begin());
        break;
      }
    }
    if (s == t.segments.size()) {
      t.join_refused = t.join_wait;
      member_pos[k] = -1;
      continue;
    }
    if (idx + 1 < t.segments[s].cbs.size()) {
      Segment& a = t.segments[s];
      Segment b;
      b.executor = a.executor;
      b.cbs.assign(a.cbs.begin() + static_cast<std::ptrdiff_t>(idx + 1), a.cbs.end());
      b.hop_into.assign(a.hop_into.begin() + static_cast<std::ptrdiff_t>(idx + 1), a.hop_into.end());
      b.comm_before = b.hop_into.front();
      b.hop_into.front() = 0;
      a.cbs.resize(idx + 1);
      a.hop_into.resize(idx + 1);
      recompute_hops(a);
      recompute_hops(b);
      t.segments.insert(t.segments.begin() + static_cast<std::ptrdiff_t>(s + 1), std::move(b));
    }
    JoinTerm jt;
    jt.member = c;
    jt.first_after = static_cast<int>(s + 1);
    for (std::size_t q = s + 1; q < t.segments.size(); ++q) t.segments[q].after_join = true;
    for (std::size_t mem : *member_set[k]) jt.members.push_back(static_cast<int>(mem));
    // The hop into the part after the join: from whichever member publishes.
    t.segments[s + 1].comm_before = std::max(t.segments[s + 1].comm_before,
                                             fused_publication_hop(m, jt.members, t.path[member_pos[k] + 1], cost));
    jt.own_source_ok = no_loss_to(m, t.path, static_cast<std::size_t>(member_pos[k]));
    jt.bpre = bpre_to(v, t.path, static_cast<std::size_t>(member_pos[k]));
    t.join = std::move(jt);
    t.width = static_cast<int>(t.path.size() + t.extras.size());
  }
  // Pass 2: the chains that feed the other members (their segments are final now).
  for (std::size_t k = 0; k < v.tasks.size(); ++k) {
    Task& t = v.tasks[k];
    if (!t.join) continue;
    for (std::size_t c2 : *member_set[k]) {
      if (std::find(t.path.begin(), t.path.end(), static_cast<int>(c2)) != t.path.end()) continue;
      JoinInput in;
      in.callback = static_cast<int>(c2);
      for (std::size_t i = 0; i < v.tasks.size() && in.task < 0; ++i) {
        const Task& ti = v.tasks[i];
        if (i == k || !ti.reported || !ti.linear) continue;
        auto it = std::find(ti.path.begin(), ti.path.end(), static_cast<int>(c2));
        if (it == ti.path.end()) continue;
        const auto pos = static_cast<std::size_t>(it - ti.path.begin());
        if (!no_loss_to(m, ti.path, pos)) continue;
        for (std::size_t s = 0; s < ti.segments.size(); ++s)
          if (std::find(ti.segments[s].cbs.begin(), ti.segments[s].cbs.end(), static_cast<int>(c2)) !=
              ti.segments[s].cbs.end())
            in.segment = static_cast<int>(s);
        if (in.segment < 0) continue;
        in.task = static_cast<int>(i);
        in.T = ti.T;
        in.bpre = bpre_to(v, ti.path, pos);
      }
      if (in.task < 0 && t.join->inputs_missing.empty())
        t.join->inputs_missing = "fusion input '" + m.callbacks[c2].name +
                                 "' lies on no declared linear chain from a timer whose every message reaches it";
      t.join->inputs.push_back(in);
    }
  }
}

View with_join_shadows(const View& v) {
  bool any = false;
  for (const auto& t : v.tasks) any = any || (t.join.has_value() && t.absorbed_by < 0);
  if (!any) return v;
  View w = v;
  const Model& m = *v.model;
  for (std::size_t k = 0; k < v.tasks.size(); ++k) {
    const Task& t = v.tasks[k];
    if (!t.join || t.absorbed_by >= 0) continue;
    Task s;
    s.name = t.name + " (later instances' prefix)";
    s.chain = t.chain;
    s.reported = false;
    s.has_deadline = t.has_deadline;
    s.T = t.T;
    s.D = t.D;
    s.src_jitter = t.src_jitter;
    s.cls = t.cls;
    s.key_lo = t.key_lo;  // its callbacks are keyed as the chain's (edf_keys)
    s.key_hi = t.key_hi;
    s.edf_unkeyed = t.edf_unkeyed;
    s.shadow_of = static_cast<int>(k);
    s.grid_offset = t.grid_offset;  // released with its owner
    s.grid_host = t.grid_host;
    for (int c : t.path) {
      s.path.push_back(c);
      if (c == t.join->member) break;
    }
    s.segments.assign(t.segments.begin(), t.segments.begin() + t.join->first_after);
    // Work: the prefix and what it triggers, except through the member's publication.
    std::set<int> work(s.path.begin(), s.path.end());
    std::vector<int> stack(s.path.begin(), s.path.end());
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      if (c == t.join->member) continue;
      for (const auto& topic : m.callbacks[c].publishes)
        for (auto sub : m.subscribers(topic))
          if (work.insert(static_cast<int>(sub)).second) {
            s.extras.push_back(static_cast<int>(sub));
            stack.push_back(static_cast<int>(sub));
          }
    }
    s.work = s.path;
    s.work.insert(s.work.end(), s.extras.begin(), s.extras.end());
    s.width = 1 + static_cast<int>(s.extras.size());
    for (int c : s.path) s.path_wcet += v.cbs[c].wcet;
    // The chain itself now stands for the rest of its work (window [r, r + R]); its prefix runs
    // in [r, r + Rpre] and is the pseudo-task's.
    Task& owner = w.tasks[k];
    std::vector<int> rest;
    for (int c : owner.work)
      if (std::find(s.path.begin(), s.path.end(), c) == s.path.end()) rest.push_back(c);
    owner.work = std::move(rest);
    owner.width = static_cast<int>(owner.work.size());
    w.tasks.push_back(std::move(s));
  }
  return w;
}

Duration fused_publication_hop(const Model& m, const std::vector<int>& members, int to, const HopCost& cost) {
  const std::string& d = m.callbacks[static_cast<std::size_t>(to)].name;
  Duration hop = 0;
  for (int mem : members) {
    hop = std::max(hop, placement_hop_cost(m, mem, to, cost));
    for (const Chain& ch : m.chains)
      for (const Hop& h : ch.hops)
        if (h.from == m.callbacks[static_cast<std::size_t>(mem)].name && h.to == d) hop = std::max(hop, cost(h));
  }
  return hop;
}


std::optional<Duration> join_chain_bound(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                                         std::vector<std::vector<Duration>>& ends, Duration deadline, std::string* why,
                                         Duration* join_at) {
  const Task& t = v.tasks[k];
  const JoinTerm& jt = *t.join;
  const Model& m = *v.model;
  const std::string at = "'" + m.callbacks[jt.member].name + "'";
  // Before the join: as any chain, within the period (the no-loss condition Rpre <= T).
  const auto first_after = static_cast<std::size_t>(jt.first_after);
  const Duration cap = deadline > 0 ? std::min(t.T, deadline) : t.T;
  const auto pre = segments_end(v, k, segfn, W, t.segments, 0, first_after, t.src_jitter,
                                [&](Duration total) { return cap - total; }, ends[k].data());
  if (!pre) {
    *why = "no bound within the period for its part up to the fusion input " + at;
    return std::nullopt;
  }
  const Duration Rpre = *pre;
  // The join: J1 and J2, and the gap G.
  std::optional<Duration> join;
  if (jt.own_source_ok) join = join_own_overwrite(t.T, Rpre);
  bool all_known = jt.inputs_missing.empty();
  Duration gap = jt.own_source_ok ? member_gap(t.T, Rpre, jt.bpre) : 0;
  Duration other = 0;
  std::string missing = jt.inputs_missing;
  for (const auto& in : jt.inputs) {
    if (in.task < 0) continue;
    if (W.R[in.task] == kUnbounded) {
      all_known = false;
      if (missing.empty()) missing = "chain '" + v.tasks[in.task].name + "', which feeds fusion input '" +
                                     m.callbacks[in.callback].name + "', has no bound";
      continue;
    }
    const Duration Rp = ends[in.task][in.segment];
    other = std::max(other, join_other_arrival(in.T, Rp, in.bpre));
    gap = std::min(gap, member_gap(in.T, Rp, in.bpre));
  }
  if (all_known) join = std::min(join.value_or(Rpre + other), Rpre + other);
  if (!join) {
    *why = "its data waits at fusion callback " + at + " and the wait has no bound: " +
           (missing.empty() ? std::string("its own source may lose instances before the fusion input") : missing);
    return std::nullopt;
  }
  // G is needed only where a segment after the join may run on several threads (below).
  bool parallel = false;
  for (std::size_t s = static_cast<std::size_t>(jt.first_after); s < t.segments.size(); ++s)
    parallel = parallel || segment_threads(v, t.segments[s]) > 1;
  if (parallel && (!all_known || !jt.own_source_ok || gap <= 0)) {
    *why = "its data waits at fusion callback " + at + " (at most " + std::to_string(*join) +
           " ns after its release), but the least time between two fusions is not bounded" +
           (missing.empty() ? std::string(jt.own_source_ok ? "" : ": its own source may lose instances") : ": " + missing) +
           ", so its processing after the join is not analysed";
    return std::nullopt;
  }
  // After the join: within the gap between publications (and the deadline, when required).
  const auto end = segments_end(
      v, k, segfn, W, t.segments, first_after, t.segments.size(), *join,
      [&](Duration total) {
        Duration limit = parallel ? gap - (total - *join) : t.T;
        if (deadline > 0) limit = std::min(limit, deadline - total);
        return limit;
      },
      ends[k].data() + first_after);
  if (!end) {
    *why = deadline > 0 && deadline - *join < (parallel ? gap : t.T)
               ? "no bound within its deadline: its data may wait at fusion callback " + at + " until " +
                     std::to_string(*join) + " ns after its release"
           : parallel ? "no bound for its part after fusion callback " + at +
                            " within the least time between two fusions (" + std::to_string(gap) + " ns)"
                      : "no bound within the period for a segment after fusion callback " + at;
    return std::nullopt;
  }
  if (join_at) *join_at = *join;
  return *end;
}

void join_work_ends(const View& v, int k, const SegmentBound& segfn, const Windows& W, Duration join_at,
                    std::vector<Duration>& cb_end) {
  const Task& t = v.tasks[k];
  // Fan-out that leaves the chain before the join: from the release, within the period.
  work_path_ends(v, k, segfn, W, t.join_work_before, t.src_jitter, [&](Duration total) { return t.T - total; },
                 [](const Segment&) { return false; }, cb_end);
  // Fan-out after the fused publication (at most join_at after the release): each segment within
  // the period; one that may run on several threads is not bounded (the least time between two
  // fusions is not used for it).
  work_path_ends(v, k, segfn, W, t.join_work_after, join_at, [&](Duration) { return t.T; },
                 [&](const Segment& seg) { return segment_threads(v, seg) > 1; }, cb_end);
}

// ---- fusion rounds: the join under guaranteed phases -----------------------------------
//
// (P, pairing) Let every member c of a fusion set be fed by a declared chain k_c that waits
// there (Task::join), its source a timer with a guaranteed phase (model TimerPhase::Guaranteed:
// armed on the host's release grid, sched/timer.hpp) — all of one period T, on one host, every
// timer starting at grid index 0 (the run's common start) — with no instance lost before c
// (no_loss_to). Round q is the q-th instance of every such timer: member c's instance of round
// q is released at ρ_q + δ_c (ρ_q = E + q·T + min offset, δ_c = offset_c − min offset), starts c
// no earlier than ρ_q + B_c (B_c = δ_c + Σ BCET strictly between the timer and c) and completes
// it by ρ_q + R_c (R_c: the bound of the round's path to c from ρ_q, the timer's release jitter
// J_c included). If
//     max_c R_c − min_c B_c < T                                                        (P)
// then every round's arrivals at the node happen after the previous round's and before the
// next round's, each member exactly once; by induction over q (round 0 finds every member
// stale: nothing was cached before the start), the first arrival of round q finds every
// member stale, each later one caches, and the last one finds all others fresh and publishes
// round q's instances — whichever semantics of the cache (overwritten at a member's completion,
// as the simulator does, or at its start, as the benchmark's Fusion node does: both happen
// inside [ρ_q + B_c, ρ_q + R_c]). So no instance is lost or paired across rounds, and the
// fused publication of round q is the completion of its last member.
// (Round task) Round q is then one instance of a branching task released at ρ_q: the prefixes
// of all members (member c's delayed by δ_c + J_c, a release delay before its first callback)
// joining at the node, then the suffixes of all chains k_c after it — analysed as any branching
// chain: on one executor to its completion (the release delays are suspension: an instant at
// which no callback of the round is eligible waits for a hop or a later release, at most
// Σ hop costs + max_c (δ_c + J_c)), across executors by its root-to-leaf paths (the causal path
// to a chain's last callback passes the member that arrived last, and that path ran as a linear
// chain: Task::paths). Chain k's response (from its own release ρ_q + δ_k) is at most the
// bound of its paths minus δ_k. Its window for the others is [ρ_q, ρ_q + R_round], the round's
// work being every callback the chains' instances run.
// (P) uses bounds the same fixed point computes; the usual argument (the first instant at which
// any bound or (P) would fail, everything before it held) closes the circle. Where (P) fails at
// the fixed point, or the round has no bound within T, the analysis is run again without this
// round (GlobalAnalysis::run): the chains get the generic join term (J1/J2 above), which holds
// for every phase. Deviations: none of the papers models fusion nodes; the pairing argument is
// the offset-based analysis of transactions (Tindell 1994; Palencia & González Harbour 1998:
// tasks released at known offsets of one period, analysed as one transaction) applied to
// ROS 2 fusion nodes, whose input rounds must pair — hence (P), which those analyses do not
// need. Timers on ROS time, free or observed phases, several hosts (one CLOCK_MONOTONIC per
// host), LaME best-effort threads and ros-default-st (linear chains only) keep the generic term.

namespace {

// The chains that wait at fusion set `set` and can form its round (pairing conditions above),
// or empty with `why`.
std::vector<int> round_chains(const Model& m, const View& v, const std::vector<std::size_t>& set, std::string* why) {
  std::vector<int> chains;
  for (std::size_t k = 0; k < v.tasks.size(); ++k) {
    const Task& t = v.tasks[k];
    if (t.join && t.absorbed_by < 0 && t.reported &&
        std::find(set.begin(), set.end(), static_cast<std::size_t>(t.join->member)) != set.end())
      chains.push_back(static_cast<int>(k));
  }
  if (chains.empty()) return {};
  Duration T = -1;
  std::optional<ExactPeriod> grid;  // the sources' release grid period: one for all
  int host = -1;
  for (int k : chains) {
    const Task& t = v.tasks[k];
    const Callback& src = m.callbacks[static_cast<std::size_t>(t.path.front())];
    const int h = v.host_of[v.cbs[t.path.front()].executor];
    if (!t.join->own_source_ok || src.phase != TimerPhase::Guaranteed || (T >= 0 && src.period != T) ||
        (grid && src.grid_period() != *grid) ||
        (host >= 0 && h != host) || !t.edf_unkeyed.empty()) {
      *why = "not every input comes from a timer with a guaranteed phase of one period on one host";
      return {};
    }
    T = src.period;
    grid = src.grid_period();
    host = h;
    for (int c : t.work) {
      const std::uint64_t mask = v.cbs[c].threads;
      for (std::size_t th = 0; th < v.thread_be[v.cbs[c].executor].size() && th < 64; ++th)
        if ((mask >> th & 1) && v.thread_be[v.cbs[c].executor][th]) {
          *why = "some of its work may run on LaME best-effort threads";
          return {};
        }
    }
  }
  for (std::size_t c : set)
    if (std::none_of(chains.begin(), chains.end(), [&](int k) { return v.tasks[k].join->member == static_cast<int>(c); })) {
      *why = "fusion input '" + m.callbacks[c].name + "' is fed by no declared chain that waits there";
      return {};
    }
  return chains;
}

// The callbacks of chain k's path up to its member (prefix) and after it (suffix).
std::vector<int> prefix_of(const Task& t) {
  std::vector<int> p;
  for (int c : t.path) {
    p.push_back(c);
    if (c == t.join->member) break;
  }
  return p;
}
std::vector<int> suffix_of(const Task& t) {
  auto it = std::find(t.path.begin(), t.path.end(), t.join->member);
  return std::vector<int>(it + 1, t.path.end());
}

// The hop into path[j] (j > 0) on chain `t`'s declared hops or, from a fusion member, the
// largest any member's publication may take (fused_publication_hop).
Duration round_hop(const Model& m, const Task& t, const std::vector<int>& members, int from, int to,
                   const HopCost& cost) {
  if (std::find(members.begin(), members.end(), from) != members.end())
    return fused_publication_hop(m, members, to, cost);
  const Chain& ch = m.chains[static_cast<std::size_t>(t.chain)];
  for (const auto& h : ch.hops)
    if (h.from == m.callbacks[static_cast<std::size_t>(from)].name && h.to == m.callbacks[static_cast<std::size_t>(to)].name)
      return cost(h);
  return placement_hop_cost(m, from, to, cost);
}

// The linear segments of one round path (prefix ++ suffix): its first segment delivered after
// `release` (the member's release delay and jitter), a segment boundary after the member (its
// completion is the fused publication), the chain's hop costs. Returns the index of the segment
// that ends at the member.
int round_path_segments(const Model& m, const View& v, const Task& pre, const Task& suf, const std::vector<int>& members,
                        const std::vector<int>& side, Duration release, const HopCost& cost, std::vector<Segment>& segs) {
  const std::vector<int> p = prefix_of(pre), s = suffix_of(suf);
  for (std::size_t j = 0; j < p.size(); ++j)
    append_path_piece(segs, p[j], j ? round_hop(m, pre, members, p[j - 1], p[j], cost) : 0, side, v);
  segs.front().comm_before = release;
  const int at_member = static_cast<int>(segs.size()) - 1;
  for (std::size_t j = 0; j < s.size(); ++j) {
    const Duration hc = round_hop(m, suf, members, j ? s[j - 1] : p.back(), s[j], cost);
    if (j == 0) {  // a new segment: released by the fused publication
      Segment seg;
      seg.executor = v.cbs[s[0]].executor;
      seg.comm_before = hc;
      seg.path_piece = true;
      seg.side = side;
      seg.after_join = true;
      seg.cbs.push_back(s[0]);
      seg.hop_into.push_back(0);
      segs.push_back(std::move(seg));
    } else {
      append_path_piece(segs, s[j], hc, side, v);
      segs.back().after_join = true;
    }
  }
  return at_member;
}

// The round's work paths (R_work): every trigger path from each member's timer inside the
// round's work, its first segment delayed by that member's release delay and jitter.
void round_work_paths(const Model& m, const View& v, Task& r, const std::vector<int>& timers,
                      const std::vector<Duration>& release, const std::vector<int>& members, const HopCost& cost) {
  const std::set<int> in_work(r.work.begin(), r.work.end());
  for (std::size_t i = 0; i < timers.size(); ++i) {
    const auto paths = trigger_paths(m, in_work, timers[i], &r.work_paths_why);
    if (!paths) {
      r.work_paths.clear();
      return;
    }
    for (const auto& p : *paths) {
      std::vector<int> side;
      for (int c : r.path)
        if (std::find(p.begin(), p.end(), c) == p.end()) side.push_back(c);
      std::vector<Segment> segs;
      for (std::size_t j = 0; j < p.size(); ++j) {
        const bool fused = j > 0 && std::find(members.begin(), members.end(), p[j - 1]) != members.end();
        append_path_piece(segs, p[j],
                          j == 0  ? 0
                          : fused ? fused_publication_hop(m, members, p[j], cost)
                                  : placement_hop_cost(m, p[j - 1], p[j], cost),
                          side, v);
      }
      segs.front().comm_before = release[i];
      r.work_paths.push_back(std::move(segs));
    }
  }
}

}  // namespace

namespace {

// A round's inputs: per member of the fusion set, its callback, the chain whose prefix feeds it,
// and the release delay of that chain's timer after the round's origin (offset − the smallest).
struct RoundInputs {
  std::vector<int> members, feeder;
  std::vector<Duration> delay, release;  // δ_c and δ_c + J_c
  std::vector<int> timers;
  Duration first = 0;                    // the smallest offset: the round's origin on the grid
};

RoundInputs round_inputs(const Model& m, const View& v, const std::vector<std::size_t>& set,
                         const std::vector<int>& chains) {
  RoundInputs in;
  for (std::size_t c : set) {
    in.members.push_back(static_cast<int>(c));
    for (int k : chains)
      if (v.tasks[k].join->member == static_cast<int>(c)) {
        in.feeder.push_back(k);
        break;
      }
  }
  in.first = std::numeric_limits<Duration>::max();
  for (int k : in.feeder) in.first = std::min(in.first, m.callbacks[static_cast<std::size_t>(v.tasks[k].path.front())].offset);
  for (int k : in.feeder) {
    const Callback& src = m.callbacks[static_cast<std::size_t>(v.tasks[k].path.front())];
    in.delay.push_back(src.offset - in.first);
    in.release.push_back(src.offset - in.first + src.jitter);
    in.timers.push_back(v.tasks[k].path.front());
  }
  return in;
}

// The round task's callbacks (the inputs' prefixes, then every chain's part after the join),
// its work (every chain's), members (B_c from ρ), EDF keys (relative to ρ) and grid.
Task round_shell(const Model& m, const View& v, std::size_t si, const std::vector<int>& chains, const RoundInputs& in) {
  Task r;
  Task::Round rd;
  rd.set = static_cast<int>(si);
  rd.node = m.callbacks[static_cast<std::size_t>(in.members.front())].node;
  rd.chains = chains;
  const Task& t0 = v.tasks[chains.front()];
  r.name = "fusion round at '" + rd.node + "'";
  r.T = t0.T;
  r.has_deadline = true;
  r.linear = false;
  r.grid_offset = in.first;  // the round's origin ρ is on the grid of its earliest timer
  r.grid_host = t0.grid_host;
  auto add = [&](int c) {
    if (std::find(r.path.begin(), r.path.end(), c) == r.path.end()) r.path.push_back(c);
  };
  for (int k : in.feeder)
    for (int c : prefix_of(v.tasks[k])) add(c);
  for (int k : chains)
    for (int c : suffix_of(v.tasks[k])) add(c);
  std::set<int> work;
  for (int k : chains) work.insert(v.tasks[k].work.begin(), v.tasks[k].work.end());
  r.work = r.path;
  for (int c : work)
    if (std::find(r.path.begin(), r.path.end(), c) == r.path.end()) r.extras.push_back(c);
  r.work.insert(r.work.end(), r.extras.begin(), r.extras.end());
  for (int c : r.path) r.path_wcet += v.cbs[c].wcet;
  for (std::size_t i = 0; i < in.members.size(); ++i) {
    Task::Round::Member mem;
    mem.callback = in.members[i];
    mem.lower = in.delay[i] + v.tasks[in.feeder[i]].join->bpre;
    rd.members.push_back(mem);
  }
  r.key_lo = std::numeric_limits<Duration>::max();
  r.key_hi = 0;
  // A chain's callbacks after the join take the set's one publication per round (all members
  // publish the same message): no merge with another chain's older messages there.
  auto member = [&](std::size_t c) {
    return std::find(in.members.begin(), in.members.end(), static_cast<int>(c)) != in.members.end();
  };
  for (int k : chains) {
    const Task& t = v.tasks[k];
    const Duration d = m.callbacks[static_cast<std::size_t>(t.path.front())].offset - in.first;
    rd.delay.push_back(d);
    r.key_lo = std::min(r.key_lo, d + t.key_lo);
    r.key_hi = std::max(r.key_hi, d + edf_key_hi(m, t, member, nullptr));
  }
  r.D = r.key_lo;
  rd.one_segment = std::all_of(r.path.begin(), r.path.end(),
                               [&](int c) { return v.cbs[c].executor == v.cbs[r.path.front()].executor; });
  r.round = std::move(rd);
  return r;
}

// The round's paths (input × chain: the input's prefix, then the chain's part after the join)
// or, on one executor, its one segment to its completion (the latest release delay and every
// path's hops as suspension; an edge on several paths is counted on each: safe).
void round_segments(const Model& m, const View& v, const std::vector<int>& chains, const RoundInputs& in,
                    const HopCost& cost, Task& r) {
  Task::Round& rd = *r.round;
  rd.paths_of.assign(chains.size(), {});
  for (std::size_t i = 0; i < in.members.size(); ++i)
    for (std::size_t j = 0; j < chains.size(); ++j) {
      std::vector<int> on = prefix_of(v.tasks[in.feeder[i]]), side;
      for (int c : suffix_of(v.tasks[chains[j]])) on.push_back(c);
      for (int c : r.path)
        if (std::find(on.begin(), on.end(), c) == on.end()) side.push_back(c);
      std::vector<Segment> segs;
      const int at = round_path_segments(m, v, v.tasks[in.feeder[i]], v.tasks[chains[j]], in.members, side,
                                         in.release[i], cost, segs);
      rd.members[i].ends.emplace_back(static_cast<int>(r.paths.size()), at);
      rd.paths_of[j].push_back(static_cast<int>(r.paths.size()));
      r.paths.push_back(std::move(segs));
    }
  if (!rd.one_segment) return;
  Segment seg;
  seg.executor = v.cbs[r.path.front()].executor;
  seg.cbs = r.path;
  seg.intra_comm = *std::max_element(in.release.begin(), in.release.end());
  for (Duration d : in.release) seg.delayed_hops += d > 0 ? 1 : 0;  // a later release: a delay
  for (const auto& p : r.paths)
    for (std::size_t s = 0; s < p.size(); ++s) {
      seg.intra_comm += (s ? p[s].comm_before : 0) + p[s].intra_comm;
      seg.delayed_hops += (s && p[s].comm_before > 0 ? 1 : 0) + p[s].delayed_hops;
    }
  r.segments.push_back(std::move(seg));
  r.paths.clear();
}

}  // namespace

void fusion_rounds(const Model& m, View& v, const HopCost& cost, const std::vector<int>& disabled) {
  const auto sets = implicit_fusion_sets(m);
  for (std::size_t si = 0; si < sets.size(); ++si) {
    if (std::find(disabled.begin(), disabled.end(), static_cast<int>(si)) != disabled.end()) continue;
    std::string why;
    const std::vector<int> chains = round_chains(m, v, sets[si], &why);
    if (chains.empty()) continue;
    const RoundInputs in = round_inputs(m, v, sets[si], chains);
    Task r = round_shell(m, v, si, chains, in);
    round_segments(m, v, chains, in, cost, r);
    r.width = static_cast<int>(in.members.size() * chains.size() + r.extras.size());
    if (!r.extras.empty()) round_work_paths(m, v, r, in.timers, in.release, in.members, cost);
    const int ri = static_cast<int>(v.tasks.size());
    for (int k : chains) {  // their work is the round's now
      Task& t = v.tasks[k];
      t.absorbed_by = ri;
      t.work.clear();
      t.extras.clear();
      t.work_paths.clear();
      t.join_work_before.clear();
      t.join_work_after.clear();
    }
    v.tasks.push_back(std::move(r));
  }
}

}  // namespace chainrt::detail
