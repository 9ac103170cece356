// Tests of the readyQueue Ω and Algorithm 1 (EDF ready-queue paper Sec. IV-A): orderings,
// one instance per callback, the skipped-groups rule, affinity masks, and a randomized
// comparison against a brute-force scan of Algorithm 1.
#include <gtest/gtest.h>

#include <random>

#include "chainrt/sched/ready_queue.hpp"
#include "chainrt/sched/timer.hpp"

using namespace chainrt;
using namespace chainrt::sched;

namespace {
CallbackSpec cb(CallbackKind k, GroupId g, std::optional<int> prio = std::nullopt, AffinityMask a = kAnyThread) {
  return CallbackSpec{k, g, prio, a};
}
const GroupSpec kMx{GroupType::MutuallyExclusive};
const GroupSpec kRe{GroupType::Reentrant};
}  // namespace

TEST(ReadyQueue, RosDefaultOrdersByKindThenRegistration) {
  ReadyQueue q(Policy::RosDefault,
               {cb(CallbackKind::Client, 0), cb(CallbackKind::Subscription, 0), cb(CallbackKind::Timer, 0),
                cb(CallbackKind::Subscription, 0), cb(CallbackKind::Service, 0)},
               {kRe}, 1);
  for (CallbackId c : {0u, 1u, 2u, 3u, 4u}) q.push(c);
  std::vector<CallbackId> order;
  for (CallbackId c; (c = q.select(0)) != kNoCallback;) order.push_back(c);
  EXPECT_EQ(order, (std::vector<CallbackId>{2, 1, 3, 4, 0}));
}

TEST(ReadyQueue, EdfByAbsoluteDeadlineNoDeadlineLast) {
  ReadyQueue q(Policy::Edf, {cb(CallbackKind::Timer, 0), cb(CallbackKind::Subscription, 0), cb(CallbackKind::Timer, 0)},
               {kRe}, 1);
  q.push(0, 300);
  q.push(1, 100);
  q.push(2);  // no deadline
  EXPECT_EQ(q.select(0), 1u);
  EXPECT_EQ(q.select(0), 0u);
  EXPECT_EQ(q.select(0), 2u);
}

TEST(ReadyQueue, FixedPriorityLargerFirstTiesByRegistration) {
  ReadyQueue q(Policy::FixedPriority,
               {cb(CallbackKind::Subscription, 0, 5), cb(CallbackKind::Timer, 0, 9), cb(CallbackKind::Timer, 0),
                cb(CallbackKind::Subscription, 0, 9)},
               {kRe}, 1);
  for (CallbackId c : {3u, 2u, 1u, 0u}) q.push(c);
  EXPECT_EQ(q.select(0), 1u);
  EXPECT_EQ(q.select(0), 3u);
  EXPECT_EQ(q.select(0), 0u);
  EXPECT_EQ(q.select(0), 2u);
}

TEST(ReadyQueue, MixedDeadlineCallbacksFirst) {
  ReadyQueue q(Policy::Mixed,
               {cb(CallbackKind::Timer, 0, 99), cb(CallbackKind::Subscription, 0), cb(CallbackKind::Timer, 0),
                cb(CallbackKind::Subscription, 0, 1)},
               {kRe}, 1);
  q.push(0);
  q.push(1, 1'000'000);
  q.push(2);
  q.push(3);
  EXPECT_EQ(q.select(0), 1u);  // deadline
  EXPECT_EQ(q.select(0), 0u);  // priority 99
  EXPECT_EQ(q.select(0), 3u);  // priority 1
  EXPECT_EQ(q.select(0), 2u);  // neither
}

TEST(ReadyQueue, OneQueuedInstancePerCallback) {
  ReadyQueue q(Policy::Edf, {cb(CallbackKind::Timer, 0)}, {kMx}, 1);
  EXPECT_TRUE(q.push(0, 50));
  EXPECT_FALSE(q.push(0, 10));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.deadline(0), 50);
}

