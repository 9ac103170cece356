// Integration tests of the node API on real ROS 2: services and clients dispatched by the
// executor under FP and EDF (a response inherits its chain instance's deadline and outranks
// lower-priority work), parameters from --ros-args -p and --params-file, the standard parameter
// services, QoS profiles as a peer sees them and QoS events, --ros-args remapping of names.
// No wall-clock assertion: orders, counts and values only (give-up bounds prevent hangs).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <rcl_interfaces/srv/get_parameters.hpp>
#include <rcl_interfaces/srv/list_parameters.hpp>
#include <rcl_interfaces/srv/set_parameters.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/parameters.hpp"
#include "chainrt/runtime/services.hpp"
#include "ros_test_util.hpp"

namespace chainrt::runtime {
void set_current_stamp(const Stamp& s) noexcept;  // node.cpp (the executor sets it)

namespace {

using testing::unique_topic;
using testing::wait_until;
using Str = std_msgs::msg::String;
using ListParams = rcl_interfaces::srv::ListParameters;

// A server answers `depth` names; a client in a chain (timer -> response) sends a request every
// period. Every response arrives in a callback of the client's executor with the stamp of the
// timer instance that sent it, and completes an instance of the chain.
void check_round_trip(Policy policy) {
  Context ctx;
  Node server_node(ctx, "rpc_server");
  Node client_node(ctx, "rpc_client");
  const std::string service = unique_topic("rpc").substr(1);
  std::atomic<int> served{0};
  server_node.create_service<ListParams>(service, [&](const ListParams::Request& req,
                                                       ListParams::Response& res) {
    for (std::uint64_t i = 0; i < req.depth; ++i) res.result.names.push_back("n" + std::to_string(i));
    served.fetch_add(1);
  });
  std::mutex m;
  std::vector<std::pair<std::int64_t, std::uint64_t>> sent;     // seq, depth
  std::vector<std::pair<std::int64_t, std::size_t>> received;   // seq, names
  std::vector<Stamp> response_stamps;
  std::shared_ptr<Client<ListParams>> client;
  CallbackOptions co;
  co.name = "response";
  co.priority = 5;
  client = client_node.create_client<ListParams>(service, [&](const ListParams::Response& r,
                                                              std::int64_t seq) {
    std::lock_guard<std::mutex> lk(m);
    received.emplace_back(seq, r.result.names.size());
    response_stamps.push_back(current_stamp());
  }, co);
  std::uint64_t k = 0;
  CallbackOptions to;
  to.name = "request";
  to.priority = 4;
  client_node.create_timer(10'000'000, [&] {
    if (!client->service_is_ready()) return;
    ListParams::Request req;
    req.depth = 1 + (k++ % 4);
    std::int64_t seq = client->async_send_request(req);
    std::lock_guard<std::mutex> lk(m);
    if (seq >= 0) sent.emplace_back(seq, req.depth);
  }, to);

  ExecutorOptions eo;
  eo.policy = policy;
  Executor ex(ctx, eo);
  ex.add_node(server_node);
  ex.add_node(client_node);
  ChainSpec chain;
  chain.name = "rpc";
  chain.callbacks = {"request", "response"};
  chain.period = 10'000'000;
  chain.deadline = 50'000'000;
  ex.add_chain(chain);
  ex.start();
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> lk(m);
    return received.size() >= 20;
  }));
  ex.request_stop();
  ex.join();
  std::lock_guard<std::mutex> lk(m);
  for (const auto& [seq, names] : received) {
    auto it = std::find_if(sent.begin(), sent.end(), [&](auto& s) { return s.first == seq; });
    ASSERT_NE(it, sent.end()) << "a response to a request never sent";
    EXPECT_EQ(names, it->second) << "response matched to the wrong request";
  }
  for (const Stamp& s : response_stamps) {
    EXPECT_EQ(s.chain, 0u);                        // the chain instance of the request
    EXPECT_EQ(s.deadline, s.release + 50'000'000);  // d = a + D travels with the request
  }
  RunReport r = ex.report();
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_GE(r.chains[0].instances, 10u);
  EXPECT_GT(r.chains[0].bcrt_ns, 0);
  EXPECT_EQ(ex.exceptions(), 0u);
  EXPECT_GE(served.load(), static_cast<int>(received.size()));
}

