// chainrt runtime: standard tracing (docs/tracing.md). The executor reports what a ros2_tracing
// analysis expects of an executor, through the tracetools library that rcl itself loads (the
// wheels' or a sourced ROS 2's libtracetools.so, or chainrt's compatible one that
// `chainrt trace record` preloads):
//   ros2:rcl_timer_init, rclcpp_timer_link_node, rclcpp_timer_callback_added,
//   rclcpp_subscription_init, rclcpp_subscription_callback_added, rclcpp_callback_register
//       at prepare(): each callback tied to its rcl handle (rcl_subscription_t*; a chainrt
//       timer is not an rcl timer, its handle is the chainrt::runtime::Timer object);
//   ros2:rclcpp_executor_get_next_ready / _wait_for_work(timeout) / _execute(handle)
//       the executor's selection, idle wait and dispatch, as rclcpp's executors report them;
//   ros2:callback_start / callback_end around every callback instance;
// and chainrt's chain-instance events (provider `chainrt`, runtime/tracing/chainrt_tp.h:
// executor_init, chain_init, chain_callback, chain_release, chain_complete) through
// libchainrt_tracing.so when it is loaded.
// Nothing is linked: the functions are looked up once, with dlopen(RTLD_NOLOAD) of the loaded
// libraries; a missing one is a null pointer and its event is not emitted. Environment
// CHAINRT_TRACING=0 turns every hook off (no call at all).
// Dispatch-path cost: per event one null check and one indirect call; when the event is not
// being recorded, tracetools' function returns after a load and a branch. When it is, the
// event goes through LTTng-UST's lock-free ring buffer (no lock, no allocation after a
// thread's first event).
#pragma once

#include <cstdint>

namespace chainrt::runtime::tracing {

struct Hooks {
  // tracetools (ros_trace_<event>; each checks itself whether the event is enabled)
  void (*rcl_timer_init)(const void* timer_handle, std::int64_t period) = nullptr;
  void (*timer_link_node)(const void* timer_handle, const void* node_handle) = nullptr;
  void (*timer_callback_added)(const void* timer_handle, const void* callback) = nullptr;
  void (*subscription_init)(const void* subscription_handle, const void* subscription) = nullptr;
  void (*subscription_callback_added)(const void* subscription, const void* callback) = nullptr;
  void (*callback_register)(const void* callback, const char* symbol) = nullptr;
  void (*get_next_ready)() = nullptr;
  void (*wait_for_work)(std::int64_t timeout) = nullptr;
  void (*execute)(const void* handle) = nullptr;
  void (*callback_start)(const void* callback, bool is_intra_process) = nullptr;
  void (*callback_end)(const void* callback) = nullptr;
  // libchainrt_tracing.so (chainrt_tracing.h)
  void (*executor_init)(const void*, const char*, const char*, std::uint32_t) = nullptr;
  void (*chain_init)(const void*, std::uint32_t, const char*, std::int64_t, std::int64_t) = nullptr;
  void (*chain_callback)(const void*, std::uint32_t, std::uint32_t, const void*, const char*,
                         int) = nullptr;
  void (*chain_release)(const void*, std::uint32_t, std::uint64_t, std::int64_t,
                        std::int64_t) = nullptr;
  void (*chain_complete)(const void*, std::uint32_t, std::uint64_t, const void*, std::int64_t,
                         std::int64_t, int) = nullptr;
  bool any = false;  // at least one function found
};

// The hooks of this process, resolved on the first call (thread-safe; allocates then only);
// later calls are a load. Call it once before the dispatch path (Executor::prepare does).
const Hooks& hooks() noexcept;

}  // namespace chainrt::runtime::tracing
