// chainrt runtime: clocks and the /clock time source (see clock.hpp).
#include "chainrt/runtime/clock.hpp"

#include <rcl/error_handling.h>
#include <rcl/wait.h>
#include <rosgraph_msgs/msg/clock.hpp>
#include <rosidl_typesupport_cpp/message_type_support.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "chainrt/runtime/node.hpp"

namespace chainrt::runtime {

namespace detail {
[[noreturn]] void throw_rcl_error(const std::string& what);  // node.cpp: message + rcl error
}

namespace {
[[noreturn]] void fail(const std::string& what) { detail::throw_rcl_error(what); }
void done(rcl_ret_t) noexcept { rcl_reset_error(); }  // teardown: rcl's error state is reset
rcl_clock_type_t to_rcl(ClockType t) {
  switch (t) {
    case ClockType::Steady: return RCL_STEADY_TIME;
    case ClockType::System: return RCL_SYSTEM_TIME;
    case ClockType::Ros: return RCL_ROS_TIME;
  }
  return RCL_ROS_TIME;
}
}  // namespace

const char* to_string(ClockType t) noexcept {
  switch (t) {
    case ClockType::Steady: return "steady";
    case ClockType::System: return "system";
    case ClockType::Ros: return "ros";
  }
  return "?";
}

// -------------------------------------------------------------------------------------- Clock
Clock::Clock(ClockType type) : type_(type) {
  rcl_allocator_t alloc = rcl_get_default_allocator();
  if (rcl_clock_init(to_rcl(type), &clock_, &alloc) != RCL_RET_OK)
    fail(std::string("rcl clock (") + to_string(type) + ")");
}

Clock::~Clock() { done(rcl_clock_fini(&clock_)); }

Duration Clock::now() const noexcept {
  if (type_ == ClockType::Steady) return now_ns();  // the executor's CLOCK_MONOTONIC
  rcl_time_point_value_t t = 0;
  if (rcl_clock_get_now(&clock_, &t) != RCL_RET_OK) {
    rcl_reset_error();
    return 0;
  }
  return t;
}

bool Clock::ros_time_is_active() const noexcept {
  if (type_ != ClockType::Ros) return false;
  // rclcpp reads this flag the same way, without the clock's mutex (a bool written only by
  // enable/disable, which run jump callbacks that wake every reader).
  bool on = false;
  if (rcl_is_enabled_ros_time_override(&clock_, &on) != RCL_RET_OK) rcl_reset_error();
  return on;
}

void Clock::enable_ros_time_override() {
  if (type_ != ClockType::Ros) throw std::logic_error("ROS time override on a non-ROS clock");
  std::lock_guard<std::mutex> lk(mutex_);
  if (rcl_enable_ros_time_override(&clock_) != RCL_RET_OK) fail("rcl_enable_ros_time_override");
}

void Clock::disable_ros_time_override() {
  if (type_ != ClockType::Ros) throw std::logic_error("ROS time override on a non-ROS clock");
  std::lock_guard<std::mutex> lk(mutex_);
  if (rcl_disable_ros_time_override(&clock_) != RCL_RET_OK) fail("rcl_disable_ros_time_override");
}

void Clock::set_ros_time_override(Duration t) {
  if (type_ != ClockType::Ros) throw std::logic_error("ROS time override on a non-ROS clock");
  std::lock_guard<std::mutex> lk(mutex_);
  if (rcl_set_ros_time_override(&clock_, t) != RCL_RET_OK) fail("rcl_set_ros_time_override");
}

void Clock::add_jump_callback(const rcl_jump_threshold_t& threshold, rcl_jump_callback_t cb,
                              void* user) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (rcl_clock_add_jump_callback(&clock_, threshold, cb, user) != RCL_RET_OK)
    fail("rcl_clock_add_jump_callback");
}

void Clock::remove_jump_callback(rcl_jump_callback_t cb, void* user) noexcept {
  std::lock_guard<std::mutex> lk(mutex_);
  done(rcl_clock_remove_jump_callback(&clock_, cb, user));
}

