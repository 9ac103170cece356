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
