// Tests of sched::ChainCompletion, the one chain-instance completion rule of every chainrt
// backend: an instance completes exactly once, when its last callback (each leaf of a branching
// chain, once) finishes it, with its end-to-end latency finish - release; the instance of a
// timer starting several chains belongs to each of them; instances released before the
// measurement window are not followed. (That it allocates nothing: test_dispatcher.cpp, which
// counts allocations.)
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "chainrt/sched/chain_completion.hpp"

using namespace chainrt;
using namespace chainrt::sched;

namespace {

struct Done {
  std::uint32_t chain;
  Duration response;
  bool missed;
  bool operator==(const Done&) const = default;
};

Stamp stamp(std::uint32_t chain, std::uint64_t instance, Duration release) {
  Stamp s;
  s.chain = chain;
  s.instance = instance;
  s.release = release;
  return s;
}

}  // namespace

// A chain timer(0) -> filter(1) -> sink(2), D = 5 ms: each instance completes once, at its leaf
// only, in the order the leaf finished them, with finish - release and its miss.
TEST(ChainCompletion, AnInstanceCompletesExactlyOnceInOrderWithItsLatency) {
  ChainCompletion cc({ChainCompletion::Chain{0, 5'000'000, {2}}});
  std::vector<Done> seen;
  auto done = [&](std::uint32_t c, Duration r, bool m) { seen.push_back(Done{c, r, m}); };
  for (std::uint64_t k = 0; k < 4; ++k) {
    const Stamp s = stamp(0, k, static_cast<Duration>(k) * 10'000'000);
    cc.complete(0, s, s.release + 1'000'000, 0, done);  // the source: not a leaf
    cc.complete(1, s, s.release + 2'000'000, 0, done);  // a member: not a leaf
    cc.complete(2, s, s.release + (k == 2 ? 7'000'000 : 3'000'000), 0, done);
  }
  const std::vector<Done> want{{0, 3'000'000, false}, {0, 3'000'000, false}, {0, 7'000'000, true},
                               {0, 3'000'000, false}};
  EXPECT_EQ(seen, want);
  // a stamp of no chain, a chain out of range, a callback outside the numbering: nothing
  cc.complete(2, Stamp{}, 1, 0, done);
  cc.complete(2, stamp(7, 0, 0), 1, 0, done);
  cc.complete(kNoCallback, stamp(0, 9, 0), 1, 0, done);
  EXPECT_EQ(seen.size(), want.size());
}

// The completion rule moved here from the runtime (its assertions unchanged): an instance of a
// branching chain ends when each of its leaves completed it once; a leaf completing twice with
// one instance's stamp (a message taken twice, a repeated instance number) does not end it
// early.
TEST(ChainCompletion, EachLeafCountsOncePerInstance) {
  ChainCompletion cc({ChainCompletion::Chain{0, 0, {1, 2}}});
  std::vector<Duration> responses;
  auto done = [&](std::uint32_t, Duration r, bool) { responses.push_back(r); };
  Stamp k = stamp(0, 7, 1'000);
  cc.complete(1, k, 2'000, 0, done);  // fast leaf
  cc.complete(1, k, 2'500, 0, done);  // fast leaf again, same instance
  EXPECT_TRUE(responses.empty());
  cc.complete(2, k, 4'000, 0, done);  // slow leaf: the instance ends
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0], 3'000);
  cc.complete(2, k, 4'500, 0, done);  // nothing more for this instance
  EXPECT_EQ(responses.size(), 1u);
  Stamp next = k;
  next.instance = 8;
  next.release = 9'000;
  cc.complete(2, next, 10'000, 0, done);
  cc.complete(1, next, 11'000, 0, done);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[1], 2'000);
}

// A timer (0) starting two chains stamps ONE instance with one of them (ChainSource): the
// chain that ends at the other leaf completes with that stamp too; a chain of another source
// that ends at the same leaf does not.
TEST(ChainCompletion, AnInstanceOfASharedSourceBelongsToEachOfItsChains) {
  ChainCompletion cc({ChainCompletion::Chain{0, 0, {1}}, ChainCompletion::Chain{0, 0, {2}},
                      ChainCompletion::Chain{3, 0, {2}}});
  std::vector<std::uint32_t> chains;
  auto done = [&](std::uint32_t c, Duration, bool) { chains.push_back(c); };
  cc.complete(1, stamp(0, 0, 0), 10, 0, done);
  cc.complete(2, stamp(0, 0, 0), 20, 0, done);
  cc.complete(2, stamp(2, 0, 0), 30, 0, done);
  EXPECT_EQ(chains, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_TRUE(cc.is_leaf(1, 2));
  EXPECT_FALSE(cc.is_leaf(1, 1));
}

// Instances released before the measurement window (record_from) are not followed.
TEST(ChainCompletion, InstancesBeforeTheWindowAreNotFollowed) {
  ChainCompletion cc({ChainCompletion::Chain{0, 0, {1}}});
  int n = 0;
  auto done = [&](std::uint32_t, Duration, bool) { ++n; };
  cc.complete(1, stamp(0, 0, 999), 2'000, 1'000, done);
  EXPECT_EQ(n, 0);
  cc.complete(1, stamp(0, 1, 1'000), 2'000, 1'000, done);
  EXPECT_EQ(n, 1);
}
