// The process's tie to the chainrt that started it (supervised.hpp).
#include "chainrt/runtime/supervised.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace chainrt::runtime {

bool tie_to_parent_from_env() {
  const char* v = std::getenv(kParentPidEnv);
  if (v == nullptr || *v == '\0') return true;
  char* end = nullptr;
  const long pid = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || pid <= 1) return true;
  if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) return true;  // best effort, as before
  // The request covers only a parent alive now: one that died in between made init (or a
  // subreaper) the parent.
  return getppid() == static_cast<pid_t>(pid);
}

}  // namespace chainrt::runtime
