// LaME's controller inside the simulator (sim_control.hpp): the model on the slots, the
// activations, the plan as a reconfiguration of the simulated executor.
#include "chainrt/lame/sim_control.hpp"

#include <cstdio>
#include <set>
#include <stdexcept>

#include "chainrt/lame/slots.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sched/setup.hpp"

namespace chainrt::lame {

namespace {

std::string ms(Duration d) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3gms", static_cast<double>(d) / 1e6);
  return b;
}

std::string describe(const ThreadClassPlan& p) {
  std::string s = p.name + " cores";
  for (int c : p.cores) s += " " + std::to_string(c);
  s += p.budget > 0 ? " budget " + ms(p.budget) + "/" + ms(p.period) : " no reservation";
  return s;
}

}  // namespace

SimControl::SimControl(const Model& model, SimControlOptions options)
    : model_(model),
      options_(std::move(options)),
      decision_(model_, [&] {
        Options o = options_.plan;
        o.controller_period = options_.period;
        return o;
      }(), 0, options_.policy),
      clock_(0, options_.period, options_.min_gap) {
  if (options_.period <= 0) throw std::invalid_argument("the controller period must be positive");
  initial_ = decision_.plan();
  const Allocation& plan = initial_;
  cores_ = plan_cores(plan);
  simulated_ = plan.model;
  for (std::size_t e = 0; e < simulated_.executors.size(); ++e)
    if (simulated_.executors[e].name == plan.executor) executor_ = e;
  // The slots: rt@k, then be@k, one pinned thread each (thread class per slot: its reservation).
  const SlotPlan sp = slot_plan(plan, executor_, cores_);
  Executor& ex = simulated_.executors[executor_];
  ex.thread_classes.clear();
  ex.threads.clear();
  for (int s = 0; s < 2 * cores_; ++s) {
    ThreadClass tc;
    tc.name = slot_name(s, cores_);
    tc.kind = s < cores_ ? CriticalityClass::RealTime : CriticalityClass::BestEffort;
    tc.cores = {s % cores_};
    tc.reservation = sp.slots[static_cast<std::size_t>(s)];
    ex.thread_classes.push_back(tc);
  }
  for (std::size_t i = 0; i < sp.callbacks.size(); ++i) {
    Callback& cb = simulated_.callbacks[simulated_.callback_index(sp.callbacks[i])];
    cb.affinity.clear();
    if (sp.specs[i].affinity == sched::kAnyThread) continue;
    for (int s = 0; s < 2 * cores_; ++s)
      if (sp.specs[i].affinity & (sched::AffinityMask{1} << s)) cb.affinity.push_back(slot_name(s, cores_));
  }
  validate(simulated_, simulated_.name);  // expands the slot classes into their threads
  rt_chain_.assign(model_.chains.size(), false);
  mark_rt_chains();
  record(0, "initial", decision_.log().back());
}

void SimControl::mark_rt_chains() {
  std::set<std::string> rt;
  const Allocation& plan = decision_.plan();
  for (const auto& p : plan.rt)
    for (int i : p.chains) rt.insert(plan.lin.chains[i].origin);
  for (std::size_t c = 0; c < model_.chains.size(); ++c) rt_chain_[c] = rt.count(model_.chains[c].name) > 0;
}

void SimControl::record(Duration at, const std::string& trigger, const ControllerEvent& e) {
  SimActivation a;
  a.at = at;
  a.trigger = trigger;
  a.event = e;
  const Allocation& plan = decision_.plan();
  for (const auto* P : {&plan.rt, &plan.be})
    for (const auto& p : *P) a.classes.push_back(describe(p));
  for (const auto& d : plan.demotions) a.demoted.push_back(d.chain);
  log_.push_back(std::move(a));
}

Duration SimControl::next_activation(Duration now, bool missed) const {
  const Duration due = decision_.demotion_due();
  return std::max(now, clock_.wake(miss_pending_ || missed, due));
}

bool SimControl::watches(std::size_t chain) const { return chain < rt_chain_.size() && rt_chain_[chain]; }

std::vector<sim::Reconfiguration> SimControl::activate(Duration now, bool missed,
                                                       const std::vector<sim::ExecSamples>& samples) {
  miss_pending_ = miss_pending_ || missed;
  const Duration due = decision_.demotion_due();
  if (now < clock_.wake(miss_pending_, due)) return {};  // (the simulator calls at wake times only)
  const auto trigger = clock_.fire(now, miss_pending_, due);
  const bool by_miss = trigger == ActivationClock::Trigger::Miss;
  if (by_miss) miss_pending_ = false;
  std::vector<CpuSample> measured;
  for (std::size_t c = 0; c < samples.size() && c < simulated_.callbacks.size(); ++c) {
    if (samples[c].count == 0) continue;
    CpuSample x;
    x.callback = simulated_.callbacks[c].name;
    x.count = samples[c].count;
    for (int k = 0; k < kTopSamples && k < static_cast<int>(samples[c].largest.size()); ++k)
      x.largest[static_cast<std::size_t>(k)] = samples[c].largest[static_cast<std::size_t>(k)];
    measured.push_back(std::move(x));
  }
  const ControllerEvent& e = decision_.activate(measured, by_miss, now);
  record(now, to_string(trigger), e);
  if (e.decision != "reallocated") return {};
  mark_rt_chains();
  const SlotPlan sp = slot_plan(decision_.plan(), executor_, cores_);
  sim::Reconfiguration r;
  r.executor = executor_;
  r.reservations = sp.slots;
  // By the simulated executor's callback ids (the plan's model keeps the callbacks and order).
  const sched::ExecutorSetup setup = sched::make_setup(simulated_, executor_);
  r.specs = setup.specs;
  r.groups = sp.groups;
  for (std::size_t i = 0; i < sp.callbacks.size(); ++i) {
    const sched::CallbackId id = setup.id_of(simulated_.callback_index(sp.callbacks[i]));
    if (id != sched::kNoCallback) r.specs[id] = sp.specs[i];
  }
  return {r};
}

ControlledRun simulate_with_controller(const Model& model, const SimControlOptions& control,
                                       sim::SimOptions options) {
  SimControl c(model, control);
  options.control = &c;
  ControlledRun out;
  out.result = sim::simulate(c.simulated_model(), options);
  out.activations = c.log();
  out.simulated = c.simulated_model();
  out.initial_plan = c.initial_plan();
  out.final_plan = c.controller().plan();
  return out;
}

}  // namespace chainrt::lame
