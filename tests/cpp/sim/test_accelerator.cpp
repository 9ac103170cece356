// Shared accelerators in the simulator (PiCAS Sec. IV; model/accelerator.hpp): the device runs
// one segment at a time and is never preempted; direct access serves requests first come,
// first served with the calling thread blocked; the server serves them in the order of the
// requesting chain's priority, overtaking queued requests but never the one in service, and
// frees the calling thread meanwhile. Every schedule below is worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "../accelerator_scenario.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

// Three chains on their own executors and cores, one device. L1 asks for the device at 1 ms
// (30 ms of work), L2 at 2 ms (20 ms), H (highest priority) at 4 ms (10 ms). `extra` is added
// to the executors' YAML of L1's executor (another callback sharing its thread).
Model three_chains(const std::string& accelerator, const std::string& extra = "") {
  return load_model_from_string(chainrt::test::three_executors_with(accelerator) + R"(callbacks:
  - {name: hi, kind: timer, node: nh, period: 100ms, offset: 3ms, wcet: 2ms, priority: 30,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 10ms}]}
  - {name: lo1, kind: timer, node: n1, period: 100ms, wcet: 2ms, priority: 20,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 30ms}]}
  - {name: lo2, kind: timer, node: n2, period: 100ms, offset: 1ms, wcet: 2ms, priority: 10,
     accelerator_segments: [{accelerator: gpu, after: 1ms, copy_in: 5ms, kernel: 10ms, copy_out: 5ms}]}
)" + extra + R"(
)" + chainrt::test::kRankedChains);
}

sim::SimResult run(const Model& m, Duration duration = 100 * ms) {
  sim::SimOptions o;
  o.duration = duration;
  o.trace = true;
  return sim::simulate(m, o);
}

// (issued, start, finish) of the device trace, in completion order, with the issuer's name.
struct Use {
  std::string who;
  Duration issued, start, finish;
  bool operator==(const Use&) const = default;
};
std::vector<Use> device_uses(const sim::SimResult& r) {
  std::vector<Use> out;
  for (const auto& e : r.device_trace)
    out.push_back({r.trace_callbacks.empty() ? "" : r.trace_callbacks[e.callback], e.issued, e.start, e.finish});
  return out;
}

}  // namespace

TEST(SimAccelerator, DirectAccessIsFirstComeFirstServed) {
  const auto r = run(three_chains("{name: gpu, access: direct}"));
  // H arrives last and waits for both lower-priority segments: the priority inversion.
  EXPECT_EQ(device_uses(r), (std::vector<Use>{{"lo1", 1 * ms, 1 * ms, 31 * ms},
                                              {"lo2", 2 * ms, 31 * ms, 51 * ms},
                                              {"hi", 4 * ms, 51 * ms, 61 * ms}}));
  // H: released at 3 ms, blocked on the device until 61 ms, then its last 1 ms of CPU.
  EXPECT_EQ(r.chain("H")->wcrt, 59 * ms);
  EXPECT_EQ(r.chain("L1")->wcrt, 32 * ms);
  EXPECT_EQ(r.chain("L2")->wcrt, 51 * ms);
  // the callbacks keep their names: a direct call does not split a callback
  EXPECT_EQ(r.callbacks.size(), 3u);
}

TEST(SimAccelerator, ServerOvertakesQueuedRequestsButNotTheRunningOne) {
  const auto r = run(three_chains("{name: gpu, access: server, priority: 90, cores: [3]}"));
  // lo1's segment is in service when H asks: H waits for it (non-preemptive), then overtakes
  // lo2's request, which was queued before it.
  EXPECT_EQ(device_uses(r), (std::vector<Use>{{"lo1", 1 * ms, 1 * ms, 31 * ms},
                                              {"hi", 4 * ms, 31 * ms, 41 * ms},
                                              {"lo2", 2 * ms, 41 * ms, 61 * ms}}));
  // H's continuation runs its last 1 ms at 41 ms: 42 − 3 = 39 ms instead of 59 ms.
  EXPECT_EQ(r.chain("H")->wcrt, 39 * ms);
  EXPECT_EQ(r.chain("L2")->wcrt, 61 * ms);
  // reported per callback of the model, the continuations folded into theirs
  ASSERT_EQ(r.callbacks.size(), 3u);
  EXPECT_EQ(r.callbacks[0].name, "hi");
  EXPECT_EQ(r.callbacks[0].executions, 1);
  EXPECT_EQ(r.trace_callbacks,
            (std::vector<std::string>{"hi", "hi#1", "lo1", "lo1#1", "lo2", "lo2#1"}));
}

