// chainrt sched: the release rule of a ROS 2 timer, shared by the simulator and the runtime.
//
// rcl's rule (rcl/src/rcl/timer.c, rcl_timer_call): when a timer is called, its next call time
// moves exactly one period forward; if that is not in the future, it moves on by whole periods.
// The ROS 2 lines differ in one instant, a timer taken exactly on a period-grid instant after an
// overrun (TimerRule):
//   Rcl9  rcl >= 9, Jazzy and Kilted (rcl PR #1089, "next_call_time will always be greater than
//         now after calling rcl_timer_call"): `if (next_call_time <= now)`, `1 + ahead / period`
//         periods: the next release is the first grid instant strictly AFTER now. The grid
//         instant the timer was taken at is skipped with every one before it.
//   Rcl5  rcl 5 and 6, Humble and Iron: `if (next_call_time < now)`, `1 + (ahead - 1) / period`:
//         the first grid instant AT OR AFTER now, so a timer taken exactly on a grid instant
//         is ready again at once (only the instants strictly between are skipped).
// Skipped grid instants are counted as drops. A timer is ready when now >= next
// (rcl_timer_is_ready: time until the next call <= 0). The EDF ready-queue paper calls this the
// timers' overload handler (Sec. IV-A). Off the exact grid instant both rules agree; in an
// integer-time simulation of an overloaded synchronous system the exact instant is common, so
// the simulator follows the line it models (SimOptions::timer_rule). tests/python/test_ros_lines.py
// checks Rcl9 against the real rcl of each line chainrt builds on.
//
// The chain instance's deadline after an overrun. The EDF paper (Sec. IV-A) says that when the
// handler moves a release, "the executor adjusts the chain's deadline to reflect the new timer
// release". chainrt does NOT: the instance that runs keeps the release it was released with,
// a (rcl reports the same time as `expected_call_time` of rcl_timer_call_with_info), and its
// deadline stays d = a + D (Sec. IV-B); only the next instance's deadline follows its own,
// later release. Reasons: (1) the response time of an instance is measured from a (Sec. III),
// and every bound chainrt's analyses compute is a bound on exactly that; a deadline moved
// later would rank an instance that is already late *behind* instances that are not, which
// is the opposite of EDF's rule and would make late chains later; (2) the paper's purpose for
// the adjustment — let the in-progress instances of the chain finish first — holds without
// it, since those carry earlier releases and so earlier deadlines; (3) in a system the paper's
// analysis accepts (every bound <= D <= T) no timer ever overruns, so the choice only matters
// in overload, where no bound applies and the honest figure is the one measured from a.
//
// Cost: header-only, O(1), no allocation, noexcept; not thread-safe (the owner's lock).
#pragma once

#include <cstdint>

#include "chainrt/model/model.hpp"

namespace chainrt::sched {

// Which rcl's overrun rule (see above). Rcl9 is the rule of every line chainrt runs on.
enum class TimerRule : std::uint8_t {
  Rcl9,  // Jazzy, Kilted: next release strictly after now
  Rcl5,  // Humble, Iron: next release at or after now
};

struct TimerClock {
  Duration period = 0;
  Duration next = 0;  // next nominal release (rcl: next_call_time)
  TimerRule rule = TimerRule::Rcl9;

  struct Take {
    Duration released = 0;       // release time of the instance now taken (rcl: expected call time)
    std::int64_t skipped = 0;    // grid releases dropped by the overrun rule
  };

  bool ready(Duration now) const noexcept { return now >= next; }
  // The executor takes the timer at `now` (now >= next): rcl_timer_call.
  Take take(Duration now) noexcept {
    Take t{next, 0};
    next += period;
    const bool missed = rule == TimerRule::Rcl9 ? next <= now : next < now;
    if (missed) {
      if (period <= 0) {
        next = now;  // rcl: a zero period is always ready
      } else {
        // Rcl9: floor((now - next) / period) + 1 periods, the first instant after now;
        // Rcl5: ceil((now - next) / period), the first instant at or after now.
        const std::int64_t k = rule == TimerRule::Rcl9 ? 1 + (now - next) / period
                                                       : 1 + (now - next - 1) / period;
        t.skipped = k;
        next += k * period;
      }
    }
    return t;
  }
};

}  // namespace chainrt::sched
