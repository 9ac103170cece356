// Internal: what counts as text in a model file (docs/model.md, "Limits"). A value is UTF-8
// without control characters and without characters that print as nothing or as something
// else (Unicode default-ignorable code points: bidirectional overrides and isolates, zero-width
// characters, fillers, ...; the "Trojan source" class, which makes a name print as something it
// is not; and the other invisible format characters, category Cf); a name is, in addition, one non-empty
// line of at most kMaxNameBytes bytes. Shared by the parser (located errors on the file) and the
// validation of models built in code, so that the rule is written once.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "chainrt/model/limits.hpp"

namespace chainrt::detail {

// Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 15.1; the
// complete list of its ranges): code points that a renderer shows as nothing at all, such as
// zero-width characters, variation selectors, the combining grapheme joiner U+034F, the Hangul
// fillers U+115F/U+1160/U+3164/U+FFA0 and the tag characters. A name holding one prints exactly
// as the name without it.
struct CodePointRange {
  std::uint32_t first, last;
};
inline constexpr CodePointRange kDefaultIgnorable[] = {
    {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x061C, 0x061C}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
    {0x180B, 0x180F},   {0x200B, 0x200F},   {0x202A, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164},
    {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFF8}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

inline bool default_ignorable(std::uint32_t cp) {
  for (const auto& r : kDefaultIgnorable)
    if (cp >= r.first && cp <= r.last) return true;
  return false;
}

// Characters that would make a name print as something it is not: the default-ignorable code
// points above (the bidirectional controls among them named as such: the "Trojan source" class),
// the line and paragraph separators U+2028/U+2029, and the format characters (Unicode 15 general
// category Cf) that are not default-ignorable: prepended concatenation marks and Egyptian
// hieroglyph format controls, nothing a name needs. Returns a short English name of the
// character class, or nullptr.
inline const char* invisible_kind(std::uint32_t cp) {
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
      cp == 0x061C)
    return "a bidirectional control character";
  if (default_ignorable(cp)) return "an invisible character (Unicode default-ignorable code point)";
  if (cp == 0x2028 || cp == 0x2029) return "a line or paragraph separator";
  if ((cp >= 0x0600 && cp <= 0x0605) || cp == 0x06DD || cp == 0x070F || cp == 0x0890 || cp == 0x0891 ||
      cp == 0x08E2 || cp == 0xFFF9 || cp == 0xFFFA || cp == 0xFFFB || cp == 0x110BD || cp == 0x110CD ||
      (cp >= 0x13430 && cp <= 0x1343F))
    return "an invisible formatting character";
  return nullptr;
}

// "U+XXXX": a code point as an error message names it. Only on the error path: every name of
// every model passes through text_problem, and a printf costs far more than the check (in a
// process where a library registered printf handlers, as numpy's libquadmath does in every
// Dask worker, glibc formats on its slow positional path).
inline std::string code_point(std::uint32_t cp) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
  return hex;
}

// Why `s` is not acceptable text for a value of a model, or nullopt. `one_line`: tabs and line
// breaks are refused too (names).
inline std::optional<std::string> text_problem(std::string_view s, bool one_line = false) {
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = u[i];
    std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return std::string("is not valid UTF-8 text");
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
      if ((u[i + k] & 0xC0) != 0x80) return std::string("is not valid UTF-8 text");
      cp = (cp << 6) | (u[i + k] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::string("is not valid UTF-8 text");
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
      if (!one_line && (cp == '\n' || cp == '\t')) {
        i += len;
        continue;
      }
      return std::string("holds a control character (") + code_point(cp) + ")";
    }
    if (cp < 0xA0) {  // printable ASCII: the common case, none of it invisible
      i += len;
      continue;
    }
    if (const char* kind = invisible_kind(cp))
      return std::string("holds ") + kind + " (" + code_point(cp) + "), which would print as something else";
    i += len;
  }
  return std::nullopt;
}

// Why `s` is not acceptable as a name (of a callback, node, topic, executor, host, process,
// thread, group or chain, where it is defined and where it is referred to), or nullopt.
inline std::optional<std::string> name_problem(std::string_view s) {
  if (s.empty()) return std::string("a name must not be empty");
  if (static_cast<std::int64_t>(s.size()) > limits::kMaxNameBytes)
    return "a name is at most " + std::to_string(limits::kMaxNameBytes) + " bytes long (this one has " +
           std::to_string(s.size()) + ")";
  if (auto why = text_problem(s, true)) return "the name " + *why;
  return std::nullopt;
}

}  // namespace chainrt::detail
