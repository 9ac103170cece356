// chainrt runtime: binding unmodified ROS 2 entities to model callbacks (see entity_binding.hpp).
#include "chainrt/runtime/entity_binding.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace chainrt::runtime {

namespace {
bool subscription_like(CallbackKind k) {
  return k == CallbackKind::Subscription || k == CallbackKind::FusionInput || k == CallbackKind::FusionTrigger;
}
std::string ms(Duration ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g ms", static_cast<double>(ns) / 1e6);
  return buf;
}
const char* kind_word(CallbackKind k) {
  switch (k) {
    case CallbackKind::Timer: return "timer";
    case CallbackKind::Service: return "service";
    case CallbackKind::Client: return "client";
    default: return "subscription";
  }
}
bool is_service_kind(CallbackKind k) { return k == CallbackKind::Service || k == CallbackKind::Client; }
bool on_node(const RealEntity& e, const std::string& node) { return e.fq_node == node || e.node == node; }
}  // namespace

BindingCandidate binding_candidate(const Callback& c) {
  BindingCandidate b;
  b.name = c.name;
  b.node = c.node;
  b.kind = subscription_like(c.kind) ? CallbackKind::Subscription : c.kind;
  b.period = c.kind == CallbackKind::Timer ? c.period : 0;
  b.tolerance = c.period_tolerance ? *c.period_tolerance : static_cast<Duration>(0.01 * static_cast<double>(b.period));
  b.topic = is_service_kind(c.kind) ? c.service : c.topic;
  return b;
}

std::optional<std::size_t> binding_match(const std::vector<BindingCandidate>& candidates, const RealEntity& e) {
  // the model node: named like the fully qualified name, else like the plain name
  const bool fq_known = std::any_of(candidates.begin(), candidates.end(),
                                    [&](const BindingCandidate& c) { return c.node == e.fq_node; });
  const std::string& want = fq_known ? e.fq_node : e.node;
  std::optional<std::size_t> best;
  Duration best_diff = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const BindingCandidate& c = candidates[i];
    if (c.used || c.kind != e.kind || c.node != want) continue;
    if (e.kind == CallbackKind::Timer) {
      const Duration diff = std::llabs(c.period - e.period);
      if (c.period != 0 && diff <= c.tolerance && (!best || diff < best_diff)) best = i, best_diff = diff;
    } else if (strip_slash(c.topic) == strip_slash(e.topic)) {
      return i;
    }
  }
  return best;
}

std::string explain_unbound(const std::vector<BindingCandidate>& candidates, const std::vector<RealEntity>& seen) {
  std::string out;
  for (const BindingCandidate& c : candidates) {
    if (c.used) continue;
    std::vector<const RealEntity*> same_kind;
    bool node_seen = false;
    for (const RealEntity& e : seen) {
      if (!on_node(e, c.node)) continue;
      node_seen = true;
      if (e.kind == c.kind) same_kind.push_back(&e);
    }
    std::string what, why;
    if (c.kind == CallbackKind::Timer)
      what = "timer, period " + ms(c.period) + " \u00b1 " + ms(c.tolerance);
    else
      what = std::string(kind_word(c.kind)) + " of " + (is_service_kind(c.kind) ? "service" : "topic") + " '" + c.topic + "'";
    if (!node_seen) {
      why = "no node '" + c.node + "' was added to the executor";
    } else if (same_kind.empty()) {
      why = "node '" + c.node + "' has no " + kind_word(c.kind);
    } else if (c.kind == CallbackKind::Timer) {
      const RealEntity* near = same_kind.front();
      for (const RealEntity* e : same_kind)
        if (std::llabs(e->period - c.period) < std::llabs(near->period - c.period)) near = e;
      const Duration off = std::llabs(near->period - c.period);
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.3g", 100.0 * static_cast<double>(off) / static_cast<double>(c.period));
      why = "the nearest timer of node '" + c.node + "' has period " + ms(near->period) + " (" + pct +
            " % off; write its period exactly, e.g. 'period: " + std::to_string(near->period) +
            "ns', or a wider 'period_tolerance')";
    } else {
      std::set<std::string> names;
      for (const RealEntity* e : same_kind) names.insert(e->topic);
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      const char* verb = c.kind == CallbackKind::Service ? "' serves " : c.kind == CallbackKind::Client ? "' calls " : "' subscribes to ";
      why = "node '" + c.node + verb + (is_service_kind(c.kind) ? "services " : "topics ") + list;
    }
    out += (out.empty() ? "" : "\n") + ("  " + c.name + " (" + what + "): " + why);
  }
  return out;
}

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
  for (std::size_t id = 0; id < size(); ++id) candidates_.push_back(binding_candidate(callback(id)));
}

void EntityBinder::reset() {
  for (auto& c : candidates_) c.used = false;
  seen_.clear();
}

std::optional<std::size_t> EntityBinder::match(const RealEntity& e) {
  see(e);
  const auto id = binding_match(candidates_, e);
  if (id) candidates_[*id].used = true;
  return id;
}

std::optional<std::size_t> EntityBinder::by_name(const std::string& name) {
  for (std::size_t id = 0; id < size(); ++id)
    if (callback(id).name == name) {
      candidates_[id].used = true;
      return id;
    }
  return std::nullopt;
}

std::vector<std::string> EntityBinder::unused() const {
  std::vector<std::string> out;
  for (std::size_t id = 0; id < size(); ++id)
    if (!candidates_[id].used) out.push_back(callback(id).name);
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

std::string strip_slash(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == '/') ++i;
  return s.substr(i);
}

}  // namespace chainrt::runtime
