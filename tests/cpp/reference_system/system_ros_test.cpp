// The reference system on real ROS 2 (rcl + Fast DDS) under the chainrt executor:
//  - the topology check: publishers and subscribers per topic as the ROS graph counts them
//    equal the upstream graph (shared/reference/autoware-reference-system.md, "Graph");
//  - a short run: the sinks receive 4096-byte samples whose stats entries trace the hot path
//    and the behaviour planner in causal order. No wall-clock value is asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/reference_system/system.hpp"

using namespace chainrt;
using namespace chainrt::reference_system;

namespace {
Model reference_model() {
  return load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
}
}  // namespace

TEST(ReferenceSystemRos, TopologyInTheRosGraph) {
  const std::map<std::string, std::size_t> upstream_subscribers = {
      {"FrontLidarDriver", 1}, {"RearLidarDriver", 1}, {"PointCloudMap", 1}, {"Visualizer", 1},
      {"Lanelet2Map", 1}, {"EuclideanClusterSettings", 1}, {"PointsTransformerFront", 1},
      {"PointsTransformerRear", 1}, {"PointCloudFusion", 2}, {"RayGroundFilter", 1},
      {"VoxelGridDownsampler", 1}, {"PointCloudMapLoader", 1}, {"NDTLocalizer", 2},
      {"EuclideanClusterDetector", 1}, {"ObjectCollisionEstimator", 1}, {"Lanelet2GlobalPlanner", 2},
      {"Lanelet2MapLoader", 3}, {"ParkingPlanner", 1}, {"LanePlanner", 1}, {"BehaviorPlanner", 2},
      {"MPCController", 1}, {"VehicleInterface", 1}, {"EuclideanIntersection", 1}};
  SystemOptions o;
  o.topology_only = true;
  o.topic_prefix = "/rs_topo_" + std::to_string(getpid());
  SystemResult r = run_reference_system(reference_model(), o);
  EXPECT_EQ(r.nodes.size(), 24u);
  ASSERT_EQ(r.topics.size(), upstream_subscribers.size());
  for (const auto& t : r.topics) {
    SCOPED_TRACE(t.topic);
    ASSERT_TRUE(upstream_subscribers.count(t.topic));
    EXPECT_EQ(t.expected_publishers, 1u);
    EXPECT_EQ(t.expected_subscribers, upstream_subscribers.at(t.topic));
    EXPECT_EQ(t.publishers, t.expected_publishers);
    EXPECT_EQ(t.subscribers, t.expected_subscribers);
  }
  EXPECT_EQ(r.sinks, (std::vector<std::string>{"VehicleDBWSystem", "IntersectionOutput"}));
}

TEST(ReferenceSystemRos, SamplesTraceTheChainsInCausalOrder) {
  SystemOptions o;
  o.duration = 2'000'000'000;
  o.warmup = 200'000'000;
  o.topic_prefix = "/rs_run_" + std::to_string(getpid());
  o.dump_path = ::testing::TempDir() + "rs_dump_" + std::to_string(getpid()) + ".bin";
  Model m = reference_model();
  SystemResult r = run_reference_system(m, o);
  ASSERT_GT(r.records, 0u);
  EXPECT_EQ(r.records_lost, 0u);
  ASSERT_GE(r.usage.size(), 2u);
  EXPECT_GE(r.usage.back().cpu, r.usage.front().cpu);

  std::ifstream f(o.dump_path, std::ios::binary);
  std::vector<SinkRecord> recs(r.records);
  f.read(reinterpret_cast<char*>(recs.data()), static_cast<std::streamsize>(recs.size() * sizeof(SinkRecord)));
  ASSERT_TRUE(f.good());
  std::remove(o.dump_path.c_str());

  std::size_t hot = 0, intersection = 0;
  for (const auto& rec : recs) {
    const Sample& s = rec.sample;
    ASSERT_LE(s.size, kStatsCapacity);
    if (r.sinks[rec.sink] == "IntersectionOutput") {
      ++intersection;
      ASSERT_EQ(s.size, 2u);  // EuclideanClusterSettings -> EuclideanClusterDetector
      EXPECT_EQ(name_of(s.stats[0]), "EuclideanClusterSettings");
      EXPECT_EQ(name_of(s.stats[1]), "EuclideanClusterDetector");
      continue;
    }
    // VehicleDBWSystem: VehicleInterface is the direct publisher; BehaviorPlanner is in it
    EXPECT_EQ(name_of(*last_entry(s)), "VehicleInterface");
    const StatsEntry* bp = find(s, "BehaviorPlanner");
    ASSERT_NE(bp, nullptr);
    EXPECT_LE(bp->timestamp, last_entry(s)->timestamp);
    EXPECT_LE(last_entry(s)->timestamp, static_cast<std::uint64_t>(rec.received));
    const StatsEntry* oce = find(s, "ObjectCollisionEstimator");
    const StatsEntry* front = find(s, "FrontLidarDriver");
    const StatsEntry* rear = find(s, "RearLidarDriver");
    if (oce && front && rear) {
      ++hot;
      EXPECT_GE(oce->timestamp, std::max(front->timestamp, rear->timestamp));
      EXPECT_LE(oce->timestamp, bp->timestamp);
      const StatsEntry* rgf = find(s, "RayGroundFilter");
      ASSERT_NE(rgf, nullptr);
      EXPECT_LE(rgf->timestamp, oce->timestamp);
    }
    // each node appears once
    for (std::size_t i = 0; i < filled(s); ++i)
      for (std::size_t j = i + 1; j < filled(s); ++j) EXPECT_NE(name_of(s.stats[i]), name_of(s.stats[j]));
  }
  EXPECT_GT(hot, 0u);
  EXPECT_GT(intersection, 0u);
  // the executor measured the model's chains
  // (an instance of a hot-path chain completes under the stamp of the LiDAR whose sample
  // completed the fusion, so only the sum of the two is sure to be positive)
  ASSERT_EQ(r.runtime.chains.size(), m.chains.size());
  std::map<std::string, std::uint64_t> instances;
  for (const auto& c : r.runtime.chains) instances[c.name] = c.instances;
  EXPECT_GT(instances["hot_path_front"] + instances["hot_path_rear"], 0u);
  EXPECT_GT(instances["behavior_planner"], 0u);
}
