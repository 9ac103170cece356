// The order of rclcpp's own SingleThreadedExecutor on the ROS 2 line this build uses (rclcpp 28
// on Jazzy, 29 on Kilted: the same executor code, docs/ros_lines.md), against what chainrt's
// ros-default models (docs/simulator.md, "The default executor"): the ready work of one wait runs
// kind by kind, every ready timer before any ready subscription, whatever node they belong to
// (rclpy, by contrast, goes node by node: tests/python/test_default_executor_peers.py). Within a
// kind the order is the wait set's, unspecified (rclcpp#2532), so only the kinds' order is
// asserted. No timing is asserted. The timers are one-shot (cancelled in their callback), so a
// slow machine cannot make one ready twice.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rclcpp/rclcpp.hpp>
#include <rclcpp/version.h>  // RCLCPP_VERSION_MAJOR, named in the failure messages
#include <std_msgs/msg/string.hpp>

#include "rclcpp_util.hpp"

namespace chainrt::rclcpp {
namespace {

using testing::Spinner;
using testing::wait_until;
using namespace std::chrono_literals;

// Two nodes, each with one subscription and one one-shot timer; a third node publishes one message
// to each subscription. `kinds` is the order the callbacks ran in, as "t" and "s".
class TwoNodes {
 public:
  TwoNodes()
      : p_(std::make_shared<::rclcpp::Node>("order_p")),
        n1_(std::make_shared<::rclcpp::Node>("order_n1")),
        n2_(std::make_shared<::rclcpp::Node>("order_n2")) {
    px_ = p_->create_publisher<std_msgs::msg::String>("order_x", 10);
    py_ = p_->create_publisher<std_msgs::msg::String>("order_y", 10);
    s1_ = n1_->create_subscription<std_msgs::msg::String>("order_x", 10,
                                                          [this](const std_msgs::msg::String&) { note("s1"); });
    s2_ = n2_->create_subscription<std_msgs::msg::String>("order_y", 10,
                                                          [this](const std_msgs::msg::String&) { note("s2"); });
  }
  bool matched() {
    return wait_until([&] { return px_->get_subscription_count() >= 1 && py_->get_subscription_count() >= 1; });
  }
  void add_to(::rclcpp::Executor& ex) {
    for (auto& n : {p_, n1_, n2_}) ex.add_node(n);
  }
  void publish() {
    std_msgs::msg::String msg;
    msg.data = "x";
    px_->publish(msg);
    py_->publish(msg);
  }
  void create_timers() {
    t1_ = n1_->create_wall_timer(50ms, [this] {
      note("t1");
      t1_->cancel();
    });
    t2_ = n2_->create_wall_timer(50ms, [this] {
      note("t2");
      t2_->cancel();
    });
  }
  std::vector<std::string> order() {
    std::lock_guard<std::mutex> lk(m_);
    return order_;
  }
  static std::string kinds(const std::vector<std::string>& o) {
    std::string k;
    for (const auto& s : o) k += s[0];
    return k;
  }
  static std::string names(const std::vector<std::string>& o) {
    std::string k;
    for (const auto& s : o) k += s + " ";
    return k + "(rclcpp " + std::to_string(RCLCPP_VERSION_MAJOR) + ")";
  }

 private:
  void note(const char* what) {
    std::lock_guard<std::mutex> lk(m_);
    order_.emplace_back(what);
  }
  std::shared_ptr<::rclcpp::Node> p_, n1_, n2_;
  ::rclcpp::Publisher<std_msgs::msg::String>::SharedPtr px_, py_;
  ::rclcpp::Subscription<std_msgs::msg::String>::SharedPtr s1_, s2_;
  ::rclcpp::TimerBase::SharedPtr t1_, t2_;
  std::mutex m_;
  std::vector<std::string> order_;
};

TEST(StockSingleThreadedExecutor, TakesEveryReadyTimerBeforeAnySubscriptionAcrossNodes) {
  TwoNodes sys;
  ASSERT_TRUE(sys.matched());
  std::this_thread::sleep_for(500ms);  // both sides of the matches settle
  // before the executor takes the nodes: add_node on an executor that is not spinning collects
  // the nodes' entities at once, and one created later joins only after a wait has seen the
  // node's guard condition (Executor::trigger_entity_recollect in rclcpp 28, handle_updated_entities in 29)
  sys.create_timers();
  ::rclcpp::executors::SingleThreadedExecutor ex;
  sys.add_to(ex);
  sys.publish();
  std::this_thread::sleep_for(1s);  // the messages arrived, the timers are due: all ready at one wait
  {
    Spinner<::rclcpp::executors::SingleThreadedExecutor> spin(ex);
    ASSERT_TRUE(wait_until([&] { return sys.order().size() >= 4; })) << TwoNodes::names(sys.order());
  }
  const auto o = sys.order();
  ASSERT_EQ(o.size(), 4u) << TwoNodes::names(o);
  EXPECT_EQ(TwoNodes::kinds(o), "ttss") << TwoNodes::names(o);
}

}  // namespace
}  // namespace chainrt::rclcpp
