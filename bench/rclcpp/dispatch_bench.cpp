// One measurement of bench/rclcpp/dispatch.py: process CPU time per callback of one executor on
// one workload, in this process (every thread: executor, DDS).
//   bench_rclcpp_dispatch <executor> <N> <seconds>
// executor: chainrt (ChainExecutor, ros-default), chainrt-fp, SingleThreaded, MultiThreaded,
// StaticSingleThreaded, Events. N = 0: a lone 1 kHz timer; N > 0: a 50 Hz timer publishing
// std_msgs/Empty to N subscriptions that do nothing. Prints one JSON line.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/executors/multi_threaded_executor.hpp>
#include <rclcpp/executors/single_threaded_executor.hpp>
#include <rclcpp/executors/static_single_threaded_executor.hpp>
#include <rclcpp/experimental/executors/events_executor/events_executor.hpp>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/empty.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"

namespace {

using namespace std::chrono_literals;
constexpr double kFanoutHz = 50.0;

double cpu_s() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

std::shared_ptr<rclcpp::Executor> make(const std::string& kind) {
  if (kind == "chainrt") return std::make_shared<chainrt::rclcpp::ChainExecutor>();
  if (kind == "chainrt-fp") {
    chainrt::rclcpp::ChainExecutorOptions o;
    o.policy = chainrt::Policy::FixedPriority;
    return std::make_shared<chainrt::rclcpp::ChainExecutor>(o);
  }
  if (kind == "SingleThreaded") return std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  if (kind == "StaticSingleThreaded") return std::make_shared<rclcpp::executors::StaticSingleThreadedExecutor>();
  if (kind == "MultiThreaded") return std::make_shared<rclcpp::executors::MultiThreadedExecutor>();
  if (kind == "Events") return std::make_shared<rclcpp::experimental::executors::EventsExecutor>();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_rclcpp_dispatch EXECUTOR N SECONDS\n");
    return 2;
  }
  const std::string kind = argv[1];
  const int n = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  rclcpp::init(1, argv);
  auto exec = make(kind);
  if (!exec || n < 0 || seconds <= 0) {
    std::fprintf(stderr, "bench_rclcpp_dispatch: bad arguments\n");
    return 2;
  }
  std::atomic<long> count{0};
  auto src = std::make_shared<rclcpp::Node>("bench_source");
  auto dst = std::make_shared<rclcpp::Node>("bench_sinks");
  rclcpp::Publisher<std_msgs::msg::Empty>::SharedPtr pub;
  std::vector<rclcpp::Subscription<std_msgs::msg::Empty>::SharedPtr> subs;
  rclcpp::TimerBase::SharedPtr timer;
  if (n == 0) {
    timer = src->create_wall_timer(1ms, [&] { count.fetch_add(1, std::memory_order_relaxed); });
  } else {
    pub = src->create_publisher<std_msgs::msg::Empty>("fanout", 10);
    for (int i = 0; i < n; ++i)
      subs.push_back(dst->create_subscription<std_msgs::msg::Empty>(
          "fanout", 10, [&](const std_msgs::msg::Empty&) { count.fetch_add(1, std::memory_order_relaxed); }));
    timer = src->create_wall_timer(std::chrono::duration<double>(1.0 / kFanoutHz), [&] {
      count.fetch_add(1, std::memory_order_relaxed);
      pub->publish(std_msgs::msg::Empty());
    });
  }
  exec->add_node(src);
  exec->add_node(dst);
  if (n) {
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (pub->get_subscription_count() < static_cast<std::size_t>(n) && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(10ms);
  }
  std::thread spinner([&] { exec->spin(); });
  std::this_thread::sleep_for(500ms);  // warm-up
  const double c0 = cpu_s();
  const long k0 = count.load();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu = cpu_s() - c0;
  const long k = count.load() - k0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  exec->cancel();
  spinner.join();
  const double expected = n ? (n + 1) * kFanoutHz * wall : 1000.0 * wall;
  std::printf("{\"executor\": \"%s\", \"n\": %d, \"callbacks\": %ld, \"expected\": %.1f, \"cpu_s\": %.6f, "
              "\"wall_s\": %.4f, \"us_per_callback\": %.3f, \"cpu_pct\": %.3f}\n",
              kind.c_str(), n, k, expected, cpu, wall, 1e6 * cpu / (k > 0 ? k : 1), 100.0 * cpu / wall);
  exec.reset();
  rclcpp::shutdown();
  return 0;
}
