// A counting global operator new for the dispatch-path allocation tests (the runtime's and the
// rclcpp executor's): include it in exactly one translation unit of a test binary. Each thread
// counts its own allocations in t_allocs; a test reads its thread's counter before and after.
// Sanitizer builds replace operator new themselves (and Fast DDS mixes new/free, which ASan
// reports once operator new is replaced here): the counter stays 0 there and the check is off
// (CHAINRT_COUNT_ALLOCATIONS 0).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHAINRT_COUNT_ALLOCATIONS 0
#else
#define CHAINRT_COUNT_ALLOCATIONS 1
#endif

namespace {
thread_local std::uint64_t t_allocs = 0;
}

#if CHAINRT_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  ++t_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif
