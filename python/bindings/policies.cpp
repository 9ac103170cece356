// chainrt._core, part "policies": the executor policies' descriptors (sched/policy.hpp), the
// one list of policies the Python package reads (commands' --policy choices, the rclpy
// executor, the model's policy names), with each policy's default analyses as the analyses
// declare them.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "chainrt/analysis/analysis.hpp"
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
          // The default analyses, as the analyses declare them (default_for), and why one is missing.
          std::string why_single, why_multi;
          const auto* single = default_analysis(d.policy, false, &why_single);
          const auto* multi = default_analysis(d.policy, true, &why_multi);
          e["analysis_single"] = single ? nb::object(nb::str(single->name().c_str())) : nb::none();
          e["analysis_multi"] = multi ? nb::object(nb::str(multi->name().c_str())) : nb::none();
          e["orders_by_priority"] = d.orders_by_priority;
          e["no_analysis"] = !single ? nb::object(nb::str(why_single.c_str()))
                             : !multi ? nb::object(nb::str(why_multi.c_str()))
                                      : nb::none();
          out.append(e);
        }
        return out;
      },
      "The executor policies (sched/policy.hpp), in their canonical order: a dict each with name, "
      "description, admission rule, default analysis for single- and multi-threaded executors "
      "(None: none is sound, no_analysis says why), whether it orders by the callbacks' priorities.");
}
