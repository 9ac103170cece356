// Helpers of the runtime integration tests (real ROS 2): unique topic names, waiting for a
// condition with a generous give-up bound (never a wall-clock assertion), discovery waits.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "chainrt/runtime/node.hpp"

namespace chainrt::runtime::testing {

inline std::string unique_topic(const std::string& base) {
  static std::atomic<int> n{0};
  return "/crt_test_" + std::to_string(getpid()) + "_" + std::to_string(n.fetch_add(1)) + "_" +
         base;
}

// Polls `pred` until it holds or `give_up_s` seconds passed (a loaded CI machine may be slow;
// the bound only prevents a hang). Returns pred().
inline bool wait_until(const std::function<bool()>& pred, int give_up_s = 90) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(give_up_s);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline bool wait_matched(PublisherBase& pub, std::size_t n = 1) {
  return wait_until([&] { return pub.subscription_count() >= n; });
}

// A thread's voluntary context switches so far (the kernel's count; -1: not readable): how often
// it slept — the wake-up tests count sleeps per message with it, never a wall-clock figure.
inline long voluntary_switches(int tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
  return -1;
}

}  // namespace chainrt::runtime::testing
