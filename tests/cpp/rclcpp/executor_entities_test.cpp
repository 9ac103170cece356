// Unmodified rclcpp code under chainrt's ChainExecutor: a talker/listener, a service pair, an
// action server/client, a lifecycle node; spin / spin_once / spin_some / spin_until_future_complete
// with rclcpp's contract; exceptions of user callbacks; the monitor's report and JSON; binding to
// a model and the unmatched list.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <lifecycle_msgs/msg/state.hpp>
#include <lifecycle_msgs/msg/transition.hpp>
#include <lifecycle_msgs/srv/change_state.hpp>
#include <rcl_interfaces/msg/parameter_event.hpp>
#include <rclcpp/rclcpp.hpp>
#include <rclcpp_action/rclcpp_action.hpp>
#include <rclcpp_lifecycle/lifecycle_node.hpp>
#include <chainrt_msgs/msg/chain_stats.hpp>
#include <std_msgs/msg/string.hpp>
#include <std_srvs/srv/set_bool.hpp>
#include <test_msgs/action/fibonacci.hpp>

#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// ---- the user's code, as written for rclcpp's own executors --------------------------------

class Talker : public rclcpp::Node {
 public:
  explicit Talker(const std::string& topic, std::chrono::milliseconds period = 10ms) : Node("talker") {
    pub_ = create_publisher<std_msgs::msg::String>(topic, 10);
    timer_ = create_wall_timer(period, [this] {
      std_msgs::msg::String m;
      m.data = "hello " + std::to_string(count_++);
      pub_->publish(m);
    });
  }
  std::atomic<int> count_{0};

 private:
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr pub_;
  rclcpp::TimerBase::SharedPtr timer_;
};

class Listener : public rclcpp::Node {
 public:
  explicit Listener(const std::string& topic) : Node("listener") {
    sub_ = create_subscription<std_msgs::msg::String>(topic, 10, [this](const std_msgs::msg::String& m) {
      last_ = m.data;
      ++heard_;
    });
  }
  std::atomic<int> heard_{0};
  std::string last_;

 private:
  rclcpp::Subscription<std_msgs::msg::String>::SharedPtr sub_;
};

TEST(ChainExecutor, TalkerListener) {
  auto talker = std::make_shared<Talker>("chatter");
  auto listener = std::make_shared<Listener>("chatter");
  ChainExecutor exec;
  exec.add_node(talker);
  exec.add_node(listener);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return listener->heard_.load() >= 20; }));
  }
  EXPECT_EQ(exec.policy(), chainrt::Policy::RosDefault);
  const auto r = exec.report();
  bool timer = false, sub = false;
  for (const auto& c : r.callbacks) {
    if (c.name == "talker/timer@10ms") timer = c.instances >= 20 && c.kind == "timer" && c.node == "/talker";
    if (c.name == "listener/sub:/chatter") sub = c.instances >= 20 && c.topic == "/chatter";
  }
  EXPECT_TRUE(timer && sub) << exec.report_json();
  EXPECT_TRUE(exec.unmatched().empty());  // no model: nothing is "unmatched"
}

TEST(ChainExecutor, IntraProcessTalkerListener) {
  auto ctx_opts = rclcpp::NodeOptions().use_intra_process_comms(true);
  auto talker = std::make_shared<rclcpp::Node>("ipc_talker", ctx_opts);
  auto listener = std::make_shared<rclcpp::Node>("ipc_listener", ctx_opts);
  auto pub = talker->create_publisher<std_msgs::msg::String>("ipc_chatter", 10);
  std::atomic<int> heard{0};
  auto sub = listener->create_subscription<std_msgs::msg::String>(
      "ipc_chatter", 10, [&](std_msgs::msg::String::UniquePtr) { ++heard; });
  auto timer = talker->create_wall_timer(5ms, [&] { pub->publish(std::make_unique<std_msgs::msg::String>()); });
  ChainExecutor exec;
  exec.add_node(talker);
  exec.add_node(listener);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return heard.load() >= 10; }));
  }
  std::uint64_t ipc = 0;
  for (const auto& c : exec.report().callbacks)
    if (c.name.find("ipc:") != std::string::npos) ipc += c.instances;
  EXPECT_GE(ipc, 10u) << exec.report_json();  // delivered through the intra-process waitable
}

