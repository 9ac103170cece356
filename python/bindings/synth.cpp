// chainrt._core, part "synth": PiCAS configuration synthesis and its exhaustive baseline
// (synth/include/chainrt/synth/synthesize.hpp). The analysis result of the chosen model is
// not repeated here: callers analyse the returned model with `analyze` (one JSON layout).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "chainrt/model/model.hpp"
#include "chainrt/synth/synthesize.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

namespace {

synth::ExecutorLayout layout_of(const std::string& s) {
  if (s == "auto") return synth::ExecutorLayout::Auto;
  if (s == "per-chain") return synth::ExecutorLayout::PerChain;
  if (s == "per-core") return synth::ExecutorLayout::PerCore;
  throw std::invalid_argument("unknown executor layout '" + s + "' (auto, per-chain, per-core)");
}

synth::Objective objective_of(const std::string& s) {
  if (s == "slack") return synth::Objective::Slack;
  if (s == "critical") return synth::Objective::Critical;
  throw std::invalid_argument("unknown objective '" + s + "' (slack, critical)");
}

const char* layout_name(synth::ExecutorLayout l) {
  return l == synth::ExecutorLayout::PerChain ? "per-chain" : l == synth::ExecutorLayout::PerCore ? "per-core" : "auto";
}

}  // namespace

CHAINRT_BINDINGS(synth, 30) {
  m.def(
      "_synthesize",
      [](const Model& model, int cores, const std::string& search, const std::string& layout,
         const std::string& objective, const std::string& analysis, int fifo_base, double capacity,
         std::uint64_t max_configurations) {
        synth::Options o;
        o.cores = cores;
        o.layout = layout_of(layout);
        o.objective = objective_of(objective);
        o.analysis = analysis;
        o.fifo_base = fifo_base;
        o.capacity = capacity;
        if (search != "picas" && search != "exhaustive")
          throw std::invalid_argument("unknown search '" + search + "' (picas, exhaustive)");
        synth::Synthesis s;
        {
          nb::gil_scoped_release release;
          s = search == "picas" ? synth::picas(model, o) : synth::exhaustive(model, o, max_configurations);
        }
        nb::dict out;
        out["model"] = nb::cast(s.model);
        out["analysis"] = s.score.analysis;
        out["applicable"] = s.score.applicable;
        out["why"] = s.score.why;
        out["schedulable"] = s.score.schedulable;
        out["schedulable_chains"] = s.score.schedulable_chains;
        out["layout"] = std::string(layout_name(s.layout));
        out["decisions"] = s.decisions;
        out["evaluated"] = s.evaluated;
        return out;
      },
      nb::arg("model"), nb::arg("cores") = 0, nb::arg("search") = "picas", nb::arg("layout") = "auto",
      nb::arg("objective") = "slack", nb::arg("analysis") = "", nb::arg("fifo_base") = 10,
      nb::arg("capacity") = 1.0, nb::arg("max_configurations") = 2'000'000,
      "PiCAS synthesis (search='picas') or the exhaustive baseline: a dict with the synthesized "
      "`model`, the judging `analysis`, `schedulable`, `layout`, `decisions` and `evaluated`. "
      "ValueError when the model cannot be synthesized.");
}
