// Fusion rounds (analysis/src/join_wait.cpp, "fusion rounds"): chains that join at a fusion node
// whose inputs come from timers with guaranteed phases are bounded as one round; known answers
// computed by hand, the fallback to the generic join term where the rounds cannot pair, and
// free phases keeping the generic term.
#include <gtest/gtest.h>

#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

// Two 100 ms timers A and B (1 ms each), one subscription each (2 ms), the fusion node F's two
// members (1 ms, BCET 1 ms) and one callback after it (2 ms), all on one single-threaded picas
// executor: a round is 10 ms of work.
std::string two_lidars(const std::string& phase, Duration offset_b, Duration jitter_b, const std::string& exec_b = "e0") {
  const std::string ph = phase.empty() ? "" : ", phase: " + phase;
  return "chainrt: 1\n"
         "hosts: [{name: h, cores: 2}]\n"
         "executors:\n"
         "  - {name: e0, host: h, policy: picas, threads: [{name: t0, cores: [0], priority: 10}]}\n"
         "  - {name: e1, host: h, policy: picas, threads: [{name: t0, cores: [1], priority: 10}]}\n"
         "nodes: [{name: A, executor: e0}, {name: a1, executor: e0}, {name: B, executor: " + exec_b + "},\n"
         "        {name: b1, executor: " + exec_b + "}, {name: F, executor: e0}, {name: y, executor: e0}]\n"
         "topics: [{name: A}, {name: a1}, {name: B}, {name: b1}, {name: F}]\n"
         "callbacks:\n"
         "  - {name: A/t, kind: timer, node: A, period: 100ms, wcet: 1ms, priority: 5, publishes: [A]" + ph + "}\n"
         "  - {name: a1/s, kind: subscription, node: a1, topic: A, wcet: 2ms, priority: 6, publishes: [a1]}\n"
         "  - {name: B/t, kind: timer, node: B, period: 100ms, wcet: 1ms, priority: 4, publishes: [B]" + ph +
         ", offset: " + std::to_string(offset_b) + "ns, jitter: " + std::to_string(jitter_b) + "ns}\n"
         "  - {name: b1/s, kind: subscription, node: b1, topic: B, wcet: 2ms, priority: 7, publishes: [b1]}\n"
         "  - {name: F/a, kind: subscription, node: F, topic: a1, wcet: 1ms, priority: 8, publishes: [F]}\n"
         "  - {name: F/b, kind: subscription, node: F, topic: b1, wcet: 1ms, priority: 9, publishes: [F]}\n"
         "  - {name: y/s, kind: subscription, node: y, topic: F, wcet: 2ms, priority: 10}\n"
         "chains:\n"
         "  - {name: ca, callbacks: [A/t, a1/s, F/a, y/s], deadline: 100ms}\n"
         "  - {name: cb, callbacks: [B/t, b1/s, F/b, y/s], deadline: 100ms}\n";
}

const ChainBound& bound(const AnalysisResult& r, const std::string& chain) {
  const ChainBound* b = r.find(chain);
  EXPECT_NE(b, nullptr) << chain;
  return *b;
}

AnalysisResult picas(const std::string& yaml) {
  return find_analysis("picas-st")->analyze(load_model_from_string(yaml, "<test>"));
}

}  // namespace

// In phase, one executor: the round is one branching instance analysed to its completion: its
// 10 ms of work, nothing else on the executor (E' = 10 ms, S = 0): x − 1 = 10 ms, for both.
TEST(FusionRounds, InPhaseOnOneExecutorIsTheRoundsWork) {
  const AnalysisResult r = picas(two_lidars("guaranteed", 0, 0));
  EXPECT_EQ(bound(r, "ca").wcrt_bound, 10 * ms) << bound(r, "ca").reason;
  EXPECT_EQ(bound(r, "cb").wcrt_bound, 10 * ms) << bound(r, "cb").reason;
  EXPECT_TRUE(r.schedulable);
}

// B 50 ms later, 5 ms of jitter: the latest release of the round is 55 ms after its origin
// (suspension S = 55 ms): 65 ms from A's release, 65 − 50 = 15 ms from B's.
TEST(FusionRounds, OffsetAndJitterAreTheRoundsReleaseDelays) {
  const AnalysisResult r = picas(two_lidars("guaranteed", 50 * ms, 5 * ms));
  EXPECT_EQ(bound(r, "ca").wcrt_bound, 65 * ms) << bound(r, "ca").reason;
  EXPECT_EQ(bound(r, "cb").wcrt_bound, 15 * ms) << bound(r, "cb").reason;
}

