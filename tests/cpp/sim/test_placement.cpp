// Where the simulator runs a thread (model/facts.hpp, simulated_core, the rule the analyses read):
// pinned threads on their first core, unpinned ones round robin over their host's cores in model
// order.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

TEST(Placement, TheSimulatorRunsThreadsWhereTheFactsSay) {
  const Model m = load_model_from_string(R"(
chainrt: 1
hosts: [{name: h, cores: 2}, {name: g, cores: 3}]
executors:
  - {name: a, host: h, policy: picas, threads: [{name: t0}, {name: t1, cores: [1]}, {name: t2}]}
  - {name: b, host: h, policy: picas, threads: [{name: t0, priority: 3}]}
  - {name: c, host: g, policy: picas, threads: [{name: t0}, {name: t1}]}
callbacks:
  - {name: x, kind: timer, node: n, period: 10ms, wcet: 1ms}
nodes: [{name: n, executor: a}]
chains: [{name: c, callbacks: [x], deadline: 10ms}]
)",
                                         "<placement>");
  // host h: a/t0 -> 0, a/t1 pinned to 1, a/t2 -> 1, b/t0 -> 0; host g: c/t0 -> 0, c/t1 -> 1
  EXPECT_EQ(simulated_core(m, 0, 0), 0);
  EXPECT_EQ(simulated_core(m, 0, 1), 1);
  EXPECT_EQ(simulated_core(m, 0, 2), 1);
  EXPECT_EQ(simulated_core(m, 1, 0), 0);
  EXPECT_EQ(simulated_core(m, 2, 0), 0);
  EXPECT_EQ(simulated_core(m, 2, 1), 1);
  sim::SimOptions o;
  o.duration = 20'000'000;
  const sim::SimResult r = sim::simulate(m, o);
  ASSERT_EQ(r.threads.size(), 6u);
  int i = 0;
  for (std::size_t x = 0; x < m.executors.size(); ++x)
    for (std::size_t t = 0; t < m.executors[x].threads.size(); ++t, ++i)
      EXPECT_EQ(r.threads[static_cast<std::size_t>(i)].core, simulated_core(m, x, t)) << x << "/" << t;
}

// SimOptions::global_threads: three unpinned single-threaded executors on two cores (SCHED_FIFO
// 30 and 20, the third without a priority). Placed by the round robin, the third shares core 0
// with the first and waits while the first runs, even with core 1 idle; scheduled globally it
// waits only while both run. The third's 4 ms callback, released with the first's 4 ms one and
// the second idle: 8 ms placed, 4 ms globally. And with all three busy, the lowest waits.
TEST(Placement, GlobalSchedulingRunsTheReadyThreadsOfHighestPriority) {
  std::ifstream in(std::string(CHAINRT_SOURCE_DIR) + "/tests/models/unpinned_three_executors.yaml");
  ASSERT_TRUE(in) << "tests/models/unpinned_three_executors.yaml";
  std::stringstream text;
  text << in.rdbuf();
  const std::string idle_mid = text.str();
  auto worst = [&](const std::string& yaml, bool global) {
    const Model m = load_model_from_string(yaml, "<global>");
    sim::SimOptions o;
    o.duration = 100'000'000;
    o.global_threads = global;
    const sim::SimResult r = sim::simulate(m, o);
    return std::make_pair(r.chains[0].wcrt, r.chains[1].wcrt);
  };
  EXPECT_EQ(worst(idle_mid, false), std::make_pair(Duration{4'000'000}, Duration{8'000'000}));
  EXPECT_EQ(worst(idle_mid, true), std::make_pair(Duration{4'000'000}, Duration{4'000'000}));
  // mid busy for 6 ms from 0: lo waits for the first core to free (hi's at 4 ms) and runs 4-8 ms
  std::string busy_mid = idle_mid;
  busy_mid.insert(busy_mid.find("chains:"), "  - {name: y, kind: timer, node: b, period: 20ms, wcet: 6ms, phase: guaranteed}\n");
  EXPECT_EQ(worst(busy_mid, true), std::make_pair(Duration{4'000'000}, Duration{8'000'000}));
  // a pinned thread on the host: placed as without the option
  std::string pinned = idle_mid;
  pinned.replace(pinned.find("{name: t}"), 9, "{name: t, cores: [0]}");
  EXPECT_EQ(worst(pinned, true), std::make_pair(Duration{4'000'000}, Duration{8'000'000}));
  // where the two differ (facts.hpp): three unpinned threads on two cores; not with one pinned,
  // nor with a core for each
  EXPECT_TRUE(unpinned_threads_share_cores(load_model_from_string(idle_mid, "<global>")));
  EXPECT_FALSE(unpinned_threads_share_cores(load_model_from_string(pinned, "<global>")));
  std::string three = idle_mid;
  three.replace(three.find("cores: 2"), 8, "cores: 3");
  EXPECT_FALSE(unpinned_threads_share_cores(load_model_from_string(three, "<global>")));
}
