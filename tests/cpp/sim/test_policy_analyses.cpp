// Every policy's default analyses (sched/policy.hpp) are registry analyses that bound that
// policy (or one it refines: picas executors are fixed-priority ones) and see the executors
// they are chosen for.
#include <gtest/gtest.h>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/sched/policy.hpp"

using namespace chainrt;

TEST(PolicyDescriptor, DefaultAnalysesAreRegistryAnalyses) {
  for (const auto& d : sched::policies()) {
    if (d.analysis_single) {
      const auto* a = find_analysis(d.analysis_single);
      ASSERT_NE(a, nullptr) << d.name << ": " << d.analysis_single;
    }
    if (d.analysis_multi) {
      const auto* a = find_analysis(d.analysis_multi);
      ASSERT_NE(a, nullptr) << d.name << ": " << d.analysis_multi;
      EXPECT_FALSE(a->single_threaded()) << d.name << ": " << d.analysis_multi << " is chosen for multi-threaded executors";
    }
  }
  for (const auto* a : analyses()) EXPECT_NE(sched::find_policy(to_string(a->policy())), nullptr) << a->name();
}
