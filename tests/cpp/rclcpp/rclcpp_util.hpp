// Helpers of the rclcpp executor tests: rclcpp's init/shutdown for the test program, a spinning
// thread, and the runtime tests' give-up-bounded wait.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <rclcpp/rclcpp.hpp>

#include "ros_test_util.hpp"  // tests/cpp/runtime

namespace chainrt::rclcpp::testing {

class RclcppEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!::rclcpp::ok()) ::rclcpp::init(0, nullptr);
  }
  void TearDown() override { ::rclcpp::shutdown(); }
};

// Polls a condition with a give-up bound (never a wall-clock assertion): the runtime tests' own.
using chainrt::runtime::testing::wait_until;

// A node for the tests whose subject is how the executor dispatches the node's own entities
// (their order, spin_once's pick, the allocation-free path): the node publishes no parameter
// events. On rclcpp 28 every node's TimeSource subscribes to /parameter_events
// (CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS, runtime/ros_compat.hpp) and the
// node's own parameter declarations (use_sim_time) publish events at start, so that
// subscription would become ready and be served among the entities under test; with no event
// publisher in the test program it never does, and both lines see the same entities run.
// (That the executor serves such a subscription is tested on its own.)
inline std::shared_ptr<::rclcpp::Node> quiet_node(const std::string& name,
                                                  ::rclcpp::NodeOptions options = ::rclcpp::NodeOptions()) {
  return std::make_shared<::rclcpp::Node>(name, options.start_parameter_event_publisher(false));
}

// Spins `exec` on a thread of its own until the object goes away (cancel + join).
template <class Exec>
class Spinner {
 public:
  explicit Spinner(Exec& e) : e_(e), th_([this] {
    e_.spin();
    done_.store(true);
  }) {}
  ~Spinner() { stop(); }
  void stop() {
    if (!th_.joinable()) return;
    while (!e_.is_spinning() && !done_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    e_.cancel();
    th_.join();
  }

 private:
  Exec& e_;
  std::atomic<bool> done_{false};
  std::thread th_;
};

}  // namespace chainrt::rclcpp::testing
