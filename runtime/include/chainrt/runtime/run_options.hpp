// The options of a run of a model on real ROS 2 (run_options.def) as a table that needs no ROS 2:
// what chainrt._core gives Python (`chainrt run` builds its arguments and the run specification it
// writes from it) and what chainrt-run's usage lists. run_spec.hpp reads values into a RunSpec.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chainrt::runtime {

// How an option's value is read and checked.
enum class RunOptionKind {
  Text,            // any string
  Time,            // a duration >= 0 ("500ms", "2s", "123ns")
  PositiveTime,    // a duration > 0
  OptionalPeriod,  // a duration > 0; on a command line the value may be left out (then the default)
  PolicyName,      // a policy's name (policies.def)
  ThreadCount,     // an integer 1..64
  FifoPriority,    // a SCHED_FIFO priority 1..99
  On,              // a flag that sets its member (a specification's value: true or false)
  Off,             // a flag that clears its member
  WcetSteps,       // AT:FACTOR, repeatable (a specification's value: a list)
};

// Who gives an option: the user of `chainrt run` too, or `chainrt run` itself (per run or process).
enum class RunOptionScope { User, Process };

struct RunOptionInfo {
  std::string_view key;  // `--key` with '_' as '-' on a command line; the key in a specification
  RunOptionKind kind;
  std::string_view kind_name;
  RunOptionScope scope;
  std::string_view default_value;  // "" = none
  std::string_view help;
};

inline constexpr RunOptionInfo kRunOptions[] = {
#define CHAINRT_RUN_OPTION(key, Kind, member, scope, def, help) \
  {#key, RunOptionKind::Kind, #Kind, RunOptionScope::scope, def, help},
#include "chainrt/runtime/run_options.def"
#undef CHAINRT_RUN_OPTION
};

// The command-line flag of an option key ("no_thread_params" -> "--no-thread-params").
inline std::string run_option_flag(std::string_view key) {
  std::string f = "--";
  for (char c : key) f += c == '_' ? '-' : c;
  return f;
}

}  // namespace chainrt::runtime
