// Priorities, deadlines and chains marked in code on the ChainExecutor, without a model file:
// the executor dispatches exactly as with the equivalent YAML model (the trace comparison of
// executor_scheduling_test.cpp: the simulator's trace of the YAML, dispatch by dispatch, under
// fp, edf and picas, which order this scenario three ways), and the model it writes
// (save_model) loads as a file and says what the YAML says. With a model file, the file wins
// where both speak. Never a wall-clock assertion (an injected clock).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/string.hpp>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "order_scenario.hpp"
#include "rclcpp_util.hpp"
#include "sim_trace.hpp"

namespace {

using namespace std::chrono_literals;
using chainrt::Duration;
using chainrt::Model;
using chainrt::rclcpp::CallbackMark;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::ChainMark;
using chainrt::rclcpp::testing::quiet_node;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
using chainrt::runtime::testing::show;
using chainrt::runtime::testing::simulated;
using chainrt::runtime::testing::Trace;
using Str = std_msgs::msg::String;
constexpr Duration ms = 1'000'000;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// The YAML model the marks below say in code (order_scenario.hpp): A -> a1 and B -> b1 released
// together every 10 ms; fp: A 3, B 2 (a1, b1 none); edf: CB's deadline is shorter; picas: CA's
// chain priority higher.
Model yaml_model(const std::string& policy) { return chainrt::rclcpp::testing::order_scenario(policy); }

// The scenario's nodes as any rclcpp user writes them.
struct System {
  std::atomic<Duration>* fake;
  std::atomic<std::size_t> runs{0};
  std::shared_ptr<rclcpp::Node> na = quiet_node("na"), nb = quiet_node("nb"), nc = quiet_node("nc");
  rclcpp::Publisher<Str>::SharedPtr pa = na->create_publisher<Str>("ta", 10), pb = nb->create_publisher<Str>("tb", 10);
  void work(Duration wcet, const rclcpp::Publisher<Str>::SharedPtr& pub) {
    fake->fetch_add(wcet);
    if (pub) {
      pub->publish(Str());
      std::this_thread::sleep_for(30ms);  // let DDS deliver it before the callback returns
    }
    runs.fetch_add(1);
  }
  rclcpp::TimerBase::SharedPtr ta = na->create_wall_timer(10ms, [this] { work(3 * ms, pa); });
  rclcpp::TimerBase::SharedPtr tb = nb->create_wall_timer(10ms, [this] { work(3 * ms, pb); });
  rclcpp::Subscription<Str>::SharedPtr sa = nc->create_subscription<Str>("ta", 10, [this](const Str&) { work(2 * ms, nullptr); });
  rclcpp::Subscription<Str>::SharedPtr sb = nc->create_subscription<Str>("tb", 10, [this](const Str&) { work(2 * ms, nullptr); });
  explicit System(std::atomic<Duration>* f) : fake(f) {}
};

// In code what yaml_model(policy) says: names, WCETs, priorities, chains.
void mark(ChainExecutor& exec, System& s, const std::string& policy) {
  const bool fp = policy == "fp", picas = policy == "picas";
  exec.mark(s.ta, CallbackMark{"A", std::nullopt, 3ms});
  exec.mark(s.tb, CallbackMark{"B", std::nullopt, 3ms});
  if (fp) exec.set_callback_priority(s.ta, 3), exec.set_callback_priority(s.tb, 2);
  exec.mark(s.sa, CallbackMark{"a1", std::nullopt, 2ms});
  exec.mark(s.sb, CallbackMark{"b1", std::nullopt, 2ms});
  ChainMark ca, cb;
  ca.deadline = 10ms;
  cb.deadline = 8ms;
  if (picas) ca.priority = 2, cb.priority = 1;
  exec.add_chain("CA", {s.ta, s.sa}, ca);
  exec.add_chain("CB", {s.tb, s.sb}, cb);
}

ChainExecutorOptions options(std::atomic<Duration>& fake, const std::string& policy) {
  ChainExecutorOptions o;
  o.policy = chainrt::policy_from(policy);
  o.clock = [&fake] { return fake.load(); };
  o.thread_params = false;
  return o;
}

Trace run(ChainExecutor& exec, System& s, Duration t0, std::size_t dispatches) {
  exec.add_node(s.na);
  exec.add_node(s.nb);
  exec.add_node(s.nc);
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return s.runs.load() >= dispatches; }));
  }
  Trace t;
  for (const auto& d : exec.trace()) t.emplace_back(exec.name_of(d.callback), d.start - t0);
  if (t.size() > dispatches) t.resize(dispatches);
  return t;
}

