// One measurement of bench/rclcpp/chain_latency.py: the end-to-end response time of a robot's
// chain under one executor, in this process.
//   bench_rclcpp_chain_latency <executor> <seconds> [<phase ms>]
// executor: chainrt (ChainExecutor without a model: ros-default), chainrt-fp (the same under fp),
// SingleThreaded, Events.
// The robot (unmodified rclcpp nodes): camera, a 30 Hz timer -> detector (subscription, 3 ms of
// CPU) -> planner (subscription, 1 ms; calls the map server's service) -> map_server (service,
// 1 ms) -> planner's response callback (publishes the command) -> controller (subscription,
// 0.5 ms); beside it a logger, a 15 ms timer with 4 ms of CPU. The response time of one chain
// instance is from the camera timer's expected call time (rclcpp's TimerInfo) to the end of
// the controller's callback. The camera timer is created <phase> ms after the logger's (default
// 0): how the two timers' releases align decides the worst case, so executors are compared at the
// same phase. Prints one JSON line: samples, p50/p99/max in ms, instances.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/executors/single_threaded_executor.hpp>
#include <rclcpp/experimental/executors/events_executor/events_executor.hpp>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/int64.hpp>
#include <std_srvs/srv/set_bool.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"

namespace {

using namespace std::chrono_literals;
using Stamp = std_msgs::msg::Int64;
using Srv = std_srvs::srv::SetBool;

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// Burns `ns` of this thread's CPU time (preemption does not count).
void work(std::int64_t ns) {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const std::int64_t end = ts.tv_sec * 1'000'000'000LL + ts.tv_nsec + ns;
  for (;;) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if (ts.tv_sec * 1'000'000'000LL + ts.tv_nsec >= end) return;
  }
}

std::shared_ptr<rclcpp::Executor> make(const std::string& kind) {
  if (kind == "chainrt") return std::make_shared<chainrt::rclcpp::ChainExecutor>();
  if (kind == "chainrt-fp") {
    chainrt::rclcpp::ChainExecutorOptions o;
    o.policy = chainrt::Policy::FixedPriority;
    return std::make_shared<chainrt::rclcpp::ChainExecutor>(o);
  }
  if (kind == "SingleThreaded") return std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  if (kind == "Events") return std::make_shared<rclcpp::experimental::executors::EventsExecutor>();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: bench_rclcpp_chain_latency EXECUTOR SECONDS [PHASE_MS]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const double seconds = std::atof(argv[2]);
  const double phase_ms = argc == 4 ? std::atof(argv[3]) : 0.0;
  rclcpp::init(1, argv);
  auto exec = make(kind);
  if (!exec || !(seconds > 0) || !(phase_ms >= 0 && phase_ms < 1000)) {
    std::fprintf(stderr, "bench_rclcpp_chain_latency: bad arguments\n");
    rclcpp::shutdown();
    return 2;
  }
  auto camera = std::make_shared<rclcpp::Node>("camera");
  auto detector = std::make_shared<rclcpp::Node>("detector");
  auto planner = std::make_shared<rclcpp::Node>("planner");
  auto map = std::make_shared<rclcpp::Node>("map_server");
  auto controller = std::make_shared<rclcpp::Node>("controller");
  auto logger = std::make_shared<rclcpp::Node>("logger");

  std::mutex m;
  std::vector<std::int64_t> samples;
  samples.reserve(static_cast<std::size_t>(seconds * 40) + 64);
  std::atomic<bool> recording{false};

  auto log = logger->create_wall_timer(15ms, [] { work(4'000'000); });
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(phase_ms));
  auto image = camera->create_publisher<Stamp>("image", 10);
  auto tick = camera->create_wall_timer(std::chrono::nanoseconds(33'333'333), [&](const rclcpp::TimerInfo& info) {
    Stamp s;
    s.data = info.expected_call_time.nanoseconds();
    image->publish(s);
  });
  auto detections = detector->create_publisher<Stamp>("detections", 10);
  auto detect = detector->create_subscription<Stamp>("image", 10, [&](const Stamp& s) {
    work(3'000'000);
    detections->publish(s);
  });
  auto cmd = planner->create_publisher<Stamp>("cmd", 10);
  auto client = planner->create_client<Srv>("map_query");
  auto plan = planner->create_subscription<Stamp>("detections", 10, [&](const Stamp& s) {
    work(1'000'000);
    const std::int64_t stamp = s.data;
    client->async_send_request(std::make_shared<Srv::Request>(), [&, stamp](rclcpp::Client<Srv>::SharedFuture) {
      Stamp out;
      out.data = stamp;
      cmd->publish(out);
    });
  });
  auto serve = map->create_service<Srv>("map_query", [](const std::shared_ptr<Srv::Request>,
                                                         std::shared_ptr<Srv::Response> r) {
    work(1'000'000);
    r->success = true;
  });
  auto act = controller->create_subscription<Stamp>("cmd", 10, [&](const Stamp& s) {
    work(500'000);
    if (!recording.load()) return;
    const std::int64_t t = now_ns();
    std::lock_guard<std::mutex> lk(m);
    samples.push_back(t - s.data);
  });

  for (auto& n : {camera, detector, planner, map, controller, logger}) exec->add_node(n);
  // discovery: every reader of the chain matched before the run
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while ((image->get_subscription_count() < 1 || detections->get_subscription_count() < 1 ||
          cmd->get_subscription_count() < 1 || !client->service_is_ready()) &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  std::thread spinner([&] { exec->spin(); });
  std::this_thread::sleep_for(1s);  // warm-up
  recording.store(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  recording.store(false);
  exec->cancel();
  spinner.join();
  std::vector<std::int64_t> v;
  {
    std::lock_guard<std::mutex> lk(m);
    v = samples;
  }
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    if (v.empty()) return 0.0;
    const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
    return static_cast<double>(v[i]) / 1e6;
  };
  std::printf("{\"executor\": \"%s\", \"samples\": %zu, \"expected\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
              "\"max_ms\": %.3f}\n",
              kind.c_str(), v.size(), seconds * 30.0, q(0.50), q(0.99), v.empty() ? 0.0 : static_cast<double>(v.back()) / 1e6);
  exec.reset();
  rclcpp::shutdown();
  return 0;
}