TEST(NodeApiServices, RoundTripUnderFixedPriority) { check_round_trip(Policy::FixedPriority); }
TEST(NodeApiServices, RoundTripUnderEdf) { check_round_trip(Policy::Edf); }

// A response and a subscription message are ready at the same time in an executor that is not
// running yet; the response must be dispatched first: under FP by its higher priority, under
// EDF by the deadline of the chain instance that sent the request (the message has none).
void check_response_outranks(Policy policy) {
  Context ctx;
  Node server_node(ctx, "rank_server");
  Node client_node(ctx, "rank_client");
  const std::string service = unique_topic("rank").substr(1);
  const std::string topic = unique_topic("rank_topic");
  server_node.create_service<ListParams>(service, [](const ListParams::Request&,
                                                     ListParams::Response& res) {
    res.result.names.push_back("x");
  });
  Executor server(ctx, ExecutorOptions{});
  server.add_node(server_node);
  server.start();

  std::vector<std::string> order;
  std::mutex m;
  CallbackOptions ro;
  ro.name = "response";
  ro.priority = 10;
  auto client = client_node.create_client<ListParams>(service, [&](const ListParams::Response&,
                                                                   std::int64_t) {
    std::lock_guard<std::mutex> lk(m);
    order.push_back("response");
  }, ro);
  CallbackOptions so;
  so.name = "message";
  so.priority = 1;
  client_node.create_subscription<Str>(topic, 10, [&](const Str&) {
    std::lock_guard<std::mutex> lk(m);
    order.push_back("message");
  }, so);
  auto pub = client_node.create_publisher<Str>(topic, 10);
  ExecutorOptions eo;
  eo.policy = policy;
  Executor ex(ctx, eo);
  ex.add_node(client_node);
  ex.prepare();
  ASSERT_TRUE(wait_until([&] { return client->service_is_ready() && pub->subscription_count() > 0; }));
  Str msg;
  msg.data = "low";
  pub->publish(msg);
  Stamp st;
  st.release = now_ns();
  st.deadline = st.release + 1'000'000'000;
  st.chain = 0;
  set_current_stamp(st);  // as if a chain's callback sent the request
  ASSERT_GE(client->async_send_request(ListParams::Request{}), 0);
  set_current_stamp(Stamp{});
  ASSERT_TRUE(wait_until([&] { return ex.poll_ready() >= 2; }));
  ex.start();
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> lk(m);
    return order.size() >= 2;
  }));
  ex.request_stop();
  ex.join();
  server.request_stop();
  server.join();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], "response");
  EXPECT_EQ(order[1], "message");
}

TEST(NodeApiServices, ResponseOutranksUnderFixedPriority) {
  check_response_outranks(Policy::FixedPriority);
}
TEST(NodeApiServices, ResponseOutranksUnderEdf) { check_response_outranks(Policy::Edf); }

std::string write_params_file() {
  std::string path = "/tmp/chainrt_params_" + std::to_string(getpid()) + ".yaml";
  std::ofstream f(path);
  f << "/**:\n  ros__parameters:\n    rate: 30\n    gain: 9.0\n    mode: any\n"
       "param_node:\n  ros__parameters:\n    mode: fast\n    limits: [1.0, 2.5]\n"
       "other_node:\n  ros__parameters:\n    mode: slow\n";
  return path;
}