TEST(ChainExecutor, ServicePairWithSpinUntilFutureComplete) {
  auto server = std::make_shared<rclcpp::Node>("server");
  auto service = server->create_service<std_srvs::srv::SetBool>(
      "set_flag", [](const std::shared_ptr<std_srvs::srv::SetBool::Request> req,
                     std::shared_ptr<std_srvs::srv::SetBool::Response> res) {
        res->success = req->data;
        res->message = req->data ? "on" : "off";
      });
  auto client_node = std::make_shared<rclcpp::Node>("client");
  auto client = client_node->create_client<std_srvs::srv::SetBool>("set_flag");
  ChainExecutor server_exec;
  server_exec.add_node(server);
  Spinner<ChainExecutor> spin(server_exec);
  ASSERT_TRUE(client->wait_for_service(60s));
  ChainExecutor client_exec;
  client_exec.add_node(client_node);
  for (bool flag : {true, false}) {
    auto req = std::make_shared<std_srvs::srv::SetBool::Request>();
    req->data = flag;
    auto future = client->async_send_request(req);
    ASSERT_EQ(client_exec.spin_until_future_complete(future, 60s), rclcpp::FutureReturnCode::SUCCESS);
    const auto response = future.get();
    EXPECT_EQ(response->success, flag);
    EXPECT_EQ(response->message, flag ? "on" : "off");
  }
  // a future nobody completes: TIMEOUT, as rclcpp's executors
  std::promise<int> never;
  auto f = never.get_future().share();
  EXPECT_EQ(client_exec.spin_until_future_complete(f, 50ms), rclcpp::FutureReturnCode::TIMEOUT);
}

TEST(ChainExecutor, ActionServerAndClient) {
  using Fibonacci = test_msgs::action::Fibonacci;
  using GoalHandle = rclcpp_action::ServerGoalHandle<Fibonacci>;
  auto server_node = std::make_shared<rclcpp::Node>("fib_server");
  std::atomic<int> accepted{0};
  auto server = rclcpp_action::create_server<Fibonacci>(
      server_node, "fibonacci",
      [](const rclcpp_action::GoalUUID&, std::shared_ptr<const Fibonacci::Goal> goal) {
        return goal->order > 0 ? rclcpp_action::GoalResponse::ACCEPT_AND_EXECUTE : rclcpp_action::GoalResponse::REJECT;
      },
      [](const std::shared_ptr<GoalHandle>) { return rclcpp_action::CancelResponse::ACCEPT; },
      [&](const std::shared_ptr<GoalHandle> handle) {
        ++accepted;
        // executes on a thread of its own, as the rclcpp_action tutorial's server does
        std::thread([handle] {
          auto result = std::make_shared<Fibonacci::Result>();
          auto feedback = std::make_shared<Fibonacci::Feedback>();
          feedback->sequence = {0, 1};
          for (int i = 1; i < handle->get_goal()->order; ++i) {
            feedback->sequence.push_back(feedback->sequence[i] + feedback->sequence[i - 1]);
            handle->publish_feedback(feedback);
          }
          result->sequence = feedback->sequence;
          handle->succeed(result);
        }).detach();
      });
  ChainExecutor server_exec;
  server_exec.add_node(server_node);
  Spinner<ChainExecutor> spin(server_exec);

  auto client_node = std::make_shared<rclcpp::Node>("fib_client");
  auto client = rclcpp_action::create_client<Fibonacci>(client_node, "fibonacci");
  ASSERT_TRUE(client->wait_for_action_server(60s));
  ChainExecutor client_exec;
  client_exec.add_node(client_node);
  std::atomic<int> feedbacks{0};
  rclcpp_action::Client<Fibonacci>::SendGoalOptions opts;
  opts.feedback_callback = [&](auto, const std::shared_ptr<const Fibonacci::Feedback>) { ++feedbacks; };
  Fibonacci::Goal goal;
  goal.order = 8;
  auto goal_future = client->async_send_goal(goal, opts);
  ASSERT_EQ(client_exec.spin_until_future_complete(goal_future, 60s), rclcpp::FutureReturnCode::SUCCESS);
  auto handle = goal_future.get();
  ASSERT_TRUE(handle);
  auto result_future = client->async_get_result(handle);
  ASSERT_EQ(client_exec.spin_until_future_complete(result_future, 60s), rclcpp::FutureReturnCode::SUCCESS);
  const auto wrapped = result_future.get();
  EXPECT_EQ(wrapped.code, rclcpp_action::ResultCode::SUCCEEDED);
  const std::vector<int32_t> expect{0, 1, 1, 2, 3, 5, 8, 13, 21};
  EXPECT_EQ(wrapped.result->sequence, expect);
  EXPECT_EQ(accepted.load(), 1);
  // a rejected goal
  Fibonacci::Goal bad;
  bad.order = 0;
  auto bad_future = client->async_send_goal(bad);
  ASSERT_EQ(client_exec.spin_until_future_complete(bad_future, 60s), rclcpp::FutureReturnCode::SUCCESS);
  EXPECT_FALSE(bad_future.get());
}

