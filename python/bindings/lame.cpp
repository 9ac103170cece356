// chainrt._core, part "lame": LaME Algorithms 1-3 and the BE check (lame/lame.hpp). The
// allocation comes back as a plain dict in the JSON layout of `chainrt lame allocate --json`,
// plus the planned model (a Model object) under "model".
#if defined(CHAINRT_LAME_AVAILABLE)  // (the lame module may be skipped)
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>

#include "chainrt/lame/lame.hpp"
#include "chainrt/model/model.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

namespace {

nb::dict to_dict(const lame::Allocation& a, double seconds) {
  nb::dict out;
  out["executor"] = a.executor;
  auto classes = [&](const std::vector<lame::ThreadClassPlan>& P) {
    nb::list l;
    for (const auto& p : P) {
      nb::dict d;
      d["name"] = p.name;
      d["kind"] = to_string(p.kind);
      d["cores"] = p.cores;
      d["threads"] = p.cores.size();
      d["runtime_ns"] = p.budget;
      d["period_ns"] = p.period;
      d["utilisation_per_thread"] = p.utilisation();
      nb::list chains;
      for (int i : p.chains) chains.append(a.lin.chains[i].name);
      d["chains"] = chains;
      l.append(d);
    }
    return l;
  };
  out["rt_classes"] = classes(a.rt);
  out["be_classes"] = classes(a.be);
  nb::list lin;
  for (const auto& l : a.lin.chains) {
    nb::dict d;
    d["name"] = l.name;
    d["origin"] = l.origin;
    d["class"] = to_string(l.cls);
    d["criticality"] = l.criticality;
    d["path"] = l.path;
    d["own"] = l.own();
    d["upstream"] = l.upstream >= 0 ? nb::object(nb::str(a.lin.chains[l.upstream].name.c_str())) : nb::none();
    lin.append(d);
  }
  out["linear_chains"] = lin;
  nb::list dem;
  for (const auto& d : a.demotions) {
    nb::dict x;
    x["chain"] = d.chain;
    x["reason"] = d.reason;
    dem.append(x);
  }
  out["demotions"] = dem;
  nb::dict verdicts;
  for (const auto& v : a.verdicts) {
    nb::dict d;
    d["class"] = to_string(v.cls);
    d["thread_class"] = v.thread_class;
    d["bound_ns"] = v.bounded ? nb::object(nb::int_(v.bound)) : nb::none();
    d["deadline_ns"] = v.deadline;
    d["meets_deadline"] = v.meets_deadline;
    d["starvation_free"] = v.starvation_free;
    d["reason"] = v.reason;
    verdicts[v.chain.c_str()] = d;
  }
  out["chains"] = verdicts;
  out["notes"] = a.notes;
  out["analyses"] = a.analyses;
  out["rt_schedulable"] = a.rt_schedulable;
  out["be_starvation_free"] = a.be_starvation_free;
  out["seconds"] = seconds;
  out["model"] = nb::cast(a.model);
  return out;
}

}  // namespace

CHAINRT_BINDINGS(lame, 40) {
  m.def(
      "lame_allocate",
      [](const Model& model, int cores, Duration period, int step_permille, Duration controller_period,
         const std::vector<std::pair<std::string, Duration>>& measured) {
        lame::Options o;
        o.cores = cores;
        o.period = period;
        o.step_permille = step_permille;
        o.controller_period = controller_period;
        o.measured_wcet = measured;
        const auto t0 = std::chrono::steady_clock::now();
        lame::Allocation a;
        {
          nb::gil_scoped_release unlocked;
          a = lame::allocate(model, o);
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return to_dict(a, s);
      },
      nb::arg("model"), nb::arg("cores") = 0, nb::arg("period") = 10'000'000, nb::arg("step_permille") = 10,
      nb::arg("controller_period") = 10'000'000'000LL,
      nb::arg("measured") = std::vector<std::pair<std::string, Duration>>{},
      "LaME Algorithms 1-3 on the model's executor: thread classes, budgets, allocation, demotions, bounds");
}

#if defined(CHAINRT_LAME_PROPERTY_AVAILABLE)
#include "chainrt/lame/property.hpp"

CHAINRT_BINDINGS(lame_property, 41) {
  m.def(
      "_lame_property",
      [](std::uint64_t first_seed, std::uint64_t count) {
        lame::PropertyReport r;
        {
          nb::gil_scoped_release unlocked;
          r = lame::check_property(first_seed, count);
        }
        nb::dict out;
        out["systems"] = r.systems;
        out["accepted"] = r.accepted;
        out["checked"] = r.checked;
        out["be_checked"] = r.be_checked;
        nb::list violations;
        for (const auto& v : r.violations) {
          nb::dict d;
          d["seed"] = v.seed;
          d["chain"] = v.chain;
          d["class"] = v.cls;
          d["thread_class"] = v.thread_class;
          d["exec"] = v.exec;
          d["bound_ns"] = v.bound;
          d["observed_ns"] = v.observed;
          d["model"] = v.model;
          violations.append(d);
        }
        out["violations"] = violations;
        return out;
      },
      nb::arg("first_seed"), nb::arg("count"),
      "The LaME property check (lame/property.hpp) on seeds first_seed .. first_seed + count - 1: systems, "
      "accepted, bounds checked, violations (with the planned model).");
}
#endif  // CHAINRT_LAME_PROPERTY_AVAILABLE
#endif  // CHAINRT_LAME_AVAILABLE
