// Units of the model format: durations with ns/us/ms/s/min suffixes and byte sizes with
// SI (KB = 1000) and binary (KiB = 1024) suffixes, parsed exactly into integers.
#include "chainrt/model/units.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace chainrt {
namespace {

struct Unit {
  const char* suffix;
  std::int64_t scale;
};

constexpr Unit kTimeUnits[] = {{"ns", 1},          {"us", 1000},          {"µs", 1000},
                               {"ms", 1000000},    {"s", 1000000000},     {"min", 60000000000}};
constexpr Unit kSizeUnits[] = {{"B", 1},         {"KB", 1000},          {"KiB", 1024},
                               {"MB", 1000000},  {"MiB", 1048576},      {"GB", 1000000000},
                               {"GiB", 1073741824}};

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Splits "12.5ms" into number "12.5" and unit "ms".
void split(const std::string& text, std::string& number, std::string& unit) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  number = trim(text.substr(0, i));
  unit = trim(text.substr(i));
}

// Exact decimal "a.b" times scale as an integer; false when not whole or out of range.
bool scaled_integer(const std::string& number, std::int64_t scale, std::int64_t& out, std::string* why) {
  bool negative = !number.empty() && number[0] == '-';
  std::string digits = (number.empty() || (number[0] != '-' && number[0] != '+')) ? number : number.substr(1);
  auto dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : digits.substr(dot + 1);
  if ((whole.empty() && frac.empty()) || frac.find('.') != std::string::npos) {
    if (why) *why = "'" + number + "' is not a number";
    return false;
  }
  // More than 19 whole digits cannot fit an int64 of any unit (and would overflow __int128).
  if (whole.size() > 19 || frac.size() > 19) {
    if (why) *why = "value out of range";
    return false;
  }
  __int128 value = 0;
  for (char c : whole) value = value * 10 + (c - '0');
  __int128 numerator = 0, denominator = 1;
  for (char c : frac) {
    numerator = numerator * 10 + (c - '0');
    denominator *= 10;
    if (denominator > static_cast<__int128>(1) << 100) break;
  }
  __int128 total = value * scale;
  __int128 frac_part = numerator * scale;
  if (frac_part % denominator != 0) {
    if (why) *why = "'" + number + "' is not a whole number of the base unit";
    return false;
  }
  total += frac_part / denominator;
  if (total > std::numeric_limits<std::int64_t>::max()) {
    if (why) *why = "value out of range";
    return false;
  }
  out = static_cast<std::int64_t>(negative ? -total : total);
  return true;
}

template <std::size_t N>
std::optional<std::int64_t> parse_with(const std::string& raw, const Unit (&units)[N], const char* kind,
                                       const char* unit_list, std::string* why) {
  std::string text = trim(raw), number, unit;
  split(text, number, unit);
  if (number.empty() || number == "-" || number == "+") {
    if (why) *why = "'" + raw + "' is not a " + kind + " (expected a number and a unit: " + unit_list + ")";
    return std::nullopt;
  }
  if (unit.empty()) {
    if (why) *why = "'" + raw + "' has no unit (" + unit_list + ")";
    return std::nullopt;
  }
  for (const auto& u : units) {
    if (unit == u.suffix) {
      std::int64_t value = 0;
      if (!scaled_integer(number, u.scale, value, why)) return std::nullopt;
      return value;
    }
  }
  if (why) *why = "unknown unit '" + unit + "' in '" + raw + "' (expected " + unit_list + ")";
  return std::nullopt;
}

template <std::size_t N>
std::string format_with(std::int64_t v, const Unit (&units)[N]) {
  // Largest unit that represents v exactly.
  const Unit* best = &units[0];
  for (std::size_t i = 0; i < N; ++i) {
    if (v != 0 && v % units[i].scale == 0 && units[i].scale > best->scale) best = &units[i];
  }
  return std::to_string(v / best->scale) + best->suffix;
}

}  // namespace

std::optional<Duration> parse_duration(const std::string& text, std::string* why) {
  return parse_with(text, kTimeUnits, "duration", "ns, us, ms, s, min", why);
}

namespace {
// A non-negative decimal "a.b" as the fraction n/d (d a power of ten); false when not a number.
bool decimal_fraction(const std::string& text, __int128& n, __int128& d) {
  const auto dot = text.find('.');
  const std::string whole = text.substr(0, dot), frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  if ((whole.empty() && frac.empty()) || frac.find('.') != std::string::npos || whole.size() + frac.size() > 18)
    return false;
  n = 0;
  d = 1;
  for (char c : whole + frac) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + (c - '0');
  }
  for (std::size_t i = 0; i < frac.size(); ++i) d *= 10;
  return true;
}