class Lifecycle : public rclcpp_lifecycle::LifecycleNode {
 public:
  Lifecycle() : LifecycleNode("managed") {}
  using CallbackReturn = rclcpp_lifecycle::node_interfaces::LifecycleNodeInterface::CallbackReturn;
  CallbackReturn on_configure(const rclcpp_lifecycle::State&) override {
    pub_ = create_publisher<std_msgs::msg::String>("managed_out", 10);
    timer_ = create_wall_timer(5ms, [this] {
      if (pub_->is_activated()) pub_->publish(std_msgs::msg::String());
    });
    ++configured;
    return CallbackReturn::SUCCESS;
  }
  CallbackReturn on_activate(const rclcpp_lifecycle::State& s) override {
    LifecycleNode::on_activate(s);
    ++activated;
    return CallbackReturn::SUCCESS;
  }
  std::atomic<int> configured{0}, activated{0};

 private:
  rclcpp_lifecycle::LifecyclePublisher<std_msgs::msg::String>::SharedPtr pub_;
  rclcpp::TimerBase::SharedPtr timer_;
};

TEST(ChainExecutor, LifecycleNodeThroughItsServices) {
  auto managed = std::make_shared<Lifecycle>();
  auto listener = std::make_shared<Listener>("managed_out");
  ChainExecutor exec(ChainExecutorOptions{.threads = 2});
  exec.add_node(managed->get_node_base_interface());
  exec.add_node(listener);
  Spinner<ChainExecutor> spin(exec);
  // The transitions arrive through the node's lifecycle services, as `ros2 lifecycle set` sends them.
  auto caller = std::make_shared<rclcpp::Node>("lifecycle_caller");
  auto change = caller->create_client<lifecycle_msgs::srv::ChangeState>("/managed/change_state");
  ASSERT_TRUE(change->wait_for_service(60s));
  ChainExecutor caller_exec;
  caller_exec.add_node(caller);
  for (auto id : {lifecycle_msgs::msg::Transition::TRANSITION_CONFIGURE, lifecycle_msgs::msg::Transition::TRANSITION_ACTIVATE}) {
    auto req = std::make_shared<lifecycle_msgs::srv::ChangeState::Request>();
    req->transition.id = id;
    auto f = change->async_send_request(req);
    ASSERT_EQ(caller_exec.spin_until_future_complete(f, 60s), rclcpp::FutureReturnCode::SUCCESS);
    EXPECT_TRUE(f.get()->success);
  }
  EXPECT_EQ(managed->configured.load(), 1);
  EXPECT_EQ(managed->activated.load(), 1);
  EXPECT_EQ(managed->get_current_state().id(), lifecycle_msgs::msg::State::PRIMARY_STATE_ACTIVE);
  // the timer created in on_configure (entities added while spinning) runs and publishes
  EXPECT_TRUE(wait_until([&] { return listener->heard_.load() >= 10; }));
  managed->shutdown();
}

TEST(ChainExecutor, SpinOnceAndSpinSome) {
  auto node = quiet_node("once");
  std::atomic<int> ticks{0};
  auto timer = node->create_wall_timer(1ms, [&] { ++ticks; });
  ChainExecutor exec;
  exec.add_node(node);
  exec.spin_once(5s);  // waits for the timer's first release
  EXPECT_EQ(ticks.load(), 1);
  std::this_thread::sleep_for(3ms);
  exec.spin_some();    // what is ready now: the timer, once
  EXPECT_EQ(ticks.load(), 2);
  exec.spin_once(0ns);  // nothing ready at once: returns
  EXPECT_LE(ticks.load(), 3);
  // spin_node_some / spin_node_once of the base class
  auto other = quiet_node("other");
  std::atomic<int> other_ticks{0};
  auto t2 = other->create_wall_timer(1ms, [&] { ++other_ticks; });
  ChainExecutor exec2;
  exec2.spin_node_once(other, 5s);
  EXPECT_EQ(other_ticks.load(), 1);
}

