// The GIL release of chainrt._rclpy_exec: every call of the extension that runs without the GIL
// takes it back through here, so that no thread of a Python program ends in std::terminate when
// the interpreter exits while that thread is inside such a call.
//
// Why: CPython before 3.14 ends a thread that asks for the GIL once the interpreter finalizes
// with pthread_exit, a forced unwind. Unwinding through a C++ frame that may not throw (the
// destructor of nanobind's gil_scoped_release, a noexcept job) calls std::terminate: the
// process aborts with "terminate called without an active exception" (exit 134). A daemon
// thread that spins a ChainExecutor, or shuts it down while the main thread returns, is such a
// thread: its next() slice ends, or its report() returns, during finalization.
//
// Contract: from the interpreter's exit on (the atexit callback exit_hook(), which runs before
// finalization starts), a thread other than the exiting one that would take the GIL back is
// parked instead: it waits, holding no lock of the extension, until the process ends (what
// CPython 3.14 itself does with such threads). The exiting thread takes the GIL back as usual.
// Every other thread, before the exit, is unaffected. Threads not created by Python (the
// accelerator's) ask with try_acquire_gil() and skip their Python work when refused.
#pragma once

#include <Python.h>

#include <nanobind/nanobind.h>

namespace chainrt::rclpy_exec {

// Takes the GIL back with the state `PyEval_SaveThread` returned, or parks the calling thread
// for good when the interpreter exits (see above). Thread-safe; allocates nothing.
void restore_gil_or_park(PyThreadState* state) noexcept;

// Releases the GIL for its scope (nanobind's call_guard<ReleaseGil> on a binding, or a local
// guard); its end takes it back through restore_gil_or_park. The caller holds the GIL.
class ReleaseGil {
 public:
  ReleaseGil() noexcept : state_(PyEval_SaveThread()) {}
  ~ReleaseGil() { restore_gil_or_park(state_); }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

// For threads Python did not create: the GIL (PyGILState_Ensure) unless the interpreter exits
// (or has ended), in which case false and nothing was taken; release with PyGILState_Release
// of the returned state. Thread-safe.
bool try_acquire_gil(PyGILState_STATE& state) noexcept;

// Registers exit_hook with Python's atexit (once, at module import; the caller holds the GIL).
void register_exit_hook(nanobind::module_& m);

}  // namespace chainrt::rclpy_exec
