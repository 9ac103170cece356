// Known-answer tests of the shipped analyses (analysis/src/*.cpp). Every expected number is
// computed by hand from the analysis' equations in the comment above the test.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/comm_fit.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/analysis/supply.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

AnalysisResult run(const std::string& analysis, const Model& m) {
  const ResponseTimeAnalysis* a = find_analysis(analysis);
  EXPECT_NE(a, nullptr) << analysis;
  return a->analyze(m);
}

Duration bound(const AnalysisResult& r, const std::string& chain) {
  const ChainBound* b = r.find(chain);
  EXPECT_NE(b, nullptr) << chain;
  if (!b) return -1;
  EXPECT_TRUE(b->bounded) << r.analysis << " " << chain << ": " << b->reason;
  return b->bounded ? b->wcrt_bound : -1;
}

// One executor with `threads` threads (pinned to cores 0..), policy `policy`; `body` adds
// callbacks and chains.
std::string header(const std::string& policy, int threads, int cores = 4) {
  std::string s = "chainrt: 1\nname: t\nhosts:\n  - {name: h, cores: " + std::to_string(cores) +
                  "}\nexecutors:\n  - name: e\n    host: h\n    policy: " + policy + "\n    threads:\n";
  for (int t = 0; t < threads; ++t)
    s += "      - {name: t" + std::to_string(t) + ", cores: [" + std::to_string(t) + "]}\n";
  return s;
}

Model load(const std::string& yaml) { return load_model_from_string(yaml, "test.yaml"); }

// Chain A: timer a1 (10 ms) -> a2 (20 ms), T = D = 100 ms, alone on one thread.
const char* kOneChain = R"(nodes:
  - {name: n, executor: e}
topics:
  - {name: ta}
callbacks:
  - {name: a1, kind: timer, node: n, period: 100ms, wcet: 10ms, publishes: [ta], priority: 2}
  - {name: a2, kind: subscription, node: n, topic: ta, wcet: 20ms, priority: 3}
chains:
  - {name: A, callbacks: [a1, a2], priority: 1}
)";

// Two single-callback timer chains on one thread: A (10 ms every 100 ms, higher priority) and
// B (20 ms every 200 ms).
const char* kTwoTimers = R"(nodes:
  - {name: n, executor: e}
callback_groups:
  - {name: r, type: reentrant, node: n}
callbacks:
  - {name: a, kind: timer, node: n, group: r, period: 100ms, wcet: 10ms, priority: 2}
  - {name: b, kind: timer, node: n, group: r, period: 200ms, wcet: 20ms, priority: 1}
chains:
  - {name: A, callbacks: [a], priority: 2}
  - {name: B, callbacks: [b], priority: 1}
)";

}  // namespace

TEST(Registry, HasTheSixAnalysesWithPolicies) {
  ASSERT_EQ(analyses().size(), 6u);
  EXPECT_EQ(find_analysis("edf-mt")->policy(), Policy::Edf);
  EXPECT_EQ(find_analysis("fp-mt")->policy(), Policy::FixedPriority);
  EXPECT_EQ(find_analysis("picas-st")->policy(), Policy::Picas);
  EXPECT_EQ(find_analysis("cros-rt")->policy(), Policy::Picas);
  EXPECT_EQ(find_analysis("ros-default-st")->policy(), Policy::RosDefault);
  EXPECT_EQ(find_analysis("sag")->policy(), Policy::Edf);
  EXPECT_EQ(find_analysis("jiang-mt"), nullptr);
  for (const auto* a : analyses()) EXPECT_FALSE(a->summary().empty());
}

// A chain alone: every analysis gives E = 30 ms (edf-mt/fp-mt/picas-st: x = E' + 1 = 10 ms + 1,
// R = x − 1 + e_last; Casini: s = 10 ms + 1, F = s − 1 + C_e; CROS-RT: R = C_i, no comm cost).
TEST(KnownAnswer, OneChainAloneIsItsWcet) {
  for (const char* a : {"edf-mt", "fp-mt", "picas-st", "cros-rt", "ros-default-st"}) {
    Model m = load(header("fp", 1) + kOneChain);
    AnalysisResult r = run(a, m);
    EXPECT_EQ(bound(r, "A"), 30 * ms) << a;
    EXPECT_TRUE(r.schedulable) << a;
    EXPECT_EQ(r.find("A")->slack, 70 * ms);
    EXPECT_EQ(*r.find("A")->bcrt_bound, 30 * ms);  // no bcet: best case = wcet
  }
}

