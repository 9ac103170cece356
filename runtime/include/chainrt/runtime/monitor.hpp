// chainrt runtime: run-time monitoring. Per callback: instances, CPU time (thread CPU clock),
// start/finish of each instance (the dispatch trace); per chain: end-to-end response time of
// each instance (finish of its last callback minus the release of its first, EDF ready-queue
// paper Sec. IV-B a_i^k), deadline misses and dropped inputs (inputs overwritten in a full
// subscription queue, timer releases skipped by the overrun rule).
// Storage is preallocated; recording never allocates (the sample ring overwrites its oldest
// entry when full and the aggregates stay exact).
#pragma once

#include "chainrt/sched/timer.hpp"

#include <array>
#include <cstdint>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::runtime {

// One dispatched callback instance.
struct DispatchRecord {
  sched::CallbackId callback = sched::kNoCallback;
  sched::ThreadId thread = 0;
  Duration start = 0;      // CLOCK_MONOTONIC ns
  Duration finish = 0;
  Duration cpu = 0;        // thread CPU time used
  Duration deadline = 0;   // absolute deadline it was queued with (kNoDeadline: none)
  Duration release = 0;    // release of its chain instance (0: none)
  // The dispatching thread's late wake-up just before this dispatch (threads.hpp, LateWake):
  // it slept until `slept_until` and ran again only at `woke`; both 0 when it woke in time, was
  // not asleep, or has no real-time class. The accounting takes it as a platform blackout.
  Duration slept_until = 0;
  Duration woke = 0;
};

struct CallbackStats {
  // (the figures every dispatch updates first, in as few cache lines as they fit)
  std::uint64_t instances = 0;
  std::uint64_t exceptions = 0;
  std::uint64_t drops = 0;        // subscription: overwritten inputs; timer: skipped releases
  Duration cpu_total = 0;
  Duration cpu_max = 0;
  Duration cpu_min = 0;           // smallest instance (0 before the first)
  Duration wall_total = 0;
  Duration wall_max = 0;          // finish - start
  Duration wall_min = 0;
  // Timers on the release grid (sched::ReleaseGrid): the release jitter measured against the
  // grid — (made ready) − (grid instant), over the releases an idle executor thread took — and
  // the grid index of the first release (> 0: its executor armed late, after epoch + offset).
  sched::ReleaseJitter release_jitter;
  std::int64_t grid_start_index = -1;  // -1: not a timer on the grid
  std::string name;
  std::string node, kind, topic;  // where it lives (fully qualified node, kind, topic); for
                                  // tools that match callbacks by place (chainrt profile)
};

// The largest thread-CPU times of one callback's instances in a measurement window (what a
// controller estimates execution times from; LaME). record() keeps the kCpuWindowTop largest
// with a few compares and no allocation.
inline constexpr int kCpuWindowTop = 4;
struct CpuWindow {
  std::array<Duration, kCpuWindowTop> largest{};  // descending; 0: fewer instances ran
  std::uint64_t count = 0;                        // instances in the window
  void record(Duration cpu) noexcept {
    ++count;
    for (auto& t : largest)
      if (cpu > t) std::swap(cpu, t);
  }
};

// Latency statistics of one chain (the simulator's JSON keys).
struct ChainStats {
  std::string name;
  Duration period_ns = 0;
  Duration deadline_ns = 0;
  Duration wcrt_ns = 0;
  Duration bcrt_ns = 0;
  double mean_ns = 0;
  Duration p99_ns = 0;
  std::uint64_t instances = 0;
  std::uint64_t deadline_misses = 0;
  std::uint64_t drops = 0;
  std::vector<Duration> samples;  // the retained response times (most recent, bounded)
};

// Fixed-capacity recorder of response times for one chain.
class LatencyRecorder {
 public:
  void reserve(std::size_t capacity) { ring_.assign(capacity == 0 ? 1 : capacity, 0); }
  void record(Duration r, Duration deadline) noexcept {
    ring_[count_ % ring_.size()] = r;
    ++count_;
    sum_ += static_cast<double>(r);
    if (count_ == 1 || r > max_) max_ = r;
    if (count_ == 1 || r < min_) min_ = r;
    if (deadline > 0 && r > deadline) ++misses_;
  }
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t misses() const noexcept { return misses_; }  // responses later than their deadline
  std::size_t capacity() const noexcept { return ring_.size(); }
  // Fill the statistics fields of `out` (p99 over the retained samples, nearest rank).
  void summarize(ChainStats& out, std::size_t max_samples = SIZE_MAX) const;

 private:
  std::vector<Duration> ring_{0};
  std::uint64_t count_ = 0, misses_ = 0;
  double sum_ = 0;
  Duration max_ = 0, min_ = 0;
};

// p-quantile (0..1) by nearest rank of `v` (copied and sorted).
Duration quantile(std::vector<Duration> v, double p);

struct RunReport {
  std::string policy;
  std::size_t threads = 0;
  Duration duration_ns = 0;
  std::vector<ChainStats> chains;
  std::vector<CallbackStats> callbacks;
  std::vector<std::string> warnings;
  std::uint64_t dispatches = 0;
  std::string run_id;      // the run this report belongs to (monitoring messages; may be empty)
  std::string executor;    // the executor that wrote it (monitoring messages; may be empty)
};

// JSON of a report: {"policy", "threads", "duration_ns", "dispatches", "chains": {NAME: {...}},
// "callbacks": {NAME: {...}}, "warnings": [...]}; with_samples adds "samples_ns" per chain.
std::string to_json(const RunReport& r, bool with_samples = false);
std::string json_escape(const std::string& s);

// One finished instance of a callback into its figures (instances, CPU and wall times, the
// controller's CPU window). No allocation; the caller's lock.
inline void record_instance(CallbackStats& cs, CpuWindow& window, Duration cpu, Duration wall,
                            bool threw) noexcept {
  ++cs.instances;
  if (threw) ++cs.exceptions;
  cs.cpu_total += cpu;
  cs.cpu_max = cs.instances == 1 ? cpu : (cpu > cs.cpu_max ? cpu : cs.cpu_max);
  cs.cpu_min = cs.instances == 1 ? cpu : (cpu < cs.cpu_min ? cpu : cs.cpu_min);
  window.record(cpu);
  cs.wall_total += wall;
  cs.wall_max = cs.instances == 1 ? wall : (wall > cs.wall_max ? wall : cs.wall_max);
  cs.wall_min = cs.instances == 1 ? wall : (wall < cs.wall_min ? wall : cs.wall_min);
}

// The dispatch trace of an executor: a fixed ring of the latest records. push() never
// allocates; the rest allocates (off the dispatch path). Not thread-safe (the owner's lock).
class TraceRing {
 public:
  void reserve(std::size_t capacity) { ring_.assign(capacity == 0 ? 1 : capacity, DispatchRecord{}); }
  void push(const DispatchRecord& r) noexcept {
    ring_[count_ % ring_.size()] = r;
    ++count_;
  }
  std::uint64_t count() const noexcept { return count_; }
  std::vector<DispatchRecord> snapshot() const;  // what the ring holds, oldest first
  // The records pushed since `published` (a count() taken earlier), oldest first, that started
  // at or after `from`, appended to `out`; `published` becomes count(). Returns how many of them
  // the ring overwrote before they could be taken.
  std::uint64_t take_since(std::uint64_t& published, Duration from, std::vector<DispatchRecord>& out) const;

 private:
  std::vector<DispatchRecord> ring_{DispatchRecord{}};
  std::uint64_t count_ = 0;
};

}  // namespace chainrt::runtime