// Free phases (the default) and observed ones keep the generic join term: at least a period.
TEST(FusionRounds, FreeAndObservedPhasesKeepTheGenericTerm) {
  for (const std::string phase : {"", "observed"}) {
    const AnalysisResult r = picas(two_lidars(phase, 0, 0));
    ASSERT_TRUE(bound(r, "ca").bounded) << bound(r, "ca").reason;
    EXPECT_GT(bound(r, "ca").wcrt_bound, 100 * ms) << phase;
  }
}

// B 95 ms after A: a round needs 95 + 5 = 100 ms from its origin, not less than the period, so
// the round has no bound; the analysis runs again without it and gives the generic term — the
// same bounds as with free phases.
TEST(FusionRounds, RoundsThatCannotPairFallBackToTheGenericTerm) {
  const AnalysisResult guaranteed = picas(two_lidars("guaranteed", 95 * ms, 0));
  const AnalysisResult free = picas(two_lidars("", 95 * ms, 0));
  for (const char* c : {"ca", "cb"}) {
    EXPECT_EQ(bound(guaranteed, c).bounded, bound(free, c).bounded) << c;
    EXPECT_EQ(bound(guaranteed, c).wcrt_bound, bound(free, c).wcrt_bound) << c;
  }
}

// Across executors (B's part on its own core) the round is bounded by its paths; tighter than
// the generic term.
TEST(FusionRounds, AcrossExecutorsByPaths) {
  const AnalysisResult r = picas(two_lidars("guaranteed", 0, 0, "e1"));
  const AnalysisResult free = picas(two_lidars("", 0, 0, "e1"));
  ASSERT_TRUE(bound(r, "ca").bounded) << bound(r, "ca").reason;
  EXPECT_LT(bound(r, "ca").wcrt_bound, bound(free, "ca").wcrt_bound);
  EXPECT_GE(bound(r, "cb").wcrt_bound, 6 * ms);  // B, b1, F/b, y in a row at least
}

// An unpinned thread that never waits for a core (analysis/src/workload.cpp,
// unpinned_never_waits): three single-threaded executors at SCHED_FIFO 3/2/1 on two cores, none
// pinned. The middle one has one thread above it — fewer than the cores, and not on its core in
// the simulator's round robin — so its chain is bounded as on a core of its own: 3 ms of work,
// nothing charged for the top executor's 5 ms. Give the bottom one priority 3 too and two threads
// may hold both cores: then the foreign work counts.
TEST(UnpinnedThreads, AThreadThatAlwaysHasACoreIsNotCharged) {
  auto model = [](int bottom) {
    return "chainrt: 1\n"
           "hosts: [{name: h, cores: 2}]\n"
           "executors:\n"
           "  - {name: top, host: h, policy: picas, threads: [{name: t0, priority: 3}]}\n"
           "  - {name: mid, host: h, policy: picas, threads: [{name: t0, priority: 2}]}\n"
           "  - {name: low, host: h, policy: picas, threads: [{name: t0, priority: " + std::to_string(bottom) + "}]}\n"
           "nodes: [{name: a, executor: top}, {name: b, executor: mid}, {name: c, executor: low}]\n"
           "callbacks:\n"
           "  - {name: a/t, kind: timer, node: a, period: 20ms, wcet: 5ms, priority: 1}\n"
           "  - {name: b/t, kind: timer, node: b, period: 20ms, wcet: 3ms, priority: 1}\n"
           "  - {name: c/t, kind: timer, node: c, period: 20ms, wcet: 2ms, priority: 1}\n"
           "chains: [{name: cb, callbacks: [b/t]}]\n";
  };
  const auto* a = find_analysis("picas-st");
  const AnalysisResult alone = a->analyze(load_model_from_string(model(1), "<t>"));
  EXPECT_EQ(bound(alone, "cb").wcrt_bound, 3 * ms) << bound(alone, "cb").reason;
  const AnalysisResult shared = a->analyze(load_model_from_string(model(3), "<t>"));
  ASSERT_TRUE(bound(shared, "cb").bounded) << bound(shared, "cb").reason;
  EXPECT_GT(bound(shared, "cb").wcrt_bound, 3 * ms);
}
