// chainrt runtime: resolution of the tracing hooks (see tracing.hpp).
#include "chainrt/runtime/tracing.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace chainrt::runtime::tracing {
namespace {

template <class F>
void find(void* lib, const char* symbol, F& out, bool& any) {
  if (lib == nullptr) return;
  if (void* p = dlsym(lib, symbol)) {
    out = reinterpret_cast<F>(p);
    any = true;
  }
}

Hooks resolve() noexcept {
  Hooks h;
  // CHAINRT_TRACING=0: emit nothing (not even the calls into tracetools; for comparisons).
  if (const char* e = std::getenv("CHAINRT_TRACING"); e != nullptr && std::strcmp(e, "0") == 0)
    return h;
  // Already loaded (rcl depends on it; RTLD_NOLOAD loads nothing): the wheels', a sourced
  // ROS 2's, or chainrt's compatible library preloaded under the same SONAME.
  void* tt = dlopen("libtracetools.so", RTLD_LAZY | RTLD_NOLOAD);
  find(tt, "ros_trace_rcl_timer_init", h.rcl_timer_init, h.any);
  find(tt, "ros_trace_rclcpp_timer_link_node", h.timer_link_node, h.any);
  find(tt, "ros_trace_rclcpp_timer_callback_added", h.timer_callback_added, h.any);
  find(tt, "ros_trace_rclcpp_subscription_init", h.subscription_init, h.any);
  find(tt, "ros_trace_rclcpp_subscription_callback_added", h.subscription_callback_added, h.any);
  find(tt, "ros_trace_rclcpp_callback_register", h.callback_register, h.any);
  find(tt, "ros_trace_rclcpp_executor_get_next_ready", h.get_next_ready, h.any);
  find(tt, "ros_trace_rclcpp_executor_wait_for_work", h.wait_for_work, h.any);
  find(tt, "ros_trace_rclcpp_executor_execute", h.execute, h.any);
  find(tt, "ros_trace_callback_start", h.callback_start, h.any);
  find(tt, "ros_trace_callback_end", h.callback_end, h.any);
  // Only when `chainrt trace record` (or the user) preloaded it.
  void* cr = dlopen("libchainrt_tracing.so", RTLD_LAZY | RTLD_NOLOAD);
  find(cr, "chainrt_trace_executor_init", h.executor_init, h.any);
  find(cr, "chainrt_trace_chain_init", h.chain_init, h.any);
  find(cr, "chainrt_trace_chain_callback", h.chain_callback, h.any);
  find(cr, "chainrt_trace_chain_release", h.chain_release, h.any);
  find(cr, "chainrt_trace_chain_complete", h.chain_complete, h.any);
  // The handles stay open for the life of the process (the functions are used until exit).
  return h;
}

}  // namespace

const Hooks& hooks() noexcept {
  static const Hooks h = resolve();
  return h;
}

}  // namespace chainrt::runtime::tracing
