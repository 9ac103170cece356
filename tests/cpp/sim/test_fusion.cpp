// Implicit fusion (implicit_fusion_sets, model/facts.hpp) in the analyses and the simulator: a chain
// through one input of a fusion node waits for the others. The wait is unbounded when the other
// input comes from another timer (any phase): every analysis refuses such a chain with the
// reason, because a simulation with the other timer's phase shifted beats any bound that
// ignores the wait. A branching chain through every input (a join) is analysed, and holds.
#include <gtest/gtest.h>

#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

// Two 100 ms timers feed the two inputs of fusion node `fuse`; `out` consumes its output.
// `extra_chain` is appended to the chains section.
std::string model(const std::string& chains) {
  return R"(
name: fusion
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: picas, threads: [{name: t0, cores: [0]}]}]
nodes:
  - {name: a, executor: e}
  - {name: b, executor: e}
  - {name: fuse, executor: e}
  - {name: sink, executor: e}
topics: [{name: ta}, {name: tb}, {name: tf}]
callbacks:
  - {name: a_t, kind: timer, node: a, period: 100ms, wcet: 1ms, priority: 10, publishes: [ta]}
  - {name: b_t, kind: timer, node: b, period: 100ms, wcet: 1ms, priority: 9, publishes: [tb]}
  - {name: fuse_a, kind: subscription, node: fuse, topic: ta, wcet: 2ms, bcet: 10us, priority: 12, publishes: [tf]}
  - {name: fuse_b, kind: subscription, node: fuse, topic: tb, wcet: 2ms, bcet: 10us, priority: 11, publishes: [tf]}
  - {name: out, kind: subscription, node: sink, topic: tf, wcet: 1ms, priority: 13}
chains:
)" + chains;
}

}  // namespace

TEST(ImplicitFusion, SetsAreSharedByModelSimulatorAndAnalyses) {
  Model m = load_model_from_string(model("  - {name: via_a, callbacks: [a_t, fuse_a, out], deadline: 100ms}\n"));
  auto sets = implicit_fusion_sets(m);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0], (std::vector<std::size_t>{m.callback_index("fuse_a"), m.callback_index("fuse_b")}));
}

TEST(ImplicitFusion, ChainWaitingForAnotherTimerIsRefusedBecauseAPhaseBeatsAnyBound) {
  Model m = load_model_from_string(model("  - {name: via_a, callbacks: [a_t, fuse_a, out], deadline: 100ms}\n"));
  // The counterexample that makes the refusal necessary: b's timer 90 ms behind a's.
  sim::SimOptions o;
  o.duration = 2'000 * ms;
  o.offsets["b_t"] = 90 * ms;
  const sim::SimResult r = sim::simulate(m, o);
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_GT(r.chains[0].wcrt, 90 * ms);  // waited for b's message
  for (const ResponseTimeAnalysis* a : analyses()) {
    std::string why;
    if (!a->applicable(m, &why)) continue;
    const AnalysisResult res = a->analyze(m);
    const ChainBound* b = res.find("via_a");
    ASSERT_NE(b, nullptr) << a->name();
    EXPECT_FALSE(b->bounded) << a->name() << " bounds a fusion wait at " << b->wcrt_bound;
    EXPECT_NE(b->reason.find("of node 'fuse'"), std::string::npos) << a->name() << ": " << b->reason;
    EXPECT_NE(b->reason.find("'fuse_b'"), std::string::npos) << b->reason;
  }
}

TEST(ImplicitFusion, JoinThroughEveryInputOfOneSourceIsBoundedAndHolds) {
  // Both inputs from one timer (as the reference system's VehicleInterface): a branching chain
  // through both inputs joins at the node and is analysed.
  std::string text = model("  - name: join\n    paths: [[a_t, fuse_a, out], [a_t, fuse_b, out]]\n    deadline: 100ms\n");
  // b's timer is replaced by a second publication of a_t: fuse_b listens to ta's twin topic.
  text.replace(text.find("publishes: [ta]}"), 16, "publishes: [ta, tb]}");
  text.replace(text.find("  - {name: b_t"), text.find("  - {name: fuse_a") - text.find("  - {name: b_t"), "");
  text.replace(text.find("  - {name: b, executor: e}\n"), 27, "");
  Model m = load_model_from_string(text);
  const ResponseTimeAnalysis* a = find_analysis("picas-st");
  ASSERT_NE(a, nullptr);
  std::string why;
  ASSERT_TRUE(a->applicable(m, &why)) << why;
  const AnalysisResult res = a->analyze(m);
  const ChainBound* b = res.find("join");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->bounded) << b->reason;
  for (Duration off : {Duration{0}, 30 * ms, 99 * ms}) {
    sim::SimOptions o;
    o.duration = 2'000 * ms;
    o.offsets["a_t"] = off;
    const sim::SimResult r = sim::simulate(m, o);
    ASSERT_GT(r.chains[0].instances, 0);
    EXPECT_LE(r.chains[0].wcrt, b->wcrt_bound) << "offset " << off;
  }
}
