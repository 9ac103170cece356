// Threads on cores: LaME thread classes with affinity and SCHED_DEADLINE-like reservations
// (LaME Sec. 4.1), PiCAS executors with executor priorities sharing a core (PiCAS Sec. II),
// and the reference system's Fusion node (two subscriptions of one node publishing one topic).
#include <gtest/gtest.h>

#include <string>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {
constexpr Duration ms = 1'000'000;
}

TEST(Lame, AffinityKeepsChainsOnTheirThreadClassAndReservationsLimitSupply) {
  const Model m = load_model_from_string(R"(
name: lame_small
hosts: [{name: h, cores: 1}]
executors:
  - name: e
    host: h
    policy: lame
    thread_classes:
      - {name: rt, kind: rt, cores: [0], reservation: {budget: 6ms, period: 10ms}}
      - {name: be, kind: be, cores: [0], reservation: {budget: 2ms, period: 10ms}}
nodes: [{name: n, executor: e}, {name: nb, executor: e}]
callbacks:
  - {name: hi, kind: timer, node: n, period: 20ms, wcet: 4ms, priority: 10, affinity: [rt]}
  - {name: lo, kind: timer, node: nb, period: 100ms, wcet: 5ms, affinity: [be]}
chains:
  - {name: H, callbacks: [hi], deadline: 20ms, class: rt, criticality: 1}
  - {name: L, callbacks: [lo], deadline: 100ms, class: be}
)");
  sim::SimOptions o;
  o.duration = 1000 * ms;
  o.trace = true;
  const auto r = sim::simulate(m, o);
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].name, "rt/0");
  EXPECT_EQ(r.threads[1].name, "be/0");
  for (const auto& e : r.trace) EXPECT_EQ(e.thread, e.callback == 0 ? 0u : 1u);
  // hi: 4 ms of work inside a 6 ms budget per 10 ms: never throttled, 4 ms response.
  EXPECT_EQ(r.chain("H")->wcrt, 4 * ms);
  // lo: 5 ms of work at 2 ms per 10 ms of budget: runs in three replenishment periods.
  EXPECT_GE(r.chain("L")->bcrt, 20 * ms);
  EXPECT_LE(r.chain("L")->wcrt, 30 * ms);
}

// Two single-threaded executors pinned to one core: `hi` runs F (fast, every 10 ms from 1 ms),
// `lo` runs S (slow: 30 ms every 100 ms); `hi_sched`/`lo_sched` are their executors' extra fields.
static Model shared_core(const std::string& hi_sched, const std::string& lo_sched, const std::string& fast_wcet) {
  return load_model_from_string(R"(
name: picas_small
hosts: [{name: h, cores: 1}]
executors:
  - {name: hi, host: h, policy: picas, )" + hi_sched + R"(threads: [{name: t, cores: [0]}]}
  - {name: lo, host: h, policy: picas, )" + lo_sched + R"(threads: [{name: t, cores: [0]}]}
nodes: [{name: nh, executor: hi}, {name: nl, executor: lo}]
callbacks:
  - {name: fast, kind: timer, node: nh, period: 10ms, offset: 1ms, wcet: )" + fast_wcet + R"(, priority: 5}
  - {name: slow, kind: timer, node: nl, period: 100ms, wcet: 30ms, priority: 5}
chains:
  - {name: F, callbacks: [fast], deadline: 10ms}
  - {name: S, callbacks: [slow], deadline: 100ms}
)");
}

// One second of simulated time, every callback at its WCET.
static sim::SimResult one_second(const Model& m) {
  sim::SimOptions o;
  o.duration = 1000 * ms;
  return sim::simulate(m, o);
}

TEST(Picas, ExecutorPriorityPreemptsOnASharedCore) {
  // The high-priority executor's thread preempts the low one (SCHED_FIFO by executor priority).
  const Model m = shared_core("priority: 90, ", "priority: 10, ", "2ms");
  const auto r = one_second(m);
  EXPECT_EQ(r.chain("F")->wcrt, 2 * ms);  // never blocked by the 30 ms callback
  // slow: 30 ms of work from 0, preempted by fast at 1, 11, 21 and 31 ms (2 ms each)
  EXPECT_EQ(r.chain("S")->wcrt, 38 * ms);
}

// A thread's SCHED_FIFO priority is one rule (model/facts.hpp, thread_fifo_priority), which the
// analyses call and every executor and the simulator take through sched::make_setup: its own,
// else its executor's (1..99); none at executor priority 0 or with a reservation.
TEST(Picas, ThreadsTakeTheirFifoPriorityFromTheOneRule) {
  const Model m = load_model_from_string(R"(
name: fifo_rule
hosts: [{name: h, cores: 1}]
executors:
  - {name: a, host: h, policy: fp, priority: 7, threads: [{name: t0}, {name: t1, priority: 9}, {name: t2, reservation: {budget: 1ms, period: 10ms}}]}
  - {name: b, host: h, policy: fp, priority: 0, threads: [{name: t0}]}
  - {name: c, host: h, policy: lame, priority: 5, thread_classes: [{name: rt, kind: rt, cores: [0]}, {name: be, kind: be, priority: 2}]}
  - {name: d, host: h, policy: fp, threads: [{name: t0}]}
nodes: [{name: n, executor: a}]
callbacks:
  - {name: x, kind: timer, node: n, period: 10ms, wcet: 1ms}
chains: [{name: c, callbacks: [x], deadline: 10ms}]
)");
  const std::vector<std::vector<std::optional<int>>> want = {{7, 9, std::nullopt}, {std::nullopt}, {5, 2}, {std::nullopt}};
  for (std::size_t x = 0; x < m.executors.size(); ++x) {
    const Executor& e = m.executors[x];
    const sched::ExecutorSetup s = sched::make_setup(m, x);
    ASSERT_EQ(s.threads.size(), e.threads.size());
    for (std::size_t t = 0; t < e.threads.size(); ++t) {
      EXPECT_EQ(thread_fifo_priority(e, e.threads[t]), want[x][t]) << e.name << "/" << e.threads[t].name;
      EXPECT_EQ(s.threads[t].fifo_priority, want[x][t]) << e.name << "/" << e.threads[t].name;
    }
    // N plain threads instead of the model's: the executor's default
    for (const sched::ThreadSpec& ts : sched::make_setup(m, x, std::nullopt, 2).threads)
      EXPECT_EQ(ts.fifo_priority, thread_fifo_priority(e, Thread{})) << e.name;
  }
}

