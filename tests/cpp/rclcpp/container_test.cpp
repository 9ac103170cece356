// chainrt_component_container: two composable nodes of a user's own package
// (examples/rclcpp_components, built as a separate ament package) load into it through the
// standard composition services, as `ros2 component load` loads them, and run on the
// ChainExecutor; with the package's model the sensor -> filter chain is bound and measured
// (monitoring topic). The container is a process of its own, ended by its PID.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <composition_interfaces/srv/list_nodes.hpp>
#include <composition_interfaces/srv/load_node.hpp>
#include <composition_interfaces/srv/unload_node.hpp>
#include <chainrt_msgs/msg/chain_stats.hpp>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::testing::wait_until;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// The container, started with `args` after --ros-args; AMENT_PREFIX_PATH also names the demo
// package's install prefix (where the ament index lists its components).
class Container {
 public:
  Container(const std::string& name, std::vector<std::string> params) {
    pid_ = fork();
    if (pid_ == 0) {
      const char* ament = std::getenv("AMENT_PREFIX_PATH");
      const std::string path = std::string(CHAINRT_DEMO_PREFIX) + (ament ? std::string(":") + ament : "");
      setenv("AMENT_PREFIX_PATH", path.c_str(), 1);
      std::vector<std::string> args{CHAINRT_CONTAINER, "--ros-args", "-r", "__node:=" + name};
      for (auto& p : params) args.insert(args.end(), {"-p", p});
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  // SIGINT, as Ctrl-C; the container's exit status.
  int stop() { return wait(true); }
  // Its exit status once it ended (by itself, or after SIGINT when `interrupt`).
  int wait(bool interrupt = false) {
    if (pid_ <= 0) return -1;
    if (interrupt) kill(pid_, SIGINT);
    int status = 0;
    for (int i = 0; i < 600; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(50ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return -2;
  }
  ~Container() { stop(); }

 private:
  pid_t pid_ = -1;
};

struct Client {
  explicit Client(const std::string& container)
      : node(std::make_shared<rclcpp::Node>("component_client")),
        load(node->create_client<composition_interfaces::srv::LoadNode>(container + "/_container/load_node")),
        unload(node->create_client<composition_interfaces::srv::UnloadNode>(container + "/_container/unload_node")),
        list(node->create_client<composition_interfaces::srv::ListNodes>(container + "/_container/list_nodes")) {
    exec.add_node(node);
  }
  template <class C, class Req>
  auto call(C& client, Req req) {
    auto f = client->async_send_request(req);
    EXPECT_EQ(exec.spin_until_future_complete(f, 60s), rclcpp::FutureReturnCode::SUCCESS);
    return f.get();
  }
  composition_interfaces::srv::LoadNode::Response::SharedPtr load_node(const std::string& plugin) {
    auto req = std::make_shared<composition_interfaces::srv::LoadNode::Request>();
    req->package_name = "chainrt_demo_components";
    req->plugin_name = plugin;
    return call(load, req);
  }
  rclcpp::Node::SharedPtr node;
  rclcpp::Client<composition_interfaces::srv::LoadNode>::SharedPtr load;
  rclcpp::Client<composition_interfaces::srv::UnloadNode>::SharedPtr unload;
  rclcpp::Client<composition_interfaces::srv::ListNodes>::SharedPtr list;
  ChainExecutor exec;
};

TEST(ComponentContainer, LoadsTwoComposableNodesOfAUsersPackage) {
  Container container("demo_container", {});
  Client client("/demo_container");
  ASSERT_TRUE(client.load->wait_for_service(60s)) << "the container did not come up";
  auto sensor = client.load_node("chainrt_demo::Sensor");
  ASSERT_TRUE(sensor->success) << sensor->error_message;
  EXPECT_EQ(sensor->full_node_name, "/sensor");
  auto filter = client.load_node("chainrt_demo::Filter");
  ASSERT_TRUE(filter->success) << filter->error_message;
  EXPECT_EQ(filter->full_node_name, "/filter");

  // the two nodes talk: sensor -> readings -> filter -> filtered
  std::atomic<int> filtered{0};
  auto sub = client.node->create_subscription<std_msgs::msg::String>(
      "filtered", 10, [&](const std_msgs::msg::String& m) {
        if (m.data.rfind("filtered reading ", 0) == 0) ++filtered;
      });
  EXPECT_TRUE(wait_until([&] {
    client.exec.spin_some();
    return filtered.load() >= 20;
  }));

  auto names = client.call(client.list, std::make_shared<composition_interfaces::srv::ListNodes::Request>());
  EXPECT_EQ(names->full_node_names, (std::vector<std::string>{"/sensor", "/filter"}));
  auto req = std::make_shared<composition_interfaces::srv::UnloadNode::Request>();
  req->unique_id = sensor->unique_id;
  EXPECT_TRUE(client.call(client.unload, req)->success);
  names = client.call(client.list, std::make_shared<composition_interfaces::srv::ListNodes::Request>());
  EXPECT_EQ(names->full_node_names, std::vector<std::string>{"/filter"});
  // a component the package does not have: a clear error, the container goes on
  auto missing = client.load_node("chainrt_demo::Nothing");
  EXPECT_FALSE(missing->success);
  EXPECT_EQ(container.stop(), 0);
}

TEST(ComponentContainer, RunsTheModelsChainAndPublishesItsStatistics) {
  Container container("model_container",
                      {std::string("chainrt.model:=") + CHAINRT_DEMO_MODEL, "chainrt.stats_period:=0.2",
                       "chainrt.run_id:=demo"});
  Client client("/model_container");
  std::mutex m;
  chainrt_msgs::msg::ChainStats last;
  auto stats = client.node->create_subscription<chainrt_msgs::msg::ChainStats>(
      "/chainrt/chain_stats", 10, [&](const chainrt_msgs::msg::ChainStats& s) {
        std::lock_guard<std::mutex> lk(m);
        if (s.run.run_id == "demo") last = s;
      });
  ASSERT_TRUE(client.load->wait_for_service(60s));
  ASSERT_TRUE(client.load_node("chainrt_demo::Sensor")->success);
  ASSERT_TRUE(client.load_node("chainrt_demo::Filter")->success);
  // the chain's instances are measured (bound by node name, period and topic), under picas
  EXPECT_TRUE(wait_until([&] {
    client.exec.spin_some();
    std::lock_guard<std::mutex> lk(m);
    for (const auto& c : last.chains)
      if (c.name == "sense_to_filter") return c.instances >= 20;
    return false;
  }));
  std::lock_guard<std::mutex> lk(m);
  EXPECT_EQ(last.run.policy, "picas");
  EXPECT_TRUE(std::any_of(last.callbacks.begin(), last.callbacks.end(),
                          [](const auto& c) { return c.name == "filter_reading"; }));
  EXPECT_EQ(container.stop(), 0);
}

TEST(ComponentContainer, ABadModelIsAOneLineError) {
  Container container("bad_container", {"chainrt.model:=/nonexistent/model.yaml"});
  EXPECT_EQ(container.wait(), 2);  // it ends by itself
}

}  // namespace
