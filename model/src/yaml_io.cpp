// The model's YAML format (docs/model.md): the one parser and writer. Parsing is structural
// (types, units, known fields); cross-references and derived data (default groups, chain hops,
// communication kinds) are done by validate.cpp on the typed model, which points back into the
// file through a SourceMap recorded here.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "chainrt/model/limits.hpp"
#include "chainrt/model/policy_list.hpp"
#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "source_map.hpp"
#include "text.hpp"

namespace chainrt {

namespace {

using detail::Diagnostics;
using detail::Place;
using detail::SourceMap;

Place place_of(const YAML::Node& n) {
  auto m = n.Mark();
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

// ---- the trust boundary: checks on the raw text before a tree is built ---------------------

// The first byte that is not well-formed UTF-8 (overlong forms, surrogates and code points
// above U+10FFFF included) or is a NUL; npos when the text is clean. `line`/`column` (1-based,
// column in characters) locate it.
std::size_t find_bad_utf8(const std::string& s, int& line, int& column) {
  line = 1;
  column = 1;
  std::size_t i = 0;
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    unsigned char c = u[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c == 0) return i;
    if (c < 0x80) len = 1, cp = c;
    else if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return i;
    if (i + len > s.size()) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((u[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (u[i + k] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += len;
  }
  return std::string::npos;
}

// Walks the YAML event stream (no tree is built) and stops at the first event beyond the
// limits: a value longer than kMaxUnbrokenBytes, nesting deeper than kMaxDepth, more than kMaxNodes nodes once aliases are expanded
// (so "billion laughs" files are refused after a bounded amount of work), and an alias that
// refers to a node that contains it (a cycle, which no tree can hold).
class PreScan : public YAML::EventHandler {
 public:
  struct Refused {
    Place place;
    std::string message;
  };

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a, const std::string& value) override {
    // (a long value with spaces, which the raw check of within_limits lets through)
    if (static_cast<std::int64_t>(value.size()) > limits::kMaxUnbrokenBytes)
      throw Refused{at(m), "a value of more than " + std::to_string(limits::kMaxUnbrokenBytes >> 10) +
                               " KiB: longer than any value of a model (a name is at most " +
                               std::to_string(limits::kMaxNameBytes) + " bytes)"};
    leaf(m, a);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    for (const auto& o : open_)
      if (o.anchor == a) throw Refused{at(m), "an alias refers to a node that contains it (a cycle)"};
    auto it = size_.find(a);
    count(m, it == size_.end() ? 1 : it->second);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::int64_t start;
  };
  static Place at(const YAML::Mark& m) { return {m.line + 1, m.column + 1}; }
  void count(const YAML::Mark& m, std::int64_t n) {
    nodes_ += n;
    if (nodes_ > limits::kMaxNodes)
      throw Refused{at(m), "the model has more than " + std::to_string(limits::kMaxNodes) +
                               " YAML nodes (aliases expanded); chainrt refuses larger files"};
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t a) {
    count(m, 1);
    if (a) size_[a] = 1;
  }
  void open(const YAML::Mark& m, YAML::anchor_t a) {
    count(m, 1);
    if (static_cast<int>(open_.size()) >= limits::kMaxDepth)
      throw Refused{at(m), "nesting deeper than " + std::to_string(limits::kMaxDepth) + " levels"};
    open_.push_back({a, nodes_ - 1});
  }
  void close() {
    Open o = open_.back();
    open_.pop_back();
    if (o.anchor) size_[o.anchor] = nodes_ - o.start;
  }

  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, std::int64_t> size_;
  std::int64_t nodes_ = 0;
};

// Refuses text that is not UTF-8, holds more than one document or goes beyond the limits;
// reports a located diagnostic and returns false. YAML syntax errors are left to the loader.
bool within_limits(const std::string& text, Diagnostics& diags) {
  if (static_cast<std::int64_t>(text.size()) > limits::kMaxModelBytes) {
    diags.error_at({1, 1}, "", "the file is larger than " + std::to_string(limits::kMaxModelBytes >> 20) +
                                   " MiB; chainrt refuses larger models");
    return false;
  }
  std::int64_t run = 0;
  int run_line = 1;
  std::size_t run_start = 0, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',') {
      if (c == '\n') ++run_line, line_start = i + 1;
      run = 0;
      continue;
    }
    if (run++ == 0) run_start = i;
    if (run > limits::kMaxUnbrokenBytes) {
      diags.error_at({run_line, static_cast<int>(run_start - line_start) + 1}, "",
                     "more than " + std::to_string(limits::kMaxUnbrokenBytes >> 10) +
                         " KiB without a space or separator: longer than any value of a model (a name is at most " +
                         std::to_string(limits::kMaxNameBytes) + " bytes)");
      return false;
    }
  }
  int line = 0, column = 0;
  if (std::size_t bad = find_bad_utf8(text, line, column); bad != std::string::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    diags.error_at({line, column}, "",
                   text[bad] == 0 ? std::string("a NUL byte: a model is a UTF-8 text file")
                                  : std::string("invalid UTF-8 (byte ") + hex + "): a model is a UTF-8 text file");
    return false;
  }
  std::istringstream in(text);
  try {
    YAML::Parser parser(in);
    PreScan scan;
    parser.HandleNextDocument(scan);
    PreScan rest;
    if (parser.HandleNextDocument(rest)) {
      diags.error_at({1, 1}, "", "the file holds more than one YAML document (a model is one document)");
      return false;
    }
  } catch (const PreScan::Refused& r) {
    diags.error_at(r.place, "", r.message);
    return false;
  } catch (const YAML::Exception&) {
    // A syntax error: the loader reports it with its place.
  }
  return true;
}

// A scalar used as a name or a value must be printable text (text.hpp): no control characters
// (they come in through escapes such as "\x07"), no invisible formatting characters.
void check_scalar_text(const YAML::Node& n, const std::string& path, Diagnostics& diags) {
  if (auto why = detail::text_problem(n.Scalar())) diags.error_at(place_of(n), path, "the value " + *why);
}

// Records the place of every node by field path ("chains[1].callbacks[2]") and checks that
// every scalar is text (check_scalar_text). The pre-scan bounded the depth and the size.
void record_places(const YAML::Node& n, const std::string& path, SourceMap& map, Diagnostics& diags) {
  map.set(path, place_of(n));
  if (n.IsMap()) {
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) {
        diags.error_at(place_of(kv.first), path, "a key must be a plain name, not a list or mapping");
        continue;
      }
      std::string key = kv.first.Scalar();
      check_scalar_text(kv.first, path.empty() ? key : path + "." + key, diags);
      record_places(kv.second, path.empty() ? key : path + "." + key, map, diags);
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      record_places(n[i], path + "[" + std::to_string(i) + "]", map, diags);
  } else if (n.IsScalar()) {
    check_scalar_text(n, path, diags);
  }
}

std::string sub(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

struct Reader {
  Diagnostics& d;

  bool is_map(const YAML::Node& n, const std::string& path, const char* what) {
    if (n.IsMap()) return true;
    d.error(path, std::string("expected ") + what + " (a mapping of fields)");
    return false;
  }

  // Reports unknown and duplicate keys; returns false when the node is not a map.
  bool keys(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> allowed,
            const char* what) {
    if (!is_map(n, path, what)) return false;
    std::set<std::string> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) continue;  // reported by record_places
      std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) {
        d.error_at(place_of(kv.first), sub(path, key), "field given twice");
        continue;
      }
      bool ok = false;
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        d.error_at(place_of(kv.first), sub(path, key), "unknown field '" + key + "' in " + what + " (known: " + list + ")");
      }
    }
    return true;
  }

  std::optional<std::string> scalar(const YAML::Node& map, const char* key, const std::string& path,
                                    bool required, const char* what) {
    YAML::Node v = map[key];
    if (!v) {
      if (required) d.error(path, std::string("missing required field '") + key + "' of " + what);
      return std::nullopt;
    }
    if (!v.IsScalar()) {
      d.error(sub(path, key), "expected a single value, not a list or mapping");
      return std::nullopt;
    }
    return v.Scalar();
  }

  // The name of the thing `map` defines (its required `name` field).
  std::optional<std::string> name(const YAML::Node& map, const std::string& path, const char* what) {
    return ref(map, "name", path, true, what);
  }

  // A field that holds a name (a definition or a reference to one): the name limits apply.
  std::optional<std::string> ref(const YAML::Node& map, const char* key, const std::string& path, bool required,
                                 const char* what) {
    auto s = scalar(map, key, path, required, what);
    if (s) check_name(*s, sub(path, key));
    return s;  // kept when refused, so that what refers to it is not reported as unknown too
  }

  // Reports a name beyond the name limits; a value that is no text at all was reported by
  // record_places already.
  void check_name(const std::string& s, const std::string& path) {
    if (detail::text_problem(s)) return;
    if (auto why = detail::name_problem(s)) d.error(path, *why);
  }

  // An integer within [lo, hi] (by default any int: every integer of the model is an int).
  std::optional<long long> integer(const YAML::Node& map, const char* key, const std::string& path,
                                   bool required, const char* what, long long lo = INT32_MIN,
                                   long long hi = INT32_MAX) {
    auto s = scalar(map, key, path, required, what);
    if (!s) return std::nullopt;
    long long v = 0;
    auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    const bool whole = ec == std::errc() && p == s->data() + s->size();
    if (ec == std::errc::result_out_of_range || (whole && (v < lo || v > hi))) {
      bool low = whole ? v < lo : (*s)[0] == '-';
      d.error(sub(path, key), std::string(key) + (low ? " must be at least " + std::to_string(lo)
                                                      : " must be at most " + std::to_string(hi)) +
                                  ", got '" + *s + "'");
      return std::nullopt;
    }
    if (ec != std::errc() || p != s->data() + s->size()) {
      d.error(sub(path, key), "expected an integer, got '" + *s + "'");
      return std::nullopt;
    }
    return v;
  }

  // A duration with a unit; zero or negative values are rejected unless allow_zero.
  // A duration with a unit, at most kMaxDuration; zero or negative values are rejected unless
  // allow_zero; a period (`min` > 0) must be at least `min`.
  std::optional<Duration> duration(const YAML::Node& map, const char* key, const std::string& path,
                                   bool required, const char* what, bool allow_zero = false, Duration min = 0) {
    auto s = scalar(map, key, path, required, what);
    if (!s) return std::nullopt;
    std::string why;
    auto v = parse_duration(*s, &why);
    if (!v) {
      d.error(sub(path, key), why);
      return std::nullopt;
    }
    if (*v < 0 || (*v == 0 && !allow_zero)) {
      d.error(sub(path, key), std::string(key) + " must be " + (allow_zero ? "zero or positive" : "positive") +
                                  ", got '" + *s + "'");
      return std::nullopt;
    }
    if (*v < min) {
      d.error(sub(path, key), std::string(key) + " " + *s + " is shorter than chainrt's limit of " +
                                  format_duration(min) + " (simulation and run could not keep up)");
      return std::nullopt;
    }
    if (*v > limits::kMaxDuration) {
      d.error(sub(path, key), std::string(key) + " " + *s + " is longer than chainrt's limit of 1 h");
      return std::nullopt;
    }
    return v;
  }

  // A period (parse_period: a duration, a fraction of a time unit or a rate), within the
  // limits of `duration` for a period.
  std::optional<ExactPeriod> period(const YAML::Node& map, const char* key, const std::string& path,
                                    const char* what) {
    auto s = scalar(map, key, path, false, what);
    if (!s) return std::nullopt;
    std::string why;
    auto v = parse_period(*s, &why);
    if (!v) {
      d.error(sub(path, key), why);
      return std::nullopt;
    }
    if (v->whole() < limits::kMinPeriod) {
      d.error(sub(path, key), std::string(key) + " " + *s + " is shorter than chainrt's limit of " +
                                  format_duration(limits::kMinPeriod) + " (simulation and run could not keep up)");
      return std::nullopt;
    }
    if (v->whole() > limits::kMaxDuration) {
      d.error(sub(path, key), std::string(key) + " " + *s + " is longer than chainrt's limit of 1 h");
      return std::nullopt;
    }
    return v;
  }

  std::optional<Bytes> size(const YAML::Node& map, const char* key, const std::string& path, const char* what) {
    auto s = scalar(map, key, path, false, what);
    if (!s) return std::nullopt;
    std::string why;
    auto v = parse_size(*s, &why);
    if (!v) {
      d.error(sub(path, key), why);
      return std::nullopt;
    }
    if (*v <= 0) {
      d.error(sub(path, key), "size must be positive, got '" + *s + "'");
      return std::nullopt;
    }
    if (*v > limits::kMaxMessageBytes) {
      d.error(sub(path, key), "size " + *s + " is larger than chainrt's limit of 1 GiB");
      return std::nullopt;
    }
    return v;
  }

  // A list of names; a single scalar is accepted as a one-element list.
  std::vector<std::string> names(const YAML::Node& map, const char* key, const std::string& path) {
    std::vector<std::string> out;
    YAML::Node v = map[key];
    if (!v) return out;
    auto one = [&](const YAML::Node& n, const std::string& p) {
      check_name(n.Scalar(), p);
      out.push_back(n.Scalar());
    };
    if (v.IsScalar()) {
      one(v, sub(path, key));
      return out;
    }
    if (!v.IsSequence()) {
      d.error(sub(path, key), "expected a list of names");
      return out;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].IsScalar()) {
        d.error(at(sub(path, key), i), "expected a name");
        continue;
      }
      one(v[i], at(sub(path, key), i));
    }
    return out;
  }

  // A list of integers in [lo, hi] (`what`: one of them, e.g. "a core number"); a single
  // scalar is accepted as a one-element list.
  std::vector<int> integers(const YAML::Node& map, const char* key, const std::string& path, const std::string& what,
                            int lo, int hi) {
    std::vector<int> out;
    YAML::Node v = map[key];
    if (!v) return out;
    auto one = [&](const YAML::Node& n, const std::string& p) {
      int c = 0;
      const std::string& s = n.Scalar();
      auto [q, ec] = std::from_chars(s.data(), s.data() + s.size(), c);
      if (!n.IsScalar() || ec != std::errc() || q != s.data() + s.size() || c < lo || c > hi)
        d.error(p, "expected " + what + " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
      else
        out.push_back(c);
    };
    if (v.IsScalar()) one(v, sub(path, key));
    else if (v.IsSequence())
      for (std::size_t i = 0; i < v.size(); ++i) one(v[i], at(sub(path, key), i));
    else
      d.error(sub(path, key), "expected " + what + " or a list of them");
    return out;
  }

  std::vector<int> cores(const YAML::Node& map, const std::string& path) {
    return integers(map, "cores", path, "a core number", 0, limits::kMaxCores - 1);
  }

  template <class F>
  void each(const YAML::Node& root, const char* key, F&& f) {
    each(root, key, "", key, f);
  }
  // The list `key` of the map at `path` (a top-level list: path ""), each element with its path.
  template <class F>
  void each(const YAML::Node& map, const char* key, const std::string& path, const std::string& what, F&& f) {
    YAML::Node list = map[key];
    if (!list) return;
    const std::string p = path.empty() ? std::string(key) : sub(path, key);
    if (!list.IsSequence()) {
      d.error(p, "expected a list of " + what);
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) f(list[i], at(p, i));
  }

  std::optional<Reservation> reservation(const YAML::Node& map, const std::string& path) {
    YAML::Node r = map["reservation"];
    if (!r) return std::nullopt;
    std::string p = sub(path, "reservation");
    if (!keys(r, p, {"budget", "period"}, "a reservation")) return std::nullopt;
    auto budget = duration(r, "budget", p, true, "a reservation");
    auto period = duration(r, "period", p, true, "a reservation", false, limits::kMinPeriod);
    if (!budget || !period) return std::nullopt;
    return Reservation{*budget, *period};
  }
};

