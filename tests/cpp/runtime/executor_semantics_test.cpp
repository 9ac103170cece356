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

}  // namespace
}  // namespace chainrt::runtime