// Two timers on one thread.
//  ros-default-st (Casini): A: s − 1 = rbf_B = 20 ms, R_A = 20 + 10 = 30 ms; B: R_B = 10 + 20 = 30 ms.
//  fp-mt/picas-st: A is blocked once by B (20 ms): R_A = 30 ms; B: x − 1 = W_A(x) = 10 ms, R_B = 30 ms.
//  edf-mt: A: B's job with deadline <= d_A contributes I^EDF = 0, B blocks once: R_A = 30 ms;
//          B: A's jobs could count as interference (min(W, I^EDF) = 10 ms) AND as a blocker
//          (10 ms), but A cannot do more than its workload in the window, W_A(x) = 10 ms:
//          R_B = 10 + 20 = 30 ms.
TEST(KnownAnswer, TwoTimersOnOneThread) {
  Model m = load(header("fp", 1) + kTwoTimers);
  auto d = run("ros-default-st", m);
  EXPECT_EQ(bound(d, "A"), 30 * ms);
  EXPECT_EQ(bound(d, "B"), 30 * ms);
  for (const char* a : {"fp-mt", "picas-st"}) {
    auto r = run(a, m);
    EXPECT_EQ(bound(r, "A"), 30 * ms) << a;
    EXPECT_EQ(bound(r, "B"), 30 * ms) << a;
  }
  auto e = run("edf-mt", m);
  EXPECT_EQ(bound(e, "A"), 30 * ms);
  EXPECT_EQ(bound(e, "B"), 30 * ms);
}

// The CROS-RT two-chain example (examples/two_chains.yaml): high (2.5 + 2.5 ms every 20 ms)
// and low (10 + 10 ms every 200 ms) on ONE single-threaded executor.
//  fp-mt / picas-st: high is blocked once by a low callback (10 ms; at the boundary hi_pub ->
//  hi_sub the thread is free): x = 2.5 + 10 ms + 1, R = 15 ms. low: W_high(x) with R = 15 ms,
//  x − 1 = 10 + 10 ms, R = 30 ms.
//  cros-rt: C_high = 5 ms, B_high = 10 ms (one non-preemptive low callback, the executor is
//  shared so P3 does not hold): 15 ms; low: R = 20 + ⌈(R + 10)/20⌉·5 = 30 ms.
TEST(KnownAnswer, CrosRtTwoChains) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/two_chains.yaml");
  for (const char* a : {"fp-mt", "picas-st", "cros-rt"}) {
    auto r = run(a, m);
    EXPECT_EQ(bound(r, "high"), 15 * ms) << a;
    EXPECT_EQ(bound(r, "low"), 30 * ms) << a;
    EXPECT_TRUE(r.schedulable) << a;
  }
}

// Callback priorities that contradict the chain priorities (outside CROS-RT's P1/P2): chain A
// (priority 2) is one 1 ms callback of priority 1 (T = 20 ms, D = 8 ms, released 1 ns after B);
// chain B (priority 1) is three 3 ms callbacks of priorities 10/11/12 (T = 40 ms). The picas
// executor runs B's callbacks first: the simulator shows A at 10 ms − 1 ns. cros-rt once ranked
// by chain priority and claimed 4 ms (1 ms + one 3 ms blocking), schedulable. Ranked by the
// callback priorities the executor uses, B interferes with A: R_A = 1 + ⌈R_A/40⌉·9 = 10 ms;
// A only blocks B (1 ms, B's callbacks follow each other without delay): R_B = 9 + 1 = 10 ms.
TEST(KnownAnswer, CrosRtRanksByTheCallbackPrioritiesTheExecutorUses) {
  Model m = load(header("picas", 1, 1) + R"(nodes:
  - {name: n, executor: e}
topics:
  - {name: tb0}
  - {name: tb1}
callbacks:
  - {name: a0, kind: timer, node: n, period: 20ms, offset: 1ns, wcet: 1ms, priority: 1}
  - {name: b0, kind: timer, node: n, period: 40ms, wcet: 3ms, priority: 10, publishes: [tb0]}
  - {name: b1, kind: subscription, node: n, topic: tb0, wcet: 3ms, priority: 11, publishes: [tb1]}
  - {name: b2, kind: subscription, node: n, topic: tb1, wcet: 3ms, priority: 12}
chains:
  - {name: A, callbacks: [a0], deadline: 8ms, priority: 2}
  - {name: B, callbacks: [b0, b1, b2], deadline: 40ms, priority: 1}
)");
  for (const char* a : {"cros-rt", "picas-st", "fp-mt"}) {
    auto r = run(a, m);
    EXPECT_GE(bound(r, "A"), 10 * ms) << a;
    EXPECT_FALSE(r.find("A")->schedulable) << a;
    EXPECT_FALSE(r.schedulable) << a;
  }
  auto c = run("cros-rt", m);
  EXPECT_EQ(bound(c, "A"), 10 * ms);
  EXPECT_EQ(bound(c, "B"), 10 * ms);
}

// Table III of the EDF paper (examples/case_study_2.yaml), all three callbacks in one mutually
// exclusive group on two threads. Under non-preemptive scheduling C1 (50 ms, D = 100 ms) really
// can miss: C2 (60 ms) starts 1 ns before C1 is released, C1 completes after 59 + 50 = 109 ms.
// edf-mt: G = B_M1 (60) + the part of C2's job with deadline <= d_1 (≤ 10 ms), x = 71 ms,
// R_1 = 120 ms > D; fp-mt: G = 60 ms, R_1 = 110 ms > T: both say "not schedulable".
TEST(KnownAnswer, EdfPaperTableIII) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/case_study_2.yaml");
  for (const char* a : {"edf-mt", "fp-mt"}) {
    auto r = run(a, m);
    EXPECT_FALSE(r.schedulable) << a;
    EXPECT_FALSE(r.find("C1")->schedulable) << a;
  }
  // The same chains with deadlines that leave room for one group blocking are schedulable:
  // C1 D = T = 150 ms (60 + 50 ≤ 150) ... built in code.
  Model relaxed = m;
  relaxed.chains[0].deadline = 100 * ms;
  relaxed.callbacks[0].wcet = 20 * ms;  // C1: 20 ms; blocking 60 ms: R_1 = 80 ms (fp-mt)
  validate(relaxed);
  auto r = run("fp-mt", relaxed);
  EXPECT_EQ(bound(r, "C1"), 80 * ms);
}

