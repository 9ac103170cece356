// chainrt runtime: a small rclcpp-like node API on the rcl C API — Context, Node,
// CallbackGroup, Publisher<T>, Subscription<T>, Timer — with C++ message types from the
// installed interface packages (rosidl_typesupport_cpp). Messages travel through the real
// middleware (rmw/DDS). The executor (executor.hpp) runs the callbacks.
//
// Chain instances (EDF ready-queue paper Sec. IV-B): every callback instance runs with a Stamp
// {release a_i^k, absolute deadline d_i^k = a_i^k + D_i, chain}. A timer that starts a chain
// creates it; a subscription gets it from its message (the `stamp_of` extractor of its options,
// e.g. a header the publishing callback filled from current_stamp()). This is how the deadline
// of a chain instance travels from its first to its last callback, across processes too.
//
// Timers run on a clock of their own (clock.hpp): by default the executor's monotonic clock
// (rclcpp's wall timers); create_ros_timer puts one on the node's ROS clock, which follows
// `/clock` when the node's `use_sim_time` parameter is true. Their overrun rule is
// sched::TimerClock (EDF paper Sec. IV-A) on their own clock. Chain-instance stamps (release,
// deadline) are always on the executor's monotonic clock, whatever clock released the instance:
// a response time is a real duration (see Executor, "ROS time").
//
// Also here: QoS profiles (qos.hpp) for publishers and subscriptions; services and clients
// (services.hpp: requests and responses are queued and dispatched like subscriptions); node
// parameters (parameters.hpp). Names and namespaces follow rcl, so `--ros-args -r` remapping
// (node name, namespace, topics) applies to every node of the Context.
#pragma once

#include <rcl/rcl.h>
#include <rosidl_runtime_c/message_type_support_struct.h>
#include <rosidl_typesupport_cpp/message_type_support.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/clock.hpp"
#include "chainrt/runtime/qos.hpp"
#include "chainrt/runtime/threads.hpp"
#include "chainrt/sched/dispatcher.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::runtime {

// now_ns() (CLOCK_MONOTONIC, the executor's clock), thread_cpu_ns() and burn_cpu(): threads.hpp.

// The CPU time of one callback on the calling thread, reading the thread's CPU clock (a system
// call: CLOCK_THREAD_CPUTIME_ID has no vDSO path) at most once per callback and only where it
// tells something: a callback whose CLOCK_MONOTONIC duration is under kShort reports that
// duration (over its CPU time by less than kShort: the time it was preempted or stalled); a
// longer one, and every kReadEvery-th one, reports the lesser of its duration and the thread's
// CPU time since the clock's previous read. That is exact when the callback is not preempted;
// otherwise over by at most what the thread did between the previous read and this callback
// (the executor's own work, at most kReadEvery - 1 short callbacks). Never under: a callback
// in which another CallbackCpu stopped on the same thread (an executor spun inside a callback)
// gets its duration. Per-thread state, no allocation, no lock.
// start(now) / stop(now) take CLOCK_MONOTONIC readings the caller has anyway (now_ns(): the
// same clock); start() / stop() read it themselves.
class CallbackCpu {
 public:
  static constexpr Duration kShort = 10'000;   // ns
  static constexpr std::uint32_t kReadEvery = 16;
  void start() noexcept { start(now_ns()); }
  void start(Duration mono_now) noexcept;
  Duration stop() noexcept { return stop(now_ns()); }
  Duration stop(Duration mono_now) noexcept;
  // Reads of the CPU clock by the calling thread's meters so far.
  static std::uint64_t clock_reads() noexcept;

 private:
  Duration wall0_ = 0;
  std::uint64_t gen0_ = 0;
};

// The chain instance a callback instance belongs to (the Dispatcher's, sched/dispatcher.hpp).
using sched::kNoChain;
using Stamp = sched::Stamp;
// The stamp of the callback instance running on this thread (a default Stamp outside one).
const Stamp& current_stamp() noexcept;

// rcl context (rcl_init .. rcl_shutdown). One per process is the usual case.
class Context {
 public:
  explicit Context(int argc = 0, const char* const* argv = nullptr);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  rcl_context_t* get() noexcept { return &context_; }
  bool ok() const noexcept;
  std::uint64_t next_entity_sequence() noexcept { return entity_seq_++; }

