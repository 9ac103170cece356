// The ChainExecutor hands a chain instance to the chain's next callback in the executor when a
// callback starts, since an unmodified node's message carries no stamp. A node that publishes
// once per several inputs (upstream's reference-system Fusion: each input is cached, the one
// that completes the pair publishes) starts more callbacks than it publishes messages; the
// successor's keep-last subscription holds at most its depth of messages, so it must not keep
// more handed-over instances than that either: else each execution takes an older instance than
// the one its message belongs to, and its release (the response the monitor and the accounting
// measure) and its deadline (EDF's order) fall ever further behind.
#include <gtest/gtest.h>

#include <algorithm>
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
// the fused topic (the model cannot say which one completes a pair), read by a sink. Names
// begin with `p` (one set per test).
std::string fusion_model(const std::string& p) {
  return R"(
name: handoff
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: fp}]
nodes: [{name: P_a, executor: e}, {name: P_b, executor: e}, {name: P_fuse, executor: e}, {name: P_sink, executor: e}]
topics: [{name: P_in_a, size: 16B}, {name: P_in_b, size: 16B}, {name: P_fused, size: 16B}]
callbacks:
  - {name: ta, kind: timer, node: P_a, period: 50ms, phase: guaranteed, wcet: 1ms, priority: 5, publishes: [P_in_a]}
  - {name: tb, kind: timer, node: P_b, period: 50ms, phase: guaranteed, wcet: 1ms, priority: 4, publishes: [P_in_b]}
  - {name: fa, kind: subscription, node: P_fuse, topic: P_in_a, wcet: 1ms, priority: 3, publishes: [P_fused]}
  - {name: fb, kind: subscription, node: P_fuse, topic: P_in_b, wcet: 1ms, priority: 2, publishes: [P_fused]}
  - {name: out, kind: subscription, node: P_sink, topic: P_fused, wcet: 1ms, priority: 6}
chains:
  - {name: via_a, callbacks: [ta, fa, out], deadline: 50ms}
  - {name: via_b, callbacks: [tb, fb, out], deadline: 50ms}
)";
}

std::string named(std::string text, const std::string& p) {
  for (std::size_t i = text.find("P_"); i != std::string::npos; i = text.find("P_", i + p.size()))
    text.replace(i, 1, p);
  return text;
}

// The fusion scenario with the sink's queue `sink_depth` deep: how far behind its message's
// release each sink execution's instance was (ns; one entry per execution after the first release).
std::vector<Duration> sink_lags(const std::string& p, std::size_t sink_depth) {
  auto a = quiet_node(p + "_a"), b = quiet_node(p + "_b"), fuse = quiet_node(p + "_fuse");
  auto sink = quiet_node(p + "_sink");
  auto pa = a->create_publisher<Str>(p + "_in_a", 1);
  auto pb = b->create_publisher<Str>(p + "_in_b", 1);
  auto pf = fuse->create_publisher<Str>(p + "_fused", 1);
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
  auto fa = fuse->create_subscription<Str>(p + "_in_a", 1, [&](const Str&) { input(0); });
  auto fb = fuse->create_subscription<Str>(p + "_in_b", 1, [&](const Str&) { input(1); });
  std::atomic<int> outs{0};
  auto out = sink->create_subscription<Str>(p + "_fused", sink_depth, [&](const Str&) { ++outs; });
  EXPECT_TRUE(wait_until([&] {
    return pa->get_subscription_count() >= 1 && pb->get_subscription_count() >= 1 && pf->get_subscription_count() >= 1;
  }));
  ChainExecutorOptions o{.model_yaml = named(fusion_model(p), p)};
  o.thread_params = false;
  ChainExecutor exec(o);
  for (const auto& n : {a, b, fuse, sink}) exec.add_node(n);
  EXPECT_TRUE(exec.unmatched().empty());
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return outs.load() >= 12; }));
  }
  // a sink execution's message fused the pair of the sources' latest instance before it (each
  // period's fused message is read before the next release)
  std::vector<Duration> lags;
  Duration latest = 0;
  for (const auto& r : exec.trace()) {
    const std::string name = exec.name_of(r.callback);
    if (name == "ta" || name == "tb")
      latest = std::max(latest, r.release);
    else if (name == "out" && latest != 0)
      lags.push_back(latest - r.release);
  }
  return lags;
}

void expect_own_release(const std::vector<Duration>& lags) {
  EXPECT_GE(lags.size(), 10u);
  for (std::size_t k = 0; k < lags.size(); ++k)
    EXPECT_EQ(lags[k], 0) << "sink execution " << k << " took an instance " << lags[k] / 1'000'000
                          << " ms older than its message's";
}

TEST(ChainExecutorHandoff, AFusionThatPublishesOncePerPairHandsTheSinkItsOwnRelease) {
  expect_own_release(sink_lags("hoa", 1));
}

// A deeper queue keeps older messages, not older instances of messages never published.
TEST(ChainExecutorHandoff, SoItDoesBehindADeepQueue) { expect_own_release(sink_lags("hob", 10)); }

}  // namespace