// Boundary: utilisation exactly 1 on one thread (two 50 ms timers every 100 ms).
// Casini: R_A = 50 + 50 = 100 ms = D (slack 0, schedulable); R_B likewise.
TEST(Boundary, UtilisationExactlyOne) {
  std::string body = R"(nodes:
  - {name: n, executor: e}
callbacks:
  - {name: a, kind: timer, node: n, period: 100ms, wcet: 50ms, priority: 2}
  - {name: b, kind: timer, node: n, period: 100ms, wcet: 50ms, priority: 1}
chains:
  - {name: A, callbacks: [a], priority: 2}
  - {name: B, callbacks: [b], priority: 1}
)";
  Model m = load(header("ros-default", 1) + body);
  auto r = run("ros-default-st", m);
  EXPECT_EQ(bound(r, "A"), 100 * ms);
  EXPECT_EQ(bound(r, "B"), 100 * ms);
  EXPECT_EQ(r.find("A")->slack, 0);
  EXPECT_TRUE(r.schedulable);
  // fp-mt: A is blocked once by B: 100 ms, schedulable with slack 0.
  auto f = run("fp-mt", m);
  EXPECT_EQ(bound(f, "A"), 100 * ms);
  EXPECT_TRUE(f.find("A")->schedulable);
}

// Boundary: equal deadlines (EDF ties count as interference both ways). Two one-callback
// chains, 10 ms each, T = D = 100 ms, one thread: each is delayed by the other once, as
// interference or blocking of its one job (min(I + L, W) = W = 10 ms): R = 10 + 10 = 20 ms,
// what a tie broken against it gives. (Both callbacks are in node n's default mutually exclusive
// group; on one thread the group never delays anything the thread does not, so Eq. 10's B_g is
// not charged on top.)
TEST(Boundary, EqualDeadlinesEdf) {
  std::string body = R"(nodes:
  - {name: n, executor: e}
callbacks:
  - {name: a, kind: timer, node: n, period: 100ms, wcet: 10ms}
  - {name: b, kind: timer, node: n, period: 100ms, wcet: 10ms}
chains:
  - {name: A, callbacks: [a]}
  - {name: B, callbacks: [b]}
)";
  Model m = load(header("edf", 1) + body);
  auto r = run("edf-mt", m);
  EXPECT_EQ(bound(r, "A"), 20 * ms);
  EXPECT_EQ(bound(r, "B"), 20 * ms);
}

// Boundary: one group shared by every callback, m = 4 threads: the group serialises all
// work. Three one-callback chains of 10 ms (T = D = 100 ms) in group g: for chain A (fp,
// highest priority) G = B_g = 10 ms: R = 20 ms; for the lowest, C: B_g = 10 ms plus the higher
// members' work W(x) = 10 ms each: x − 1 = 30 ms, R = 40 ms.
TEST(Boundary, GroupSharedByAllCallbacks) {
  std::string body = R"(nodes:
  - {name: n, executor: e}
callback_groups:
  - {name: g, type: mutually_exclusive, node: n}
callbacks:
  - {name: a, kind: timer, node: n, group: g, period: 100ms, wcet: 10ms, priority: 3}
  - {name: b, kind: timer, node: n, group: g, period: 100ms, wcet: 10ms, priority: 2}
  - {name: c, kind: timer, node: n, group: g, period: 100ms, wcet: 10ms, priority: 1}
chains:
  - {name: A, callbacks: [a], priority: 3}
  - {name: B, callbacks: [b], priority: 2}
  - {name: C, callbacks: [c], priority: 1}
)";
  Model m = load(header("fp", 4) + body);
  auto r = run("fp-mt", m);
  EXPECT_EQ(bound(r, "A"), 20 * ms);
  EXPECT_EQ(bound(r, "C"), 40 * ms);
  // The paper's Theorem 2 would give C only ⌊Ψ/4⌋ for the two higher members; the serialised
  // worst case (b and a run before c, with c released 1 ns after another member started)
  // is 10 + 10 + 10 + 10 − 1 ns, within our 40 ms.
  EXPECT_GE(bound(r, "C"), 40 * ms - 1);
}

// One single-threaded PiCAS executor: chain C0's head c00 (priority 1, 15 ms) runs, then its
// c01 and c02 (priorities 4 and 7, both >= C4's lowest, 4) run ahead of C4's c40; c01, c02 and
// C4's last callback c42 (priority 8) share node mx's mutually exclusive group. The simulator
// gives C4 68 ms (c00 started just before C4's release: 15 + 21 + 23 + 4 + 4 + 3 less the
// head start). c01 and c02 are ranked below c42 inside the group, yet outrank C4 in the ready
// queue: they are interference, and need an end bound like any other (counted_work).
const char* kGroupMatesAheadOfJ = R"(nodes:
  - {name: mx, executor: e}
  - {name: n0, executor: e}
  - {name: n1, executor: e}
  - {name: n4, executor: e}
