// chainrt runtime: binding unmodified ROS 2 entities to model callbacks (see entity_binding.hpp).
#include "chainrt/runtime/entity_binding.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace chainrt::runtime {

namespace {
std::string strip_slash(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == '/') ++i;
  return s.substr(i);
}
bool subscription_like(CallbackKind k) {
  return k == CallbackKind::Subscription || k == CallbackKind::FusionInput || k == CallbackKind::FusionTrigger;
}
}  // namespace

EntityBinder::EntityBinder(Model model, const std::string& executor, const std::vector<std::string>& node_names,
                           std::optional<Policy> policy, std::optional<int> threads)
    : model_(std::move(model)) {
  if (model_.executors.empty()) throw std::invalid_argument("the model has no executor");
  std::size_t ex = model_.executors.size();
  if (!executor.empty()) {
    for (std::size_t i = 0; i < model_.executors.size(); ++i)
      if (model_.executors[i].name == executor) ex = i;
    if (ex == model_.executors.size()) {
      std::string names;
      for (const auto& e : model_.executors) names += (names.empty() ? "" : ", ") + e.name;
      throw std::invalid_argument("the model has no executor '" + executor + "' (it has: " + names + ")");
    }
  } else if (model_.executors.size() == 1) {
    ex = 0;
  } else {
    for (const auto& n : node_names) {
      for (const auto& mn : model_.nodes)
        if (mn.name == n) {
          ex = model_.executor_index(mn.executor);
          break;
        }
      if (ex != model_.executors.size()) break;
    }
    if (ex == model_.executors.size())
      throw std::invalid_argument("the model has several executors and hosts none of the nodes; name the executor");
  }
  setup_ = sched::make_setup(model_, ex, policy, threads);
  reset();
}

std::optional<std::size_t> EntityBinder::match(const std::string& node, CallbackKind kind, Duration period,
                                               const std::string& topic) {
  for (std::size_t id = 0; id < size(); ++id) {
    if (used_[id]) continue;
    const Callback& c = callback(id);
    if (c.node != node) continue;
    if (kind == CallbackKind::Timer) {
      if (c.kind != CallbackKind::Timer || c.period <= 0) continue;
      if (std::llabs(c.period - period) * 100 > c.period) continue;  // within 1 %
    } else if (kind == CallbackKind::Subscription) {
      if (!subscription_like(c.kind) || strip_slash(c.topic) != strip_slash(topic)) continue;
    } else {
      if (c.kind != kind || strip_slash(c.topic) != strip_slash(topic)) continue;
    }
    used_[id] = true;
    return id;
  }
  return std::nullopt;
}

std::optional<std::size_t> EntityBinder::by_name(const std::string& name) {
  for (std::size_t id = 0; id < size(); ++id)
    if (callback(id).name == name) {
      used_[id] = true;
      return id;
    }
  return std::nullopt;
}

std::vector<std::string> EntityBinder::unused() const {
  std::vector<std::string> out;
  for (std::size_t id = 0; id < size(); ++id)
    if (!used_[id]) out.push_back(callback(id).name);
  return out;
}

std::string entity_label(CallbackKind kind, Duration period, const std::string& topic) {
  switch (kind) {
    case CallbackKind::Timer: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "timer@%gms", static_cast<double>(period) / 1e6);
      return buf;
    }
    case CallbackKind::Service: return "service:" + topic;
    case CallbackKind::Client: return "client:" + topic;
    default: return "sub:" + topic;
  }
}

}  // namespace chainrt::runtime