TEST(ChainExecutor, ExceptionsAreReportedAndTheExecutorGoesOn) {
  auto node = std::make_shared<rclcpp::Node>("thrower");
  std::atomic<int> ok{0}, thrown{0};
  auto bad = node->create_wall_timer(2ms, [&] {
    ++thrown;
    throw std::runtime_error("boom");
  });
  auto good = node->create_wall_timer(2ms, [&] { ++ok; });
  ChainExecutorOptions o;
  o.print_exceptions = false;
  ChainExecutor exec(o);
  exec.add_node(node);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return ok.load() >= 10 && thrown.load() >= 10; }));
  }
  EXPECT_GE(exec.exceptions(), 10u);
  // rethrow_exceptions: rclcpp's contract (the exception leaves spin)
  ChainExecutorOptions r;
  r.print_exceptions = false;
  r.rethrow_exceptions = true;
  ChainExecutor rethrowing(r);
  auto node2 = std::make_shared<rclcpp::Node>("thrower2");
  auto bad2 = node2->create_wall_timer(1ms, [] { throw std::runtime_error("boom"); });
  rethrowing.add_node(node2);
  EXPECT_THROW(rethrowing.spin(), std::runtime_error);
}

TEST(ChainExecutor, SpinWhileSpinningThrowsAndCancelReturns) {
  auto node = std::make_shared<rclcpp::Node>("twice");
  ChainExecutor exec;
  exec.add_node(node);
  std::thread th([&] { exec.spin(); });
  ASSERT_TRUE(wait_until([&] { return exec.is_spinning(); }));
  EXPECT_THROW(exec.spin(), std::runtime_error);
  EXPECT_THROW(exec.spin_some(), std::runtime_error);
  exec.cancel();
  th.join();
  EXPECT_FALSE(exec.is_spinning());
  // a node belongs to one executor (rclcpp's collector)
  ChainExecutor other;
  EXPECT_THROW(other.add_node(node), std::runtime_error);
}

// The model of a Talker and a Listener on `topic`: the chain talk = tick -> hear under fp; with
// `phantom`, a third node's timer that no entity has.
std::string talk_model(const std::string& topic, bool phantom) {
  return R"(
name: talk
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: fp}]
nodes: [{name: talker, executor: e}, {name: listener, executor: e})" +
         std::string(phantom ? ", {name: ghost, executor: e}" : "") + R"(]
topics: [{name: )" + topic + R"(, size: 64B}]
callbacks:
  - {name: tick, kind: timer, node: talker, period: 10ms, wcet: 1ms, publishes: [)" + topic + R"(]}
  - {name: hear, kind: subscription, node: listener, topic: )" + topic + R"(, wcet: 1ms})" +
         std::string(phantom ? "\n  - {name: phantom, kind: timer, node: ghost, period: 5ms, wcet: 1ms}" : "") + R"(
chains:
  - {name: talk, callbacks: [tick, hear], deadline: 10ms, priority: 1}
)";
}

// A model names the callbacks: bound entities take the model's names and priorities; what the
// model lacks is listed as unmatched; model callbacks without an entity are reported (allowed
// here; executor_model_binding_test.cpp: refused by default).
TEST(ChainExecutor, BindsEntitiesToTheModel) {
  ChainExecutor exec(ChainExecutorOptions{.model_yaml = talk_model("chatter", true), .allow_unbound = true});
  auto talker = std::make_shared<Talker>("chatter");
  auto listener = std::make_shared<Listener>("chatter");
  auto extra = listener->create_wall_timer(50ms, [] {});  // not in the model
  exec.add_node(talker);
  exec.add_node(listener);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return listener->heard_.load() >= 20; }));
  }
  EXPECT_EQ(exec.policy(), chainrt::Policy::FixedPriority);
  EXPECT_EQ(exec.unmatched(), std::vector<std::string>{"listener/timer@50ms"});
  EXPECT_EQ(exec.unused_model_callbacks(), std::vector<std::string>{"phantom"});
  const auto r = exec.report();
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_GE(r.chains[0].instances, 15u) << exec.report_json();  // tick -> hear, stamped by the executor
  EXPECT_GT(r.chains[0].mean_ns, 0.0);
  bool named = false;
  for (const auto& c : r.callbacks) named = named || (c.name == "hear" && c.instances >= 20);
  EXPECT_TRUE(named) << exec.report_json();
  // a bad model fails at construction with a one-line reason
  ChainExecutorOptions bad;
  bad.model_yaml = "name: x\nexecutors: [";
  EXPECT_THROW(ChainExecutor{bad}, std::exception);
}

