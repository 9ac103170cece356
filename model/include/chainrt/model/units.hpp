// chainrt units: human-readable durations ("5ms", "200us", "1.5s") and sizes ("4KiB", "64B")
// to and from the integer nanoseconds / bytes used everywhere inside the core.
#pragma once

#include <optional>
#include <string>

#include "chainrt/model/model.hpp"

namespace chainrt {

// Parses "<number><unit>" with unit in ns, us (or µs), ms, s, min. The number may have a
// decimal fraction as long as the result is a whole number of nanoseconds. Returns nullopt and
// sets `why` on failure.
std::optional<Duration> parse_duration(const std::string& text, std::string* why = nullptr);
// Parses a period: a duration as parse_duration does ("33ms"), a fraction of a time unit
// ("<integer>/<integer> <unit>": "1/30 s", "100/3 ms") or a rate ("<number> Hz" or kHz:
// "30 Hz", "29.97 Hz"), exactly, into num/den ns reduced (den == 1 for a whole number of ns).
// Returns nullopt and sets `why` on failure.
std::optional<ExactPeriod> parse_period(const std::string& text, std::string* why = nullptr);
// The shortest exact form parse_period reads back: a whole period as format_duration, another
// as a fraction of a second ("1/30 s") or of a nanosecond ("100000000/3 ns").
std::string format_period(const ExactPeriod& p);
// Parses "<integer><unit>" with unit in B, KB (1000), KiB (1024), MB, MiB, GB, GiB.
std::optional<Bytes> parse_size(const std::string& text, std::string* why = nullptr);

// Shortest exact rendering: 5000000 -> "5ms", 1500 -> "1500ns", 2500000 -> "2500us".
std::string format_duration(Duration ns);
std::string format_size(Bytes b);
// Human rendering for tables: 5.25 ms, 812 us (rounded, not for round-trips).
std::string pretty_duration(Duration ns);

}  // namespace chainrt
