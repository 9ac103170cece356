#include "pipeline_demo/nodes.hpp"

namespace pipeline_demo {

using chainrt::runtime::current_stamp;

CameraDriver::CameraDriver(chainrt::runtime::Context& ctx,
                           const chainrt::runtime::ModelBinding& model, chainrt::Duration work)
    : node_(ctx, "camera_driver"), work_(work) {
  msg_.frame_id = "camera";
  pub_ = node_.create_publisher<std_msgs::msg::Header>("image", 10);
  const chainrt::Callback* cb = nullptr;
  for (const auto& c : model.model().callbacks)
    if (c.name == "capture") cb = &c;
  timer_ = node_.create_timer(cb ? cb->period : 20'000'000, [this] {
    chainrt::runtime::burn_cpu(work_);  // stands for grabbing and rectifying an image
    chainrt::runtime::to_msg_time(current_stamp().release, msg_.stamp);
    pub_->publish(msg_);
    frames_.fetch_add(1);
  }, model.options("capture"));
}

}  // namespace pipeline_demo