TEST(SimAccelerator, ServerOverheadRunsOnTheServerThreadBeforeEachSegment) {
  const auto r = run(three_chains("{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms}"));
  // each request: 1 ms of the server thread, then the device
  EXPECT_EQ(device_uses(r), (std::vector<Use>{{"lo1", 1 * ms, 2 * ms, 32 * ms},
                                              {"hi", 4 * ms, 33 * ms, 43 * ms},
                                              {"lo2", 2 * ms, 44 * ms, 64 * ms}}));
  EXPECT_EQ(r.chain("H")->wcrt, 41 * ms);
  // the server thread is a thread of its own on core 3
  ASSERT_FALSE(r.threads.empty());
  EXPECT_EQ(r.threads.back().name, "gpu server");
  EXPECT_EQ(r.threads.back().core, 3);
}

TEST(SimAccelerator, BlockPreemptionSwitchesToAMoreUrgentRequestAfterTheBlockInProgress) {
  const Model m = load_model_from_string(chainrt::test::three_executors_with(
                                             "{name: gpu, access: server, priority: 90, cores: [3], preemption: block}") +
                                         R"(callbacks:
  - {name: hi, kind: timer, node: nh, period: 100ms, offset: 3ms, wcet: 2ms, priority: 30,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 10ms}]}
  - {name: lo1, kind: timer, node: n1, period: 100ms, wcet: 2ms, priority: 20,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 30ms, block: 4ms}]}
  - {name: lo2, kind: timer, node: n2, period: 100ms, offset: 1ms, wcet: 2ms, priority: 10,
     accelerator_segments: [{accelerator: gpu, after: 1ms, copy_in: 5ms, kernel: 10ms, copy_out: 5ms, block: 1ms}]}
)" + chainrt::test::kRankedChains);
  const auto r = run(m);
  // lo1's blocks run 1-5, 5-9, ...; H asks at 4 ms and takes the device when the block in
  // progress ends (5 ms), not when lo1's segment does; lo1 resumes at 15 ms with 26 ms left
  // (over lo2, queued since 2 ms: less urgent), then lo2.
  EXPECT_EQ(device_uses(r), (std::vector<Use>{{"hi", 4 * ms, 5 * ms, 15 * ms},
                                              {"lo1", 1 * ms, 1 * ms, 41 * ms},
                                              {"lo2", 2 * ms, 41 * ms, 61 * ms}}));
  EXPECT_EQ(r.chain("H")->wcrt, 13 * ms);  // 16 − 3, against 39 ms without preemption
  EXPECT_EQ(r.chain("L1")->wcrt, 42 * ms);
}

// Under block preemption a request is preempted in service by every higher-priority request
// issued before it finishes: L's 30 ms kernel (1 ms blocks) is interrupted by H's 2 ms kernels
// every 10 ms and ends at 39 ms. A bound that counted H's requests only in L's wait (as without
// preemption: 36 ms) would be beaten; picas-st's counts them until L finishes.
TEST(SimAccelerator, BlockPreemptionBoundCoversARequestPreemptedInService) {
  const Model m = load_model_from_string(chainrt::test::three_executors_with(
                                             "{name: gpu, access: server, priority: 90, cores: [3], preemption: block}") +
                                         R"(callbacks:
  - {name: hi, kind: timer, node: nh, period: 10ms, wcet: 2ms, priority: 30,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 2ms}]}
  - {name: lo1, kind: timer, node: n1, period: 100ms, wcet: 2ms, priority: 20,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 30ms, block: 1ms}]}