 private:
  rcl_init_options_t options_;
  rcl_context_t context_;
  std::atomic<std::uint64_t> entity_seq_{0};
};

class CallbackGroup {
 public:
  CallbackGroup(std::string name, GroupType type) : name_(std::move(name)), type_(type) {}
  const std::string& name() const noexcept { return name_; }
  GroupType type() const noexcept { return type_; }

 private:
  std::string name_;
  GroupType type_;
};

// Scheduling parameters of one callback (all optional).
struct CallbackOptions {
  std::string name;                              // default: node/topic or node/timer<N>
  CallbackGroup* group = nullptr;                // default: the node's mutually exclusive group
  std::optional<int> priority;                   // fixed priority (policies that read one)
  sched::AffinityMask affinity = sched::kAnyThread;  // executor threads allowed to run it
};

class Node;
class Executor;
template <class Srv> class Service;
template <class Srv> class Client;
class Parameters;

// One source of callback instances (a timer or a subscription), as the executor sees it.
class Entity {
 public:
  virtual ~Entity() = default;
  const std::string& name() const noexcept { return options_.name; }
  CallbackKind kind() const noexcept { return kind_; }
  const CallbackOptions& options() const noexcept { return options_; }
  Node& node() const noexcept { return *node_; }
  std::uint64_t sequence() const noexcept { return seq_; }

 protected:
  Entity(Node& node, CallbackKind kind, CallbackOptions options);
  Node* node_;
  CallbackKind kind_;
  CallbackOptions options_;
  std::uint64_t seq_;
};

class PublisherBase {
 public:
  PublisherBase(Node& node, const rosidl_message_type_support_t* ts, const std::string& topic,
                const QoS& qos);
  virtual ~PublisherBase();
  PublisherBase(const PublisherBase&) = delete;
  PublisherBase& operator=(const PublisherBase&) = delete;
  // Matched subscriptions (discovery done).
  std::size_t subscription_count() const;
  const std::string& topic() const noexcept { return topic_; }
  // The topic after remapping and namespace expansion ("/robot1/image").
  std::string resolved_topic() const;
  rcl_publisher_t* get() noexcept { return &pub_; }
  const QoS& qos() const noexcept { return qos_; }
  // QoS events seen so far (lock-free counters; see qos.hpp).
  const QosEventCounts& qos_events() const noexcept { return events_.counts(); }
  std::uint64_t errors() const noexcept { return errors_.load(std::memory_order_relaxed); }

 protected:
  bool publish_raw(const void* msg) noexcept;  // false (and a counted error) on failure
  Node* node_;
  std::string topic_;
  QoS qos_;
  rcl_publisher_t pub_;
  QosEventSet events_;
  std::atomic<std::uint64_t> errors_{0};
};

template <class T>
class Publisher : public PublisherBase {
 public:
  Publisher(Node& node, const std::string& topic, const QoS& qos)
      : PublisherBase(node, rosidl_typesupport_cpp::get_message_type_support_handle<T>(), topic,
                      qos) {}
  bool publish(const T& msg) noexcept { return publish_raw(&msg); }
};

// Type-erased part of a subscription: the rcl subscription, the DDS "new message" listener and
// a preallocated ring of taken messages (depth = QoS depth; overflow drops the oldest input).
// Services and clients (services.hpp) are input entities of the same kind: they override how an
// input is taken (take_into) and how the listener is attached (attach_listener).
class SubscriptionBase : public Entity {
 public:
  ~SubscriptionBase() override;
  rcl_subscription_t* get() noexcept { return &sub_; }
  std::size_t depth() const noexcept { return depth_; }
  const std::string& topic() const noexcept { return topic_; }
  const QoS& qos() const noexcept { return qos_; }
  const QosEventCounts& qos_events() const noexcept { return events_.counts(); }

  // --- used by the executor, under its lock; no allocation ---
  void prepare_slots(std::size_t executor_threads);       // before start
  void set_listener(void (*fn)(const void*, std::size_t), const void* user);
  // Take every available message into the ring; returns how many were taken.
  std::size_t take_available() noexcept;
  bool has_input() const noexcept { return fifo_count_ > 0; }
  const Stamp& head_stamp() const noexcept { return stamps_[fifo_[fifo_head_]]; }
  int pop_input() noexcept;                 // slot of the oldest input; it is now executing
  void release_slot(int slot) noexcept;     // the instance that used `slot` finished
  const Stamp& stamp(int slot) const noexcept { return stamps_[slot]; }
  std::uint64_t drops() const noexcept { return drops_; }
  std::uint64_t taken() const noexcept { return taken_; }
  virtual void invoke(int slot) = 0;       // run the user callback on the message in `slot`

