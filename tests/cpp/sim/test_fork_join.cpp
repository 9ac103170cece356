// A branching chain's end (model `paths:`): an instance completes when every leaf — the last
// callback of each root-to-leaf path — has run for it (a fork-join end, as the runtime's
// monitor has it; the EDF ready-queue paper's Case Study 1: the driving chain completes once both
// the steering and the throttle driver ran).
#include <gtest/gtest.h>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {
constexpr Duration ms = 1'000'000;
}

TEST(ForkJoinEnd, TheInstanceEndsWhenBothLeavesHaveRun) {
  // One thread: src (1 ms) publishes to `a` (2 ms) and `b` (5 ms); whichever the executor runs
  // first, the instance ends when the second leaf completes: at 1 + 2 + 5 = 8 ms, whatever the
  // order in which the leaves are listed.
  for (const char* order : {"[[src, a], [src, b]]", "[[src, b], [src, a]]"}) {
    const Model m = load_model_from_string(std::string(R"(
name: fork
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: fp, threads: [{name: t, cores: [0]}]}]
nodes: [{name: n, executor: e}, {name: na, executor: e}, {name: nb, executor: e}]
callbacks:
  - {name: src, kind: timer, node: n, period: 50ms, wcet: 1ms, publishes: [ta, tb]}
  - {name: a, kind: subscription, node: na, topic: ta, wcet: 2ms, priority: 2}
  - {name: b, kind: subscription, node: nb, topic: tb, wcet: 5ms, priority: 1}
chains:
  - {name: C, paths: )") + order + R"(, deadline: 50ms}
)");
    sim::SimOptions o;
    o.duration = 500 * ms;
    const auto r = sim::simulate(m, o);
    EXPECT_EQ(r.chain("C")->wcrt, 8 * ms) << order;
    EXPECT_EQ(r.chain("C")->bcrt, 8 * ms) << order;
    EXPECT_EQ(r.chain("C")->instances, 10) << order;
  }
}