topics: [{name: t01}, {name: t02}, {name: t03}, {name: t04}, {name: t11}, {name: t41}, {name: t42}]
callbacks:
  - {name: c00, kind: timer, node: mx, period: 128ms, wcet: 15ms, priority: 1, publishes: [t01]}
  - {name: c01, kind: subscription, node: mx, topic: t01, wcet: 21ms, priority: 4, publishes: [t02]}
  - {name: c02, kind: subscription, node: mx, topic: t02, wcet: 23ms, priority: 7, publishes: [t03]}
  - {name: c03, kind: subscription, node: n0, topic: t03, wcet: 9ms, priority: 2, publishes: [t04]}
  - {name: c04, kind: subscription, node: mx, topic: t04, wcet: 1ms, priority: 3}
  - {name: c40, kind: timer, node: n4, period: 105ms, wcet: 4ms, priority: 4, publishes: [t41]}
  - {name: c41, kind: subscription, node: n4, topic: t41, wcet: 4ms, priority: 7, publishes: [t42]}
  - {name: c42, kind: subscription, node: mx, topic: t42, wcet: 3ms, priority: 8}
)";

// With chain C1 (c10: 17 ms every 161 ms, priority 3; c11 in mx, priority 1) C0 has no bound
// within its period (every callback on the thread outranks its head), so its work has no end
// bound; c01 and c02 must then make C4 unbounded too. (They were charged as one blocking of
// work without an end bound: 4 + 4 + 23 (B_g of mx) + 23 (the largest blocker) + 3 = 57 ms,
// which the simulator beats with 68 ms.)
TEST(PicasSt, GroupMatesThatOutrankInTheQueueNeedAnEndBound) {
  const std::string c1 = R"(  - {name: c10, kind: timer, node: n1, period: 161ms, wcet: 17ms, priority: 3, publishes: [t11]}
  - {name: c11, kind: subscription, node: mx, topic: t11, wcet: 2ms, priority: 1}
chains:
  - {name: C0, callbacks: [c00, c01, c02, c03, c04], priority: 3}
  - {name: C1, callbacks: [c10, c11], priority: 1}
  - {name: C4, callbacks: [c40, c41, c42], priority: 3}
)";
  Model m = load(header("picas", 1) + kGroupMatesAheadOfJ + c1);
  auto r = run("picas-st", m);
  ASSERT_NE(r.find("C0"), nullptr);
  EXPECT_FALSE(r.find("C0")->bounded);
  ASSERT_NE(r.find("C4"), nullptr);
  EXPECT_FALSE(r.find("C4")->bounded) << r.find("C4")->wcrt_bound;
}

// Without C1, C0 is bounded and C4 charged c01 and c02 as interference: E' = 8 ms (c40, c41),
// Ψ = 44 ms (c01 + c02 of C0's one instance in the window: x + R_0 − C_0 = 67 + 91 − 69 < 128)
// + 15 ms (c00, the largest lower-priority callback, blocking at C4's release; on one thread
// nothing lower-priority can be running at a callback boundary) = 59 ms, x = 8 + 59 + 1 = 68 ms,
// R = x − 1 + e_last = 70 ms (the simulator: 69 ms). The group mx adds nothing on one thread:
// Eq. 10's B_g (23 ms) on top made C4 unbounded (> 105 ms).
TEST(PicasSt, GroupOnOneThreadIsChargedAsTheThreadsWork) {
  const std::string chains = R"(chains:
  - {name: C0, callbacks: [c00, c01, c02, c03, c04], priority: 3}
  - {name: C4, callbacks: [c40, c41, c42], priority: 3}
)";
  Model m = load(header("picas", 1) + kGroupMatesAheadOfJ + chains);
  auto r = run("picas-st", m);
  EXPECT_EQ(bound(r, "C4"), 70 * ms);
}

// Boundary: a chain of one callback on four threads with nothing else: R = C.
TEST(Boundary, OneCallbackChain) {
  std::string body = R"(nodes:
  - {name: n, executor: e}
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 7ms}
chains:
  - {name: A, callbacks: [a]}
)";
  Model m = load(header("edf", 4) + body);
  EXPECT_EQ(bound(run("edf-mt", m), "A"), 7 * ms);
  EXPECT_EQ(bound(run("fp-mt", m), "A"), 7 * ms);
}

