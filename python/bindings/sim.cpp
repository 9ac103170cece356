// chainrt._core, part "sim": the discrete-event simulator (sim/simulator.hpp). Results travel
// as JSON text (the same rendering as the CLI's --json and --trace), parsed in Python.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "chainrt/model/model.hpp"
#include "chainrt/sim/cache_only.hpp"
#include "chainrt/sim/simulator.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

namespace {
sim::ExecTime exec_from(const std::string& s) {
  if (s == "wcet") return sim::ExecTime::Wcet;
  if (s == "bcet") return sim::ExecTime::Bcet;
  if (s == "uniform") return sim::ExecTime::Uniform;
  if (s == "mix") return sim::ExecTime::Mix;
  throw std::invalid_argument("unknown execution-time mode '" + s + "' (wcet, bcet, uniform, mix)");
}

// The options both entry points take, checked the same way.
sim::SimOptions base_options(Duration duration, std::uint64_t seed, const std::optional<std::string>& policy,
                             std::optional<int> threads, const std::string& exec) {
  sim::SimOptions o;
  o.duration = duration;
  o.seed = seed;
  if (policy) {
    auto p = policy_from(*policy);
    if (!p) throw std::invalid_argument("unknown policy '" + *policy + "'");
    o.policy = p;
  }
  o.threads = threads;
  o.exec = exec_from(exec);
  return o;
}
}  // namespace

