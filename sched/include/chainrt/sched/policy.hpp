// chainrt sched: the policy descriptor — everything chainrt knows of an executor policy, in
// one place: its name, its ordering key in the ReadyQueue, its admission rule and a one-line
// description. The simulator, the runtime, the rclpy executor (through ReadyQueue and
// Admission), the command-line tools and the Python package (chainrt._core.policies()) all
// read it; no other list of policies exists. Which analysis bounds a policy is declared by the
// analyses (ResponseTimeAnalysis::default_for in analysis/analysis.hpp), not here.
//
// A new policy: one line in model/include/chainrt/model/policies.def (its enumerator and
// name) and one descriptor, with its key function, in sched/src/policies.cpp.
//
// Contract: the descriptors are constant data built at compile time; descriptor() and
// policies() never allocate, never throw and are thread-safe. Key functions are pure.
#pragma once

#include <cstddef>
#include <span>

#include "chainrt/model/model.hpp"
#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::sched {

struct PolicyDescriptor {
  Policy policy;
  const char* name;         // as in policies.def (model files, command line, JSON)
  KeyFn key;                // the ReadyQueue ordering
  // The admission rule. LameBestEffort applies only to executors with a best-effort thread;
  // with real-time threads alone such a policy admits Immediately (admission_rule()).
  AdmissionRule admission;
  const char* description;  // one line for users (`chainrt simulate --help`, docs)
  // The order is the callbacks' fixed priorities (what a change of priorities can fix).
  bool orders_by_priority;
};

// Every policy, in policies.def order (= the Policy enum's).
std::span<const PolicyDescriptor> policies() noexcept;
const PolicyDescriptor& descriptor(Policy policy) noexcept;
// By name; nullptr when unknown.
const PolicyDescriptor* find_policy(const char* name) noexcept;

}  // namespace chainrt::sched
