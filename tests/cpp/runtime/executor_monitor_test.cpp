// The monitoring message's parts that chainrt profile reads (monitor_msg.hpp, monitor.hpp): the
// per-dispatch samples grouped by callback in the typed message, the chains' verdicts, and the
// run id, executor and callback place in the report JSON; the CPU time of a callback as the
// executors measure it (CallbackCpu).
#include <gtest/gtest.h>

#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/monitor_msg.hpp"
#include "chainrt/runtime/node.hpp"

using namespace chainrt::runtime;
using chainrt::Duration;

TEST(MonitorMessage, RecordsAreGroupedPerCallbackInOrder) {
  RunReport rep;
  rep.policy = "edf";
  rep.threads = 2;
  rep.run_id = "r-1";
  rep.executor = "main";
  for (const char* n : {"a", "b"}) rep.callbacks.emplace_back().name = n;
  rep.callbacks[0].grid_start_index = 3;
  rep.callbacks[0].release_jitter.record(40);
  rep.callbacks[0].release_jitter.record(60);
  // callback, thread, start, finish, cpu, deadline, release
  std::vector<DispatchRecord> r = {{0, 0, 100, 300, 150, 0, 50},
                                   {2, 0, 400, 450, 40, 0, 0},
                                   {0, 1, 500, 800, 250, 0, 450}};
  chainrt_msgs::msg::ChainStats m;
  to_message(rep, 7, 2, r, {"a", "b", "c"}, m);
  EXPECT_EQ(m.run.run_id, "r-1");
  EXPECT_EQ(m.run.executor, "main");
  EXPECT_EQ(m.run.policy, "edf");
  EXPECT_EQ(m.run.threads, 2u);
  EXPECT_EQ(m.seq, 7u);
  EXPECT_EQ(m.samples_lost, 2u);
  ASSERT_EQ(m.callbacks.size(), 3u);  // "c" ran but is not in the report: its instances only
  EXPECT_EQ(m.callbacks[0].start_ns, (std::vector<std::int64_t>{100, 500}));
  EXPECT_EQ(m.callbacks[0].wall_ns, (std::vector<std::int64_t>{200, 300}));
  EXPECT_EQ(m.callbacks[0].cpu_ns, (std::vector<std::int64_t>{150, 250}));
  EXPECT_EQ(m.callbacks[0].release_ns, (std::vector<std::int64_t>{50, 450}));
  EXPECT_EQ(m.callbacks[0].thread, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(m.callbacks[0].release_jitter_mean_ns, 50);
  EXPECT_EQ(m.callbacks[0].grid_start_index, 3);
  EXPECT_TRUE(m.callbacks[1].start_ns.empty());
  EXPECT_EQ(m.callbacks[1].grid_start_index, -1);
  EXPECT_EQ(m.callbacks[2].name, "c");
  EXPECT_EQ(m.callbacks[2].start_ns, (std::vector<std::int64_t>{400}));
  // the message's storage is reused: the next one carries only its own dispatches
  to_message(rep, 8, 0, {}, {"a", "b", "c"}, m);
  ASSERT_EQ(m.callbacks.size(), 2u);
  EXPECT_TRUE(m.callbacks[0].start_ns.empty());
}

TEST(MonitorMessage, ChainVerdicts) {
  using M = chainrt_msgs::msg::ChainStatistics;
  ChainStats c;
  EXPECT_EQ(chain_verdict(c), M::VERDICT_NO_INSTANCES);
  c.instances = 5;
  EXPECT_EQ(chain_verdict(c), M::VERDICT_MET);
  c.deadline_misses = 1;
  EXPECT_EQ(chain_verdict(c), M::VERDICT_MISSED);
  RunReport rep;
  rep.chains.push_back(c);
  rep.chains.back().name = "loop";
  rep.chains.back().samples = {10, 20};
  chainrt_msgs::msg::ChainStats m;
  to_message(rep, 0, 0, {}, {}, m);
  ASSERT_EQ(m.chains.size(), 1u);
  EXPECT_EQ(m.chains[0].verdict, M::VERDICT_MISSED);
  EXPECT_EQ(m.chains[0].samples_ns, (std::vector<std::int64_t>{10, 20}));
}

TEST(MonitorMessage, EventsTopicIsBesideTheStatsTopic) {
  EXPECT_EQ(events_topic("/chainrt/chain_stats"), "/chainrt/events");
  EXPECT_EQ(events_topic("/robot/chainrt/chain_stats"), "/robot/chainrt/events");
  EXPECT_EQ(events_topic("/my_stats"), "/my_stats/events");
}

TEST(MonitorJson, ReportCarriesRunIdExecutorAndCallbackPlace) {
  RunReport rep;
  rep.policy = "fp";
  rep.run_id = "r-1";
  rep.executor = "main";
  CallbackStats cs;
  cs.name = "hi_sub";
  cs.node = "/hi_control";
  cs.kind = "subscription";
  cs.topic = "/hi_data";
  cs.instances = 2;
  cs.cpu_total = 30;
  cs.cpu_max = 20;
  cs.cpu_min = 10;
  cs.wall_total = 50;
  cs.wall_max = 30;
  cs.wall_min = 20;
  rep.callbacks.push_back(cs);
  const std::string js = to_json(rep);
  EXPECT_EQ(js.rfind("{\"run_id\": \"r-1\", \"executor\": \"main\", \"policy\": \"fp\"", 0), 0u) << js;
  EXPECT_NE(js.find("\"hi_sub\": {\"node\": \"/hi_control\", \"kind\": \"subscription\", \"topic\": "
                    "\"/hi_data\", \"instances\": 2, \"cpu_total_ns\": 30, \"cpu_max_ns\": 20, "
                    "\"cpu_min_ns\": 10, \"wall_total_ns\": 50, \"wall_max_ns\": 30, \"wall_min_ns\": 20"),
            std::string::npos)
      << js;
  // without a run id or place (Executor::report() at the end of a run) the keys are absent
  RunReport plain;
  plain.policy = "edf";
  EXPECT_EQ(to_json(plain).rfind("{\"policy\": \"edf\"", 0), 0u);
}

// CallbackCpu (node.hpp): at most one read of the thread's CPU clock per callback, yet never
// below the callback's own CPU time and never above its duration; a meter stopped inside the
// callback (an executor spun there) does not shorten it.
TEST(CallbackCpu, NeverBelowTheCallbacksCpuTimeNorAboveItsDuration) {
  for (int i = 0; i < 20; ++i) {
    burn_cpu(200'000);  // the executor's own work between two callbacks
    const Duration w0 = now_ns();
    CallbackCpu m;
    m.start();
    const Duration c0 = thread_cpu_ns();
    burn_cpu(1'000'000);
    const Duration c1 = thread_cpu_ns();
    const Duration got = m.stop();
    const Duration w1 = now_ns();
    EXPECT_GE(got, c1 - c0);
    EXPECT_LE(got, w1 - w0);
  }
}

TEST(CallbackCpu, ANestedMeterDoesNotShortenTheOuterCallback) {
  CallbackCpu outer;
  outer.start();
  const Duration c0 = thread_cpu_ns();
  burn_cpu(2'000'000);
  CallbackCpu inner;
  inner.start();
  burn_cpu(500'000);
  inner.stop();
  burn_cpu(200'000);
  const Duration c1 = thread_cpu_ns();
  EXPECT_GE(outer.stop(), c1 - c0);
}

// A short callback (duration under kShort) reports its duration without a system call; every
// kReadEvery-th one reads the clock all the same (so that a later long callback's bound covers
// little more than itself). Durations given by the caller: deterministic.
TEST(CallbackCpu, ShortCallbacksReadTheClockOnlyEveryKth) {
  constexpr Duration kShortWall = CallbackCpu::kShort / 2;
  {
    CallbackCpu m;  // not short: it reads the clock, and the count of unread ones restarts
    m.start(0);
    m.stop(CallbackCpu::kShort);
  }
  std::uint64_t reads = CallbackCpu::clock_reads();
  Duration t = 1'000'000'000;
  for (std::uint32_t i = 0; i < 4 * CallbackCpu::kReadEvery; ++i) {
    CallbackCpu m;
    m.start(t);
    t += kShortWall;
    const Duration got = m.stop(t);
    const bool read = CallbackCpu::clock_reads() != reads;
    reads = CallbackCpu::clock_reads();
    EXPECT_EQ(read, (i + 1) % CallbackCpu::kReadEvery == 0) << i;
    if (read) EXPECT_LE(got, kShortWall);
    else EXPECT_EQ(got, kShortWall);  // its duration: never below its CPU time
  }
}

TEST(CallbackCpu, ALongCallbackAfterShortOnesIsNeverBelowItsCpuTime) {
  for (int i = 0; i < 10; ++i) {
    for (int k = 0; k < 7; ++k) {  // short callbacks: no read of the clock
      CallbackCpu m;
      m.start();
      m.stop();
    }
    burn_cpu(100'000);
    const Duration w0 = now_ns();
    CallbackCpu m;
    m.start();
    const Duration c0 = thread_cpu_ns();
    burn_cpu(500'000);
    const Duration c1 = thread_cpu_ns();
    const Duration got = m.stop();
    const Duration w1 = now_ns();
    EXPECT_GE(got, c1 - c0);
    EXPECT_LE(got, w1 - w0);
  }
}
