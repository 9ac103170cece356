// PiCAS synthesis (synth/): P1–P4 on hand-made systems, the reference system, and the
// heuristic against the exhaustive baseline on random small systems.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/synth/synthesize.hpp"

using namespace chainrt;
using namespace chainrt::synth;

namespace {

// Three chains on one executor: `ctl` (criticality 3), `per` (criticality 2) sharing the
// callback `fuse` with `map` (criticality 1), and a node in no chain.
const char* kThree = R"(
name: three
hosts: [{name: h, cores: 2}]
executors: [{name: main, host: h, policy: picas, threads: [{name: t0}]}]
nodes:
  - {name: a, executor: main}
  - {name: b, executor: main}
  - {name: c, executor: main}
  - {name: d, executor: main}
  - {name: idle, executor: main}
topics: [{name: ta}, {name: tb}, {name: tc}, {name: td}]
callbacks:
  - {name: ctl_t, kind: timer, node: a, period: 10ms, wcet: 1ms, publishes: [ta]}
  - {name: ctl_s, kind: subscription, node: a, topic: ta, wcet: 2ms}
  - {name: per_t, kind: timer, node: b, period: 20ms, wcet: 1ms, publishes: [tb]}
  - {name: fuse, kind: subscription, node: c, topic: tb, wcet: 4ms, publishes: [tc]}
  - {name: map_t, kind: timer, node: d, period: 50ms, wcet: 5ms, publishes: [td]}
  - {name: map_s, kind: subscription, node: d, topic: tc, wcet: 5ms}
  - {name: idle_t, kind: timer, node: idle, period: 100ms, wcet: 1ms}
chains:
  - {name: map, callbacks: [per_t, fuse, map_s], deadline: 20ms, class: rt, criticality: 1}
  - {name: ctl, callbacks: [ctl_t, ctl_s], deadline: 10ms, class: rt, criticality: 3}
  - {name: per, callbacks: [per_t, fuse], deadline: 20ms, class: rt, criticality: 2}
)";

int prio(const Model& m, const std::vector<int>& p, const std::string& cb) {
  return p[m.callback_index(cb)];
}

}  // namespace

TEST(SynthPriorities, ChainOrderFollowsClassCriticalityPriorityDeadline) {
  Model m = load_model_from_string(kThree, "three.yaml");
  auto order = chain_order(m);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(m.chains[order[0]].name, "ctl");
  EXPECT_EQ(m.chains[order[1]].name, "per");
  EXPECT_EQ(m.chains[order[2]].name, "map");
  // A best-effort chain comes after every real-time chain whatever its criticality.
  m.chains[1].criticality_class = CriticalityClass::BestEffort;
  order = chain_order(m);
  EXPECT_EQ(m.chains[order[2]].name, "ctl");
}

TEST(SynthPriorities, P1MoreCriticalChainsOutrankAndP2BackOutranksFront) {
  Model m = load_model_from_string(kThree, "three.yaml");
  auto p = callback_priorities(m, chain_order(m));
  // P1: every callback of ctl above every callback of per, and per's above map's own.
  EXPECT_GT(prio(m, p, "ctl_t"), prio(m, p, "fuse"));
  EXPECT_GT(prio(m, p, "per_t"), prio(m, p, "map_s"));
  // P2: later callbacks of a chain above earlier ones.
  EXPECT_GT(prio(m, p, "ctl_s"), prio(m, p, "ctl_t"));
  EXPECT_GT(prio(m, p, "fuse"), prio(m, p, "per_t"));
  // A shared callback keeps the rank of its most critical chain (per, not map): map's own
  // callback map_s ranks below it.
  EXPECT_GT(prio(m, p, "fuse"), prio(m, p, "map_s"));
  // Callbacks in no chain rank lowest; all priorities distinct, 1..N.
  EXPECT_EQ(prio(m, p, "map_t"), 2);
  EXPECT_EQ(prio(m, p, "idle_t"), 1);
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<int>(i) + 1);
}