 protected:
  SubscriptionBase(Node& node, const rosidl_message_type_support_t* ts, const std::string& topic,
                   const QoS& qos, CallbackOptions options);
  // For services and clients: no rcl subscription; `name` is the service name.
  SubscriptionBase(Node& node, CallbackKind kind, const std::string& name, std::size_t depth,
                   CallbackOptions options);
  virtual void* slot_message(int slot) noexcept = 0;
  virtual void resize_slots(std::size_t n) = 0;
  virtual Stamp stamp_of_slot(int slot) noexcept = 0;
  // Take one input into `slot` (rcl_take for a subscription); RCL_RET_OK when one was taken.
  virtual rcl_ret_t take_into(int slot) noexcept;
  // Attach (or, with fn == nullptr, detach) the rmw "new input" listener.
  virtual rcl_ret_t attach_listener(void (*fn)(const void*, std::size_t), const void* user);

  std::string topic_;
  std::size_t depth_;
  QoS qos_;
  rcl_subscription_t sub_;
  QosEventSet events_;
  // ring of inputs: fifo_ holds slot indices (oldest first), free_ the unused slots
  std::vector<int> fifo_;
  std::size_t fifo_head_ = 0, fifo_count_ = 0;
  std::vector<int> free_;
  std::vector<Stamp> stamps_;
  std::uint64_t drops_ = 0, taken_ = 0;
};

template <class T>
class Subscription : public SubscriptionBase {
 public:
  using Callback = std::function<void(const T&)>;
  using StampOf = std::function<Stamp(const T&)>;
  Subscription(Node& node, const std::string& topic, const QoS& qos, Callback cb,
               CallbackOptions options, StampOf stamp_of)
      : SubscriptionBase(node, rosidl_typesupport_cpp::get_message_type_support_handle<T>(),
                         topic, qos, std::move(options)),
        cb_(std::move(cb)),
        stamp_of_(std::move(stamp_of)) {}
  void invoke(int slot) override { cb_(msgs_[slot]); }

 protected:
  void* slot_message(int slot) noexcept override { return &msgs_[slot]; }
  void resize_slots(std::size_t n) override { msgs_.resize(n); }
  Stamp stamp_of_slot(int slot) noexcept override {
    if (!stamp_of_) return Stamp{};
    try {
      return stamp_of_(msgs_[slot]);
    } catch (...) {
      return Stamp{};
    }
  }

 private:
  Callback cb_;
  StampOf stamp_of_;
  std::vector<T> msgs_;
};

class Timer : public Entity {
 public:
  using Callback = std::function<void()>;
  // `clock`: nullptr for the executor's clock (ClockType::Steady); else a clock of the node.
  Timer(Node& node, Duration period, Duration offset, Callback cb, CallbackOptions options,
        Clock* clock = nullptr);
  Duration period() const noexcept { return period_; }
  Duration offset() const noexcept { return offset_; }
  // The period on the release grid: `period` unless a fraction of a ns was set (a model timer
  // given as a rate or a fraction, ExactPeriod; its floor must be `period`). Before start.
  ExactPeriod grid_period() const noexcept { return exact_.fractional() ? exact_ : ExactPeriod{period_}; }
  void set_grid_period(ExactPeriod p) noexcept {
    if (p.whole() == period_) exact_ = p;
  }
  // The clock that releases the timer (Steady: the executor's clock).
  ClockType clock_type() const noexcept { return clock_ ? clock_->type() : ClockType::Steady; }
  Clock* clock() const noexcept { return clock_; }
  void invoke() { cb_(); }

 private:
  Duration period_, offset_;
  ExactPeriod exact_{};
  Callback cb_;
  Clock* clock_;
};

// A ROS 2 node: owns its publishers, subscriptions, timers and callback groups.
class Node {
 public:
  Node(Context& context, const std::string& name, const std::string& ns = "");
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // The node's name and namespace after `--ros-args -r __node:=/__ns:=` remapping.
  const std::string& name() const noexcept { return name_; }
  std::string namespace_() const;
  std::string fully_qualified_name() const;
  Context& context() noexcept { return *context_; }
  rcl_node_t* get() noexcept { return &node_; }
  CallbackGroup* default_group() noexcept { return groups_.front().get(); }

