// Every policy's default analyses (declared by the analyses: default_for) are registry
// analyses that bound that policy (or one it refines: picas executors are fixed-priority ones)
// and see the executors they are chosen for.
#include <gtest/gtest.h>

#include <map>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/sched/policy.hpp"

using namespace chainrt;

TEST(PolicyDescriptor, DefaultAnalysesAreRegistryAnalyses) {
  for (const auto& d : sched::policies()) {
    std::string why_single, why_multi;
    const auto* single = default_analysis(d.policy, false, &why_single);
    const auto* multi = default_analysis(d.policy, true, &why_multi);
    // a default analysis for one thread, or the reason there is none
    EXPECT_TRUE(single != nullptr || !why_single.empty()) << d.name;
    EXPECT_TRUE(multi != nullptr || !why_multi.empty()) << d.name;
    if (single) {
      const auto* a = find_analysis(single->name());
      ASSERT_NE(a, nullptr) << d.name << ": " << single->name();
    }
    if (multi) {
      const auto* a = find_analysis(multi->name());
      ASSERT_NE(a, nullptr) << d.name << ": " << multi->name();
      EXPECT_FALSE(a->single_threaded())
          << d.name << ": " << multi->name() << " is chosen for multi-threaded executors";
    }
  }
  for (const auto* a : analyses()) EXPECT_NE(sched::find_policy(to_string(a->policy())), nullptr) << a->name();
}

// The defaults are declared by the analyses alone, at most one per policy and thread count.
TEST(PolicyDescriptor, AtMostOneDefaultAnalysisPerPolicyAndThreads) {
  for (const auto& d : sched::policies())
    for (const auto bit : {DefaultFor::SingleThreaded, DefaultFor::MultiThreaded}) {
      int n = 0;
      for (const auto* a : analyses())
        if (static_cast<unsigned>(a->default_for(d.policy)) & static_cast<unsigned>(bit)) ++n;
      EXPECT_LE(n, 1) << d.name;
    }
}

// The choice as chainrt analyze has always made it (docs/analysis.md).
TEST(PolicyDescriptor, DefaultAnalysisOfEachPolicy) {
  const std::map<std::pair<Policy, bool>, std::string> expected{
      {{Policy::RosDefault, false}, "ros-default-st"}, {{Policy::RosDefault, true}, ""},
      {{Policy::Picas, false}, "picas-st"},            {{Policy::Picas, true}, "fp-mt"},
      {{Policy::FixedPriority, false}, "fp-mt"},       {{Policy::FixedPriority, true}, "fp-mt"},
      {{Policy::Edf, false}, "edf-mt"},                {{Policy::Edf, true}, "edf-mt"},
      {{Policy::Mixed, false}, ""},                    {{Policy::Mixed, true}, ""},
      {{Policy::Lame, false}, "fp-mt"},                {{Policy::Lame, true}, "fp-mt"}};
  for (const auto& [key, name] : expected) {
    std::string why;
    const auto* a = default_analysis(key.first, key.second, &why);
    EXPECT_EQ(a ? a->name() : "", name) << to_string(key.first) << (key.second ? " multi" : " single") << ": " << why;
  }
  std::string why;
  default_analysis(Policy::Mixed, false, &why);
  EXPECT_EQ(why, "no analysis of the mixed policy is shipped");
  default_analysis(Policy::RosDefault, true, &why);
  EXPECT_NE(why.find("Teper et al. 2024"), std::string::npos) << why;
}
