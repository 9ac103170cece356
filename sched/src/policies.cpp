// chainrt sched: the executor policies' descriptors (policy.hpp) — each policy's ordering key
// (EDF ready-queue paper Sec. IV-A, footnote 2: the readyQueue's pluggable ordering), its
// admission rule (admission.hpp) and its description.
//
// The keys are lexicographic on (tier, value, rank, id), smaller first; the remaining ties are
// always broken by registration order (the CallbackId).
#include "chainrt/sched/policy.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

namespace chainrt::sched {

namespace {

std::int64_t neg_priority(const CallbackSpec& cb) noexcept { return -static_cast<std::int64_t>(*cb.priority); }

// ros-default: (0, kind rank, wait-set position, id) — timer ≻ subscription ≻ service ≻ client
// (Sec. II), registration order unless wait-set positions are drawn (wait_set_order(),
// rclcpp >= 28).
Key key_ros_default(const CallbackSpec& cb, CallbackId id, Duration) noexcept {
  return Key{0, ros_default_rank(cb.kind), cb.wait_set_position, id};
}

// fp, picas: (0, -priority, 0, id); callbacks without a priority last (tier 1, footnote 3).
Key key_fixed_priority(const CallbackSpec& cb, CallbackId id, Duration) noexcept {
  if (!cb.priority) return Key{1, 0, 0, id};
  return Key{0, neg_priority(cb), 0, id};
}

// edf: (0, d_i^k = a_i^k + D_i (Sec. IV-B), -priority, id); callbacks without a deadline last
// (tier 1). Equal deadlines (one chain instance's callbacks and the fan-out it stamps) by
// priority: the paper leaves ties open; the analyses then rank an instance's lower-priority
// fan-out below its chain (analysis/src/chain_rta.cpp). No priority: after every priority.
Key key_edf(const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept {
  const std::int64_t rank = cb.priority ? neg_priority(cb) : std::numeric_limits<std::int64_t>::max();
  if (abs_deadline == kNoDeadline) return Key{1, 0, rank, id};
  return Key{0, abs_deadline, rank, id};
}

// mixed: deadline callbacks always take precedence (Sec. VI-A), by deadline (tier 0); then
// fixed-priority ones by priority (tier 1); then the rest in ROS default order (tier 2).
Key key_mixed(const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept {
  if (abs_deadline != kNoDeadline) return Key{0, abs_deadline, 0, id};
  if (cb.priority) return Key{1, neg_priority(cb), 0, id};
  return Key{2, ros_default_rank(cb.kind), 0, id};
}

// lame: (0, -priority (missing = 0, as LaME's BE callbacks), kind rank, id): RT threads get
// the highest priority; among the equal-priority BE callbacks this is the ROS default order,
// so a BE thread takes the "first eligible" one (LaME Sec. 4.1).
Key key_lame(const CallbackSpec& cb, CallbackId id, Duration) noexcept {
  return Key{0, -static_cast<std::int64_t>(cb.priority.value_or(0)), ros_default_rank(cb.kind), id};
}

// The names, once: policies.def.
constexpr const char* kNames[] = {
#define CHAINRT_POLICY(id, name) name,
#include "chainrt/model/policies.def"
#undef CHAINRT_POLICY
};

constexpr PolicyDescriptor describe(Policy p, KeyFn key, AdmissionRule admission, const char* description,
                                    bool orders_by_priority = false) {
  return {p, kNames[static_cast<std::size_t>(p)], key, admission, description, orders_by_priority};
}

// One descriptor per line of policies.def, in its order. The analyses that bound each policy
// declare it themselves (ResponseTimeAnalysis::default_for, analysis/analysis.hpp).
constexpr PolicyDescriptor kDescriptors[] = {
    describe(Policy::RosDefault, key_ros_default, AdmissionRule::PollingPoint,
             "ROS 2's default executor: refills at polling points, timers before subscriptions"),
    describe(Policy::Picas, key_fixed_priority, AdmissionRule::Immediate,
             "PiCAS: fixed callback priorities from the chains' priorities", true),
    describe(Policy::FixedPriority, key_fixed_priority, AdmissionRule::Immediate,
             "fixed-priority ready queue: the highest callback priority first", true),
    describe(Policy::Edf, key_edf, AdmissionRule::Immediate,
             "EDF ready queue: the earliest absolute chain deadline first"),
    describe(Policy::Mixed, key_mixed, AdmissionRule::Immediate,
             "deadline callbacks by EDF, then fixed priorities, then ROS 2's default order"),
    describe(Policy::Lame, key_lame, AdmissionRule::LameBestEffort,
             "LaME: real-time threads by priority, best-effort threads take the first eligible callback", true),
};
static_assert(std::size(kDescriptors) == kPolicyCount, "one descriptor per policy in policies.def");

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kDescriptors); ++i)
    if (static_cast<std::size_t>(kDescriptors[i].policy) != i) return false;
  return true;
}
static_assert(in_enum_order(), "descriptors in policies.def order");

}  // namespace

std::span<const PolicyDescriptor> policies() noexcept { return kDescriptors; }

const PolicyDescriptor& descriptor(Policy policy) noexcept { return kDescriptors[static_cast<std::size_t>(policy)]; }

const PolicyDescriptor* find_policy(const char* name) noexcept {
  for (const auto& d : kDescriptors)
    if (std::strcmp(d.name, name) == 0) return &d;
  return nullptr;
}

Key key_of(Policy policy, const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept {
  return descriptor(policy).key(cb, id, abs_deadline);
}

}  // namespace chainrt::sched
