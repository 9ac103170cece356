// A plain rclcpp program (no chainrt, rclcpp's headers only): a timer on rclcpp's
// SingleThreadedExecutor; prints "ticks N".
#include <cstdio>
#include <memory>
#include <rclcpp/rclcpp.hpp>

int main(int argc, char** argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("plain_robot");
  int ticks = 0;
  auto timer = node->create_wall_timer(std::chrono::milliseconds(5), [&] { ++ticks; });
  rclcpp::executors::SingleThreadedExecutor exec;
  exec.add_node(node);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ticks < 5 && std::chrono::steady_clock::now() < end) exec.spin_once(std::chrono::milliseconds(100));
  std::printf("ticks %d\n", ticks);
  rclcpp::shutdown();
  return ticks >= 5 ? 0 : 1;
}
