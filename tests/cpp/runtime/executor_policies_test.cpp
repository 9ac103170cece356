// Integration tests of the chainrt executor on real ROS 2 (rcl + Fast DDS, no mocks):
// pub/sub and timers under every policy; EDF, FP and ROS-default order in the dispatch trace of
// a deterministic scenario (every callback ready, one thread; EDF ready-queue paper Sec. IV-A,
// Algorithm 1); registration-order tie-break.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
namespace {

using testing::unique_topic;
using testing::wait_matched;
using testing::wait_until;
using Str = std_msgs::msg::String;

class PolicyTest : public ::testing::TestWithParam<Policy> {};

// A timer publishes a counter, a subscription in another node receives it; both run under the
// chainrt executor with two threads.
TEST_P(PolicyTest, PubSubAndTimers) {
  Context ctx;
  Node talker(ctx, "talker");
  Node listener(ctx, "listener");
  const std::string topic = unique_topic("count");
  auto pub = talker.create_publisher<Str>(topic, 10);
  std::atomic<int> fired{0}, received{0};
  std::atomic<bool> in_order{true};
  std::atomic<int> last{-1};
  CallbackOptions to;
  to.name = "tick";
  to.priority = 1;
  talker.create_timer(5'000'000, [&] {
    Str m;
    m.data = std::to_string(fired.fetch_add(1));
    pub->publish(m);
  }, to);
  CallbackOptions so;
  so.name = "tock";
  so.priority = 2;
  listener.create_subscription<Str>(topic, 10, [&](const Str& m) {
    int v = std::stoi(m.data);
    if (v <= last.load()) in_order = false;
    last = v;
    received.fetch_add(1);
  }, so);
  ASSERT_TRUE(wait_matched(*pub));

  ExecutorOptions eo;
  eo.policy = GetParam();
  eo.threads.resize(2);
  Executor ex(ctx, eo);
  ex.add_node(talker);
  ex.add_node(listener);
  ex.start();
  EXPECT_TRUE(wait_until([&] { return received.load() >= 10; }));
  ex.request_stop();
  ex.join();
  EXPECT_GE(fired.load(), 10);
  EXPECT_GE(received.load(), 10);
  EXPECT_TRUE(in_order.load());
  RunReport r = ex.report();
  ASSERT_EQ(r.callbacks.size(), 2u);
  EXPECT_EQ(r.callbacks[0].name, "tick");
  EXPECT_EQ(r.callbacks[0].instances, static_cast<std::uint64_t>(fired.load()));
  EXPECT_EQ(r.callbacks[1].instances, static_cast<std::uint64_t>(received.load()));
  EXPECT_EQ(r.policy, to_string(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyTest,
                         ::testing::Values(Policy::RosDefault, Policy::Picas,
                                           Policy::FixedPriority, Policy::Edf, Policy::Mixed,
                                           Policy::Lame),
                         [](const auto& info) {
                           std::string n = to_string(info.param);
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Deterministic scenario: five subscriptions (registration order s0..s4) and a timer (registered
// last) are all ready before the single executor thread starts. The dispatch trace must follow
// the policy's order: EDF by the deadline carried by the message, FP by priority, ROS default
// by kind (timer first) and registration order.
std::vector<std::string> dispatch_order(Policy policy) {
  Context ctx;
  Node app(ctx, "app");
  Node feeder(ctx, "feeder");
  // deadlines (ns, relative to a common base) and priorities per subscription
  const std::vector<Duration> deadline = {50, 10, 40, 20, 30};
  // a different order than the deadlines, so EDF and FP orders differ
  const std::vector<int> priority = {3, 1, 5, 2, 4};
  std::vector<std::shared_ptr<Publisher<Str>>> pubs;
  for (int i = 0; i < 5; ++i) {
    const std::string topic = unique_topic("s" + std::to_string(i));
    pubs.push_back(feeder.create_publisher<Str>(topic, 1));
    CallbackOptions o;
    o.name = "s" + std::to_string(i);
    o.priority = priority[i];
    app.create_subscription<Str>(
        topic, 1, [](const Str&) {}, o, [](const Str& m) {
          Stamp s;
          s.release = 0;
          s.deadline = 1'000'000'000 + std::stoll(m.data);
          return s;
        });
  }
  CallbackOptions to;
  to.name = "timer";  // no priority, no chain: no deadline
  app.create_timer(3'600'000'000'000, [] {}, to);
  for (auto& p : pubs) EXPECT_TRUE(wait_matched(*p));
  for (int i = 0; i < 5; ++i) {
    Str m;
    m.data = std::to_string(deadline[i]);
    pubs[i]->publish(m);
  }
  ExecutorOptions eo;
  eo.policy = policy;  // one thread
  // The timer's first release on the release grid is one second from now (as a launcher sets
  // the run's epoch ahead of its executors): with the process-wide epoch, an executor armed
  // after an earlier test's would start the hour-long timer at its next grid instant.
  eo.release_epoch = now_ns() + 1'000'000'000;
  Executor ex(ctx, eo);
  ex.add_node(app);
  EXPECT_TRUE(wait_until([&] { return ex.poll_ready() == 6; }));
  ex.start();
  EXPECT_TRUE(wait_until([&] { return ex.report().dispatches >= 6; }));
  ex.request_stop();
  ex.join();
  std::vector<std::string> order;
  for (const auto& r : ex.trace()) order.push_back(ex.name_of(r.callback));
  return order;
}

TEST(DispatchOrder, EdfFollowsChainDeadlines) {
  EXPECT_EQ(dispatch_order(Policy::Edf),
            (std::vector<std::string>{"s1", "s3", "s4", "s2", "s0", "timer"}));
}

TEST(DispatchOrder, FixedPriorityFollowsPriorities) {
  EXPECT_EQ(dispatch_order(Policy::FixedPriority),
            (std::vector<std::string>{"s2", "s4", "s0", "s3", "s1", "timer"}));
}

TEST(DispatchOrder, RosDefaultIsTimerFirstThenRegistrationOrder) {
  EXPECT_EQ(dispatch_order(Policy::RosDefault),
            (std::vector<std::string>{"timer", "s0", "s1", "s2", "s3", "s4"}));
}

}  // namespace
}  // namespace chainrt::runtime

namespace chainrt::runtime {
namespace {

// mixed: callbacks with a deadline first (here every subscription, by deadline), the timer
// (neither deadline nor priority) last; lame: priority first (the timer has none = 0).
TEST(DispatchOrder, MixedPutsDeadlineCallbacksFirst) {
  EXPECT_EQ(dispatch_order(Policy::Mixed),
            (std::vector<std::string>{"s1", "s3", "s4", "s2", "s0", "timer"}));
}

TEST(DispatchOrder, LameFollowsPrioritiesThenDefaultOrder) {
  EXPECT_EQ(dispatch_order(Policy::Lame),
            (std::vector<std::string>{"s2", "s4", "s0", "s3", "s1", "timer"}));
}

}  // namespace
}  // namespace chainrt::runtime
