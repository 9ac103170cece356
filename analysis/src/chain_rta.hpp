// The chain response-time engine shared by edf-mt, fp-mt and picas-st (private to analysis/),
// and the holistic driver that composes per-executor segment bounds end to end and iterates
// the response bounds of all chains to a fixed point. See chain_rta.cpp for the derivation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "fixed_point.hpp"
#include "workload.hpp"

namespace chainrt::detail {

enum class Order {
  Edf,            // readyQueue ordered by the chain instance's absolute deadline (EDF paper)
  FixedPriority,  // readyQueue ordered by callback priority (PiCAS / LaME RT threads / fp)
};


// What the segment bounds see of every task in a round of the holistic driver: when the work of
// one of its instances (release r) is done. Not thread-safe to share while the driver writes it.
struct Windows {
  // Task i's bound: the callbacks of its path run within [r, r + R[i]] (kUnbounded: none).
  std::vector<Duration> R;
  // R_work (HolisticOptions::work_windows), per callback: end[i] holds (c, e) for every callback
  // c of task i's instance work (tasks[i].work, the model's callback index), sorted by c, where e
  // bounds when c has completed after the release; kUnbounded where it has no bound
  // (lowest-priority fan-out, say). Empty without work windows: then all of task i's work counts
  // within [r, r + R[i]]. Only the work's callbacks are stored: a row over every callback of the
  // model per task grows with chains x callbacks (gigabytes at 10,000 callbacks).
  std::vector<std::vector<std::pair<int, Duration>>> end;
  // The largest finite end of task i's work seen in any round (never shrinks, so the driver's
  // iteration stays monotone when an end turns unbounded).
  std::vector<Duration> finite;
  // How many ends of task i's work are kUnbounded (an end never comes back from kUnbounded): 0
  // spares the look-ups of the segment bounds, which ask about every task.
  std::vector<int> unbounded;

  // The end of callback c of task i's work (O(log |work|)); 0 for a callback outside it, which
  // no round raises.
  Duration end_of(std::size_t i, int c) const {
    if (end.empty()) return R[i];
    const Duration* e = slot(i, c);
    return e ? *e : 0;
  }
  // Where end_of(i, c) is stored; nullptr for a callback outside task i's work.
  Duration* slot(std::size_t i, int c) {
    return const_cast<Duration*>(static_cast<const Windows*>(this)->slot(i, c));
  }
  const Duration* slot(std::size_t i, int c) const {
    const auto& row = end[i];
    auto it = std::lower_bound(row.begin(), row.end(), c, [](const auto& p, int x) { return p.first < x; });
    return it != row.end() && it->first == c ? &it->second : nullptr;
  }
  // The window of task i's work that has an end bound (R[i] without work windows).
  Duration inside(std::size_t i) const { return end.empty() ? R[i] : finite[i]; }
  // The window [r, r + window] of task i's callbacks that have an end bound ("inside"): R[i]
  // without work windows. The others ("tail", end kUnbounded) can only block the work that
  // `counts` does not select; kUnbounded when a callback `counts` selects has no end bound.
  template <class Counts>
  Duration window(const std::vector<int>& work, std::size_t i, Counts counts) const {
    if (!end.empty() && unbounded[i] == 0) return inside(i);
    for (int c : work)
      if (end_of(i, c) == kUnbounded && counts(c)) return kUnbounded;
    return inside(i);
  }
  // Whether some callback of task i's work may have no end bound.
  bool any_unbounded(std::size_t i) const { return end.empty() ? R[i] == kUnbounded : unbounded[i] > 0; }
};

// Bound of one segment of task k (from the arrival of its first callback's activation to the
// completion of its last callback), given the current windows W of all tasks. nullopt when the
// bound would exceed `limit`.
// `offset` is an upper bound on the segment's arrival after the chain's nominal release.
using SegmentBound = std::function<std::optional<Duration>(const View& v, int k, const Segment& seg,
                                                           const Windows& W, Duration offset, Duration limit)>;

// The end, after the release, of `segs` run one after the other from `start`: each segment
// delivered (its comm_before), then bounded by segfn within limit(the time it starts). Writes
// each segment's end to `seg_ends` (when given) up to the first segment without a bound, whose
// index it returns in `failed` (when given; `to` when every segment has one). Segments [from, to)
// of `segs`; seg_ends[0] is segment `from`'s.
std::optional<Duration> segments_end(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                                     const std::vector<Segment>& segs, std::size_t from, std::size_t to,
                                     Duration start, const std::function<Duration(Duration)>& limit,
                                     Duration* seg_ends = nullptr, std::size_t* failed = nullptr);

// Limited-preemptive global scheduling of chains on the threads that may run the segment
// (chain_rta.cpp); `arrival`: the segment's latest arrival after the chain's release. `order` decides which other work can interfere after the segment's
// callbacks became eligible and which can only block them (non-preemptively, once per
// eligibility event).
std::optional<Duration> global_segment_bound(const View& v, Order order, int k, const Segment& seg,
                                             const Windows& W, Duration arrival, Duration limit);

// ros-default-st's segment bound (casini.cpp), single-threaded executors only.
std::optional<Duration> casini_segment_bound(const View& v, int k, const Segment& seg, const Windows& W,
                                             Duration offset, Duration limit);

// R_work per callback (Windows::end): task k's work paths `paths`, each run from `start` within
// `limit`; the end of each of their callbacks is raised into `cb_end` (indexed by the model's
// callback index), kUnbounded from the first segment without a bound (or one `refuse` rejects) on.
void work_path_ends(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                    const std::vector<std::vector<Segment>>& paths, Duration start,
                    const std::function<Duration(Duration)>& limit, const std::function<bool(const Segment&)>& refuse,
                    std::vector<Duration>& cb_end);

struct HolisticOptions {
  std::string analysis;
  // Task k's bound is valid only if the bounds of tasks sharing an executor with it are
  // <= their deadlines (EDF: carry-in of a job is limited by its deadline) instead of
  // <= their periods.
  bool require_deadlines_met = false;
  int max_rounds = kMaxHolisticRounds;
  // The most work of one analysis, in comparisons of a task with a task that shares an executor
  // with it (each round makes them all: the work grows with the square of the chains on one
  // executor). Beyond it every chain is reported without a bound, saying why, instead of the
  // analysis running for minutes (kMaxHolisticPairs).
  std::uint64_t max_pairs = kMaxHolisticPairs;
  // Only the verdict is wanted (batch experiments): bounds stop at the deadline and the first
  // reported chain without one ends the analysis (schedulable = false, chains left empty).
  bool verdict_only = false;
  // Other chains' work is seen per callback (Windows::end, Task::work_paths: when each callback
  // of an instance's work, fan-out included, is done) instead of in [r, r + R] (its path's end).
  bool work_windows = false;
  // Receives the fusion sets (Task::Round::set) whose round has no bound or whose pairing
  // condition failed at the fixed point: the analysis must be run again without them.
  std::vector<int>* failed_rounds = nullptr;
};

// Fixed point over all tasks: R_k = src_jitter + Σ_segments (comm_before + segment bound).
// Unbounded tasks make every task that shares an executor with them (transitively) unbounded.
// `skip(k, why)` lets an analysis leave a task out with a reason (it becomes unbounded).
AnalysisResult holistic(const View& v, const SegmentBound& seg, const HolisticOptions& opt,
                        const std::function<bool(int k, std::string* why)>& skip = {});

}  // namespace chainrt::detail