// Reservations: one thread with budget 5 ms every 10 ms supplies nothing for 2(P − Q) = 10 ms.
// The chain a1 (10 ms) -> a2 (20 ms): E'_w = sbf⁻¹(10 ms) = 10 + 10 + 5 = ... computed from the
// staircase: sbf⁻¹(x) = 2(P − Q) + ⌊(x−1)/Q⌋·P + r.
TEST(Supply, PeriodicResourceStaircase) {
  Supply s{Reservation{5 * ms, 10 * ms}};
  EXPECT_EQ(s.sbf(10 * ms), 0);
  EXPECT_EQ(s.sbf(12 * ms), 2 * ms);
  EXPECT_EQ(s.sbf(15 * ms), 5 * ms);
  EXPECT_EQ(s.sbf(20 * ms), 5 * ms);
  EXPECT_EQ(s.sbf(25 * ms), 10 * ms);
  EXPECT_EQ(s.sbf_inverse(5 * ms), 15 * ms);
  EXPECT_EQ(s.sbf_inverse(10 * ms), 25 * ms);
  EXPECT_EQ(s.sbf_inverse(6 * ms), 21 * ms);
  for (Duration d = 0; d < 60 * ms; d += 250'000) {
    EXPECT_LE(s.lsbf(d), s.sbf(d));
    EXPECT_GE(s.sbf(s.sbf_inverse(s.sbf(d))), s.sbf(d));
  }
  Supply dedicated;
  EXPECT_EQ(dedicated.sbf(7), 7);
  EXPECT_EQ(dedicated.sbf_inverse(7), 7);
}

// fp-mt on a reservation (Q = 5 ms, P = 10 ms): the one chain alone, a1 = 10 ms then a2 = 20 ms.
// Supply form: E'_w = sbf⁻¹(10 ms) = 2·5 + 1·10 + 5 = 25 ms; the least x with sbf(x) > 25 ms is
// 60 ms + 1 ns (sbf is flat at 25 ms on [55, 60] ms); R = x − 1 + sbf⁻¹(20 ms) = 60 + 45 = 105 ms.
TEST(Supply, FpMtOnAReservation) {
  std::string yaml = "chainrt: 1\nname: t\nhosts:\n  - {name: h, cores: 1}\nexecutors:\n  - name: e\n    host: h\n"
                     "    policy: fp\n    threads:\n      - {name: t0, cores: [0], reservation: {budget: 5ms, period: 10ms}}\n";
  std::string body = kOneChain;
  // period 100 ms -> raise it so that the bound fits: 200 ms.
  body.replace(body.find("period: 100ms"), 13, "period: 200ms");
  Model m = load(yaml + body);
  auto r = run("fp-mt", m);
  EXPECT_EQ(bound(r, "A"), 105 * ms);
}

// The same single-threaded chain on a 5 ms / 10 ms reservation: cros-rt's recurrence has no
// supply term (it answered the dedicated-core 30 ms, but 30 ms of work takes at least 55 ms on
// a 5 ms / 10 ms reservation), so it does not apply; the supply-aware picas-st and ros-default-st bound it (105 ms as fp-mt above:
// one chain alone, the same start-time argument).
TEST(Supply, CrosRtDoesNotApplyToReservations) {
  std::string yaml = "chainrt: 1\nname: t\nhosts:\n  - {name: h, cores: 1}\nexecutors:\n  - name: e\n    host: h\n"
                     "    policy: picas\n    threads:\n      - {name: t0, cores: [0], reservation: {budget: 5ms, period: 10ms}}\n";
  std::string body = kOneChain;
  body.replace(body.find("period: 100ms"), 13, "period: 200ms");
  Model m = load(yaml + body);
  std::string why;
  EXPECT_FALSE(find_analysis("cros-rt")->applicable(m, &why));
  EXPECT_NE(why.find("reservation"), std::string::npos) << why;
  EXPECT_FALSE(run("cros-rt", m).find("A")->bounded);
  EXPECT_EQ(bound(run("picas-st", m), "A"), 105 * ms);
  // Without the reservation cros-rt applies again: C = 30 ms alone on its core.
  Model d = load(header("picas", 1) + body);
  EXPECT_EQ(bound(run("cros-rt", d), "A"), 30 * ms);
}

