// chainrt runtime: the thread's dispatch context (dispatch_context.hpp).
#include "chainrt/runtime/dispatch_context.hpp"

namespace chainrt::runtime {

namespace {
thread_local const DispatchContext* tl_current = nullptr;
thread_local DispatchContext tl_stored;  // set_dispatch's copy
}  // namespace

const DispatchContext* current_dispatch() noexcept { return tl_current; }

DispatchScope::DispatchScope(const DispatchContext& c) noexcept : context_(c), previous_(tl_current) {
  tl_current = &context_;
}

DispatchScope::~DispatchScope() { tl_current = previous_; }

void set_dispatch(const DispatchContext& c) noexcept {
  tl_stored = c;
  tl_current = &tl_stored;
}

void clear_dispatch() noexcept { tl_current = nullptr; }

}  // namespace chainrt::runtime
