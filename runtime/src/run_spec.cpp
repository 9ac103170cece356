// A run of a model on real ROS 2 as one value (run_spec.hpp): the options of run_options.def read
// from a run specification or a command line.
#include "chainrt/runtime/run_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "chainrt/model/policy_list.hpp"
#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::runtime {

namespace {

// The member type each kind sets (checked against run_options.def at compile time).
template <RunOptionKind K> struct KindType;
template <> struct KindType<RunOptionKind::Text> { using type = std::string; };
template <> struct KindType<RunOptionKind::Time> { using type = Duration; };
template <> struct KindType<RunOptionKind::PositiveTime> { using type = Duration; };
template <> struct KindType<RunOptionKind::OptionalPeriod> { using type = Duration; };
template <> struct KindType<RunOptionKind::PolicyName> { using type = std::optional<Policy>; };
template <> struct KindType<RunOptionKind::ThreadCount> { using type = std::optional<int>; };
template <> struct KindType<RunOptionKind::FifoPriority> { using type = std::optional<int>; };
template <> struct KindType<RunOptionKind::On> { using type = bool; };
template <> struct KindType<RunOptionKind::Off> { using type = bool; };
template <> struct KindType<RunOptionKind::WcetSteps> { using type = std::vector<WcetStep>; };

[[noreturn]] void bad(std::string_view key, const std::string& why) {
  throw std::invalid_argument(run_option_flag(key) + ": " + why);
}

Duration time_value(std::string_view key, const std::string& v, bool positive) {
  std::string why;
  const auto d = parse_duration(v, &why);
  if (!d) bad(key, "'" + v + "' is not a duration: " + why);
  if (*d < 0 || (positive && *d == 0)) bad(key, "'" + v + "' must be " + (positive ? "positive" : "zero or positive"));
  return *d;
}

int int_value(std::string_view key, const std::string& v, int lo, int hi, const char* what) {
  std::size_t used = 0;
  long n = 0;
  try {
    n = std::stol(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() || n < lo || n > hi)
    bad(key, "'" + v + "' is not " + what + " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return static_cast<int>(n);
}

bool flag_value(std::string_view key, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  bad(key, "'" + v + "': want true or false");
}

// AT:FACTOR, e.g. 90s:1.64.
WcetStep wcet_step(std::string_view key, const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos) bad(key, "expected AT:FACTOR, e.g. 90s:1.64");
  WcetStep st;
  st.at = time_value(key, v.substr(0, colon), false);
  std::size_t used = 0;
  try {
    st.factor = std::stod(v.substr(colon + 1), &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() - colon - 1 || !(st.factor > 0) || st.factor > 1000)
    bad(key, "the factor must be a number in (0, 1000]");
  return st;
}

template <RunOptionKind K, class T>
void assign(T& member, std::string_view key, const std::string& v) {
  static_assert(std::is_same_v<T, typename KindType<K>::type>,
                "run_options.def: an option's member does not have the type of its kind");
  using enum RunOptionKind;
  if constexpr (K == Text) member = v;
  else if constexpr (K == Time) member = time_value(key, v, false);
  else if constexpr (K == PositiveTime || K == OptionalPeriod) member = time_value(key, v, true);
  else if constexpr (K == PolicyName) {
    member = policy_from(v);
    if (!member) bad(key, "unknown policy '" + v + "' (" + policy_list() + ")");
  } else if constexpr (K == ThreadCount) member = int_value(key, v, 1, static_cast<int>(sched::kMaxThreads), "a thread count");
  else if constexpr (K == FifoPriority) member = int_value(key, v, 1, 99, "a SCHED_FIFO priority");
  else if constexpr (K == On) member = flag_value(key, v);
  else if constexpr (K == Off) member = !flag_value(key, v);
  else if constexpr (K == WcetSteps) member.push_back(wcet_step(key, v));
}

const RunOptionInfo* option_info(std::string_view key) {
  for (const auto& o : kRunOptions)
    if (o.key == key) return &o;
  return nullptr;
}

// What holds after every option is set: the steps in order of time, the topics under the
// namespace unless a topic prefix is given.
void finish(RunSpec& s) {
  std::stable_sort(s.run.wcet_steps.begin(), s.run.wcet_steps.end(),
                   [](const WcetStep& x, const WcetStep& y) { return x.at < y.at; });
  if (s.run.topic_prefix.empty()) s.run.topic_prefix = s.run.ns;
}

std::string scalar_of(std::string_view key, const YAML::Node& n) {
  if (!n.IsScalar()) bad(key, "want a single value");
  return n.Scalar();
}

// The specification `text` over `s` (not finished).
void apply_spec(RunSpec& s, const std::string& text) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("the run specification is not JSON: " + e.msg);
  }
  if (!doc.IsMap()) throw std::invalid_argument("the run specification is not a mapping");
  for (const auto& kv : doc) {
    const std::string k = kv.first.as<std::string>();
    if (k == "model_file") s.model_file = scalar_of("model_file", kv.second);
    else if (k == "model") s.model_text = scalar_of("model", kv.second);
    else if (k == "options") {
      if (!kv.second.IsMap()) throw std::invalid_argument("the run specification's options are not a mapping");
      for (const auto& o : kv.second) {
        const std::string key = o.first.as<std::string>();
        if (o.second.IsNull()) continue;  // not given
        if (o.second.IsSequence()) {
          if (!option_info(key) || option_info(key)->kind != RunOptionKind::WcetSteps) bad(key, "want a single value");
          for (const auto& v : o.second) set_run_option(s, key, scalar_of(key, v));
        } else {
          set_run_option(s, key, scalar_of(key, o.second));
        }
      }
    } else {
      throw std::invalid_argument("the run specification has an unknown key '" + k + "'");
    }
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::invalid_argument("cannot read the run specification " + path);
  std::ostringstream text;
  text << f.rdbuf();
  if (!f && !f.eof()) throw std::invalid_argument("cannot read the run specification " + path);
  return text.str();
}

}  // namespace

RunSpec default_run_spec() {
  RunSpec s;
  for (const auto& o : kRunOptions)
    if (!o.default_value.empty() && o.kind != RunOptionKind::OptionalPeriod)
      set_run_option(s, o.key, std::string(o.default_value));
  return s;
}

void set_run_option(RunSpec& s, std::string_view key, const std::string& value) {
#define CHAINRT_RUN_OPTION(k, Kind, member, scope, def, help) \
  if (key == #k) return assign<RunOptionKind::Kind>(s.member, key, value);
#include "chainrt/runtime/run_options.def"
#undef CHAINRT_RUN_OPTION
  throw std::invalid_argument("unknown option " + run_option_flag(key));
}

RunSpec read_run_spec(const std::string& text) {
  RunSpec s = default_run_spec();
  apply_spec(s, text);
  finish(s);
  return s;
}

RunSpec parse_run_command_line(int argc, const char* const* argv) {
  RunSpec s = default_run_spec();
  std::vector<std::pair<std::string, std::string>> given;  // (key, value) in order
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      s.help = true;
      return s;
    }
    if (a.size() < 2 || a[0] != '-') {
      s.model_file = a;
      continue;
    }
    auto has_value = [&] { return i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--"; };
    if (a == "--spec") {
      if (!has_value()) throw std::invalid_argument("--spec needs a value");
      apply_spec(s, read_file(argv[++i]));
      continue;
    }
    const RunOptionInfo* o = nullptr;
    for (const auto& row : kRunOptions)
      if (run_option_flag(row.key) == a) o = &row;
    if (!o) throw std::invalid_argument("unknown option " + a);
    if (o->kind == RunOptionKind::On || o->kind == RunOptionKind::Off) given.emplace_back(o->key, "true");
    else if (o->kind == RunOptionKind::OptionalPeriod && !has_value()) given.emplace_back(o->key, o->default_value);
    else if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    else given.emplace_back(o->key, argv[++i]);
  }
  // the command line's options over the specification's, wherever --spec stands
  for (const auto& [key, value] : given) set_run_option(s, key, value);
  finish(s);
  return s;
}

Model load_run_model(const RunSpec& spec) {
  if (spec.model_text) return load_model_from_string(*spec.model_text, spec.model_file.empty() ? "<run specification>" : spec.model_file);
  return load_model(spec.model_file);
}

std::string run_usage() {
  std::string out = "usage: chainrt-run MODEL [OPTION]...\n       chainrt-run --spec FILE [OPTION]...\n";
  out += "  --spec FILE  the run specification (the model and its options, as `chainrt run` writes it)\n";
  for (const auto& o : kRunOptions) {
    std::string flag = run_option_flag(o.key);
    if (o.kind == RunOptionKind::OptionalPeriod) flag += " [PERIOD]";
    else if (o.kind != RunOptionKind::On && o.kind != RunOptionKind::Off)
      flag += o.kind == RunOptionKind::WcetSteps ? " AT:FACTOR" : " VALUE";
    out += "  " + flag + "  " + std::string(o.help);
    if (o.kind == RunOptionKind::PolicyName) out += " (" + policy_list() + ")";
    if (!o.default_value.empty() && o.kind != RunOptionKind::OptionalPeriod)
      out += " (default " + std::string(o.default_value) + ")";
    out += "\n";
  }
  return out;
}

}  // namespace chainrt::runtime
