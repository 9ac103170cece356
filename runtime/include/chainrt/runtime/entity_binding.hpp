// chainrt runtime: binding the entities of UNMODIFIED ROS 2 nodes to the callbacks of one model
// executor: the rule of docs/model.md ("Binding real callbacks to the model"), written once here
// (binding_match, explain_unbound) and used by chainrt's rclcpp executor (EntityBinder) and, through
// chainrt._rclpy_exec, by chainrt.rclpy (python/chainrt/rclpy/binding.py).
//
// A model callback is matched by its node (the model node named like the real node's fully
// qualified name without the leading '/', else like its plain name) and
//   - a timer: |real period - period| <= period_tolerance (default 1 % of the period); of several
//     candidates the nearest period,
//   - a subscription (or a fusion_input / fusion_trigger): its topic (`hi_data` matches `/hi_data`),
//   - a service server or a client: its service name (the model's `service` field),
// the first unused candidate in file order otherwise. An explicit binding by name wins over the
// rule. Entities that match nothing run with no priority (last under fp/picas), no deadline (last
// under edf) and their ROS kind rank under ros-default; they are named "<node>/<what>"
// (entity_label) and listed as unmatched. A model callback no entity took is an error at start
// unless the user allows it (explain_unbound says why, per callback).
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

// A model callback as the binding rule sees it.
struct BindingCandidate {
  std::string name;
  std::string node;
  CallbackKind kind = CallbackKind::Timer;  // Timer, Subscription, Service or Client
  Duration period = 0;                      // timers
  Duration tolerance = 0;                   // timers: how far a real period may be
  std::string topic;                        // subscriptions: the topic; services, clients: the service
  bool used = false;
};
// What the rule sees of one real entity.
struct RealEntity {
  std::string fq_node;  // fully qualified node name without the leading '/' ("ns/camera")
  std::string node;     // plain node name ("camera")
  CallbackKind kind = CallbackKind::Timer;  // Timer, Subscription, Service or Client
  Duration period = 0;
  std::string topic;    // the resolved topic or service name
};

// Model callback `c` as a candidate: fusion kinds are subscriptions, a service or client is
// named by its service, a timer's tolerance defaults to 1 % of its period.
BindingCandidate binding_candidate(const Callback& c);
// The unused candidate the real entity `e` binds to (docs/model.md's rule), or nullopt. Does not
// mark it used.
std::optional<std::size_t> binding_match(const std::vector<BindingCandidate>& candidates, const RealEntity& e);
// One line per unused candidate ("  <name> (<what it is>): <why no entity took it>", with the
// nearest real entity among `seen`), joined by newlines; "" when every candidate is used.
std::string explain_unbound(const std::vector<BindingCandidate>& candidates, const std::vector<RealEntity>& seen);

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
  void reset();
  // The model callback entity `e` binds to (binding_match), marked used; nullopt when none.
  std::optional<std::size_t> match(const RealEntity& e);
  // An entity bound before (or explicitly): seen for explain_unused(), not matched again.
  void see(const RealEntity& e) { seen_.push_back(e); }
  // The model callback named `name` on this executor (marked used), or nullopt.
  std::optional<std::size_t> by_name(const std::string& name);
  // Model callbacks no entity was bound to since reset(), and why (explain_unbound over the
  // entities offered to match() since reset()).
  std::vector<std::string> unused() const;
  std::string explain_unused() const { return explain_unbound(candidates_, seen_); }

 private:
  Model model_;
  sched::ExecutorSetup setup_;
  std::vector<BindingCandidate> candidates_;  // by model id
  std::vector<RealEntity> seen_;
};

// What names an entity that matches no model callback, after its node ("<node>/<label>", chainrt.rclpy's
// names): "timer@<period in ms, %g>", "sub:<topic>", "service:<name>", "client:<name>".
std::string entity_label(CallbackKind kind, Duration period, const std::string& topic);

// A ROS name without its leading slashes ("/camera/image" -> "camera/image"): how the model
// writes node, topic and service names. Allocates the result.
std::string strip_slash(const std::string& s);

}  // namespace chainrt::runtime
