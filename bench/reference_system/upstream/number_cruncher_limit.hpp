// The one number-cruncher limit of upstream's reference system, read at start-up.
//
// Upstream (ros-realtime/reference-system v1.1.0) gives every working node a prime-count limit
// as a compile-time constant in autoware_reference_system/system/timing/default.hpp (4096 for
// all of them); what that limit costs depends on the CPU. chainrt builds upstream's executables
// with a generated copy of that header in which those 17 limits are `static inline const`
// and initialised by number_cruncher_limit() (CMakeLists.txt next to this file): the bench
// calibrates the limit to the load's CPU time per callback on the machine it runs on and passes
// it in the environment. The nodes read the limit into their settings at construction, exactly
// as they read the constant, so nodes, executors and KPIs stay upstream's.
//
// Not on a hot path: called once per limit during static initialisation.
#ifndef CHAINRT_REFERENCE_SYSTEM_NUMBER_CRUNCHER_LIMIT_HPP
#define CHAINRT_REFERENCE_SYSTEM_NUMBER_CRUNCHER_LIMIT_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace chainrt_reference_system {

// Environment variable that carries the limit; unset means upstream's 4096.
inline constexpr const char* kLimitVariable = "CHAINRT_RS_NUMBER_CRUNCHER_LIMIT";
inline constexpr std::uint64_t kUpstreamLimit = 4096;

// The limit from the environment (a positive decimal integer up to 10^9), else upstream's.
// A malformed value ends the program with one line on stderr (exit 2): a silently wrong load
// would make every figure of the run wrong.
inline std::uint64_t number_cruncher_limit() {
  const char* v = std::getenv(kLimitVariable);
  if (v == nullptr || *v == '\0') return kUpstreamLimit;
  std::uint64_t x = 0;
  for (const char* p = v; *p; ++p) {
    if (*p < '0' || *p > '9' || x > 100000000) {
      std::fprintf(stderr, "%s: not a limit between 1 and 1000000000: '%s'\n", kLimitVariable, v);
      std::exit(2);
    }
    x = x * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  if (x == 0 || x > 1000000000) {
    std::fprintf(stderr, "%s: not a limit between 1 and 1000000000: '%s'\n", kLimitVariable, v);
    std::exit(2);
  }
  return x;
}

}  // namespace chainrt_reference_system

#endif
