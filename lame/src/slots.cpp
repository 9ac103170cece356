// LaME's plans on fixed thread slots (slots.hpp).
#include "chainrt/lame/slots.hpp"

#include <algorithm>

#include "chainrt/sched/setup.hpp"

namespace chainrt::lame {

SlotPlan slot_plan(const Allocation& plan, std::size_t executor_index, int cores) {
  SlotPlan out;
  const sched::ExecutorSetup setup = sched::make_setup(plan.model, executor_index);
  std::vector<int> slot_of(setup.threads.size(), 0);
  out.slots.assign(2 * static_cast<std::size_t>(cores), std::nullopt);
  for (std::size_t j = 0; j < setup.threads.size(); ++j) {
    const auto& t = setup.threads[j];
    const int k = t.cores.empty() ? 0 : t.cores.front();
    slot_of[j] = (t.role == CriticalityClass::RealTime ? 0 : cores) + k;
    out.slots[slot_of[j]] = t.reservation;
  }
  out.groups = setup.groups;
  for (std::size_t i = 0; i < setup.callbacks.size(); ++i) {
    sched::CallbackSpec spec = setup.specs[i];
    if (spec.affinity != sched::kAnyThread) {
      sched::AffinityMask m = 0;
      for (std::size_t j = 0; j < setup.threads.size(); ++j)
        if (spec.affinity & (sched::AffinityMask{1} << j)) m |= sched::AffinityMask{1} << slot_of[j];
      spec.affinity = m;
    }
    out.callbacks.push_back(plan.model.callbacks[setup.callbacks[i]].name);
    out.specs.push_back(spec);
  }
  return out;
}

int plan_cores(const Allocation& plan) {
  int cores = 1;
  for (const auto* P : {&plan.rt, &plan.be})
    for (const auto& p : *P)
      for (int c : p.cores) cores = std::max(cores, c + 1);
  return cores;
}

std::string slot_name(int slot, int cores) {
  return std::string(slot < cores ? "rt@" : "be@") + std::to_string(slot < cores ? slot : slot - cores);
}

}  // namespace chainrt::lame