CHAINRT_BINDINGS(sim, 20) {
  m.def(
      "cache_only_charges",
      [](const Model& model) {
        std::vector<std::map<std::string, Duration>> out;
        for (const auto& set : sim::cache_only_charges(model)) {
          auto& mine = out.emplace_back();
          for (const sim::CacheOnlyCharge& c : set) mine[model.callbacks[c.callback].name] = c.charge;
        }
        return out;
      },
      nb::arg("model"),
      "Per implicit fusion set, {member callback: what the simulator charges a run of it that does not complete "
      "the set (a cache-only run: its BCET, ns)} (sim/cache_only.hpp).");
  m.def(
      "_simulate",
      [](const Model& model, Duration duration, std::uint64_t seed, std::optional<std::string> policy,
         std::optional<int> threads, const std::string& exec, const std::string& comm, bool trace,
         std::size_t trace_limit, std::map<std::string, Duration> offsets,
         std::map<std::string, Duration> release_delays, bool random_jitter, const std::string& timer_rule,
         bool global_threads) {
        sim::SimOptions o = base_options(duration, seed, policy, threads, exec);
        o.release_delays = std::move(release_delays);
        o.random_jitter = random_jitter;
        o.global_threads = global_threads;
        if (timer_rule == "rcl5") o.timer_rule = sched::TimerRule::Rcl5;
        else if (timer_rule != "rcl9")
          throw std::invalid_argument("unknown timer rule '" + timer_rule + "' (rcl9, rcl5)");
        if (comm == "sampled") o.comm = sim::CommDelay::Sampled;
        else if (comm != "fixed") throw std::invalid_argument("unknown comm mode '" + comm + "' (fixed, sampled)");
        o.trace = trace;
        o.trace_limit = trace_limit;
        o.offsets = std::move(offsets);
        sim::SimResult r;
        {
          nb::gil_scoped_release release;
          r = sim::simulate(model, o);
        }
        return std::make_pair(sim::result_to_json(r), trace ? sim::trace_to_json(model, r) : std::string());
      },
      nb::arg("model"), nb::arg("duration_ns"), nb::arg("seed") = 1, nb::arg("policy") = nb::none(),
      nb::arg("threads") = nb::none(), nb::arg("exec") = "wcet", nb::arg("comm") = "fixed",
      nb::arg("trace") = false, nb::arg("trace_limit") = 2'000'000,
      nb::arg("offsets") = std::map<std::string, Duration>{},
      nb::arg("release_delays") = std::map<std::string, Duration>{}, nb::arg("random_jitter") = true,
      nb::arg("timer_rule") = "rcl9", nb::arg("global_threads") = false,
      "Simulate the model; returns (summary JSON, trace JSON or ''). timer_rule: rcl's timer "
      "overrun rule, rcl9 (Jazzy, Kilted) or rcl5 (Humble, Iron). global_threads: a host's "
      "unpinned threads scheduled globally over its cores (else each on the core of the "
      "simulator's placement).");
  m.def(
      "simulate",
      [](const Model& model, Duration duration, std::uint64_t seed, std::optional<std::string> policy,
         std::optional<int> threads, const std::string& exec) {
        sim::SimOptions o = base_options(duration, seed, policy, threads, exec);
        o.keep_samples = true;
        sim::SimResult r;
        {
          nb::gil_scoped_release release;
          r = sim::simulate(model, o);
        }
        return sim::result_to_json(r);
      },
      nb::arg("model"), nb::arg("duration") = Duration{10'000'000'000}, nb::arg("seed") = 1,
      nb::arg("policy") = nb::none(), nb::arg("threads") = nb::none(), nb::arg("exec") = "wcet",
      "Simulate the model for `duration` ns; returns the JSON {\"chains\": {NAME: {period_ns, ...}}}.");
}

#ifdef CHAINRT_SIM_SOUNDNESS
#include "chainrt/sim/soundness.hpp"
#if defined(CHAINRT_LAME_SIM_AVAILABLE)
#include "chainrt/lame/soundness.hpp"  // analysis "lame": LaME's plans on LaME's systems
#endif

CHAINRT_BINDINGS(soundness, 21) {
  m.def(
      "_soundness",
      [](const std::string& analysis, int sets, std::uint64_t seed, int variants, int jobs,
         const std::string& counterexample_dir, int horizon_periods, double u_min, double u_max, bool harsh, int climb,
         bool fusion, const std::string& feature, bool phases, int first, const std::string& policy) {
        sim::SoundnessOptions o;
        if (!policy.empty()) {
          o.policy = policy_from(policy);
          if (!o.policy) throw std::invalid_argument("unknown policy '" + policy + "'");
        }
        o.phases = phases;
        o.first = first;
        o.feature = feature;
        o.analysis = analysis;
        o.sets = sets;
        o.seed = seed;
        o.variants = variants;
        o.jobs = jobs;
        o.counterexample_dir = counterexample_dir;
        o.horizon_periods = horizon_periods;
        o.u_min = u_min;
        o.u_max = u_max;
        o.harsh = harsh;
        o.climb = climb;
        o.fusion = fusion;
        sim::SoundnessReport r;
        std::string tallies;
        {
          nb::gil_scoped_release release;
#if defined(CHAINRT_LAME_SIM_AVAILABLE)
          if (analysis == "lame") {
            lame::SoundnessCounts counts;
            r = lame::run_soundness(o, &counts);
            tallies = lame::counts_to_json(counts);
          } else
#endif
            r = sim::run_soundness(o);
        }
        std::string js = sim::report_to_json(r);
        if (!tallies.empty()) {  // LaME's tallies join the report
          js.pop_back();
          js += ", \"lame\": " + tallies + "}";
        }
        return js;
      },
      nb::arg("analysis"), nb::arg("sets") = 100, nb::arg("seed") = 1, nb::arg("variants") = 4, nb::arg("jobs") = 1,
      nb::arg("counterexample_dir") = "", nb::arg("horizon_periods") = 20, nb::arg("u_min") = 0.1,
      nb::arg("u_max") = 0.6, nb::arg("harsh") = false, nb::arg("climb") = 0,
      nb::arg("fusion") = false, nb::arg("feature") = "", nb::arg("phases") = false, nb::arg("first") = 0,
      nb::arg("policy") = "",
      "Soundness harness for one analysis over systems first .. first + sets - 1 of `seed` (under `policy` where "
      "the analysis bounds several; empty: its own); returns the report as JSON.");
  m.def(
      "_bound_over_worst",
      [](const std::vector<double>& ratios) { return sim::bound_over_worst_to_json(sim::bound_over_worst(ratios)); },
      nb::arg("ratios"),
      "The bound / worst simulated distribution of chains from their worst / bound ratios, as the harness's report "
      "gives it (JSON: median, p90, histogram, bucket_upper_ends).");
}
#endif