// ---- shared accelerators (PiCAS Sec. IV): a host's devices and a callback's segments --------

void parse_accelerators(Reader& r, const YAML::Node& host, const std::string& path, Host& h) {
  r.each(host, "accelerators", path, "accelerators", [&](const YAML::Node& n, const std::string& q) {
    if (!r.keys(n, q, {"name", "access", "priority", "cores", "overhead", "preemption", "device", "cuda_device",
                       "stream_priorities"},
                "an accelerator"))
      return;
    Accelerator a;
    a.name = r.name(n, q, "an accelerator").value_or("");
    if (auto k = r.scalar(n, "access", q, true, "an accelerator")) {
      if (auto v = accelerator_access_from(*k)) a.access = *v;
      else r.d.error(sub(q, "access"), "unknown accelerator access '" + *k + "' (direct or server)");
    }
    if (auto pr = r.integer(n, "priority", q, false, "an accelerator")) a.server_priority = static_cast<int>(*pr);
    a.server_cores = r.cores(n, q);
    a.server_overhead = r.duration(n, "overhead", q, false, "an accelerator", true).value_or(0);
    if (auto k = r.scalar(n, "preemption", q, false, "an accelerator")) {
      if (*k == "block") a.block_preemption = true;
      else if (*k != "request") r.d.error(sub(q, "preemption"), "unknown preemption '" + *k + "' (request or block)");
    }
    if (auto k = r.scalar(n, "device", q, false, "an accelerator")) {
      if (auto v = accelerator_device_from(*k)) a.device = *v;
      else r.d.error(sub(q, "device"), "unknown accelerator device '" + *k + "' (emulated or cuda)");
    }
    if (auto i = r.integer(n, "cuda_device", q, false, "an accelerator", 0, 1023)) a.cuda_device = static_cast<int>(*i);
    a.stream_priorities = r.integers(n, "stream_priorities", q, "a chain priority", -limits::kMaxPriority * 1024,
                                     limits::kMaxPriority * 1024 + 1023);
    h.accelerators.push_back(a);
  });
}

