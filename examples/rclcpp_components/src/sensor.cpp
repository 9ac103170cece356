// A sensor: publishes a reading every `period_ms` (default 10 ms) on `readings`.
#include <chrono>
#include <memory>
#include <string>

#include <rclcpp/rclcpp.hpp>
#include <rclcpp_components/register_node_macro.hpp>
#include <std_msgs/msg/string.hpp>

namespace chainrt_demo {

class Sensor : public rclcpp::Node {
 public:
  explicit Sensor(const rclcpp::NodeOptions& options) : Node("sensor", options) {
    const auto period = declare_parameter<int>("period_ms", 10);
    pub_ = create_publisher<std_msgs::msg::String>("readings", 10);
    timer_ = create_wall_timer(std::chrono::milliseconds(period), [this] {
      std_msgs::msg::String m;
      m.data = "reading " + std::to_string(count_++);
      pub_->publish(m);
    });
  }

 private:
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr pub_;
  rclcpp::TimerBase::SharedPtr timer_;
  long count_ = 0;
};

}  // namespace chainrt_demo

RCLCPP_COMPONENTS_REGISTER_NODE(chainrt_demo::Sensor)
