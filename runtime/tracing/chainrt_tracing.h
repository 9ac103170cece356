// chainrt tracing: the C interface of libchainrt_tracing.so (provider `chainrt`, see
// chainrt_tp.h for the events and their fields). Times are CLOCK_MONOTONIC ns.
#ifndef CHAINRT_TRACING_H
#define CHAINRT_TRACING_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
void chainrt_trace_executor_init(const void *executor, const char *name, const char *policy,
                                 uint32_t threads);
void chainrt_trace_chain_init(const void *executor, uint32_t chain, const char *name,
                              int64_t period, int64_t deadline);
void chainrt_trace_chain_callback(const void *executor, uint32_t chain, uint32_t position,
                                  const void *callback, const char *name, int leaf);
void chainrt_trace_chain_release(const void *executor, uint32_t chain, uint64_t instance,
                                 int64_t release, int64_t deadline);
void chainrt_trace_chain_complete(const void *executor, uint32_t chain, uint64_t instance,
                                  const void *callback, int64_t release, int64_t deadline,
                                  int missed);
#ifdef __cplusplus
}
#endif
#endif