void parse_segments(Reader& r, const YAML::Node& cb, const std::string& path, Callback& c) {
  const char* what = "an accelerator segment";
  r.each(cb, "accelerator_segments", path, "accelerator segments", [&](const YAML::Node& n, const std::string& q) {
    if (!r.keys(n, q,
                {"accelerator", "after", "copy_in", "kernel", "copy_out", "copy_in_bcet", "kernel_bcet",
                 "copy_out_bcet", "block"},
                what))
      return;
    AcceleratorSegment s;
    s.accelerator = r.ref(n, "accelerator", q, true, what).value_or("");
    s.after = r.duration(n, "after", q, false, what, true).value_or(0);
    s.copy_in = r.duration(n, "copy_in", q, false, what, true).value_or(0);
    s.kernel = r.duration(n, "kernel", q, true, what).value_or(0);
    s.copy_out = r.duration(n, "copy_out", q, false, what, true).value_or(0);
    s.copy_in_bcet = r.duration(n, "copy_in_bcet", q, false, what, true);
    s.kernel_bcet = r.duration(n, "kernel_bcet", q, false, what);
    s.copy_out_bcet = r.duration(n, "copy_out_bcet", q, false, what, true);
    s.block = r.duration(n, "block", q, false, what);
    c.accelerator_segments.push_back(s);
  });
}

