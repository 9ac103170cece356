// The jiang22 reference curve (analysis/src/reference_jiang22.cpp): a hand-computed known
// answer, and that it stays out of the registry (it is refuted, never a verdict).
#include <gtest/gtest.h>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/reference.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

const char* kTwoChains = R"(chainrt: 1
name: jiang
hosts: [{name: h, cores: 2}]
executors:
  - {name: e, host: h, policy: ros-default, threads: [{name: t0, cores: [0]}, {name: t1, cores: [1]}]}
nodes: [{name: n, executor: e}]
callback_groups: [{name: r, type: reentrant, node: n}]
topics: [{name: x}, {name: y}]
callbacks:
  - {name: a1, kind: timer, node: n, group: r, period: 20ms, wcet: 2ms, publishes: [x]}
  - {name: a2, kind: subscription, node: n, group: r, topic: x, wcet: 3ms}
  - {name: b1, kind: timer, node: n, group: r, period: 50ms, wcet: 4ms, publishes: [y]}
  - {name: b2, kind: subscription, node: n, group: r, topic: y, wcet: 6ms}
chains:
  - {name: A, callbacks: [a1, a2]}
  - {name: B, callbacks: [b1, b2]}
)";

}  // namespace

// m = 2. W_k(L) = N·C_k + min(C_k, L + T_k − C_k − N·T_k), N = ⌊(L + T_k − C_k)/T_k⌋.
// A (C = 5, e_last = 3): L = 2 + ⌈W_B(L)/2⌉, W_B = min(10, L + 40) = 10 for small L: L = 2 → 7,
//   7 → 7: L* = 7 ms, R_A = 10 ms.
// B (C = 10, e_last = 6): L = 4 + ⌈W_A(L)/2⌉; W_A(L) = 5 + min(5, L − 5) for 5 <= L < 25, so
//   L = 4 + L/2 → L* = 8 ms (the iteration creeps 4, 6.5, 7.25, ...: the envelope jump must
//   land exactly on it), R_B = 14 ms.
TEST(AnalysisReference, Jiang22KnownAnswer) {
  Model m = load_model_from_string(kTwoChains, "jiang.yaml");
  reference::Jiang22Result r = reference::jiang22(m);
  ASSERT_TRUE(r.applicable) << r.why;
  ASSERT_EQ(r.wcrt.size(), 2u);
  ASSERT_TRUE(r.wcrt[0] && r.wcrt[1]);
  EXPECT_EQ(*r.wcrt[0], 10 * ms);
  EXPECT_EQ(*r.wcrt[1], 14 * ms);
  EXPECT_TRUE(r.schedulable);
}

TEST(AnalysisReference, Jiang22MissesDeadlineAboveIt) {
  // B's deadline 13 ms < 14 ms: no fixed point within it.
  std::string y = kTwoChains;
  y.replace(y.find("{name: B, callbacks: [b1, b2]}"), 30, "{name: B, callbacks: [b1, b2], deadline: 13ms}");
  reference::Jiang22Result r = reference::jiang22(load_model_from_string(y, "jiang.yaml"));
  ASSERT_TRUE(r.applicable);
  EXPECT_FALSE(r.wcrt[1].has_value());
  EXPECT_FALSE(r.schedulable);
}

TEST(AnalysisReference, Jiang22IsNotARegistryAnalysis) {
  EXPECT_EQ(find_analysis("jiang22"), nullptr);
  for (const auto* a : analyses()) EXPECT_EQ(a->name().find("jiang"), std::string::npos);
}