TEST(ReadyQueue, RunningGroupSkippedAndCallbacksStayQueued) {
  // Table II: c1 runs on thread 0; c2, c3 of the same group must not be taken by thread 1,
  // and when c1 completes, c2 (the more urgent) is taken, never c3.
  ReadyQueue q(Policy::FixedPriority,
               {cb(CallbackKind::Timer, 0, 3), cb(CallbackKind::Timer, 0, 2), cb(CallbackKind::Timer, 0, 1),
                cb(CallbackKind::Timer, 1, 0)},
               {kMx, kMx}, 2);
  for (CallbackId c : {0u, 1u, 2u}) q.push(c);
  EXPECT_EQ(q.select(0), 0u);
  EXPECT_EQ(q.select(1), kNoCallback);
  EXPECT_EQ(q.size(), 2u);
  q.push(3);
  EXPECT_EQ(q.select(1), 3u);  // another group is not blocked
  q.complete(0);
  EXPECT_EQ(q.select(1), 1u);
  EXPECT_EQ(q.select(0), kNoCallback);
  q.complete(1);
  EXPECT_EQ(q.select(0), 2u);
}

TEST(ReadyQueue, ReentrantGroupRunsConcurrently) {
  ReadyQueue q(Policy::RosDefault, {cb(CallbackKind::Timer, 0), cb(CallbackKind::Timer, 0)}, {kRe}, 2);
  q.push(0);
  q.push(1);
  EXPECT_EQ(q.select(0), 0u);
  EXPECT_EQ(q.select(1), 1u);
}

TEST(ReadyQueue, AffinityRestrictsThreads) {
  ReadyQueue q(Policy::Lame,
               {cb(CallbackKind::Subscription, 0, 10, 0b01), cb(CallbackKind::Timer, 1, 0, 0b10),
                cb(CallbackKind::Subscription, 2, 0, 0b10)},
               {kMx, kMx, kMx}, 2);
  q.push(2);
  q.push(1);
  q.push(0);
  EXPECT_EQ(q.peek(1), 1u);  // BE thread: first in default order (timer before subscription)
  EXPECT_EQ(q.select(0), 0u);
  EXPECT_EQ(q.select(0), kNoCallback);
  EXPECT_EQ(q.select(1), 1u);
  EXPECT_EQ(q.select(1), 2u);
}

TEST(ReadyQueue, RemoveAndClear) {
  ReadyQueue q(Policy::RosDefault, {cb(CallbackKind::Timer, 0), cb(CallbackKind::Timer, 0)}, {kMx}, 1);
  q.push(0);
  q.push(1);
  EXPECT_TRUE(q.remove(0));
  EXPECT_FALSE(q.remove(0));
  EXPECT_EQ(q.select(0), 1u);
  q.complete(1);
  q.push(0);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.select(0), kNoCallback);
}

// Randomized: the queue's decision equals a brute-force Algorithm 1 scan of the queued set in
// key order (skip running mutually exclusive groups and foreign affinities).
TEST(ReadyQueue, MatchesBruteForceAlgorithm1) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 24), groups = 1 + static_cast<int>(rng() % 5), threads = 1 + static_cast<int>(rng() % 4);
    std::vector<GroupSpec> gs;
    for (int g = 0; g < groups; ++g) gs.push_back(rng() % 3 ? kMx : kRe);
    std::vector<CallbackSpec> cs;
    for (int c = 0; c < n; ++c) {
      AffinityMask a = rng() % 3 ? kAnyThread : (rng() % ((1u << threads) - 1)) + 1;
      std::optional<int> prio;
      if (rng() % 4) prio = static_cast<int>(rng() % 5);
      cs.push_back(cb(static_cast<CallbackKind>(rng() % 4), static_cast<GroupId>(rng() % groups), prio, a));
    }
    const Policy pol = static_cast<Policy>(rng() % 6);
    ReadyQueue q(pol, cs, gs, threads);
    std::vector<int> running(groups, 0);
    std::vector<bool> queued(n, false);
    std::vector<Duration> dl(n, kNoDeadline);
    std::vector<CallbackId> in_flight;
    for (int step = 0; step < 300; ++step) {
      const int op = static_cast<int>(rng() % 4);
      if (op == 0) {
        const CallbackId c = static_cast<CallbackId>(rng() % n);
        const Duration d = rng() % 2 ? static_cast<Duration>(rng() % 50) : kNoDeadline;
        const bool pushed = q.push(c, d);
        ASSERT_EQ(pushed, !queued[c]);
        if (pushed) queued[c] = true, dl[c] = d;
      } else if (op == 1 && !in_flight.empty()) {
        const std::size_t i = rng() % in_flight.size();
        const CallbackId c = in_flight[i];
        in_flight.erase(in_flight.begin() + static_cast<long>(i));
        q.complete(c);
        --running[cs[c].group];
      } else if (op == 2) {
        const CallbackId c = static_cast<CallbackId>(rng() % n);
        ASSERT_EQ(q.remove(c), static_cast<bool>(queued[c]));
        queued[c] = false;
      } else {
        const ThreadId t = static_cast<ThreadId>(rng() % threads);
        CallbackId expect = kNoCallback;
        Key best;
        for (int c = 0; c < n; ++c) {
          if (!queued[c]) continue;
          if (gs[cs[c].group].type == GroupType::MutuallyExclusive && running[cs[c].group]) continue;
          if (!(cs[c].affinity >> t & 1)) continue;
          const Key k = key_of(pol, cs[c], static_cast<CallbackId>(c), dl[c]);
          if (expect == kNoCallback || k < best) expect = static_cast<CallbackId>(c), best = k;
        }
        ASSERT_EQ(q.select(t), expect) << "trial " << trial << " step " << step;
        if (expect != kNoCallback) {
          queued[expect] = false;
          ++running[cs[expect].group];
          in_flight.push_back(expect);
        }
      }
    }
  }
}

