// Tests of sched::Dispatcher, the scheduling state every chainrt backend shares: set-up from the
// policy (incl. ros-default's wait-set order), admission and selection with the running thread
// recorded, the group freed by done(), re-keying, the release grid, chain-instance stamping at a
// source timer, reconfiguration carrying every instance over, and no allocation on the dispatch
// path (chain-instance completion included).
#include <gtest/gtest.h>

#include <vector>

#include "../alloc_counter.hpp"
#include "chainrt/sched/chain_completion.hpp"
#include "chainrt/sched/dispatcher.hpp"
#include "chainrt/sched/setup.hpp"

using namespace chainrt;
using namespace chainrt::sched;

namespace {

CallbackSpec cb(CallbackKind k, GroupId g, std::optional<int> prio = std::nullopt) {
  return CallbackSpec{k, g, prio, kAnyThread};
}
const GroupSpec kMx{GroupType::MutuallyExclusive};
const GroupSpec kRe{GroupType::Reentrant};

// A backend's view of its callbacks: ready flags and deadlines set by the test.
struct Src {
  std::vector<bool> ready_;
  std::vector<Duration> deadline_;
  explicit Src(std::size_t n) : ready_(n, false), deadline_(n, kNoDeadline) {}
  bool ready(CallbackId c) const noexcept { return ready_[c]; }
  Duration deadline(CallbackId c) const noexcept { return deadline_[c]; }
  void release(Dispatcher& d, CallbackId c, Duration dl = kNoDeadline) {
    ready_[c] = true;
    deadline_[c] = dl;
    d.released(c, *this);
  }
};

}  // namespace

TEST(Dispatcher, ImmediateAdmissionRunsByDeadlineAndRecordsTheThread) {
  Dispatcher d(Policy::Edf, {cb(CallbackKind::Timer, 0), cb(CallbackKind::Subscription, 1)}, {kMx, kMx},
               {true, true});
  EXPECT_EQ(d.rule(), AdmissionRule::Immediate);
  EXPECT_FALSE(d.polls());
  Src s(2);
  s.release(d, 0, 300);
  s.release(d, 1, 100);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.take(1, s), 1u);
  EXPECT_EQ(d.running(1), 1u);
  EXPECT_EQ(d.running(0), kNoCallback);
  EXPECT_EQ(d.take(0, s), 0u);
  EXPECT_TRUE(d.idle());
  EXPECT_EQ(d.done(1), 1u);
  EXPECT_EQ(d.running(1), kNoCallback);
  EXPECT_EQ(d.done(1), kNoCallback);  // it ran nothing since
}

TEST(Dispatcher, AMutuallyExclusiveGroupWaitsForDone) {
  Dispatcher d(Policy::FixedPriority, {cb(CallbackKind::Timer, 0, 5), cb(CallbackKind::Timer, 0, 1)}, {kMx},
               {true, true});
  Src s(2);
  s.release(d, 0);
  s.release(d, 1);
  EXPECT_EQ(d.take(0, s), 0u);
  EXPECT_EQ(d.take(1, s), kNoCallback);  // its group runs on thread 0
  EXPECT_TRUE(d.queued(1));
  d.done(0);
  EXPECT_EQ(d.take(1, s), 1u);
}

TEST(Dispatcher, RosDefaultAdmitsAtAPollingPointTimersFirst) {
  Dispatcher d(Policy::RosDefault, {cb(CallbackKind::Subscription, 0), cb(CallbackKind::Timer, 0)}, {kRe},
               {true});
  EXPECT_TRUE(d.polls());
  Src s(2);
  s.release(d, 0);
  EXPECT_EQ(d.size(), 0u);  // waits for a polling point
  EXPECT_EQ(d.waiting(), 1u);
  EXPECT_FALSE(d.idle());
  s.release(d, 1);
  EXPECT_EQ(d.take(0, s), 1u);  // the polling point took both; the timer first
  EXPECT_TRUE(d.admitted());
  // Released now: not seen before the next polling point, which comes only once the readySet
  // is empty.
  d.done(0);
  s.release(d, 1);
  EXPECT_EQ(d.take(0, s), 0u);
  EXPECT_FALSE(d.admitted());
  d.done(0);
  EXPECT_EQ(d.take(0, s), 1u);
}

