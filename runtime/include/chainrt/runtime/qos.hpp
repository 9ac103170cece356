// chainrt runtime: QoS profiles for publishers and subscriptions (reliability, durability,
// history and depth, deadline, lifespan, liveliness), in the builder style of rclcpp::QoS, and
// the QoS events a publisher or subscription can observe where the rmw supports them (deadline
// missed, liveliness lost/changed, incompatible QoS). An integer converts to QoS(depth), so
// `create_publisher<T>(topic, 10)` keeps its meaning (reliable, volatile, keep-last 10).
//
// A subscription's input ring (node.hpp) holds `depth` inputs under both histories: with
// keep_all the middleware keeps everything, and the executor takes it into the ring, where an
// overflow drops the oldest input and counts it (chainrt allocates nothing after start).
//
// Events are counted by the rmw's event listener (lock-free atomics, no allocation); they are
// not dispatched as callbacks: read the counters (e.g. from a monitoring timer).
#pragma once

#include <rmw/qos_profiles.h>
#include <rmw/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "chainrt/model/model.hpp"

namespace chainrt::runtime {

class QoS {
 public:
  enum class Reliability { Reliable, BestEffort };
  enum class Durability { Volatile, TransientLocal };
  enum class History { KeepLast, KeepAll };
  enum class Liveliness { Automatic, ManualByTopic };

  QoS(std::size_t depth = 10) : depth_(depth == 0 ? 1 : depth) {}  // NOLINT: implicit by design

  QoS& reliable() { reliability_ = Reliability::Reliable; return *this; }
  QoS& best_effort() { reliability_ = Reliability::BestEffort; return *this; }
  QoS& durability_volatile() { durability_ = Durability::Volatile; return *this; }
  QoS& transient_local() { durability_ = Durability::TransientLocal; return *this; }
  QoS& keep_last(std::size_t depth) { history_ = History::KeepLast; depth_ = depth == 0 ? 1 : depth; return *this; }
  QoS& keep_all() { history_ = History::KeepAll; return *this; }
  // Period within which a message is expected (0: none); misses are QoS events.
  QoS& deadline(Duration period) { deadline_ = period; return *this; }
  // Age after which an unsent/undelivered message is dropped (0: infinite).
  QoS& lifespan(Duration age) { lifespan_ = age; return *this; }
  // Liveliness kind and lease duration (0: infinite).
  QoS& liveliness(Liveliness kind, Duration lease = 0) { liveliness_ = kind; lease_ = lease; return *this; }

  Reliability reliability() const noexcept { return reliability_; }
  Durability durability() const noexcept { return durability_; }
  History history() const noexcept { return history_; }
  std::size_t depth() const noexcept { return depth_; }
  Duration deadline() const noexcept { return deadline_; }
  Duration lifespan() const noexcept { return lifespan_; }
  Liveliness liveliness() const noexcept { return liveliness_; }
  Duration liveliness_lease() const noexcept { return lease_; }

  rmw_qos_profile_t to_rmw() const noexcept;
  // What a peer reports (rcl_get_publishers_info_by_topic); history and depth are not part of
  // discovery data in DDS and come back as keep-last with the rmw's reported depth.
  static QoS from_rmw(const rmw_qos_profile_t& p) noexcept;
  std::string to_string() const;  // "reliable, transient_local, keep_last(7), deadline 100ms"

 private:
  Reliability reliability_ = Reliability::Reliable;
  Durability durability_ = Durability::Volatile;
  History history_ = History::KeepLast;
  std::size_t depth_ = 10;
  Duration deadline_ = 0, lifespan_ = 0, lease_ = 0;
  Liveliness liveliness_ = Liveliness::Automatic;
};

// QoS events counted for one publisher or subscription. A field stays 0 when nothing happened
// and `supported` says which events the rmw could attach.
struct QosEventCounts {
  std::atomic<std::uint64_t> deadline_missed{0};    // offered (publisher) / requested (subscription)
  std::atomic<std::uint64_t> liveliness{0};         // publisher: lost; subscription: changed
  std::atomic<std::uint64_t> incompatible_qos{0};   // a peer's QoS cannot match
  std::atomic<std::uint64_t> message_lost{0};       // subscription only
  std::uint32_t supported = 0;                      // bit i: event i above is attached
};

}  // namespace chainrt::runtime

#include <rcl/event.h>

namespace chainrt::runtime {

// The rcl events of one publisher or subscription, counted into a QosEventCounts by the rmw's
// listener. Attach after the entity exists, detach before it is finished. Not thread-safe
// (construction and teardown only); the counters are.
class QosEventSet {
 public:
  QosEventSet() = default;
  QosEventSet(const QosEventSet&) = delete;
  QosEventSet& operator=(const QosEventSet&) = delete;
  ~QosEventSet() { detach(); }
  // Deadline events when the QoS has a deadline, liveliness events when it has a lease, and
  // incompatible-QoS events always; an event the rmw does not support is left out.
  void attach(rcl_publisher_t* pub, const QoS& qos) noexcept;
  void attach(rcl_subscription_t* sub, const QoS& qos) noexcept;
  void detach() noexcept;
  const QosEventCounts& counts() const noexcept { return counts_; }

 private:
  void add(int index, rcl_ret_t init_rc) noexcept;
  QosEventCounts counts_;
  rcl_event_t events_[4]{};
  bool active_[4]{};
};

}  // namespace chainrt::runtime
