// The run's release epoch (sched/timer.hpp, release_epoch).
#include "chainrt/sched/timer.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace chainrt::sched {

namespace {
// The process-wide epoch, 0 until the first call sets it (0 is never a valid epoch: CLOCK_MONOTONIC
// reads 0 only at boot).
std::atomic<Duration> process_epoch{0};

bool epoch_from_environment(Duration* out) noexcept {
  const char* s = std::getenv(kReleaseEpochEnv);
  if (!s || !*s) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v <= 0) return false;
  *out = static_cast<Duration>(v);
  return true;
}
}  // namespace

Duration release_epoch(Duration now, bool* from_environment) noexcept {
  Duration e = 0;
  const bool env = epoch_from_environment(&e);
  if (from_environment) *from_environment = env;
  if (env) return e;
  Duration expected = 0;
  const Duration mine = now + kReleaseEpochMargin;
  if (process_epoch.compare_exchange_strong(expected, mine)) return mine;
  return expected;
}

}  // namespace chainrt::sched
