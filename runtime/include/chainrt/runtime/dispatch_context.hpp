// chainrt runtime: the dispatch context — which callback an executor thread is running now and
// the priority it runs at, so that code called from a user's callback (the accelerator client,
// accelerator_client.hpp) can act on the chain's behalf without the user passing anything
// (PiCAS Sec. IV: a request to a shared accelerator carries its chain's priority).
//
// Each chainrt dispatcher (rclcpp's ChainExecutor, chainrt.rclpy's loop) sets it on the
// executor thread around the user's callback with a DispatchScope; no other executor does.
//
// Contract: thread-local; current_dispatch() and DispatchScope are lock-free, allocate nothing,
// never throw and may be used from any thread (each sees its own).
#pragma once

#include <cstdint>
#include <optional>

namespace chainrt::runtime {

struct DispatchContext {
  // The dispatching callback's effective priority as its ready queue holds it (facts.hpp's
  // effective_priority: the callback's own, else its chain's x 1024 + its position; LaME's
  // decision under lame; higher is more urgent); nullopt: it has none (not in the model, or a
  // model without priorities), and it counts as the lowest.
  std::optional<int> priority;
  std::uint32_t callback = 0;  // the dispatcher's own id of the callback (its trace's)
};

// The context of the dispatch running on this thread; nullptr outside a chainrt dispatch.
const DispatchContext* current_dispatch() noexcept;

// Sets the thread's context for its lifetime and restores the previous one (nested dispatch:
// spin_some from inside a callback).
class DispatchScope {
 public:
  explicit DispatchScope(const DispatchContext& c) noexcept;
  ~DispatchScope();
  DispatchScope(const DispatchScope&) = delete;
  DispatchScope& operator=(const DispatchScope&) = delete;

 private:
  DispatchContext context_;
  const DispatchContext* previous_;
};

// For dispatchers whose begin and end are separate calls (chainrt.rclpy's next()/done()):
// set the thread's context (a copy kept in thread-local storage), or clear it.
void set_dispatch(const DispatchContext& c) noexcept;
void clear_dispatch() noexcept;

}  // namespace chainrt::runtime
