// The ChainExecutor hands a chain instance to the chain's next callback in the executor when a
// callback starts, since an unmodified node's message carries no stamp. A node that publishes
// once per several inputs (upstream's reference-system Fusion: each input is cached, the one
// that completes the pair publishes) starts more callbacks than it publishes messages; the
// successor's keep-last subscription holds at most its depth of messages, so it must not keep
// more handed-over instances than that either: else each execution takes an older instance than
// the one its message belongs to, and its release (the response the monitor and the accounting
// measure) and its deadline (EDF's order) fall ever further behind.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

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

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// Two sources released together, fused by one node whose two input callbacks may each publish
// the fused topic (the model cannot say which one completes a pair), read by a sink.
std::string fusion_model() {
  return R"(
name: handoff
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: fp}]
nodes: [{name: ho_a, executor: e}, {name: ho_b, executor: e}, {name: ho_fuse, executor: e}, {name: ho_sink, executor: e}]
topics: [{name: ho_in_a, size: 16B}, {name: ho_in_b, size: 16B}, {name: ho_fused, size: 16B}]
callbacks:
  - {name: ta, kind: timer, node: ho_a, period: 50ms, phase: guaranteed, wcet: 1ms, priority: 5, publishes: [ho_in_a]}
  - {name: tb, kind: timer, node: ho_b, period: 50ms, phase: guaranteed, wcet: 1ms, priority: 4, publishes: [ho_in_b]}
  - {name: fa, kind: subscription, node: ho_fuse, topic: ho_in_a, wcet: 1ms, priority: 3, publishes: [ho_fused]}
  - {name: fb, kind: subscription, node: ho_fuse, topic: ho_in_b, wcet: 1ms, priority: 2, publishes: [ho_fused]}
  - {name: out, kind: subscription, node: ho_sink, topic: ho_fused, wcet: 1ms, priority: 6}
chains:
  - {name: via_a, callbacks: [ta, fa, out], deadline: 50ms}
  - {name: via_b, callbacks: [tb, fb, out], deadline: 50ms}
)";
}

TEST(ChainExecutorHandoff, AFusionThatPublishesOncePerPairHandsTheSinkItsOwnRelease) {
  auto a = quiet_node("ho_a"), b = quiet_node("ho_b"), fuse = quiet_node("ho_fuse"), sink = quiet_node("ho_sink");
  auto pa = a->create_publisher<Str>("ho_in_a", 1);
  auto pb = b->create_publisher<Str>("ho_in_b", 1);
  auto pf = fuse->create_publisher<Str>("ho_fused", 1);
  auto ta = a->create_wall_timer(50ms, [&] { pa->publish(Str()); });
  auto tb = b->create_wall_timer(50ms, [&] { pb->publish(Str()); });
  bool have[2] = {false, false};
  auto input = [&](int i) {  // upstream's Fusion: cache; the input that completes the pair publishes
    have[i] = true;
    if (have[0] && have[1]) {
      have[0] = have[1] = false;
      pf->publish(Str());
    }
  };
  auto fa = fuse->create_subscription<Str>("ho_in_a", 1, [&](const Str&) { input(0); });
  auto fb = fuse->create_subscription<Str>("ho_in_b", 1, [&](const Str&) { input(1); });
  std::atomic<int> outs{0};
  auto out = sink->create_subscription<Str>("ho_fused", 1, [&](const Str&) { ++outs; });
  ASSERT_TRUE(wait_until([&] {
    return pa->get_subscription_count() >= 1 && pb->get_subscription_count() >= 1 && pf->get_subscription_count() >= 1;
  }));
  ChainExecutorOptions o{.model_yaml = fusion_model()};
  o.thread_params = false;
  ChainExecutor exec(o);
  for (const auto& n : {a, b, fuse, sink}) exec.add_node(n);
  ASSERT_TRUE(exec.unmatched().empty());
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return outs.load() >= 12; }));
  }
  // every sink execution carries the release of the sources' latest instance before it: the
  // pair its message fused (each period's fused message is read before the next release)
  Duration latest = 0;
  int checked = 0;
  for (const auto& r : exec.trace()) {
    const std::string name = exec.name_of(r.callback);
    if (name == "ta" || name == "tb") {
      latest = std::max(latest, r.release);
    } else if (name == "out" && latest != 0) {
      EXPECT_EQ(r.release, latest) << "sink execution " << checked << " took an instance "
                                   << (latest - r.release) / 1'000'000 << " ms older than its message's";
      ++checked;
    }
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
