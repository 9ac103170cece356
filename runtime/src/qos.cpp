// chainrt runtime: QoS profiles and QoS event counting (see qos.hpp).
#include "chainrt/runtime/qos.hpp"

#include <rcl/error_handling.h>

#include <cstdio>

namespace chainrt::runtime {

namespace {
rmw_time_t to_rmw_time(Duration d) noexcept {
  rmw_time_t t;
  t.sec = static_cast<std::uint64_t>(d / 1000000000);
  t.nsec = static_cast<std::uint64_t>(d % 1000000000);
  return t;
}
// 0 for "unspecified" and "infinite" (chainrt's "none").
Duration from_rmw_time(const rmw_time_t& t) noexcept {
  if (t.sec >= 9223372036ULL) return 0;  // RMW_DURATION_INFINITE (and beyond)
  return static_cast<Duration>(t.sec) * 1000000000 + static_cast<Duration>(t.nsec);
}
std::string ms(Duration d) {
  char b[48];
  std::snprintf(b, sizeof b, "%gms", static_cast<double>(d) / 1e6);
  return b;
}
}  // namespace

rmw_qos_profile_t QoS::to_rmw() const noexcept {
  rmw_qos_profile_t p = rmw_qos_profile_default;
  p.history = history_ == History::KeepAll ? RMW_QOS_POLICY_HISTORY_KEEP_ALL
                                           : RMW_QOS_POLICY_HISTORY_KEEP_LAST;
  p.depth = depth_;
  p.reliability = reliability_ == Reliability::BestEffort ? RMW_QOS_POLICY_RELIABILITY_BEST_EFFORT
                                                          : RMW_QOS_POLICY_RELIABILITY_RELIABLE;
  p.durability = durability_ == Durability::TransientLocal
                     ? RMW_QOS_POLICY_DURABILITY_TRANSIENT_LOCAL
                     : RMW_QOS_POLICY_DURABILITY_VOLATILE;
  if (deadline_ > 0) p.deadline = to_rmw_time(deadline_);
  if (lifespan_ > 0) p.lifespan = to_rmw_time(lifespan_);
  p.liveliness = liveliness_ == Liveliness::ManualByTopic ? RMW_QOS_POLICY_LIVELINESS_MANUAL_BY_TOPIC
                                                          : RMW_QOS_POLICY_LIVELINESS_AUTOMATIC;
  if (lease_ > 0) p.liveliness_lease_duration = to_rmw_time(lease_);
  return p;
}

QoS QoS::from_rmw(const rmw_qos_profile_t& p) noexcept {
  QoS q(p.depth == 0 ? 1 : p.depth);
  if (p.history == RMW_QOS_POLICY_HISTORY_KEEP_ALL) q.keep_all();
  if (p.reliability == RMW_QOS_POLICY_RELIABILITY_BEST_EFFORT) q.best_effort();
  if (p.durability == RMW_QOS_POLICY_DURABILITY_TRANSIENT_LOCAL) q.transient_local();
  q.deadline(from_rmw_time(p.deadline));
  q.lifespan(from_rmw_time(p.lifespan));
  q.liveliness(p.liveliness == RMW_QOS_POLICY_LIVELINESS_MANUAL_BY_TOPIC ? Liveliness::ManualByTopic
                                                                        : Liveliness::Automatic,
               from_rmw_time(p.liveliness_lease_duration));
  return q;
}

std::string QoS::to_string() const {
  std::string s = reliability_ == Reliability::Reliable ? "reliable" : "best_effort";
  s += durability_ == Durability::TransientLocal ? ", transient_local" : ", volatile";
  s += history_ == History::KeepAll ? ", keep_all" : ", keep_last(" + std::to_string(depth_) + ")";
  if (deadline_ > 0) s += ", deadline " + ms(deadline_);
  if (lifespan_ > 0) s += ", lifespan " + ms(lifespan_);
  if (liveliness_ == Liveliness::ManualByTopic) s += ", liveliness manual_by_topic";
  if (lease_ > 0) s += ", lease " + ms(lease_);
  return s;
}

}  // namespace chainrt::runtime

// ------------------------------------------------------------------------------ QosEventSet
namespace chainrt::runtime {

namespace {
void count_event(const void* user, std::size_t n) {
  static_cast<std::atomic<std::uint64_t>*>(const_cast<void*>(user))
      ->fetch_add(n == 0 ? 1 : n, std::memory_order_relaxed);
}
std::atomic<std::uint64_t>* counter(QosEventCounts& c, int i) {
  switch (i) {
    case 0: return &c.deadline_missed;
    case 1: return &c.liveliness;
    case 2: return &c.incompatible_qos;
    default: return &c.message_lost;
  }
}
}  // namespace

void QosEventSet::add(int i, rcl_ret_t rc) noexcept {
  if (rc != RCL_RET_OK) {  // RCL_RET_UNSUPPORTED and friends: this rmw cannot
    rcl_reset_error();
    return;
  }
  if (rcl_event_set_callback(&events_[i], &count_event, counter(counts_, i)) != RCL_RET_OK) {
    rcl_reset_error();
    if (rcl_event_fini(&events_[i]) != RCL_RET_OK) rcl_reset_error();
    return;
  }
  active_[i] = true;
  counts_.supported |= 1u << i;
}

void QosEventSet::attach(rcl_publisher_t* pub, const QoS& qos) noexcept {
  for (auto& e : events_) e = rcl_get_zero_initialized_event();
  if (qos.deadline() > 0)
    add(0, rcl_publisher_event_init(&events_[0], pub, RCL_PUBLISHER_OFFERED_DEADLINE_MISSED));
  if (qos.liveliness_lease() > 0)
    add(1, rcl_publisher_event_init(&events_[1], pub, RCL_PUBLISHER_LIVELINESS_LOST));
  add(2, rcl_publisher_event_init(&events_[2], pub, RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS));
}

void QosEventSet::attach(rcl_subscription_t* sub, const QoS& qos) noexcept {
  for (auto& e : events_) e = rcl_get_zero_initialized_event();
  if (qos.deadline() > 0)
    add(0, rcl_subscription_event_init(&events_[0], sub, RCL_SUBSCRIPTION_REQUESTED_DEADLINE_MISSED));
  if (qos.liveliness_lease() > 0)
    add(1, rcl_subscription_event_init(&events_[1], sub, RCL_SUBSCRIPTION_LIVELINESS_CHANGED));
  add(2, rcl_subscription_event_init(&events_[2], sub, RCL_SUBSCRIPTION_REQUESTED_INCOMPATIBLE_QOS));
  add(3, rcl_subscription_event_init(&events_[3], sub, RCL_SUBSCRIPTION_MESSAGE_LOST));
}

void QosEventSet::detach() noexcept {
  for (int i = 0; i < 4; ++i)
    if (active_[i]) {
      if (rcl_event_set_callback(&events_[i], nullptr, nullptr) != RCL_RET_OK) rcl_reset_error();
      if (rcl_event_fini(&events_[i]) != RCL_RET_OK) rcl_reset_error();
      active_[i] = false;
    }
}

}  // namespace chainrt::runtime
