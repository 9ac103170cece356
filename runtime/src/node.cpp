// chainrt runtime: the rcl-backed node API (see node.hpp): context, nodes, publishers,
// subscriptions with their preallocated input rings, timers.
#include "chainrt/runtime/node.hpp"

#include <rcl/error_handling.h>
#include <rcl/graph.h>
#include <rmw/topic_endpoint_info_array.h>

#include "chainrt/runtime/parameters.hpp"
#include <time.h>

#include <algorithm>
#include <stdexcept>

namespace chainrt::runtime {

namespace {
thread_local Stamp t_stamp{};

[[noreturn]] void fail(const std::string& what) {
  std::string msg = what + ": " + rcl_get_error_string().str;
  rcl_reset_error();
  throw std::runtime_error(msg);
}
// Teardown calls: their failure is reported by rcl's error state, which is reset here.
void done(rcl_ret_t) noexcept { rcl_reset_error(); }
}  // namespace

namespace detail {
[[noreturn]] void throw_rcl_error(const std::string& what) { fail(what); }
}  // namespace detail

// Set by the executor around each callback.
void set_current_stamp(const Stamp& s) noexcept { t_stamp = s; }
const Stamp& current_stamp() noexcept { return t_stamp; }

namespace {
thread_local Duration t_cpu_last = 0;        // the thread's CPU time at the clock's last read
thread_local std::uint64_t t_cpu_gen = 0;    // CallbackCpu::stop()s on this thread
thread_local std::uint32_t t_cpu_unread = 0; // stop()s since the clock's last read
thread_local std::uint64_t t_cpu_reads = 0;
}  // namespace

void CallbackCpu::start(Duration mono_now) noexcept {
  gen0_ = t_cpu_gen;
  wall0_ = mono_now;
}

Duration CallbackCpu::stop(Duration mono_now) noexcept {
  const Duration wall = std::max<Duration>(0, mono_now - wall0_);
  const bool nested = t_cpu_gen != gen0_;
  ++t_cpu_gen;
  // The duration bounds the CPU time from above; for a short callback it is close enough.
  if (wall < kShort && t_cpu_unread + 1 < kReadEvery) {
    ++t_cpu_unread;
    return wall;
  }
  const Duration cpu = thread_cpu_ns();
  ++t_cpu_reads;
  const Duration since = cpu - t_cpu_last;
  t_cpu_last = cpu;
  t_cpu_unread = 0;
  return nested ? wall : std::max<Duration>(0, std::min(wall, since));
}

std::uint64_t CallbackCpu::clock_reads() noexcept { return t_cpu_reads; }

// ---------------------------------------------------------------------------------- Context
Context::Context(int argc, const char* const* argv) {
  options_ = rcl_get_zero_initialized_init_options();
  if (rcl_init_options_init(&options_, rcl_get_default_allocator()) != RCL_RET_OK)
    fail("rcl_init_options_init");
  context_ = rcl_get_zero_initialized_context();
  if (rcl_init(argc, argv, &options_, &context_) != RCL_RET_OK) {
    done(rcl_init_options_fini(&options_));
    fail("rcl_init");
  }
}

Context::~Context() {
  if (rcl_context_is_valid(&context_)) done(rcl_shutdown(&context_));
  done(rcl_context_fini(&context_));
  done(rcl_init_options_fini(&options_));
  rcl_reset_error();
}

bool Context::ok() const noexcept { return rcl_context_is_valid(&context_); }

// ----------------------------------------------------------------------------------- Entity
Entity::Entity(Node& node, CallbackKind kind, CallbackOptions options)
    : node_(&node), kind_(kind), options_(std::move(options)) {
  if (!options_.group) options_.group = node.default_group();
  seq_ = node.context().next_entity_sequence();
}

// -------------------------------------------------------------------------------- Publisher
PublisherBase::PublisherBase(Node& node, const rosidl_message_type_support_t* ts,
                             const std::string& topic, const QoS& qos)
    : node_(&node), topic_(topic), qos_(qos) {
  pub_ = rcl_get_zero_initialized_publisher();
  rcl_publisher_options_t o = rcl_publisher_get_default_options();
  o.qos = qos.to_rmw();
  if (rcl_publisher_init(&pub_, node.get(), ts, topic.c_str(), &o) != RCL_RET_OK)
    fail("publisher on '" + topic + "'");
  events_.attach(&pub_, qos_);
}

std::string PublisherBase::resolved_topic() const {
  const char* t = rcl_publisher_get_topic_name(&pub_);
  return t ? t : topic_;
}

PublisherBase::~PublisherBase() {
  events_.detach();
  done(rcl_publisher_fini(&pub_, node_->get()));
  rcl_reset_error();
}

std::size_t PublisherBase::subscription_count() const {
  size_t n = 0;
  if (rcl_publisher_get_subscription_count(&pub_, &n) != RCL_RET_OK) {
    rcl_reset_error();
    return 0;
  }
  return n;
}

// executor.cpp: the executor wake-ups that subscriptions' listeners ask for inside a publish
// of this thread wait until it returns (see there why). Nestable, no allocation, noexcept.
void begin_publish() noexcept;
void end_publish() noexcept;

bool PublisherBase::publish_raw(const void* msg) noexcept {
  begin_publish();
  const rcl_ret_t rc = rcl_publish(&pub_, msg, nullptr);
  end_publish();
  if (rc == RCL_RET_OK) return true;
  rcl_reset_error();
  errors_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

// ----------------------------------------------------------------------------- Subscription
SubscriptionBase::SubscriptionBase(Node& node, const rosidl_message_type_support_t* ts,
                                   const std::string& topic, const QoS& qos,
                                   CallbackOptions options)
    : Entity(node, CallbackKind::Subscription, std::move(options)),
      topic_(topic),
      depth_(qos.depth()),
      qos_(qos) {
  sub_ = rcl_get_zero_initialized_subscription();
  rcl_subscription_options_t o = rcl_subscription_get_default_options();
  o.qos = qos.to_rmw();
  if (rcl_subscription_init(&sub_, node.get(), ts, topic.c_str(), &o) != RCL_RET_OK)
    fail("subscription on '" + topic + "'");
  events_.attach(&sub_, qos_);
}

SubscriptionBase::SubscriptionBase(Node& node, CallbackKind kind, const std::string& name,
                                   std::size_t depth, CallbackOptions options)
    : Entity(node, kind, std::move(options)), topic_(name), depth_(depth == 0 ? 1 : depth),
      qos_(depth) {
  sub_ = rcl_get_zero_initialized_subscription();
}

SubscriptionBase::~SubscriptionBase() {
  if (rcl_subscription_is_valid(&sub_)) {
    events_.detach();
    done(rcl_subscription_set_on_new_message_callback(&sub_, nullptr, nullptr));
    done(rcl_subscription_fini(&sub_, node_->get()));
  }
  rcl_reset_error();
}

rcl_ret_t SubscriptionBase::take_into(int slot) noexcept {
  rmw_message_info_t info = rmw_get_zero_initialized_message_info();
  try {
    return rcl_take(&sub_, slot_message(slot), &info, nullptr);
  } catch (...) {
    return RCL_RET_ERROR;
  }
}

rcl_ret_t SubscriptionBase::attach_listener(void (*fn)(const void*, std::size_t),
                                            const void* user) {
  return rcl_subscription_set_on_new_message_callback(&sub_, fn, user);
}

void SubscriptionBase::prepare_slots(std::size_t executor_threads) {
  // At most depth_ queued inputs plus one executing instance per thread.
  const std::size_t n = depth_ + (executor_threads == 0 ? 1 : executor_threads);
  resize_slots(n);
  stamps_.assign(n, Stamp{});
  fifo_.assign(depth_, -1);
  fifo_head_ = fifo_count_ = 0;
  free_.clear();
  free_.reserve(n);
  for (std::size_t i = n; i-- > 0;) free_.push_back(static_cast<int>(i));
}

void SubscriptionBase::set_listener(void (*fn)(const void*, std::size_t), const void* user) {
  if (attach_listener(fn, user) != RCL_RET_OK) fail("new-input listener of '" + topic_ + "'");
}

std::size_t SubscriptionBase::take_available() noexcept {
  std::size_t n = 0;
  for (;;) {
    int slot;
    bool dropped = false;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      // Ring full: the new input overwrites the oldest queued one (KEEP_LAST semantics).
      if (fifo_count_ == 0) return n;  // every slot is executing (cannot happen when sized)
      slot = fifo_[fifo_head_];
      fifo_head_ = (fifo_head_ + 1) % depth_;
      --fifo_count_;
      dropped = true;
    }
    const rcl_ret_t rc = take_into(slot);
    if (rc != RCL_RET_OK) {
      rcl_reset_error();
      if (dropped) {  // put the oldest input back at the head: nothing was overwritten
        fifo_head_ = (fifo_head_ + depth_ - 1) % depth_;
        fifo_[fifo_head_] = slot;
        ++fifo_count_;
      } else {
        free_.push_back(slot);
      }
      return n;
    }
    if (dropped) ++drops_;
    ++taken_;
    ++n;
    stamps_[slot] = stamp_of_slot(slot);
    if (fifo_count_ == depth_) {  // queue full although a slot was free: drop the oldest
      int old = fifo_[fifo_head_];
      fifo_head_ = (fifo_head_ + 1) % depth_;
      --fifo_count_;
      free_.push_back(old);
      ++drops_;
    }
    fifo_[(fifo_head_ + fifo_count_) % depth_] = slot;
    ++fifo_count_;
  }
}

int SubscriptionBase::pop_input() noexcept {
  if (fifo_count_ == 0) return -1;
  int slot = fifo_[fifo_head_];
  fifo_head_ = (fifo_head_ + 1) % depth_;
  --fifo_count_;
  return slot;
}

void SubscriptionBase::release_slot(int slot) noexcept {
  if (slot >= 0) free_.push_back(slot);
}

// ------------------------------------------------------------------------------------ Timer
Timer::Timer(Node& node, Duration period, Duration offset, Callback cb, CallbackOptions options,
             Clock* clock)
    : Entity(node, CallbackKind::Timer, std::move(options)),
      period_(period),
      offset_(offset),
      cb_(std::move(cb)),
      clock_(clock) {
  if (period_ <= 0) throw std::invalid_argument("timer '" + name() + "': period must be > 0");
}

// ------------------------------------------------------------------------------------- Node
Node::Node(Context& context, const std::string& name, const std::string& ns)
    : context_(&context), name_(name) {
  node_ = rcl_get_zero_initialized_node();
  rcl_node_options_t o = rcl_node_get_default_options();
  if (rcl_node_init(&node_, name.c_str(), ns.c_str(), context.get(), &o) != RCL_RET_OK)
    fail("node '" + name + "'");
  groups_.push_back(
      std::make_unique<CallbackGroup>(name + "/default", GroupType::MutuallyExclusive));
  // ROS time: every node declares `use_sim_time` (as rclcpp's nodes do); true switches its ROS
  // clock to /clock, at construction (an override) or later (set(), parameter services).
  try {
    ros_clock_ = std::make_unique<Clock>(ClockType::Ros);
    time_source_ = std::make_unique<TimeSource>(*this, *ros_clock_);
    Parameters& p = parameters();
    ParameterDescriptor d;
    d.description = "drive the node's ROS clock (ROS-clock timers, now()) by the /clock topic";
    const bool sim = p.declare_parameter("use_sim_time", false, d);
    p.add_on_change([this](const std::string& name, const ParameterValue& v) {
      if (name == "use_sim_time")
        if (const bool* on = std::get_if<bool>(&v)) time_source_->set_sim_time(*on);
    });
    if (sim) time_source_->set_sim_time(true);
  } catch (...) {
    time_source_.reset();
    parameters_.reset();
    ros_clock_.reset();
    done(rcl_node_fini(&node_));
    throw;
  }
}

Node::~Node() {
  time_source_.reset();  // stops the /clock thread before the subscription's node goes
  parameters_.reset();  // its services are entities of this node
  entities_.clear();  // subscriptions and publishers need the rcl node to finish
  publishers_.clear();
  done(rcl_node_fini(&node_));
  rcl_reset_error();
}

CallbackGroup* Node::create_callback_group(GroupType type, const std::string& name) {
  std::string n = name.empty() ? name_ + "/group" + std::to_string(groups_.size()) : name;
  groups_.push_back(std::make_unique<CallbackGroup>(n, type));
  return groups_.back().get();
}

std::shared_ptr<Timer> Node::create_timer(Duration period, Timer::Callback cb,
                                          CallbackOptions options, Duration offset,
                                          ClockType clock_type) {
  if (options.name.empty()) options.name = name_ + "/timer" + std::to_string(entities_.size());
  Clock* clock = nullptr;
  if (clock_type == ClockType::Ros) clock = ros_clock_.get();
  if (clock_type == ClockType::System) {
    if (!system_clock_) system_clock_ = std::make_unique<Clock>(ClockType::System);
    clock = system_clock_.get();
  }
  auto t = std::make_shared<Timer>(*this, period, offset, std::move(cb), std::move(options),
                                   clock);
  entities_.push_back(t);
  return t;
}

}  // namespace chainrt::runtime

