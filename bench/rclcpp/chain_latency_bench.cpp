// One measurement of bench/rclcpp/chain_latency.py: the end-to-end response time of a robot's
// chain under one executor, in this process.
//   bench_rclcpp_chain_latency <executor> <seconds> [<phase ms>] [--model M] [--policy P]
//                              [--stats-period MS]
// executor: chainrt (ChainExecutor without a model: ros-default), chainrt-fp (the same under fp),
// SingleThreaded, Events. With chainrt, --model runs the robot under a model of it (as a user
// does after chainrt discover / profile; every model callback must bind), --policy overrides the
// model's policy, and --stats-period publishes the executor's monitoring (what discover and
// profile read). tests/python/test_rclcpp_user_robot.py takes the robot through that path.
// The robot (unmodified rclcpp nodes): camera, a 30 Hz timer -> detector (subscription, 3 ms of
// CPU) -> planner (subscription, 1 ms; calls the map server's service) -> map_server (service,
// 1 ms) -> planner's response callback (publishes the command) -> controller (subscription,
// 0.5 ms); beside it a logger, a 15 ms timer with 4 ms of CPU. The response time of one chain
// instance is from the camera timer's expected call time (rclcpp's TimerInfo) to the end of
// the controller's callback. The camera timer is created <phase> ms after the logger's (default
// 0): how the two timers' releases align decides the worst case, so executors are compared at the
// same phase. Prints "ready" once the nodes are up, then at the end one JSON line: samples,
// p50/p99/max in ms and, under chainrt, the executor's report (chains' instances, unbound entities).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/executors/single_threaded_executor.hpp>
#include <rclcpp/experimental/executors/events_executor/events_executor.hpp>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/int64.hpp>
#include <std_srvs/srv/set_bool.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "chainrt/runtime/node.hpp"

namespace {

using namespace std::chrono_literals;
using Stamp = std_msgs::msg::Int64;
using Srv = std_srvs::srv::SetBool;

using chainrt::runtime::now_ns;

// Burns `ns` of this thread's CPU time (preemption does not count).
void work(std::int64_t ns) { chainrt::runtime::burn_cpu(ns); }

struct Args {
  std::string kind;
  double seconds = 0;
  double phase_ms = 0;
  std::string model, policy;
  double stats_period_ms = 0;
};

// The command line, or nullopt (with a one-line reason on stderr).
std::optional<Args> parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--model" && has_value) a.model = argv[++i];
    else if (arg == "--policy" && has_value) a.policy = argv[++i];
    else if (arg == "--stats-period" && has_value) a.stats_period_ms = std::atof(argv[++i]);
    else pos.push_back(arg);
  }
  if (pos.size() < 2 || pos.size() > 3) return std::nullopt;
  a.kind = pos[0];
  a.seconds = std::atof(pos[1].c_str());
  a.phase_ms = pos.size() == 3 ? std::atof(pos[2].c_str()) : 0.0;
  if (!(a.seconds > 0) || !(a.phase_ms >= 0 && a.phase_ms < 1000) || !(a.stats_period_ms >= 0)) return std::nullopt;
  return a;
}

std::shared_ptr<rclcpp::Executor> make(const Args& a) {
  const std::string& kind = a.kind;
  if (kind == "chainrt" || kind == "chainrt-fp") {
    chainrt::rclcpp::ChainExecutorOptions o;
    if (kind == "chainrt-fp") o.policy = chainrt::Policy::FixedPriority;
    if (!a.policy.empty()) o.policy = chainrt::policy_from(a.policy);
    if (!a.policy.empty() && !o.policy) return nullptr;
    o.model_file = a.model;
    o.stats_period = static_cast<chainrt::Duration>(a.stats_period_ms * 1e6);
    return std::make_shared<chainrt::rclcpp::ChainExecutor>(o);
  }
  if (kind == "SingleThreaded") return std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  if (kind == "Events") return std::make_shared<rclcpp::experimental::executors::EventsExecutor>();
  return nullptr;
}

// The ChainExecutor's report as JSON (chains' instances, unbound entities); null for rclcpp's own.
std::string report_of(rclcpp::Executor& exec) {
  auto* chain = dynamic_cast<chainrt::rclcpp::ChainExecutor*>(&exec);
  return chain ? chain->report_json() : "null";
}

// The run's one JSON line: the chain's latencies (p50, p99, max in ms) and the executor's report.
void print_result(const std::string& kind, double seconds, std::vector<std::int64_t> v, rclcpp::Executor& exec) {
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    if (v.empty()) return 0.0;
    const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
    return static_cast<double>(v[i]) / 1e6;
  };
  std::printf("{\"executor\": \"%s\", \"samples\": %zu, \"expected\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
              "\"max_ms\": %.3f, \"report\": %s}\n",
              kind.c_str(), v.size(), seconds * 30.0, q(0.50), q(0.99), v.empty() ? 0.0 : static_cast<double>(v.back()) / 1e6,
              report_of(exec).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = parse(argc, argv);
  if (!args) {
    std::fprintf(stderr, "usage: bench_rclcpp_chain_latency EXECUTOR SECONDS [PHASE_MS] [--model M] [--policy P] "
                         "[--stats-period MS]\n");
    return 2;
  }
  const std::string kind = args->kind;
  const double seconds = args->seconds;
  const double phase_ms = args->phase_ms;
  rclcpp::init(1, argv);
  std::shared_ptr<rclcpp::Executor> exec;
  try {
    exec = make(*args);
  } catch (const std::exception& e) {  // a model that cannot be loaded: its one-line reason
    std::fprintf(stderr, "bench_rclcpp_chain_latency: %s\n", e.what());
  }
  if (!exec) {
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
  std::string failed;  // a model callback without its entity: the first spin() refuses
  std::thread spinner([&] {
    try {
      exec->spin();
    } catch (const std::exception& e) {
      failed = e.what();
    }
  });
  std::printf("ready\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(1s);  // warm-up
  recording.store(true);
  // the run's length, or until SIGINT / SIGTERM (rclcpp's handlers shut the context down)
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (rclcpp::ok() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(20ms);
  recording.store(false);
  exec->cancel();
  spinner.join();
  if (!failed.empty()) {
    std::fprintf(stderr, "bench_rclcpp_chain_latency: %s\n", failed.c_str());
    exec.reset();
    rclcpp::shutdown();
    return 1;
  }
  std::vector<std::int64_t> v;
  {
    std::lock_guard<std::mutex> lk(m);
    v = samples;
  }
  print_result(kind, seconds, std::move(v), *exec);
  exec.reset();
  rclcpp::shutdown();
  return 0;
}
