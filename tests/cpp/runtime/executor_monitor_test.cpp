// The monitoring message's parts that chainrt profile reads (monitor.hpp): the per-dispatch
// samples grouped by callback, and the run id, executor and callback place in the report JSON;
// the CPU time of a callback as the executors measure it (CallbackCpu).
#include <gtest/gtest.h>

#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/node.hpp"

using namespace chainrt::runtime;
using chainrt::Duration;

TEST(MonitorJson, RecordsAreGroupedPerCallbackInOrder) {
  // callback, thread, start, finish, cpu, deadline, release
  std::vector<DispatchRecord> r = {{0, 0, 100, 300, 150, 0, 50},
                                   {1, 0, 400, 450, 40, 0, 0},
                                   {0, 1, 500, 800, 250, 0, 450}};
  EXPECT_EQ(records_json(r, {"a", "b\"q", "never"}),
            "{\"a\": {\"start_ns\": [100,500], \"wall_ns\": [200,300], \"cpu_ns\": [150,250], "
            "\"release_ns\": [50,450], \"thread\": [0,1]}, "
            "\"b\\\"q\": {\"start_ns\": [400], \"wall_ns\": [50], \"cpu_ns\": [40], "
            "\"release_ns\": [0], \"thread\": [0]}}");
  EXPECT_EQ(records_json({}, {"a"}), "{}");
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