TEST(NodeApiParameters, FromFileAndCommandLine) {
  const std::string file = write_params_file();
  // -p after --params-file: the command line wins for `gain`
  const char* argv[] = {"test", "--ros-args", "--params-file", file.c_str(), "-p", "gain:=2.5",
                        "-p", "name:=lidar", "-p", "count:=3"};
  Context ctx(10, argv);
  Node n(ctx, "param_node");
  Parameters& p = n.parameters();
  EXPECT_DOUBLE_EQ(p.declare_parameter("gain", 1.0), 2.5);
  EXPECT_EQ(p.declare_parameter<std::string>("name", "camera"), "lidar");
  EXPECT_EQ(p.declare_parameter("rate", 10), 30);              // wildcard key /**
  EXPECT_EQ(p.declare_parameter<std::string>("mode", "none"), "fast");  // own key beats /**
  EXPECT_EQ(p.declare_parameter("limits", std::vector<double>{}), (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(p.declare_parameter("count", 0.0), 3.0);            // integer override of a double
  EXPECT_EQ(p.declare_parameter("unset", true), true);          // no override: the default
  EXPECT_TRUE(p.has_override("gain"));
  EXPECT_FALSE(p.has_override("unset"));
  EXPECT_THROW(p.declare_parameter("gain", 1.0), std::invalid_argument);
  // set: validators, types, read-only
  p.add_validator([](const std::string& name, const ParameterValue& v) {
    if (name == "gain" && std::get<double>(v) < 0) return SetParameterResult{false, "gain must be >= 0"};
    return SetParameterResult{};
  });
  EXPECT_TRUE(p.set("gain", 4.0).successful);
  EXPECT_DOUBLE_EQ(p.get_parameter<double>("gain"), 4.0);
  SetParameterResult r = p.set("gain", -1.0);
  EXPECT_FALSE(r.successful);
  EXPECT_EQ(r.reason, "gain must be >= 0");
  EXPECT_DOUBLE_EQ(p.get_parameter<double>("gain"), 4.0);
  EXPECT_FALSE(p.set("gain", std::string("high")).successful);  // type change refused
  EXPECT_FALSE(p.set("undeclared", 1.0).successful);
  ParameterDescriptor ro;
  ro.read_only = true;
  p.declare("frozen", std::int64_t{1}, ro);
  EXPECT_FALSE(p.set("frozen", std::int64_t{2}).successful);
  std::remove(file.c_str());
}

TEST(NodeApiParameters, OverrideOfWrongTypeIsAnError) {
  const char* argv[] = {"test", "--ros-args", "-p", "rate:=fast"};
  Context ctx(4, argv);
  Node n(ctx, "typed_node");
  EXPECT_THROW(n.parameters().declare_parameter("rate", 10), std::invalid_argument);
}

// The standard parameter services, called by a client node through the executor.
TEST(NodeApiParameters, StandardServices) {
  Context ctx;
  Node target(ctx, "tuned_node");
  target.parameters().declare_parameter("gain", 1.5);
  target.parameters().declare_parameter("filter.window", 8);
  target.parameters().enable_services();
  Node tool(ctx, "param_tool");
  using Get = rcl_interfaces::srv::GetParameters;
  using Set = rcl_interfaces::srv::SetParameters;
  std::atomic<int> set_ok{0}, set_refused{0};
  std::atomic<double> got{0};
  std::vector<std::string> listed;
  std::mutex m;
  auto set_client = tool.create_client<Set>("/tuned_node/set_parameters",
                                            [&](const Set::Response& r, std::int64_t) {
    for (auto& x : r.results) (x.successful ? set_ok : set_refused).fetch_add(1);
  });
  auto get_client = tool.create_client<Get>("/tuned_node/get_parameters",
                                            [&](const Get::Response& r, std::int64_t) {
    if (r.values.size() == 1 && r.values[0].type == 3) got.store(r.values[0].double_value);
  });
  auto list_client = tool.create_client<ListParams>("/tuned_node/list_parameters",
                                                    [&](const ListParams::Response& r, std::int64_t) {
    std::lock_guard<std::mutex> lk(m);
    listed.assign(r.result.names.begin(), r.result.names.end());
  });
  Executor ex(ctx, ExecutorOptions{});
  ex.add_node(target);
  ex.add_node(tool);
  ex.start();
  ASSERT_TRUE(wait_until([&] {
    return set_client->service_is_ready() && get_client->service_is_ready() &&
           list_client->service_is_ready();
  }));
  Set::Request sr;
  rcl_interfaces::msg::Parameter prm;
  prm.name = "gain";
  prm.value.type = 3;
  prm.value.double_value = 3.25;
  sr.parameters.push_back(prm);
  prm.name = "filter.window";
  prm.value.type = 4;  // a string for an integer: refused
  prm.value.string_value = "wide";
  sr.parameters.push_back(prm);
  ASSERT_GE(set_client->async_send_request(sr), 0);
  ASSERT_TRUE(wait_until([&] { return set_ok.load() + set_refused.load() == 2; }));
  EXPECT_EQ(set_ok.load(), 1);
  EXPECT_EQ(set_refused.load(), 1);
  EXPECT_DOUBLE_EQ(target.parameters().get_parameter<double>("gain"), 3.25);
  Get::Request gr;
  gr.names.push_back("gain");
  ASSERT_GE(get_client->async_send_request(gr), 0);
  ASSERT_TRUE(wait_until([&] { return got.load() == 3.25; }));
  ASSERT_GE(list_client->async_send_request(ListParams::Request{}), 0);
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> lk(m);
    return listed.size() == 3;  // with use_sim_time, declared by every node
  }));
  ex.request_stop();
  ex.join();
}

