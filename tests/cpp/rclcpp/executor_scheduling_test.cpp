// The ChainExecutor schedules unmodified rclcpp nodes as the simulator does (one ReadyQueue, one
// Admission rule, one timer rule: the same trace, dispatch by dispatch, under fp, edf and picas;
// the comparison of tests/cpp/runtime/sim_vs_runtime_test.cpp), and rclcpp's callback groups
// hold on several threads: a mutually exclusive group never runs two callbacks at once, a
// reentrant one does. The executor runs on an injected clock that each callback advances by its
// model WCET (exact dispatch times); a callback then waits, in real time, until what it published
// was delivered (the simulator's zero communication delay). Never a wall-clock assertion.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <unistd.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "chainrt/runtime/threads.hpp"
#include "chainrt/sched/policy.hpp"
#include "order_scenario.hpp"
#include "rclcpp_util.hpp"
#include "sim_trace.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::Duration;
using chainrt::Model;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
using chainrt::runtime::testing::show;
using chainrt::runtime::testing::simulated;
using chainrt::runtime::testing::Trace;
using Str = std_msgs::msg::String;
constexpr Duration ms = 1'000'000;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

Model scenario(const std::string& policy) { return chainrt::rclcpp::testing::order_scenario(policy); }

// The scenario's nodes written as any rclcpp user writes them (wall timers, publishers,
// subscriptions; no chainrt API), bound to the model by node name, period and topic.
Trace measured(const std::string& yaml_policy, const Model& m, std::size_t dispatches) {
  std::atomic<Duration> fake{1'000 * ms};
  const Duration t0 = fake.load();
  std::atomic<std::size_t> runs{0};
  auto work = [&](Duration wcet, const rclcpp::Publisher<Str>::SharedPtr& pub) {
    fake.fetch_add(wcet);
    if (pub) {
      pub->publish(Str());
      std::this_thread::sleep_for(30ms);  // let DDS deliver it before the callback returns
    }
    runs.fetch_add(1);
  };
  auto na = quiet_node("na");
  auto nb = quiet_node("nb");
  auto nc = quiet_node("nc");
  auto pa = na->create_publisher<Str>("ta", 10);
  auto pb = nb->create_publisher<Str>("tb", 10);
  auto ta = na->create_wall_timer(10ms, [&] { work(3 * ms, pa); });
  auto tb = nb->create_wall_timer(10ms, [&] { work(3 * ms, pb); });
  auto sa = nc->create_subscription<Str>("ta", 10, [&](const Str&) { work(2 * ms, nullptr); });
  auto sb = nc->create_subscription<Str>("tb", 10, [&](const Str&) { work(2 * ms, nullptr); });
  EXPECT_TRUE(wait_until([&] { return pa->get_subscription_count() >= 1 && pb->get_subscription_count() >= 1; }));
  ChainExecutorOptions o;
  o.model_yaml = chainrt::save_model_to_string(m);
  o.clock = [&fake] { return fake.load(); };
  o.thread_params = false;
  ChainExecutor exec(o);
  exec.add_node(na);
  exec.add_node(nb);
  exec.add_node(nc);
  EXPECT_TRUE(exec.unmatched().empty()) << yaml_policy;
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return runs.load() >= dispatches; }));
  }
  Trace t;
  for (const auto& d : exec.trace()) t.emplace_back(exec.name_of(d.callback), d.start - t0);
  if (t.size() > dispatches) t.resize(dispatches);
  return t;
}

// Every policy of the descriptor (sched/policy.hpp); fp, edf and picas get their own parameters.
TEST(ChainExecutorScheduling, DispatchOrderIsTheSimulatorsUnderEveryPolicy) {
  std::map<std::string, std::string> orders;
  for (const auto& d : chainrt::sched::policies()) {
    const std::string policy = d.name;
    const Model m = scenario(policy);
    const Trace sim = simulated(m, 30 * ms);
    ASSERT_EQ(sim.size(), 12u) << policy << ": " << show(sim);
    const Trace real = measured(policy, m, sim.size());
    EXPECT_EQ(real, sim) << policy << "\nrclcpp executor: " << show(real) << "\nsimulator:       " << show(sim);
    orders[policy] = show(sim);
  }
  // the three policies do order this scenario differently (the comparison can fail)
  EXPECT_NE(orders["fp"], orders["edf"]);
  EXPECT_NE(orders["edf"], orders["picas"]);
  EXPECT_NE(orders["fp"], orders["picas"]);
}

// Several threads, one mutually exclusive group with timers and a subscription, one reentrant
// group: the exclusive group's callbacks never overlap; the reentrant group's do (so the
// measurement of overlap works).
TEST(ChainExecutorScheduling, MutuallyExclusiveGroupsNeverOverlapOnSeveralThreads) {
  auto node = std::make_shared<rclcpp::Node>("groups");
  auto exclusive = node->create_callback_group(rclcpp::CallbackGroupType::MutuallyExclusive);
  auto reentrant = node->create_callback_group(rclcpp::CallbackGroupType::Reentrant);
  std::atomic<int> in_ex{0}, max_ex{0}, in_re{0}, max_re{0}, runs_ex{0}, runs_re{0};
  auto body = [](std::atomic<int>& in, std::atomic<int>& mx, std::atomic<int>& runs) {
    const int now = ++in;
    int seen = mx.load();
    while (now > seen && !mx.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(2ms);
    --in;
    ++runs;
  };
  std::vector<rclcpp::TimerBase::SharedPtr> timers;
  for (int i = 0; i < 3; ++i)
    timers.push_back(node->create_wall_timer(1ms, [&] { body(in_ex, max_ex, runs_ex); }, exclusive));
  for (int i = 0; i < 3; ++i)
    timers.push_back(node->create_wall_timer(1ms, [&] { body(in_re, max_re, runs_re); }, reentrant));
  rclcpp::SubscriptionOptions so;
  so.callback_group = exclusive;
  auto sub = node->create_subscription<Str>("groups_topic", 10, [&](const Str&) { body(in_ex, max_ex, runs_ex); }, so);
  auto pub = node->create_publisher<Str>("groups_topic", 10);
  auto feeder = std::make_shared<rclcpp::Node>("feeder");
  auto feed = feeder->create_wall_timer(1ms, [&] { pub->publish(Str()); });
  ChainExecutorOptions o;
  o.threads = 4;
  ChainExecutor exec(o);
  exec.add_node(node);
  exec.add_node(feeder);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return runs_ex.load() >= 300 && runs_re.load() >= 300; }));
  }
  EXPECT_EQ(max_ex.load(), 1);
  EXPECT_GE(max_re.load(), 2);
  EXPECT_EQ(exec.thread_count(), 4u);
}

