// The soundness harness on systems that all have one feature (--feature): executors sharing a
// core under SCHED_FIFO priorities, callbacks shared by several chains (merges and forks), and
// chains that branch onto another executor and join at a fusion node. CI slice; the offline
// runs are 10,000 systems per feature and analysis (docs/analysis.md). Also the fan-out
// counterexample that the shared-callback feature found (sequential carry-in workload).
#include <gtest/gtest.h>

#ifdef CHAINRT_SIM_SOUNDNESS
#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "chainrt/sim/soundness.hpp"

using namespace chainrt;

TEST(SoundnessFeatures, EverySystemHasTheFeatureAndNoBoundIsBeaten) {
  for (const std::string& feature : sim::soundness_features())
    for (const char* analysis : {"edf-mt", "fp-mt", "picas-st", "cros-rt"}) {
      if (feature.starts_with("accelerator") && std::string(analysis) == "cros-rt") continue;  // refused (below)
      sim::SoundnessOptions o;
      o.analysis = analysis;
      o.feature = feature;
      o.sets = 150;
      o.seed = 2031;
      o.harsh = true;
      o.climb = 4;
      const auto r = sim::run_soundness(o);
      const std::string what = feature + " / " + analysis + ": " + sim::report_to_json(r);
      EXPECT_EQ(r.feature, feature);
      EXPECT_GT(r.applicable, 100) << what;
      EXPECT_EQ(r.feature_systems, r.applicable) << what;
      EXPECT_GT(r.feature_bounded_systems, 10) << what;  // the feature's chains get bounds
      EXPECT_TRUE(r.counterexamples.empty()) << what;
      EXPECT_LE(r.max_ratio, 1.0) << what;
      EXPECT_GT(r.ratio_chains, 0) << what;
      EXPECT_LE(r.ratio_p10, r.ratio_median) << what;
      EXPECT_LE(r.ratio_median, r.ratio_p90) << what;
      if (std::string(analysis) == "cros-rt") EXPECT_GT(r.multi_host_systems, 10) << what;  // chains across hosts
      if (feature == "shared-callbacks") {
        EXPECT_GT(r.merges, 0) << what;
        EXPECT_GT(r.forks, 0) << what;
      }
      if (feature == "accelerator") {  // both access modes, and hosts with one device of each
        EXPECT_GT(r.direct_access_systems, 10) << what;
        EXPECT_GT(r.server_access_systems, 10) << what;
        EXPECT_GT(r.both_access_systems, 5) << what;
      }
      if (feature == "accelerator-block") {  // the server with block preemption, alone or beside a direct device
        EXPECT_GT(r.server_access_systems, 10) << what;
        EXPECT_GT(r.both_access_systems, 5) << what;
      }
    }
}

TEST(SoundnessFeatures, UnknownFeatureIsAnError) {
  sim::SoundnessOptions o;
  o.analysis = "fp-mt";
  o.feature = "nope";
  EXPECT_THROW(sim::run_soundness(o), std::invalid_argument);
}

// A chain instance that fans out runs on several threads at once: in a window of x it can do
// more than x units of work. The sequential carry-in workload bounded chain0 by 11 ms; the
// simulator shows 12 ms. The parallel form (Melani et al.) bounds it.
TEST(SoundnessFeatures, FanOutCarryInIsBounded) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/tests/models/fanout_carry_in.yaml");
  const AnalysisResult res = find_analysis("edf-mt")->analyze(m);
  sim::SimOptions so;
  so.duration = 3'740'000'000;
  so.policy = Policy::Edf;
  so.exec = sim::ExecTime::Bcet;
  so.keep_samples = false;
  const sim::SimResult r = sim::simulate(m, so);
  const ChainBound* b = res.find("chain0");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->bounded) << b->reason;
  const sim::ChainStats* st = r.chain("chain0");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->wcrt, 12'000'000);  // the adversarial instance still happens
  EXPECT_GE(b->wcrt_bound, st->wcrt);
  for (const auto& c : res.chains)
    if (c.bounded && r.chain(c.chain) && r.chain(c.chain)->instances > 0) EXPECT_GE(c.wcrt_bound, r.chain(c.chain)->wcrt) << c.chain;
}
// Fan-out work on no chain ends after its chain's path: other chains see it in the window of
// when all of an instance's work is done (R_work). With the path's end, picas-st bounded chain2
// by 12 ms against 99 ms simulated.
TEST(SoundnessFeatures, FanOutOnNoChainIsSeenUntilItEnds) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/tests/models/fanout_no_chain.yaml");
  sim::SimOptions so;
  so.duration = 2'880'000'000;
  so.policy = Policy::Picas;
  so.keep_samples = false;
  const sim::SimResult r = sim::simulate(m, so);
  ASSERT_NE(r.chain("chain2"), nullptr);
  EXPECT_GE(r.chain("chain2")->wcrt, 90'000'000);  // the schedule that beat the old bound
  for (const char* a : {"picas-st", "fp-mt", "edf-mt"}) {
    so.policy = find_analysis(a)->policy();
    const sim::SimResult ra = sim::simulate(m, so);
    for (const auto& c : find_analysis(a)->analyze(m).chains) {
      const sim::ChainStats* st = ra.chain(c.chain);
      if (!c.bounded || !st || st->instances == 0) continue;
      EXPECT_GE(c.wcrt_bound, st->wcrt) << a << " " << c.chain;
    }
  }
}

TEST(SoundnessFeatures, AnalysesWithoutAcceleratorTermsRefuseEverySuchSystem) {
  for (const char* analysis : {"cros-rt", "ros-default-st"}) {
    sim::SoundnessOptions o;
    o.analysis = analysis;
    o.feature = "accelerator";
    o.sets = 20;
    o.seed = 77;
    const auto r = sim::run_soundness(o);
    EXPECT_EQ(r.applicable, 0) << analysis;
    EXPECT_TRUE(r.counterexamples.empty()) << analysis;
  }
}

#endif
