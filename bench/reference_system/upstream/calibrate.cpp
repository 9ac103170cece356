// chainrt-rs-calibrate: the limit of upstream's number cruncher (reference_system's
// number_cruncher.hpp, unchanged) whose run costs a given CPU time on this machine.
//
//   chainrt-rs-calibrate CPU_TIME_NS [--reps N]
//
// Prints one JSON object: {"target_ns", "limit", "cost_ns" (median thread CPU time of the
// limit), "reps"}. The cost is thread CPU time (CLOCK_THREAD_CPUTIME_ID), so preemption does
// not count; the median of N runs per probe (default 7) absorbs cache and frequency noise. The
// search: doubling until the median cost reaches the target, then bisection on the limit (the
// cost grows monotonically with it: about the sum of the primes below the limit).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "reference_system/number_cruncher.hpp"

namespace {

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t median_cost(std::uint64_t limit, int reps) {
  std::vector<std::int64_t> c;
  for (int i = 0; i < reps; ++i) {
    const std::int64_t t0 = thread_cpu_ns();
    escape(number_cruncher(limit));
    c.push_back(thread_cpu_ns() - t0);
  }
  std::nth_element(c.begin(), c.begin() + reps / 2, c.end());
  return c[reps / 2];
}

bool parse_positive(const char* s, std::int64_t max, std::int64_t& out) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v <= 0 || v > max) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t target = 0, reps = 7;
  if (argc < 2 || !parse_positive(argv[1], 10'000'000'000LL, target)) {
    std::fprintf(stderr, "usage: chainrt-rs-calibrate CPU_TIME_NS (1 ns .. 10 s) [--reps N]\n");
    return 1;
  }
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc && parse_positive(argv[i + 1], 1001, reps)) {
      ++i;
    } else {
      std::fprintf(stderr, "chainrt-rs-calibrate: unknown or bad option '%s' (--reps 1..1001)\n", argv[i]);
      return 1;
    }
  }
  const int n = static_cast<int>(reps);
  median_cost(4096, n);  // warm the caches and the clock
  std::uint64_t lo = 2, hi = 64;
  while (median_cost(hi, n) < target) {
    lo = hi;
    hi *= 2;
    if (hi > (1ULL << 24)) {
      std::fprintf(stderr, "chainrt-rs-calibrate: no limit up to %llu costs %lld ns\n",
                   static_cast<unsigned long long>(hi), static_cast<long long>(target));
      return 1;
    }
  }
  while (hi - lo > 1) {  // smallest limit whose median cost reaches the target
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (median_cost(mid, n) < target) lo = mid;
    else hi = mid;
  }
  // of the two neighbours, the one whose cost is nearer the target
  const std::int64_t c_hi = median_cost(hi, n), c_lo = median_cost(lo, n);
  const bool take_lo = lo >= 3 && target - c_lo < c_hi - target;
  std::printf("{\"target_ns\": %lld, \"limit\": %llu, \"cost_ns\": %lld, \"reps\": %d}\n",
              static_cast<long long>(target), static_cast<unsigned long long>(take_lo ? lo : hi),
              static_cast<long long>(take_lo ? c_lo : c_hi), n);
  return 0;
}