TEST(TimerClock, OverrunSkipsToNextFutureRelease) {
  TimerClock t{100, 0};
  auto a = t.take(0);
  EXPECT_EQ(a.released, 0);
  EXPECT_EQ(t.next, 100);
  auto b = t.take(250);  // blocked for more than a period
  EXPECT_EQ(b.released, 100);
  EXPECT_EQ(b.skipped, 1);
  EXPECT_EQ(t.next, 300);
  auto c = t.take(300);
  EXPECT_EQ(c.skipped, 0);
  EXPECT_EQ(t.next, 400);
}

// rcl >= 9 (Jazzy, Kilted): rcl_timer_call moves the next call time strictly past now, so a
// timer taken exactly on a grid instant after an overrun skips that instant too.
TEST(TimerClock, ExactGridAfterOverrunIsSkippedAsInRcl9) {
  TimerClock t{100, 0};
  t.take(0);
  auto b = t.take(200);  // one period late, exactly on the grid instant 200
  EXPECT_EQ(b.released, 100);
  EXPECT_EQ(b.skipped, 1);       // 200 is skipped: the next release is after now
  EXPECT_EQ(t.next, 300);
  EXPECT_FALSE(t.ready(200));
  auto c = t.take(500);          // two periods late, on the grid: 400 and 500 are skipped
  EXPECT_EQ(c.released, 300);
  EXPECT_EQ(c.skipped, 2);
  EXPECT_EQ(t.next, 600);
  auto d = t.take(601);          // one ns past the grid: 700 is the first instant after
  EXPECT_EQ(d.released, 600);
  EXPECT_EQ(d.skipped, 0);
  EXPECT_EQ(t.next, 700);
  EXPECT_FALSE(t.ready(699));
  TimerClock z{0, 5};            // a zero period is always ready (rcl: next = now)
  z.take(7);
  EXPECT_TRUE(z.ready(7));
}

// rcl 5 and 6 (Humble, Iron): only grid instants strictly before now are skipped; a timer
// taken exactly on a grid instant after an overrun is ready again at once.
TEST(TimerClock, ExactGridAfterOverrunIsReadyAtOnceAsInRcl5) {
  TimerClock t{100, 0, TimerRule::Rcl5};
  t.take(0);
  auto b = t.take(200);
  EXPECT_EQ(b.released, 100);
  EXPECT_EQ(b.skipped, 0);
  EXPECT_EQ(t.next, 200);
  EXPECT_TRUE(t.ready(200));
  auto c = t.take(500);          // three periods late, on the grid: 300 and 400 are skipped
  EXPECT_EQ(c.released, 200);
  EXPECT_EQ(c.skipped, 2);
  EXPECT_EQ(t.next, 500);
  EXPECT_TRUE(t.ready(500));
  auto d = t.take(501);
  EXPECT_EQ(d.released, 500);
  EXPECT_EQ(d.skipped, 0);
  EXPECT_EQ(t.next, 600);
  EXPECT_FALSE(t.ready(599));
}
