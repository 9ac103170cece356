// Node types of the reference system read from examples/autoware_reference.yaml and the LaME
// variant match the upstream graph (shared/reference/autoware-reference-system.md, "Graph").
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/reference_system/topology.hpp"

using namespace chainrt;
using namespace chainrt::reference_system;

namespace {
std::map<std::string, std::string> types_of(const std::string& file) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/" + file);
  std::map<std::string, std::string> out;
  for (const auto& s : node_shapes(m)) out[s.name] = to_string(s.type);
  return out;
}
}  // namespace

TEST(Topology, UpstreamNodeTypes) {
  const std::map<std::string, std::string> upstream = {
      {"FrontLidarDriver", "Sensor"}, {"RearLidarDriver", "Sensor"}, {"PointCloudMap", "Sensor"},
      {"Visualizer", "Sensor"}, {"Lanelet2Map", "Sensor"}, {"EuclideanClusterSettings", "Sensor"},
      {"PointsTransformerFront", "Transform"}, {"PointsTransformerRear", "Transform"},
      {"PointCloudFusion", "Fusion"}, {"RayGroundFilter", "Transform"}, {"VoxelGridDownsampler", "Transform"},
      {"PointCloudMapLoader", "Transform"}, {"NDTLocalizer", "Fusion"},
      {"EuclideanClusterDetector", "Intersection"}, {"ObjectCollisionEstimator", "Transform"},
      {"Lanelet2GlobalPlanner", "Fusion"}, {"Lanelet2MapLoader", "Fusion"}, {"ParkingPlanner", "Transform"},
      {"LanePlanner", "Transform"}, {"BehaviorPlanner", "Cyclic"}, {"MPCController", "Transform"},
      {"VehicleInterface", "Fusion"}, {"VehicleDBWSystem", "Command"}, {"IntersectionOutput", "Command"}};
  EXPECT_EQ(types_of("autoware_reference.yaml"), upstream);
  EXPECT_EQ(types_of("autoware_lame.yaml"), upstream);
}

TEST(Topology, FusionInputOrderAndWorkingCallbacks) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
  for (const auto& s : node_shapes(m)) {
    if (s.name == "PointCloudFusion") {
      ASSERT_EQ(s.subscriptions.size(), 2u);
      EXPECT_EQ(m.callbacks[s.subscriptions[0]].topic, "PointsTransformerFront");
      EXPECT_EQ(m.callbacks[s.subscriptions[1]].topic, "PointsTransformerRear");
      EXPECT_TRUE(is_working(m, s, s.subscriptions[0]));
    }
    if (s.name == "BehaviorPlanner") {
      EXPECT_EQ(s.subscriptions.size(), 6u);
      EXPECT_TRUE(is_working(m, s, *s.timer));
      EXPECT_FALSE(is_working(m, s, s.subscriptions[0]));
    }
    if (s.type == NodeType::Sensor) {
      EXPECT_FALSE(is_working(m, s, *s.timer));
    }
    if (s.name == "EuclideanClusterDetector") {
      EXPECT_EQ(s.outputs, (std::vector<std::string>{"EuclideanClusterDetector", "EuclideanIntersection"}));
    }
  }
}

TEST(Topology, RejectsNodesOfNoType) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
  // give the Transform RayGroundFilter a second subscription publishing two topics
  Callback extra = m.callback("VoxelGridDownsampler/PointCloudFusion");
  extra.name = "RayGroundFilter/extra";
  extra.node = "RayGroundFilter";
  extra.group = "RayGroundFilter/default";
  extra.publishes = {"RayGroundFilter", "VoxelGridDownsampler"};
  m.callbacks.push_back(extra);
  m.reindex();
  EXPECT_THROW(node_shapes(m), std::invalid_argument);
}
