// The reference system's 4096-byte sample: layout, appending entries (cap 63), merging input
// histories (first input wins), dropped samples from sequence gaps, the prime count.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "chainrt/reference_system/sample.hpp"

using namespace chainrt::reference_system;

TEST(Sample, UpstreamLayout) {
  EXPECT_EQ(sizeof(Sample), 4096u);
  EXPECT_EQ(offsetof(Sample, stats), 8u);
  EXPECT_EQ(offsetof(Sample, data), 8u + 63u * 64u);
  EXPECT_EQ(offsetof(StatsEntry, sequence_number), 8u);
  EXPECT_EQ(offsetof(StatsEntry, dropped_samples), 12u);
  EXPECT_EQ(offsetof(StatsEntry, node_name), 16u);
}

TEST(Sample, AppendStopsAt63Entries) {
  Sample s{};
  for (int i = 0; i < 70; ++i) {
    const bool added = append_entry(s, "N" + std::to_string(i), 1000u + i, i, 0);
    EXPECT_EQ(added, i < 63);
  }
  EXPECT_EQ(s.size, 63u);
  EXPECT_EQ(name_of(s.stats[62]), "N62");
  EXPECT_EQ(s.stats[62].timestamp, 1062u);
}

TEST(Sample, LongNamesAreTruncatedAndTerminated) {
  Sample s{};
  append_entry(s, std::string(100, 'x'), 1, 1, 0);
  EXPECT_EQ(name_of(s.stats[0]).size(), kNodeNameLength - 1);
}

TEST(Sample, MergeKeepsFirstInputsEntries) {
  Sample a{}, b{}, out{};
  append_entry(a, "FrontLidarDriver", 10, 1, 0);
  append_entry(a, "Common", 20, 5, 0);
  append_entry(b, "RearLidarDriver", 11, 1, 0);
  append_entry(b, "Common", 99, 6, 0);
  merge_history(out, a);
  merge_history(out, b);
  append_entry(out, "Fusion", 30, 0, 0);
  ASSERT_EQ(out.size, 4u);
  EXPECT_EQ(name_of(out.stats[0]), "FrontLidarDriver");
  EXPECT_EQ(name_of(out.stats[1]), "Common");
  EXPECT_EQ(out.stats[1].timestamp, 20u);  // input 0 wins
  EXPECT_EQ(name_of(out.stats[2]), "RearLidarDriver");
  EXPECT_EQ(name_of(out.stats[3]), "Fusion");
  EXPECT_EQ(last_entry(out)->timestamp, 30u);
  EXPECT_EQ(find(out, "RearLidarDriver")->timestamp, 11u);
  EXPECT_EQ(find(out, "Nobody"), nullptr);
}

TEST(Sample, DroppedSamplesFromSequenceGaps) {
  SequenceTracker t;
  EXPECT_EQ(t.update(5), 0u);   // first sample: nothing known before it
  EXPECT_EQ(t.update(6), 0u);
  EXPECT_EQ(t.update(9), 2u);   // 7 and 8 missed
  EXPECT_EQ(t.update(9), 0u);   // same sample again: no gap
  EXPECT_EQ(t.update(4), 0u);   // older sample: no gap, the newest stays
  EXPECT_EQ(t.update(10), 0u);
  EXPECT_EQ(*t.last(), 10u);
}

TEST(Sample, PrimeCount) {
  EXPECT_EQ(count_primes(2), 0);
  EXPECT_EQ(count_primes(3), 1);
  EXPECT_EQ(count_primes(100), 25);
  EXPECT_EQ(count_primes(4096), 564);
}
