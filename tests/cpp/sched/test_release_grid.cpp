// The release grid every chainrt executor arms its timers on (sched/timer.hpp, ReleaseGrid):
// releases at epoch + offset + k·period, a late arming starts at a later grid index on the same
// grid, the run's epoch from the environment or shared by the process.
#include <gtest/gtest.h>

#include <cstdlib>

#include "chainrt/sched/timer.hpp"

using namespace chainrt;
using namespace chainrt::sched;

TEST(ReleaseGrid, ArmedBeforeTheEpochStartsAtIndexZero) {
  const ReleaseGrid g{1'000, 30, 100};
  EXPECT_EQ(g.start(0).first, 1'030);
  EXPECT_EQ(g.start(0).start_index, 0);
  EXPECT_EQ(g.start(1'030).start_index, 0);  // exactly on its first release: still index 0
  EXPECT_EQ(g.at(3), 1'330);
  EXPECT_EQ(g.index_at_or_before(1'329), 2);
  EXPECT_EQ(g.index_at_or_before(1'029), -1);
}

TEST(ReleaseGrid, ALateArmingKeepsTheGridAndSaysSo) {
  const ReleaseGrid g{1'000, 30, 100};
  const auto st = g.start(1'031);  // one ns after the first release
  EXPECT_EQ(st.first, 1'130);
  EXPECT_EQ(st.start_index, 1);
  // Two timers of one period armed at different times keep their offset difference.
  const ReleaseGrid a{1'000, 0, 100}, b{1'000, 40, 100};
  EXPECT_EQ(b.start(5'555).first - a.start(5'555).first, 40);
  // The timer clock follows the grid through rcl's overrun rule.
  TimerClock c = g.clock(1'031);
  EXPECT_EQ(c.next, 1'130);
  const auto tk = c.take(1'345);  // late: 1'230 and 1'330 are skipped
  EXPECT_EQ(tk.released, 1'130);
  EXPECT_EQ(tk.skipped, 2);
  EXPECT_EQ(c.next, 1'430);
  EXPECT_EQ(c.next, g.at(4));
}

TEST(ReleaseGrid, TheEpochComesFromTheEnvironmentElseTheProcess) {
  bool env = true;
  unsetenv(kReleaseEpochEnv);
  const Duration first = release_epoch(5'000'000'000, &env);
  EXPECT_FALSE(env);
  EXPECT_EQ(release_epoch(9'000'000'000, &env), first);  // shared by the process
  EXPECT_EQ(first, 5'000'000'000 + kReleaseEpochMargin);  // (the process's first call: no other test calls it)
  setenv(kReleaseEpochEnv, "123456789", 1);
  EXPECT_EQ(release_epoch(1, &env), 123'456'789);
  EXPECT_TRUE(env);
  setenv(kReleaseEpochEnv, "not a number", 1);
  EXPECT_EQ(release_epoch(1, &env), first);
  EXPECT_FALSE(env);
  unsetenv(kReleaseEpochEnv);
}

TEST(ReleaseJitter, RecordsTheLatenessOfReleases) {
  ReleaseJitter j;
  j.record(30);
  j.record(-5);  // (never early: 0)
  j.record(10);
  EXPECT_EQ(j.max, 30);
  EXPECT_EQ(j.sum, 40);
  EXPECT_EQ(j.releases, 3);
}

// A period given as a rate or a fraction (ExactPeriod): release k at epoch + offset + round(k·P),
// each instant rounded once. An accumulated whole-ns period (33,333,333 ns for 1/30 s) falls
// behind by 1/3 ns a release: 333,333 ns after 10^6 releases; the exact grid never does.
TEST(ReleaseGrid, AFractionalPeriodNeverDrifts) {
  const ExactPeriod p30{100'000'000, 3};  // 1/30 s
  const ReleaseGrid g{1'000, 7, p30};
  EXPECT_EQ(g.at(0), 1'007);
  EXPECT_EQ(g.at(1), 1'007 + 33'333'333);
  EXPECT_EQ(g.at(2), 1'007 + 66'666'667);  // 66,666,666.67 rounds up
  EXPECT_EQ(g.at(3), 1'007 + 100'000'000);
  EXPECT_EQ(g.at(1'000'000), 1'007 + 33'333'333'333'333);  // 10^6 releases: 33,333.333 s, exact
  EXPECT_EQ(g.at(999'999) - 1'007, 33'333'300'000'000);      // round(999,999 · 10^8 / 3): .0 exactly
  // The clock released by rcl's rule runs on the same instants, one release at a time.
  TimerClock c = g.clock(0);
  for (int k = 0; k < 1'000'000; ++k) {
    ASSERT_EQ(c.next, g.at(k)) << "release " << k;
    c.take(c.next);
  }
  EXPECT_EQ(c.next, g.at(1'000'000));
  EXPECT_EQ(c.next - 1'007, 33'333'333'333'333);
  // every interval is 33,333,333 or 33,333,334 ns
  for (int k = 0; k < 30; ++k) EXPECT_LE(g.at(k + 1) - g.at(k) - 33'333'333, 1) << k;
}

TEST(ReleaseGrid, ThirtyHertzAndFiveHertzCoincideAtEverySixthRelease) {
  const ReleaseGrid cam{5'000, 0, ExactPeriod{100'000'000, 3}}, log{5'000, 0, ExactPeriod{200'000'000}};
  TimerClock a = cam.clock(0), b = log.clock(0);
  for (int m = 0; m < 200'000; ++m) {  // 200,000 logger releases: 11 h
    ASSERT_EQ(a.next, b.next) << "logger release " << m;
    for (int i = 0; i < 6; ++i) a.take(a.next);
    b.take(b.next);
  }
  // the whole-ns period 33,333,333 ns would have slipped 2 ns against the logger every 200 ms
  const ReleaseGrid whole{5'000, 0, 33'333'333};
  EXPECT_NE(whole.at(6), log.at(1));
}

TEST(ReleaseGrid, AFractionalPeriodKeepsRclsOverrunRuleAndALateStart) {
  const ReleaseGrid g{0, 0, ExactPeriod{100'000'000, 3}};
  // armed late: the first grid instant at or after the arming
  EXPECT_EQ(g.start(33'333'333).start_index, 1);
  EXPECT_EQ(g.start(33'333'334).start_index, 2);
  EXPECT_EQ(g.start(33'333'334).first, 66'666'667);
  EXPECT_EQ(g.index_at_or_before(66'666'666), 1);
  EXPECT_EQ(g.index_at_or_before(66'666'667), 2);
  // taken 2.5 periods late: Rcl9 skips to the first instant strictly after now
  TimerClock c = g.clock(0);
  const auto tk = c.take(83'333'333);
  EXPECT_EQ(tk.released, 0);
  EXPECT_EQ(tk.skipped, 2);
  EXPECT_EQ(c.next, g.at(3));
  // taken exactly on a grid instant: Rcl9 skips it, Rcl5 releases it at once
  TimerClock r9 = g.clock(0, TimerRule::Rcl9), r5 = g.clock(0, TimerRule::Rcl5);
  r9.take(66'666'667);
  r5.take(66'666'667);
  EXPECT_EQ(r9.next, g.at(3));
  EXPECT_EQ(r5.next, g.at(2));
}