void parse_hosts(Reader& r, const YAML::Node& root, Model& m) {
  r.each(root, "hosts", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "cores", "blackout", "accelerators"}, "a host")) return;
    Host h;
    h.name = r.name(n, p, "a host").value_or("");
    if (auto c = r.integer(n, "cores", p, false, "a host", 1, limits::kMaxCores)) h.cores = static_cast<int>(*c);
    YAML::Node bl = n["blackout"];
    const std::string bp = sub(p, "blackout");
    if (bl && !bl.IsSequence()) r.d.error(bp, "expected a list of {window, max} points");
    for (std::size_t i = 0; bl && bl.IsSequence() && i < bl.size(); ++i) {
      const std::string q = at(bp, i);
      if (!r.keys(bl[i], q, {"window", "max"}, "a blackout point")) continue;
      auto w = r.duration(bl[i], "window", q, true, "a blackout point");
      auto x = r.duration(bl[i], "max", q, true, "a blackout point", true);
      if (w && x) h.blackout.push_back({*w, *x});
    }
    parse_accelerators(r, n, p, h);
    m.hosts.push_back(h);
  });
}

void parse_executors(Reader& r, const YAML::Node& root, Model& m) {
  r.each(root, "executors", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "host", "process", "policy", "priority", "threads", "thread_classes", "dispatch_overhead"},
                "an executor"))
      return;
    Executor e;
    e.name = r.name(n, p, "an executor").value_or("");
    e.host = r.ref(n, "host", p, false, "an executor").value_or("");
    e.process = r.ref(n, "process", p, false, "an executor").value_or("");
    if (auto pol = r.scalar(n, "policy", p, false, "an executor")) {
      if (auto v = policy_from(*pol)) e.policy = *v;
      else r.d.error(sub(p, "policy"), "unknown policy '" + *pol + "' (" + policy_list() + ")");
    }
    if (auto pr = r.integer(n, "priority", p, false, "an executor")) e.priority = static_cast<int>(*pr);
    e.dispatch_overhead = r.duration(n, "dispatch_overhead", p, false, "an executor", true).value_or(0);
    YAML::Node threads = n["threads"];
    std::string tp = sub(p, "threads");
    if (threads && threads.IsScalar()) {
      if (auto count = r.integer(n, "threads", p, false, "an executor", INT32_MIN, limits::kMaxThreads)) {
        if (*count <= 0) r.d.error(tp, "an executor needs at least one thread");
        for (long long i = 0; i < *count; ++i) e.threads.push_back(Thread{"t" + std::to_string(i)});
      }
    } else if (threads && threads.IsSequence()) {
      r.each(n, "threads", p, "threads", [&](const YAML::Node& t, const std::string& q) {
        if (!r.keys(t, q, {"name", "cores", "priority", "reservation"}, "a thread")) return;
        Thread th;
        th.name = r.name(t, q, "a thread").value_or("");
        th.cores = r.cores(t, q);
        if (auto pr = r.integer(t, "priority", q, false, "a thread")) th.fifo_priority = static_cast<int>(*pr);
        th.reservation = r.reservation(t, q);
        e.threads.push_back(th);
      });
    } else if (threads) {
      r.d.error(tp, "expected a thread count or a list of threads");
    }
    r.each(n, "thread_classes", p, "thread classes", [&](const YAML::Node& c, const std::string& q) {
      if (!r.keys(c, q, {"name", "kind", "cores", "priority", "reservation"}, "a thread class")) return;
      ThreadClass tc;
      tc.name = r.name(c, q, "a thread class").value_or("");
      if (auto k = r.scalar(c, "kind", q, false, "a thread class")) {
        if (auto v = criticality_class_from(*k)) tc.kind = *v;
        else r.d.error(sub(q, "kind"), "unknown thread class kind '" + *k + "' (rt or be)");
      }
      tc.cores = r.cores(c, q);
      if (auto pr = r.integer(c, "priority", q, false, "a thread class")) tc.fifo_priority = static_cast<int>(*pr);
      tc.reservation = r.reservation(c, q);
      e.thread_classes.push_back(tc);
    });
    m.executors.push_back(e);
  });
}

void parse_nodes_groups_topics(Reader& r, const YAML::Node& root, Model& m) {
  r.each(root, "nodes", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "executor"}, "a node")) return;
    Node node;
    node.name = r.name(n, p, "a node").value_or("");
    node.executor = r.ref(n, "executor", p, false, "a node").value_or("");
    m.nodes.push_back(node);
  });
  r.each(root, "callback_groups", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "type", "node"}, "a callback group")) return;
    CallbackGroup g;
    g.name = r.name(n, p, "a callback group").value_or("");
    if (auto t = r.scalar(n, "type", p, true, "a callback group")) {
      if (auto v = group_type_from(*t)) g.type = *v;
      else r.d.error(sub(p, "type"), "unknown callback group type '" + *t + "' (mutually_exclusive or reentrant)");
    }
    g.node = r.ref(n, "node", p, true, "a callback group").value_or("");
    m.groups.push_back(g);
  });
  r.each(root, "topics", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "size"}, "a topic")) return;
    Topic t;
    t.name = r.name(n, p, "a topic").value_or("");
    if (auto s = r.size(n, "size", p, "a topic")) t.size = *s;
    m.topics.push_back(t);
  });
  r.each(root, "services", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "request_size", "response_size"}, "a service")) return;
    Service s;
    s.name = r.name(n, p, "a service").value_or("");
    if (auto v = r.size(n, "request_size", p, "a service")) s.request_size = *v;
    if (auto v = r.size(n, "response_size", p, "a service")) s.response_size = *v;
    m.services.push_back(s);
  });
}