// --------------------------------------------------------------------------------- TimeSource
TimeSource::TimeSource(Node& node, Clock& clock)
    : node_(&node), clock_(&clock), qos_(QoS(1).best_effort()) {
  sub_ = rcl_get_zero_initialized_subscription();
  wake_ = rcl_get_zero_initialized_guard_condition();
}

TimeSource::~TimeSource() {
  std::lock_guard<std::mutex> lk(mutex_);
  stop_locked();
}

void TimeSource::set_clock_qos(const QoS& qos) {
  std::lock_guard<std::mutex> lk(mutex_);
  qos_ = qos;
}

void TimeSource::set_sim_time(bool on) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (on == on_.load(std::memory_order_acquire)) return;
  if (!on) {
    stop_locked();
    clock_->disable_ros_time_override();  // jump callbacks: ROS_TIME_DEACTIVATED
    on_.store(false, std::memory_order_release);
    return;
  }
  rcl_subscription_options_t o = rcl_subscription_get_default_options();
  o.qos = qos_.to_rmw();
  if (rcl_subscription_init(
          &sub_, node_->get(),
          rosidl_typesupport_cpp::get_message_type_support_handle<rosgraph_msgs::msg::Clock>(),
          "/clock", &o) != RCL_RET_OK)
    fail("subscription on /clock");
  if (rcl_guard_condition_init(&wake_, node_->context().get(),
                               rcl_guard_condition_get_default_options()) != RCL_RET_OK) {
    done(rcl_subscription_fini(&sub_, node_->get()));
    fail("guard condition of the time source");
  }
  clock_->enable_ros_time_override();  // jump callbacks: ROS_TIME_ACTIVATED; reads 0 until /clock
  stop_.store(false, std::memory_order_release);
  on_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { run(); });
}

void TimeSource::stop_locked() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    done(rcl_trigger_guard_condition(&wake_));
    thread_.join();
  }
  if (rcl_subscription_is_valid(&sub_)) done(rcl_subscription_fini(&sub_, node_->get()));
  sub_ = rcl_get_zero_initialized_subscription();
  if (wake_.impl) done(rcl_guard_condition_fini(&wake_));
  wake_ = rcl_get_zero_initialized_guard_condition();
}

void TimeSource::run() noexcept {
  rcl_wait_set_t ws = rcl_get_zero_initialized_wait_set();
  if (rcl_wait_set_init(&ws, 1, 1, 0, 0, 0, 0, node_->context().get(),
                        rcl_get_default_allocator()) != RCL_RET_OK) {
    std::fprintf(stderr, "chainrt: the /clock thread cannot wait: %s\n", rcl_get_error_string().str);
    rcl_reset_error();
    return;
  }
  rosgraph_msgs::msg::Clock msg;  // fixed size: rcl_take allocates nothing
  while (!stop_.load(std::memory_order_acquire)) {
    done(rcl_wait_set_clear(&ws));
    done(rcl_wait_set_add_subscription(&ws, &sub_, nullptr));
    done(rcl_wait_set_add_guard_condition(&ws, &wake_, nullptr));
    // A bounded wait: a context shut down from outside ends the thread too.
    const rcl_ret_t rc = rcl_wait(&ws, 100'000'000);
    if (rc != RCL_RET_OK && rc != RCL_RET_TIMEOUT) {
      rcl_reset_error();
      if (!rcl_context_is_valid(node_->context().get())) break;
      continue;
    }
    for (;;) {
      rmw_message_info_t info = rmw_get_zero_initialized_message_info();
      if (rcl_take(&sub_, &msg, &info, nullptr) != RCL_RET_OK) {
        rcl_reset_error();
        break;
      }
      const Duration t = static_cast<Duration>(msg.clock.sec) * 1'000'000'000 + msg.clock.nanosec;
      try {
        clock_->set_ros_time_override(t);  // jump callbacks: the executors' timers react
      } catch (const std::exception& e) {
        std::fprintf(stderr, "chainrt: /clock: %s\n", e.what());
      }
      messages_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  done(rcl_wait_set_fini(&ws));
}

}  // namespace chainrt::runtime
