// chainrt._core, part "analysis": the response-time analyses (analysis.hpp), the workload
// generators (generator.hpp) and the batch schedulability counter (batch.hpp). Results come
// back as plain dicts in the JSON layout of `chainrt analyze --json`.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/batch.hpp"
#include "chainrt/analysis/comm_fit.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/analysis/reference.hpp"
#include "chainrt/analysis/supply.hpp"
#include "chainrt/model/model.hpp"
#include "chainrt/sched/policy.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

namespace {

const ResponseTimeAnalysis& named(const std::string& name) {
  const auto* a = find_analysis(name);
  if (!a) {
    std::string known;
    for (const auto* x : analyses()) known += (known.empty() ? "" : ", ") + x->name();
    throw std::invalid_argument("unknown analysis '" + name + "' (known: " + known + ")");
  }
  return *a;
}

nb::dict to_dict(const AnalysisResult& r) {
  nb::dict out, chains;
  out["analysis"] = r.analysis;
  out["schedulable"] = r.schedulable;
  for (const auto& c : r.chains) {
    nb::dict d;
    d["wcrt_bound_ns"] = c.bounded ? nb::object(nb::int_(c.wcrt_bound)) : nb::none();
    d["bcrt_bound_ns"] = c.bcrt_bound ? nb::object(nb::int_(*c.bcrt_bound)) : nb::none();
    d["deadline_ns"] = c.deadline;
    d["slack_ns"] = c.bounded ? nb::object(nb::int_(c.slack)) : nb::none();
    d["schedulable"] = c.schedulable;
    d["reason"] = c.reason;
    chains[c.chain.c_str()] = d;
  }
  out["chains"] = chains;
  return out;
}

Policy policy_of(const std::string& s) {
  auto p = policy_from(s);
  if (!p) throw std::invalid_argument("unknown policy '" + s + "'");
  return *p;
}

gen::EdfPaperParams edf_params(int m, int n, int b, double u_norm, int g, double alpha, const std::string& policy) {
  gen::EdfPaperParams p;
  p.m = m;
  p.n = n;
  p.b = b;
  p.u_norm = u_norm;
  p.g = g;
  p.alpha = alpha;
  p.policy = policy_of(policy);
  return p;
}

}  // namespace