TEST(CommFit, LeastSquaresRaisedToCoverEverySample) {
  // latency = 100 us + 10 us/KiB exactly, plus one sample 5 us above the line.
  std::vector<CommMeasurement> ms_;
  for (Bytes kib : {1, 2, 4, 8, 16}) ms_.push_back({CommKind::Remote, kib * 1024, 100'000 + 10'000 * kib});
  ms_.push_back({CommKind::Remote, 3 * 1024, 130'000 + 5'000});
  auto f = fit_comm_cost(ms_, CommKind::Remote);
  ASSERT_TRUE(f.has_value());
  for (const auto& m : ms_) EXPECT_GE(f->cost.cost(m.size), m.latency);
  EXPECT_NEAR(static_cast<double>(f->cost.per_kib), 10'000.0, 600.0);
  EXPECT_FALSE(fit_comm_cost(ms_, CommKind::SameHost).has_value());
  Communication c;
  c.measurements = ms_;
  c.same_host = {7, 0};
  Communication fc = fitted_communication(c);
  EXPECT_EQ(fc.same_host.fixed, 7);
  EXPECT_EQ(fc.remote, f->cost);
}

TEST(Applicability, SaysWhatDoesNotFit) {
  Model m = load(header("ros-default", 2) + kOneChain);
  std::string why;
  EXPECT_FALSE(find_analysis("ros-default-st")->applicable(m, &why));
  EXPECT_NE(why.find("single-threaded"), std::string::npos);
  EXPECT_EQ(default_analysis(m, &why), nullptr);
  EXPECT_NE(why.find("Teper"), std::string::npos);
  auto r = find_analysis("ros-default-st")->analyze(m);
  EXPECT_FALSE(r.schedulable);
  EXPECT_FALSE(r.find("A")->bounded);
  Model e = load(header("edf", 2) + kOneChain);
  EXPECT_EQ(default_analysis(e)->name(), "edf-mt");
}

TEST(Results, DoNotModifyTheModelAndAreDeterministic) {
  Model m = load(header("fp", 1) + kTwoTimers);
  const Model copy = m;
  for (const auto* a : analyses()) {
    auto r1 = a->analyze(m);
    auto r2 = a->analyze(m);
    ASSERT_EQ(r1.chains.size(), r2.chains.size());
    for (std::size_t i = 0; i < r1.chains.size(); ++i) {
      EXPECT_EQ(r1.chains[i].wcrt_bound, r2.chains[i].wcrt_bound);
      EXPECT_EQ(r1.chains[i].bounded, r2.chains[i].bounded);
    }
  }
  EXPECT_TRUE(m == copy);
}

// The experiments' fast verdict (bounds stop at the deadline, first miss ends the run) must
// agree with the full analysis on every system.
TEST(Results, FastVerdictAgreesWithTheFullAnalysis) {
  gen::EdfPaperParams p;
  int agree = 0;
  for (std::uint64_t seed = 0; seed < 150; ++seed) {
    p.u_norm = 0.1 + 0.1 * static_cast<double>(seed % 6);
    Model multi = gen::edf_paper_system(p, seed);
    Model part = gen::partition_single_threaded(multi, Policy::Picas);
    for (const auto* a : analyses()) {
      const Model& m = a->name() == "edf-mt" || a->name() == "fp-mt" ? multi : part;
      EXPECT_EQ(a->schedulable(m), a->analyze(m).schedulable) << a->name() << " seed " << seed;
      ++agree;
    }
  }
  EXPECT_EQ(agree, 900);
}

// A branching chain on one executor is analysed to its completion: a (5 ms) fans out to b
// (10 ms) and c (20 ms) on two threads, alone. Completion mode: E' = 35 ms, e_last = 0,
// x = E' + 1, R = 35 ms — at least the longest path (25 ms) and all the work when the branches
// run one after the other. The best case is the path to the last callback in topological order
// (c; BCET = WCET here): 25 ms.
TEST(KnownAnswer, BranchingChainOnOneExecutor) {
  std::string body = R"(nodes:
  - {name: n, executor: e}
callback_groups:
  - {name: r, type: reentrant, node: n}
topics:
  - {name: x}
callbacks:
  - {name: a, kind: timer, node: n, group: r, period: 100ms, wcet: 5ms, publishes: [x]}
  - {name: b, kind: subscription, node: n, group: r, topic: x, wcet: 10ms}
  - {name: c, kind: subscription, node: n, group: r, topic: x, wcet: 20ms}
chains:
  - {name: F, paths: [[a, b], [a, c]]}
)";
  Model m = load(header("edf", 2) + body);
  ASSERT_FALSE(m.chains[0].is_linear());
  for (const char* a : {"edf-mt", "fp-mt"}) {
    auto r = run(a, m);
    EXPECT_EQ(bound(r, "F"), 35 * ms) << a;
    EXPECT_EQ(*r.find("F")->bcrt_bound, 25 * ms) << a;
  }
  std::string why;
  EXPECT_FALSE(find_analysis("ros-default-st")->applicable(m, &why));  // linear chains only
}

namespace {
// Two single-threaded executors on ONE core (PiCAS's executors sharing a core): `hi` runs chain
// H (2 ms every 10 ms), `lo` chain L (5 ms every 50 ms). `hi_fifo` / `lo_fifo` give the threads'
// SCHED_FIFO priorities ("" = none), `hi_exec` an executor priority (the threads' default).
std::string shared_core(const std::string& policy, const std::string& hi_thread, const std::string& lo_thread,
                        const std::string& hi_exec = "") {
  return "chainrt: 1\nname: t\nhosts:\n  - {name: h, cores: 1}\nexecutors:\n  - name: hi\n    host: h\n    policy: " +
         policy + "\n" + hi_exec + "    threads:\n      - {name: th" + hi_thread + "}\n  - name: lo\n    host: h\n    policy: " +
         policy + "\n    threads:\n      - {name: tl" + lo_thread + R"(}
nodes:
  - {name: nh, executor: hi}
  - {name: nl, executor: lo}
callbacks:
  - {name: h, kind: timer, node: nh, period: 10ms, wcet: 2ms, priority: 2}
  - {name: l, kind: timer, node: nl, period: 50ms, wcet: 5ms, priority: 1}
chains:
  - {name: H, callbacks: [h], priority: 2}
  - {name: L, callbacks: [l], priority: 1}
)";
}
}  // namespace

