// chainrt sched: the release rule of a ROS 2 timer, shared by the simulator and the runtime.
// Implements the overrun handler the EDF ready-queue paper relies on (Sec. IV-A): when a timer
// callback is taken more than one period late, the next release is moved forward past the
// current time instead of firing twice in a row, and the skipped releases are counted; the
// instance that runs keeps the release (and so the chain deadline) it was released with, and
// the next instance's deadline follows its new, later release (d = a + D, Sec. IV-B).
#pragma once

#include <cstdint>

#include "chainrt/model/model.hpp"

namespace chainrt::sched {

struct TimerClock {
  Duration period = 0;
  Duration next = 0;  // next nominal release

  struct Take {
    Duration released = 0;       // release time of the instance now taken
    std::int64_t skipped = 0;    // releases dropped by the overrun handler
  };

  bool ready(Duration now) const noexcept { return now >= next; }
  // The executor takes the timer at `now` (now >= next).
  Take take(Duration now) noexcept {
    Take t{next, 0};
    next += period;
    if (next <= now) {  // blocked for more than one period: skip to the first future release
      std::int64_t k = (now - next) / period + 1;
      t.skipped = k;
      next += k * period;
    }
    return t;
  }
};

}  // namespace chainrt::sched
