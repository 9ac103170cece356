// Integration tests of the chainrt executor on real ROS 2: mutually exclusive groups never run
// two callbacks at once (EDF ready-queue paper Sec. II/IV-A), user exceptions are caught and
// the executor goes on, SIGINT stops every thread, chain monitoring (response times, misses)
// and the /chainrt/chain_stats topic.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <chainrt_msgs/msg/chain_stats.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/executor.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
namespace {

using testing::unique_topic;
using testing::wait_matched;
using testing::wait_until;
using Str = std_msgs::msg::String;

// Three timers and a subscription share one mutually exclusive group; two more timers share a
// reentrant group. Two threads. No two callbacks of the exclusive group may overlap: checked
// both by a counter inside the callbacks and on the dispatch trace.
void check_mutual_exclusion(Policy policy) {
  Context ctx;
  Node n(ctx, "mutex_node");
  CallbackGroup* mx = n.create_callback_group(GroupType::MutuallyExclusive, "mx");
  CallbackGroup* re = n.create_callback_group(GroupType::Reentrant, "re");
  std::atomic<int> inside{0}, max_inside{0}, runs{0};
  auto guarded = [&] {
    int now = inside.fetch_add(1) + 1;
    int m = max_inside.load();
    while (now > m && !max_inside.compare_exchange_weak(m, now)) {
    }
    burn_cpu(300'000);
    inside.fetch_sub(1);
    runs.fetch_add(1);
  };
  const std::string topic = unique_topic("mx");
  auto pub = n.create_publisher<Str>(topic, 10);
  for (int i = 0; i < 3; ++i) {
    CallbackOptions o;
    o.name = "mx_timer" + std::to_string(i);
    o.group = mx;
    o.priority = i + 1;
    n.create_timer(2'000'000 + i * 300'000, [&, i] {
      guarded();
      if (i == 0) {
        Str m;
        m.data = "x";
        pub->publish(m);
      }
    }, o);
  }
  CallbackOptions so;
  so.name = "mx_sub";
  so.group = mx;
  n.create_subscription<Str>(topic, 10, [&](const Str&) { guarded(); }, so);
  for (int i = 0; i < 2; ++i) {
    CallbackOptions o;
    o.name = "re_timer" + std::to_string(i);
    o.group = re;
    n.create_timer(1'000'000, [] { burn_cpu(100'000); }, o);
  }
  ASSERT_TRUE(wait_matched(*pub));
  ExecutorOptions eo;
  eo.policy = policy;
  eo.threads.resize(2);
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  EXPECT_TRUE(wait_until([&] { return runs.load() >= 200; }));
  ex.request_stop();
  ex.join();
  EXPECT_EQ(max_inside.load(), 1);
  // the trace agrees: intervals of the exclusive group's callbacks are disjoint
  std::vector<DispatchRecord> mx_runs;
  for (const auto& r : ex.trace())
    if (ex.name_of(r.callback).rfind("mx_", 0) == 0) mx_runs.push_back(r);
  ASSERT_GE(mx_runs.size(), 100u);
  std::sort(mx_runs.begin(), mx_runs.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < mx_runs.size(); ++i)
    EXPECT_GE(mx_runs[i].start, mx_runs[i - 1].finish)
        << ex.name_of(mx_runs[i].callback) << " overlapped "
        << ex.name_of(mx_runs[i - 1].callback);
}

TEST(MutuallyExclusiveGroup, NeverTwoAtOnceUnderRosDefault) {
  check_mutual_exclusion(Policy::RosDefault);
}
TEST(MutuallyExclusiveGroup, NeverTwoAtOnceUnderEdf) { check_mutual_exclusion(Policy::Edf); }
TEST(MutuallyExclusiveGroup, NeverTwoAtOnceUnderFp) {
  check_mutual_exclusion(Policy::FixedPriority);
}

TEST(Robustness, ExceptionIsReportedAndTheExecutorGoesOn) {
  Context ctx;
  Node n(ctx, "thrower");
  std::atomic<int> calls{0};
  CallbackOptions o;
  o.name = "bad_timer";
  n.create_timer(2'000'000, [&] {
    if (calls.fetch_add(1) == 0) throw std::runtime_error("deliberate failure");
  }, o);
  ExecutorOptions eo;
  eo.print_exceptions = true;
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  EXPECT_TRUE(wait_until([&] { return calls.load() >= 5; }));
  ex.request_stop();
  ex.join();
  EXPECT_EQ(ex.exceptions(), 1u);
  RunReport r = ex.report();
  ASSERT_EQ(r.callbacks.size(), 1u);
  EXPECT_EQ(r.callbacks[0].name, "bad_timer");
  EXPECT_EQ(r.callbacks[0].exceptions, 1u);
  EXPECT_GE(r.callbacks[0].instances, 5u);
}

TEST(Robustness, SigintStopsEveryThread) {
  install_signal_handlers();
  Context ctx;
  Node n(ctx, "sig");
  std::atomic<int> calls{0};
  n.create_timer(1'000'000, [&] { calls.fetch_add(1); });
  ExecutorOptions eo;
  eo.threads.resize(3);
  Executor ex(ctx, eo);
  ex.add_node(n);
  std::thread spinner([&] { ex.spin(); });  // returns only when stopped
  EXPECT_TRUE(wait_until([&] { return calls.load() >= 3; }));
  raise(SIGINT);
  spinner.join();
  EXPECT_TRUE(signal_received());
  EXPECT_TRUE(ex.stop_requested());
  clear_signal();
}

// A two-callback chain timer -> subscription; the timer writes the chain stamp into the
// message, the subscription reads it back: end-to-end response times are measured, misses are
// exactly the samples above the deadline, and the statistics are published as
// chainrt_msgs/msg/ChainStats (with the chain's verdict and the callbacks' recent instances).
TEST(Monitoring, ChainLatencyMissesAndStatsTopic) {
  Context ctx;
  Node src(ctx, "chain_src");
  Node dst(ctx, "chain_dst");
  Node observer(ctx, "observer");
  const std::string topic = unique_topic("chain");
  const std::string stats_topic = unique_topic("chain_stats");
  auto pub = src.create_publisher<Str>(topic, 5);
  CallbackOptions to;
  to.name = "c_src";
  src.create_timer(4'000'000, [&] {
    burn_cpu(200'000);
    const Stamp& s = current_stamp();
    Str m;
    m.data = std::to_string(s.release) + " " + std::to_string(s.deadline) + " " +
             std::to_string(s.chain) + " " + std::to_string(s.instance);
    pub->publish(m);
  }, to);
  CallbackOptions so;
  so.name = "c_dst";
  std::atomic<int> got{0};
  dst.create_subscription<Str>(topic, 5, [&](const Str&) {
    burn_cpu(300'000);
    got.fetch_add(1);
  }, so, [](const Str& m) {
    Stamp s;
    unsigned long long inst = 0;
    long long rel = 0, dl = 0;
    unsigned chain = 0;
    std::sscanf(m.data.c_str(), "%lld %lld %u %llu", &rel, &dl, &chain, &inst);
    s.release = rel;
    s.deadline = dl;
    s.chain = chain;
    s.instance = inst;
    return s;
  });
  std::atomic<int> stats_msgs{0};
  chainrt_msgs::msg::ChainStats last_stats;
  std::mutex stats_mu;
  ASSERT_TRUE(wait_matched(*pub));

  ExecutorOptions eo;
  eo.policy = Policy::Edf;
  eo.stats_period = 50'000'000;
  eo.stats_topic = stats_topic;
  Executor ex(ctx, eo);
  ex.add_node(src);
  ex.add_node(dst);
  // a deadline of 1.5 ms over 0.5 ms of work: some instances may miss on a loaded machine;
  // the test checks the bookkeeping, not the timing
  ex.add_chain(ChainSpec{"chain", {"c_src", "c_dst"}, {}, 4'000'000, 1'500'000});
  // observer: a second executor with a subscription to the stats topic
  std::uint64_t published_instances = 0;  // c_dst's instances carried by the messages, all together
  observer.create_subscription<chainrt_msgs::msg::ChainStats>(stats_topic, 10, [&](const chainrt_msgs::msg::ChainStats& m) {
    std::lock_guard<std::mutex> g(stats_mu);
    last_stats = m;
    for (const auto& cb : m.callbacks)
      if (cb.name == "c_dst") published_instances += cb.start_ns.size();
    stats_msgs.fetch_add(1);
  });
  Executor obs(ctx);
  obs.add_node(observer);
  obs.start();
  ex.start();
  EXPECT_TRUE(wait_until([&] { return got.load() >= 30 && stats_msgs.load() >= 2; }));
  ex.request_stop();
  ex.join();
  RunReport r = ex.report();
  // the messages' per-instance arrays add up to what ran (the last one is sent at the stop)
  EXPECT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> g(stats_mu);
    return published_instances == r.callbacks[1].instances;
  })) << published_instances << " of " << r.callbacks[1].instances;
  obs.request_stop();
  obs.join();
  ASSERT_EQ(r.chains.size(), 1u);
  const ChainStats& c = r.chains[0];
  EXPECT_EQ(c.name, "chain");
  EXPECT_GE(c.instances, 25u);
  EXPECT_LE(c.instances, static_cast<std::uint64_t>(got.load()));
  EXPECT_GE(c.bcrt_ns, 500'000);  // at least the two callbacks' CPU time
  EXPECT_GE(c.wcrt_ns, c.p99_ns);
  EXPECT_GE(c.p99_ns, c.bcrt_ns);
  std::uint64_t above = 0;
  for (Duration s : c.samples) above += s > c.deadline_ns ? 1 : 0;
  EXPECT_EQ(c.deadline_misses, above);
  // per-callback CPU time from the thread CPU clock
  ASSERT_EQ(r.callbacks.size(), 2u);
  EXPECT_GE(r.callbacks[1].cpu_max, 300'000);
  std::lock_guard<std::mutex> g(stats_mu);
  ASSERT_EQ(last_stats.chains.size(), 1u);
  const auto& mc = last_stats.chains[0];
  EXPECT_EQ(mc.name, "chain");
  EXPECT_EQ(mc.period_ns, 4'000'000);
  EXPECT_EQ(mc.deadline_ns, 1'500'000);
  EXPECT_GE(mc.wcrt_ns, 500'000);
  EXPECT_EQ(mc.verdict, mc.deadline_misses > 0 ? chainrt_msgs::msg::ChainStatistics::VERDICT_MISSED
                                               : chainrt_msgs::msg::ChainStatistics::VERDICT_MET);
  EXPECT_EQ(last_stats.run.policy, "edf");
  ASSERT_EQ(last_stats.callbacks.size(), 2u);
  EXPECT_EQ(last_stats.callbacks[1].name, "c_dst");
  EXPECT_EQ(last_stats.callbacks[1].instances, r.callbacks[1].instances);
}

}  // namespace
}  // namespace chainrt::runtime

namespace chainrt::runtime {
namespace {

// Thread parameters: each request is either applied or reported as a warning; never a crash.
// (Run in a helper thread: the test's own thread keeps its scheduling.)
// The last statistics message is sent after every worker has ended: an instance still running
// when the stop is requested is counted in it as in the run report (a message sent at the stop
// request itself would leave that instance out).
TEST(Monitoring, LastStatsMessageCountsTheInstanceRunningAtTheStop) {
  Context ctx;
  Node n(ctx, "stats_at_stop");
  Node observer(ctx, "stats_at_stop_observer");
  const std::string stats_topic = unique_topic("stats_at_stop");
  std::atomic<int> calls{0};
  std::atomic<bool> in_slow{false};
  CallbackOptions to;
  to.name = "slow";
  n.create_timer(5'000'000, [&] {
    if (calls.fetch_add(1) + 1 == 3) {
      in_slow.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stop comes meanwhile
    }
  }, to);
  std::mutex mu;
  std::uint64_t last_instances = 0;
  std::atomic<int> msgs{0};
  observer.create_subscription<chainrt_msgs::msg::ChainStats>(stats_topic, 10, [&](const chainrt_msgs::msg::ChainStats& m) {
    std::lock_guard<std::mutex> g(mu);
    for (const auto& cb : m.callbacks)
      if (cb.name == "slow") last_instances = cb.instances;
    msgs.fetch_add(1);
  });
  Executor obs(ctx);
  obs.add_node(observer);
  obs.start();
  ExecutorOptions eo;
  eo.stats_period = 1'000'000'000;  // only the last message matters
  eo.stats_topic = stats_topic;
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  ASSERT_TRUE(wait_until([&] { return in_slow.load(); }));
  ex.request_stop();
  ex.join();
  const RunReport r = ex.report();
  EXPECT_EQ(r.callbacks[0].instances, 3u);
  EXPECT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> g(mu);
    return last_instances == r.callbacks[0].instances;
  })) << last_instances << " of " << r.callbacks[0].instances;
  obs.request_stop();
  obs.join();
}

TEST(ThreadParams, AppliedOrWarnedNeverFatal) {
  auto apply = [](const sched::ThreadSpec& spec) {
    ThreadSetupResult r;
    std::thread th([&] { r = apply_thread_spec(spec); });
    th.join();
    return r;
  };
  sched::ThreadSpec missing_core;
  missing_core.name = "far";
  missing_core.cores = {100000};
  ThreadSetupResult r = apply(missing_core);
  EXPECT_FALSE(r.pinned);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("far"), std::string::npos);

  sched::ThreadSpec fifo;
  fifo.name = "fifo";
  fifo.cores = {0};
  fifo.fifo_priority = 1;
  r = apply(fifo);
  EXPECT_TRUE(r.pinned);
  EXPECT_TRUE(r.fifo || !r.warnings.empty());

  sched::ThreadSpec dl;
  dl.name = "reserved";
  dl.reservation = Reservation{1'000'000, 10'000'000};
  r = apply(dl);
  EXPECT_TRUE(r.deadline || !r.warnings.empty());
  if (!r.deadline) {
    EXPECT_NE(r.warnings.back().find("SCHED_DEADLINE"), std::string::npos);
  }

  // A late wake-up is a real-time thread's only: a normal thread waits behind other processes.
  auto late_in = [](int fifo_priority) {
    LateWake w;
    bool fifo = false;
    std::thread th([&] {
      sched_param p{};
      p.sched_priority = fifo_priority;
      fifo = fifo_priority > 0 && pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
      w = late_wake(now_ns() - 1'000'000);  // "slept until" 1 ms ago
    });
    th.join();
    return std::make_pair(w, fifo);
  };
  EXPECT_EQ(late_in(0).first.woke, 0);
  if (const auto [w, fifo] = late_in(1); fifo) {
    EXPECT_GT(w.slept_until, 0);
    EXPECT_GE(w.woke - w.slept_until, 1'000'000);
  }
  EXPECT_EQ(late_wake(0).woke, 0);                          // no timeout: nothing to be late for
  EXPECT_EQ(late_wake(now_ns() + 1'000'000'000).woke, 0);  // woken before it (a message)

  PiMutex m;
  EXPECT_TRUE(m.priority_inheritance());  // Linux PI futexes (LaME's RT mutex)
  m.lock();
  EXPECT_FALSE(m.try_lock());
  m.unlock();
  EXPECT_TRUE(m.try_lock());
  m.unlock();
}

}  // namespace
}  // namespace chainrt::runtime

namespace chainrt::runtime {
namespace {

// LaME callback affinity: a callback whose mask names only thread 1 runs only there; the others
// may run anywhere. Three threads; the trace tells which thread ran each instance.
TEST(Affinity, CallbackRunsOnlyOnItsThreads) {
  Context ctx;
  Node n(ctx, "affinity");
  CallbackGroup* re = n.create_callback_group(GroupType::Reentrant, "re");
  std::atomic<int> pinned_runs{0}, free_runs{0};
  CallbackOptions pinned;
  pinned.name = "pinned";
  pinned.group = re;
  pinned.affinity = sched::AffinityMask{1} << 1;  // thread 1 only
  n.create_timer(1'000'000, [&] {
    burn_cpu(100'000);
    pinned_runs.fetch_add(1);
  }, pinned);
  for (int i = 0; i < 2; ++i) {
    CallbackOptions o;
    o.name = "free" + std::to_string(i);
    o.group = re;
    n.create_timer(1'000'000, [&] {
      burn_cpu(200'000);
      free_runs.fetch_add(1);
    }, o);
  }
  ExecutorOptions eo;
  eo.policy = Policy::Lame;
  eo.threads.resize(3);
  Executor ex(ctx, eo);
  ex.add_node(n);
  ex.start();
  EXPECT_TRUE(wait_until([&] { return pinned_runs.load() >= 50 && free_runs.load() >= 50; }));
  ex.request_stop();
  ex.join();
  const sched::CallbackId pid = ex.id_of("pinned");
  int seen = 0;
  for (const auto& r : ex.trace())
    if (r.callback == pid) {
      ++seen;
      EXPECT_EQ(r.thread, 1u);
    }
  EXPECT_GE(seen, 50);
}

// Timer overrun (sched::TimerClock, EDF paper Sec. IV-A): a 1 ms timer whose callback uses 3 ms
// of CPU is always taken more than a period late; the skipped releases are counted as drops
// and never run as a burst of back-to-back instances.
TEST(TimerOverrun, SkippedReleasesAreDropsNotBursts) {
  Context ctx;
  Node n(ctx, "overrun");
  std::atomic<int> runs{0};
  CallbackOptions o;
  o.name = "slow_timer";
  n.create_timer(1'000'000, [&] {
    burn_cpu(3'000'000);
    runs.fetch_add(1);
  }, o);
  Executor ex(ctx);
  ex.add_node(n);
  ex.add_chain(ChainSpec{"slow", {"slow_timer"}, {}, 1'000'000, 1'000'000});
  ex.start();
  EXPECT_TRUE(wait_until([&] { return runs.load() >= 20; }));
  ex.request_stop();
  ex.join();
  RunReport r = ex.report();
  ASSERT_EQ(r.callbacks.size(), 1u);
  EXPECT_GE(r.callbacks[0].drops, 2 * (r.callbacks[0].instances - 1));
  EXPECT_EQ(r.chains[0].drops, r.callbacks[0].drops);
  // every instance misses its 1 ms deadline (it burns 3 ms), and releases are one period apart
  // at least: consecutive instances never share a release
  EXPECT_EQ(r.chains[0].deadline_misses, r.chains[0].instances);
  Duration last = -1;
  for (const auto& d : ex.trace()) {
    EXPECT_GT(d.release, last);
    last = d.release;
  }
}

}  // namespace
}  // namespace chainrt::runtime

namespace chainrt::runtime {
namespace {

// A branching chain (timer -> two subscriptions) ends when BOTH leaves completed (EDF paper,
// F1Tenth case study; docs/model.md): every response covers the slower leaf, and there is at
// most one response per instance.
TEST(Monitoring, BranchingChainEndsWhenEveryLeafCompleted) {
  Context ctx;
  Node src(ctx, "fork_src");
  Node leaves(ctx, "fork_leaves");
  const std::string topic = unique_topic("fork");
  auto pub = src.create_publisher<Str>(topic, 10);
  CallbackOptions to;
  to.name = "fork";
  std::atomic<int> fired{0}, fast_runs{0}, slow_runs{0};
  src.create_timer(8'000'000, [&] {
    burn_cpu(200'000);
    const Stamp& s = current_stamp();
    Str m;
    m.data = std::to_string(s.release) + " " + std::to_string(s.deadline) + " " +
             std::to_string(s.chain) + " " + std::to_string(s.instance);
    pub->publish(m);
    fired.fetch_add(1);
  }, to);
  auto stamp_of = [](const Str& m) {
    Stamp s;
    long long rel = 0, dl = 0;
    unsigned chain = 0;
    unsigned long long inst = 0;
    std::sscanf(m.data.c_str(), "%lld %lld %u %llu", &rel, &dl, &chain, &inst);
    s.release = rel;
    s.deadline = dl;
    s.chain = chain;
    s.instance = inst;
    return s;
  };
  CallbackGroup* re = leaves.create_callback_group(GroupType::Reentrant, "leaves");
  CallbackOptions fo, so;
  fo.name = "fast_leaf";
  fo.group = re;
  so.name = "slow_leaf";
  so.group = re;
  leaves.create_subscription<Str>(topic, 10, [&](const Str&) {
    burn_cpu(500'000);
    fast_runs.fetch_add(1);
  }, fo, stamp_of);
  leaves.create_subscription<Str>(topic, 10, [&](const Str&) {
    burn_cpu(2'000'000);
    slow_runs.fetch_add(1);
  }, so, stamp_of);
  ASSERT_TRUE(wait_matched(*pub, 2));
  ExecutorOptions eo;
  eo.policy = Policy::Edf;
  eo.threads.resize(2);
  Executor ex(ctx, eo);
  ex.add_node(src);
  ex.add_node(leaves);
  ex.add_chain(ChainSpec{"fork", {"fork", "fast_leaf", "slow_leaf"}, {"fast_leaf", "slow_leaf"},
                         8'000'000, 8'000'000});
  ex.start();
  EXPECT_TRUE(wait_until([&] { return slow_runs.load() >= 20; }));
  ex.request_stop();
  ex.join();
  RunReport r = ex.report();
  ASSERT_EQ(r.chains.size(), 1u);
  const ChainStats& c = r.chains[0];
  EXPECT_GE(c.instances, 15u);
  EXPECT_LE(c.instances, static_cast<std::uint64_t>(std::min(fast_runs.load(), slow_runs.load())));
  EXPECT_GE(c.bcrt_ns, 2'200'000);  // the timer's and the slow leaf's CPU time, at least
}

}  // namespace
}  // namespace chainrt::runtime
