// chainrt sched: the Dispatcher — the one owner of an executor's scheduling state, shared by
// every chainrt backend (the simulator, the C++ runtime on rcl, the rclcpp ChainExecutor and the
// rclpy ChainExecutor). A backend supplies readiness (a Src, below), a clock and threads that
// run what the Dispatcher hands them; the Dispatcher decides, in one place:
//  - the readyQueue Ω and its ordering (sched::ReadyQueue, EDF ready-queue paper Def. 1 and
//    Algorithm 1), set up from the executor's policy descriptor (sched/policy.hpp), including
//    ros-default's wait-set order (wait_set_order: rclcpp >= 28's permutation of the
//    registration order, drawn from a seed);
//  - admission, WHEN released work enters Ω (sched::Admission: at once, at ros-default's
//    polling points, at LaME's best-effort refresh);
//  - which callback each executor thread runs, and the group state that follows from it
//    (take(): Algorithm 1 with the skippedGroups rule; done(): the group is free again);
//  - the timers' release grid (sched/timer.hpp, ReleaseGrid: releases at E + o + k·T);
//  - chain-instance stamping at a chain's source timer (TimerSource: instance k released at
//    a_i^k carries d_i^k = a_i^k + D_i, EDF paper Sec. IV-B);
//  - a reconfiguration of a running executor (LaME's controller): a new queue, every queued
//    and running instance carried over.
// When a chain instance ends is sched::ChainCompletion's one rule (chain_completion.hpp), fed
// with the stamps this hands out; it is not owned here, since a simulated system's chains span
// its executors (one completion for the whole system) and the rclcpp ChainExecutor builds a new
// Dispatcher whenever its entities change while the instances in flight carry on. The
// executors' monitor records (runtime::ChainMonitor, runtime/chain_track.hpp) sit on top of it.
//
// Src, the backend's view of its callbacks (a template argument: nothing is virtual):
//   bool ready(CallbackId) const        — the callback still has work (a released timer, an
//                                         input message, a complete fusion set)
//   Duration deadline(CallbackId) const — the absolute deadline of that work (kNoDeadline: none)
//
// Threading contract: not thread-safe. Every call on one Dispatcher happens under ONE lock held
// by the backend (its ready-queue lock), except where a function says otherwise. The group
// state changes under that same lock, which is what makes Algorithm 1's skippedGroups rule
// race-free (ReadyQueue's contract).
// Allocation contract: the constructor allocates every storage (sized by the callback and
// thread counts); released(), take(), done(), rekey(), admit_all() and every query never
// allocate, never throw and never block. rebuilt() allocates (call it outside the lock);
// install() does not.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/ready_queue.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::sched {

struct ExecutorSetup;

// ---- chain instances -------------------------------------------------------------------------

inline constexpr std::uint32_t kNoChain = 0xffffffffu;

// A chain instance as it travels from callback to callback (EDF paper Sec. IV-B).
struct Stamp {
  Duration release = 0;                // a_i^k: release of the chain's first callback
  Duration deadline = kNoDeadline;     // d_i^k = a_i^k + D_i
  std::uint32_t chain = kNoChain;      // index of the chain in the executor's chain list
  std::uint64_t instance = 0;          // k
};

// The first callback of chains as the source of their instances: the chain it stamps its
// instances with and the next instance number. When it starts several chains it stamps ONE
// instance with the chain of the smallest deadline (d = a + min D); a chain without a deadline
// only while it has no other. No allocation, noexcept; not thread-safe (the owner's lock).
struct ChainSource {
  std::uint32_t chain = kNoChain;
  Duration rel_deadline = kNoDeadline;  // D of `chain` (kNoDeadline: none)
  std::uint64_t next_instance = 0;

  // It starts chain `c` with relative deadline `D` (0: none); called once per chain.
  void starts(std::uint32_t c, Duration D) noexcept {
    const Duration d = D > 0 ? D : kNoDeadline;
    if (chain == kNoChain || d < rel_deadline) {
      chain = c;
      rel_deadline = d;
    }
  }
  // d = a + D of an instance released at `release` (kNoDeadline when no chain has one).
  Duration deadline_of(Duration release) const noexcept {
    return rel_deadline == kNoDeadline ? kNoDeadline : release + rel_deadline;
  }
  // The next chain instance, released at `release`.
  Stamp stamp(Duration release) noexcept { return Stamp{release, deadline_of(release), chain, next_instance++}; }
};

