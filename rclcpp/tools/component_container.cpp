// chainrt_component_container: rclcpp_components' component container on chainrt's
// ChainExecutor. Unmodified composable nodes (rclcpp_components_register_nodes in their package)
// load into it through the standard composition services of the ComponentManager
// (~/_container/load_node, unload_node, list_nodes: what `ros2 component load` calls) and run
// with the model's scheduling.
//
//   chainrt_component_container --ros-args -r __node:=my_container -p chainrt.model:=system.yaml
//
// Parameters of the container node:
//   chainrt.model         a chainrt model file ("": none; every node is monitored, ros-default)
//   chainrt.executor      which executor of the model this container is ("": the only one, or
//                         the one hosting the first loaded node the model has)
//   chainrt.policy        overrides the model's policy (any of policies.def)
//   chainrt.threads       executor threads instead of the model's (0: the model's, else 1)
//   chainrt.stats_period  seconds between monitoring messages on /chainrt/chain_stats (0: none)
//   chainrt.run_id        the run id of the monitoring messages
//   chainrt.report        print the monitor's summary when the container ends
// A bad parameter or model ends the container with a one-line error (exit 2).
#include <rclcpp/rclcpp.hpp>
#include <rclcpp_components/component_manager.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "chainrt/rclcpp/chain_executor.hpp"

int main(int argc, char* argv[]) {
  rclcpp::init(argc, argv);
  int rc = 0;
  try {
    auto manager = std::make_shared<rclcpp_components::ComponentManager>();
    chainrt::rclcpp::ChainExecutorOptions o;
    o.model_file = manager->declare_parameter<std::string>("chainrt.model", "");
    o.executor = manager->declare_parameter<std::string>("chainrt.executor", "");
    const std::string policy = manager->declare_parameter<std::string>("chainrt.policy", "");
    const auto threads = manager->declare_parameter<std::int64_t>("chainrt.threads", 0);
    const double stats = manager->declare_parameter<double>("chainrt.stats_period", 0.0);
    o.run_id = manager->declare_parameter<std::string>("chainrt.run_id", "");
    o.print_report = manager->declare_parameter<bool>("chainrt.report", false);
    if (!policy.empty()) {
      o.policy = chainrt::policy_from(policy);
      if (!o.policy) throw std::invalid_argument("chainrt.policy: unknown policy '" + policy + "'");
    }
    if (threads < 0 || threads > 64) throw std::invalid_argument("chainrt.threads must be 0..64");
    if (threads > 0) o.threads = static_cast<int>(threads);
    if (stats < 0) throw std::invalid_argument("chainrt.stats_period must be >= 0 (seconds)");
    o.stats_period = static_cast<chainrt::Duration>(stats * 1e9);
    // the composable nodes load while it spins: at start no model callback has its entity yet
    o.allow_unbound = true;
    auto exec = std::make_shared<chainrt::rclcpp::ChainExecutor>(o);
    manager->set_executor(exec);
    exec->add_node(manager);
    exec->spin();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt_component_container: %s\n", e.what());
    rc = 2;
  }
  rclcpp::shutdown();
  return rc;
}
