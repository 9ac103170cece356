// chainrt runtime: OS-level thread parameters of executor threads and the readyQueue lock.
//  - SCHED_FIFO priority, CPU pinning, SCHED_DEADLINE reservation (runtime Q, period P) via
//    the sched_setattr system call (LaME Sec. 4.1: thread classes with budgets);
//  - PiMutex: a futex-based mutex with priority inheritance (PTHREAD_PRIO_INHERIT), the
//    "RT mutex" LaME Sec. 4.1 puts around the executor's shared state so that a throttled or
//    preempted lock holder inherits the priority of the threads waiting for it.
// Without the privilege (EPERM) every request degrades to normal scheduling with a warning;
// nothing here throws or aborts.
#pragma once

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/sched/setup.hpp"

namespace chainrt::runtime {

// CLOCK_MONOTONIC in nanoseconds: the executors' clock, the same on every process of a host
// (the release grid's, the monitor's, the benches'). The one reading of it in chainrt; inline,
// it is on every dispatch path. No allocation, async-signal-safe.
inline Duration now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Duration>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) in nanoseconds.
Duration thread_cpu_ns() noexcept;
// Burn `work` nanoseconds of the calling thread's CPU time (a callback's execution time).
void burn_cpu(Duration work) noexcept;

class PiMutex {
 public:
  PiMutex() noexcept;
  ~PiMutex();
  PiMutex(const PiMutex&) = delete;
  PiMutex& operator=(const PiMutex&) = delete;
  void lock() noexcept;
  void unlock() noexcept;
  bool try_lock() noexcept;
  bool priority_inheritance() const noexcept { return pi_; }

 private:
  pthread_mutex_t m_;
  bool pi_ = false;
};

// The executors' sleep and wake-up (Linux futex on a 32-bit word, process-private): block
// while *word == expected, at most `timeout` ns (< 0: no limit); wake every waiter. Both are
// lock-free system calls: no allocation, async-signal-safe.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, Duration timeout) noexcept;
void futex_wake_all(std::atomic<std::uint32_t>* word) noexcept;

// A real-time thread's late wake-up: it slept until `slept_until` (the next timer release on
// its executor) and ran again only at `woke`. Nothing of a real-time thread's own keeps it
// from running at `slept_until` but the CPU: the hypervisor's or the kernel's (a late timer
// interrupt, a non-preemptible section, an interrupt storm) or a thread of higher priority —
// what the accounting tells apart (chainrt.accounting: a platform blackout unless a model
// thread ran meanwhile). The executor records it beside the first dispatch that follows.
struct LateWake {
  Duration slept_until = 0;
  Duration woke = 0;
};
// Called right after a futex_wait that was to end at `slept_until` (0: it had no timeout): the
// late wake-up, or {} when the thread ran in time or has no real-time class (a normal thread
// waits behind other processes, which is no platform's delay). No allocation, lock-free; one
// system call (sched_getscheduler) only when the wake-up was late.
LateWake late_wake(Duration slept_until) noexcept;

// What applying a ThreadSpec to the calling thread achieved.
struct ThreadSetupResult {
  bool pinned = false;
  bool fifo = false;
  bool deadline = false;
  std::vector<std::string> warnings;
};

// Apply `spec` (cores, SCHED_FIFO priority, SCHED_DEADLINE reservation) to the calling thread.
// A reservation takes precedence over a FIFO priority (a thread has one scheduling class).
ThreadSetupResult apply_thread_spec(const sched::ThreadSpec& spec) noexcept;

// Change the scheduling of a running thread (`tid`: its kernel thread id, gettid()): a
// SCHED_DEADLINE reservation, or normal scheduling (SCHED_OTHER) when `r` is empty or has no
// budget. Used by LaME's controller (runtime/lame_controller.hpp) on executor threads. Any
// thread may call it; it does not allocate unless it fails. Returns "" on success, otherwise
// why the kernel refused (EBUSY: admission control; EPERM: privilege or pinning).
std::string set_thread_reservation(int tid, const std::optional<Reservation>& r) noexcept;
// The reservation a thread runs with now (sched_getattr); nullopt when it is not
// SCHED_DEADLINE or cannot be read.
std::optional<Reservation> thread_reservation(int tid) noexcept;

}  // namespace chainrt::runtime