// H's thread outranks L's on their core, so H is alone: 2 ms. L can be preempted by H at any
// time, also while it runs: the bound is taken to L's completion, E' = 5 ms plus H's carry-in
// workload W_H(x) (R_H = 2 ms, T_H = 10 ms): 5 + W_H(x) + 1 <= x at x = 7 ms + 1, R = x − 1 = 7 ms
// (both released at 0: H runs 0–2 ms, L 2–7 ms).
TEST(SharedCore, LowerFifoExecutorSuffersTheHigherOnesWork) {
  for (const char* a : {"picas-st", "fp-mt", "edf-mt"}) {
    Model m = load(shared_core(a == std::string("edf-mt") ? "edf" : "picas", ", cores: [0], priority: 2",
                               ", cores: [0], priority: 1"));
    std::string why;
    ASSERT_TRUE(find_analysis(a)->applicable(m, &why)) << a << ": " << why;
    auto r = run(a, m);
    EXPECT_EQ(bound(r, "H"), 2 * ms) << a;
    EXPECT_EQ(bound(r, "L"), 7 * ms) << a;
  }
}

// Equal priorities (and threads without one) can run ahead of each other: both count the other's
// work. H: 2 + W_L(x) + 1 <= x with W_L up to 5 ms: R_H = 7 ms; L: H's carry-in workload now
// uses R_H = 7 ms, W_H(x) = N·2 + min(2, x + 5 − N·10) with N = ⌊(x + 5)/10⌋: 4 ms at x = 9 ms + 1
// (a late H job's tail plus the next one), R_L = 9 ms.
TEST(SharedCore, EqualOrNoPrioritiesInterfereBothWays) {
  for (const auto& [hi, lo] : {std::pair<std::string, std::string>{", cores: [0], priority: 1", ", cores: [0], priority: 1"},
                               {", cores: [0]", ", cores: [0]"}}) {
    auto r = run("picas-st", load(shared_core("picas", hi, lo)));
    EXPECT_EQ(bound(r, "H"), 7 * ms) << hi;
    EXPECT_EQ(bound(r, "L"), 9 * ms) << hi;
  }
}

// An executor's `priority` is its threads' default SCHED_FIFO priority (model/facts.hpp, as the
// simulator runs it): `hi` with priority 3 and a thread without one still outranks `lo`'s
// FIFO 1 thread. (The analyses once read only the thread's own priority and bounded H by 2 ms
// while a higher-priority executor preempted it: found by the harsh soundness harness.)
TEST(SharedCore, ExecutorPriorityIsTheThreadsDefault) {
  auto r = run("picas-st", load(shared_core("picas", ", cores: [0]", ", cores: [0], priority: 1", "    priority: 3\n")));
  EXPECT_EQ(bound(r, "H"), 2 * ms);
  EXPECT_EQ(bound(r, "L"), 7 * ms);
  auto c = run("cros-rt", load(shared_core("picas", ", cores: [0]", ", cores: [0], priority: 1", "    priority: 3\n")));
  EXPECT_GE(bound(c, "L"), 7 * ms);
}

// Unpinned threads are spread over the host's cores and may land on a pinned thread's core: an
// unpinned thread is not "dedicated" when any thread of its host is pinned.
TEST(SharedCore, UnpinnedThreadNextToAPinnedOneIsNotDedicated) {
  std::string y = shared_core("picas", ", cores: [0], priority: 5", "");
  y.replace(y.find("cores: 1"), 8, "cores: 2");
  auto r = run("picas-st", load(y));
  EXPECT_EQ(bound(r, "L"), 7 * ms);  // without the rule: 5 ms, beaten when both share core 0
}

// Every analysis charges a hop the same cost: the largest of the declared cost, the fitted line
// and the latency measured at the nearest size (model_hop_cost). ros-default-st's split at an
// intra-executor hop once used only the declared cost (1 ms here) while the simulator can replay
// the measured 4 ms. Chain A alone on one thread: a1 (10 ms) -> hop -> a2 (20 ms): 30 + 4 ms.
TEST(HopCost, EveryAnalysisChargesTheMeasuredLatency) {
  Model m = load(header("fp", 1) + kOneChain +
                 "communication:\n  intra_process: {fixed: 1ms}\n  measurements:\n"
                 "    - {kind: intra_process, size: 64B, latency: 4ms}\n");
  for (const char* a : {"edf-mt", "fp-mt", "picas-st", "cros-rt"}) {
    auto r = run(a, m);
    EXPECT_EQ(bound(r, "A"), 34 * ms) << a;
  }
  // Casini's per-part busy windows are coarser (each part also sees the chain's other
  // callbacks), but the split must move by the full 3 ms between the declared and measured cost.
  Model declared = load(header("fp", 1) + kOneChain + "communication:\n  intra_process: {fixed: 1ms}\n");
  EXPECT_EQ(bound(run("ros-default-st", m), "A") - bound(run("ros-default-st", declared), "A"), 3 * ms);
}

