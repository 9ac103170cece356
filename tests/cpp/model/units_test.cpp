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

// A period as a duration, a fraction of a time unit or a rate, exactly (num/den ns, reduced).
TEST(Units, ParsesPeriodsAsRatesAndFractions) {
  EXPECT_EQ(parse_period("1/30 s"), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period("1/30s"), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period(" 1 / 30 s "), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period("30 Hz"), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period("30Hz"), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period("100/3 ms"), (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(parse_period("1/5 s"), (ExactPeriod{200'000'000, 1}));  // a whole number of ns
  EXPECT_EQ(parse_period("5 Hz"), (ExactPeriod{200'000'000, 1}));
  EXPECT_EQ(parse_period("29.97 Hz"), (ExactPeriod{100'000'000'000, 2997}));
  EXPECT_EQ(parse_period("1 kHz"), (ExactPeriod{1'000'000, 1}));
  EXPECT_EQ(parse_period("1/2 Hz"), (ExactPeriod{2'000'000'000, 1}));  // a rate as a fraction
  EXPECT_EQ(parse_period("33ms"), (ExactPeriod{33'000'000, 1}));        // a plain duration
  EXPECT_EQ(parse_period("2.5ms"), (ExactPeriod{2'500'000, 1}));
  EXPECT_EQ(parse_period("1/30 s")->whole(), 33'333'333);
  EXPECT_TRUE(parse_period("1/30 s")->fractional());
  EXPECT_FALSE(parse_period("5 Hz")->fractional());
}

TEST(Units, RejectsMalformedPeriodsWithAReason) {
  const std::pair<const char*, const char*> bad[] = {
      {"1/0 s", "divides by zero"},     {"0 Hz", "not a positive period"}, {"-30 Hz", "must be positive"},
      {"1/30", "no unit"},              {"30", "no unit"},                 {"30 hz", "unknown unit 'hz'"},
      {"1.5/30 s", "<integer>/<integer>"}, {"1/ s", "<integer>/<integer>"}, {"1/30/2 s", "unknown unit"},
      {"1/3x s", "unknown unit"},       {"Hz", "not a period"},            {"0/3 s", "not a positive period"}};
  for (const auto& [text, reason] : bad) {
    std::string why;
    EXPECT_FALSE(parse_period(text, &why)) << text;
    EXPECT_NE(why.find(reason), std::string::npos) << text << ": " << why;
  }
}

TEST(Units, FormatsAPeriodSoThatItReadsBack) {
  EXPECT_EQ(format_period(ExactPeriod{100'000'000, 3}), "1/30 s");
  EXPECT_EQ(format_period(ExactPeriod{200'000'000, 1}), "200ms");
  EXPECT_EQ(format_period(ExactPeriod{100'000'000'000, 2997}), "100/2997 s");
  for (const ExactPeriod p : {ExactPeriod{100'000'000, 3}, ExactPeriod{7, 3}, ExactPeriod{100'000'000'000, 2997},
                              ExactPeriod{40'000'000, 1}})
    EXPECT_EQ(parse_period(format_period(p)), p) << format_period(p);
}
