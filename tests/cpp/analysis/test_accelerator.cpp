// Shared accelerators in the analyses (analysis/src/accelerator.hpp): each term against a value
// computed by hand, the plan the chain engine analyses, and the end-to-end bounds of a small
// system in both access modes.
#include <gtest/gtest.h>

#include "../../../analysis/src/accelerator.hpp"
#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "../accelerator_scenario.hpp"

using namespace chainrt;
using namespace chainrt::detail;

namespace {
constexpr Duration ms = 1'000'000;
}

TEST(AcceleratorTerms, LowerPriorityBlockingIsTheLargestOne) {
  EXPECT_EQ(server_lp_blocking({3, 7, 5}), 7);
  EXPECT_EQ(server_lp_blocking({}), 0);
}

TEST(AcceleratorTerms, RequestsInAWindow) {
  // another chain of higher priority: ⌈w/T⌉ + 1
  EXPECT_EQ(requests_in_window(0, 10, 0, Urgency::Higher), 1);
  EXPECT_EQ(requests_in_window(1, 10, 0, Urgency::Higher), 2);
  EXPECT_EQ(requests_in_window(10, 10, 0, Urgency::Higher), 2);
  EXPECT_EQ(requests_in_window(11, 10, 0, Urgency::Higher), 3);
  // the requesting chain's later instances: ⌈w/T⌉
  EXPECT_EQ(requests_in_window(0, 10, 0, Urgency::HigherOwn), 0);
  EXPECT_EQ(requests_in_window(10, 10, 0, Urgency::HigherOwn), 1);
  EXPECT_EQ(requests_in_window(11, 10, 0, Urgency::HigherOwn), 2);
  // equal priority: the one queued before, whatever the wait; none of the own chain
  EXPECT_EQ(requests_in_window(1000, 10, 0, Urgency::Equal), 1);
  EXPECT_EQ(requests_in_window(1000, 10, 0, Urgency::EqualOwn), 0);
  // release jitter J widens the window: ⌈(w + J)/T⌉ (+ 1)
  EXPECT_EQ(requests_in_window(0, 10, 3, Urgency::Higher), 2);
  EXPECT_EQ(requests_in_window(8, 10, 3, Urgency::Higher), 3);
  EXPECT_EQ(requests_in_window(8, 10, 3, Urgency::HigherOwn), 2);
  EXPECT_EQ(requests_in_window(1000, 10, 3, Urgency::Equal), 1);
}

TEST(AcceleratorTerms, HigherPriorityRequests) {
  // (⌈15/10⌉ + 1)·4 + ⌈15/20⌉·2 + 1·3 = 12 + 2 + 3
  EXPECT_EQ(server_hp_requests(15, {{4, 10, 0, Urgency::Higher}, {2, 20, 0, Urgency::HigherOwn}, {3, 5, 0, Urgency::Equal}}), 17);
}

TEST(AcceleratorTerms, WaitingTimeIsTheLeastFixedPoint) {
  // w = 5 + n(w)·4 with n = ⌈w/100⌉ + 1: 0 -> 9 -> 13 -> 13
  EXPECT_EQ(server_waiting_time(5, {{4, 100, 0, Urgency::Higher}}, 1000), 13);
  // nothing of higher priority: the lower-priority request in progress alone
  EXPECT_EQ(server_waiting_time(30, {}, 1000), 30);
  // 5 + 60 = 65, then 5 + 2·60 = 125 > 100: no bound within the limit
  EXPECT_FALSE(server_waiting_time(5, {{60, 100, 0, Urgency::Higher}}, 100).has_value());
}

TEST(AcceleratorTerms, BlockPreemptiveResponseCountsHigherRequestsUntilItFinishes) {
  // R = 3 + 1 + 10 = 14, then 14 + (⌈14/100⌉ + 1)·4 = 22 (fixed)
  EXPECT_EQ(block_preemptive_response(3, 1, 10, {{4, 100, 0, Urgency::Higher}}, 1000), 22);
  EXPECT_EQ(block_preemptive_response(3, 1, 10, {}, 1000), 14);
  EXPECT_FALSE(block_preemptive_response(3, 1, 10, {{60, 100, 0, Urgency::Higher}}, 100).has_value());
}

TEST(AcceleratorTerms, ResponsesAndFifoBlocking) {
  EXPECT_EQ(server_request_response(13, 2, 10), 25);
  // other threads' largest segments 8 and 5 (the requesting thread's 3 left out)
  EXPECT_EQ(fifo_blocking({3, 8, 5}, 3), 13);
  EXPECT_EQ(direct_request_response(13, 4), 17);
  EXPECT_EQ(suspension_oblivious_wcet(5, {17, 3}), 25);
}

namespace {

// A high-priority chain H and two low-priority chains L1, L2, each on a single-threaded
// executor on its own core, all using one accelerator (`access`), with the server on core 3.
Model three_chains(const std::string& access, const std::string& block = "") {
  const std::string acc = access == "server" ? "{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms}"
                          : access == "block"
                              ? "{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms, preemption: block}"
                              : "{name: gpu, access: direct}";
  return load_model_from_string(chainrt::test::three_executors_with(acc) + R"(callbacks:
  - {name: hi, kind: timer, node: nh, period: 100ms, wcet: 2ms, priority: 30,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 10ms}]}
  - {name: lo1, kind: timer, node: n1, period: 200ms, wcet: 2ms, priority: 20,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 30ms)" + block + R"(}]}
  - {name: lo2, kind: timer, node: n2, period: 200ms, wcet: 2ms, priority: 10,
     accelerator_segments: [{accelerator: gpu, after: 1ms, copy_in: 5ms, kernel: 20ms, copy_out: 5ms)" + block + R"(}]}
