// chainrt rclcpp: shared accelerators from unmodified-style rclcpp callbacks (PiCAS Sec. IV; the
// server after Kim et al., JSA 2018). A callback run by ChainExecutor calls
// run_on_accelerator(); the request carries the priority of the chain whose callback is
// running (the executor sets the thread's dispatch context around every callback), so the
// user's code passes none:
//
//   #include <chainrt/rclcpp/accelerator.hpp>
//   namespace acc = chainrt::rclcpp;
//   // once, before spinning: the host's device, reached through the chain-priority server
//   acc::add_accelerator({.name = "gpu", .access = chainrt::AcceleratorAccess::Server});
//   // in any callback:
//   acc::run_on_accelerator("gpu", {.copy_in = 1'000'000, .kernel = 8'000'000});      // emulated
//   acc::run_on_accelerator("gpu", {}, [&] { infer(frame); });  // real work, on the device thread
//
// The contract (blocking, thread-safe, no allocation, what a call outside a ChainExecutor
// dispatch gets — the lowest priority — and what it throws) is the runtime's:
// chainrt/runtime/accelerator_client.hpp.
#pragma once

#include "chainrt/runtime/accelerator_client.hpp"

namespace chainrt::rclcpp {

using runtime::add_accelerator;
using runtime::current_dispatch;
using runtime::DeviceBackend;
using runtime::DeviceWork;
using runtime::DispatchContext;
using runtime::EmulatedDevice;
using runtime::find_accelerator;
using runtime::register_accelerator;
using runtime::run_on_accelerator;
using runtime::SharedAccelerator;
using runtime::submit_on_accelerator;
using runtime::unregister_accelerator;
using AcceleratorOptions = runtime::AcceleratorOptions;

}  // namespace chainrt::rclcpp
