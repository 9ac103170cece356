// cros-rt's bound for a chain whose response exceeds its period: the level-i busy period
// (analysis/src/cros_rt.cpp), checked by hand and against the simulator, and a CI slice of the
// soundness sweep (scripts/cros_rt_soundness runs 10,000 systems per feature).
#include <gtest/gtest.h>

#ifdef CHAINRT_SIM_SOUNDNESS
#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "chainrt/sim/soundness.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

// Two single-threaded executors on one core of one host, SCHED_FIFO `hi` above `lo`.
std::string two_executors(const std::string& body) {
  return R"(chainrt: 1
name: busy_period
hosts:
  - {name: h, cores: 1}
executors:
  - {name: xhi, host: h, policy: picas, priority: 2, threads: [{name: t0, cores: [0], priority: 2}]}
  - {name: xlo, host: h, policy: picas, priority: 1, threads: [{name: t0, cores: [0], priority: 1}]}
nodes:
  - {name: nhi, executor: xhi}
  - {name: nlo, executor: xlo}
)" + body;
}

// Lehoczky's two tasks as chains: `one` (C = c1_wcet, T = 70 ms) preempts `two` (C = 62 ms,
// T = 100 ms).
Model lehoczky(const std::string& c1_wcet) {
  return load_model_from_string(two_executors(R"(callbacks:
  - {name: c1, kind: timer, node: nhi, period: 70ms, wcet: )" + c1_wcet + R"(, priority: 1}
  - {name: c2, kind: timer, node: nlo, period: 100ms, wcet: 62ms, priority: 1}
chains:
  - {name: one, callbacks: [c1], deadline: 70ms, priority: 2}
  - {name: two, callbacks: [c2], deadline: 100ms, priority: 1}
)"));
}

const ChainBound& bound_of(const AnalysisResult& r, const std::string& chain) {
  const ChainBound* b = r.find(chain);
  EXPECT_NE(b, nullptr) << chain;
  static const ChainBound none;
  return b ? *b : none;
}

Duration simulated_wcrt(const Model& m, const std::string& chain) {
  sim::SimOptions so;
  so.duration = 3'000'000'000;
  so.policy = Policy::Picas;
  const auto r = sim::simulate(m, so);
  return r.chain(chain)->wcrt;
}

}  // namespace

// Lehoczky's example (RTSS 1990): τ1 (C = 26, T = 70) preempts τ2 (C = 62, T = 100), U = 0.991.
// τ2's first instance ends at w(0) = 62 + 2·26 = 114 > 100, so the busy period goes on:
//   w(1) = 124 + 3·26 = 202, w(2) = 186 + 5·26 = 316, w(3) = 248 + 6·26 = 404,
//   w(4) = 310 + 8·26 = 518, w(5) = 372 + 9·26 = 606, w(6) = 434 + 10·26 = 694 <= 700 (ends);
//   R = max(114, 102, 116, 104, 118, 106, 94) = 118 ms, instance 4's.
// The chain is pipelined (one callback), so no later instance is charged. The synchronous
// release is the critical instant here and the simulator shows exactly 118 ms.
TEST(CrosRtBusyPeriod, LehoczkyExample) {
  const Model m = lehoczky("26ms");
  const auto r = find_analysis("cros-rt")->analyze(m);
  EXPECT_EQ(bound_of(r, "one").wcrt_bound, 26 * ms);
  const ChainBound& two = bound_of(r, "two");
  ASSERT_TRUE(two.bounded) << two.reason;
  EXPECT_EQ(two.wcrt_bound, 118 * ms);
  EXPECT_FALSE(two.schedulable);  // 118 > D = 100 ms: a bound, and a miss
  EXPECT_EQ(simulated_wcrt(m, "two"), 118 * ms);
}