TEST(ChainExecutorMarks, MarksInCodeDispatchAsTheEquivalentYamlModel) {
  std::map<std::string, std::string> orders;
  for (const std::string policy : {"fp", "edf", "picas"}) {
    const Model yaml = yaml_model(policy);
    const Trace sim = simulated(yaml, 30 * ms);
    ASSERT_EQ(sim.size(), 12u) << policy << ": " << show(sim);
    std::atomic<Duration> fake{1'000 * ms};
    System s(&fake);
    EXPECT_TRUE(wait_until([&] { return s.pa->get_subscription_count() >= 1 && s.pb->get_subscription_count() >= 1; }));
    ChainExecutor exec(options(fake, policy));  // no model file
    mark(exec, s, policy);
    const Trace real = run(exec, s, fake.load(), sim.size());
    EXPECT_EQ(real, sim) << policy << "\nmarks in code: " << show(real) << "\nYAML model:    " << show(sim);
    EXPECT_TRUE(exec.unmatched().empty()) << policy;
    orders[policy] = show(real);
  }
  EXPECT_NE(orders["fp"], orders["edf"]);
  EXPECT_NE(orders["edf"], orders["picas"]);
  EXPECT_NE(orders["fp"], orders["picas"]);
}

// save_model writes what the YAML says (callbacks, their priorities and topics, chains with
// their deadlines and priorities, the policy), loadable as a file; the saved file binds the same
// nodes by the rule alone.
TEST(ChainExecutorMarks, SavedModelSaysWhatTheYamlSays) {
  for (const std::string policy : {"fp", "picas"}) {
    const Model yaml = yaml_model(policy);
    std::atomic<Duration> fake{1'000 * ms};
    System s(&fake);
    ChainExecutor exec(options(fake, policy));
    mark(exec, s, policy);
    exec.add_node(s.na);
    exec.add_node(s.nb);
    exec.add_node(s.nc);
    const std::string path = ::testing::TempDir() + "/marks_" + policy + "_" + std::to_string(getpid()) + ".yaml";
    exec.save_model(path);
    const Model saved = chainrt::load_model(path);  // what `chainrt check` loads
    ASSERT_EQ(saved.executors.size(), 1u);
    EXPECT_EQ(saved.executors[0].policy, yaml.executors[0].policy);
    ASSERT_EQ(saved.callbacks.size(), yaml.callbacks.size());
    for (const auto& want : yaml.callbacks) {
      const auto& got = saved.callback(want.name);
      EXPECT_EQ(got.kind, want.kind) << want.name;
      EXPECT_EQ(got.node, want.node) << want.name;
      EXPECT_EQ(got.period, want.period) << want.name;
      EXPECT_EQ(got.wcet, want.wcet) << want.name;
      EXPECT_EQ(got.priority, want.priority) << want.name;
      EXPECT_EQ(got.topic, want.topic) << want.name;
      EXPECT_EQ(got.publishes, want.publishes) << want.name;
    }
    ASSERT_EQ(saved.chains.size(), yaml.chains.size());
    for (const auto& want : yaml.chains) {
      const auto& got = saved.chain(want.name);
      EXPECT_EQ(got.callbacks, want.callbacks);
      EXPECT_EQ(got.period, want.period);
      EXPECT_EQ(got.deadline, want.deadline);
      EXPECT_EQ(got.priority, want.priority);
      EXPECT_EQ(got.hops.size(), want.hops.size());
    }
    // the saved model, given as a file to a new executor, binds every entity by the rule
    std::atomic<Duration> fake2{1'000 * ms};
    System s2(&fake2);
    ChainExecutorOptions o = options(fake2, policy);
    o.model_file = path;
    ChainExecutor again(o);
    again.add_node(s2.na);
    again.add_node(s2.nb);
    again.add_node(s2.nc);
    again.spin_some(1ms);
    EXPECT_TRUE(again.unmatched().empty());
    EXPECT_TRUE(again.unused_model_callbacks().empty());
    std::remove(path.c_str());
  }
}

// With a model file the file wins where both speak; the code fills what it leaves open, and a
// marked entity the file does not describe joins the model.
TEST(ChainExecutorMarks, TheModelFileWinsWhereBothSpeak) {
  std::atomic<Duration> fake{1'000 * ms};
  System s(&fake);
  auto extra = s.nc->create_wall_timer(50ms, [] {});
  ChainExecutorOptions o = options(fake, "fp");
  o.model_yaml = chainrt::save_model_to_string(yaml_model("fp"));
  ChainExecutor exec(o);
  exec.set_callback_priority(s.tb, 7);   // the file says 2
  exec.set_callback_priority(s.sa, 9);   // the file says none
  exec.mark(extra, CallbackMark{"housekeeping", 1, 1ms});
  ChainMark shorter;
  shorter.deadline = 5ms;
  exec.add_chain("CB", {s.tb, s.sb}, shorter);  // the file's CB wins
  exec.add_node(s.na);
  exec.add_node(s.nb);
  exec.add_node(s.nc);
  const Model m = chainrt::load_model_from_string(exec.model_yaml(), "<saved>");
  EXPECT_EQ(m.callback("B").priority, 2);
  EXPECT_EQ(m.callback("a1").priority, 9);
  EXPECT_EQ(m.callback("housekeeping").priority, 1);
  EXPECT_EQ(m.callback("housekeeping").period, 50 * ms);
  EXPECT_EQ(m.chain("CB").deadline, 8 * ms);
  exec.spin_some(1ms);
  EXPECT_TRUE(exec.unmatched().empty());  // the marked timer is a model callback now
  const auto notes = exec.mark_notes();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("'B'"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("CB"), std::string::npos) << notes[1];
}

// A callback group's thread (pinning, SCHED_FIFO) is a model thread its callbacks are affine
// to; saving a callback that never ran and was given no WCET names it; marks while spinning are
// refused.
TEST(ChainExecutorMarks, GroupThreadsAndMissingWcet) {
  auto node = quiet_node("grouped");
  auto fast = node->create_callback_group(rclcpp::CallbackGroupType::MutuallyExclusive);
  auto t1 = node->create_wall_timer(20ms, [] {}, fast);
  auto t2 = node->create_wall_timer(40ms, [] {});
  ChainExecutor exec;
  exec.set_callback_group_thread(fast, {"fast", {0}, 60});
  exec.mark(t1, CallbackMark{"fast_tick", 5, 1ms});
  exec.add_node(node);
  try {
    exec.model_yaml();
    ADD_FAILURE() << "a callback without a WCET was saved";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grouped/timer@40ms"), std::string::npos) << e.what();
  }
  exec.mark(t2, CallbackMark{"", std::nullopt, 2ms});
  const Model m = chainrt::load_model_from_string(exec.model_yaml(), "<saved>");
  ASSERT_EQ(m.executors[0].threads.size(), 1u);
  EXPECT_EQ(m.executors[0].threads[0].name, "fast");
  EXPECT_EQ(m.executors[0].threads[0].cores, std::vector<int>{0});
  EXPECT_EQ(m.executors[0].threads[0].fifo_priority, 60);
  EXPECT_EQ(m.callback("fast_tick").affinity, std::vector<std::string>{"fast"});
  EXPECT_EQ(m.callback("fast_tick").group, "grouped/group1");
  EXPECT_TRUE(m.callback("grouped/timer@40ms").affinity.empty());
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return exec.is_spinning(); }));
    EXPECT_THROW(exec.set_callback_priority(t2, 1), std::logic_error);
  }
  EXPECT_EQ(exec.thread_count(), 1u);
}

}  // namespace
