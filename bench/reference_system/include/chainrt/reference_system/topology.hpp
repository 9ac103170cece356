// chainrt reference system: the Autoware reference system's node types read from a chainrt
// model (shared/reference/autoware-reference-system.md, "Node types"). The model file is the
// topology; a node's type follows from its callbacks (the rule of
// python/chainrt/reference_system/topology.py):
//   Sensor: one timer, no subscription        Cyclic: one timer and subscriptions
//   Command: subscriptions, publishes nothing Transform: one subscription that publishes
//   Fusion: >= 2 subscriptions publishing one topic (LaME: fusion_input / fusion_trigger)
//   Intersection: subscriptions publishing pairwise different topics (one-to-one)
// No ROS here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::reference_system {

enum class NodeType { Sensor, Transform, Fusion, Cyclic, Intersection, Command };
const char* to_string(NodeType t) noexcept;

struct NodeShape {
  std::string name;
  NodeType type = NodeType::Sensor;
  std::optional<std::size_t> timer;          // model callback index
  std::vector<std::size_t> subscriptions;    // model callback indices, file order (= input order)
  std::vector<std::string> outputs;          // topics it publishes, first-publication order
};

// Every node of the model with its type, in model order; std::invalid_argument when a node
// fits no reference-system type.
std::vector<NodeShape> node_shapes(const Model& model);

// Whether callback `cb` of a node burns its work: the Cyclic timer, Transform and
// Intersection subscriptions, the working run of a Fusion input (not LaME's fusion_input).
// Sensors, caching subscriptions and Command sinks only move samples.
bool is_working(const Model& model, const NodeShape& node, std::size_t cb);

}  // namespace chainrt::reference_system