// A timer as a source of chain instances: its rcl clock (sched/timer.hpp) and its chains.
struct TimerSource : ChainSource {
  TimerClock clock;

  // The deadline of the release now pending (the key it is queued with).
  Duration pending_deadline() const noexcept { return deadline_of(clock.next); }

  struct Taken {
    Stamp stamp;                 // the instance the callback runs now
    std::int64_t skipped = 0;    // grid releases dropped by rcl's overrun rule
  };
  // The executor takes the timer at `now` (rcl_timer_call, on the timer's own time): the
  // instance keeps the release it was released with (sched/timer.hpp), the clock moves on.
  Taken take(Duration now) noexcept {
    const TimerClock::Take tk = clock.take(now);
    return Taken{stamp(tk.released), tk.skipped};
  }
};

// ---- the Dispatcher --------------------------------------------------------------------------

class Dispatcher {
 public:
  // The executor's callbacks (CallbackId = index, registration order), groups and threads
  // (`rt_thread[t]`: thread t is a real-time thread, LaME; at least one, at most 64).
  // ros-default with `wait_set_seed`: the kinds' order among ready callbacks is drawn from it
  // (wait_set_order); without: registration order. Allocates; throws std::invalid_argument on
  // a thread count out of range or a callback naming no group.
  Dispatcher(Policy policy, std::vector<CallbackSpec> specs, std::vector<GroupSpec> groups,
             std::vector<bool> rt_thread, std::optional<std::uint64_t> wait_set_seed = std::nullopt);
  // The model's executor (sched::make_setup).
  explicit Dispatcher(const ExecutorSetup& setup, std::optional<std::uint64_t> wait_set_seed = std::nullopt);
  // The queue is referred to by the admission rule: a Dispatcher never moves.
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // ---- set-up (constant after construction; thread-safe to read) -----------------------------
  Policy policy() const noexcept { return q_.policy(); }
  AdmissionRule rule() const noexcept { return adm_.rule(); }
  // ros-default's polling points: the readySet is a snapshot taken when a thread finds nothing.
  bool polls() const noexcept { return adm_.rule() == AdmissionRule::PollingPoint; }
  std::size_t callback_count() const noexcept { return q_.callback_count(); }
  std::size_t thread_count() const noexcept { return running_.size(); }

  // ---- the release grid (sched/timer.hpp) ----------------------------------------------------
  // The epoch E of this executor's grid (default 0). Not on the dispatch path.
  void set_release_epoch(Duration epoch) noexcept { epoch_ = epoch; }
  Duration release_epoch() const noexcept { return epoch_; }
  // `period`: a whole number of ns, or a rate or fraction (ExactPeriod: release k at
  // E + offset + round(k·num/den), never accumulated).
  ReleaseGrid grid(Duration offset, ExactPeriod period) const noexcept { return ReleaseGrid{epoch_, offset, period}; }
  // Arm `clock` (its rule kept) for a timer of `offset`/`period` armed at `armed_at`: its first
  // release is the first grid instant at or after then. Returns the grid start (start_index > 0:
  // a late start). O(1), no allocation.
  ReleaseGrid::Start arm(TimerClock& clock, Duration offset, ExactPeriod period, Duration armed_at) const noexcept {
    const ReleaseGrid g = grid(offset, period);
    clock = g.clock(armed_at, clock.rule);
    return g.start(armed_at);
  }

