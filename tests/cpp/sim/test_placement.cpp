// Where the simulator runs a thread (model/facts.hpp, simulated_core, the rule the analyses read):
// pinned threads on their first core, unpinned ones round robin over their host's cores in model
// order.
#include <gtest/gtest.h>

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
