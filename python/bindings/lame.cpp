// chainrt._core, part "lame": LaME Algorithms 1-3 and the BE check (lame/lame.hpp). The
// allocation comes back as a plain dict in the JSON layout of `chainrt lame allocate --json`,
// plus the planned model (a Model object) under "model".
#if defined(CHAINRT_LAME_AVAILABLE)  // (the lame module may be skipped)
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>

#include "chainrt/lame/lame.hpp"
#include "chainrt/model/model.hpp"
#include "registry.hpp"
#if defined(CHAINRT_LAME_SIM_AVAILABLE)
#include "chainrt/lame/sim_control.hpp"
#endif

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

// lame_allocate: Algorithms 1-3.
void register_allocate(nb::module_& m) {
  m.def(
      "lame_allocate",
      [](const Model& model, int cores, Duration period, int step_permille, Duration controller_period,
         const std::vector<std::pair<std::string, Duration>>& measured, const std::string& be_placement) {
        lame::Options o;
        if (be_placement == "paper") o.be_placement = lame::BePlacement::Paper;
        else if (be_placement != "capacity")
          throw std::invalid_argument("unknown BE placement '" + be_placement + "' (capacity, paper)");
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
      nb::arg("measured") = std::vector<std::pair<std::string, Duration>>{}, nb::arg("be_placement") = "capacity",
      "LaME Algorithms 1-3 on the model's executor: thread classes, budgets, allocation, demotions, bounds");
}

#if defined(CHAINRT_LAME_SIM_AVAILABLE)
// lame_simulate: the simulator under LaME's plan and controller.
void register_simulate(nb::module_& m) {
  m.def(
      "lame_simulate",
      [](const Model& model, Duration duration, std::uint64_t seed, int cores, Duration controller_period,
         Duration reservation_period, int capacity_permille, const std::string& mode, Duration scale_at,
         std::int64_t scale_num, std::int64_t scale_den, const std::string& exec,
         std::map<std::string, Duration> offsets, const std::string& be_placement) {
        if (mode != "controller" && mode != "plan" && mode != "model")
          throw std::invalid_argument("unknown mode '" + mode + "' (controller, plan, model)");
        lame::SimControlOptions c;
        c.period = controller_period;
        c.plan.cores = cores;
        c.plan.period = reservation_period;
        c.plan.capacity_permille = capacity_permille;
        if (be_placement == "paper") c.plan.be_placement = lame::BePlacement::Paper;
        else if (be_placement != "capacity")
          throw std::invalid_argument("unknown BE placement '" + be_placement + "' (capacity, paper)");
        sim::SimOptions o;
        o.duration = duration;
        o.seed = seed;
        o.keep_samples = true;
        o.offsets = std::move(offsets);
        o.scale_at = scale_at;
        o.scale_num = scale_num;
        o.scale_den = scale_den;
        if (exec == "wcet") o.exec = sim::ExecTime::Wcet;
        else if (exec == "bcet") o.exec = sim::ExecTime::Bcet;
        else if (exec == "uniform") o.exec = sim::ExecTime::Uniform;
        else if (exec == "mix") o.exec = sim::ExecTime::Mix;
        else throw std::invalid_argument("unknown execution-time mode '" + exec + "' (wcet, bcet, uniform, mix)");
        lame::ControlledRun run;
        {
          nb::gil_scoped_release unlocked;
          if (mode == "controller") {
            run = lame::simulate_with_controller(model, c, o);
          } else if (mode == "plan") {  // the initial plan on the same slots, never changed
            lame::SimControl fixed(model, c);
            run.simulated = fixed.simulated_model();
            run.activations = fixed.log();
            run.initial_plan = run.final_plan = fixed.initial_plan();
            run.result = sim::simulate(run.simulated, o);
          } else {  // the model as it is (e.g. the default executor as a baseline)
            run.simulated = model;
            run.result = sim::simulate(model, o);
          }
        }
        nb::dict out;
        out["summary"] = sim::result_to_json(run.result);
        nb::dict responses;
        for (const auto& ch : run.result.chains) {
          nb::list pts;
          for (std::size_t i = 0; i < ch.samples.size() && i < ch.releases.size(); ++i)
            pts.append(nb::make_tuple(ch.releases[i], ch.samples[i]));
          responses[ch.name.c_str()] = pts;
        }
        out["responses"] = responses;
        nb::list acts;
        for (const auto& a : run.activations) {
          nb::dict d;
          d["at_ns"] = a.at;
          d["trigger"] = a.trigger;
          d["decision"] = a.event.decision;
          d["kind"] = a.event.kind;
          d["why"] = a.event.why;
          d["chains"] = a.event.chains;
          d["analyses"] = a.event.analyses;
          d["cpu_ms"] = a.event.cpu_ms;
          d["supply_permille"] = a.event.supply_permille;
          d["classes"] = a.classes;
          d["demoted"] = a.demoted;
          acts.append(d);
        }
        out["activations"] = acts;
        out["model"] = nb::cast(run.simulated);
        if (mode != "model") {
          nb::dict first = to_dict(run.initial_plan, 0), last = to_dict(run.final_plan, 0);
          first.attr("pop")("model");
          last.attr("pop")("model");
          out["initial_plan"] = first;
          out["final_plan"] = last;
        }
        return out;
      },
      nb::arg("model"), nb::arg("duration_ns"), nb::arg("seed") = 1, nb::arg("cores") = 0,
      nb::arg("controller_period") = 10'000'000'000LL, nb::arg("reservation_period") = 10'000'000,
      nb::arg("capacity_permille") = 1000, nb::arg("mode") = "controller", nb::arg("scale_at") = -1,
      nb::arg("scale_num") = 1, nb::arg("scale_den") = 1, nb::arg("exec") = "wcet",
      nb::arg("offsets") = std::map<std::string, Duration>{}, nb::arg("be_placement") = "capacity",
      "Simulate the model: mode 'controller' under LaME with its controller (lame::Controller on the "
      "simulated measurements), 'plan' LaME's initial plan unchanged, 'model' the model as it is; "
      "summary JSON, per chain (release, response) of every completed instance, the activations");
}
#endif

}  // namespace

CHAINRT_BINDINGS(lame, 40) {
  register_allocate(m);
#if defined(CHAINRT_LAME_SIM_AVAILABLE)
  register_simulate(m);
#endif
}

#if defined(CHAINRT_LAME_SIM_AVAILABLE)
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
#endif  // CHAINRT_LAME_SIM_AVAILABLE
#endif  // CHAINRT_LAME_AVAILABLE