namespace {

// The analysis registry and analyze().
void register_analyses(nb::module_& m) {
  m.def(
      "analysis_names",
      [] {
        std::vector<std::tuple<std::string, std::string, std::string>> out;
        for (const auto* a : analyses()) out.emplace_back(a->name(), a->summary(), to_string(a->policy()));
        return out;
      },
      "The shipped analyses: (name, summary, policy it bounds).");
  m.def(
      "analyses",
      [] {
        nb::list out;
        for (const auto* a : analyses()) {
          nb::dict e;
          e["name"] = a->name();
          e["summary"] = a->summary();
          e["policy"] = to_string(a->policy());
          e["single_threaded"] = a->single_threaded();
          nb::list bounds;
          for (const auto& d : sched::policies())
            if (a->bounds_policy(d.policy)) bounds.append(std::string(d.name));
          e["policies"] = bounds;
          out.append(e);
        }
        return out;
      },
      "The analysis registry: a dict each with name, summary, the policy it bounds, and whether it "
      "bounds single-threaded executors only (the experiments partition the chains for it).");
  m.def(
      "_analyze",
      [](const Model& model, const std::string& name) {
        const ResponseTimeAnalysis& a = named(name);
        AnalysisResult r;
        {
          nb::gil_scoped_release release;
          r = a.analyze(model);
        }
        return to_dict(r);
      },
      nb::arg("model"), nb::arg("analysis"));
  m.def(
      "analyze",
      [](const Model& model, std::optional<std::string> analysis, std::optional<std::string> policy) {
        // The analysis named, else the one bounding `policy`, else the one of the executors' policy.
        std::string why;
        const ResponseTimeAnalysis* a = nullptr;
        if (analysis) {
          a = &named(*analysis);
        } else if (policy) {
          Model m2 = model;
          for (auto& e : m2.executors) e.policy = policy_of(*policy);
          a = default_analysis(m2, &why);
        } else {
          a = default_analysis(model, &why);
        }
        if (!a) throw std::invalid_argument("no analysis fits this model: " + why);
        if (!a->applicable(model, &why)) throw std::invalid_argument("analysis " + a->name() + " does not apply: " + why);
        AnalysisResult r;
        {
          nb::gil_scoped_release release;
          r = a->analyze(model);
        }
        return to_dict(r);
      },
      nb::arg("model"), nb::arg("analysis") = nb::none(), nb::arg("policy") = nb::none(),
      "Analyze `model` with the analysis named, or the one bounding `policy`, or the one matching the "
      "executors' policy; returns the `chainrt analyze --json` dict. ValueError when none applies.");
  m.def("_applicable", [](const Model& model, const std::string& name) {
    std::string why;
    bool ok = named(name).applicable(model, &why);
    return std::make_pair(ok, why);
  });
  m.def("_default_analysis", [](const Model& model) {
    std::string why;
    const auto* a = default_analysis(model, &why);
    return std::make_pair(a ? std::optional<std::string>(a->name()) : std::nullopt, why);
  });
}

// The synthetic systems and utilisation generators of the experiments.
void register_generators(nb::module_& m) {
  m.def(
      "edf_paper_system",
      [](int m_, int n, int b, double u_norm, int g, double alpha, std::uint64_t seed, const std::string& policy) {
        return gen::edf_paper_system(edf_params(m_, n, b, u_norm, g, alpha, policy), seed);
      },
      nb::arg("m") = 4, nb::arg("n") = 8, nb::arg("b") = 5, nb::arg("u_norm") = 0.3, nb::arg("g") = 2,
      nb::arg("alpha") = 0.2, nb::arg("seed") = 0, nb::arg("policy") = "edf",
      "The EDF ready-queue paper's synthetic system (Sec. VI-C), a validated Model.");
  m.def("partition_single_threaded", [](const Model& model, const std::string& policy) {
    return gen::partition_single_threaded(model, policy_of(policy));
  });
  m.def(
      "uunifast_chains_system",
      [](int chains, int callbacks, int hosts, double total_u, Bytes message_size, std::uint64_t seed) {
        gen::UUniFastChainsParams p;
        p.chains = chains;
        p.callbacks = callbacks;
        p.hosts = hosts;
        p.total_u = total_u;
        p.message_size = message_size;
        return gen::uunifast_chains_system(p, seed);
      },
      nb::arg("chains") = 4, nb::arg("callbacks") = 3, nb::arg("hosts") = 2, nb::arg("total_u") = 0.5,
      nb::arg("message_size") = 1024, nb::arg("seed") = 0);
  m.def(
      "uunifast_discard",
      [](int n, double total, std::uint64_t seed) {
        gen::Rng rng(seed);
        auto u = gen::uunifast_discard(rng, n, total);
        return u ? *u : std::vector<double>{};
      },
      nb::arg("n"), nb::arg("total"), nb::arg("seed") = 0);
  m.def(
      "randfixedsum",
      [](int n, double total, std::uint64_t seed) {
        gen::Rng rng(seed);
        return gen::randfixedsum(rng, n, total);
      },
      nb::arg("n"), nb::arg("total"), nb::arg("seed") = 0);
  m.def(
      "_schedulable_counts",
      [](int m_, int n, int b, double u_norm, int g, double alpha, std::uint64_t seed, std::int64_t first,
         std::int64_t count, const std::vector<std::string>& names, int threads) {
        auto p = edf_params(m_, n, b, u_norm, g, alpha, "edf");
        nb::gil_scoped_release release;
        return schedulable_counts(p, seed, first, count, names, threads);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("b"), nb::arg("u_norm"), nb::arg("g"), nb::arg("alpha"), nb::arg("seed"),
      nb::arg("first"), nb::arg("count"), nb::arg("analyses"), nb::arg("threads") = 0);
}

// Reference curves and supply helpers (never verdicts of `chainrt analyze`).
void register_references(nb::module_& m) {
  // Reference curve only (reference.hpp): the refuted Jiang et al. 2022 analysis, for
  // `chainrt experiment schedulability`; never a verdict of `chainrt analyze`.
  m.def("_jiang22_reference", [](const Model& model) {
    reference::Jiang22Result r = reference::jiang22(model);
    nb::dict out, chains;
    out["label"] = std::string(reference::kJiang22Label);
    out["applicable"] = r.applicable;
    out["why"] = r.why;
    out["schedulable"] = r.schedulable;
    for (std::size_t i = 0; i < model.chains.size() && i < r.wcrt.size(); ++i)
      chains[nb::str(model.chains[i].name.c_str())] = r.wcrt[i] ? nb::cast(*r.wcrt[i]) : nb::none();
    out["chains"] = chains;
    return out;
  });
  m.def("fitted_communication_costs", [](const Model& model) {
    Communication c = fitted_communication(model.communication);
    return std::make_tuple(std::make_pair(c.intra_process.fixed, c.intra_process.per_kib),
                           std::make_pair(c.same_host.fixed, c.same_host.per_kib),
                           std::make_pair(c.remote.fixed, c.remote.per_kib));
  });
  m.def(
      "sbf",
      [](Duration budget, Duration period, Duration delta) {
        Supply s{Reservation{budget, period}};
        return s.sbf(delta);
      },
      nb::arg("budget"), nb::arg("period"), nb::arg("delta"));
}

}  // namespace

CHAINRT_BINDINGS(analysis, 10) {
  register_analyses(m);
  register_generators(m);
  register_references(m);
}