// LaME's online controller on the rclcpp executor (the runtime's controller, the same slots): the
// executor runs the plan (policy lame, one RT and one BE slot per core with SCHED_DEADLINE
// budgets), the controller activates periodically on the CPU times measured here and the chain
// runs under it; the reservations it applied are on the slot threads.
TEST(ChainExecutorScheduling, LameControllerRunsOnTheRclcppExecutor) {
  {
    std::optional<chainrt::Reservation> r = chainrt::Reservation{1'000'000, 100'000'000};
    if (!chainrt::runtime::set_thread_reservation(static_cast<int>(gettid()), r).empty())
      GTEST_SKIP() << "SCHED_DEADLINE needs privilege";
    chainrt::runtime::set_thread_reservation(static_cast<int>(gettid()), std::nullopt);
  }
  ChainExecutorOptions o;
  o.model_file = std::string(CHAINRT_SOURCE_DIR) + "/tests/cpp/lame_runtime/data/grow.yaml";
  o.lame_controller = 500'000'000;
  o.lame_capacity_permille = 500;
  o.lame_log = false;
  ChainExecutor exec(o);
  EXPECT_EQ(exec.policy(), chainrt::Policy::Lame);
  EXPECT_EQ(exec.thread_count(), 4u);  // rt@0 rt@1 be@0 be@1
  auto node = std::make_shared<rclcpp::Node>("n");
  auto pub = node->create_publisher<Str>("a", 10);
  std::atomic<int> sunk{0};
  auto src = node->create_wall_timer(100ms, [&] { pub->publish(Str()); });
  auto sink = node->create_subscription<Str>("a", 10, [&](const Str&) { ++sunk; });
  auto tick = node->create_wall_timer(200ms, [] {});
  exec.add_node(node);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] {
      const std::string log = exec.lame_log_json();
      return sunk.load() >= 15 && log.find("\"trigger\": \"period\"") != std::string::npos;
    })) << exec.lame_log_json();
  }
  const std::string log = exec.lame_log_json();
  EXPECT_NE(log.find("\"trigger\": \"initial\""), std::string::npos) << log;
  EXPECT_EQ(log.find("\"errors\": [\""), std::string::npos) << log;  // every reservation was applied
  EXPECT_TRUE(exec.unmatched().empty());
  const auto r = exec.report();
  ASSERT_EQ(r.chains.size(), 2u);
  EXPECT_GE(r.chains[0].instances, 10u) << exec.report_json();
}

// LaME's plan splits a mutually exclusive group whose callbacks are in different thread classes
// (docs/lame.md), and the rclcpp executor runs the split on rclcpp's groups as chainrt's runtime
// runs it on the model's: the RT chain's timer of node n runs while the BE timer of the same
// node (its default group, mutually exclusive in rclcpp) is still under way on a BE thread.
// Without the split the RT timer would wait for it (on a BE budget after a re-plan: for as long
// as that budget needs to serve the BE callback).
TEST(ChainExecutorScheduling, LameSplitsAGroupSpanningThreadClasses) {
  {
    std::optional<chainrt::Reservation> r = chainrt::Reservation{1'000'000, 100'000'000};
    if (!chainrt::runtime::set_thread_reservation(static_cast<int>(gettid()), r).empty())
      GTEST_SKIP() << "SCHED_DEADLINE needs privilege";
    chainrt::runtime::set_thread_reservation(static_cast<int>(gettid()), std::nullopt);
  }
  ChainExecutorOptions o;
  o.model_file = std::string(CHAINRT_SOURCE_DIR) + "/tests/cpp/lame_runtime/data/grow.yaml";
  o.lame_controller = 500'000'000;
  o.lame_capacity_permille = 500;
  o.lame_log = false;
  ChainExecutor exec(o);
  auto node = std::make_shared<rclcpp::Node>("n");  // one node: its default group holds all three
  auto pub = node->create_publisher<Str>("a", 10);
  std::atomic<bool> in_be{false};
  std::atomic<int> be_runs{0}, rt_during_be{0};
  auto src = node->create_wall_timer(100ms, [&] {
    if (in_be.load()) ++rt_during_be;
    pub->publish(Str());
  });
  auto sink = node->create_subscription<Str>("a", 10, [](const Str&) {});
  auto tick = node->create_wall_timer(200ms, [&] {
    in_be = true;
    std::this_thread::sleep_for(350ms);  // holds the group across at least three RT releases
    in_be = false;
    ++be_runs;
  });
  exec.add_node(node);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return rt_during_be.load() >= 3 && be_runs.load() >= 2; }, 30))
        << rt_during_be.load() << " RT runs during the BE callback, " << be_runs.load() << " BE runs";
  }
  EXPECT_TRUE(exec.unmatched().empty());
}

}  // namespace
