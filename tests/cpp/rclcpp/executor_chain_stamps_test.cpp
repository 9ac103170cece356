// How the ChainExecutor measures chains of unmodified nodes whose messages carry no stamp: it
// hands a chain instance to the successors when a callback starts. A LaME fusion trigger that
// runs before its fused input has cached anything publishes nothing; the instance it would have
// handed on has no message, and must not be taken by the next message (which would measure every
// later instance from a release one period too early: a deadline miss per instance that never
// happened, which woke LaME's controller on every instance). Chains with a common prefix share
// one instance per message on their shared hops (handing one instance per chain there left a
// queue that grew by one instance per period). The executor runs on an injected
// clock that each callback advances by its model WCET, and an unbound filler timer keeps it
// moving while the chains idle; a callback waits, in real time, until what it published was
// delivered. Never a wall-clock assertion.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::Duration;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
using Str = std_msgs::msg::String;
constexpr Duration ms = 1'000'000;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// Front F (priority 10) and rear R (1) timers every 100 ms; the fusion node's trigger `trig`
// (priority 9, on F's topic) fuses the input `in` (priority 2, on R's topic): at the first
// release the trigger runs before the input has cached R's message, so it publishes nothing.
// Chain C = F -> trig -> out, deadline 100 ms; each instance takes 3 ms of the clock.
constexpr const char* kModel = R"(
name: fusion_stamps
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: fp}]
nodes: [{name: front, executor: e}, {name: rear, executor: e}, {name: fusion, executor: e}, {name: sink, executor: e}]
topics: [{name: tf, size: 16B}, {name: tr, size: 16B}, {name: fused, size: 16B}]
callbacks:
  - {name: F, kind: timer, node: front, period: 100ms, wcet: 1ms, priority: 10, publishes: [tf]}
  - {name: R, kind: timer, node: rear, period: 100ms, wcet: 1ms, priority: 1, publishes: [tr]}
  - {name: in, kind: fusion_input, node: fusion, topic: tr, wcet: 1ms, priority: 2}
  - {name: trig, kind: fusion_trigger, node: fusion, topic: tf, wcet: 1ms, priority: 9, fuses: [in], publishes: [fused]}
  - {name: out, kind: subscription, node: sink, topic: fused, wcet: 1ms, priority: 8}
chains:
  - {name: C, callbacks: [F, trig, out], deadline: 100ms}
  - {name: D, callbacks: [R, in], deadline: 100ms}
)";

TEST(ChainExecutorStamps, FusionTriggerThatPublishedNothingHandsNoInstanceOn) {
  std::atomic<Duration> fake{1'000 * ms};
  std::atomic<bool> cached{false};
  std::atomic<int> outs{0}, skipped{0};
  auto work = [&](Duration wcet, const rclcpp::Publisher<Str>::SharedPtr& pub) {
    fake.fetch_add(wcet);
    if (pub) {
      pub->publish(Str());
      std::this_thread::sleep_for(30ms);  // let DDS deliver it before the callback returns
    }
  };
  auto front = quiet_node("front");
  auto rear = quiet_node("rear");
  auto fusion = quiet_node("fusion");
  auto sink = quiet_node("sink");
  auto idle = quiet_node("idle");
  auto pf = front->create_publisher<Str>("tf", 10);
  auto pr = rear->create_publisher<Str>("tr", 10);
  auto pfused = fusion->create_publisher<Str>("fused", 10);
  auto f = front->create_wall_timer(100ms, [&] { work(ms, pf); });
  auto r = rear->create_wall_timer(100ms, [&] { work(ms, pr); });
  auto in = fusion->create_subscription<Str>("tr", 10, [&](const Str&) {
    work(ms, nullptr);
    cached = true;
  });
  auto trig = fusion->create_subscription<Str>("tf", 10, [&](const Str&) {
    if (!cached.load()) {  // nothing to fuse yet: no output
      fake.fetch_add(ms);
      ++skipped;
      return;
    }
    work(ms, pfused);
  });
  auto out = sink->create_subscription<Str>("fused", 10, [&](const Str&) {
    work(ms, nullptr);
    ++outs;
  });
  auto filler = idle->create_wall_timer(1ms, [&] { fake.fetch_add(ms); });  // not in the model: runs last
  ASSERT_TRUE(wait_until([&] {
    return pf->get_subscription_count() >= 1 && pr->get_subscription_count() >= 1 && pfused->get_subscription_count() >= 1;
  }));
  ChainExecutorOptions o;
  o.model_yaml = kModel;
  o.clock = [&fake] { return fake.load(); };
  o.thread_params = false;
  ChainExecutor exec(o);
  for (auto& n : {front, rear, fusion, sink, idle}) exec.add_node(n);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return outs.load() >= 5; }));
  }
  ASSERT_EQ(skipped.load(), 1) << "the scenario: the trigger's first run found nothing to fuse";
  const auto report = exec.report();
  bool seen = false;
  for (const auto& c : report.chains) {
    if (c.name != "C") continue;
    seen = true;
    EXPECT_GE(c.instances, 4u) << exec.report_json();
    EXPECT_EQ(c.deadline_misses, 0u) << exec.report_json();
    EXPECT_LT(c.wcrt_ns, 50 * ms) << exec.report_json();  // 3 ms of the clock per instance
  }
  EXPECT_TRUE(seen) << exec.report_json();
}

