// chainrt sched: the admission rule — WHEN ready work enters an executor's ReadyQueue. One rule
// per executor, owned by its sched::Dispatcher (dispatcher.hpp), which every backend (the
// simulator, the runtime, the rclcpp and rclpy executors) shares, so that all run a model the
// same way; the ReadyQueue decides the ORDER, this decides what it can see.
//
// The rules:
//  - Immediate (readyQueue executors: every policy but ros-default, lame without best-effort threads;
//    EDF ready-queue paper Def. 1: "always updated before any executor thread selects"): a
//    release enters the queue at once.
//  - PollingPoint (ros-default; EDF paper Sec. II, Casini et al. ECRTS 2019 "polling points"):
//    released work waits; only when a thread finds nothing eligible in the readySet is there a
//    polling point: the readySet is cleared and refilled with one instance of every waiting
//    callback whose group can be taken at that instant (a callback of a running mutually
//    exclusive group waits for the next polling point — the multi-threaded executor's
//    clearing, Case Study 2). With one thread this is rclcpp's SingleThreadedExecutor: wait,
//    run everything the wait returned (timers first), wait again.
//  - LameBestEffort (lame with best-effort thread classes; LaME Sec. 4.1): releases wait until
//    a refresh; a real-time thread refreshes before every selection, a best-effort thread only
//    when the queue is empty (it runs what it saw, "first eligible", before looking again).
//
// Interface to the caller's state (`Src`, a template argument so that nothing is virtual):
//   bool ready(CallbackId) const      — the callback still has work (a pending timer release,
//                                       an input message, a complete fusion set)
//   Duration deadline(CallbackId) const — the absolute deadline of that work (kNoDeadline: none)
//
// Contract: not thread-safe (the caller's ReadyQueue lock covers both). Every storage is
// allocated in the constructor; released(), next(), admit_all() never allocate and never throw.
// released() is O(log n); a polling point / refresh is O(q log n) over the callbacks it moves.
#pragma once

#include <cstdint>
#include <vector>

#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::sched {

enum class AdmissionRule : std::uint8_t { Immediate, PollingPoint, LameBestEffort };

const char* to_string(AdmissionRule r) noexcept;

// The rule of an executor: its policy's descriptor's (sched/policy.hpp: PollingPoint for
// ros-default), LameBestEffort only when one of its threads is best-effort
// (`rt_thread[t] == false`), else Immediate.
AdmissionRule admission_rule(Policy policy, const std::vector<bool>& rt_thread) noexcept;

class Admission {
 public:
  // `queue` must outlive the Admission; `rt_thread[t]`: thread t is a real-time thread (LaME);
  // empty = every thread real-time.
  Admission(ReadyQueue& queue, AdmissionRule rule, std::vector<bool> rt_thread = {});

  AdmissionRule rule() const noexcept { return rule_; }

  // Work of `cb` became ready (a timer release, a message, more input after a take). At most
  // one instance per callback is queued or waiting; a second release while one is changes
  // nothing (the queued one is the older).
  template <class Src>
  void released(CallbackId cb, const Src& src) noexcept;

  // The callback thread `t` runs now, chosen by the queue's ordering among what the rule lets
  // it see (Algorithm 1); kNoCallback when there is none. It leaves the queue and its group
  // becomes running (ReadyQueue::select). admitted() tells whether this call moved waiting
  // work into the queue (other idle threads may want to look).
  template <class Src>
  CallbackId next(ThreadId t, const Src& src) noexcept;

  // Admit everything waiting now (a polling point / a refresh), e.g. to inspect the queue of a
  // deterministic scenario. Returns whether anything entered the queue.
  template <class Src>
  bool admit_all(const Src& src) noexcept;

  // `cb` is queued or waiting for admission.
  bool holds(CallbackId cb) const noexcept { return q_->queued(cb) || waiting_flag_[cb] != 0; }
  // Released work not in the queue yet.
  std::size_t waiting() const noexcept { return waiting_.size(); }
  bool admitted() const noexcept { return admitted_; }

 private:
  template <class Src>
  bool polling_point(const Src& src) noexcept;
  template <class Src>
  bool refresh(const Src& src) noexcept;
  void wait(CallbackId cb) noexcept {
    if (!waiting_flag_[cb]) waiting_flag_[cb] = 1, waiting_.push_back(cb);
  }

  ReadyQueue* q_;
  AdmissionRule rule_;
  std::vector<bool> rt_thread_;
  std::vector<std::uint8_t> waiting_flag_;  // CallbackId -> released, not admitted yet
  std::vector<CallbackId> waiting_;         // the same, as a list (capacity: every callback)
  std::vector<CallbackId> scratch_;         // polling point: the readySet being cleared
  bool admitted_ = false;
};

// ---- inline definitions -------------------------------------------------------------------

template <class Src>
void Admission::released(CallbackId cb, const Src& src) noexcept {
  if (holds(cb)) return;
  if (rule_ == AdmissionRule::Immediate) q_->push(cb, src.deadline(cb));
  else wait(cb);
}

template <class Src>
bool Admission::refresh(const Src& src) noexcept {
  bool added = false;
  for (CallbackId cb : waiting_) {
    waiting_flag_[cb] = 0;
    if (src.ready(cb) && q_->push(cb, src.deadline(cb))) added = true;
  }
  waiting_.clear();
  return added;
}

// The default executors' polling point: clear the readySet, refill it with one instance of
// every waiting callback whose group can be taken now (EDF paper Sec. II; Case Study 2).
template <class Src>
bool Admission::polling_point(const Src& src) noexcept {
  scratch_.clear();
  q_->ordered(scratch_);  // no allocation: capacity reserved for every callback
  for (CallbackId cb : scratch_) {
    q_->remove(cb);
    wait(cb);
  }
  bool added = false;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const CallbackId cb = waiting_[i];
    if (!src.ready(cb)) {
      waiting_flag_[cb] = 0;
    } else if (q_->group_free(cb)) {
      waiting_flag_[cb] = 0;
      q_->push(cb, src.deadline(cb));
      added = true;
    } else {
      waiting_[keep++] = cb;
    }
  }
  waiting_.resize(keep);
  return added;
}

template <class Src>
bool Admission::admit_all(const Src& src) noexcept {
  switch (rule_) {
    case AdmissionRule::Immediate: return false;
    case AdmissionRule::PollingPoint: return polling_point(src);
    case AdmissionRule::LameBestEffort: return refresh(src);
  }
  return false;
}

template <class Src>
CallbackId Admission::next(ThreadId t, const Src& src) noexcept {
  admitted_ = false;
  if (rule_ == AdmissionRule::LameBestEffort && !waiting_.empty() &&
      ((t < rt_thread_.size() && rt_thread_[t]) || q_->empty()))
    admitted_ = refresh(src);
  CallbackId cb = q_->select(t);
  if (cb == kNoCallback && rule_ == AdmissionRule::PollingPoint) {
    admitted_ = polling_point(src);
    cb = q_->select(t);
  }
  return cb;
}

}  // namespace chainrt::sched