TEST(SynthAllocation, ReleasePeriodsPropagateAlongTopics) {
  Model m = load_model_from_string(kThree, "three.yaml");
  auto per = release_periods(m);
  EXPECT_EQ(per[m.callback_index("ctl_s")], 10'000'000);
  EXPECT_EQ(per[m.callback_index("fuse")], 20'000'000);
  EXPECT_EQ(per[m.callback_index("map_s")], 20'000'000);  // released by fuse, every 20 ms
  EXPECT_EQ(per[m.callback_index("map_t")], 50'000'000);
}

TEST(SynthAllocation, P4KeepsChainsTogetherAndBalancesCores) {
  Model m = load_model_from_string(kThree, "three.yaml");
  std::vector<std::string> log;
  Placement p = place_nodes(m, chain_order(m), 2, 1.0, &log);
  auto core = [&](const std::string& n) { return p.core[&m.node(n) - &m.nodes[0]]; };
  // ctl (30 %) -> core 0; per (b, c: 25 %) -> the least loaded core 1; map's only new node d
  // (35 %) joins its chain's nodes b and c on core 1 (60 % there, still fits).
  EXPECT_EQ(core("a"), 0);
  EXPECT_EQ(core("b"), 1);
  EXPECT_EQ(core("c"), 1);
  EXPECT_EQ(core("d"), 1);
  EXPECT_EQ(core("idle"), 0);  // no chain: the least loaded core afterwards
  EXPECT_GE(log.size(), 4u);
}

TEST(SynthAllocation, ChainTooLargeForOneCoreIsSplitNodeByNode) {
  Model m = load_model_from_string(kThree, "three.yaml");
  // ctl needs 30 %; with capacity 0.2 it fits on no core and is split.
  Placement p = place_nodes(m, chain_order(m), 2, 0.2, nullptr);
  int a = p.core[&m.node("a") - &m.nodes[0]];
  EXPECT_GE(a, 0);
  std::vector<std::string> log;
  place_nodes(m, chain_order(m), 2, 0.2, &log);
  bool split = false;
  for (const auto& l : log) split |= l.find("does not fit on one core") != std::string::npos;
  EXPECT_TRUE(split);
}

TEST(SynthBuild, P3ExecutorPrioritiesAndFifoPerCore) {
  Model m = load_model_from_string(kThree, "three.yaml");
  auto order = chain_order(m);
  Placement p = place_nodes(m, order, 2, 1.0, nullptr);
  Model s = build(m, order, p, 2, ExecutorLayout::PerChain, 10);
  // Executors: ctl_core0, other_core0 (idle), per_core1, map_core1.
  ASSERT_EQ(s.executors.size(), 4u);
  for (const auto& e : s.executors) {
    ASSERT_EQ(e.threads.size(), 1u);
    EXPECT_EQ(e.policy, Policy::Picas);
    ASSERT_EQ(e.threads[0].cores.size(), 1u);
    ASSERT_TRUE(e.threads[0].fifo_priority);
  }
  auto& ctl = s.executor("ctl_core0");
  auto& other = s.executor("other_core0");
  auto& per = s.executor("per_core1");
  auto& map = s.executor("map_core1");
  EXPECT_GT(*ctl.threads[0].fifo_priority, *other.threads[0].fifo_priority);
  EXPECT_GT(*per.threads[0].fifo_priority, *map.threads[0].fifo_priority);
  EXPECT_EQ(*other.threads[0].fifo_priority, 10);
  EXPECT_EQ(*ctl.priority, *ctl.threads[0].fifo_priority);  // executor priority = its threads' FIFO
  // The chain priorities follow P1.
  EXPECT_GT(*s.chain("ctl").priority, *s.chain("per").priority);
  EXPECT_GT(*s.chain("per").priority, *s.chain("map").priority);
  // One executor per core.
  Model c = build(m, order, p, 2, ExecutorLayout::PerCore, 10);
  EXPECT_EQ(c.executors.size(), 2u);
  // The written model loads again unchanged.
  Model again = load_model_from_string(save_model_to_string(s), "again.yaml");
  EXPECT_EQ(again.executors.size(), s.executors.size());
}

