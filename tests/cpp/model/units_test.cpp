// Units of the model format: exact parsing, rejection of what is ambiguous, shortest formatting.
#include <gtest/gtest.h>

#include "chainrt/model/units.hpp"

using namespace chainrt;

TEST(Units, ParsesDurationsExactly) {
  EXPECT_EQ(parse_duration("5ms"), 5'000'000);
  EXPECT_EQ(parse_duration("200us"), 200'000);
  EXPECT_EQ(parse_duration("200µs"), 200'000);
  EXPECT_EQ(parse_duration("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration("2.5ms"), 2'500'000);
  EXPECT_EQ(parse_duration("7ns"), 7);
  EXPECT_EQ(parse_duration(" 3 ms "), 3'000'000);
  EXPECT_EQ(parse_duration("2min"), 120'000'000'000);
  EXPECT_EQ(parse_duration("0.000001ms"), 1);
}

TEST(Units, RejectsAmbiguousDurations) {
  std::string why;
  EXPECT_FALSE(parse_duration("5", &why));
  EXPECT_NE(why.find("no unit"), std::string::npos);
  EXPECT_FALSE(parse_duration("5 hours", &why));
  EXPECT_NE(why.find("unknown unit"), std::string::npos);
  EXPECT_FALSE(parse_duration("1.5ns", &why));
  EXPECT_FALSE(parse_duration("ms", &why));
  EXPECT_FALSE(parse_duration("1.2.3ms", &why));
  EXPECT_FALSE(parse_duration("99999999999999s", &why));
}

TEST(Units, ParsesSizes) {
  EXPECT_EQ(parse_size("4KiB"), 4096);
  EXPECT_EQ(parse_size("4KB"), 4000);
  EXPECT_EQ(parse_size("64B"), 64);
  EXPECT_EQ(parse_size("1MiB"), 1048576);
  EXPECT_FALSE(parse_size("4kb"));
  EXPECT_FALSE(parse_size("4096"));
}

TEST(Units, FormatsShortestExactForm) {
  EXPECT_EQ(format_duration(5'000'000), "5ms");
  EXPECT_EQ(format_duration(1'500), "1500ns");
  EXPECT_EQ(format_duration(2'500'000), "2500us");
  EXPECT_EQ(format_duration(3'000'000'000), "3s");
  EXPECT_EQ(format_duration(0), "0ns");
  EXPECT_EQ(format_size(4096), "4KiB");
  EXPECT_EQ(format_size(4000), "4000B");
  for (Duration d : {1LL, 999LL, 1000LL, 123456789LL, 60'000'000'000LL, 10'100'000LL})
    EXPECT_EQ(parse_duration(format_duration(d)), d) << d;
}
