// A run of a model on real ROS 2 as one value: the model (its text, or its file) and the options
// of run_options.def. `chainrt run` parses the model once, writes one run specification (JSON,
// docs/runtime.md) and starts one chainrt-run per process with it; each chainrt-run reads it with
// read_run_spec and parses the model once more (load_run_model). A person runs `chainrt-run
// MODEL --option ...`: the same table, the same checks (parse_run_command_line).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/runtime/run_options.hpp"

namespace chainrt::runtime {

struct RunSpec {
  std::string model_file;                 // the model's file (diagnostics name it)
  std::optional<std::string> model_text;  // the model itself; none: read model_file
  ModelRunOptions run;
  std::string json_out;                   // the report as JSON here ("-": stdout); "": a table
  bool list = false;                      // print the model's processes instead of running
  Duration lame_period = 0;               // LaME's controller every lame_period; 0 = none
  Duration lame_reservation_period = 0;
  bool help = false;                      // -h / --help on the command line
};

// The table's defaults (run_options.def) over RunSpec's own initial values.
RunSpec default_run_spec();

// Sets the option `key` (run_options.def) from its text `value` (a flag: "true" or "false"; a
// repeatable option: one more value). std::invalid_argument with one line naming the flag.
void set_run_option(RunSpec& spec, std::string_view key, const std::string& value);

// A run specification: a JSON (or YAML) mapping {"model_file": NAME, "model": TEXT, "options":
// {key: value or [values]}}, over the defaults. The one reader of a specification;
// std::invalid_argument with one line on a bad one (the model itself is parsed by load_run_model).
RunSpec read_run_spec(const std::string& text);

// chainrt-run's command line: `MODEL` or `--spec FILE`, then options (`--key value`, later ones
// over the specification's). std::invalid_argument with one line on a bad one.
RunSpec parse_run_command_line(int argc, const char* const* argv);

// The model of the run, parsed once: the specification's text, else its file (ModelError).
Model load_run_model(const RunSpec& spec);

// The usage of chainrt-run (every option of the table with its help).
std::string run_usage();

}  // namespace chainrt::runtime
