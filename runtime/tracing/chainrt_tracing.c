// chainrt tracing: libchainrt_tracing.so, the provider `chainrt` (chainrt_tp.h) behind plain C
// functions. The runtime never links it: runtime/src/tracing.cpp finds these functions with
// dlopen(RTLD_NOLOAD) when `chainrt trace record` preloaded this library, so a chainrt binary
// carries no LTTng dependency and pays one predictable branch per event when not traced.
// Contract: thread-safe, lock-free, no allocation (LTTng-UST's tracepoint path).
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "chainrt_tp.h"

#include "chainrt_tracing.h"

#define API __attribute__((visibility("default")))

API void chainrt_trace_executor_init(const void *executor, const char *name, const char *policy,
                                     uint32_t threads) {
  lttng_ust_tracepoint(chainrt, executor_init, executor, name, policy, threads);
}
API void chainrt_trace_chain_init(const void *executor, uint32_t chain, const char *name,
                                  int64_t period, int64_t deadline) {
  lttng_ust_tracepoint(chainrt, chain_init, executor, chain, name, period, deadline);
}
API void chainrt_trace_chain_callback(const void *executor, uint32_t chain, uint32_t position,
                                      const void *callback, const char *name, int leaf) {
  lttng_ust_tracepoint(chainrt, chain_callback, executor, chain, position, callback, name, leaf);
}
API void chainrt_trace_chain_release(const void *executor, uint32_t chain, uint64_t instance,
                                     int64_t release, int64_t deadline) {
  lttng_ust_tracepoint(chainrt, chain_release, executor, chain, instance, release, deadline);
}
API void chainrt_trace_chain_complete(const void *executor, uint32_t chain, uint64_t instance,
                                      const void *callback, int64_t release, int64_t deadline,
                                      int missed) {
  lttng_ust_tracepoint(chainrt, chain_complete, executor, chain, instance, callback, release,
                       deadline, missed);
}