  // ---- the dispatch path (the backend's lock held; no allocation, noexcept) ------------------
  // Work of `cb` became ready (a timer release, a message, more input after a take); it enters
  // the queue as the admission rule says. At most one instance per callback is queued or
  // waiting. O(log n).
  template <class Src>
  void released(CallbackId cb, const Src& src) noexcept { adm_.released(cb, src); }
  // The callback thread `t` runs now (kNoCallback: none), chosen among what the admission rule
  // lets it see (a polling point or a refresh happens here when the rule says so); it leaves
  // the queue, its group becomes running, and it is `t`'s running callback until done(t).
  // admitted(): this call moved waiting work into the queue (other idle threads may look).
  // O(k + log n), k = the distinct affinity masks visible to t (a polling point: O(q log n)).
  template <class Src>
  CallbackId take(ThreadId t, const Src& src) noexcept {
    const CallbackId cb = adm_.next(t, src);
    if (cb != kNoCallback) running_[t] = cb;
    return cb;
  }
  bool admitted() const noexcept { return adm_.admitted(); }
  // The callback thread `t` ran has returned: its group is free again. Returns it (kNoCallback
  // when t ran none). O(g), g = the lanes of its group.
  CallbackId done(ThreadId t) noexcept {
    const CallbackId cb = running_[t];
    if (cb == kNoCallback) return cb;
    running_[t] = kNoCallback;
    q_.complete(cb);
    return cb;
  }
  CallbackId running(ThreadId t) const noexcept { return running_[t]; }
  // Thread `t` runs `cb`, taken before this Dispatcher existed (an executor whose entities
  // changed builds a new one while callbacks run): its group is running until done(t). O(g).
  void resume(ThreadId t, CallbackId cb) noexcept {
    running_[t] = cb;
    q_.start(cb);
  }
  // The queued instance of `cb` takes the new `deadline` (its oldest input changed, e.g. a full
  // input queue dropped the oldest message); false, changing nothing, when `cb` is not queued
  // or the rule polls (the default executor's readySet keeps what it saw). O(log n).
  bool rekey(CallbackId cb, Duration deadline) noexcept {
    if (polls() || !q_.queued(cb)) return false;
    q_.remove(cb);
    q_.push(cb, deadline);
    return true;
  }
  // Admit everything waiting now (a polling point / a refresh) without selecting, e.g. to
  // inspect a deterministic scenario or bound a spin_some. Whether anything entered the queue.
  template <class Src>
  bool admit_all(const Src& src) noexcept { return adm_.admit_all(src); }

  // ---- queries (the lock held; O(1), no allocation) ------------------------------------------
  bool holds(CallbackId cb) const noexcept { return adm_.holds(cb); }  // queued or waiting
  bool queued(CallbackId cb) const noexcept { return q_.queued(cb); }
  Duration deadline(CallbackId cb) const noexcept { return q_.deadline(cb); }  // of a queued one
  std::size_t size() const noexcept { return q_.size(); }            // queued
  std::size_t waiting() const noexcept { return adm_.waiting(); }    // released, not admitted
  bool empty() const noexcept { return q_.empty(); }
  // Neither queued nor waiting work.
  bool idle() const noexcept { return q_.empty() && adm_.waiting() == 0; }
  const CallbackSpec& spec(CallbackId cb) const noexcept { return q_.spec(cb); }
  const ReadyQueue& queue() const noexcept { return q_; }

  // ---- reconfiguration (LaME's controller) ---------------------------------------------------
  // A ready queue with new scheduling parameters (group, priority, affinity per CallbackId; the
  // kind and wait-set position of every callback stay) and groups, for install(). Reads only
  // what never changes after construction: may be called WITHOUT the lock. Allocates; throws
  // std::invalid_argument on a spec count or group id that does not fit.
  ReadyQueue rebuilt(std::vector<CallbackSpec> specs, std::vector<GroupSpec> groups) const;
  // Under the lock: every queued instance (with its deadline) and every running one moves to
  // `fresh`, which becomes the queue; `fresh` receives the old queue, to be destroyed outside
  // the lock. Waiting work stays waiting. No callback instance is lost. O(n log n), no
  // allocation.
  void install(ReadyQueue& fresh) noexcept;

 private:
  ReadyQueue q_;
  Admission adm_;                      // points at q_
  std::vector<CallbackId> running_;    // per thread: the callback it runs (kNoCallback: none)
  std::vector<CallbackKind> kinds_;    // constant: what rebuilt() keeps
  std::vector<std::uint32_t> wait_set_; // constant: the wait-set positions
  Duration epoch_ = 0;
};

}  // namespace chainrt::sched