TEST(SynthPicas, ReferenceSystemOnTwoCoresKeepsTheHotPathTogether) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
  Options o;
  o.cores = 2;
  Synthesis s = picas(m, o);
  ASSERT_TRUE(s.score.applicable) << s.score.why;
  // The behaviour planner (a join at VehicleInterface) is bounded; the per-LiDAR hot-path
  // chains wait at PointCloudFusion for the other LiDAR: with the model's timer phases
  // guaranteed (one release grid), the fusion round bounds that wait by the other input's
  // prefix, not by a LiDAR period, so the hot paths meet their 100 ms deadline. Their fan-out to
  // the lowest-priority localisation and map nodes has no end bound, but only blocks (R_work by
  // priority).
  const ChainBound* bp = s.score.result.find("behavior_planner");
  ASSERT_NE(bp, nullptr);
  EXPECT_TRUE(bp->schedulable) << bp->reason;
  const ChainBound* hot = s.score.result.find("hot_path_front");
  ASSERT_NE(hot, nullptr);
  ASSERT_TRUE(hot->bounded) << hot->reason;
  EXPECT_LE(hot->wcrt_bound, hot->deadline);
  EXPECT_TRUE(hot->schedulable) << hot->reason;
  // The executor implementation's own time per dispatch stays with every new executor.
  ASSERT_GT(m.executors[0].dispatch_overhead, 0);
  for (const auto& e : s.model.executors) EXPECT_EQ(e.dispatch_overhead, m.executors[0].dispatch_overhead) << e.name;
  // Every node of the hot path on one core (P4).
  std::set<int> cores;
  for (const auto& cb : s.model.chain("hot_path_front").callbacks) {
    const auto& ex = s.model.executor_of(s.model.callback(cb));
    cores.insert(ex.threads[0].cores[0]);
  }
  EXPECT_EQ(cores.size(), 1u);
  EXPECT_FALSE(s.decisions.empty());
}

TEST(SynthPicas, RefusesWhatItCannotSynthesize) {
  Model m = load_model_from_string(kThree, "three.yaml");
  Options o;
  o.cores = 0;
  m.hosts.front().cores = 2;
  EXPECT_NO_THROW(picas(m, o));
  Model two_hosts = m;
  two_hosts.hosts.push_back(Host{"h2", 1});
  EXPECT_THROW(picas(two_hosts, o), std::invalid_argument);
  o.cores = 3;
  EXPECT_THROW(exhaustive(m, o, 10), std::invalid_argument);  // 3^3 * 3! > 10
}

// The exhaustive baseline is never worse than the heuristic (it searches a superset that
// contains the heuristic's chain order and, for unsplit chains, its placement).
TEST(SynthSearch, ExhaustiveIsAtLeastAsGoodAsPicasOnRandomSmallSystems) {
  int heuristic = 0, optimum = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    gen::EdfPaperParams p;
    p.m = 2;
    p.n = 4;
    p.b = 3;
    p.g = 0;
    p.u_norm = 0.55;
    p.policy = Policy::Picas;
    Model m = gen::edf_paper_system(p, seed);
    m.hosts.front().cores = 2;
    Options o;
    o.cores = 2;
    o.layout = ExecutorLayout::PerCore;
    o.analysis = "picas-st";
    Synthesis h = picas(m, o);
    Synthesis x = exhaustive(m, o);
    EXPECT_FALSE(better(h.score, x.score, o.objective)) << "seed " << seed;
    std::uint64_t space = 1;
    for (std::size_t i = 1; i <= m.chains.size(); ++i) space *= 2 * i;
    EXPECT_EQ(x.evaluated, space);
    heuristic += h.score.schedulable;
    optimum += x.score.schedulable;
  }
  EXPECT_LE(heuristic, optimum);
  EXPECT_GT(optimum, 0);
}