void parse_callbacks(Reader& r, const YAML::Node& root, Model& m) {
  r.each(root, "callbacks", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p,
                {"name", "kind", "node", "group", "wcet", "bcet", "priority", "affinity", "period", "offset",
                 "jitter", "phase", "period_tolerance", "topic", "service", "queue_depth", "fuses", "publishes", "calls",
                 "accelerator_segments"},
                "a callback"))
      return;
    Callback cb;
    cb.name = r.name(n, p, "a callback").value_or("");
    if (auto k = r.scalar(n, "kind", p, true, "a callback")) {
      if (auto v = callback_kind_from(*k)) cb.kind = *v;
      else
        r.d.error(sub(p, "kind"), "unknown callback kind '" + *k +
                                      "' (timer, subscription, service, client, fusion_input, fusion_trigger)");
    }
    cb.node = r.ref(n, "node", p, true, "a callback").value_or("");
    cb.group = r.ref(n, "group", p, false, "a callback").value_or("");
    cb.wcet = r.duration(n, "wcet", p, true, "a callback").value_or(0);
    cb.bcet = r.duration(n, "bcet", p, false, "a callback");
    if (auto pr = r.integer(n, "priority", p, false, "a callback", -limits::kMaxPriority, limits::kMaxPriority))
      cb.priority = static_cast<int>(*pr);
    cb.affinity = r.names(n, "affinity", p);
    if (auto per = r.period(n, "period", p, "a callback")) {
      cb.period = per->whole();
      if (per->fractional()) cb.exact_period = *per;
    }
    cb.offset = r.duration(n, "offset", p, false, "a callback", true).value_or(0);
    cb.jitter = r.duration(n, "jitter", p, false, "a callback", true).value_or(0);
    if (auto ph = r.scalar(n, "phase", p, false, "a callback")) {
      if (auto v = timer_phase_from(*ph)) cb.phase = *v;
      else r.d.error(sub(p, "phase"), "unknown timer phase '" + *ph + "' (free, guaranteed, observed)");
    }
    cb.period_tolerance = r.duration(n, "period_tolerance", p, false, "a callback", true);
    cb.topic = r.ref(n, "topic", p, false, "a callback").value_or("");
    cb.service = r.ref(n, "service", p, false, "a callback").value_or("");
    if (auto q = r.integer(n, "queue_depth", p, false, "a callback", 1, limits::kMaxQueueDepth))
      cb.queue_depth = static_cast<int>(*q);
    cb.fuses = r.names(n, "fuses", p);
    cb.publishes = r.names(n, "publishes", p);
    cb.calls = r.names(n, "calls", p);
    parse_segments(r, n, p, cb);
    m.callbacks.push_back(cb);
  });
}

void parse_chains(Reader& r, const YAML::Node& root, Model& m) {
  r.each(root, "chains", [&](const YAML::Node& n, const std::string& p) {
    if (!r.keys(n, p, {"name", "callbacks", "paths", "period", "deadline", "priority", "class", "criticality"},
                "a chain"))
      return;
    Chain c;
    c.name = r.name(n, p, "a chain").value_or("");
    bool has_list = static_cast<bool>(n["callbacks"]), has_paths = static_cast<bool>(n["paths"]);
    if (has_list == has_paths) {
      r.d.error(p, has_list ? "give either 'callbacks' (a linear chain) or 'paths' (a branching chain), not both"
                            : "missing required field 'callbacks' (or 'paths' for a branching chain) of a chain");
    } else if (has_list) {
      c.callbacks = r.names(n, "callbacks", p);
      if (c.callbacks.empty()) r.d.error(sub(p, "callbacks"), "a chain needs at least one callback");
    } else {
      YAML::Node paths = n["paths"];
      std::string pp = sub(p, "paths");
      if (!paths.IsSequence() || paths.size() == 0) {
        r.d.error(pp, "expected a non-empty list of paths (each a list of callbacks)");
      } else {
        for (std::size_t i = 0; i < paths.size(); ++i) {
          if (!paths[i].IsSequence() || paths[i].size() == 0) {
            r.d.error(at(pp, i), "expected a non-empty list of callbacks");
            continue;
          }
          for (std::size_t j = 0; j < paths[i].size(); ++j) {
            if (!paths[i][j].IsScalar()) {
              r.d.error(at(at(pp, i), j), "expected a callback name");
              break;
            }
            std::string name = paths[i][j].Scalar();
            r.check_name(name, at(at(pp, i), j));
            if (std::find(c.callbacks.begin(), c.callbacks.end(), name) == c.callbacks.end())
              c.callbacks.push_back(name);
            if (j > 0) {
              Hop h{paths[i][j - 1].Scalar(), name};
              if (std::find(c.hops.begin(), c.hops.end(), h) == c.hops.end()) c.hops.push_back(h);
            }
          }
        }
      }
    }
    // a fraction or rate is taken at its floor: the shortest time between the chain's releases
    c.period = r.period(n, "period", p, "a chain").value_or(ExactPeriod{}).whole();
    c.deadline = r.duration(n, "deadline", p, false, "a chain").value_or(0);
    if (auto pr = r.integer(n, "priority", p, false, "a chain", -limits::kMaxPriority, limits::kMaxPriority))
      c.priority = static_cast<int>(*pr);
    if (auto k = r.scalar(n, "class", p, false, "a chain")) {
      if (auto v = criticality_class_from(*k)) c.criticality_class = *v;
      else r.d.error(sub(p, "class"), "unknown chain class '" + *k + "' (rt or be)");
    }
    if (auto cr = r.integer(n, "criticality", p, false, "a chain", 0, limits::kMaxCriticality))
      c.criticality = static_cast<int>(*cr);
    m.chains.push_back(c);
  });
}