// A chain whose data waits at an implicit fusion set (two subscriptions of one node publishing
// the same topic: the member completing the pair works) for another chain's input waits up to
// a period of the other input's phase (the simulator shows the reference system's front hot
// path at 104 ms with random lidar offsets, above the 72 ms the analyses gave without the
// wait): the holistic analyses charge the wait (join_wait.hpp), cros-rt refuses the chain.
TEST(Fusion, ChainsWaitingAtAnImplicitFusionSetAreChargedTheWait) {
  Model m = load(header("picas", 1) + R"(nodes:
  - {name: n, executor: e}
  - {name: fuse, executor: e}
topics:
  - {name: a}
  - {name: b}
  - {name: out}
callbacks:
  - {name: ta, kind: timer, node: n, period: 100ms, wcet: 1ms, publishes: [a], priority: 1}
  - {name: tb, kind: timer, node: n, period: 100ms, wcet: 1ms, publishes: [b], priority: 2}
  - {name: fa, kind: subscription, node: fuse, topic: a, wcet: 1ms, publishes: [out], priority: 3}
  - {name: fb, kind: subscription, node: fuse, topic: b, wcet: 1ms, publishes: [out], priority: 4}
  - {name: sink, kind: subscription, node: n, topic: out, wcet: 1ms, priority: 5}
chains:
  - {name: A, callbacks: [ta, fa, sink], priority: 2}
  - {name: B, callbacks: [tb, fb], priority: 1}
)");
  for (const char* a : {"edf-mt", "fp-mt", "picas-st", "cros-rt", "ros-default-st"}) {
    auto r = find_analysis(a)->analyze(m);
    ASSERT_NE(r.find("A"), nullptr) << a;
    const ChainBound& A = *r.find("A");
    if (std::string(a) == "edf-mt") {  // (`sink` runs for both chains: no unique deadline)
      EXPECT_FALSE(A.bounded);
      continue;
    }
    if (std::string(a) == "cros-rt") {
      EXPECT_FALSE(A.bounded);
      EXPECT_NE(A.reason.find("fusion"), std::string::npos) << a << ": " << A.reason;
      continue;
    }
    ASSERT_TRUE(A.bounded) << a << ": " << A.reason;
    // At least a period of tb (the simulator's side: tests/cpp/sim/test_fusion.cpp).
    EXPECT_GT(A.wcrt_bound, 100 * ms) << a;
  }
}

// An executor's dispatch_overhead o is charged once per job (facts.hpp, charged_wcet): on one
// thread a chain's bound grows by exactly (the jobs in its busy window) x o. kOneChain: a1 and
// a2, two jobs: 30 ms + 2o. kTwoTimers: A waits for one B and runs itself, B likewise: 30 ms + 2o
// (free phases). A three-callback chain alone: 3 jobs, 3o. Checked for every analysis that
// applies (the classic ones and sag).
TEST(DispatchOverhead, GrowsTheBoundByTheJobsInTheBusyWindow) {
  constexpr Duration o = 100'000;
  const std::string three = R"(nodes:
  - {name: n, executor: e}
callbacks:
  - {name: c1, kind: timer, node: n, period: 100ms, wcet: 10ms, publishes: [t1], priority: 2}
  - {name: c2, kind: subscription, node: n, topic: t1, wcet: 5ms, publishes: [t2], priority: 3}
  - {name: c3, kind: subscription, node: n, topic: t2, wcet: 1ms, priority: 4}
chains:
  - {name: C, callbacks: [c1, c2, c3], priority: 1}
)";
  // (policy, body, timers in phase: then sag, which needs guaranteed phases, else the classic
  // analyses, jobs per chain). With both timers released together sag sees A run first: its
  // busy window holds A alone.
  const std::vector<std::tuple<std::string, std::string, bool, std::map<std::string, int>>> cases = {
      {"fp", kOneChain, false, {{"A", 2}}},  {"fp", kTwoTimers, false, {{"A", 2}, {"B", 2}}},
      {"fp", three, false, {{"C", 3}}},      {"edf", kOneChain, false, {{"A", 2}}},
      {"picas", kTwoTimers, false, {{"A", 2}, {"B", 2}}},
      {"fp", kOneChain, true, {{"A", 2}}},   {"picas", three, true, {{"C", 3}}},
      {"edf", kOneChain, true, {{"A", 2}}},  {"picas", kTwoTimers, true, {{"A", 1}, {"B", 2}}}};
  std::set<std::string> checked;
  for (const auto& [policy, free_body, guaranteed, jobs] : cases) {
    std::string body = free_body;
    for (std::size_t at = 0; guaranteed && (at = body.find("kind: timer,", at)) != std::string::npos; at += 12)
      body.insert(at + 12, " phase: guaranteed,");
    const Model plain = load(header(policy, 1) + body);
    Model charged = plain;
    charged.executors[0].dispatch_overhead = o;
    for (const char* a : {"edf-mt", "fp-mt", "picas-st", "cros-rt", "ros-default-st", "sag"}) {
      if ((std::string(a) == "sag") != guaranteed || !find_analysis(a)->applicable(plain, nullptr)) continue;
      const AnalysisResult r0 = run(a, plain), r1 = run(a, charged);
      for (const auto& [chain, n] : jobs) {
        EXPECT_EQ(bound(r1, chain), bound(r0, chain) + n * o) << a << " " << policy << " " << chain;
        checked.insert(a);
      }
    }
  }
  for (const char* a : {"sag", "picas-st", "edf-mt", "fp-mt"}) EXPECT_TRUE(checked.count(a)) << a << " never applied";
}
