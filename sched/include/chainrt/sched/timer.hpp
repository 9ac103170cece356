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
//
// The release grid (ReleaseGrid, below) is where every chainrt executor — the C++ runtime,
// chainrt.rclpy and the rclcpp executor — arms its timers, so that the model's timer offsets
// hold across executors and processes of one host (model TimerPhase::Guaranteed).
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
  // A fractional period (ExactPeriod, den > 1; set by ReleaseGrid::clock): release `index` is at
  // origin + exact.at(index), so that rounding never accumulates; `period` is then its floor.
  ExactPeriod exact{};
  Duration origin = 0;
  std::int64_t index = 0;

  struct Take {
    Duration released = 0;       // release time of the instance now taken (rcl: expected call time)
    std::int64_t skipped = 0;    // grid releases dropped by the overrun rule
  };

  bool ready(Duration now) const noexcept { return now >= next; }
  // The executor takes the timer at `now` (now >= next): rcl_timer_call.
  Take take(Duration now) noexcept {
    if (exact.fractional()) return take_exact(now);
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

 private:
  // take() on a fractional period: the same overrun rule on the grid origin + exact.at(k).
  Take take_exact(Duration now) noexcept {
    Take t{next, 0};
    std::int64_t k = index + 1;
    // Rcl9: the first grid instant strictly after now; Rcl5: at or after now.
    const std::int64_t first = exact.first_at_or_after(now - origin + (rule == TimerRule::Rcl9 ? 1 : 0));
    if (first > k) {
      t.skipped = first - k;
      k = first;
    }
    index = k;
    next = origin + exact.at(k);
    return t;
  }
};

// ---- the release grid ----------------------------------------------------------------
//
// Rule (every executor of a run, on CLOCK_MONOTONIC): a timer with period T and model offset o
// is released at  E + o + k·T,  k = 0, 1, 2, …, where E is the run's release epoch:
//   - CHAINRT_RELEASE_EPOCH_NS (kReleaseEpochEnv) when set: an absolute CLOCK_MONOTONIC time in
//     ns, which a launcher sets for every process of a run (chainrt run and the benchmarks set
//     it to their start + kReleaseEpochMargin; a user's launch file may set it too);
//   - else the first call of release_epoch() in the process plus kReleaseEpochMargin, shared by
//     every executor of the process.
// So every timer of the host starts at k = 0 when its executor arms before E + o, and the
// offsets between timers hold for the whole run (CLOCK_MONOTONIC is one clock per host). An
// executor that arms later starts at the first grid instant at or after its arming time
// (start_index > 0: a late start — the offsets still hold, the common start does not; the
// executor reports it). Timers on ROS or system clocks are not on the grid.
// A release is "late" by (the instant the executor made it ready) − (its grid instant): the
// release jitter, which executors measure (ReleaseJitter) and the analyses take from the model's
// `jitter` (bounds hold for jitter up to the declared one).
// Thread-safe: release_epoch() (one atomic); the rest is pure. No allocation.

inline constexpr const char* kReleaseEpochEnv = "CHAINRT_RELEASE_EPOCH_NS";
// How far after the first arming a process-wide epoch lies: every executor of the process that
// arms within it starts at k = 0.
inline constexpr Duration kReleaseEpochMargin = 50'000'000;

// The run's release epoch E (CLOCK_MONOTONIC ns), given the caller's `now` on that clock: the
// environment's, else the process-wide one (set by the first call: now + margin). An unparsable
// or negative CHAINRT_RELEASE_EPOCH_NS is ignored (the process-wide epoch applies);
// `from_environment` (optional) says which one was used.
Duration release_epoch(Duration now, bool* from_environment = nullptr) noexcept;

// One timer on the grid: its first release at or after `armed_at`, and which grid index that is.
// A period given as a rate or a fraction (ExactPeriod, den > 1) puts release k at
// E + o + round(k·T): each instant rounded once, so no drift accumulates (30 Hz and 5 Hz
// coincide at every 6th release of the first for ever).
struct ReleaseGrid {
  Duration epoch = 0, offset = 0;
  ExactPeriod period{};

  struct Start {
    Duration first = 0;          // E + o + round(start_index·T)
    std::int64_t start_index = 0;  // > 0: the executor armed after E + o (a late start)
  };
  Start start(Duration armed_at) const noexcept {
    const Duration k0 = epoch + offset;
    if (armed_at <= k0 || period.num <= 0) return {k0, 0};
    const std::int64_t k = period.first_at_or_after(armed_at - k0);
    return {k0 + period.at(k), k};
  }
  // The grid instant of release index k and the index of the latest grid instant <= t.
  Duration at(std::int64_t k) const noexcept { return epoch + offset + period.at(k); }
  std::int64_t index_at_or_before(Duration t) const noexcept {
    if (period.num <= 0 || t < epoch + offset) return -1;
    return period.first_at_or_after(t - epoch - offset + 1) - 1;
  }
  // The TimerClock that runs it from `armed_at` (rcl's overrun rule keeps it on the grid).
  TimerClock clock(Duration armed_at, TimerRule rule = TimerRule::Rcl9) const noexcept {
    const Start st = start(armed_at);
    TimerClock c;
    c.period = period.whole();
    c.next = st.first;
    c.rule = rule;
    if (period.fractional()) {
      c.exact = period;
      c.origin = epoch + offset;
      c.index = st.start_index;
    }
    return c;
  }
};

// The release jitter a timer showed in a run: max and sum of (ready − grid instant) over its
// releases (an executor calls record() when it makes a timer release ready). No allocation;
// not thread-safe (the owner's lock).
struct ReleaseJitter {
  Duration max = 0;
  Duration sum = 0;
  std::int64_t releases = 0;
  void record(Duration late) noexcept {
    if (late < 0) late = 0;
    max = late > max ? late : max;
    sum += late;
    ++releases;
  }
};

}  // namespace chainrt::sched