// Parameter events outside the model: rclcpp's own /parameter_events subscription (rclcpp 28's
// TimeSource gives every node one; rclcpp 29 none) and a user's explicit one are served by the
// executor beside a model chain, which keeps running; only the user's is listed as unmatched.
TEST(ChainExecutor, ParameterEventSubscriptionsOutsideTheModelAreServed) {
  ChainExecutor exec(ChainExecutorOptions{.model_yaml = talk_model("pe_chatter", false)});
  // default node options: parameter events published, and on rclcpp 28 each node subscribes
  auto talker = std::make_shared<Talker>("pe_chatter");
  auto listener = std::make_shared<Listener>("pe_chatter");
  std::atomic<int> events{0};
  auto watch = listener->create_subscription<rcl_interfaces::msg::ParameterEvent>(
      "/parameter_events", rclcpp::ParameterEventsQoS(), [&](const rcl_interfaces::msg::ParameterEvent& e) {
        if (e.node == talker->get_fully_qualified_name()) ++events;
      });
  exec.add_node(talker);
  exec.add_node(listener);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return listener->heard_.load() >= 5; }));
    talker->declare_parameter("gain", 1);
    talker->set_parameter(rclcpp::Parameter("gain", 2));
    EXPECT_TRUE(wait_until([&] { return events.load() >= 2 && listener->heard_.load() >= 20; }));
  }
  EXPECT_EQ(exec.unmatched(), std::vector<std::string>{"listener/sub:/parameter_events"});
  const auto r = exec.report();
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_GE(r.chains[0].instances, 15u) << exec.report_json();
  auto instances = [&](const std::string& name) {
    for (const auto& c : r.callbacks)
      if (c.name == name) return c.instances;
    return std::uint64_t{0};
  };
  EXPECT_GE(instances("listener/sub:/parameter_events"), 2u) << exec.report_json();
#if CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS
  // the TimeSource's subscriptions ran too (the talker's own events reach both nodes)
  EXPECT_GE(instances("talker/time_source:/parameter_events"), 2u) << exec.report_json();
  EXPECT_GE(instances("listener/time_source:/parameter_events"), 2u) << exec.report_json();
#else
  EXPECT_EQ(exec.report_json().find("time_source:"), std::string::npos) << exec.report_json();
#endif
}

// The monitoring topic carries chainrt_msgs/msg/ChainStats (what chainrt profile and run read).
TEST(ChainExecutor, PublishesChainStats) {
  auto talker = std::make_shared<Talker>("stats_chatter");
  auto listener = std::make_shared<Listener>("stats_chatter");
  auto observer = std::make_shared<rclcpp::Node>("observer");
  std::mutex m;
  std::vector<chainrt_msgs::msg::ChainStats> seen;
  auto sub = observer->create_subscription<chainrt_msgs::msg::ChainStats>(
      "/chainrt/chain_stats", 10, [&](const chainrt_msgs::msg::ChainStats& s) {
        std::lock_guard<std::mutex> lk(m);
        seen.push_back(s);
      });
  ChainExecutorOptions o;
  o.stats_period = 100'000'000;
  o.run_id = "r1";
  ChainExecutor exec(o);
  exec.add_node(talker);
  exec.add_node(listener);
  ChainExecutor obs;
  obs.add_node(observer);
  Spinner<ChainExecutor> a(exec), b(obs);
  EXPECT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> lk(m);
    for (const auto& s : seen)
      for (const auto& cb : s.callbacks)
        if (cb.name == "talker/timer@10ms" && !cb.start_ns.empty() && cb.start_ns.size() == cb.thread.size()) return true;
    return false;
  }));
  std::lock_guard<std::mutex> lk(m);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().run.run_id, "r1");
  EXPECT_EQ(seen.back().run.policy, "ros-default");
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i].seq, seen[i - 1].seq + 1);
}

}  // namespace
