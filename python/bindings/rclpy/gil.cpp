// The GIL release of chainrt._rclpy_exec (gil.hpp: why and the contract).
#include "gil.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace nb = nanobind;

namespace chainrt::rclpy_exec {
namespace {

// Set by exit_hook (before finalization starts) and never cleared.
std::atomic<bool> g_exiting{false};
// The thread that runs the interpreter's exit (it alone still takes the GIL afterwards).
std::atomic<std::thread::id> g_exit_thread{};
// Threads between deciding to take the GIL and having it. With g_exiting (both sequentially
// consistent) this closes the race with exit_hook: a thread either sees g_exiting and parks,
// or exit_hook waits until it holds the GIL, before finalization can begin.
std::atomic<int> g_entering{0};

[[noreturn]] void park() noexcept {
  for (;;) ::pause();  // until the process ends; a signal handler returns here
}

// Python's atexit callback: runs on the exiting thread with the GIL, before finalization.
void exit_hook() {
  g_exit_thread.store(std::this_thread::get_id());
  g_exiting.store(true);
  if (g_entering.load() == 0) return;
  PyThreadState* s = PyEval_SaveThread();  // let the threads already entering take the GIL
  while (g_entering.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  PyEval_RestoreThread(s);
}

}  // namespace

void restore_gil_or_park(PyThreadState* state) noexcept {
  g_entering.fetch_add(1);
  if (g_exiting.load() && std::this_thread::get_id() != g_exit_thread.load()) {
    g_entering.fetch_sub(1);
    park();
  }
  PyEval_RestoreThread(state);
  g_entering.fetch_sub(1);
}

bool try_acquire_gil(PyGILState_STATE& state) noexcept {
  g_entering.fetch_add(1);
  if (g_exiting.load() && std::this_thread::get_id() != g_exit_thread.load()) {
    g_entering.fetch_sub(1);
    return false;
  }
  state = PyGILState_Ensure();
  g_entering.fetch_sub(1);
  return true;
}

void register_exit_hook(nb::module_& m) {
  m.def("_exit_hook", &exit_hook);
  nb::module_::import_("atexit").attr("register")(m.attr("_exit_hook"));
}

}  // namespace chainrt::rclpy_exec