// A pipelined chain across two hosts: pub (1 µs, T = 100 ms) on host a, a remote hop of 1 ms,
// sub (62 ms) on host b under hp (26 ms every 70 ms, released 1.001 ms after pub, when sub's
// message arrives). Pipelined: the hop once, the callbacks' 62.001 ms per instance:
//   w(q) = 1 + (q+1)·62.001 + ⌈w/70⌉·26: 115.001, 203.002, 317.003, 405.004, 519.005, 607.006,
//   695.007 <= 700 (ends); R = max(115.001, 103.002, 117.003, 105.004, 119.005, 107.006,
//   95.007) = 119.005 ms (instance 4). Host b then runs Lehoczky's example shifted by 1.001 ms:
//   the simulator shows 1.001 + 118 = 119.001 ms. (Charged per instance, the hop would make the
//   demand 0.63 + 0.371 > 1: no bound.)
TEST(CrosRtBusyPeriod, PipelinedChainPaysItsHopOnce) {
  const Model m = load_model_from_string(R"(chainrt: 1
name: pipelined
hosts:
  - {name: a, cores: 1}
  - {name: b, cores: 1}
executors:
  - {name: xa, host: a, policy: picas, priority: 1, threads: [{name: t0, cores: [0], priority: 1}]}
  - {name: xb, host: b, policy: picas, priority: 1, threads: [{name: t0, cores: [0], priority: 1}]}
  - {name: xh, host: b, policy: picas, priority: 2, threads: [{name: t0, cores: [0], priority: 2}]}
nodes:
  - {name: na, executor: xa}
  - {name: nb, executor: xb}
  - {name: nh, executor: xh}
topics:
  - {name: t, size: 1KiB}
callbacks:
  - {name: pub, kind: timer, node: na, period: 100ms, wcet: 1us, priority: 1, publishes: [t]}
  - {name: sub, kind: subscription, node: nb, topic: t, wcet: 62ms, priority: 2, queue_depth: 10}
  - {name: h0, kind: timer, node: nh, period: 70ms, offset: 1001us, wcet: 26ms, priority: 1}
chains:
  - {name: hp, callbacks: [h0], deadline: 70ms, priority: 2}
  - {name: c, callbacks: [pub, sub], deadline: 100ms, priority: 1}
communication:
  remote: {fixed: 1ms, per_kib: 0ns}
)");
  const auto r = find_analysis("cros-rt")->analyze(m);
  const ChainBound& c = bound_of(r, "c");
  ASSERT_TRUE(c.bounded) << c.reason;
  EXPECT_EQ(c.wcrt_bound, 119'005'000);
  EXPECT_EQ(simulated_wcrt(m, "c"), 119'001'000);
}

