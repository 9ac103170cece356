// chainrt._rclpy_exec: the accelerator client for chainrt.rclpy (python/chainrt/rclpy/
// accelerator.py): the runtime's SharedAccelerator and run_on_accelerator
// (runtime/accelerator_client.hpp). A request made from a callback that chainrt.rclpy's loop
// dispatches carries that callback's effective priority (the loop sets the thread's dispatch
// context between next() and done()). The caller waits without the GIL; a Python job runs on
// the accelerator's thread with the GIL, and what it raises is raised in the caller.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "chainrt/runtime/accelerator_client.hpp"
#include "chainrt/runtime/accelerator_shm.hpp"
#include "gil.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace chainrt::rclpy_exec {

namespace {

std::shared_ptr<runtime::SharedAccelerator> named(const std::string& name) {
  auto a = runtime::find_accelerator(name);
  if (!a) throw std::invalid_argument("no accelerator named '" + name + "'");
  return a;
}

void add(const std::string& name, const std::string& access, Duration overhead_ns, std::optional<int> fifo_priority,
         std::vector<int> cores, std::size_t capacity, std::size_t trace_capacity, const std::string& shared,
         bool serve) {
  runtime::AcceleratorOptions o;
  o.name = name;
  if (access == "server") o.access = AcceleratorAccess::Server;
  else if (access == "direct") o.access = AcceleratorAccess::Direct;
  else throw std::invalid_argument("access must be 'direct' or 'server', not '" + access + "'");
  if (overhead_ns < 0) throw std::invalid_argument("overhead must be >= 0");
  if (capacity < 1) throw std::invalid_argument("capacity must be >= 1");
  o.overhead = overhead_ns;
  o.fifo_priority = fifo_priority;
  o.cores = std::move(cores);
  o.capacity = capacity;
  o.trace_capacity = trace_capacity;
  if (!shared.empty()) o.shared_memory = runtime::AcceleratorShm::segment_name(shared);
  o.serve = serve;
  runtime::add_accelerator(std::move(o));
}

bool remove(const std::string& name) {
  auto a = runtime::find_accelerator(name);
  if (!a) return false;
  runtime::unregister_accelerator(name);
  ReleaseGil unlocked;  // its thread may be running a Python job
  a->drain();
  a->stop();
  return true;
}

// A Python job on the accelerator's thread.
struct PyJob {
  nb::handle fn;
  std::exception_ptr error;
};

void run(const std::string& name, Duration copy_in, Duration kernel, Duration copy_out, nb::object job,
         std::optional<std::uint32_t> site) {
  if (copy_in < 0 || kernel < 0 || copy_out < 0) throw std::invalid_argument("durations must be >= 0");
  auto a = named(name);
  runtime::DeviceWork w{.copy_in = copy_in, .kernel = kernel, .copy_out = copy_out};
  PyJob pj{job, nullptr};
  if (!job.is_none()) {
    if (!PyCallable_Check(job.ptr())) throw std::invalid_argument("job must be callable");
    w.job = [](void* c) noexcept {
      auto* j = static_cast<PyJob*>(c);
      PyGILState_STATE gil;
      if (!try_acquire_gil(gil)) {  // the interpreter exits (gil.hpp): the job cannot run
        j->error = std::make_exception_ptr(std::runtime_error("the interpreter is exiting: the job did not run"));
        return;
      }
      try {
        j->fn();
      } catch (...) {
        j->error = std::current_exception();
      }
      PyGILState_Release(gil);
    };
    w.job_context = &pj;
  }
  {
    ReleaseGil unlocked;
    runtime::run_on_accelerator(*a, w, site);
  }
  if (pj.error) std::rethrow_exception(pj.error);
}

std::vector<std::tuple<std::uint32_t, std::uint32_t, Duration, Duration, Duration>> trace(const std::string& name) {
  auto a = named(name);
  std::vector<std::tuple<std::uint32_t, std::uint32_t, Duration, Duration, Duration>> out;
  for (const auto& r : a->trace()) out.emplace_back(r.site, r.segment, r.issued, r.start, r.finish);
  return out;
}

}  // namespace

void bind_accelerator(nb::module_& m) {
  m.def("accelerator_add", &add, "name"_a, "access"_a, "overhead_ns"_a = 0, "fifo_priority"_a = nb::none(),
        "cores"_a = std::vector<int>{}, "capacity"_a = 256, "trace_capacity"_a = 4096, "shared"_a = "", "serve"_a = true);
  m.def("accelerator_remove", &remove, "name"_a);
  m.def("accelerator_run", &run, "name"_a, "copy_in_ns"_a, "kernel_ns"_a, "copy_out_ns"_a, "job"_a = nb::none(),
        "site"_a = nb::none());
  m.def("accelerator_trace", &trace, "name"_a, nb::call_guard<ReleaseGil>());
  m.def("accelerator_requests", [](const std::string& name) { return named(name)->requests(); }, "name"_a);
  m.def("dispatch_priority", [] {
    const runtime::DispatchContext* d = runtime::current_dispatch();
    return d ? std::make_tuple(true, d->priority) : std::make_tuple(false, std::optional<int>{});
  });
}

}  // namespace chainrt::rclpy_exec
