// chainrt runtime: clocks and ROS time, as rclcpp has them (rclcpp::Clock, rclcpp::TimeSource),
// on rcl's time API (rcl/time.h).
//
// Every node has a ROS clock (Node::get_clock()). Without sim time it reads the system time;
// with the node's `use_sim_time` parameter true (declared by every node, default false; set from
// `--ros-args -p use_sim_time:=true`, a params file, or at run time through set() or the
// parameter services) the node's TimeSource subscribes to `/clock` (rosgraph_msgs/Clock, the
// clock QoS of rclcpp: best effort, keep last 1) and drives the clock with
// rcl_enable_ros_time_override / rcl_set_ros_time_override. Until the first /clock message the
// ROS time reads 0 (rclcpp does the same). Each clock change, forward and backward jump calls
// the clock's rcl jump callbacks; the executor registers one per ROS clock its timers use, and
// so wakes when /clock moves (the role of rcl's timer guard condition).
//
// Clock types (ClockType): Steady is the executor's clock (CLOCK_MONOTONIC, or the clock an
// ExecutorOptions injects); timers on it are rclcpp's wall timers. System is CLOCK_REALTIME.
// Ros is a node's ROS clock: system time, or simulated time under use_sim_time.
//
// Threads: the /clock subscription is served by a thread of the TimeSource (rclcpp's default
// `use_clock_thread`): rcl_wait on the subscription, rcl_take into a preallocated message,
// rcl_set_ros_time_override. It runs at normal (SCHED_OTHER) priority: under a SCHED_FIFO
// executor that keeps every core busy, /clock updates wait until a core is free.
#pragma once

#include <rcl/rcl.h>
#include <rcl/time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/qos.hpp"

namespace chainrt::runtime {

class Node;

enum class ClockType { Steady, System, Ros };
const char* to_string(ClockType t) noexcept;

// One rcl clock. now() is lock-free and allocates nothing (rcl_clock_get_now); the override
// and jump-callback members are serialized by one mutex (rcl's functions are not thread-safe
// among each other on one clock), as rclcpp::Clock does.
class Clock {
 public:
  explicit Clock(ClockType type);
  ~Clock();
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  ClockType type() const noexcept { return type_; }
  // Now, in ns of this clock (Steady: CLOCK_MONOTONIC, the executor's default clock). Under
  // sim time: the last /clock value (0 before the first one). Lock-free, no allocation.
  Duration now() const noexcept;
  // A ROS clock driven by an override (sim time). Lock-free.
  bool ros_time_is_active() const noexcept;

  // Drive a ROS clock (what the TimeSource does with /clock; a simulator or a test may too).
  // Each call runs the jump callbacks whose threshold the change exceeds, on the calling
  // thread, under the clock's mutex. No allocation (beyond what jump callbacks do). Throw
  // std::logic_error on a clock that is not a ROS clock.
  void enable_ros_time_override();
  void disable_ros_time_override();
  void set_ros_time_override(Duration t);

  // rcl jump callbacks (rcl_clock_add_jump_callback): allocate; thread-safe with the above.
  // Throw std::runtime_error when rcl refuses.
  void add_jump_callback(const rcl_jump_threshold_t& threshold, rcl_jump_callback_t cb, void* user);
  void remove_jump_callback(rcl_jump_callback_t cb, void* user) noexcept;

  rcl_clock_t* get() noexcept { return &clock_; }

 private:
  ClockType type_;
  mutable rcl_clock_t clock_;
  mutable std::mutex mutex_;
};

// The ROS time source of one node: the `/clock` subscription and its thread, switched on and
// off by the node's `use_sim_time` parameter. Thread-safe; enabling allocates (a subscription,
// a wait set, a thread) and disabling joins the thread: neither belongs on a latency-critical
// path (the parameter services run them in a service callback, which is fine).
class TimeSource {
 public:
  TimeSource(Node& node, Clock& clock);
  ~TimeSource();
  TimeSource(const TimeSource&) = delete;
  TimeSource& operator=(const TimeSource&) = delete;

  // Switch sim time on (subscribe to /clock, enable the clock's override) or off (unsubscribe,
  // disable the override: the clock reads system time again). Idempotent.
  void set_sim_time(bool on);
  bool sim_time() const noexcept { return on_.load(std::memory_order_acquire); }
  // /clock messages applied so far.
  std::uint64_t clock_messages() const noexcept { return messages_.load(std::memory_order_relaxed); }
  // The /clock subscription's QoS (default: best effort, keep last 1, as rclcpp's ClockQoS).
  // Takes effect at the next set_sim_time(true).
  void set_clock_qos(const QoS& qos);

 private:
  void run() noexcept;  // the clock thread
  void stop_locked();

  Node* node_;
  Clock* clock_;
  std::mutex mutex_;  // serializes set_sim_time
  QoS qos_;
  std::atomic<bool> on_{false};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> messages_{0};
  rcl_subscription_t sub_;
  rcl_guard_condition_t wake_;
  std::thread thread_;
};

}  // namespace chainrt::runtime
