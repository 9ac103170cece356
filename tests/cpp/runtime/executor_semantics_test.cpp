// Executor semantics shared with the simulator, on real ROS 2 with an injected clock (never a
// wall-clock assertion): rcl's timer rule at an exact period-grid instant after an overrun
// (sched::TimerClock).
#include <gtest/gtest.h>

#include <atomic>
#include <utility>
#include <vector>

#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
namespace {

using testing::wait_until;
constexpr Duration ms = 1'000'000;

// The simulator's scenario Simulator.TimerTakenExactlyOnTheGridAfterAnOverrunFollowsTheLinesRule
// on the runtime: `hog` (registered first, higher priority) runs 200 ms of the injected clock,
// so `tick` (100 ms), released at 0, is taken exactly at the grid instant 200. As rcl_timer_call
// of Jazzy and Kilted (sched::TimerRule::Rcl9), its next call time moves strictly past now: the
// releases at 100 and 200 are skipped and the next instance is released at 300.
TEST(RuntimeTimer, TakenExactlyOnTheGridAfterAnOverrunSkipsThatInstantAsRcl) {
  for (Policy policy : {Policy::FixedPriority, Policy::RosDefault}) {
    Context ctx;
    Node n(ctx, "exact_grid");
    std::atomic<Duration> fake{1'000 * ms};  // the injected clock
    const Duration t0 = fake.load();
    std::atomic<int> ticks{0};
    CallbackOptions ho, to;
    ho.name = "hog";
    ho.priority = 9;
    to.name = "tick";
    to.priority = 1;
    n.create_timer(1'000 * ms, [&] { fake.fetch_add(200 * ms); }, ho);
    n.create_timer(100 * ms, [&] {
      // the late first instance moves the injected clock to 300, the next release; the second
      // moves it by 1 ms (then the clock stands still)
      fake.fetch_add(ticks.fetch_add(1) == 0 ? 100 * ms : 1 * ms);
    }, to);
    ExecutorOptions eo;
    eo.policy = policy;
    eo.clock = [&fake] { return fake.load(); };
    Executor ex(ctx, eo);
    ex.add_node(n);
    ex.add_chain(ChainSpec{"T", {"tick"}, {}, 100 * ms, 100 * ms});
    ex.start();
    ASSERT_TRUE(wait_until([&] { return ticks.load() >= 2; }));
    ex.request_stop();
    ex.join();
    const sched::CallbackId tick = ex.id_of("tick");
    std::vector<std::pair<Duration, Duration>> seen;  // (release, start) relative to t0
    for (const auto& d : ex.trace())
      if (d.callback == tick) seen.emplace_back(d.release - t0, d.start - t0);
    ASSERT_EQ(seen.size(), 2u) << to_string(policy);  // the clock stands still after that
    EXPECT_EQ(seen[0], std::make_pair(Duration{0}, 200 * ms)) << to_string(policy);
    EXPECT_EQ(seen[1], std::make_pair(300 * ms, 300 * ms)) << to_string(policy);
    EXPECT_EQ(ex.report().callbacks[tick].drops, 2u) << to_string(policy);
  }
}

// A timer whose period is a fraction of a ns (a model period given as a rate, 1/300 s here:
// Timer::set_grid_period, as chainrt run sets it from the model) is released on the grid at
// round(k·P) from its first release, never accumulating: releases 3,333,333, 6,666,667,
// 10,000,000 ns, … after the first, not k·3,333,333. Each instance moves the injected clock by
// 3,333,334 ns, so every release is due when the previous instance ends.
TEST(RuntimeTimer, AFractionalPeriodIsReleasedOnTheExactGrid) {
  Context ctx;
  Node n(ctx, "exact_rate");
  std::atomic<Duration> fake{1'000 * ms};
  std::atomic<int> ticks{0};
  CallbackOptions to;
  to.name = "rate";
  auto timer = n.create_timer(3'333'333, [&] {
    fake.fetch_add(3'333'334);
    ticks.fetch_add(1);
  }, to);
  timer->set_grid_period(ExactPeriod{10'000'000, 3});
  ExecutorOptions eo;
  eo.policy = Policy::FixedPriority;
  eo.clock = [&fake] { return fake.load(); };
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  ASSERT_TRUE(wait_until([&] { return ticks.load() >= 30; }));
  ex.request_stop();
  ex.join();
  std::vector<Duration> releases;
  for (const auto& d : ex.trace())
    if (d.callback == ex.id_of("rate")) releases.push_back(d.release);
  ASSERT_GE(releases.size(), 30u);
  for (std::size_t k = 0; k < 30; ++k)
    EXPECT_EQ(releases[k] - releases[0], (static_cast<Duration>(k) * 20'000'000 + 3) / 6) << "release " << k;
}

}  // namespace
}  // namespace chainrt::runtime
