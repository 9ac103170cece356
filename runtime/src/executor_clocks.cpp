// chainrt runtime: the executor's timers on ROS and system clocks (executor.hpp: ROS time) — rcl's
// jump rules, their releases on the executor's clock, and how long an idle thread may wait.
#include <algorithm>

#include <rcl/error_handling.h>

#include "executor_state.hpp"

namespace chainrt::runtime {

using sched::CallbackId;
using sched::kNoDeadline;

// A timer on a ROS or system clock: watched with the other timers of its clock, armed at that
// clock's now plus its offset (a ROS clock reading 0 under sim time arms at the first /clock).
void Executor::watch_clock(Slot& s) {
  Clock* c = s.timer->clock();
  auto it = std::find_if(clocks_.begin(), clocks_.end(), [&](const auto& w) { return w->clock == c; });
  if (it == clocks_.end()) {
    clocks_.push_back(std::make_unique<ClockWatch>());
    clocks_.back()->ex = this;
    clocks_.back()->clock = c;
    it = clocks_.end() - 1;
  }
  ClockWatch& w = **it;
  w.timers.push_back(s.id);
  s.watch = &w;
  s.src.clock.period = s.timer->period();
  const Duration cnow = c->now();
  s.armed = cnow != 0;
  if (!s.armed) w.unarmed.store(true, std::memory_order_release);
  s.remaining = s.timer->offset();
  s.src.clock.next = cnow + s.timer->offset();
  s.last = cnow;
}

// rcl's timer jump rules (rcl/src/rcl/timer.c, _rcl_timer_time_jump) for the timers of one ROS
// clock, under the ready-queue lock; then wake an idle thread to re-read the clock. Runs on the
// thread that moved the clock (the /clock thread), which holds the clock's mutex and never the
// ready-queue lock (so the lock order is clock -> executor, everywhere). No allocation.
void Executor::on_time_jump(const rcl_time_jump_t* jump, bool before_jump, void* user) {
  auto* w = static_cast<ClockWatch*>(user);
  Executor* ex = w->ex;
  const bool change = jump->clock_change == RCL_ROS_TIME_ACTIVATED ||
                      jump->clock_change == RCL_ROS_TIME_DEACTIVATED;
  // The first /clock after sim time began: arm at the time it set, not when a thread next
  // harvests (two /clock steps before a harvest armed the timers a step late).
  const bool arm = !before_jump && !change && jump->delta.nanoseconds > 0 &&
                   w->unarmed.load(std::memory_order_acquire);
  if (change || jump->delta.nanoseconds < 0 || arm) {
    rcl_time_point_value_t now = 0;  // this thread is the one changing the clock: no race
    if (rcl_clock_get_now(w->clock->get(), &now) != RCL_RET_OK) rcl_reset_error();
    std::unique_lock<PiMutex> lk(ex->mutex_);
    // (Another thread's harvest between the two callbacks of a switch would read the old time
    // source and arm the timers on it.)
    if (change) w->switching = before_jump;
    for (CallbackId id : w->timers) {
      Slot& s = *ex->slots_[id];
      if (before_jump) {
        // The time source changes: keep the part of the period still to wait.
        if (change && s.armed) {
          s.remaining = std::max<Duration>(s.src.clock.next - now, 0);
          s.armed = false;
        }
      } else if (change || arm) {
        if (!s.armed && now != 0) {  // now == 0: armed at the first /clock
          s.src.clock.next = now + s.remaining;
          s.last = now;
          s.armed = true;
        }
      } else if (s.armed && now < s.last) {
        // Back before the last call: the next release is one period after the new time.
        s.src.clock.next = now + s.src.clock.period;
        s.last = now;
      }
    }
    bool waiting = false;
    for (CallbackId id : w->timers) waiting = waiting || !ex->slots_[id]->armed;
    w->unarmed.store(waiting, std::memory_order_release);
  }
  if (before_jump) return;
  w->jumped.store(true, std::memory_order_release);
  ex->wake_others();
}

// The timers of the non-steady clocks: O(1) per clock unless one is due or its clock jumped.
void Executor::harvest_clocks(Duration now) noexcept {
  for (auto& wp : clocks_) {
    ClockWatch& w = *wp;
    if (w.switching) continue;  // the after-jump callback re-arms and wakes a thread
    const bool jumped = w.jumped.exchange(false, std::memory_order_acq_rel);
    const Duration cnow = w.clock->now();
    if (!jumped && cnow < w.due) continue;
    const bool sim = w.clock->ros_time_is_active();
    Duration due = kNoDeadline;
    for (CallbackId id : w.timers) {
      Slot& t = *slots_[id];
      if (dispatcher_->holds(id)) continue;
      if (!t.armed) {
        if (cnow == 0) continue;  // sim time before the first /clock
        t.src.clock.next = cnow + t.remaining;
        t.last = cnow;
        t.armed = true;
      }
      if (t.src.clock.ready(cnow)) {
        // The chain instance's release on the executor's clock: when simulated time reached
        // the release, i.e. now; under system time, now less the lateness (at most a period,
        // so that a jump of the system clock does not invent a long response time).
        t.release_steady =
            sim ? now : now - std::min<Duration>(cnow - t.src.clock.next, t.src.clock.period);
        make_ready(id);
      } else {
        due = std::min(due, t.src.clock.next);
      }
    }
    w.due = due;
  }
}

Duration Executor::clocks_timeout() const noexcept {
  // A clock on simulated time adds no timeout: its jump callback wakes a thread when /clock
  // moves. A clock on system time is re-read at least every 100 ms (rcl reports no jumps of the
  // system clock; a settimeofday is noticed within that).
  Duration timeout = -1;
  for (const auto& w : clocks_) {
    if (w->clock->ros_time_is_active()) continue;
    Duration t = 100'000'000;
    if (w->due != kNoDeadline) t = std::min(t, std::max<Duration>(w->due - w->clock->now(), 0));
    timeout = timeout < 0 ? t : std::min(timeout, t);
  }
  return timeout;
}

}  // namespace chainrt::runtime