TEST(Picas, ExecutorPriorityZeroIsNoFifoPriority) {
  // Executor priority 0 gives its thread no SCHED_FIFO priority: it runs as a SCHED_OTHER thread,
  // here after the earlier one in model order (the simulator's order among such threads), so
  // the plain executor's 5 ms callback is never delayed by the 30 ms one.
  const Model m = shared_core("", "priority: 0, ", "5ms");
  const auto r = one_second(m);
  EXPECT_EQ(r.chain("F")->wcrt, 5 * ms);
}

TEST(Picas, EqualFifoPrioritiesNeverPreemptEachOther) {
  // Two executors' threads at one SCHED_FIFO priority on one core: the kernel never preempts for
  // an equal priority, so the 30 ms callback runs to its end although the other thread has work.
  const Model m = shared_core("priority: 10, ", "priority: 10, ", "2ms");
  const auto r = one_second(m);
  EXPECT_EQ(r.chain("S")->wcrt, 30 * ms);
  EXPECT_GE(r.chain("F")->wcrt, 29 * ms + 2 * ms);  // released at 1 ms, started at 30 ms
}

TEST(Picas, ThreadsOfOneExecutorOnOneCoreRunAsOne) {
  // An executor's two threads (one reentrant group) at one SCHED_FIFO priority on one core: the
  // second never gets the CPU while the first runs a callback, so it takes no work then; the
  // first takes the next callback itself (as the runtime's threads do). z, released at 2 ms,
  // waits for x (1-11 ms): one thread's order, not a second thread that preempts the first.
  const Model m = load_model_from_string(R"(
name: one_core_two_threads
hosts: [{name: h, cores: 1}]
executors:
  - {name: e, host: h, policy: fp, priority: 10, threads: [{name: t0, cores: [0]}, {name: t1, cores: [0]}]}
nodes: [{name: n, executor: e}]
callback_groups: [{name: n/any, type: reentrant, node: n}]
callbacks:
  - {name: x, kind: timer, node: n, group: n/any, period: 100ms, wcet: 10ms, priority: 1}
  - {name: y, kind: timer, node: n, group: n/any, period: 100ms, wcet: 1ms, priority: 2}
  - {name: z, kind: timer, node: n, group: n/any, period: 100ms, offset: 2ms, wcet: 1ms, priority: 9}
chains:
  - {name: X, callbacks: [x], deadline: 100ms}
  - {name: Y, callbacks: [y], deadline: 100ms}
  - {name: Z, callbacks: [z], deadline: 100ms}
)");
  const auto r = one_second(m);
  EXPECT_EQ(r.chain("Y")->wcrt, 1 * ms);
  EXPECT_EQ(r.chain("X")->wcrt, 11 * ms);
  EXPECT_EQ(r.chain("Z")->wcrt, 10 * ms);
}

TEST(ReferenceSystem, FusionNodePublishesOnceItsInputsAreCached) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
  sim::SimOptions o;
  o.duration = 10'000 * ms;
  const auto r = sim::simulate(m, o);
  for (const char* name : {"hot_path_front", "hot_path_rear"}) {
    const auto* c = r.chain(name);
    ASSERT_NE(c, nullptr);
    EXPECT_GE(c->instances, 99) << name;  // both lidar instances reach the end of the hot path
    EXPECT_EQ(c->drops, 0) << name;
  }
}

// LaME Sec. 4.1: RT threads refresh the wait set before every selection, BE threads only when
// it is empty. A BE release therefore stays invisible to an idle BE thread while the wait set
// holds RT work it cannot take, until an RT thread refreshes.
TEST(Lame, BestEffortThreadsRefreshOnlyWhenTheWaitSetIsEmpty) {
  const std::string yaml = R"(
name: lame_refresh
hosts: [{name: h, cores: 2}]
executors:
  - name: e
    host: h
    policy: lame
    thread_classes:
      - {name: rt, kind: rt, cores: [0]}
      - {name: be, kind: be, cores: [1]}
nodes: [{name: n, executor: e}, {name: nb, executor: e}]
callbacks:
  - {name: r1, kind: timer, node: n, period: 20ms, wcet: 8ms, priority: 10, affinity: [rt]}
  - {name: r2, kind: timer, node: n, period: 20ms, wcet: 2ms, priority: 5, affinity: [rt]}
  - {name: b, kind: timer, node: nb, period: 20ms, offset: 1ms, wcet: 1ms, affinity: [be]}
chains:
  - {name: B, callbacks: [b], deadline: 20ms, class: be}
)";
  const Model m = load_model_from_string(yaml);
  sim::SimOptions o;
  o.duration = 200 * ms;
  const auto lame = sim::simulate(m, o);
  EXPECT_EQ(lame.chain("B")->wcrt, 8 * ms);  // seen only when r1 completes at 8 ms
  o.policy = Policy::FixedPriority;          // same threads and affinity, no BE refresh rule
  const auto fp = sim::simulate(m, o);
  EXPECT_EQ(fp.chain("B")->wcrt, 1 * ms);
}
