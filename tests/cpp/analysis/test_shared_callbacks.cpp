// Callbacks shared by several chains and chains branching across executors: which analyses
// apply, the EDF key range each chain's callbacks are queued with (workload.cpp, edf_keys), and
// bounds that hold against the simulator on small hand-written systems (the soundness harness
// covers random ones: --feature shared-callbacks / branch-join).
#include <gtest/gtest.h>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

// Two executors of two threads, reentrant groups. `fork`: chains a and b share the timer `t` and `s`; `merge`:
// chain c's `u` also publishes to `x` (chain a's), so `x` serves a and c.
const char* kBase = R"(chainrt: 1
name: shared
hosts: [{name: h, cores: 4}]
executors:
  - {name: e1, host: h, policy: edf, threads: [{name: a, cores: [0]}, {name: b, cores: [1]}]}
  - {name: e2, host: h, policy: edf, threads: [{name: c, cores: [2]}, {name: d, cores: [3]}]}
nodes:
  - {name: n1, executor: e1}
  - {name: n2, executor: e2}
callback_groups:
  - {name: g1, type: reentrant, node: n1}
  - {name: g2, type: reentrant, node: n2}
callbacks:
  - {name: t, kind: timer, node: n1, group: g1, period: 20ms, wcet: 1ms, publishes: [ts]}
  - {name: s, kind: subscription, node: n1, group: g1, topic: ts, wcet: 1ms, publishes: [sa, sb]}
  - {name: x, kind: subscription, node: n2, group: g2, topic: sa, wcet: 2ms}
  - {name: y, kind: subscription, node: n2, group: g2, topic: sb, wcet: 2ms}
  - {name: tc, kind: timer, node: n2, group: g2, period: 40ms, wcet: 1ms, publishes: [uc]}
  - {name: u, kind: subscription, node: n1, group: g1, topic: uc, wcet: 1ms, publishes: [sa]}
chains:
  - {name: a, callbacks: [t, s, x], deadline: 18ms}
  - {name: b, callbacks: [t, s, y], deadline: 14ms}
  - {name: c, callbacks: [tc, u, x], deadline: 40ms}
)";

}  // namespace

TEST(SharedCallbacks, EdfMtBoundsForksAndMerges) {
  const Model m = load_model_from_string(kBase);
  const auto* edf = find_analysis("edf-mt");
  std::string why;
  ASSERT_TRUE(edf->applicable(m, &why)) << why;
  const AnalysisResult r = edf->analyze(m);
  for (const char* c : {"a", "b", "c"}) {
    const ChainBound* b = r.find(c);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(b->bounded) << c << ": " << b->reason;
  }
  // b (D = 14 ms) shares t and s with a: the analysis needs each chain done by its earliest key.
  EXPECT_LE(r.find("b")->wcrt_bound, 14'000'000);
  EXPECT_LE(r.find("a")->wcrt_bound, 14'000'000);  // a's callbacks may be keyed with b's 14 ms
}

TEST(SharedCallbacks, FixedPriorityAnalysesBoundSharedCallbacks) {
  std::string y = kBase;
  for (std::string::size_type p; (p = y.find("policy: edf")) != std::string::npos;) y.replace(p, 11, "policy: fp");
  const Model m = load_model_from_string(y);
  const AnalysisResult r = find_analysis("fp-mt")->analyze(m);
  for (const char* c : {"a", "b", "c"}) EXPECT_TRUE(r.find(c)->bounded) << c << ": " << r.find(c)->reason;
}

TEST(SharedCallbacks, EdfRefusesMessagesWithoutADeadlineAheadOfAChain) {
  // A timer on no chain publishes to x: its messages carry no deadline and queue ahead of a's.
  std::string y = kBase;
  y.insert(y.find("chains:"), "  - {name: stray, kind: timer, node: n2, period: 30ms, wcet: 1ms, publishes: [sa]}\n");
  const Model m = load_model_from_string(y);
  std::string why;
  EXPECT_FALSE(find_analysis("edf-mt")->applicable(m, &why));
  EXPECT_NE(why.find("no deadline"), std::string::npos) << why;
  EXPECT_TRUE(find_analysis("fp-mt")->applicable(m, &why)) << why;  // FP: one priority per callback
}

TEST(SharedCallbacks, ChainBranchingAcrossExecutorsIsBoundedByItsPaths) {
  // One chain t -> s -> {x, y} with x and y on the other executor: formerly refused.
  const Model m = load_model_from_string(R"(chainrt: 1
name: branch
hosts: [{name: h, cores: 2}]
executors:
  - {name: e1, host: h, policy: fp, threads: [{name: a, cores: [0]}]}
  - {name: e2, host: h, policy: fp, threads: [{name: c, cores: [1]}]}
nodes:
  - {name: n1, executor: e1}
  - {name: n2, executor: e2}
callbacks:
  - {name: t, kind: timer, node: n1, period: 20ms, wcet: 1ms, priority: 5, publishes: [ts]}
  - {name: s, kind: subscription, node: n1, topic: ts, wcet: 1ms, priority: 6, publishes: [sa, sb]}
  - {name: x, kind: subscription, node: n2, topic: sa, wcet: 2ms, priority: 7}
  - {name: y, kind: subscription, node: n2, topic: sb, wcet: 3ms, priority: 8}
chains:
  - {name: fan, paths: [[t, s, x], [t, s, y]]}
)");
  for (const char* a : {"fp-mt", "picas-st"}) {
    std::string why;
    ASSERT_TRUE(find_analysis(a)->applicable(m, &why)) << a << ": " << why;
    const ChainBound* b = find_analysis(a)->analyze(m).find("fan");
    ASSERT_TRUE(b->bounded) << a << ": " << b->reason;
    // Both branches on one thread: the worst path is t, s, then x and y one after the other.
    EXPECT_GE(b->wcrt_bound, 7'000'000) << a;
    EXPECT_LE(b->wcrt_bound, 20'000'000) << a;
  }
}
