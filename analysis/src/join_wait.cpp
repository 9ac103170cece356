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

// Eq. J1: the next instance of the chain overwrites J's cached input.
Duration join_own_overwrite(Duration T, Duration Rpre) { return T + Rpre; }

// Eq. J2, one other input: its next arrival at the fusion node after J's.
Duration join_other_arrival(Duration T_other, Duration Rpre_other, Duration Bpre_other) {
  return T_other + Rpre_other - Bpre_other;
}

// Eq. G: least time between two completions of a member fed by a chain of period T.
Duration member_gap(Duration T, Duration Rpre, Duration Bpre) { return T - (Rpre - Bpre); }

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
  for (const auto& t : v.tasks) any = any || t.join.has_value();
  if (!any) return v;
  View w = v;
  const Model& m = *v.model;
  for (std::size_t k = 0; k < v.tasks.size(); ++k) {
    const Task& t = v.tasks[k];
    if (!t.join) continue;
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

}  // namespace chainrt::detail
