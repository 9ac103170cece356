// chainrt runtime: the accelerator client — how a user's callback runs a request on a shared
// accelerator (accelerator.hpp) with the priority of the chain whose callback is running, which
// the chainrt executor supplies (dispatch_context.hpp); PiCAS Sec. IV, the server after Kim et
// al., JSA 2018. The rclcpp executor re-exports it (chainrt/rclcpp/accelerator.hpp) and
// chainrt.rclpy wraps it (chainrt.rclpy.accelerator).
//
//   auto gpu = chainrt::runtime::add_accelerator({.name = "gpu", .access = AcceleratorAccess::Server});
//   ... in a callback run by a chainrt executor:
//   chainrt::runtime::run_on_accelerator("gpu", {.copy_in = 1'000'000, .kernel = 5'000'000});  // emulated
//   chainrt::runtime::run_on_accelerator("gpu", {}, [&] { launch_and_synchronize(); });        // real work
//
// Two forms. The continuation form, submit_on_accelerator(), queues the request and returns: the
// callback's thread is free while the request waits and runs, and `then` (the continuation's
// release: e.g. a publish or a guard condition that triggers the rest of the callback) runs
// when the device has run it — the form the analyses' server bounds assume (docs/accelerator.md,
// "Which form each bound covers"). The blocking form, run_on_accelerator(), blocks its caller
// until the request is done, in both modes:
//  - direct: the request joins the device's first-come-first-served queue;
//  - server: it is queued at the dispatching callback's effective priority (DispatchContext),
//    and the server thread runs the most urgent queued request next (a running one is never
//    preempted).
// Outside a chainrt dispatch (a plain thread, another executor's callback) and for a callback
// the model does not describe, the request has no priority: it is served after every
// prioritized request, first come, first served among those — the lowest priority, never an
// error (current_dispatch() tells a caller which case it is in).
//
// Contract of run_on_accelerator: thread-safe (any number of threads at once); allocates nothing
// and takes one short registry lock for the lookup by name; it throws std::invalid_argument for
// an unknown name, std::runtime_error when the accelerator's queue is full or it was stopped
// (nothing ran), and rethrows on the calling thread what the job threw on the device thread
// (the accelerator goes on serving). Destroying or stopping an accelerator while a server-mode
// call waits on it is the owner's error (the registry and every call hold a shared_ptr, so only
// an explicit stop() can do it).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/dispatch_context.hpp"

namespace chainrt::runtime {

// The process's accelerators by name. Thread-safe; register and add allocate.
// Registers `acc` under its options().name; throws std::invalid_argument when the name is empty
// or taken.
void register_accelerator(std::shared_ptr<SharedAccelerator> acc);
// Makes an accelerator (default device: the emulated one) and registers it.
std::shared_ptr<SharedAccelerator> add_accelerator(AcceleratorOptions options,
                                                   std::unique_ptr<DeviceBackend> device = nullptr);
// Removes it from the registry (calls already holding it finish); false when absent.
bool unregister_accelerator(std::string_view name);
// nullptr when absent. No allocation.
std::shared_ptr<SharedAccelerator> find_accelerator(std::string_view name) noexcept;

// Runs `work` (the emulated parts and, if set, work.job) on `acc` for the calling thread's
// dispatch and returns when it is done. `site`: the request's site in the accelerator's trace
// (default: the dispatching callback's id, 0 outside a dispatch).
void run_on_accelerator(SharedAccelerator& acc, const DeviceWork& work, std::optional<std::uint32_t> site = {});
void run_on_accelerator(std::string_view accelerator, const DeviceWork& work,
                        std::optional<std::uint32_t> site = {});

// The continuation form: queues `work` on `acc` for the calling thread's dispatch (direct: first
// come, first served; server: at the dispatch's priority) and returns at once; `then(context,
// token)` runs on the accelerator's thread (a client process's completion thread, for a shared
// accelerator) when the device has run it, in completion order. `then` must not block or throw.
// `site` as run_on_accelerator's. Thread-safe, allocates nothing; throws std::invalid_argument for
// an unknown name and std::runtime_error when the queue is full or the accelerator is stopped
// (nothing queued, `then` never runs).
void submit_on_accelerator(SharedAccelerator& acc, const DeviceWork& work, SharedAccelerator::Completion then,
                           void* context, std::uint64_t token = 0, std::optional<std::uint32_t> site = {});
void submit_on_accelerator(std::string_view accelerator, const DeviceWork& work, SharedAccelerator::Completion then,
                           void* context, std::uint64_t token = 0, std::optional<std::uint32_t> site = {});

// The same with `job()` as the request's real work, run on the accelerator's thread after the
// emulated parts of `work` (zero for a real backend's request); what it throws is rethrown here.
template <class Acc, class F>
  requires std::is_invocable_v<F&>
void run_on_accelerator(Acc&& acc, DeviceWork work, F&& job, std::optional<std::uint32_t> site = {}) {
  struct Context {
    std::remove_reference_t<F>* f;
    std::exception_ptr error;
  } context{&job, nullptr};
  work.job = [](void* c) noexcept {
    auto* x = static_cast<Context*>(c);
    try {
      (*x->f)();
    } catch (...) {
      x->error = std::current_exception();
    }
  };
  work.job_context = &context;
  run_on_accelerator(std::forward<Acc>(acc), static_cast<const DeviceWork&>(work), site);
  if (context.error) std::rethrow_exception(context.error);
}

}  // namespace chainrt::runtime
