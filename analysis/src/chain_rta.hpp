// The chain response-time engine shared by edf-mt, fp-mt and picas-st (private to analysis/),
// and the holistic driver that composes per-executor segment bounds end to end and iterates
// the response bounds of all chains to a fixed point. See chain_rta.cpp for the derivation.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "fixed_point.hpp"
#include "workload.hpp"

namespace chainrt::detail {

enum class Order {
  Edf,            // readyQueue ordered by the chain instance's absolute deadline (EDF paper)
  FixedPriority,  // readyQueue ordered by callback priority (PiCAS / LaME RT threads / fp)
};

constexpr Duration kUnbounded = -1;

// Bound of one segment of task k (from the arrival of its first callback's activation to the
// completion of its last callback), given the current bounds R of all tasks (kUnbounded where
// none). nullopt when the bound would exceed `limit`.
// `offset` is an upper bound on the segment's arrival after the chain's nominal release.
using SegmentBound = std::function<std::optional<Duration>(const View& v, int k, const Segment& seg,
                                                           const std::vector<Duration>& R, Duration offset,
                                                           Duration limit)>;

// Limited-preemptive global scheduling of chains on the threads that may run the segment
// (chain_rta.cpp). `order` decides which other work can interfere after the segment's
// callbacks became eligible and which can only block them (non-preemptively, once per
// eligibility event).
std::optional<Duration> global_segment_bound(const View& v, Order order, int k, const Segment& seg,
                                             const std::vector<Duration>& R, Duration limit);

// ros-default-st's segment bound (casini.cpp), single-threaded executors only.
std::optional<Duration> casini_segment_bound(const View& v, int k, const Segment& seg, const std::vector<Duration>& R,
                                             Duration offset, Duration limit);

struct HolisticOptions {
  std::string analysis;
  // Task k's bound is valid only if the bounds of tasks sharing an executor with it are
  // <= their deadlines (EDF: carry-in of a job is limited by its deadline) instead of
  // <= their periods.
  bool require_deadlines_met = false;
  int max_rounds = kMaxHolisticRounds;
  // Only the verdict is wanted (batch experiments): bounds stop at the deadline and the first
  // reported chain without one ends the analysis (schedulable = false, chains left empty).
  bool verdict_only = false;
  // Other chains' work is seen in the window [r, r + R_work] (Task::work_paths: when all of an
  // instance's work, fan-out included, is done) instead of [r, r + R] (its path's end). The
  // segment bounds then receive R_work.
  bool work_windows = false;
};

// Fixed point over all tasks: R_k = src_jitter + Σ_segments (comm_before + segment bound).
// Unbounded tasks make every task that shares an executor with them (transitively) unbounded.
// `skip(k, why)` lets an analysis leave a task out with a reason (it becomes unbounded).
AnalysisResult holistic(const View& v, const SegmentBound& seg, const HolisticOptions& opt,
                        const std::function<bool(int k, std::string* why)>& skip = {});

}  // namespace chainrt::detail