std::optional<ExactPeriod> reduced(__int128 n, __int128 d, const std::string& raw, std::string* why) {
  if (n <= 0 || d <= 0) {
    if (why) *why = "'" + raw + "' is not a positive period";
    return std::nullopt;
  }
  __int128 a = n, b = d;
  while (b != 0) {
    const __int128 r = a % b;
    a = b;
    b = r;
  }
  n /= a;
  d /= a;
  if (n > std::numeric_limits<std::int64_t>::max() || d > std::numeric_limits<std::int64_t>::max()) {
    if (why) *why = "value out of range in '" + raw + "'";
    return std::nullopt;
  }
  return ExactPeriod{static_cast<Duration>(n), static_cast<std::int64_t>(d)};
}

constexpr const char* kPeriodForms = "a duration (33ms), a fraction (1/30 s) or a rate (30 Hz)";
}  // namespace

std::optional<ExactPeriod> parse_period(const std::string& raw, std::string* why) {
  const std::string text = trim(raw);
  if (!text.empty() && text[0] == '-') {
    if (why) *why = "period must be positive, got '" + raw + "'";
    return std::nullopt;
  }
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number = text.substr(0, i);
  std::string rest = trim(text.substr(i));
  if (std::count_if(number.begin(), number.end(), [](char c) { return c != '.'; }) > 18) {
    if (why) *why = "value out of range in '" + raw + "'";  // beyond what 64 bits of ns can hold
    return std::nullopt;
  }
  __int128 n = 0, d = 1;
  if (!rest.empty() && rest[0] == '/') {  // a fraction: <integer>/<integer> <unit>
    std::size_t j = 1;
    while (j < rest.size() && std::isspace(static_cast<unsigned char>(rest[j]))) ++j;
    std::size_t k = j;
    while (k < rest.size() && std::isdigit(static_cast<unsigned char>(rest[k]))) ++k;
    __int128 dn = 0, dd = 1, nd = 1;
    if (!decimal_fraction(number, n, nd) || nd != 1 || !decimal_fraction(rest.substr(j, k - j), dn, dd) || dd != 1) {
      if (why) *why = "'" + raw + "' is not a period: a fraction is <integer>/<integer> <unit>, as in 1/30 s";
      return std::nullopt;
    }
    if (dn == 0) {
      if (why) *why = "'" + raw + "' divides by zero";
      return std::nullopt;
    }
    d = dn;
    rest = trim(rest.substr(k));
  } else if (!decimal_fraction(number, n, d)) {
    if (why) *why = "'" + raw + "' is not a period (expected " + kPeriodForms + ")";
    return std::nullopt;
  }
  if (rest.empty()) {
    if (why) *why = "'" + raw + "' has no unit (ns, us, ms, s, min, or Hz, kHz for a rate)";
    return std::nullopt;
  }
  if (rest == "Hz" || rest == "kHz")  // a rate n/d per second (or per ms): the period d/n
    return reduced(d * (rest == "Hz" ? 1'000'000'000 : 1'000'000), n, raw, why);
  for (const auto& u : kTimeUnits)
    if (rest == u.suffix) return reduced(n * u.scale, d, raw, why);
  if (why) *why = "unknown unit '" + rest + "' in '" + raw + "' (expected ns, us, ms, s, min, or Hz, kHz for a rate)";
  return std::nullopt;
}

std::string format_period(const ExactPeriod& p) {
  if (p.den == 1) return format_duration(p.num);
  // num/den ns = num / (den·1e9) s: as a fraction of a second when that reduces to integers
  __int128 a = p.num, b = static_cast<__int128>(p.den) * 1'000'000'000;
  for (__int128 x = a, y = b; ; ) {
    if (y == 0) {
      a /= x;
      b /= x;
      break;
    }
    const __int128 r = x % y;
    x = y;
    y = r;
  }
  if (b <= std::numeric_limits<std::int64_t>::max())
    return std::to_string(static_cast<long long>(a)) + "/" + std::to_string(static_cast<long long>(b)) + " s";
  return std::to_string(p.num) + "/" + std::to_string(p.den) + " ns";
}

std::optional<Bytes> parse_size(const std::string& text, std::string* why) {
  return parse_with(text, kSizeUnits, "size", "B, KB, KiB, MB, MiB, GB, GiB", why);
}

std::string format_duration(Duration ns) {
  // Skip "µs" (index 2) and "min" (index 5) so files stay ASCII and read as ms/s.
  const Unit units[] = {kTimeUnits[0], kTimeUnits[1], kTimeUnits[3], kTimeUnits[4]};
  return format_with(ns, units);
}

std::string format_size(Bytes b) {
  const Unit units[] = {kSizeUnits[0], kSizeUnits[2], kSizeUnits[4], kSizeUnits[6]};
  return format_with(b, units);
}

std::string pretty_duration(Duration ns) {
  char buf[64];
  double v = static_cast<double>(ns);
  if (ns == 0) return "0";
  if (std::llabs(ns) >= 1000000000) std::snprintf(buf, sizeof buf, "%.3g s", v / 1e9);
  else if (std::llabs(ns) >= 1000000) std::snprintf(buf, sizeof buf, "%.4g ms", v / 1e6);
  else if (std::llabs(ns) >= 1000) std::snprintf(buf, sizeof buf, "%.4g us", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  return buf;
}

}  // namespace chainrt
