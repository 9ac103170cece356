#include "pipeline_demo/nodes.hpp"

namespace pipeline_demo {

using Header = std_msgs::msg::Header;

ObstacleFilter::ObstacleFilter(chainrt::runtime::Context& ctx,
                               const chainrt::runtime::ModelBinding& model, chainrt::Duration work,
                               chainrt::Duration housekeeping_work)
    : node_(ctx, "obstacle_filter"), work_(work), housekeeping_work_(housekeeping_work) {
  sub_ = node_.create_subscription<Header>(
      "image", 10,
      [this](const Header&) {
        chainrt::runtime::burn_cpu(work_);  // stands for the detection on the frame
        processed_.fetch_add(1);
      },
      model.options("detect"), model.stamp_from_header<Header>("perception"));
  housekeeping_ = node_.create_timer(100'000'000, [this] {
    chainrt::runtime::burn_cpu(housekeeping_work_);
  }, model.options("housekeeping"));
}

}  // namespace pipeline_demo