chains:
  - {name: H, callbacks: [hi]}
  - {name: L1, callbacks: [lo1]}
  - {name: L2, callbacks: [lo2]}
)");
}

}  // namespace

TEST(AcceleratorPlan, ServerRequestsWaitForOneLowerPriorityRequest) {
  const AcceleratorPlan plan = plan_accelerators(three_chains("server"));
  ASSERT_TRUE(plan.refused.empty()) << plan.refused;
  auto hop = [&](const std::string& to) {
    const Chain& c = plan.model.chain(to == "hi#1" ? "H" : to == "lo1#1" ? "L1" : "L2");
    return plan.cost(c.hops.at(0));
  };
  // H: at most one of L1's or L2's requests in progress (ε + 30 ms), then ε + its own 10 ms.
  EXPECT_EQ(hop("hi#1"), (1 + 30) * ms + 1 * ms + 10 * ms);
  // L1: L2's request in progress (ε + 30) and H's (ε + 10, ⌈w/100 ms⌉ + 1 = 2 of them in w = 53 ms)
  //     w = 31 + 2·11 = 53; response 53 + 1 + 30 = 84 ms
  EXPECT_EQ(hop("lo1#1"), 84 * ms);
  // L2: no lower priority; H's and L1's requests (ε + 10, ε + 30), ⌈w/T⌉ + 1 of each:
  //     w = 11 + 31 = 42, then 2·11 + 2·31 = 84 (fixed); response 84 + 1 + 30 = 115 ms
  EXPECT_EQ(hop("lo2#1"), 115 * ms);
  EXPECT_EQ(plan.requesters, (std::vector<std::string>{"H", "L1", "L2"}));
  // The server's overhead becomes work of a thread at its priority on its core.
  EXPECT_EQ(plan.model.executors.back().threads.at(0).cores, std::vector<int>{3});
  EXPECT_EQ(plan.model.executors.back().threads.at(0).fifo_priority, 90);
}

TEST(AcceleratorPlan, BlockPreemptionBlocksForOneChunkOfLowerPriorityWork) {
  const AcceleratorPlan plan = plan_accelerators(three_chains("block", ", block: 2ms"));
  ASSERT_TRUE(plan.refused.empty()) << plan.refused;
  auto hop = [&](const std::string& chain) { return plan.cost(plan.model.chain(chain).hops.at(0)); };
  // H: one chunk of L1 or L2 in progress — L2's copy-in or copy-out (5 ms) is its longest,
  // with its overhead — then ε + its own 10 ms: 6 + 1 + 10
  EXPECT_EQ(hop("H"), 17 * ms);
  // L1: L2's chunk (ε + 5) + ε + 30, and H's requests (ε + 10) until it finishes:
  //     R = 37, then 37 + 2·11 = 59 (fixed)
  EXPECT_EQ(hop("L1"), 59 * ms);
  // L2: nothing lower; R = ε + 30 = 31, then 31 + 2·11 + 2·31 = 115, then 3 of H's: 126 (fixed) —
  //     the lowest pays for being preempted (115 ms without preemption)
  EXPECT_EQ(hop("L2"), 126 * ms);
  // without a block duration a kernel is one chunk: H waits for L1's whole kernel (ε + 30)
  EXPECT_EQ(plan_accelerators(three_chains("block")).cost(plan.model.chain("H").hops.at(0)), (31 + 1 + 10) * ms);
}

TEST(AcceleratorPlan, DirectCallsBlockTheirThreadBehindEveryOtherThread) {
  const AcceleratorPlan plan = plan_accelerators(three_chains("direct"));
  ASSERT_TRUE(plan.refused.empty()) << plan.refused;
  // hi: CPU 2 ms + FIFO blocking of the two other threads (30 + 30) + its own 10 ms
  EXPECT_EQ(plan.model.callback("hi").wcet, (2 + 60 + 10) * ms);
  EXPECT_EQ(plan.model.callback("lo1").wcet, (2 + 10 + 30 + 30) * ms);
  EXPECT_EQ(plan.model.callback("hi").best_case(), (2 + 10) * ms);
}

TEST(AcceleratorPlan, EndToEndBoundsShowTheInversion) {
  const ResponseTimeAnalysis* a = find_analysis("picas-st");
  const AnalysisResult direct = a->analyze(three_chains("direct"));
  const AnalysisResult server = a->analyze(three_chains("server"));
  const ChainBound* hd = direct.find("H");
  const ChainBound* hs = server.find("H");
  ASSERT_TRUE(hd && hd->bounded) << (hd ? hd->reason : "");
  ASSERT_TRUE(hs && hs->bounded) << (hs ? hs->reason : "");
  // Each chain alone on its core: H's bound is its CPU, the hop and the device response.
  EXPECT_EQ(hd->wcrt_bound, 72 * ms);
  EXPECT_EQ(hs->wcrt_bound, 2 * ms + 42 * ms);
  EXPECT_LT(hs->wcrt_bound, hd->wcrt_bound);
}

TEST(AcceleratorPlan, RefusedWithTheReason) {
  std::string why;
  // a server below an executor thread on its core
  Model m = three_chains("server");
  m.hosts[0].accelerators[0].server_cores = {0};
  m.hosts[0].accelerators[0].server_priority = 30;
  EXPECT_FALSE(find_analysis("picas-st")->applicable(m, &why));
  EXPECT_NE(why.find("must be above every thread on its core"), std::string::npos) << why;
  // the analyses outside the chain engine say which ones do
  EXPECT_FALSE(find_analysis("cros-rt")->applicable(three_chains("server"), &why));
  EXPECT_NE(why.find("fp-mt, picas-st and edf-mt"), std::string::npos) << why;
}