void parse_communication(Reader& r, const YAML::Node& root, Model& m) {
  YAML::Node n = root["communication"];
  if (!n) return;
  const std::string p = "communication";
  if (!r.keys(n, p, {"intra_process", "same_host", "remote", "measurements"}, "the communication section")) return;
  auto cost = [&](const char* key, CommCost& out) {
    YAML::Node c = n[key];
    if (!c) return;
    std::string q = sub(p, key);
    if (!r.keys(c, q, {"fixed", "per_kib"}, "a communication cost")) return;
    out.fixed = r.duration(c, "fixed", q, false, "a communication cost", true).value_or(0);
    out.per_kib = r.duration(c, "per_kib", q, false, "a communication cost", true).value_or(0);
  };
  cost("intra_process", m.communication.intra_process);
  cost("same_host", m.communication.same_host);
  cost("remote", m.communication.remote);
  YAML::Node ms = n["measurements"];
  std::string mp = sub(p, "measurements");
  if (ms && !ms.IsSequence()) r.d.error(mp, "expected a list of measurements");
  for (std::size_t i = 0; ms && ms.IsSequence() && i < ms.size(); ++i) {
    std::string q = at(mp, i);
    if (!r.keys(ms[i], q, {"kind", "size", "latency"}, "a measurement")) continue;
    CommMeasurement cm;
    if (auto k = r.scalar(ms[i], "kind", q, true, "a measurement")) {
      if (auto v = comm_kind_from(*k)) cm.kind = *v;
      else r.d.error(sub(q, "kind"), "unknown communication kind '" + *k + "' (intra_process, same_host, remote)");
    }
    if (!ms[i]["size"]) r.d.error(q, "missing required field 'size' of a measurement");
    cm.size = r.size(ms[i], "size", q, "a measurement").value_or(0);
    cm.latency = r.duration(ms[i], "latency", q, true, "a measurement").value_or(0);
    m.communication.measurements.push_back(cm);
  }
}

// Is `field` the path `under` or inside it ("a[1].b" is inside "a[1]" and "a")?
bool inside(const std::string& field, const std::string& under) {
  if (under.empty() || field.compare(0, under.size(), under) != 0) return false;
  return field.size() == under.size() || field[under.size()] == '.' || field[under.size()] == '[';
}

// Every model parse of a process appends "<pid> <file>" to the file named by
// CHAINRT_MODEL_LOAD_LOG when it is set: how tests count that a command parses its model once per
// process (docs/runtime.md). One write(2) of O_APPEND per parse, so that processes can share it.
void note_parse(const std::string& file) {
  const char* log = std::getenv("CHAINRT_MODEL_LOAD_LOG");
  if (log == nullptr || *log == '\0') return;
  const int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string line = std::to_string(::getpid()) + " " + file + "\n";
  [[maybe_unused]] const auto n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

Model parse(const std::string& text, const std::string& file) {
  note_parse(file);
  SourceMap places;
  Diagnostics diags(file, &places);
  if (!within_limits(text, diags)) throw ModelError(diags.list());
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diags.error_at({e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
    throw ModelError(diags.list());
  }
  Model m;
  if (!root || root.IsNull()) {
    diags.error_at({1, 1}, "", "the file is empty (expected a model: name, callbacks, chains, ...)");
    throw ModelError(diags.list());
  }
  record_places(root, "", places, diags);
  Reader r{diags};
  if (!r.keys(root, "",
              {"chainrt", "name", "deadlines", "hosts", "executors", "nodes", "callback_groups", "topics",
               "services", "callbacks", "chains", "communication"},
              "a model")) {
    throw ModelError(diags.list());
  }
  if (auto v = r.integer(root, "chainrt", "", false, "a model"); v && *v != 1)
    diags.error("chainrt", "unsupported format version " + std::to_string(*v) + " (this chainrt reads version 1)");
  m.name = r.ref(root, "name", "", false, "a model").value_or("");
  if (auto d = r.scalar(root, "deadlines", "", false, "a model")) {
    if (*d == "constrained") m.constrained_deadlines = true;
    else if (*d == "arbitrary") m.constrained_deadlines = false;
    else diags.error("deadlines", "unknown deadline model '" + *d + "' (constrained or arbitrary)");
  }
  for (const char* section : {"callbacks", "chains"})
    if (!root[section]) diags.error("", std::string("missing required section '") + section + "'");
  parse_hosts(r, root, m);
  parse_executors(r, root, m);
  parse_nodes_groups_topics(r, root, m);
  parse_callbacks(r, root, m);
  parse_chains(r, root, m);
  parse_communication(r, root, m);
  // Cross-references are checked even when fields are wrong, so that one `check` shows every
  // problem of the file; a validation finding about a field that already has an error (or lies
  // inside one) is left out, as it would only repeat it.
  Diagnostics checked(file, &places);
  detail::validate_model(m, checked, diags.empty());
  if (diags.empty() && checked.empty()) return m;
  std::vector<Diagnostic> all = diags.list();
  for (const auto& c : checked.list()) {
    bool repeat = std::any_of(diags.list().begin(), diags.list().end(),
                              [&](const Diagnostic& d) { return inside(c.field, d.field); });
    if (!repeat) all.push_back(c);
  }
  std::stable_sort(all.begin(), all.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::make_pair(a.line, a.column) < std::make_pair(b.line, b.column);
  });
  throw ModelError(std::move(all));
}

// ---- writer --------------------------------------------------------------------------------

void emit_names(YAML::Emitter& out, const char* key, const std::vector<std::string>& names) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& n : names) out << n;
  out << YAML::EndSeq;
}

void emit_cores(YAML::Emitter& out, const std::vector<int>& cores) {
  if (cores.empty()) return;
  out << YAML::Key << "cores" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int c : cores) out << c;
  out << YAML::EndSeq;
}

void emit_sched(YAML::Emitter& out, const std::optional<int>& prio, const std::optional<Reservation>& res) {
  if (prio) out << YAML::Key << "priority" << YAML::Value << *prio;
  if (res) {
    out << YAML::Key << "reservation" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "budget"
        << YAML::Value << format_duration(res->budget) << YAML::Key << "period" << YAML::Value
        << format_duration(res->period) << YAML::EndMap;
  }
}