  CallbackGroup* create_callback_group(GroupType type, const std::string& name = "");

  // `qos`: a QoS profile or just a depth (reliable, volatile, keep-last depth).
  template <class T>
  std::shared_ptr<Publisher<T>> create_publisher(const std::string& topic, const QoS& qos) {
    auto p = std::make_shared<Publisher<T>>(*this, topic, qos);
    publishers_.push_back(p);
    return p;
  }
  template <class T>
  std::shared_ptr<Subscription<T>> create_subscription(
      const std::string& topic, const QoS& qos, typename Subscription<T>::Callback cb,
      CallbackOptions options = {}, typename Subscription<T>::StampOf stamp_of = nullptr) {
    if (options.name.empty()) options.name = name_ + "/" + topic;
    auto s = std::make_shared<Subscription<T>>(*this, topic, qos, std::move(cb),
                                               std::move(options), std::move(stamp_of));
    entities_.push_back(s);
    return s;
  }
  // Services and clients: defined in services.hpp (include it to use them).
  template <class Srv, class Callback, class... Args>
  std::shared_ptr<Service<Srv>> create_service(const std::string& name, Callback cb,
                                               CallbackOptions options = {}, Args&&... args);
  template <class Srv, class Callback>
  std::shared_ptr<Client<Srv>> create_client(const std::string& name, Callback on_response,
                                             CallbackOptions options = {},
                                             std::size_t max_pending = 16);
  // Parameters of this node (parameters.hpp): declared values, overridden by `--ros-args -p`
  // and `--params-file`; served by the standard parameter services when enabled there.
  Parameters& parameters();

  // QoS of the publishers / subscriptions the graph knows on `topic` (any node, any process).
  std::vector<QoS> publishers_qos(const std::string& topic) const;
  std::vector<QoS> subscriptions_qos(const std::string& topic) const;
  // Give the node an entity made outside it (services, clients); it is dispatched by the
  // executor the node is added to.
  void adopt(std::shared_ptr<Entity> entity) { entities_.push_back(std::move(entity)); }
  // A timer released every `period` ns of `clock`, first at start + `offset`. Steady (the
  // default): the executor's clock, rclcpp's create_wall_timer. Ros: the node's ROS clock, as
  // rclcpp's create_timer (sim time under use_sim_time). System: CLOCK_REALTIME.
  std::shared_ptr<Timer> create_timer(Duration period, Timer::Callback cb,
                                      CallbackOptions options = {}, Duration offset = 0,
                                      ClockType clock = ClockType::Steady);
  std::shared_ptr<Timer> create_wall_timer(Duration period, Timer::Callback cb,
                                           CallbackOptions options = {}, Duration offset = 0) {
    return create_timer(period, std::move(cb), std::move(options), offset, ClockType::Steady);
  }
  // On the ROS clock: released by simulated time under use_sim_time (first at the ROS time
  // the executor first sees after start, or at the first /clock value, + `offset`).
  std::shared_ptr<Timer> create_ros_timer(Duration period, Timer::Callback cb,
                                          CallbackOptions options = {}, Duration offset = 0) {
    return create_timer(period, std::move(cb), std::move(options), offset, ClockType::Ros);
  }

  // ROS time (rclcpp's Node::get_clock / now): the node's ROS clock, driven by /clock while the
  // `use_sim_time` parameter is true. now() is lock-free and allocates nothing.
  Clock& get_clock() noexcept { return *ros_clock_; }
  Duration now() const noexcept { return ros_clock_->now(); }
  // The /clock subscription behind use_sim_time (clock.hpp).
  TimeSource& time_source() noexcept { return *time_source_; }

  const std::vector<std::shared_ptr<Entity>>& entities() const noexcept { return entities_; }

 private:
  Context* context_;
  std::string name_;
  rcl_node_t node_;
  std::vector<std::unique_ptr<CallbackGroup>> groups_;
  std::vector<std::shared_ptr<Entity>> entities_;
  std::vector<std::shared_ptr<PublisherBase>> publishers_;
  std::unique_ptr<Parameters> parameters_;
  std::unique_ptr<Clock> ros_clock_, system_clock_;
  std::unique_ptr<TimeSource> time_source_;
};

}  // namespace chainrt::runtime
