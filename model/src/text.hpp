// Internal: what counts as text in a model file (docs/model.md, "Limits"). A value is UTF-8
// without control characters and without invisible formatting characters (Unicode category Cf:
// bidirectional overrides and isolates, zero-width characters, ...; the "Trojan source" class,
// which makes a name print as something it is not); a name is, in addition, one non-empty
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

// Invisible formatting characters (Unicode 15 general category Cf) and the line and paragraph
// separators U+2028/U+2029: nothing a name or value of a model needs, everything a spoofed
// name uses. Returns a short English name of the character class, or nullptr.
inline const char* invisible_kind(std::uint32_t cp) {
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
      cp == 0x061C)
    return "a bidirectional control character";
  if (cp == 0x2028 || cp == 0x2029) return "a line or paragraph separator";
  if (cp == 0x00AD || (cp >= 0x0600 && cp <= 0x0605) || cp == 0x06DD || cp == 0x070F || cp == 0x0890 ||
      cp == 0x0891 || cp == 0x08E2 || cp == 0x180E || (cp >= 0x200B && cp <= 0x200D) ||
      (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x206A && cp <= 0x206F) || cp == 0xFEFF ||
      (cp >= 0xFFF9 && cp <= 0xFFFB) || cp == 0x110BD || cp == 0x110CD || (cp >= 0x13430 && cp <= 0x1343F) ||
      (cp >= 0x1BCA0 && cp <= 0x1BCA3) || (cp >= 0x1D173 && cp <= 0x1D17A) || cp == 0xE0001 ||
      (cp >= 0xE0020 && cp <= 0xE007F))
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
