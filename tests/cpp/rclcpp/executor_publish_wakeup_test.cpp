// A message published inside a callback that a ChainExecutor runs reaches another executor only
// when that callback has returned (chain_executor.cpp, on_event). Fast DDS delivers in-process
// on the publishing thread and reports the delivery with the reader's lock held, a lock without
// priority inheritance: a subscriber's executor thread woken there, outranking the publisher on
// the same core, preempts it and blocks in the take until the publisher runs again — a second
// sleep for one message, and behind a thread of middle priority an unbounded priority inversion
// (measured on the reference system: the behaviour planner's executor 30.7 ms in a caching
// subscription). Checked on the subscriber thread's voluntary context switches per message (the
// kernel's count, never a wall-clock figure): one (its wait for the message) when it is woken
// after the publishing callback, two when it blocks in the take. Needs SCHED_FIFO (root or
// CAP_SYS_NICE); skipped without it.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
using Str = std_msgs::msg::String;
using chainrt::runtime::testing::voluntary_switches;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// Two executors on one core: `pub` (SCHED_OTHER) runs a 2 ms timer that publishes one message,
// `sub` (SCHED_FIFO 10) its subscription.
std::string two_executors(int core) {
  const std::string c = std::to_string(core);
  return R"(
name: publish_wakeup
hosts: [{name: h, cores: )" + std::to_string(core + 1) + R"(}]
executors:
  - {name: pub, host: h, policy: fp, threads: [{name: p0, cores: [)" + c + R"(]}]}
  - {name: sub, host: h, policy: fp, threads: [{name: s0, cores: [)" + c + R"(], priority: 10}]}
nodes: [{name: pw_pub, executor: pub}, {name: pw_sub, executor: sub}]
topics: [{name: pw_topic, size: 16B}]
callbacks:
  - {name: tick, kind: timer, node: pw_pub, period: 2ms, wcet: 100us, priority: 1, publishes: [pw_topic]}
  - {name: take, kind: subscription, node: pw_sub, topic: pw_topic, wcet: 100us, priority: 1}
chains: [{name: c, callbacks: [tick, take], deadline: 2ms}]
)";
}

TEST(ChainExecutorPublishWakeup, ASubscriberThatOutranksThePublisherNeverWaitsForItsLock) {
  const int core = sched_getcpu() < 0 ? 0 : sched_getcpu();
  auto pn = quiet_node("pw_pub"), sn = quiet_node("pw_sub");
  auto pub = pn->create_publisher<Str>("pw_topic", 10);
  constexpr int kMessages = 200;
  std::atomic<int> sent{0}, got{0}, sub_tid{0};
  auto timer = pn->create_wall_timer(2ms, [&] {
    if (sent.load() >= kMessages + 20) return;
    Str m;
    m.data = "x";
    pub->publish(m);
    sent.fetch_add(1);
  });
  auto subscription = sn->create_subscription<Str>("pw_topic", 10, [&](const Str&) {
    sub_tid.store(static_cast<int>(gettid()));
    got.fetch_add(1);
  });
  ChainExecutorOptions po, so;
  po.model_yaml = so.model_yaml = two_executors(core);
  po.executor = "pub";
  so.executor = "sub";
  ChainExecutor pe(po), se(so);
  pe.add_node(pn);
  se.add_node(sn);
  Spinner<ChainExecutor> ss(se), ps(pe);
  ASSERT_TRUE(wait_until([&] { return got.load() >= 10; }));
  if (sched_getscheduler(sub_tid.load()) != SCHED_FIFO) GTEST_SKIP() << "no SCHED_FIFO here (needs root or CAP_SYS_NICE)";
  const int before_got = got.load();
  const long before = voluntary_switches(sub_tid.load());
  ASSERT_TRUE(wait_until([&] { return got.load() >= before_got + 100; }));
  const long after = voluntary_switches(sub_tid.load());
  const int messages = got.load() - before_got;
  ps.stop();
  ss.stop();
  ASSERT_GE(before, 0);
  const double per_message = static_cast<double>(after - before) / messages;
  EXPECT_LT(per_message, 1.5) << "the subscriber's executor thread blocked on the middleware's lock while the "
                                 "publishing callback was delivering (" << per_message << " sleeps per message)";
}

}  // namespace
