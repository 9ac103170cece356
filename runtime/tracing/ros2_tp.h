// chainrt tracing: the LTTng-UST 2.13 tracepoint provider `ros2`, the events of ROS 2's
// tracetools (ros2_tracing) with the same event names, field names and field types, so that
// trace analyses written for ros2_tracing (tracetools_analysis, CARET, Trace Compass) read a
// trace recorded through chainrt's tracetools-compatible library (tracetools_shim.c).
// Written from the tracetools interface (the wheel's tracetools/tracetools.h signatures and
// the field names of its probe); no ros2_tracing code. Pointers are recorded as hex integers,
// GIDs as 16-byte arrays (RMW_GID_STORAGE_SIZE of Kilted and Jazzy), booleans as int.
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ros2

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "ros2_tp.h"

#if !defined(CHAINRT_ROS2_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define CHAINRT_ROS2_TP_H

#include <lttng/tracepoint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHAINRT_GID_SIZE 16

#define PTR(f) lttng_ust_field_integer_hex(const void *, f, f)
#define STR(f) lttng_ust_field_string(f, f)

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_init,
  LTTNG_UST_TP_ARGS(const void *, context_handle, const char *, version),
  LTTNG_UST_TP_FIELDS(PTR(context_handle) STR(version)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_node_init,
  LTTNG_UST_TP_ARGS(const void *, node_handle, const void *, rmw_handle, const char *, node_name,
                    const char *, node_namespace),
  LTTNG_UST_TP_FIELDS(PTR(node_handle) PTR(rmw_handle) STR(node_name)
                      lttng_ust_field_string(namespace, node_namespace)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_publisher_init,
  LTTNG_UST_TP_ARGS(const void *, rmw_publisher_handle, const uint8_t *, gid),
  LTTNG_UST_TP_FIELDS(PTR(rmw_publisher_handle)
                      lttng_ust_field_array(uint8_t, gid, gid, CHAINRT_GID_SIZE)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_publisher_init,
  LTTNG_UST_TP_ARGS(const void *, publisher_handle, const void *, node_handle,
                    const void *, rmw_publisher_handle, const char *, topic_name,
                    size_t, queue_depth),
  LTTNG_UST_TP_FIELDS(PTR(publisher_handle) PTR(node_handle) PTR(rmw_publisher_handle)
                      STR(topic_name) lttng_ust_field_integer(size_t, queue_depth, queue_depth)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_publish,
  LTTNG_UST_TP_ARGS(const void *, publisher_handle, const void *, message),
  LTTNG_UST_TP_FIELDS(PTR(publisher_handle) PTR(message)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_intra_publish,
  LTTNG_UST_TP_ARGS(const void *, publisher_handle, const void *, message),
  LTTNG_UST_TP_FIELDS(PTR(publisher_handle) PTR(message)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_publish,
  LTTNG_UST_TP_ARGS(const void *, publisher_handle, const void *, message),
  LTTNG_UST_TP_FIELDS(PTR(publisher_handle) PTR(message)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_publish,
  LTTNG_UST_TP_ARGS(const void *, rmw_publisher_handle, const void *, message, int64_t, timestamp),
  LTTNG_UST_TP_FIELDS(PTR(rmw_publisher_handle) PTR(message)
                      lttng_ust_field_integer(int64_t, timestamp, timestamp)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_subscription_init,
  LTTNG_UST_TP_ARGS(const void *, rmw_subscription_handle, const uint8_t *, gid),
  LTTNG_UST_TP_FIELDS(PTR(rmw_subscription_handle)
                      lttng_ust_field_array(uint8_t, gid, gid, CHAINRT_GID_SIZE)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_subscription_init,
  LTTNG_UST_TP_ARGS(const void *, subscription_handle, const void *, node_handle,
                    const void *, rmw_subscription_handle, const char *, topic_name,
                    size_t, queue_depth),
  LTTNG_UST_TP_FIELDS(PTR(subscription_handle) PTR(node_handle) PTR(rmw_subscription_handle)
                      STR(topic_name) lttng_ust_field_integer(size_t, queue_depth, queue_depth)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_subscription_init,
  LTTNG_UST_TP_ARGS(const void *, subscription_handle, const void *, subscription),
  LTTNG_UST_TP_FIELDS(PTR(subscription_handle) PTR(subscription)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_subscription_callback_added,
  LTTNG_UST_TP_ARGS(const void *, subscription, const void *, callback),
  LTTNG_UST_TP_FIELDS(PTR(subscription) PTR(callback)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_take,
  LTTNG_UST_TP_ARGS(const void *, rmw_subscription_handle, const void *, message,
                    int64_t, source_timestamp, bool, taken),
  LTTNG_UST_TP_FIELDS(PTR(rmw_subscription_handle) PTR(message)
                      lttng_ust_field_integer(int64_t, source_timestamp, source_timestamp)
                      lttng_ust_field_integer(int, taken, taken ? 1 : 0)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_take,
  LTTNG_UST_TP_ARGS(const void *, message), LTTNG_UST_TP_FIELDS(PTR(message)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_take,
  LTTNG_UST_TP_ARGS(const void *, message), LTTNG_UST_TP_FIELDS(PTR(message)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_service_init,
  LTTNG_UST_TP_ARGS(const void *, service_handle, const void *, node_handle,
                    const void *, rmw_service_handle, const char *, service_name),
  LTTNG_UST_TP_FIELDS(PTR(service_handle) PTR(node_handle) PTR(rmw_service_handle)
                      STR(service_name)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_service_callback_added,
  LTTNG_UST_TP_ARGS(const void *, service_handle, const void *, callback),
  LTTNG_UST_TP_FIELDS(PTR(service_handle) PTR(callback)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_take_request,
  LTTNG_UST_TP_ARGS(const void *, rmw_service_handle, const void *, request,
                    const uint8_t *, client_gid, int64_t, sequence_number, bool, taken),
  LTTNG_UST_TP_FIELDS(PTR(rmw_service_handle) PTR(request)
                      lttng_ust_field_array(uint8_t, client_gid, client_gid, CHAINRT_GID_SIZE)
                      lttng_ust_field_integer(int64_t, sequence_number, sequence_number)
                      lttng_ust_field_integer(int, taken, taken ? 1 : 0)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_send_response,
  LTTNG_UST_TP_ARGS(const void *, rmw_service_handle, const void *, response,
                    const uint8_t *, client_gid, int64_t, sequence_number, int64_t, timestamp),
  LTTNG_UST_TP_FIELDS(PTR(rmw_service_handle) PTR(response)
                      lttng_ust_field_array(uint8_t, client_gid, client_gid, CHAINRT_GID_SIZE)
                      lttng_ust_field_integer(int64_t, sequence_number, sequence_number)
                      lttng_ust_field_integer(int64_t, timestamp, timestamp)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_client_init,
  LTTNG_UST_TP_ARGS(const void *, rmw_client_handle, const uint8_t *, gid),
  LTTNG_UST_TP_FIELDS(PTR(rmw_client_handle)
                      lttng_ust_field_array(uint8_t, gid, gid, CHAINRT_GID_SIZE)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_client_init,
  LTTNG_UST_TP_ARGS(const void *, client_handle, const void *, node_handle,
                    const void *, rmw_client_handle, const char *, service_name),
  LTTNG_UST_TP_FIELDS(PTR(client_handle) PTR(node_handle) PTR(rmw_client_handle)
                      STR(service_name)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_send_request,
  LTTNG_UST_TP_ARGS(const void *, rmw_client_handle, const void *, request,
                    int64_t, sequence_number),
  LTTNG_UST_TP_FIELDS(PTR(rmw_client_handle) PTR(request)
                      lttng_ust_field_integer(int64_t, sequence_number, sequence_number)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rmw_take_response,
  LTTNG_UST_TP_ARGS(const void *, rmw_client_handle, const void *, response,
                    int64_t, sequence_number, int64_t, source_timestamp, bool, taken),
  LTTNG_UST_TP_FIELDS(PTR(rmw_client_handle) PTR(response)
                      lttng_ust_field_integer(int64_t, sequence_number, sequence_number)
                      lttng_ust_field_integer(int64_t, source_timestamp, source_timestamp)
                      lttng_ust_field_integer(int, taken, taken ? 1 : 0)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_timer_init,
  LTTNG_UST_TP_ARGS(const void *, timer_handle, int64_t, period),
  LTTNG_UST_TP_FIELDS(PTR(timer_handle) lttng_ust_field_integer(int64_t, period, period)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_timer_callback_added,
  LTTNG_UST_TP_ARGS(const void *, timer_handle, const void *, callback),
  LTTNG_UST_TP_FIELDS(PTR(timer_handle) PTR(callback)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_timer_link_node,
  LTTNG_UST_TP_ARGS(const void *, timer_handle, const void *, node_handle),
  LTTNG_UST_TP_FIELDS(PTR(timer_handle) PTR(node_handle)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_callback_register,
  LTTNG_UST_TP_ARGS(const void *, callback, const char *, function_symbol),
  LTTNG_UST_TP_FIELDS(PTR(callback) lttng_ust_field_string(symbol, function_symbol)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, callback_start,
  LTTNG_UST_TP_ARGS(const void *, callback, bool, is_intra_process),
  LTTNG_UST_TP_FIELDS(PTR(callback)
                      lttng_ust_field_integer(int, is_intra_process, is_intra_process ? 1 : 0)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, callback_end,
  LTTNG_UST_TP_ARGS(const void *, callback), LTTNG_UST_TP_FIELDS(PTR(callback)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_lifecycle_state_machine_init,
  LTTNG_UST_TP_ARGS(const void *, node_handle, const void *, state_machine),
  LTTNG_UST_TP_FIELDS(PTR(node_handle) PTR(state_machine)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rcl_lifecycle_transition,
  LTTNG_UST_TP_ARGS(const void *, state_machine, const char *, start_label,
                    const char *, goal_label),
  LTTNG_UST_TP_FIELDS(PTR(state_machine) STR(start_label) STR(goal_label)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_executor_get_next_ready,
  LTTNG_UST_TP_ARGS(), LTTNG_UST_TP_FIELDS())

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_executor_wait_for_work,
  LTTNG_UST_TP_ARGS(int64_t, timeout),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int64_t, timeout, timeout)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_executor_execute,
  LTTNG_UST_TP_ARGS(const void *, handle), LTTNG_UST_TP_FIELDS(PTR(handle)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_ipb_to_subscription,
  LTTNG_UST_TP_ARGS(const void *, ipb, const void *, subscription),
  LTTNG_UST_TP_FIELDS(PTR(ipb) PTR(subscription)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_buffer_to_ipb,
  LTTNG_UST_TP_ARGS(const void *, buffer, const void *, ipb),
  LTTNG_UST_TP_FIELDS(PTR(buffer) PTR(ipb)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_construct_ring_buffer,
  LTTNG_UST_TP_ARGS(const void *, buffer, uint64_t, capacity),
  LTTNG_UST_TP_FIELDS(PTR(buffer) lttng_ust_field_integer(uint64_t, capacity, capacity)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_ring_buffer_enqueue,
  LTTNG_UST_TP_ARGS(const void *, buffer, uint64_t, index, uint64_t, size, bool, overwritten),
  LTTNG_UST_TP_FIELDS(PTR(buffer) lttng_ust_field_integer(uint64_t, index, index)
                      lttng_ust_field_integer(uint64_t, size, size)
                      lttng_ust_field_integer(int, overwritten, overwritten ? 1 : 0)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_ring_buffer_dequeue,
  LTTNG_UST_TP_ARGS(const void *, buffer, uint64_t, index, uint64_t, size),
  LTTNG_UST_TP_FIELDS(PTR(buffer) lttng_ust_field_integer(uint64_t, index, index)
                      lttng_ust_field_integer(uint64_t, size, size)))

LTTNG_UST_TRACEPOINT_EVENT(ros2, rclcpp_ring_buffer_clear,
  LTTNG_UST_TP_ARGS(const void *, buffer), LTTNG_UST_TP_FIELDS(PTR(buffer)))

#undef PTR
#undef STR

#endif  // CHAINRT_ROS2_TP_H

#include <lttng/tracepoint-event.h>