// T -> a -> b (C1) and T -> a -> c (C2): both chains take the hop T -> a, whose message is one.
constexpr const char* kSharedPrefix = R"(
name: shared_prefix
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: fp}]
nodes: [{name: src, executor: e}, {name: mid, executor: e}, {name: ends, executor: e}]
topics: [{name: t1, size: 16B}, {name: t2, size: 16B}]
callbacks:
  - {name: T, kind: timer, node: src, period: 100ms, wcet: 1ms, priority: 10, publishes: [t1]}
  - {name: a, kind: subscription, node: mid, topic: t1, wcet: 1ms, priority: 9, publishes: [t2]}
  - {name: b, kind: subscription, node: ends, topic: t2, wcet: 1ms, priority: 8}
  - {name: c, kind: subscription, node: ends, topic: t2, wcet: 1ms, priority: 7}
chains:
  - {name: C1, callbacks: [T, a, b], deadline: 100ms}
  - {name: C2, callbacks: [T, a, c], deadline: 100ms}
)";

TEST(ChainExecutorStamps, ChainsWithACommonPrefixShareOneInstancePerMessage) {
  std::atomic<Duration> fake{1'000 * ms};
  std::atomic<int> ends{0};
  auto work = [&](const rclcpp::Publisher<Str>::SharedPtr& pub) {
    fake.fetch_add(ms);
    if (pub) {
      pub->publish(Str());
      std::this_thread::sleep_for(30ms);  // let DDS deliver it before the callback returns
    }
  };
  auto src = quiet_node("src");
  auto mid = quiet_node("mid");
  auto end_node = quiet_node("ends");
  auto idle = quiet_node("idle");
  auto p1 = src->create_publisher<Str>("t1", 10);
  auto p2 = mid->create_publisher<Str>("t2", 10);
  auto t = src->create_wall_timer(100ms, [&] { work(p1); });
  auto a = mid->create_subscription<Str>("t1", 10, [&](const Str&) { work(p2); });
  auto b = end_node->create_subscription<Str>("t2", 10, [&](const Str&) {
    work(nullptr);
    ++ends;
  });
  auto c = end_node->create_subscription<Str>("t2", 10, [&](const Str&) { work(nullptr); });
  auto filler = idle->create_wall_timer(1ms, [&] { fake.fetch_add(ms); });  // not in the model: runs last
  ASSERT_TRUE(wait_until([&] { return p1->get_subscription_count() >= 1 && p2->get_subscription_count() >= 2; }));
  ChainExecutorOptions o;
  o.model_yaml = kSharedPrefix;
  o.clock = [&fake] { return fake.load(); };
  o.thread_params = false;
  ChainExecutor exec(o);
  for (auto& n : {src, mid, end_node, idle}) exec.add_node(n);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return ends.load() >= 6; }));
  }
  const auto report = exec.report();
  ASSERT_EQ(report.chains.size(), 2u) << exec.report_json();
  for (const auto& ch : report.chains) {
    EXPECT_GE(ch.instances, 5u) << ch.name << ": " << exec.report_json();
    EXPECT_EQ(ch.deadline_misses, 0u) << ch.name << ": " << exec.report_json();
    EXPECT_LT(ch.wcrt_ns, 50 * ms) << ch.name << ": " << exec.report_json();  // 3 ms of the clock per instance
  }
}

}  // namespace
