// chainrt tracing: a tracetools-compatible library (SONAME libtracetools.so) that records the
// ros2_tracing events through the system's LTTng-UST 2.13 (provider `ros2`, ros2_tp.h).
//
// Why: the ros-kilted wheels vendor an LTTng-UST of ABI 0 (liblttng-ust.so.0, session-daemon
// socket "lttng-ust-sock-6") under a renamed file, so (a) no current lttng-sessiond (2.13:
// "lttng-ust-sock-8") accepts their processes and (b) their tracepoint call sites never
// register (the tracepoint runtime dlopen()s "liblttng-ust-tracepoint.so.0", a name the
// renamed copy does not answer to). rcl, rmw_fastrtps and rcl_lifecycle call tracetools only
// through the exported functions below (their only use of LTTng), so preloading this library
// in place of the wheel's libtracetools.so, together with empty stand-ins for the vendored
// LTTng libraries (stub.c; LTTng-UST 2.13 aborts a process that also holds ABI 0), makes a
// wheel process recordable by Debian's lttng-tools. `chainrt trace record` sets this up;
// docs/tracing.md explains it.
//
// The interface (function names and signatures: ros_trace_<event>, ros_trace_enabled_<event>,
// ros_trace_do_<event>, ros_trace_compile_status, tracetools::detail::*) is the one of the
// Kilted wheel's tracetools 8.6 (tracetools/tracetools.h, nm -D libtracetools.so). The Jazzy
// wheel's tracetools 8.2 exports a subset of it with the same signatures (it lacks only the
// rmw_client_init, rmw_send_request/_response and rmw_take_request/_response events), so the
// same library serves processes of both lines.
// Contract: every function is thread-safe, lock-free and does not allocate (LTTng-UST's
// tracepoint path); ros_trace_enabled_* is a load and a branch.
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "ros2_tp.h"

#define API __attribute__((visibility("default")))

// One event: the unconditional call, the enabled check and the call without check.
#define SHIM(name, params, ...)                                                              \
  API void ros_trace_##name params { lttng_ust_tracepoint(ros2, name, ##__VA_ARGS__); }       \
  API bool ros_trace_enabled_##name(void) { return lttng_ust_tracepoint_enabled(ros2, name); } \
  API void ros_trace_do_##name params { lttng_ust_do_tracepoint(ros2, name, ##__VA_ARGS__); }

#define CHAINRT_TRACETOOLS_VERSION "8.6.0-chainrt"

API bool ros_trace_compile_status(void) { return true; }

// rcl_init's `version` field is the tracetools version; the caller does not pass it.
API void ros_trace_rcl_init(const void *context_handle) {
  lttng_ust_tracepoint(ros2, rcl_init, context_handle, CHAINRT_TRACETOOLS_VERSION);
}
API bool ros_trace_enabled_rcl_init(void) { return lttng_ust_tracepoint_enabled(ros2, rcl_init); }
API void ros_trace_do_rcl_init(const void *context_handle) {
  lttng_ust_do_tracepoint(ros2, rcl_init, context_handle, CHAINRT_TRACETOOLS_VERSION);
}

SHIM(rcl_node_init, (const void *node_handle, const void *rmw_handle, const char *node_name,
                     const char *node_namespace),
     node_handle, rmw_handle, node_name, node_namespace)
SHIM(rmw_publisher_init, (const void *rmw_publisher_handle, const uint8_t *gid),
     rmw_publisher_handle, gid)
SHIM(rcl_publisher_init, (const void *publisher_handle, const void *node_handle,
                          const void *rmw_publisher_handle, const char *topic_name,
                          const size_t queue_depth),
     publisher_handle, node_handle, rmw_publisher_handle, topic_name, queue_depth)
SHIM(rclcpp_publish, (const void *publisher_handle, const void *message), publisher_handle,
     message)
SHIM(rclcpp_intra_publish, (const void *publisher_handle, const void *message), publisher_handle,
     message)
SHIM(rcl_publish, (const void *publisher_handle, const void *message), publisher_handle, message)
SHIM(rmw_publish, (const void *rmw_publisher_handle, const void *message, int64_t timestamp),
     rmw_publisher_handle, message, timestamp)
