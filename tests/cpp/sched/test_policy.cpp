// The policy descriptors (sched/policy.hpp): one per policy of policies.def, named as the model
// names it, each ordering and admission rule the one the ReadyQueue and Admission use.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/policy.hpp"

using namespace chainrt;
using namespace chainrt::sched;

TEST(PolicyDescriptor, OnePerPolicyNamedAsTheModelNamesIt) {
  ASSERT_EQ(policies().size(), kPolicyCount);
  std::set<std::string> names;
  for (std::size_t i = 0; i < policies().size(); ++i) {
    const auto& d = policies()[i];
    EXPECT_EQ(static_cast<std::size_t>(d.policy), i);
    EXPECT_STREQ(d.name, to_string(d.policy));
    EXPECT_EQ(policy_from(d.name), d.policy);
    EXPECT_EQ(find_policy(d.name), &d);
    EXPECT_EQ(&descriptor(d.policy), &d);
    EXPECT_NE(d.key, nullptr);
    EXPECT_GT(std::string(d.description).size(), 10u);
    names.insert(d.name);
  }
  EXPECT_EQ(names.size(), kPolicyCount);
  EXPECT_EQ(find_policy("no-such-policy"), nullptr);
}

TEST(PolicyDescriptor, AdmissionRules) {
  EXPECT_EQ(admission_rule(Policy::RosDefault, {}), AdmissionRule::PollingPoint);
  EXPECT_EQ(admission_rule(Policy::Edf, {true, false}), AdmissionRule::Immediate);
  EXPECT_EQ(admission_rule(Policy::Lame, {true, true}), AdmissionRule::Immediate);
  EXPECT_EQ(admission_rule(Policy::Lame, {true, false}), AdmissionRule::LameBestEffort);
}

TEST(PolicyDescriptor, TheReadyQueueOrdersByTheDescriptorsKey) {
  // Two callbacks: a subscription with a high priority and a timer without one. Fixed
  // priority takes the subscription first, the ROS default order the timer.
  std::vector<CallbackSpec> cs(2);
  cs[0].kind = CallbackKind::Timer;
  cs[1].kind = CallbackKind::Subscription;
  cs[1].priority = 10;
  for (const auto& d : policies()) {
    ReadyQueue q(d.policy, cs, {GroupSpec{GroupType::Reentrant}}, 1);
    q.push(0, 5'000'000);
    q.push(1, 9'000'000);
    const Key k0 = d.key(cs[0], 0, 5'000'000), k1 = d.key(cs[1], 1, 9'000'000);
    const CallbackId expected = k0 < k1 ? 0 : 1;
    EXPECT_EQ(q.select(0), expected) << d.name;
    EXPECT_EQ(key_of(d.policy, cs[1], 1, 9'000'000) < key_of(d.policy, cs[0], 0, 5'000'000), k1 < k0) << d.name;
  }
  EXPECT_TRUE(descriptor(Policy::FixedPriority).key(cs[1], 1, kNoDeadline) <
              descriptor(Policy::FixedPriority).key(cs[0], 0, kNoDeadline));
  EXPECT_TRUE(descriptor(Policy::RosDefault).key(cs[0], 0, kNoDeadline) <
              descriptor(Policy::RosDefault).key(cs[1], 1, kNoDeadline));
  EXPECT_TRUE(descriptor(Policy::Edf).key(cs[0], 0, 5'000'000) < descriptor(Policy::Edf).key(cs[1], 1, 9'000'000));
}
