// The order of rclcpp's own SingleThreadedExecutor on the ROS 2 line this build uses (rclcpp 28
// on Jazzy, 29 on Kilted: the same executor code, docs/ros_lines.md), against what chainrt's
// ros-default models (docs/simulator.md, "The default executor"): at one wait, every ready timer
// runs before any ready subscription, whatever node they belong to (rclpy, by contrast, goes node
// by node: tests/python/test_default_executor_peers.py). Within a kind the order is the wait
// set's, unspecified (rclcpp#2532), so only the kinds' order is asserted. No timing is asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>
#include <rclcpp/version.h>  // RCLCPP_VERSION_MAJOR, named in the failure message
#include <std_msgs/msg/string.hpp>

#include "rclcpp_util.hpp"

namespace chainrt::rclcpp {
namespace {

using testing::wait_until;
using namespace std::chrono_literals;

TEST(StockSingleThreadedExecutor, TakesEveryReadyTimerBeforeAnySubscriptionAcrossNodes) {
  auto p = std::make_shared<::rclcpp::Node>("order_p");
  auto n1 = std::make_shared<::rclcpp::Node>("order_n1");
  auto n2 = std::make_shared<::rclcpp::Node>("order_n2");
  std::mutex m;
  std::vector<std::string> order;
  auto note = [&](const char* what) {
    std::lock_guard<std::mutex> lk(m);
    order.emplace_back(what);
  };
  auto px = p->create_publisher<std_msgs::msg::String>("order_x", 10);
  auto py = p->create_publisher<std_msgs::msg::String>("order_y", 10);
  auto s1 = n1->create_subscription<std_msgs::msg::String>("order_x", 10,
                                                           [&](const std_msgs::msg::String&) { note("s1"); });
  auto s2 = n2->create_subscription<std_msgs::msg::String>("order_y", 10,
                                                           [&](const std_msgs::msg::String&) { note("s2"); });
  ASSERT_TRUE(wait_until([&] { return px->get_subscription_count() >= 1 && py->get_subscription_count() >= 1; }));
  std::this_thread::sleep_for(500ms);  // both sides of the matches settle
  ::rclcpp::executors::SingleThreadedExecutor ex;
  for (auto& n : {p, n1, n2}) ex.add_node(n);
  std_msgs::msg::String msg;
  msg.data = "x";
  px->publish(msg);
  py->publish(msg);
  auto t1 = n1->create_wall_timer(50ms, [&] { note("t1"); });
  auto t2 = n2->create_wall_timer(50ms, [&] { note("t2"); });
  std::this_thread::sleep_for(1s);  // the messages arrived, the timers are due: all ready at one wait
  for (int i = 0; i < 4; ++i) ex.spin_once(5s);
  t1->cancel();
  t2->cancel();
  std::lock_guard<std::mutex> lk(m);
  ASSERT_GE(order.size(), 4u);
  const std::vector<std::string> first(order.begin(), order.begin() + 4);
  auto is_timer = [](const std::string& s) { return s[0] == 't'; };
  EXPECT_TRUE(is_timer(first[0]) && is_timer(first[1]) && !is_timer(first[2]) && !is_timer(first[3]))
      << first[0] << " " << first[1] << " " << first[2] << " " << first[3] << " (rclcpp "
      << RCLCPP_VERSION_MAJOR << ")";
}

}  // namespace
}  // namespace chainrt::rclcpp
