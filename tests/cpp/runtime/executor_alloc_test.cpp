// The dispatch path allocates nothing after start: global operator new is
// replaced in this test binary by a counting one (per thread). Timer callbacks read their
// thread's counter on entry; in the steady state the counter must not move between two
// instances on the same executor thread, under a readyQueue policy (EDF with a chain) and under
// the ROS default readySet (polling points). (Subscriptions are not part of this check: rmw's
// take may allocate inside the middleware.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <cstdlib>
#include <new>
#include <vector>

#include "chainrt/runtime/accelerator_client.hpp"
#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

#include "../alloc_counter.hpp"

namespace chainrt::runtime {
namespace {

// sim_time: the timers run on the node's ROS clock, which this thread advances (as the /clock
// thread does): the jump callbacks and the releases by ROS time allocate nothing either.
void check_no_allocation(Policy policy, bool sim_time = false) {
  if (!CHAINRT_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off in sanitizer builds";
  Context ctx;
  Node n(ctx, "alloc");
  Duration sim = 1'000'000'000;
  if (sim_time) {
    n.get_clock().enable_ros_time_override();
    n.get_clock().set_ros_time_override(sim);
  }
  constexpr int kRuns = 400;
  struct Entry {
    std::uint64_t allocs;
    std::thread::id thread;
  };
  static std::vector<Entry> seen;  // preallocated before start
  seen.assign(kRuns * 3 + 64, Entry{});
  std::atomic<int> idx{0};
  for (int i = 0; i < 3; ++i) {
    CallbackOptions o;
    o.name = "t" + std::to_string(i);
    o.priority = i;
    n.create_timer(1'000'000 + 100'000 * i, [&] {
      const int k = idx.fetch_add(1);
      if (k < static_cast<int>(seen.size())) seen[k] = Entry{t_allocs, std::this_thread::get_id()};
    }, o, 0, sim_time ? ClockType::Ros : ClockType::Steady);
  }
  ExecutorOptions eo;
  eo.policy = policy;
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.add_chain(ChainSpec{"c0", {"t0"}, {}, 1'000'000, 1'000'000});
  ex.start();
  if (sim_time) {
    std::uint64_t driver_allocs = 0;
    for (int i = 0; idx.load() < kRuns && i < 1'000'000; ++i) {
      if (i == 200) driver_allocs = t_allocs;
      sim += 250'000;
      n.get_clock().set_ros_time_override(sim);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    EXPECT_EQ(t_allocs, driver_allocs) << "allocation when the ROS clock moved";
  }
  EXPECT_TRUE(testing::wait_until([&] { return idx.load() >= kRuns; }));
  ex.request_stop();
  ex.join();
  const int total = std::min<int>(idx.load(), static_cast<int>(seen.size()));
  int compared = 0;
  for (int k = 100; k < total; ++k) {  // steady state: after the first 100 instances
    ASSERT_EQ(seen[k].thread, seen[k - 1].thread);  // one executor thread
    EXPECT_EQ(seen[k].allocs, seen[k - 1].allocs) << "allocation between instances " << k - 1
                                                  << " and " << k;
    ++compared;
  }
  EXPECT_GE(compared, kRuns - 100 - 1);
}

TEST(DispatchPath, NoAllocationAfterStartEdf) { check_no_allocation(Policy::Edf); }
TEST(DispatchPath, NoAllocationAfterStartRosDefault) { check_no_allocation(Policy::RosDefault); }
TEST(DispatchPath, NoAllocationAfterStartSimTimeEdf) { check_no_allocation(Policy::Edf, true); }

// A callback's request by accelerator name (run_on_accelerator(name, ...)) looks the name up in
// the registry and queues the work: neither allocates on the calling thread, for a name found
// behind others or absent. The names are longer than a short-string buffer, so a copy of one
// would show.
TEST(DispatchPath, AcceleratorRequestByNameAllocatesNothing) {
  if (!CHAINRT_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off in sanitizer builds";
  std::vector<std::shared_ptr<SharedAccelerator>> accs;
  for (const char* name : {"alloc_test_accelerator_first", "alloc_test_accelerator_second"}) {
    AcceleratorOptions o;
    o.name = name;
    accs.push_back(add_accelerator(std::move(o)));
  }
  const DeviceWork work{};
  run_on_accelerator("alloc_test_accelerator_second", work);  // the first request starts the device
  const std::uint64_t before = t_allocs;
  const auto found = find_accelerator("alloc_test_accelerator_second");
  const auto absent = find_accelerator("alloc_test_accelerator_absent");
  run_on_accelerator("alloc_test_accelerator_second", work);
  EXPECT_EQ(t_allocs, before);
  EXPECT_EQ(found, accs[1]);
  EXPECT_EQ(absent, nullptr);
  for (const auto& a : accs) EXPECT_TRUE(unregister_accelerator(a->options().name));
}

}  // namespace
}  // namespace chainrt::runtime
