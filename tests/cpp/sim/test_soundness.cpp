// The soundness harness: every shipped analysis survives a few hundred generated systems under
// adversarial simulations (CI size; the offline run uses 100,000), and the harness does find
// counterexamples when an analysis is wrong (a deliberately optimistic one), saving a model
// file that reproduces the violation.
#include <gtest/gtest.h>

#ifdef CHAINRT_SIM_SOUNDNESS
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "chainrt/sim/soundness.hpp"

using namespace chainrt;

// One test per shipped analysis: each runs in its own process under its own time limit (ctest
// runs them side by side), the analyses' campaigns being of very different cost.
class ShippedAnalysis : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedAnalysis, HasNoCounterexample) {
  sim::SoundnessOptions o;
  o.analysis = GetParam();
  // sag explores every schedule of a system and replays a witness schedule per chain: a third of
  // the systems keeps its test within ctest's time limit (its 10,000-system campaigns:
  // docs/analysis.md)
  o.sets = GetParam() == "sag" ? 100 : 300;
  o.seed = 2026;
  const auto r = sim::run_soundness(o);
  EXPECT_EQ(r.systems, o.sets);
  EXPECT_GT(r.applicable, 0);
  EXPECT_GT(r.chains_checked, 0);
  EXPECT_TRUE(r.counterexamples.empty()) << sim::report_to_json(r);
  EXPECT_LE(r.max_ratio, 1.0);
}

std::vector<std::string> shipped_analysis_names() {
  std::vector<std::string> names;
  for (const ResponseTimeAnalysis* a : analyses()) names.push_back(a->name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Soundness, ShippedAnalysis, ::testing::ValuesIn(shipped_analysis_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Soundness, EveryShippedAnalysisHasItsTest) { EXPECT_FALSE(shipped_analysis_names().empty()); }

// The harsh generator and the hill climbing (CI slice; the offline run is 10,000 systems per
// analysis, docs/analysis.md): systems outside the papers' assumptions reach every analysis.
TEST(Soundness, HarshSystemsAndHillClimbingHaveNoCounterexample) {
  for (const ResponseTimeAnalysis* a : analyses()) {
    sim::SoundnessOptions o;
    o.analysis = a->name();
    o.sets = 80;
    o.seed = 2027;
    o.harsh = true;
    o.climb = 8;
    const auto r = sim::run_soundness(o);
    EXPECT_EQ(r.systems, 80) << a->name();
    EXPECT_GT(r.chains_checked, 0) << a->name();
    EXPECT_GT(r.shuffled_priorities, 0) << a->name();
    EXPECT_GT(r.below_wcet, 0) << a->name();
    EXPECT_GT(r.overloaded, 0) << a->name();
    EXPECT_GT(r.tight_deadlines, 0) << a->name();
    EXPECT_GT(r.climb_simulations, 0) << a->name();
    EXPECT_TRUE(r.counterexamples.empty()) << a->name() << ": " << sim::report_to_json(r);
    EXPECT_LE(r.max_ratio, 1.0) << a->name();
  }
}

namespace {
// Claims every chain finishes within the sum of its WCETs minus 1 ns: wrong as soon as any
// chain sees interference or runs its full WCET.
class Optimistic : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "optimistic"; }
  std::string summary() const override { return "deliberately unsound (test only)"; }
  Policy policy() const override { return Policy::Edf; }
  bool applicable(const Model&, std::string*) const override { return true; }
  AnalysisResult analyze(const Model& m) const override {
    AnalysisResult r;
    r.analysis = name();
    r.schedulable = true;
    for (const Chain& c : m.chains) {
      ChainBound b;
      b.chain = c.name;
      b.bounded = true;
      b.wcrt_bound = m.chain_wcet(c) - 1;
      b.deadline = c.deadline;
      b.slack = c.deadline - b.wcrt_bound;
      b.schedulable = true;
      r.chains.push_back(b);
    }
    return r;
  }
};
}  // namespace

TEST(Soundness, FindsAndSavesCounterexamplesOfAWrongAnalysis) {
  const auto dir = std::filesystem::temp_directory_path() / "chainrt_soundness_test";
  std::filesystem::remove_all(dir);
  sim::SoundnessOptions o;
  o.sets = 5;
  o.variants = 1;
  o.counterexample_dir = dir.string();
  Optimistic bad;
  const auto r = sim::run_soundness(bad, o);
  ASSERT_FALSE(r.counterexamples.empty());
  const auto& c = r.counterexamples.front();
  EXPECT_EQ(c.kind, "wcrt");
  EXPECT_GT(c.observed, c.bound);
  ASSERT_FALSE(c.file.empty());
  // The saved model reproduces the violation.
  const Model m = load_model(c.file);
  sim::SimOptions so;
  so.policy = Policy::Edf;
  so.duration = 4'000'000'000;
  const auto res = sim::simulate(m, so);
  EXPECT_GT(res.chain(c.chain)->wcrt, c.bound);
  std::filesystem::remove_all(dir);
}

namespace {
// The mistake cros-rt once made: bound the picas executor as if callback priorities followed
// the chain priorities (PiCAS rule chain priority * 1024 + position), whatever the model says.
class ChainRanked : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "chain-ranked"; }
  std::string summary() const override { return "ranks by chain priority (test only)"; }
  Policy policy() const override { return Policy::Picas; }
  bool applicable(const Model& m, std::string* why) const override {
    return find_analysis("picas-st")->applicable(m, why);
  }
  AnalysisResult analyze(const Model& m) const override {
    Model ranked = m;
    for (auto& cb : ranked.callbacks) cb.priority.reset();
    for (const Chain& c : ranked.chains)
      for (std::size_t i = 0; i < c.callbacks.size(); ++i)
        for (auto& cb : ranked.callbacks)
          if (cb.name == c.callbacks[i]) cb.priority = c.priority.value_or(0) * 1024 + static_cast<int>(i);
    return find_analysis("picas-st")->analyze(ranked);
  }
};
}  // namespace

// The harsh generator finds it (the classic one, whose priorities follow the chains, cannot).
TEST(Soundness, HarshGeneratorFindsChainPriorityRanking) {
  ChainRanked bad;
  sim::SoundnessOptions o;
  o.sets = 60;
  o.seed = 5;
  o.variants = 2;
  EXPECT_TRUE(sim::run_soundness(bad, o).counterexamples.empty());
  o.harsh = true;
  EXPECT_FALSE(sim::run_soundness(bad, o).counterexamples.empty());
}

TEST(Soundness, UnknownAnalysisIsAnError) {
  sim::SoundnessOptions o;
  o.analysis = "no-such-analysis";
  EXPECT_THROW(sim::run_soundness(o), std::invalid_argument);
}
#endif
