// Helpers of the rclcpp executor tests: rclcpp's init/shutdown for the test program and a
// give-up-bounded wait (never a wall-clock assertion).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include <rclcpp/rclcpp.hpp>

namespace chainrt::rclcpp::testing {

class RclcppEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!::rclcpp::ok()) ::rclcpp::init(0, nullptr);
  }
  void TearDown() override { ::rclcpp::shutdown(); }
};

// Polls `pred` until it holds or `give_up_s` seconds passed (a loaded machine may be slow; the
// bound only prevents a hang). Returns pred().
inline bool wait_until(const std::function<bool()>& pred, int give_up_s = 90) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(give_up_s);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
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
