// The holistic analyses' work limit (HolisticOptions::max_pairs, chain_rta.hpp): a model whose
// chains share an executor in such numbers that the pairwise rounds pass the limit is reported
// chain by chain without a bound and with the reason, instead of running for minutes; below
// the limit the bounds are those of the unlimited analysis.
#include <gtest/gtest.h>

#include <string>

#include "chain_rta.hpp"
#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "workload.hpp"

using namespace chainrt;
using namespace chainrt::detail;

namespace {

// `n` one-timer chains on one single-threaded fixed-priority executor (n*n comparisons a round).
Model timers(int n) {
  std::string y = "chainrt: 1\nexecutors:\n  - {name: x, policy: fp, threads: [{name: t, cores: [0]}]}\n"
                  "nodes:\n  - {name: a, executor: x}\ncallbacks:\n";
  for (int i = 0; i < n; ++i)
    y += "  - {name: c" + std::to_string(i) + ", kind: timer, node: a, period: 100ms, wcet: 100us, priority: " +
         std::to_string(i + 1) + "}\n";
  y += "chains:\n";
  for (int i = 0; i < n; ++i) y += "  - {name: k" + std::to_string(i) + ", callbacks: [c" + std::to_string(i) + "]}\n";
  return load_model_from_string(y, "timers.yaml");
}

AnalysisResult fp(const Model& m, std::uint64_t max_pairs) {
  const View v = build_view(m, model_hop_cost(m));
  HolisticOptions opt;
  opt.analysis = "fp-mt";
  opt.work_windows = true;
  opt.max_pairs = max_pairs;
  SegmentBound seg = [](const View& vv, int k, const Segment& s, const Windows& W, Duration arrival, Duration limit) {
    return global_segment_bound(vv, Order::FixedPriority, k, s, W, arrival, limit);
  };
  return holistic(v, seg, opt);
}

}  // namespace

TEST(WorkLimit, BelowTheLimitTheBoundsAreTheUnlimitedOnes) {
  const Model m = timers(40);
  const AnalysisResult unlimited = fp(m, UINT64_MAX);
  const AnalysisResult shipped = find_analysis("fp-mt")->analyze(m);
  ASSERT_EQ(unlimited.chains.size(), 40u);
  for (const auto& c : unlimited.chains) {
    ASSERT_TRUE(c.bounded) << c.chain << ": " << c.reason;
    ASSERT_NE(shipped.find(c.chain), nullptr);
    EXPECT_TRUE(shipped.find(c.chain)->bounded);
    EXPECT_EQ(shipped.find(c.chain)->wcrt_bound, c.wcrt_bound) << c.chain;
  }
  EXPECT_TRUE(shipped.schedulable);
}

TEST(WorkLimit, ChainsBeyondTheLimitAreReportedWithoutABoundAndWhy) {
  const Model m = timers(40);  // 40 chains on one executor: 1,600 comparisons a round
  const AnalysisResult refused = fp(m, 4'000);  // not even three rounds: refused before any
  EXPECT_FALSE(refused.schedulable);
  ASSERT_EQ(refused.chains.size(), 40u);
  for (const auto& c : refused.chains) {
    EXPECT_FALSE(c.bounded) << c.chain;
    EXPECT_NE(c.reason.find("not analysed: 40 chains share executor 'x'"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("stops beyond 4000 comparisons"), std::string::npos) << c.reason;
  }
  // Room for three rounds: as many as the fixed point needs here, or the reason says it stopped.
  const AnalysisResult three = fp(m, 4'800);
  for (const auto& c : three.chains) {
    if (!c.bounded) {
      EXPECT_NE(c.reason.find("did not converge within the analysis's work limit"), std::string::npos) << c.reason;
    }
  }
  const AnalysisResult enough = fp(m, 1'600 * 10);
  for (const auto& c : enough.chains) EXPECT_TRUE(c.bounded) << c.chain << ": " << c.reason;
}
