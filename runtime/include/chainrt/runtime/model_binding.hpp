// chainrt runtime: use a chainrt model with YOUR OWN nodes (the workspace use case, see
// docs/workspace.md). The model names the callbacks; a node of the user's package creates its
// timers and subscriptions with `binding.options("<callback name>")`, which gives the callback
// its model name (so the executor monitors the model's chains), its effective priority (PiCAS /
// LaME rule, sched::effective_priority) and its thread affinity; `executor_options()` gives the
// model executor's policy and threads; `add_chains()` registers the chains for monitoring.
//
// Chain instances across a topic: the publishing callback writes the release of its instance
// (current_stamp().release, CLOCK_MONOTONIC) into the message's header stamp (`to_msg_time`);
// the subscription rebuilds the chain-instance stamp with `stamp_from_header(chain)`: release,
// absolute deadline d = a + D of that chain (EDF ready-queue paper Sec. IV-B). This covers
// linear chains; a branching chain whose leaves run in one executor needs the instance number
// as well (carry the whole Stamp, as the model runner's ChainHeader does).
//
// Everything here runs before start() and may allocate; the StampOf lambdas are called on the
// dispatch path and do not allocate.
#pragma once

#include <builtin_interfaces/msg/time.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/node.hpp"
#include "chainrt/sched/setup.hpp"

namespace chainrt::runtime {

// CLOCK_MONOTONIC ns <-> builtin_interfaces/Time (sec, nanosec); negative values clamp to 0.
void to_msg_time(Duration t, builtin_interfaces::msg::Time& out) noexcept;
Duration from_msg_time(const builtin_interfaces::msg::Time& t) noexcept;

class ModelBinding {
 public:
  // Binds to model executor `executor` (default: the first one). Throws std::invalid_argument
  // with a one-line reason when the executor does not exist.
  explicit ModelBinding(Model model, const std::string& executor = "");

  const Model& model() const noexcept { return model_; }
  // Policy and threads (pinning, SCHED_FIFO, SCHED_DEADLINE) of the model executor.
  ExecutorOptions executor_options() const;
  // Scheduling options of the model callback `callback` (name, priority, affinity). Throws
  // std::invalid_argument when the model has no such callback on this executor.
  CallbackOptions options(const std::string& callback, CallbackGroup* group = nullptr) const;
  // Register every model chain with the executor (the chain index is the model's order).
  void add_chains(Executor& executor) const;
  // The model callbacks of this executor that no options() call has asked for (unbound).
  std::vector<std::string> unbound() const;
  // Throws std::invalid_argument naming the unbound model callbacks (docs/model.md, "Binding
  // real callbacks to the model": an unbound model callback is an error at start); call it
  // after creating the nodes, before Executor::start(). Not calling it allows unbound ones.
  void check_bound() const;
  // Index and relative deadline D of a model chain; throws std::invalid_argument if unknown.
  std::uint32_t chain_index(const std::string& chain) const;
  Duration chain_deadline(const std::string& chain) const;

  // A subscription's StampOf for messages with a std_msgs/Header-like `header` member (or for a
  // std_msgs/Header itself) whose stamp carries the release of the chain instance (see above).
  template <class Msg>
  auto stamp_from_header(const std::string& chain) const {
    const std::uint32_t index = chain_index(chain);
    const Duration d = chain_deadline(chain);
    return [index, d](const Msg& m) noexcept {
      Stamp s;
      if constexpr (requires { m.header.stamp; }) s.release = from_msg_time(m.header.stamp);
      else s.release = from_msg_time(m.stamp);  // a std_msgs/Header itself
      s.deadline = d > 0 ? s.release + d : sched::kNoDeadline;
      s.chain = index;
      return s;
    };
  }

 private:
  Model model_;
  std::size_t executor_ = 0;
  sched::ExecutorSetup setup_;
  mutable std::vector<bool> bound_;  // per setup_ callback: options() asked for it
};

}  // namespace chainrt::runtime
