// chainrt._core, part "policies": the executor policies' descriptors (sched/policy.hpp), the
// one list of policies the Python package reads (commands' --policy choices, the rclpy
// executor, the model's policy names).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/policy.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

CHAINRT_BINDINGS(policies, 1) {
  m.def(
      "policies",
      [] {
        nb::list out;
        for (const auto& d : sched::policies()) {
          nb::dict e;
          e["name"] = d.name;
          e["description"] = d.description;
          e["admission"] = sched::to_string(d.admission);
          e["analysis_single"] = d.analysis_single ? nb::object(nb::str(d.analysis_single)) : nb::none();
          e["analysis_multi"] = d.analysis_multi ? nb::object(nb::str(d.analysis_multi)) : nb::none();
          e["orders_by_priority"] = d.orders_by_priority;
          e["no_analysis"] = d.no_analysis ? nb::object(nb::str(d.no_analysis)) : nb::none();
          out.append(e);
        }
        return out;
      },
      "The executor policies (sched/policy.hpp), in their canonical order: a dict each with name, "
      "description, admission rule, default analysis for single- and multi-threaded executors "
      "(None: none is sound, no_analysis says why), whether it orders by the callbacks' priorities.");
}
