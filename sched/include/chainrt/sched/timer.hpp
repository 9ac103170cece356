// chainrt sched: the release rule of a ROS 2 timer, shared by the simulator and the runtime.
//
// rcl's rule (rcl/src/rcl/timer.c, rcl_timer_call, the Kilted line): when a timer is called,
// its next call time moves exactly one period forward; only when that is still *strictly*
// before now (`next_call_time < now`) is it moved forward by as many whole periods as needed,
// i.e. to the first period-grid instant at or after now. So a timer taken exactly on a grid
// instant after an overrun is ready again at once; every grid instant strictly between the
// release that runs and that one is skipped (counted as a drop). A timer is ready when
// now >= next (rcl_timer_is_ready: time until the next call <= 0). The EDF ready-queue paper
// calls this the timers' overload handler (Sec. IV-A).
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

struct TimerClock {
  Duration period = 0;
  Duration next = 0;  // next nominal release (rcl: next_call_time)

  struct Take {
    Duration released = 0;       // release time of the instance now taken (rcl: expected call time)
    std::int64_t skipped = 0;    // grid releases dropped by the overrun rule
  };

  bool ready(Duration now) const noexcept { return now >= next; }
  // The executor takes the timer at `now` (now >= next): rcl_timer_call.
  Take take(Duration now) noexcept {
    Take t{next, 0};
    next += period;
    if (next < now) {  // missed at least one grid instant: first grid instant at or after now
      if (period <= 0) {
        next = now;  // rcl: a zero period is always ready
      } else {
        const std::int64_t k = 1 + (now - next - 1) / period;  // ceil((now - next) / period)
        t.skipped = k;
        next += k * period;
      }
    }
    return t;
  }
};

}  // namespace chainrt::sched
