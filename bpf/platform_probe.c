// chainrt-platform-probe: measures the CPU time the platform takes from one CPU, independently
// of the chains under test (used by the CROS-RT experiment's platform term,
// python/chainrt/crosslayer/platform.py).
//
// A SCHED_FIFO thread pinned to CPU wakes every PERIOD on absolute CLOCK_MONOTONIC deadlines.
// Nothing of the model runs above it (the chains' threads and the kernel-path class threads are
// below 99), so when it wakes late by more than THRESHOLD, something the model does not contain
// held that CPU: a VM stall or hypervisor steal, a long non-preemptible kernel section, interrupt
// work. Each late wake-up is written as the blackout [deadline, wake-up]. What that misses,
// and so what the measured blackouts do not cover: blackouts up to THRESHOLD, and, of a longer
// one, the part before the deadline it delayed (at most PERIOD; a blackout that began just
// after a wake-up is only seen at the next deadline). Widening every interval by PERIOD would
// cover that, but on this VM's wake-up noise (0.2-0.5 ms late every few ms) the widened
// intervals merge into a CPU that is never there.
//
// Usage: chainrt-platform-probe CPU PRIORITY PERIOD_US THRESHOLD_US DURATION_S OUT
// OUT: "# cpu C period_ns P threshold_ns H start_ns S end_ns E" then one "begin_ns end_ns" per
// blackout (CLOCK_MONOTONIC). Ends at DURATION_S or on SIGTERM/SIGINT, writing OUT then.
// With CHAINRT_PARENT_PID set (python/chainrt/runtime.py, tied_to_this_process) it gets SIGTERM
// when that parent dies (PR_SET_PDEATHSIG) and does not start when it is gone already: a killed
// chainrt leaves no probe running.
// Allocates its record array once before the loop; at most MAX_RECORDS blackouts are kept
// (the count of the rest is in the header's "dropped" field).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_RECORDS 200000

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s CPU PRIORITY PERIOD_US THRESHOLD_US DURATION_S OUT\n", argv[0]);
    return 1;
  }
  const int cpu = atoi(argv[1]), prio = atoi(argv[2]);
  const int64_t period = atoll(argv[3]) * 1000LL, threshold = atoll(argv[4]) * 1000LL;
  const double duration_s = atof(argv[5]);
  const char* out = argv[6];
  const char* parent = getenv("CHAINRT_PARENT_PID");
  if (parent && *parent) {
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (getppid() != (pid_t)atol(parent)) return 1;  // the parent died before the request
  }
  if (period <= 0 || threshold < 0 || duration_s <= 0) {
    fprintf(stderr, "platform probe: bad period, threshold or duration\n");
    return 1;
  }
  int64_t* rec = malloc(sizeof(int64_t) * 2 * MAX_RECORDS);
  if (!rec) {
    fprintf(stderr, "platform probe: out of memory\n");
    return 1;
  }
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("platform probe: sched_setaffinity");
    return 1;
  }
  struct sched_param sp = {.sched_priority = prio};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
    perror("platform probe: sched_setscheduler");
    return 1;
  }
  mlockall(MCL_CURRENT | MCL_FUTURE);
  for (int i = 0; i < 2 * MAX_RECORDS; i += 512) rec[i] = 0;  // touch the pages before the loop

  const int64_t start = now_ns(), end = start + (int64_t)(duration_s * 1e9);
  // Every CPU's probe wakes on one grid (multiples of the period on CLOCK_MONOTONIC): a real-time
  // thread one of them preempts then finds the other CPUs' probes running too, instead of being
  // pushed by the kernel to another CPU at every wake-up of each (staggered probes made an
  // unpinned executor thread migrate 2,000 times a second).
  int64_t next = start - start % period, n = 0, dropped = 0;
  while (!stop_requested) {
    next += period;
    struct timespec ts = {.tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL};
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR && !stop_requested) {}
    const int64_t woke = now_ns();
    if (woke - next > threshold) {
      if (n < MAX_RECORDS) {
        rec[2 * n] = next;
        rec[2 * n + 1] = woke;
        ++n;
      } else {
        ++dropped;
      }
    }
    if (woke >= end) break;
    if (woke - next > period) next = woke - (woke - next) % period;  // skip the deadlines missed
  }
  FILE* f = fopen(out, "w");
  if (!f) {
    perror("platform probe: open output");
    return 1;
  }
  fprintf(f, "# cpu %d period_ns %lld threshold_ns %lld start_ns %lld end_ns %lld dropped %lld\n", cpu,
          (long long)period, (long long)threshold, (long long)start, (long long)now_ns(), (long long)dropped);
  for (int64_t i = 0; i < n; ++i) fprintf(f, "%lld %lld\n", (long long)rec[2 * i], (long long)rec[2 * i + 1]);
  return fclose(f) == 0 ? 0 : 1;
}