TEST(Dispatcher, WaitSetSeedOrdersRosDefaultOnly) {
  std::vector<CallbackSpec> specs;
  for (int i = 0; i < 6; ++i) specs.push_back(cb(CallbackKind::Timer, 0));
  std::vector<CallbackSpec> expect = specs;
  wait_set_order(expect, 7);
  Dispatcher seeded(Policy::RosDefault, specs, {kRe}, {true}, 7);
  Dispatcher plain(Policy::RosDefault, specs, {kRe}, {true});
  Dispatcher edf(Policy::Edf, specs, {kRe}, {true}, 7);
  bool permuted = false;
  for (CallbackId c = 0; c < specs.size(); ++c) {
    EXPECT_EQ(seeded.spec(c).wait_set_position, expect[c].wait_set_position);
    EXPECT_EQ(plain.spec(c).wait_set_position, 0u);
    EXPECT_EQ(edf.spec(c).wait_set_position, 0u);
    permuted = permuted || expect[c].wait_set_position != c + 1;
  }
  EXPECT_TRUE(permuted);  // (seed 7 draws an order other than registration's)
  // The order the seeded executor runs six ready timers in is the drawn one.
  Src s(6);
  for (CallbackId c = 0; c < 6; ++c) s.release(seeded, c);
  std::vector<std::uint32_t> positions;
  for (CallbackId c; (c = seeded.take(0, s)) != kNoCallback; seeded.done(0)) {
    s.ready_[c] = false;
    positions.push_back(expect[c].wait_set_position);
  }
  EXPECT_EQ(positions, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Dispatcher, SetUpFromTheModelsExecutor) {
  ExecutorSetup setup;
  setup.policy = Policy::Lame;
  setup.specs = {cb(CallbackKind::Timer, 0, 3)};
  setup.groups = {kMx};
  setup.threads.resize(2);
  setup.threads[1].role = CriticalityClass::BestEffort;
  Dispatcher d(setup);
  EXPECT_EQ(d.policy(), Policy::Lame);
  EXPECT_EQ(d.thread_count(), 2u);
  EXPECT_EQ(d.rule(), AdmissionRule::LameBestEffort);
  EXPECT_THROW(Dispatcher(Policy::Edf, {}, {kMx}, {}), std::invalid_argument);
}

TEST(Dispatcher, RekeyMovesAQueuedInstanceExceptAtPollingPoints) {
  Dispatcher d(Policy::Edf, {cb(CallbackKind::Subscription, 0), cb(CallbackKind::Subscription, 0)}, {kRe},
               {true});
  Src s(2);
  s.release(d, 0, 100);
  s.release(d, 1, 200);
  EXPECT_TRUE(d.rekey(0, 300));
  EXPECT_EQ(d.deadline(0), 300);
  EXPECT_EQ(d.take(0, s), 1u);
  d.done(0);
  EXPECT_FALSE(d.rekey(1, 5));  // not queued

  Dispatcher r(Policy::RosDefault, {cb(CallbackKind::Subscription, 0)}, {kRe}, {true});
  Src t(1);
  t.release(r, 0);
  r.admit_all(t);
  EXPECT_TRUE(r.queued(0));
  EXPECT_FALSE(r.rekey(0, 5));
}

TEST(Dispatcher, ArmsTimersOnTheReleaseGrid) {
  Dispatcher d(Policy::Edf, {cb(CallbackKind::Timer, 0)}, {kRe}, {true});
  d.set_release_epoch(1'000);
  TimerClock c{0, 0, TimerRule::Rcl5};
  const ReleaseGrid::Start on_time = d.arm(c, 30, 100, 500);
  EXPECT_EQ(on_time.first, 1'030);
  EXPECT_EQ(on_time.start_index, 0);
  EXPECT_EQ(c.next, 1'030);
  EXPECT_EQ(c.period, 100);
  EXPECT_EQ(c.rule, TimerRule::Rcl5);  // the clock's rule stays
  const ReleaseGrid::Start late = d.arm(c, 30, 100, 1'031);
  EXPECT_EQ(late.start_index, 1);
  EXPECT_EQ(c.next, d.grid(30, 100).at(1));
}

TEST(TimerSource, StampsInstancesOfTheChainWithTheSmallestDeadline) {
  TimerSource t;
  t.clock = TimerClock{100, 100};
  EXPECT_EQ(t.pending_deadline(), kNoDeadline);  // starts no chain
  t.starts(4, 0);  // no deadline: taken while it has no other
  EXPECT_EQ(t.chain, 4u);
  t.starts(2, 80);
  t.starts(3, 90);
  EXPECT_EQ(t.chain, 2u);
  EXPECT_EQ(t.pending_deadline(), 180);
  const TimerSource::Taken a = t.take(100);
  EXPECT_EQ(a.stamp.release, 100);
  EXPECT_EQ(a.stamp.deadline, 180);
  EXPECT_EQ(a.stamp.chain, 2u);
  EXPECT_EQ(a.stamp.instance, 0u);
  EXPECT_EQ(a.skipped, 0);
  const TimerSource::Taken b = t.take(450);  // late: 300 and 400 are skipped (rcl >= 9)
  EXPECT_EQ(b.stamp.release, 200);
  EXPECT_EQ(b.stamp.instance, 1u);
  EXPECT_EQ(b.skipped, 2);
  EXPECT_EQ(t.clock.next, 500);
}

TEST(Dispatcher, ReconfigurationCarriesQueuedAndRunningInstancesOver) {
  Dispatcher d(Policy::FixedPriority,
               {cb(CallbackKind::Timer, 0, 1), cb(CallbackKind::Subscription, 0, 2), cb(CallbackKind::Timer, 1, 3)},
               {kMx, kMx}, {true, true});
  Src s(3);
  s.release(d, 2);
  EXPECT_EQ(d.take(0, s), 2u);  // running on thread 0
  s.release(d, 0);
  s.release(d, 1, 50);
  // New priorities, and callback 2 moves into group 0 with the others; a spec's kind is kept.
  ReadyQueue fresh = d.rebuilt({cb(CallbackKind::Service, 0, 9), cb(CallbackKind::Timer, 0, 1),
                                cb(CallbackKind::Timer, 0, 3)},
                               {kMx});
  d.install(fresh);
  EXPECT_EQ(fresh.callback_count(), 3u);  // the old queue, to be freed by the caller
  EXPECT_EQ(d.spec(0).kind, CallbackKind::Timer);
  EXPECT_EQ(d.spec(1).kind, CallbackKind::Subscription);
  EXPECT_EQ(d.spec(0).priority, 9);
  EXPECT_TRUE(d.queued(0));
  EXPECT_EQ(d.deadline(1), 50);
  EXPECT_EQ(d.take(1, s), kNoCallback);  // group 0 runs callback 2 on thread 0
  EXPECT_EQ(d.done(0), 2u);
  EXPECT_EQ(d.take(1, s), 0u);           // its new priority comes first
  EXPECT_THROW(d.rebuilt({cb(CallbackKind::Timer, 0)}, {kMx}), std::invalid_argument);
  EXPECT_THROW(d.rebuilt({cb(CallbackKind::Timer, 0), cb(CallbackKind::Timer, 0), cb(CallbackKind::Timer, 1)}, {kMx}),
               std::invalid_argument);
}

TEST(Dispatcher, TheDispatchPathDoesNotAllocate) {
  for (Policy p : {Policy::RosDefault, Policy::Edf, Policy::Lame}) {
    const std::uint64_t at_setup = t_allocs;
    Dispatcher d(p, {cb(CallbackKind::Timer, 0, 1), cb(CallbackKind::Subscription, 1, 2), cb(CallbackKind::Timer, 1)},
                 {kMx, kRe}, {true, false});
    if (CHAINRT_COUNT_ALLOCATIONS) {
      EXPECT_GT(t_allocs, at_setup);  // (the counter counts)
    }
    Src s(3);
    for (CallbackId c = 0; c < 3; ++c) s.ready_[c] = true;
    const std::uint64_t before = t_allocs;
    for (int round = 0; round < 100; ++round) {
      for (CallbackId c = 0; c < 3; ++c) d.released(c, s);
      d.rekey(1, round);
      for (ThreadId t = 0; t < 2; ++t) d.take(t, s);
      d.admit_all(s);
      for (ThreadId t = 0; t < 2; ++t) d.done(t);
    }
    EXPECT_EQ(t_allocs - before, 0u) << to_string(p);
  }
}

// Chain-instance completion (chain_completion.hpp) on the dispatch path allocates nothing.
TEST(ChainCompletion, CompletionDoesNotAllocate) {
  const std::uint64_t at_setup = t_allocs;
  ChainCompletion cc({ChainCompletion::Chain{0, 100, {1, 2}}, ChainCompletion::Chain{0, 0, {2}}});
  if (CHAINRT_COUNT_ALLOCATIONS) {
    EXPECT_GT(t_allocs, at_setup);  // (the counter counts)
  }
  int n = 0;
  auto done = [&](std::uint32_t, Duration, bool) { ++n; };
  const std::uint64_t before = t_allocs;
  for (std::uint64_t k = 0; k < 1000; ++k) {
    const Stamp s{static_cast<Duration>(k), kNoDeadline, 0, k};
    cc.complete(1, s, s.release + 50, 0, done);
    cc.complete(2, s, s.release + 150, 0, done);
  }
  EXPECT_EQ(t_allocs - before, 0u);
  EXPECT_EQ(n, 2000);
}

TEST(Dispatcher, AResumedCallbackKeepsItsGroupTakenUntilDone) {
  // An executor whose entities changed builds a new Dispatcher while a callback still runs.
  Dispatcher d(Policy::Edf, {cb(CallbackKind::Timer, 0), cb(CallbackKind::Subscription, 0)}, {kMx}, {true, true});
  Src s(2);
  d.resume(1, 0);
  EXPECT_EQ(d.running(1), 0u);
  s.release(d, 1, 10);
  EXPECT_EQ(d.take(0, s), kNoCallback);  // group 0 runs callback 0 on thread 1
  EXPECT_EQ(d.done(1), 0u);
  EXPECT_EQ(d.take(0, s), 1u);
}

TEST(ChainSource, AMessageReleasedChainIsStampedWithoutAClock) {
  ChainSource src;  // e.g. the first subscription of a chain, or a model callback of rclcpp's
  EXPECT_EQ(src.stamp(5).chain, kNoChain);
  src.starts(1, 40);
  const Stamp a = src.stamp(100);
  EXPECT_EQ(a.deadline, 140);
  EXPECT_EQ(a.chain, 1u);
  EXPECT_EQ(src.stamp(200).instance, a.instance + 1);
}
