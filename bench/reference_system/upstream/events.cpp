// autoware_default_events: upstream's reference system on rclcpp's EventsExecutor.
//
// Upstream v1.1.0 ships one executable per stock executor (autoware_default_singlethreaded,
// ..._staticsinglethreaded, ..._multithreaded, ..._prioritized, ..._cbg) but none for the
// EventsExecutor, which rclcpp has offered since (rclcpp::experimental::executors). This is
// upstream's single-threaded main with that one executor in its place: the same nodes, built
// by upstream's create_autoware_nodes with upstream's timing (default.hpp, the number-cruncher
// limits from the environment as for the other executables), the same KPIs printed by
// upstream's sinks.
#include <memory>
#include <vector>

#include "rclcpp/experimental/executors/events_executor/events_executor.hpp"
#include "rclcpp/rclcpp.hpp"

#include "reference_system/system/type/rclcpp_system.hpp"

#include "autoware_reference_system/autoware_system_builder.hpp"
#include "autoware_reference_system/system/timing/default.hpp"

int main(int argc, char* argv[]) {
  rclcpp::init(argc, argv);
  auto nodes = create_autoware_nodes<RclcppSystem, nodes::timing::Default>();
  rclcpp::experimental::executors::EventsExecutor executor;
  for (auto& node : nodes) executor.add_node(node);
  executor.spin();
  nodes.clear();
  rclcpp::shutdown();
  return 0;
}
