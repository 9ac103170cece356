// A filter: takes every reading and publishes what it made of it on `filtered`.
#include <memory>

#include <rclcpp/rclcpp.hpp>
#include <rclcpp_components/register_node_macro.hpp>
#include <std_msgs/msg/string.hpp>

namespace chainrt_demo {

class Filter : public rclcpp::Node {
 public:
  explicit Filter(const rclcpp::NodeOptions& options) : Node("filter", options) {
    pub_ = create_publisher<std_msgs::msg::String>("filtered", 10);
    sub_ = create_subscription<std_msgs::msg::String>("readings", 10, [this](const std_msgs::msg::String& in) {
      std_msgs::msg::String out;
      out.data = "filtered " + in.data;
      pub_->publish(out);
    });
  }

 private:
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr pub_;
  rclcpp::Subscription<std_msgs::msg::String>::SharedPtr sub_;
};

}  // namespace chainrt_demo

RCLCPP_COMPONENTS_REGISTER_NODE(chainrt_demo::Filter)