namespace chainrt::runtime {

std::string Node::namespace_() const {
  const char* ns = rcl_node_get_namespace(&node_);
  return ns ? ns : "/";
}

std::string Node::fully_qualified_name() const {
  const char* n = rcl_node_get_fully_qualified_name(&node_);
  return n ? n : name_;
}

Parameters& Node::parameters() {
  if (!parameters_) parameters_ = std::make_unique<Parameters>(*this);
  return *parameters_;
}

namespace {
std::vector<QoS> endpoints_qos(const rcl_node_t* node, const std::string& topic, bool publishers) {
  rcutils_allocator_t alloc = rcutils_get_default_allocator();
  rmw_topic_endpoint_info_array_t info = rmw_get_zero_initialized_topic_endpoint_info_array();
  // The graph query wants the fully expanded name; expand relative names like rcl does.
  char* expanded = nullptr;
  const char* name = topic.c_str();
  std::string full;
  if (rcl_node_resolve_name(node, topic.c_str(), alloc, false, false, &expanded) == RCL_RET_OK &&
      expanded) {
    full = expanded;
    alloc.deallocate(expanded, alloc.state);
    name = full.c_str();
  } else {
    rcl_reset_error();
  }
  rcl_ret_t rc = publishers
                     ? rcl_get_publishers_info_by_topic(node, &alloc, name, false, &info)
                     : rcl_get_subscriptions_info_by_topic(node, &alloc, name, false, &info);
  std::vector<QoS> out;
  if (rc != RCL_RET_OK) {
    rcl_reset_error();
    return out;
  }
  for (std::size_t i = 0; i < info.size; ++i) out.push_back(QoS::from_rmw(info.info_array[i].qos_profile));
  (void)rmw_topic_endpoint_info_array_fini(&info, &alloc);
  return out;
}
}  // namespace

std::vector<QoS> Node::publishers_qos(const std::string& topic) const {
  return endpoints_qos(&node_, topic, true);
}
std::vector<QoS> Node::subscriptions_qos(const std::string& topic) const {
  return endpoints_qos(&node_, topic, false);
}

}  // namespace chainrt::runtime
