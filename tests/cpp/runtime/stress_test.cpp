// Multi-threaded stress test of the chainrt executor on real ROS 2, meant to be run under
// ThreadSanitizer and AddressSanitizer (CHAINRT_SANITIZE=thread|address): 4 executor threads,
// fast timers and chained subscriptions with tiny queues (inputs are dropped), mutually
// exclusive and reentrant groups, the stats publisher, a concurrent reader of the monitor, and
// executors created and destroyed while DDS keeps delivering. Checks invariants only.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
namespace {

using testing::unique_topic;
using testing::wait_matched;
using testing::wait_until;
using Str = std_msgs::msg::String;

struct GroupGuard {
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  void enter() {
    if (inside.fetch_add(1) != 0) violations.fetch_add(1);
  }
  void leave() { inside.fetch_sub(1); }
};

void stress(Policy policy, int target_dispatches) {
  Context ctx;
  Node a(ctx, "stress_a"), b(ctx, "stress_b"), c(ctx, "stress_c");
  CallbackGroup* mx_a = a.create_callback_group(GroupType::MutuallyExclusive, "mx_a");
  CallbackGroup* re_b = b.create_callback_group(GroupType::Reentrant, "re_b");
  GroupGuard guard_a, guard_c;  // node c's default group is mutually exclusive too
  std::vector<std::string> topics;
  for (int i = 0; i < 4; ++i) topics.push_back(unique_topic("st" + std::to_string(i)));
  std::vector<std::shared_ptr<Publisher<Str>>> pubs_a, pubs_b;
  for (auto& t : topics) pubs_a.push_back(a.create_publisher<Str>(t, 2));
  auto pub_bc = b.create_publisher<Str>(topics[3] + "_bc", 2);
  std::atomic<long> calls{0};

  auto stamp_of = [](const Str& m) {
    Stamp s;
    long long rel = 0, dl = 0;
    unsigned ch = kNoChain;
    if (std::sscanf(m.data.c_str(), "%lld %lld %u", &rel, &dl, &ch) == 3) {
      s.release = rel;
      s.deadline = dl;
      s.chain = ch;
    }
    return s;
  };
  auto stamp_text = [] {
    const Stamp& s = current_stamp();
    return std::to_string(s.release) + " " + std::to_string(s.deadline) + " " +
           std::to_string(s.chain);
  };
  // node a: four timers in one exclusive group, each publishing to one topic
  for (int i = 0; i < 4; ++i) {
    CallbackOptions o;
    o.name = "a_timer" + std::to_string(i);
    o.group = mx_a;
    o.priority = 10 + i;
    a.create_timer(1'000'000 + i * 250'000, [&, i] {
      guard_a.enter();
      burn_cpu(20'000);
      Str m;
      m.data = stamp_text();
      pubs_a[i]->publish(m);
      guard_a.leave();
      calls.fetch_add(1);
    }, o);
  }
  // node b: reentrant subscriptions to every topic (depth 1: inputs get dropped)
  for (int i = 0; i < 4; ++i) {
    CallbackOptions o;
    o.name = "b_sub" + std::to_string(i);
    o.group = re_b;
    o.priority = 20 + i;
    b.create_subscription<Str>(topics[i], 1, [&, i](const Str& m) {
      burn_cpu(10'000);
      if (i == 3) {
        Str f;
        f.data = m.data;
        pub_bc->publish(f);
      }
      calls.fetch_add(1);
    }, o, stamp_of);
  }
  // node c: the chain's last callback (default exclusive group) plus a throwing timer
  CallbackOptions co;
  co.name = "c_sub";
  c.create_subscription<Str>(topics[3] + "_bc", 2, [&](const Str&) {
    guard_c.enter();
    burn_cpu(5'000);
    guard_c.leave();
    calls.fetch_add(1);
  }, co, stamp_of);
  CallbackOptions th;
  th.name = "c_thrower";
  std::atomic<int> throws{0};
  c.create_timer(3'000'000, [&] {
    guard_c.enter();
    guard_c.leave();
    if (throws.fetch_add(1) % 5 == 0) throw std::runtime_error("stress");
  }, th);

  for (auto& p : pubs_a) ASSERT_TRUE(wait_matched(*p));
  ASSERT_TRUE(wait_matched(*pub_bc));

  ExecutorOptions eo;
  eo.policy = policy;
  eo.threads.resize(4);
  eo.stats_period = 20'000'000;
  eo.stats_topic = unique_topic("stress_stats");
  eo.trace_capacity = 256;  // wraps many times
  eo.samples_per_chain = 64;
  eo.print_exceptions = false;
  Executor ex(ctx, eo);
  ex.add_node(a);
  ex.add_node(b);
  ex.add_node(c);
  ex.add_chain(ChainSpec{"st_chain", {"a_timer3", "b_sub3", "c_sub"}, {}, 1'750'000, 5'000'000});
  ex.start();
  std::atomic<bool> reading{true};
  std::thread reader([&] {  // the monitor is read while the executor runs
    while (reading.load()) {
      RunReport r = ex.report(32);
      auto t = ex.trace();
      (void)r;
      (void)t;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  EXPECT_TRUE(wait_until([&] { return calls.load() >= target_dispatches; }, 240));
  ex.request_stop();
  ex.join();
  reading = false;
  reader.join();

  EXPECT_EQ(guard_a.violations.load(), 0);
  EXPECT_EQ(guard_c.violations.load(), 0);
  RunReport r = ex.report();
  std::uint64_t total = 0, exceptions = 0;
  for (const auto& cb : r.callbacks) {
    total += cb.instances;
    exceptions += cb.exceptions;
    EXPECT_GT(cb.instances, 0u) << cb.name;
    EXPECT_LE(cb.cpu_max, cb.cpu_total) << cb.name;
  }
  EXPECT_EQ(total, r.dispatches);
  EXPECT_GE(exceptions, 1u);
  EXPECT_EQ(exceptions, ex.exceptions());
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_LE(r.chains[0].samples.size(), 64u);
  EXPECT_LE(ex.trace().size(), 256u);
}

TEST(Stress, EdfFourThreads) { stress(Policy::Edf, 3000); }
TEST(Stress, RosDefaultFourThreads) { stress(Policy::RosDefault, 3000); }
TEST(Stress, LameFourThreads) { stress(Policy::Lame, 2000); }

// Executors created, run briefly and destroyed while a publisher outside them keeps sending:
// the DDS listener must never call into a destroyed executor.
TEST(Stress, ExecutorsComeAndGoWhileMessagesFlow) {
  Context ctx;
  Node feeder(ctx, "feeder");
  Node sink(ctx, "sink");
  const std::string topic = unique_topic("churn");
  auto pub = feeder.create_publisher<Str>(topic, 5);
  std::atomic<long> got{0};
  sink.create_subscription<Str>(topic, 5, [&](const Str&) { got.fetch_add(1); });
  ASSERT_TRUE(wait_matched(*pub));
  std::atomic<bool> feeding{true};
  std::thread feeder_thread([&] {
    Str m;
    m.data = "x";
    while (feeding.load()) {
      pub->publish(m);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (int round = 0; round < 20; ++round) {
    ExecutorOptions eo;
    eo.policy = round % 2 ? Policy::Edf : Policy::RosDefault;
    eo.threads.resize(2);
    Executor ex(ctx, eo);
    ex.add_node(sink);
    const long before = got.load();
    ex.start();
    EXPECT_TRUE(wait_until([&] { return got.load() > before + 5; }));
  }
  feeding = false;
  feeder_thread.join();
  EXPECT_GT(got.load(), 100);
}

}  // namespace
}  // namespace chainrt::runtime
