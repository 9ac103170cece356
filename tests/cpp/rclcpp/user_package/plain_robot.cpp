// A plain rclcpp program (no chainrt): a timer publishes, a subscription counts, on rclcpp's
// SingleThreadedExecutor; prints "heard N".
#include <cstdio>
#include <memory>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

int main(int argc, char** argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("plain_robot");
  auto pub = node->create_publisher<std_msgs::msg::String>("plain_chatter", 10);
  auto timer = node->create_wall_timer(std::chrono::milliseconds(5), [&] { pub->publish(std_msgs::msg::String()); });
  int heard = 0;
  auto sub = node->create_subscription<std_msgs::msg::String>("plain_chatter", 10,
                                                              [&](const std_msgs::msg::String&) { ++heard; });
  rclcpp::executors::SingleThreadedExecutor exec;
  exec.add_node(node);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (heard < 5 && std::chrono::steady_clock::now() < end) exec.spin_once(std::chrono::milliseconds(100));
  std::printf("heard %d\n", heard);
  rclcpp::shutdown();
  return heard >= 5 ? 0 : 1;
}