// A chain of two callbacks on ONE executor (a: 2 ms timer, b: 3 ms, T = 10 ms) under hp
// (C = 3 ms, T = 7 ms) on the same core: not pipelined, so the later instances released in the
// window are charged as well: w(0) = max(1, ⌈w/10⌉)·5 + ⌈w/7⌉·3 = 2·5 + 3·3 = 19 > 10;
// w(1) = 2·5 + 3·3 = 19 <= 20 (ends); R = max(19, 9) = 19 ms. The simulator: instance 0 ends
// at 11 ms (a 3-5, b 5-7 and 10-11 around hp at 7-10), instance 1 at 19 ms (response 9 ms).
TEST(CrosRtBusyPeriod, LaterInstancesChargedWhenTheChainSharesACpu) {
  const Model m = load_model_from_string(two_executors(R"(topics:
  - {name: tc}
callbacks:
  - {name: h0, kind: timer, node: nhi, period: 7ms, wcet: 3ms, priority: 1}
  - {name: a, kind: timer, node: nlo, period: 10ms, wcet: 2ms, priority: 1, publishes: [tc]}
  - {name: b, kind: subscription, node: nlo, topic: tc, wcet: 3ms, priority: 2}
chains:
  - {name: hp, callbacks: [h0], deadline: 7ms, priority: 2}
  - {name: c, callbacks: [a, b], deadline: 10ms, priority: 1}
)"));
  const auto r = find_analysis("cros-rt")->analyze(m);
  const ChainBound& c = bound_of(r, "c");
  ASSERT_TRUE(c.bounded) << c.reason;
  EXPECT_EQ(c.wcrt_bound, 19 * ms);
  const Duration sim = simulated_wcrt(m, "c");
  EXPECT_EQ(sim, 11 * ms);
  EXPECT_LE(sim, c.wcrt_bound);
}

// Demand above the CPU: the busy period never ends, no bound (and the reason says so).
TEST(CrosRtBusyPeriod, OverloadHasNoBound) {
  const Model m = lehoczky("36ms");
  const auto r = find_analysis("cros-rt")->analyze(m);
  const ChainBound& two = bound_of(r, "two");
  EXPECT_FALSE(two.bounded);
  EXPECT_NE(two.reason.find("busy period never ends"), std::string::npos) << two.reason;
}

// The analysis' pipelined rule relies on a hop delivering its messages in order, as DDS does
// for one writer and one reader. The simulator keeps that order when it draws each message's
// latency from the measurements: with latencies of 0.1 and 9 ms and a message every 1 ms, the
// k-th execution of the subscriber serves the k-th instance (its response is its finish minus
// the k-th timer release), never a later one that overtook it.
TEST(CrosRtBusyPeriod, SampledLatenciesKeepEachHopInOrder) {
  const Model m = load_model_from_string(R"(chainrt: 1
name: in_order
hosts:
  - {name: a, cores: 1}
  - {name: b, cores: 1}
executors:
  - {name: xa, host: a, policy: picas, threads: [{name: t0, cores: [0], priority: 1}]}
  - {name: xb, host: b, policy: picas, threads: [{name: t0, cores: [0], priority: 1}]}
nodes:
  - {name: na, executor: xa}
  - {name: nb, executor: xb}
topics:
  - {name: t, size: 1KiB}
callbacks:
  - {name: pub, kind: timer, node: na, period: 1ms, wcet: 10us, publishes: [t]}
  - {name: sub, kind: subscription, node: nb, topic: t, wcet: 10us, queue_depth: 100}
chains:
  - {name: c, callbacks: [pub, sub], deadline: 1ms}
communication:
  measurements:
    - {kind: remote, size: 1KiB, latency: 100us}
    - {kind: remote, size: 1KiB, latency: 9ms}
)");
  sim::SimOptions so;
  so.duration = 200'000'000;
  so.comm = sim::CommDelay::Sampled;
  so.trace = true;
  const auto r = sim::simulate(m, so);
  const auto pub = m.callback_index("pub"), sub = m.callback_index("sub");
  std::vector<Duration> releases, finishes;
  for (const auto& e : r.trace) {
    if (e.callback == pub) releases.push_back(e.release);
    if (e.callback == sub) finishes.push_back(e.finish);
  }
  const auto& samples = r.chain("c")->samples;
  ASSERT_GT(samples.size(), 150u);
  ASSERT_LE(samples.size(), finishes.size());
  Duration longest_wait = 0;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    EXPECT_EQ(samples[k], finishes[k] - releases[k]) << k;
    longest_wait = std::max(longest_wait, samples[k]);
  }
  EXPECT_GE(longest_wait, 9 * ms);  // both latencies were drawn
}

// CI slice of scripts/cros_rt_soundness: harsh systems of every feature cros-rt applies to,
// with hill climbing; some of the checked bounds must exceed their chain's period (else the
// slice would not exercise the busy period at all).
TEST(CrosRtBusyPeriod, HarnessSliceHasNoCounterexample) {
  std::int64_t beyond = 0;
  for (const char* feature : {"", "shared-cores", "shared-callbacks", "fan-out", "fan-out-tail"}) {
    sim::SoundnessOptions o;
    o.analysis = "cros-rt";
    o.sets = 120;
    o.seed = 1507;
    o.harsh = true;
    o.climb = 4;
    o.feature = feature;
    const auto rep = sim::run_soundness(o);
    EXPECT_GT(rep.chains_checked, 0) << feature;
    EXPECT_TRUE(rep.counterexamples.empty()) << feature << ": " << sim::report_to_json(rep);
    beyond += rep.beyond_period_checked;
  }
  EXPECT_GT(beyond, 0);
}
#endif
