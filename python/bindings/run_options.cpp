// chainrt._core, part "run_options": the options of a run on real ROS 2 (runtime/run_options.def),
// the one list `chainrt run` builds its arguments and the run specification it writes from
// (python/chainrt/runtime.py). Only the table: reading values is chainrt-run's (run_spec.cpp).
#include <nanobind/stl/string.h>

#include "chainrt/runtime/run_options.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

CHAINRT_BINDINGS(run_options, 1) {
  m.def(
      "run_options",
      [] {
        nb::list out;
        for (const auto& o : runtime::kRunOptions) {
          nb::dict e;
          e["key"] = std::string(o.key);
          e["flag"] = runtime::run_option_flag(o.key);
          e["kind"] = std::string(o.kind_name);
          e["scope"] = o.scope == runtime::RunOptionScope::User ? "user" : "process";
          e["default"] = o.default_value.empty() ? nb::object(nb::none()) : nb::object(nb::str(o.default_value.data(), o.default_value.size()));
          e["help"] = std::string(o.help);
          out.append(e);
        }
        return out;
      },
      "The options of a run on real ROS 2 (runtime/run_options.def), in table order: a dict each with "
      "key, flag (chainrt-run's), kind, scope ('user': an option of `chainrt run` too; 'process': set by "
      "chainrt run itself), default (None: none) and help.");
}