SHIM(rmw_subscription_init, (const void *rmw_subscription_handle, const uint8_t *gid),
     rmw_subscription_handle, gid)
SHIM(rcl_subscription_init, (const void *subscription_handle, const void *node_handle,
                             const void *rmw_subscription_handle, const char *topic_name,
                             const size_t queue_depth),
     subscription_handle, node_handle, rmw_subscription_handle, topic_name, queue_depth)
SHIM(rclcpp_subscription_init, (const void *subscription_handle, const void *subscription),
     subscription_handle, subscription)
SHIM(rclcpp_subscription_callback_added, (const void *subscription, const void *callback),
     subscription, callback)
SHIM(rmw_take, (const void *rmw_subscription_handle, const void *message,
                int64_t source_timestamp, const bool taken),
     rmw_subscription_handle, message, source_timestamp, taken)
SHIM(rcl_take, (const void *message), message)
SHIM(rclcpp_take, (const void *message), message)
SHIM(rcl_service_init, (const void *service_handle, const void *node_handle,
                        const void *rmw_service_handle, const char *service_name),
     service_handle, node_handle, rmw_service_handle, service_name)
SHIM(rclcpp_service_callback_added, (const void *service_handle, const void *callback),
     service_handle, callback)
SHIM(rmw_take_request, (const void *rmw_service_handle, const void *request,
                        const uint8_t *client_gid, int64_t sequence_number, const bool taken),
     rmw_service_handle, request, client_gid, sequence_number, taken)
SHIM(rmw_send_response, (const void *rmw_service_handle, const void *response,
                         const uint8_t *client_gid, int64_t sequence_number, int64_t timestamp),
     rmw_service_handle, response, client_gid, sequence_number, timestamp)
SHIM(rmw_client_init, (const void *rmw_client_handle, const uint8_t *gid), rmw_client_handle, gid)
SHIM(rcl_client_init, (const void *client_handle, const void *node_handle,
                       const void *rmw_client_handle, const char *service_name),
     client_handle, node_handle, rmw_client_handle, service_name)
SHIM(rmw_send_request, (const void *rmw_client_handle, const void *request,
                        int64_t sequence_number),
     rmw_client_handle, request, sequence_number)
SHIM(rmw_take_response, (const void *rmw_client_handle, const void *response,
                         int64_t sequence_number, int64_t source_timestamp, const bool taken),
     rmw_client_handle, response, sequence_number, source_timestamp, taken)
SHIM(rcl_timer_init, (const void *timer_handle, int64_t period), timer_handle, period)
SHIM(rclcpp_timer_callback_added, (const void *timer_handle, const void *callback), timer_handle,
     callback)
SHIM(rclcpp_timer_link_node, (const void *timer_handle, const void *node_handle), timer_handle,
     node_handle)
SHIM(rclcpp_callback_register, (const void *callback, const char *function_symbol), callback,
     function_symbol)
SHIM(callback_start, (const void *callback, const bool is_intra_process), callback,
     is_intra_process)
SHIM(callback_end, (const void *callback), callback)
SHIM(rcl_lifecycle_state_machine_init, (const void *node_handle, const void *state_machine),
     node_handle, state_machine)
SHIM(rcl_lifecycle_transition, (const void *state_machine, const char *start_label,
                                const char *goal_label),
     state_machine, start_label, goal_label)
SHIM(rclcpp_executor_get_next_ready, (void))
SHIM(rclcpp_executor_wait_for_work, (const int64_t timeout), timeout)
SHIM(rclcpp_executor_execute, (const void *handle), handle)
SHIM(rclcpp_ipb_to_subscription, (const void *ipb, const void *subscription), ipb, subscription)
SHIM(rclcpp_buffer_to_ipb, (const void *buffer, const void *ipb), buffer, ipb)
SHIM(rclcpp_construct_ring_buffer, (const void *buffer, const uint64_t capacity), buffer,
     capacity)
SHIM(rclcpp_ring_buffer_enqueue, (const void *buffer, const uint64_t index, const uint64_t size,
                                  const bool overwritten),
     buffer, index, size, overwritten)
SHIM(rclcpp_ring_buffer_dequeue, (const void *buffer, const uint64_t index, const uint64_t size),
     buffer, index, size)
SHIM(rclcpp_ring_buffer_clear, (const void *buffer), buffer)
