// chainrt runtime: the monitor of one executor's chain instances and dispatches, shared by the
// runtime's executor (executor.hpp), the rclcpp ChainExecutor (chainrt/rclcpp) and the rclpy
// ChainExecutor (python/bindings/rclpy). Instance k of chain i is released with its first
// callback at a_i^k and carries the absolute deadline d_i^k = a_i^k + D_i from callback to
// callback (EDF ready-queue paper Sec. IV-B); when it completes is sched::ChainCompletion's one
// rule (sched/chain_completion.hpp).
//  - ChainTrack: what the monitor keeps per chain (response times, misses);
//  - ChainMonitor: the executors' one hook at the end of a dispatch (finished(): the callback's
//    figures, the dispatch trace, the chain instances it completes) and the chains' report;
//  - StampRing: chain instances waiting at a callback whose input comes from a chain
//    predecessor in the same executor (unmodified nodes' messages carry no stamp; the executor
//    hands the instance over itself when the predecessor starts, see ChainExecutor).
// Contract: storage is sized by ChainMonitor::init() and StampRing::reserve() (allocate);
// ChainMonitor::finished(), StampRing::push, pop and cap never allocate, never throw and never
// block; not thread-safe (the executor's ready-queue lock).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chainrt/runtime/monitor.hpp"
#include "chainrt/sched/chain_completion.hpp"

namespace chainrt::runtime {

struct ChainTrack {
  std::string name;
  Duration period = 0;
  Duration deadline = 0;                         // D_i (0: none)
  std::vector<sched::CallbackId> members;        // its callbacks in this executor (their drops)
  LatencyRecorder latency;                       // response times and misses
};

class ChainMonitor {
 public:
  // The chains (ChainTrack i is chain i of `completion`), `samples` response times kept per
  // chain. Allocates.
  void init(std::vector<ChainTrack> chains, sched::ChainCompletion completion, std::size_t samples) {
    chains_ = std::move(chains);
    for (auto& c : chains_) c.latency.reserve(samples);
    completion_ = std::move(completion);
  }
  // `records` dispatch records kept (a ring). Allocates.
  void reserve_trace(std::size_t records) { trace_.reserve(records); }

  // HOT, the executor's lock held: one callback instance has finished (`rec`: what ran where,
  // when, its CPU time, its queued deadline; `threw`: it raised). Records the callback's
  // figures (record_instance), the dispatch trace, and, when the callback ends chains
  // (`leaf`: its number in the completion's numbering, kNoCallback: none), every chain
  // instance of `stamp` it completes: response time, miss, then on_chain(c, response, missed)
  // (the executor's own hooks: tracing, LaME). Instances released before record_from() are not
  // measured. No allocation, no exception, no blocking. O(chains ending at leaf × leaves).
  template <class OnChain>
  void finished(CallbackStats& stats, CpuWindow& window, const DispatchRecord& rec, bool threw,
                sched::CallbackId leaf, const sched::Stamp& stamp, OnChain&& on_chain) noexcept {
    record_instance(stats, window, rec.cpu, rec.finish - rec.start, threw);
    trace_.push(rec);
    completion_.complete(leaf, stamp, rec.finish, record_from_, [&](std::uint32_t c, Duration response, bool missed) {
      ChainTrack& ch = chains_[c];
      ch.latency.record(response, ch.deadline);
      on_chain(c, response, missed);
    });
  }

  // Chain instances released before `t` are not measured (the warm-up). Not on the dispatch
  // path; the lock held.
  void record_from(Duration t) noexcept { record_from_ = t; }
  Duration record_from() const noexcept { return record_from_; }
  // The same, dropping what the chains recorded so far (callback figures and the trace stay).
  // Allocates; the lock held.
  void restart_from(Duration t) {
    record_from_ = t;
    for (auto& c : chains_) {
      const std::size_t capacity = c.latency.capacity();
      c.latency = LatencyRecorder{};
      c.latency.reserve(capacity);
    }
  }

  const std::vector<ChainTrack>& chains() const noexcept { return chains_; }
  const sched::ChainCompletion& completion() const noexcept { return completion_; }
  const TraceRing& trace() const noexcept { return trace_; }
  std::uint64_t dispatches() const noexcept { return trace_.count(); }
  // The chains' statistics for a report: per chain its response times (at most max_samples
  // kept) and the drops of its members (drops_of(member) → count). Allocates; the lock held.
  template <class DropsOf>
  void report(std::vector<ChainStats>& out, std::size_t max_samples, DropsOf&& drops_of) const {
    for (const ChainTrack& ch : chains_) {
      ChainStats st;
      st.name = ch.name;
      st.period_ns = ch.period;
      st.deadline_ns = ch.deadline;
      ch.latency.summarize(st, max_samples);
      for (sched::CallbackId id : ch.members) st.drops += drops_of(id);
      out.push_back(std::move(st));
    }
  }

 private:
  std::vector<ChainTrack> chains_;
  sched::ChainCompletion completion_;
  TraceRing trace_;
  Duration record_from_ = 0;
};

// Fixed-capacity FIFO of chain instances waiting at one callback (the oldest is lost when full).
class StampRing {
 public:
  void reserve(std::size_t n) {
    ring_.assign(n == 0 ? 1 : n, sched::Stamp{});
    cap_ = ring_.size();
  }
  // At most `n` (1 .. the reserved size) kept from now on, the oldest dropped: the callback's
  // keep-last queue holds no more messages, so older instances are of messages it lost.
  void cap(std::size_t n) noexcept {
    cap_ = n == 0 ? 1 : n < ring_.size() ? n : ring_.size();
    while (size_ > cap_) pop();
  }
  void push(const sched::Stamp& s) noexcept {
    if (size_ == cap_) pop();
    ring_[(head_ + size_) % ring_.size()] = s;
    ++size_;
  }
  bool empty() const noexcept { return size_ == 0; }
  const sched::Stamp& front() const noexcept { return ring_[head_]; }
  void pop() noexcept {
    if (size_) {
      head_ = (head_ + 1) % ring_.size();
      --size_;
    }
  }
  void clear() noexcept { head_ = size_ = 0; }

 private:
  std::vector<sched::Stamp> ring_{sched::Stamp{}};
  std::size_t head_ = 0, size_ = 0, cap_ = 1;
};

}  // namespace chainrt::runtime
