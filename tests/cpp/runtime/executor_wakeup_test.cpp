// The executor's wake-up on a delivery made inside a publish (executor.cpp, begin_publish /
// end_publish). Fast DDS delivers intra-process on the publishing thread and calls the
// subscription's listener with the reader's lock held, a lock without priority inheritance.
// An executor thread woken there preempts a publisher of lower priority on its core and blocks
// in rcl_take on that lock until the publisher runs again: a second sleep for one message, and
// under a third thread of middle priority an unbounded priority inversion (a timer of the
// woken executor starting only after that thread's work). Checked on the executor thread's
// voluntary context switches per message (the kernel's count, never a wall-clock figure): one
// (its wait for the message) when it is woken after the publish, two when it blocks in take.
// Needs SCHED_FIFO (root or CAP_SYS_NICE); skipped without it.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <thread>

#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
namespace {

using Str = std_msgs::msg::String;
using testing::voluntary_switches;

TEST(ExecutorWakeup, ASubscriberThatOutranksThePublisherNeverWaitsForItsLock) {
  Context ctx;
  Node n(ctx, "wakeup_node");
  const std::string topic = testing::unique_topic("wakeup");
  auto pub = n.create_publisher<Str>(topic, 10);
  std::atomic<int> got{0};
  CallbackOptions so;
  so.name = "sub";
  n.create_subscription<Str>(topic, 10, [&](const Str&) { got.fetch_add(1); }, so);
  ASSERT_TRUE(testing::wait_matched(*pub));
  const int core = sched_getcpu() < 0 ? 0 : sched_getcpu();
  ExecutorOptions eo;
  eo.policy = Policy::FixedPriority;
  eo.threads.resize(1);
  eo.threads[0].fifo_priority = 10;  // above the publisher (SCHED_OTHER), on the same core
  eo.threads[0].cores = {core};
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  ASSERT_TRUE(testing::wait_until([&] { return ex.thread_tid(0) != 0; }));
  for (const auto& w : ex.warnings())
    if (w.find("SCHED_FIFO") != std::string::npos || w.find("pinning") != std::string::npos) {
      ex.request_stop();
      ex.join();
      GTEST_SKIP() << w;
    }
  constexpr int kMessages = 200;
  long before = 0, after = 0;
  std::thread publisher([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    Str m;
    m.data = "x";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the executor thread sleeps
    before = voluntary_switches(ex.thread_tid(0));
    for (int i = 0; i < kMessages; ++i) {
      pub->publish(m);
      while (got.load() <= i) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    after = voluntary_switches(ex.thread_tid(0));
  });
  publisher.join();
  ex.request_stop();
  ex.join();
  ASSERT_EQ(got.load(), kMessages);
  ASSERT_GE(before, 0);
  const double per_message = static_cast<double>(after - before) / kMessages;
  EXPECT_LT(per_message, 1.5) << "the executor thread blocked on the middleware's lock while the "
                                 "publisher was delivering (" << per_message << " sleeps per message)";
}

}  // namespace
}  // namespace chainrt::runtime