void emit_cost(YAML::Emitter& out, const char* key, const CommCost& c) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "fixed" << YAML::Value
      << format_duration(c.fixed) << YAML::Key << "per_kib" << YAML::Value << format_duration(c.per_kib)
      << YAML::EndMap;
}

void emit_accelerators(YAML::Emitter& out, const std::vector<Accelerator>& list) {
  if (list.empty()) return;
  out << YAML::Key << "accelerators" << YAML::Value << YAML::BeginSeq;
  for (const auto& a : list) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << a.name << YAML::Key << "access" << YAML::Value
        << to_string(a.access);
    if (a.server_priority) out << YAML::Key << "priority" << YAML::Value << *a.server_priority;
    emit_cores(out, a.server_cores);
    if (a.server_overhead) out << YAML::Key << "overhead" << YAML::Value << format_duration(a.server_overhead);
    if (a.block_preemption) out << YAML::Key << "preemption" << YAML::Value << "block";
    if (a.device != AcceleratorDevice::Emulated) out << YAML::Key << "device" << YAML::Value << to_string(a.device);
    if (a.cuda_device) out << YAML::Key << "cuda_device" << YAML::Value << a.cuda_device;
    if (!a.stream_priorities.empty()) {
      out << YAML::Key << "stream_priorities" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (int p : a.stream_priorities) out << p;
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_segments(YAML::Emitter& out, const std::vector<AcceleratorSegment>& list) {
  if (list.empty()) return;
  out << YAML::Key << "accelerator_segments" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : list) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "accelerator" << YAML::Value << s.accelerator;
    auto opt = [&](const char* key, Duration v) {
      if (v) out << YAML::Key << key << YAML::Value << format_duration(v);
    };
    auto best = [&](const char* key, const std::optional<Duration>& v) {
      if (v) out << YAML::Key << key << YAML::Value << format_duration(*v);
    };
    opt("after", s.after);
    opt("copy_in", s.copy_in);
    out << YAML::Key << "kernel" << YAML::Value << format_duration(s.kernel);
    opt("copy_out", s.copy_out);
    best("copy_in_bcet", s.copy_in_bcet);
    best("kernel_bcet", s.kernel_bcet);
    best("copy_out_bcet", s.copy_out_bcet);
    best("block", s.block);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

Model load_model_from_string(const std::string& yaml, const std::string& file_name) { return parse(yaml, file_name); }

// Reads at most kMaxModelBytes + 1 bytes, so that a device (/dev/zero) or a huge file costs
// bounded memory; a directory or an unreadable path is one clear error. A FIFO, a socket or a
// terminal is read without blocking on its opening, and refused when it gives nothing for kIdleMs
// (a FIFO that no program opens for writing included): a model never waits forever for its input.
Model load_model(const std::string& path) {
  constexpr int kIdleMs = 10'000;
  auto fail = [&](const std::string& why) { return ModelError({Diagnostic{path, 0, 0, "", why}}); };
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    throw fail(std::string("cannot open the file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw fail("is a directory, not a model file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw fail(std::string("cannot open the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string text;
  std::vector<char> buf(1 << 16);
  int waited_ms = 0;
  while (static_cast<std::int64_t>(text.size()) <= limits::kMaxModelBytes) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      text.append(buf.data(), static_cast<std::size_t>(n));
    } else if (n == 0) {
      // A FIFO reads as empty until its writer opens it: wait for one for a bounded time.
      if (!S_ISFIFO(st.st_mode) || !text.empty()) break;
      if (waited_ms >= kIdleMs)
        throw fail("a FIFO that no program wrote into for " + std::to_string(kIdleMs / 1000) + " s; a model is a file");
      ::poll(nullptr, 0, 50);
      waited_ms += 50;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, kIdleMs);
      if (r == 0)
        throw fail("nothing to read for " + std::to_string(kIdleMs / 1000) +
                   " s (a FIFO or device that gives no model); a model is a file");
      if (r < 0 && errno != EINTR) throw fail(std::string("cannot read the file: ") + std::strerror(errno));
    } else if (errno != EINTR) {
      throw fail(std::string("cannot read the file: ") + std::strerror(errno));
    }
  }
  if (static_cast<std::int64_t>(text.size()) > limits::kMaxModelBytes)
    throw fail("the file is larger than " + std::to_string(limits::kMaxModelBytes >> 20) +
               " MiB; chainrt refuses larger models");
  return parse(text, path);
}

namespace {

// The sections of a saved model, in the file's order.
void emit_hosts(YAML::Emitter& out, const Model& m) {
  out << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
  for (const auto& h : m.hosts) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << h.name << YAML::Key << "cores"
        << YAML::Value << h.cores;
    if (!h.blackout.empty()) {
      out << YAML::Key << "blackout" << YAML::Value << YAML::BeginSeq;
      for (const auto& b : h.blackout)
        out << YAML::BeginMap << YAML::Key << "window" << YAML::Value << format_duration(b.window) << YAML::Key
            << "max" << YAML::Value << format_duration(b.max) << YAML::EndMap;
      out << YAML::EndSeq;
    }
    emit_accelerators(out, h.accelerators);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_executors(YAML::Emitter& out, const Model& m) {
  out << YAML::Key << "executors" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : m.executors) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << e.name << YAML::Key << "host" << YAML::Value
        << e.host << YAML::Key << "process" << YAML::Value << e.process << YAML::Key << "policy" << YAML::Value
        << to_string(e.policy);
    if (e.priority) out << YAML::Key << "priority" << YAML::Value << *e.priority;
    if (e.dispatch_overhead)
      out << YAML::Key << "dispatch_overhead" << YAML::Value << format_duration(e.dispatch_overhead);
    std::vector<const Thread*> own;
    for (const auto& t : e.threads)
      if (t.thread_class.empty()) own.push_back(&t);
    if (!own.empty()) {
      out << YAML::Key << "threads" << YAML::Value << YAML::BeginSeq;
      for (const Thread* t : own) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t->name;
        emit_cores(out, t->cores);
        emit_sched(out, t->fifo_priority, t->reservation);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    if (!e.thread_classes.empty()) {
      out << YAML::Key << "thread_classes" << YAML::Value << YAML::BeginSeq;
      for (const auto& tc : e.thread_classes) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << tc.name << YAML::Key << "kind"
            << YAML::Value << to_string(tc.kind);
        emit_cores(out, tc.cores);
        emit_sched(out, tc.fifo_priority, tc.reservation);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// The derived topics of services (Topic::service) are the loader's, not the file's.
bool derived_topic(const Model& m, const std::string& topic) {
  const Topic* t = m.topic(topic);
  return t != nullptr && !t->service.empty();
}

void emit_callback(YAML::Emitter& out, const Model& m, const Callback& c) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name << YAML::Key << "kind" << YAML::Value
      << to_string(c.kind) << YAML::Key << "node" << YAML::Value << c.node << YAML::Key << "group" << YAML::Value
      << c.group << YAML::Key << "wcet" << YAML::Value << format_duration(c.wcet);
  if (c.bcet) out << YAML::Key << "bcet" << YAML::Value << format_duration(*c.bcet);
  if (c.priority) out << YAML::Key << "priority" << YAML::Value << *c.priority;
  if (!c.affinity.empty()) emit_names(out, "affinity", c.affinity);
  if (c.kind == CallbackKind::Timer) {
    out << YAML::Key << "period" << YAML::Value << format_period(c.grid_period());
    if (c.offset) out << YAML::Key << "offset" << YAML::Value << format_duration(c.offset);
    if (c.jitter) out << YAML::Key << "jitter" << YAML::Value << format_duration(c.jitter);
    if (c.phase != TimerPhase::Free) out << YAML::Key << "phase" << YAML::Value << to_string(c.phase);
    if (c.period_tolerance)
      out << YAML::Key << "period_tolerance" << YAML::Value << format_duration(*c.period_tolerance);
  }
  const bool service_kind = c.kind == CallbackKind::Service || c.kind == CallbackKind::Client;
  if (!c.topic.empty() && !service_kind) out << YAML::Key << "topic" << YAML::Value << c.topic;
  if (!c.service.empty()) out << YAML::Key << "service" << YAML::Value << c.service;
  if (c.queue_depth != 1) out << YAML::Key << "queue_depth" << YAML::Value << c.queue_depth;
  if (!c.fuses.empty()) emit_names(out, "fuses", c.fuses);
  std::vector<std::string> publishes;
  for (const auto& t : c.publishes)
    if (!derived_topic(m, t)) publishes.push_back(t);
  if (!publishes.empty()) emit_names(out, "publishes", publishes);
  if (!c.calls.empty()) emit_names(out, "calls", c.calls);
  emit_segments(out, c.accelerator_segments);
  out << YAML::EndMap;
}

void emit_chains(YAML::Emitter& out, const Model& m) {
  out << YAML::Key << "chains" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : m.chains) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name;
    if (c.is_linear()) {
      emit_names(out, "callbacks", c.callbacks);
    } else {
      out << YAML::Key << "paths" << YAML::Value << YAML::BeginSeq;
      for (const auto& path : c.paths()) {
        out << YAML::Flow << YAML::BeginSeq;
        for (const auto& n : path) out << n;
        out << YAML::EndSeq;
      }
      out << YAML::EndSeq;
    }
    out << YAML::Key << "period" << YAML::Value << format_duration(c.period) << YAML::Key << "deadline"
        << YAML::Value << format_duration(c.deadline);
    if (c.priority) out << YAML::Key << "priority" << YAML::Value << *c.priority;
    out << YAML::Key << "class" << YAML::Value << to_string(c.criticality_class);
    if (c.criticality) out << YAML::Key << "criticality" << YAML::Value << c.criticality;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_communication(YAML::Emitter& out, const Communication& cm) {
  if (!(cm == Communication{})) {
    out << YAML::Key << "communication" << YAML::Value << YAML::BeginMap;
    emit_cost(out, "intra_process", cm.intra_process);
    emit_cost(out, "same_host", cm.same_host);
    emit_cost(out, "remote", cm.remote);
    if (!cm.measurements.empty()) {
      out << YAML::Key << "measurements" << YAML::Value << YAML::BeginSeq;
      for (const auto& x : cm.measurements)
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << to_string(x.kind) << YAML::Key
            << "size" << YAML::Value << format_size(x.size) << YAML::Key << "latency" << YAML::Value
            << format_duration(x.latency) << YAML::EndMap;
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
}

}  // namespace

std::string save_model_to_string(const Model& m) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "chainrt" << YAML::Value << 1;
  if (!m.name.empty()) out << YAML::Key << "name" << YAML::Value << m.name;
  out << YAML::Key << "deadlines" << YAML::Value << (m.constrained_deadlines ? "constrained" : "arbitrary");

  emit_hosts(out, m);
  emit_executors(out, m);
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& n : m.nodes)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name << YAML::Key << "executor"
        << YAML::Value << n.executor << YAML::EndMap;
  out << YAML::EndSeq;

  out << YAML::Key << "callback_groups" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : m.groups)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << g.name << YAML::Key << "type"
        << YAML::Value << to_string(g.type) << YAML::Key << "node" << YAML::Value << g.node << YAML::EndMap;
  out << YAML::EndSeq;

  out << YAML::Key << "topics" << YAML::Value << YAML::BeginSeq;
  for (const auto& t : m.topics)
    if (t.service.empty())
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name << YAML::Key << "size"
          << YAML::Value << format_size(t.size) << YAML::EndMap;
  out << YAML::EndSeq;
  if (!m.services.empty()) {
    out << YAML::Key << "services" << YAML::Value << YAML::BeginSeq;
    for (const auto& s : m.services)
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name << YAML::Key
          << "request_size" << YAML::Value << format_size(s.request_size) << YAML::Key << "response_size"
          << YAML::Value << format_size(s.response_size) << YAML::EndMap;
    out << YAML::EndSeq;
  }

  out << YAML::Key << "callbacks" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : m.callbacks) emit_callback(out, m, c);
  out << YAML::EndSeq;

  emit_chains(out, m);
  emit_communication(out, m.communication);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void save_model(const Model& model, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw ModelError({Diagnostic{path, 0, 0, "", "cannot write the file"}});
  out << save_model_to_string(model);
  if (!out) throw ModelError({Diagnostic{path, 0, 0, "", "write failed"}});
}

}  // namespace chainrt
