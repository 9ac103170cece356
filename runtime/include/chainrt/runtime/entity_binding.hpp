// chainrt runtime: binding the entities of UNMODIFIED ROS 2 nodes (rclcpp's here; chainrt.rclpy
// has the same rule in python/chainrt/rclpy/binding.py) to the callbacks of one model executor.
//
// A model callback is matched by its node's name and
//   - a timer: its period (the real timer's period within 1 %),
//   - a subscription: its topic (`hi_data` matches `/hi_data`),
//   - a service or a client: its service name (the model's `topic` field),
// the first unused candidate in file order when a node has several. An explicit binding by
// name wins over the rule. Entities that match nothing run with no priority (last under
// fp/picas), no deadline (last under edf) and their ROS kind rank under ros-default; they are
// named "<node>/<what>" (unmatched_name) and listed as unmatched.
//
// The scheduling parameters of a matched callback (effective priority, affinity over the
// executor's threads) and the executor's policy and threads are sched::make_setup's, the
// simulator's. Everything here runs when entities are (re)bound, off the dispatch path, and
// allocates.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/sched/setup.hpp"

namespace chainrt::runtime {

class EntityBinder {
 public:
  // Binds to model executor `executor`; "" = the model's only executor, or else the one hosting
  // the first of `node_names` the model has. Throws std::invalid_argument with a one-line reason
  // when that executor does not exist or cannot be chosen. `policy` / `threads` as
  // sched::make_setup.
  EntityBinder(Model model, const std::string& executor, const std::vector<std::string>& node_names,
               std::optional<Policy> policy = std::nullopt, std::optional<int> threads = std::nullopt);

  const Model& model() const noexcept { return model_; }
  const sched::ExecutorSetup& setup() const noexcept { return setup_; }
  const std::string& executor_name() const { return model_.executors[setup_.executor].name; }
  // Callbacks of the executor (CallbackId order of setup()); its position is the "model id".
  std::size_t size() const noexcept { return setup_.callbacks.size(); }
  const Callback& callback(std::size_t model_id) const { return model_.callbacks[setup_.callbacks[model_id]]; }

  // Forget earlier matches (a new binding round over every entity).
  void reset() { used_.assign(size(), false); }
  // The first unused model callback of node `node` (its name, without namespace) matching an
  // entity of `kind` (Timer, Subscription, Service or Client) with `period` (timers) or
  // `topic` (the ROS topic or service name); it is marked used. nullopt when none matches.
  std::optional<std::size_t> match(const std::string& node, CallbackKind kind, Duration period,
                                   const std::string& topic);
  // The model callback named `name` on this executor (marked used), or nullopt.
  std::optional<std::size_t> by_name(const std::string& name);
  // Model callbacks no entity was bound to since reset().
  std::vector<std::string> unused() const;

 private:
  Model model_;
  sched::ExecutorSetup setup_;
  std::vector<bool> used_;
};

// What names an entity that matches no model callback, after its node ("<node>/<label>", chainrt.rclpy's
// names): "timer@<period in ms, %g>", "sub:<topic>", "service:<name>", "client:<name>".
std::string entity_label(CallbackKind kind, Duration period, const std::string& topic);

}  // namespace chainrt::runtime
