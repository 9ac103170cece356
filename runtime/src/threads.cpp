// chainrt runtime: thread scheduling parameters and the priority-inheritance lock (LaME
// Sec. 4.1: thread classes with SCHED_DEADLINE budgets, RT mutex). See threads.hpp.
#include "chainrt/runtime/threads.hpp"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <ctime>

namespace chainrt::runtime {

Duration thread_cpu_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Duration>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void burn_cpu(Duration work) noexcept {
  if (work <= 0) return;
  const Duration end = thread_cpu_ns() + work;
  volatile std::uint64_t sink = 0;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 200; ++i) sink = sink + static_cast<std::uint64_t>(i);
  }
}


void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, Duration timeout) noexcept {
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout / 1000000000);
    ts.tv_nsec = static_cast<long>(timeout % 1000000000);
    tp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tp, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

PiMutex::PiMutex() noexcept {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pi_ = pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) == 0;
  if (pthread_mutex_init(&m_, &attr) != 0) {  // PI not supported: a plain mutex
    pi_ = false;
    pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_NONE);
    pthread_mutex_init(&m_, &attr);
  }
  pthread_mutexattr_destroy(&attr);
}
PiMutex::~PiMutex() { pthread_mutex_destroy(&m_); }
void PiMutex::lock() noexcept { pthread_mutex_lock(&m_); }
void PiMutex::unlock() noexcept { pthread_mutex_unlock(&m_); }
bool PiMutex::try_lock() noexcept { return pthread_mutex_trylock(&m_) == 0; }

namespace {

// struct sched_attr of the sched_setattr(2) system call (not in glibc's headers).
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
};
constexpr std::uint32_t kSchedDeadline = 6;

std::string err(const char* what, int e) {
  return std::string(what) + ": " + strerror(e) +
         (e == EPERM ? " (needs CAP_SYS_NICE / root; running with normal scheduling)" : "");
}

}  // namespace

ThreadSetupResult apply_thread_spec(const sched::ThreadSpec& spec) noexcept {
  ThreadSetupResult r;
  try {
    const std::string who = "thread '" + spec.name + "': ";
    if (!spec.cores.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
      for (int c : spec.cores)
        if (c >= 0 && c < CPU_SETSIZE && c < ncpu) CPU_SET(c, &set);
      if (CPU_COUNT(&set) == 0) {
        r.warnings.push_back(who + "none of its cores exists on this machine; not pinned");
      } else {
        int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        if (e == 0) r.pinned = true;
        else r.warnings.push_back(who + err("pinning", e));
        if (CPU_COUNT(&set) < static_cast<int>(spec.cores.size()))
          r.warnings.push_back(who + "some of its cores do not exist on this machine");
      }
    }
    if (spec.reservation && spec.reservation->budget > 0 && spec.reservation->period > 0) {
      SchedAttr a{};
      a.size = sizeof(a);
      a.sched_policy = kSchedDeadline;
      a.sched_runtime = static_cast<std::uint64_t>(spec.reservation->budget);
      a.sched_deadline = static_cast<std::uint64_t>(spec.reservation->period);
      a.sched_period = static_cast<std::uint64_t>(spec.reservation->period);
      if (syscall(SYS_sched_setattr, 0, &a, 0u) == 0) {
        r.deadline = true;
      } else {
        int e = errno;
        r.warnings.push_back(who + err("SCHED_DEADLINE reservation", e) +
                             (e == EBUSY ? " (admission control refused the bandwidth)" : "") +
                             (r.pinned && e == EPERM
                                  ? " (SCHED_DEADLINE also refuses threads pinned to fewer "
                                    "cores than their root domain)"
                                  : ""));
      }
    }
    if (!r.deadline && spec.fifo_priority) {
      sched_param p{};
      p.sched_priority = *spec.fifo_priority;
      int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
      if (e == 0) r.fifo = true;
      else r.warnings.push_back(who + err("SCHED_FIFO priority", e));
    }
  } catch (...) {
    // only allocation of a warning string can throw here; keep going without it
  }
  return r;
}

std::string set_thread_reservation(int tid, const std::optional<Reservation>& r) noexcept {
  SchedAttr a{};
  a.size = sizeof(a);
  if (r && r->budget > 0 && r->period > 0) {
    a.sched_policy = kSchedDeadline;
    a.sched_runtime = static_cast<std::uint64_t>(std::min(r->budget, r->period));
    a.sched_deadline = static_cast<std::uint64_t>(r->period);
    a.sched_period = static_cast<std::uint64_t>(r->period);
  } else {
    a.sched_policy = SCHED_OTHER;
  }
  if (syscall(SYS_sched_setattr, tid, &a, 0u) == 0) return {};
  const int e = errno;
  try {
    return err("sched_setattr", e) + (e == EBUSY ? " (admission control refused the bandwidth)" : "");
  } catch (...) {
    return "sched_setattr failed";
  }
}

std::optional<Reservation> thread_reservation(int tid) noexcept {
  SchedAttr a{};
  if (syscall(SYS_sched_getattr, tid, &a, static_cast<unsigned>(sizeof(a)), 0u) != 0) return std::nullopt;
  if (a.sched_policy != kSchedDeadline) return std::nullopt;
  return Reservation{static_cast<Duration>(a.sched_runtime), static_cast<Duration>(a.sched_period)};
}

LateWake late_wake(Duration slept_until) noexcept {
  if (slept_until <= 0) return {};
  const Duration woke = now_ns();
  if (woke <= slept_until) return {};
  const int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
  if (policy != SCHED_FIFO && policy != SCHED_RR && policy != kSchedDeadline) return {};
  return {slept_until, woke};
}

}  // namespace chainrt::runtime
