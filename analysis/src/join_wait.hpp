// The join wait at an implicit fusion set (private to analysis/): a chain that passes ONE input
// of a fusion node (model/facts.hpp, implicit_fusion_sets) waits there until every other input
// has arrived; this module bounds that wait and composes it with the segment bounds of the
// holistic driver (chain_rta.hpp), for every analysis that uses the driver (fp-mt, edf-mt,
// picas-st, ros-default-st). cros-rt's whole-chain recurrence does not charge it (such chains
// keep the refusal). Derivation: join_wait.cpp and docs/analysis.md, "Chains that wait at a
// fusion node".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chain_rta.hpp"
#include "workload.hpp"

namespace chainrt::detail {

// ---- the terms (join_wait.cpp has the derivation; tests/cpp/analysis/test_terms.cpp) ----

// Eq. J1: the next instance of the chain overwrites J's cached input: P − r <= T + Rpre.
inline Duration join_own_overwrite(Duration T, Duration Rpre) { return T + Rpre; }

// Eq. J2, one other input: its next arrival at the fusion node after J's, relative to J's
// arrival: T' + R'pre − B'pre.
inline Duration join_other_arrival(Duration T_other, Duration Rpre_other, Duration Bpre_other) {
  return T_other + Rpre_other - Bpre_other;
}

// Eq. G: least time between two completions of a member fed by a chain of period T.
inline Duration member_gap(Duration T, Duration Rpre, Duration Bpre) { return T - (Rpre - Bpre); }

// Eq. P (fusion rounds): the rounds pair when the members' arrivals of one round, from the
// latest bound max_c R_c to the earliest start min_c B_c (both from the round's origin), span
// less than the period.
inline bool rounds_pair(Duration latest_arrival, Duration earliest_start, Duration T) {
  return latest_arrival - earliest_start < T;
}

// A chain of a fusion round: its response bound from its own release, δ after the round's
// origin, given the bound of its paths from the origin.
inline Duration round_chain_bound(Duration path_bound, Duration delay) { return path_bound - delay; }

// After build_view's tasks exist: for every chain with a join wait, its JoinTerm (or
// join_refused), its segments split after its fusion input (the part after the join is
// released by the fusion's publication), the hop into that part charged at the largest cost
// any member's publication may take, and its width raised to one per callback (a later
// instance's prefix may run while the suffix runs). Allocates; not for hot paths.
void resolve_joins(const Model& m, View& v, const HopCost& cost);

// Fusion rounds (Task::Round; derivation in join_wait.cpp, "Guaranteed phases"): for every
// implicit fusion set not in `disabled` whose every member is fed by a declared chain that waits
// there (Task::join), each from a timer with a guaranteed phase, all of one period on one host,
// with no instance lost before the member and no LaME best-effort thread: a round task
// appended to the view that stands for all those chains (they are marked absorbed_by and lose
// their work). Call after build_view. Allocates; not for hot paths.
void fusion_rounds(const Model& m, View& v, const HopCost& cost, const std::vector<int>& disabled);

// The view the holistic driver iterates: `v` itself, or a copy with one pseudo-task per
// joining chain (shadow_of = the chain): the chain's prefix up to its fusion input (its work
// lies in [r, r + Rpre]), while the chain's `work` keeps the rest (in [r, r + R]) — other
// chains see the two apart. Its bound is the chain's prefix bound (set by the driver, never
// analysed itself). The chain's own segments before the join do not count it (earlier
// instances are through the prefix by then); those after the join do (later instances' prefix
// may run meanwhile).
View with_join_shadows(const View& v);

// The hop from a fusion set's publication into callback `to`: the publication may come from
// any member, so the largest cost a member's message may take (the simulator's rule: a chain's
// declared hop, else the placement's kind and the topic's size).
Duration fused_publication_hop(const Model& m, const std::vector<int>& members, int to, const HopCost& cost);

// Bound of joining task k (chain release → end), given the current bounds R and the prefix
// ends `ends[i][s]` (bound from task i's nominal release to the end of its segment s) of every
// task: the segments before the join, the join term (Eq. J1/J2 in join_wait.cpp), the
// segments after it. Writes k's own ends. nullopt with `why` when there is none. `deadline`
// (> 0) caps the whole bound (EDF drivers that need deadlines met).
// `join_at` (optional) receives the join term: the latest fused publication after the release.
std::optional<Duration> join_chain_bound(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                                         std::vector<std::vector<Duration>>& ends, Duration deadline, std::string* why,
                                         Duration* join_at = nullptr);

// R_work of joining task k (HolisticOptions::work_windows), per callback: the ends of its
// fan-out — the work paths that leave the chain before its fusion input (from the release, each
// within the period, as the chain's prefix) and those through it from the fused publication, at
// most `join_at` after the release (single-threaded segments within the period each, as the
// chain's own segments after the join) — raised into `cb_end` (kUnbounded where a path has no
// bound from some segment on).
void join_work_ends(const View& v, int k, const SegmentBound& segfn, const Windows& W, Duration join_at,
                    std::vector<Duration>& cb_end);

}  // namespace chainrt::detail