chains:
  - {name: H, callbacks: [hi], priority: 3}
  - {name: L1, callbacks: [lo1], priority: 2}
)");
  const auto r = run(m);
  const auto uses = device_uses(r);
  const auto lo = std::find_if(uses.begin(), uses.end(), [](const Use& u) { return u.who == "lo1"; });
  ASSERT_NE(lo, uses.end());
  EXPECT_EQ(lo->start, 3 * ms);   // after H's first kernel (1-3 ms)
  EXPECT_EQ(lo->finish, 39 * ms);  // 30 ms of kernel and three of H's kernels (11, 21, 31 ms)
  EXPECT_EQ(r.chain("L1")->wcrt, 40 * ms);
  const AnalysisResult bound = find_analysis("picas-st")->analyze(m);
  const ChainBound* l = bound.find("L1");
  ASSERT_TRUE(l && l->bounded) << (l ? l->reason : "");
  EXPECT_GE(l->wcrt_bound, r.chain("L1")->wcrt);
  EXPECT_GT(l->wcrt_bound, 1 * ms + 34 * ms + 1 * ms);  // more than the wait-only count gives
}

TEST(SimAccelerator, DirectCallBlocksTheThreadServerCallFreesIt) {
  // Another timer on L1's thread, released at 2 ms (1 ms of CPU): under direct access the
  // thread is blocked in lo1's call until 31 ms; with the server it runs at once.
  const std::string other = "  - {name: other, kind: timer, node: n1, period: 100ms, offset: 2ms, wcet: 1ms, priority: 5}";
  auto finish_of_other = [](const sim::SimResult& r) {
    for (const auto& e : r.trace)
      if ((r.trace_callbacks.empty() ? e.callback == 3 : r.trace_callbacks[e.callback] == "other")) return e.finish;
    return Duration{-1};
  };
  const auto direct = run(three_chains("{name: gpu, access: direct}", other));
  const auto server = run(three_chains("{name: gpu, access: server, priority: 90, cores: [3]}", other));
  EXPECT_EQ(finish_of_other(direct), 33 * ms);  // after lo1's last 1 ms (31..32)
  EXPECT_EQ(finish_of_other(server), 3 * ms);
}

TEST(SimAccelerator, DeviceTimesFollowTheExecutionTimeMode) {
  Model m = three_chains("{name: gpu, access: direct}");
  for (auto& cb : m.callbacks) {
    auto& s = cb.accelerator_segments[0];
    s.kernel_bcet = s.kernel / 2;
    s.copy_in_bcet = 0;
    s.copy_out_bcet = 0;
  }
  sim::SimOptions o;
  o.duration = 100 * ms;
  o.trace = true;
  o.exec = sim::ExecTime::Bcet;
  const auto r = sim::simulate(m, o);
  ASSERT_EQ(r.device_trace.size(), 3u);
  // lo1's kernel at its best case 15 ms (its CPU at the WCET: no BCET given)
  EXPECT_EQ(r.device_trace[0].finish - r.device_trace[0].start, 15 * ms);
  EXPECT_EQ(r.device_trace[1].finish - r.device_trace[1].start, 5 * ms);  // lo2: copies 0, kernel 5
}

TEST(SimAccelerator, TraceJsonListsTheDeviceAndThePieces) {
  const Model m = three_chains("{name: gpu, access: server, priority: 90, cores: [3]}");
  const std::string j = sim::trace_to_json(m, run(m));
  EXPECT_NE(j.find("\"accelerators\": [\"h/gpu\"]"), std::string::npos) << j;
  EXPECT_NE(j.find("\"hi#1\""), std::string::npos);
  EXPECT_NE(j.find("\"device\": [[0, "), std::string::npos);
}