TEST(NodeApiQos, ProfileVisibleToPeerAndEvents) {
  Context ctx;
  Node a(ctx, "qos_talker");
  Node b(ctx, "qos_observer");
  const std::string topic = unique_topic("qos");
  auto pub = a.create_publisher<Str>(
      topic, QoS(7).reliable().transient_local().deadline(20'000'000).liveliness(
                 QoS::Liveliness::Automatic, 2'000'000'000));
  ASSERT_TRUE(wait_until([&] { return b.publishers_qos(topic).size() == 1; }));
  QoS seen = b.publishers_qos(topic).front();
  EXPECT_EQ(seen.reliability(), QoS::Reliability::Reliable);
  EXPECT_EQ(seen.durability(), QoS::Durability::TransientLocal);
  EXPECT_EQ(seen.deadline(), 20'000'000);
  EXPECT_EQ(seen.liveliness_lease(), 2'000'000'000);

  // transient_local: a late subscriber (reliable, transient_local) still gets the last message
  Str m;
  m.data = "before";
  ASSERT_TRUE(pub->publish(m));
  std::atomic<int> got{0};
  auto sub = b.create_subscription<Str>(topic, QoS(7).transient_local().deadline(20'000'000),
                                        [&](const Str& s) { if (s.data == "before") got.fetch_add(1); });
  Executor ex(ctx, ExecutorOptions{});
  ex.add_node(b);
  ex.start();
  ASSERT_TRUE(wait_until([&] { return got.load() == 1; }));
  // nothing more is published: both ends see their deadline missed
  ASSERT_TRUE(wait_until([&] {
    return pub->qos_events().deadline_missed.load() > 0 && sub->qos_events().deadline_missed.load() > 0;
  }));
  // a best-effort publisher cannot serve a reliable subscription: incompatible QoS, both sides
  const std::string topic2 = unique_topic("qos_incompatible");
  auto be_pub = a.create_publisher<Str>(topic2, QoS(1).best_effort());
  ASSERT_TRUE(wait_until([&] { return b.publishers_qos(topic2).size() == 1; }));
  EXPECT_EQ(b.publishers_qos(topic2).front().reliability(), QoS::Reliability::BestEffort);
  ex.request_stop();
  ex.join();
  EXPECT_NE(pub->qos_events().supported, 0u);
}

TEST(NodeApiNames, RosArgsRemapping) {
  const char* argv[] = {"test", "--ros-args", "-r", "__ns:=/robot1", "-r", "__node:=renamed",
                        "-r", "chatter:=remapped"};
  Context ctx(8, argv);
  Node n(ctx, "original");
  EXPECT_EQ(n.fully_qualified_name(), "/robot1/renamed");
  EXPECT_EQ(n.namespace_(), "/robot1");
  auto pub = n.create_publisher<Str>("chatter", 10);
  EXPECT_EQ(pub->resolved_topic(), "/robot1/remapped");
  Node other(ctx, "peer");
  auto sub_pub = other.create_publisher<Str>("/absolute/topic", 10);
  EXPECT_EQ(sub_pub->resolved_topic(), "/absolute/topic");
}

}  // namespace
}  // namespace chainrt::runtime
