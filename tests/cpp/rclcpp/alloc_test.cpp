// The ChainExecutor's dispatch path allocates nothing once it spins, as the runtime's
// (tests/cpp/runtime/executor_alloc_test.cpp): global operator new is replaced in this test
// binary by a counting one (per thread); unmodified rclcpp timer callbacks read their thread's
// counter on entry, and in the steady state it does not move between two instances on the
// executor thread — under a ready-queue policy with a model chain (edf: chain instances stamped,
// the monitor recording) and under ros-default (polling points). Subscriptions are not part of
// this check: rclcpp's execute_subscription allocates the message it takes (its memory strategy).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

#include "../alloc_counter.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

void check_no_allocation(const char* policy) {
  if (!CHAINRT_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off in sanitizer builds";
  constexpr int kRuns = 400;
  struct Entry {
    std::uint64_t allocs;
    std::thread::id thread;
  };
  static std::vector<Entry> seen;
  seen.assign(kRuns * 3 + 64, Entry{});
  std::atomic<int> idx{0};
  auto node = chainrt::rclcpp::testing::quiet_node("alloc");
  std::vector<rclcpp::TimerBase::SharedPtr> timers;
  for (int i = 0; i < 3; ++i)
    timers.push_back(node->create_wall_timer(std::chrono::microseconds(1000 + 100 * i), [&] {
      const int k = idx.fetch_add(1);
      if (k < static_cast<int>(seen.size())) seen[k] = Entry{t_allocs, std::this_thread::get_id()};
    }));
  ChainExecutorOptions o;
  o.model_yaml = std::string(R"(
name: alloc
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: )") + policy + R"(}]
nodes: [{name: alloc, executor: e}]
callbacks:
  - {name: t0, kind: timer, node: alloc, period: 1ms, wcet: 10us}
  - {name: t1, kind: timer, node: alloc, period: 1100us, wcet: 10us}
chains:
  - {name: c0, callbacks: [t0], deadline: 1ms}
)";
  ChainExecutor exec(o);
  exec.add_node(node);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return idx.load() >= kRuns; }));
  }
  ASSERT_EQ(exec.unmatched(), std::vector<std::string>{"alloc/timer@1.2ms"});  // t2 runs unbound
  const int total = std::min<int>(idx.load(), static_cast<int>(seen.size()));
  int compared = 0;
  for (int k = 100; k < total; ++k) {  // steady state: after the first 100 instances
    ASSERT_EQ(seen[k].thread, seen[k - 1].thread);  // one executor thread
    EXPECT_EQ(seen[k].allocs, seen[k - 1].allocs) << "allocation between instances " << k - 1 << " and " << k;
    ++compared;
  }
  EXPECT_GE(compared, kRuns - 100 - 1);
}

TEST(ChainExecutorDispatchPath, NoAllocationAfterStartEdf) { check_no_allocation("edf"); }
TEST(ChainExecutorDispatchPath, NoAllocationAfterStartRosDefault) { check_no_allocation("ros-default"); }

}  // namespace
