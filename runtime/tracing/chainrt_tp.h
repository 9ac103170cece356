// chainrt tracing: the LTTng-UST 2.13 tracepoint provider `chainrt`, chainrt's chain-instance
// events. They complete the ros2_tracing events (provider `ros2`) of the same session: a
// callback is named by the same `callback` pointer as in ros2:callback_start/callback_end.
//   executor_init   an executor: its scheduling policy and thread count
//   chain_init      a chain: index, name, period and relative deadline D (ns)
//   chain_callback  the position of a callback in a chain (leaf: it completes an instance)
//   chain_release   an instance released: its nominal release a (the source timer's due
//                   time on CLOCK_MONOTONIC, the clock of the trace) and absolute deadline
//                   a + D (EDF ready-queue paper Sec. IV-B); emitted when the timer is taken
//   chain_complete  an instance complete: the leaf that ended it ran its ros2:callback_end
//                   just before on the same thread; `missed` when later than the deadline
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER chainrt

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "chainrt_tp.h"

#if !defined(CHAINRT_CHAINRT_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define CHAINRT_CHAINRT_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(chainrt, executor_init,
  LTTNG_UST_TP_ARGS(const void *, executor, const char *, name, const char *, policy,
                    uint32_t, threads),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(const void *, executor, executor)
                      lttng_ust_field_string(name, name) lttng_ust_field_string(policy, policy)
                      lttng_ust_field_integer(uint32_t, threads, threads)))

LTTNG_UST_TRACEPOINT_EVENT(chainrt, chain_init,
  LTTNG_UST_TP_ARGS(const void *, executor, uint32_t, chain, const char *, name,
                    int64_t, period, int64_t, deadline),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(const void *, executor, executor)
                      lttng_ust_field_integer(uint32_t, chain, chain)
                      lttng_ust_field_string(name, name)
                      lttng_ust_field_integer(int64_t, period, period)
                      lttng_ust_field_integer(int64_t, deadline, deadline)))

LTTNG_UST_TRACEPOINT_EVENT(chainrt, chain_callback,
  LTTNG_UST_TP_ARGS(const void *, executor, uint32_t, chain, uint32_t, position,
                    const void *, callback, const char *, name, int, leaf),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(const void *, executor, executor)
                      lttng_ust_field_integer(uint32_t, chain, chain)
                      lttng_ust_field_integer(uint32_t, position, position)
                      lttng_ust_field_integer_hex(const void *, callback, callback)
                      lttng_ust_field_string(name, name)
                      lttng_ust_field_integer(int, leaf, leaf)))

LTTNG_UST_TRACEPOINT_EVENT(chainrt, chain_release,
  LTTNG_UST_TP_ARGS(const void *, executor, uint32_t, chain, uint64_t, instance,
                    int64_t, release, int64_t, deadline),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(const void *, executor, executor)
                      lttng_ust_field_integer(uint32_t, chain, chain)
                      lttng_ust_field_integer(uint64_t, instance, instance)
                      lttng_ust_field_integer(int64_t, release, release)
                      lttng_ust_field_integer(int64_t, deadline, deadline)))

LTTNG_UST_TRACEPOINT_EVENT(chainrt, chain_complete,
  LTTNG_UST_TP_ARGS(const void *, executor, uint32_t, chain, uint64_t, instance,
                    const void *, callback, int64_t, release, int64_t, deadline, int, missed),
  LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(const void *, executor, executor)
                      lttng_ust_field_integer(uint32_t, chain, chain)
                      lttng_ust_field_integer(uint64_t, instance, instance)
                      lttng_ust_field_integer_hex(const void *, callback, callback)
                      lttng_ust_field_integer(int64_t, release, release)
                      lttng_ust_field_integer(int64_t, deadline, deadline)
                      lttng_ust_field_integer(int, missed, missed)))

#endif  // CHAINRT_CHAINRT_TP_H

#include <lttng/tracepoint-event.h>
