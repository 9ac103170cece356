#include "pipeline_demo/nodes.hpp"

#include <chainrt/runtime/parameters.hpp>

#include <cstdio>

namespace pipeline_demo {

using Header = std_msgs::msg::Header;

ObstacleFilter::ObstacleFilter(chainrt::runtime::Context& ctx,
                               const chainrt::runtime::ModelBinding& model, chainrt::Duration work,
                               chainrt::Duration housekeeping_work)
    : node_(ctx, "obstacle_filter"), work_(work), housekeeping_work_(housekeeping_work) {
  // A parameter of the node: `--ros-args -p work_ms:=2.5` or a params file overrides the default;
  // read once here, before the executor starts (the dispatch path stays allocation-free).
  auto& params = node_.parameters();
  work_ = static_cast<chainrt::Duration>(
      params.declare_parameter("work_ms", static_cast<double>(work) / 1e6) * 1e6);
  params.enable_services();  // <node>/get_parameters, set_parameters, ... for tools
  std::fprintf(stderr, "%s: work_ms=%g\n", node_.fully_qualified_name().c_str(),
               static_cast<double>(work_) / 1e6);
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
