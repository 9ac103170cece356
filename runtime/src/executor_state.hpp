// chainrt runtime: the executor's run-time state per callback and per non-steady clock, shared by
// its sources (executor.cpp: set-up and dispatch; executor_clocks.cpp: ROS and system time;
// executor_monitor.cpp: statistics, reports, tracing). Private to runtime/.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "chainrt/runtime/executor.hpp"

namespace chainrt::runtime {

// Run-time state of one callback (CallbackId = index).
struct Executor::Slot {
  Executor* exec = nullptr;
  sched::CallbackId id = 0;
  Entity* entity = nullptr;
  Timer* timer = nullptr;
  SubscriptionBase* sub = nullptr;
  // The timer's clock (in the time of the timer's clock; steady: the executor's) and the chain
  // instances it starts (sched/dispatcher.hpp).
  sched::TimerSource src;
  // A timer on a ROS/system clock (else nullptr): its clock's state, see ClockWatch.
  ClockWatch* watch = nullptr;
  bool armed = false;             // next is set (a ROS clock reading 0 has not started)
  Duration remaining = 0;         // when unarmed: the wait left once armed
  Duration last = 0;              // rcl's last_call_time, in the clock's time
  Duration release_steady = 0;    // executor-clock time of the pending release (chain stamp)
  CallbackStats stats;
  CpuWindow window_cpu;  // largest CPU times since the last take_cpu_window()/take_cpu_max()
  // lock-free dirty list (DDS listener -> executor)
  std::atomic<bool> enlisted{false};
  Slot* next_dirty = nullptr;
};

// The timers of one clock other than the executor's (a node's ROS clock, or a system clock).
struct Executor::ClockWatch {
  Executor* ex = nullptr;
  Clock* clock = nullptr;
  std::vector<sched::CallbackId> timers;
  Duration due = 0;                  // earliest next release of its timers not queued
  std::atomic<bool> jumped{false};   // set by the jump callback: re-read the clock
  bool jump_callback = false;        // registered on the clock
  // Between the before- and after-jump callbacks of a change of time source (ready-queue
  // lock): the clock may still read the old source, so its timers are not re-armed then.
  bool switching = false;
  // Some timer waits to be armed (sim time that read 0): the next forward jump arms it at the
  // time jumped to.
  std::atomic<bool> unarmed{false};
};

}  // namespace chainrt::runtime
