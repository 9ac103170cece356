// Binding unmodified rclcpp nodes to a model by docs/model.md's rule alone (no bind()): a timer
// -> subscription -> service call -> service -> the client's response -> subscription chain,
// services and clients included, its instances counted; a model callback no entity takes stops
// the executor at start (UnboundModelCallbacks) unless allow_unbound; explicit bind() of an
// entity as create_* returned it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>
#include <std_srvs/srv/set_bool.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
using Msg = std_msgs::msg::String;
using Srv = std_srvs::srv::SetBool;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// The user's robot, as written for rclcpp's own executors: camera -> planner, which asks the
// map server and publishes the answer to the controller from the response callback.
struct Robot {
  explicit Robot(const std::string& prefix) {
    camera = quiet_node("camera");
    planner = quiet_node("planner");
    map = quiet_node("map_server");
    controller = quiet_node("controller");
    auto image = camera->create_publisher<Msg>(prefix + "image", 10);
    timer = camera->create_wall_timer(20ms, [image] { image->publish(Msg()); });
    cmd = planner->create_publisher<Msg>(prefix + "cmd", 10);
    client = planner->create_client<Srv>(prefix + "map_query");
    sub = planner->create_subscription<Msg>(prefix + "image", 10, [this](const Msg&) {
      if (!client->service_is_ready()) return;
      client->async_send_request(std::make_shared<Srv::Request>(),
                                 [this](rclcpp::Client<Srv>::SharedFuture) { cmd->publish(Msg()); });
    });
    service = map->create_service<Srv>(prefix + "map_query", [](const std::shared_ptr<Srv::Request>,
                                                                std::shared_ptr<Srv::Response> r) { r->success = true; });
    act = controller->create_subscription<Msg>(prefix + "cmd", 10, [this](const Msg&) { ++acted; });
  }
  void add_to(ChainExecutor& exec) {
    for (auto& n : {camera, planner, map, controller}) exec.add_node(n);
  }
  std::shared_ptr<rclcpp::Node> camera, planner, map, controller;
  rclcpp::TimerBase::SharedPtr timer;
  rclcpp::Publisher<Msg>::SharedPtr cmd;
  rclcpp::Client<Srv>::SharedPtr client;
  rclcpp::Subscription<Msg>::SharedPtr sub, act;
  rclcpp::Service<Srv>::SharedPtr service;
  std::atomic<int> acted{0};
};

// Its model (what chainrt discover writes for it, under a chain-aware policy); `extra` adds a
// service `<prefix>elevation_query` of node map_server that the robot does not have.
std::string robot_model(const std::string& prefix, bool extra = false) {
  return R"(
name: robot
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: edf}]
nodes: [{name: camera, executor: e}, {name: planner, executor: e}, {name: map_server, executor: e},
        {name: controller, executor: e}]
topics: [{name: )" + prefix + R"(image, size: 64B}, {name: )" + prefix + R"(cmd, size: 64B}]
services: [{name: )" + prefix + R"(map_query, request_size: 16B, response_size: 16B})" +
         (extra ? ", {name: " + prefix + "elevation_query, request_size: 16B, response_size: 16B}" : "") + R"(]
callbacks:
  - {name: capture, kind: timer, node: camera, period: 20ms, wcet: 1ms, publishes: [)" + prefix + R"(image]}
  - {name: plan, kind: subscription, node: planner, topic: )" + prefix + R"(image, wcet: 1ms, calls: [)" + prefix + R"(map_query]}
  - {name: serve, kind: service, node: map_server, service: )" + prefix + R"(map_query, wcet: 1ms}
  - {name: on_map, kind: client, node: planner, service: )" + prefix + R"(map_query, wcet: 1ms, publishes: [)" + prefix + R"(cmd]}
  - {name: act, kind: subscription, node: controller, topic: )" + prefix + R"(cmd, wcet: 1ms})" +
         (extra ? "\n  - {name: lookup, kind: service, node: map_server, service: " + prefix + "elevation_query, wcet: 1ms}"
                : "") + R"(
chains:
  - {name: image_to_controller, callbacks: [capture, plan, serve, on_map, act], deadline: 20ms}
)";
}

std::uint64_t instances_of(const chainrt::runtime::RunReport& r, const std::string& name) {
  for (const auto& c : r.callbacks)
    if (c.name == name) return c.instances;
  return 0;
}

TEST(ChainExecutorModel, BindsTimersSubscriptionsServicesAndClientsByTheRule) {
  Robot robot("bind_");
  ChainExecutor exec(ChainExecutorOptions{.model_yaml = robot_model("bind_")});
  robot.add_to(exec);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return robot.acted.load() >= 20; }));
  }
  EXPECT_TRUE(exec.unmatched().empty()) << exec.report_json();
  EXPECT_TRUE(exec.unused_model_callbacks().empty()) << exec.report_json();
  const auto r = exec.report();
  for (const char* name : {"capture", "plan", "serve", "on_map", "act"})
    EXPECT_GE(instances_of(r, name), 15u) << name << ": " << exec.report_json();
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_GE(r.chains[0].instances, 10u) << exec.report_json();  // capture ... act, end to end
}

// A model callback no entity takes (a service the nodes do not offer) stops the executor at
// start, naming it and what the node has; allow_unbound runs anyway and reports it.
TEST(ChainExecutorModel, UnboundModelCallbackRefusesToStart) {
  Robot robot("unb_");
  ChainExecutor exec(ChainExecutorOptions{.model_yaml = robot_model("unb_", true)});
  robot.add_to(exec);
  std::string message;
  try {
    exec.spin_some();
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("lookup (service of service 'unb_elevation_query'): node 'map_server' serves services "
                         "/unb_map_query"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("capture"), std::string::npos) << message;  // bound ones are not named
  EXPECT_THROW(exec.spin_once(10ms), chainrt::rclcpp::UnboundModelCallbacks);  // every start refuses
  EXPECT_EQ(robot.acted.load(), 0);

  Robot robot2("unb2_");
  ChainExecutorOptions o{.model_yaml = robot_model("unb2_", true)};
  o.allow_unbound = true;
  ChainExecutor allowed(o);
  robot2.add_to(allowed);
  {
    Spinner<ChainExecutor> spin(allowed);
    EXPECT_TRUE(wait_until([&] { return robot2.acted.load() >= 5; }));
  }
  EXPECT_EQ(allowed.unused_model_callbacks(), std::vector<std::string>{"lookup"});
}

// bind() takes the entity as rclcpp's create_* returned it and wins over the rule: the model
// names the timer `capture` with a period the real one is far from.
TEST(ChainExecutorModel, ExplicitBindTakesTheRclcppEntity) {
  Robot robot("explicit_");
  std::string model = robot_model("explicit_");
  model.replace(model.find("period: 20ms"), 12, "period: 90ms");
  ChainExecutor exec(ChainExecutorOptions{.model_yaml = model});
  robot.add_to(exec);
  exec.bind("capture", robot.timer);
  exec.bind("serve", robot.service);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return robot.acted.load() >= 10; }));
  }
  EXPECT_TRUE(exec.unused_model_callbacks().empty()) << exec.report_json();
  EXPECT_GE(instances_of(exec.report(), "capture"), 10u) << exec.report_json();
  EXPECT_GE(exec.report().chains[0].instances, 5u) << exec.report_json();
}

}  // namespace
