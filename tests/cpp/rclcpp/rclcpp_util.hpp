// Helpers of the rclcpp executor tests: rclcpp's init/shutdown for the test program, a spinning
// thread, and the runtime tests' give-up-bounded wait.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
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
