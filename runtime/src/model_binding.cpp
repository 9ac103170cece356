// chainrt runtime: a model bound to the user's own nodes (see model_binding.hpp).
#include "chainrt/runtime/model_binding.hpp"

#include <stdexcept>

namespace chainrt::runtime {

void to_msg_time(Duration t, builtin_interfaces::msg::Time& out) noexcept {
  if (t < 0) t = 0;
  out.sec = static_cast<std::int32_t>(t / 1000000000);
  out.nanosec = static_cast<std::uint32_t>(t % 1000000000);
}

Duration from_msg_time(const builtin_interfaces::msg::Time& t) noexcept {
  return static_cast<Duration>(t.sec) * 1000000000 + static_cast<Duration>(t.nanosec);
}

ModelBinding::ModelBinding(Model model, const std::string& executor) : model_(std::move(model)) {
  if (model_.executors.empty()) throw std::invalid_argument("the model has no executor");
  if (!executor.empty()) {
    bool found = false;
    for (std::size_t i = 0; i < model_.executors.size(); ++i)
      if (model_.executors[i].name == executor) {
        executor_ = i;
        found = true;
      }
    if (!found) throw std::invalid_argument("the model has no executor '" + executor + "'");
  }
  setup_ = sched::make_setup(model_, executor_);
  bound_.assign(setup_.callbacks.size(), false);
}

ExecutorOptions ModelBinding::executor_options() const {
  ExecutorOptions o;
  o.policy = setup_.policy;
  o.threads = setup_.threads;
  o.name = model_.executors[executor_].name;
  return o;
}

CallbackOptions ModelBinding::options(const std::string& callback, CallbackGroup* group) const {
  for (sched::CallbackId id = 0; id < setup_.callbacks.size(); ++id) {
    const Callback& cb = model_.callbacks[setup_.callbacks[id]];
    if (cb.name != callback) continue;
    CallbackOptions co;
    co.name = cb.name;
    co.group = group;
    co.priority = setup_.specs[id].priority;
    co.affinity = setup_.specs[id].affinity;
    bound_[id] = true;
    return co;
  }
  throw std::invalid_argument("the model has no callback '" + callback + "' on executor '" +
                              model_.executors[executor_].name + "'");
}

void ModelBinding::add_chains(Executor& executor) const {
  for (const auto& c : model_.chains) executor.add_chain(ChainSpec::of(c));
}

std::vector<std::string> ModelBinding::unbound() const {
  std::vector<std::string> out;
  for (sched::CallbackId id = 0; id < setup_.callbacks.size(); ++id)
    if (!bound_[id]) out.push_back(model_.callbacks[setup_.callbacks[id]].name);
  return out;
}

void ModelBinding::check_bound() const {
  const auto missing = unbound();
  if (missing.empty()) return;
  std::string list;
  for (const auto& n : missing) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("model callbacks of executor '" + model_.executors[executor_].name +
                              "' without a real counterpart (no options() asked for them): " + list);
}

std::uint32_t ModelBinding::chain_index(const std::string& chain) const {
  for (std::size_t i = 0; i < model_.chains.size(); ++i)
    if (model_.chains[i].name == chain) return static_cast<std::uint32_t>(i);
  throw std::invalid_argument("the model has no chain '" + chain + "'");
}

Duration ModelBinding::chain_deadline(const std::string& chain) const {
  return model_.chains[chain_index(chain)].deadline;
}

}  // namespace chainrt::runtime
