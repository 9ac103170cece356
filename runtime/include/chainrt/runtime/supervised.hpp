// The process's tie to the chainrt that started it (python/chainrt/runtime.py's Supervisor and
// the reference-system bench): a started process dies with its parent, so that no workload
// outlives a killed chainrt.
//
// Why here and not in the parent: the parent used to set PR_SET_PDEATHSIG in a preexec_fn, i.e.
// Python code between fork and exec of a multi-threaded process (rclpy's and Fast DDS's threads
// run beside the supervisor in `chainrt profile --run`); the child could block for ever on a lock
// some other thread held at the fork (seen: 2 of 67 launches hung in the forked child). The
// parent now passes its pid in the environment and the child ties itself to it at start-up.
#pragma once

namespace chainrt::runtime {

// Environment variable holding the pid of the process that must not be outlived.
inline constexpr const char* kParentPidEnv = "CHAINRT_PARENT_PID";

// When CHAINRT_PARENT_PID is set: asks the kernel for SIGTERM when the parent dies
// (PR_SET_PDEATHSIG; chainrt-run stops cleanly on SIGTERM) and returns false when the parent has
// already gone (getppid() is no longer that pid: it died before the request took effect), in
// which case the caller exits at once. Returns true otherwise, also when the variable is unset or
// malformed (a process started by hand). Call first thing in main(); not thread-safe; no
// allocation.
bool tie_to_parent_from_env();

}  // namespace chainrt::runtime
