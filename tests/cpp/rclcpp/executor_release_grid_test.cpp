// The ChainExecutor arms the timers it binds to model callbacks on the release grid
// (sched/timer.hpp, docs/model.md "Timer phases"): the k-th release of a timer with offset o is
// at E + o + k·period, E the run's epoch, however far apart the nodes created their timers (rcl
// starts a timer's period at its creation); a timer armed after its first grid instant starts at
// a later one, and the executor says so.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>

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

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

constexpr Duration kPeriod = 100'000'000;
constexpr Duration kOffsetB = 40'000'000;

using chainrt::runtime::now_ns;

// Two timers of 100 ms on two nodes, offsets 0 and 40 ms, each starting a chain (so that the
// dispatch trace carries each release).
std::string grid_model() {
  return R"(
name: grid
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: fp}]
nodes: [{name: grid_a, executor: e}, {name: grid_b, executor: e}]
callbacks:
  - {name: a, kind: timer, node: grid_a, period: 100ms, offset: 0ms, phase: guaranteed, wcet: 1ms, priority: 2}
  - {name: b, kind: timer, node: grid_b, period: 100ms, offset: 40ms, phase: guaranteed, wcet: 1ms, priority: 1}
chains:
  - {name: from_a, callbacks: [a], deadline: 100ms}
  - {name: from_b, callbacks: [b], deadline: 100ms}
)";
}

struct Timers {
  Timers() {
    a = quiet_node("grid_a");
    b = quiet_node("grid_b");
    ta = a->create_wall_timer(100ms, [] {});
    std::this_thread::sleep_for(30ms);  // rcl: b's period starts 30 ms after a's, not 40
    tb = b->create_wall_timer(100ms, [] {});
  }
  std::shared_ptr<rclcpp::Node> a, b;
  rclcpp::TimerBase::SharedPtr ta, tb;
};

// {timer name: the releases the trace holds}
std::map<std::string, std::vector<Duration>> releases(const ChainExecutor& exec) {
  std::map<std::string, std::vector<Duration>> out;
  for (const auto& r : exec.trace()) out[exec.name_of(r.callback)].push_back(r.release);
  return out;
}

TEST(ChainExecutorReleaseGrid, ModelTimersAreReleasedAtTheirOffsetsFromTheEpoch) {
  Timers timers;
  ChainExecutorOptions o{.model_yaml = grid_model()};
  o.thread_params = false;
  const Duration epoch = now_ns() + 300'000'000;
  o.release_epoch = epoch;
  ChainExecutor exec(o);
  exec.add_node(timers.a);
  exec.add_node(timers.b);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] {
      auto r = releases(exec);
      return r["a"].size() >= 3 && r["b"].size() >= 3;
    }));
  }
  const auto r = releases(exec);
  for (const auto& [name, offset] : std::map<std::string, Duration>{{"a", 0}, {"b", kOffsetB}}) {
    ASSERT_GE(r.at(name).size(), 3u) << name;
    for (std::size_t k = 0; k < r.at(name).size(); ++k)
      EXPECT_EQ(r.at(name)[k], epoch + offset + static_cast<Duration>(k) * kPeriod) << name << " release " << k;
  }
  for (const auto& w : exec.warnings()) EXPECT_EQ(w.find("release grid"), std::string::npos) << w;
}

TEST(ChainExecutorReleaseGrid, TimerArmedAfterItsFirstGridInstantStartsLaterAndSaysSo) {
  Timers timers;
  ChainExecutorOptions o{.model_yaml = grid_model()};
  o.thread_params = false;
  const Duration epoch = now_ns() - 1'000'000'000;  // ten periods ago
  o.release_epoch = epoch;
  ChainExecutor exec(o);
  exec.add_node(timers.a);
  exec.add_node(timers.b);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return releases(exec)["b"].size() >= 2; }));
  }
  const auto r = releases(exec);
  ASSERT_FALSE(r.at("b").empty());
  EXPECT_GE(r.at("b").front(), epoch + kOffsetB + 10 * kPeriod);
  EXPECT_EQ((r.at("b").front() - epoch - kOffsetB) % kPeriod, 0);  // its offset holds
  int said = 0;
  for (const auto& w : exec.warnings()) said += w.find("after its first release on the release grid") != std::string::npos;
  EXPECT_EQ(said, 2) << "one warning per late timer";
}

}  // namespace
