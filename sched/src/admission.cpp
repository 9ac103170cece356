// chainrt sched: the admission rule shared by the simulator and the runtime (admission.hpp).
#include "chainrt/sched/admission.hpp"

#include "chainrt/sched/policy.hpp"

#include <utility>

namespace chainrt::sched {

const char* to_string(AdmissionRule r) noexcept {
  switch (r) {
    case AdmissionRule::Immediate: return "immediate";
    case AdmissionRule::PollingPoint: return "polling-point";
    case AdmissionRule::LameBestEffort: return "lame-best-effort";
  }
  return "?";
}

AdmissionRule admission_rule(Policy policy, const std::vector<bool>& rt_thread) noexcept {
  const AdmissionRule rule = descriptor(policy).admission;
  if (rule != AdmissionRule::LameBestEffort) return rule;
  for (bool rt : rt_thread)
    if (!rt) return rule;
  return AdmissionRule::Immediate;  // no best-effort thread
}

Admission::Admission(ReadyQueue& queue, AdmissionRule rule, std::vector<bool> rt_thread)
    : q_(&queue), rule_(rule), rt_thread_(std::move(rt_thread)) {
  const std::size_t n = queue.callback_count();
  if (rt_thread_.empty()) rt_thread_.assign(queue.thread_count(), true);
  waiting_flag_.assign(n, 0);
  waiting_.reserve(n);
  scratch_.reserve(n);
}

}  // namespace chainrt::sched
