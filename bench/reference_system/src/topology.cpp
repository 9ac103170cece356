// chainrt reference system: node types from the model (see topology.hpp).
#include "chainrt/reference_system/topology.hpp"

#include <algorithm>
#include <stdexcept>

namespace chainrt::reference_system {

const char* to_string(NodeType t) noexcept {
  switch (t) {
    case NodeType::Sensor: return "Sensor";
    case NodeType::Transform: return "Transform";
    case NodeType::Fusion: return "Fusion";
    case NodeType::Cyclic: return "Cyclic";
    case NodeType::Intersection: return "Intersection";
    case NodeType::Command: return "Command";
  }
  return "?";
}

namespace {
bool is_sub(CallbackKind k) {
  return k == CallbackKind::Subscription || k == CallbackKind::FusionInput ||
         k == CallbackKind::FusionTrigger;
}
}  // namespace

std::vector<NodeShape> node_shapes(const Model& model) {
  std::vector<NodeShape> out;
  for (const auto& n : model.nodes) {
    NodeShape s;
    s.name = n.name;
    std::size_t timers = 0, others = 0;
    for (std::size_t i = 0; i < model.callbacks.size(); ++i) {
      const Callback& cb = model.callbacks[i];
      if (cb.node != n.name) continue;
      if (cb.kind == CallbackKind::Timer) {
        ++timers;
        s.timer = i;
      } else if (is_sub(cb.kind)) {
        s.subscriptions.push_back(i);
      } else {
        ++others;
      }
      for (const auto& t : cb.publishes)
        if (std::find(s.outputs.begin(), s.outputs.end(), t) == s.outputs.end()) s.outputs.push_back(t);
    }
    if (timers > 1 || others > 0 || (timers == 0 && s.subscriptions.empty()))
      throw std::invalid_argument("node '" + n.name + "' is not a reference-system node type");
    const std::size_t subs = s.subscriptions.size();
    bool one_to_one = subs == s.outputs.size();
    for (std::size_t i : s.subscriptions) one_to_one = one_to_one && model.callbacks[i].publishes.size() == 1;
    if (timers && !subs) s.type = NodeType::Sensor;
    else if (timers) s.type = NodeType::Cyclic;
    else if (s.outputs.empty()) s.type = NodeType::Command;
    else if (subs == 1) s.type = NodeType::Transform;
    else if (s.outputs.size() == 1) s.type = NodeType::Fusion;
    else if (one_to_one) s.type = NodeType::Intersection;
    else
      throw std::invalid_argument("node '" + n.name + "': its subscriptions and topics fit no node type");
    out.push_back(std::move(s));
  }
  return out;
}

bool is_working(const Model& model, const NodeShape& node, std::size_t cb) {
  const Callback& c = model.callbacks[cb];
  if (c.kind == CallbackKind::Timer) return node.type == NodeType::Cyclic;
  if (c.kind == CallbackKind::FusionInput) return false;
  return node.type == NodeType::Transform || node.type == NodeType::Fusion ||
         node.type == NodeType::Intersection;
}

}  // namespace chainrt::reference_system
