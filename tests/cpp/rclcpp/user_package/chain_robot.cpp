// The same robot on chainrt's ChainExecutor with a model given as text: the timer and the
// subscription bind to it by the model's rule; prints the chain's instances once it has 5.
#include <chainrt/rclcpp/chain_executor.hpp>
#include <cstdio>
#include <memory>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

static const char* const kModel = R"(
name: user_robot
executors: [{name: main, policy: edf}]
nodes: [{name: chain_robot, executor: main}]
topics: [{name: chain_chatter, size: 64B}]
callbacks:
  - {name: tick, kind: timer, node: chain_robot, period: 5ms, wcet: 100us, publishes: [chain_chatter]}
  - {name: hear, kind: subscription, node: chain_robot, topic: chain_chatter, wcet: 100us}
chains:
  - {name: talk, callbacks: [tick, hear], deadline: 5ms}
)";

int main(int argc, char** argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("chain_robot");
  auto pub = node->create_publisher<std_msgs::msg::String>("chain_chatter", 10);
  auto timer = node->create_wall_timer(std::chrono::milliseconds(5), [&] { pub->publish(std_msgs::msg::String()); });
  int heard = 0;
  auto sub = node->create_subscription<std_msgs::msg::String>("chain_chatter", 10,
                                                              [&](const std_msgs::msg::String&) { ++heard; });
  chainrt::rclcpp::ChainExecutor exec(chainrt::rclcpp::ChainExecutorOptions{.model_yaml = kModel});
  exec.add_node(node);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (exec.report().chains.at(0).instances < 5 && std::chrono::steady_clock::now() < end)
    exec.spin_once(std::chrono::milliseconds(100));
  std::printf("chain talk %llu policy %s\n", static_cast<unsigned long long>(exec.report().chains.at(0).instances),
              chainrt::to_string(exec.policy()));
  rclcpp::shutdown();
  return 0;
}
