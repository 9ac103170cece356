// The same deterministic scenario through the simulator and the real executor (rcl + Fast DDS),
// compared dispatch by dispatch: both call one admission rule (sched::Admission) and one ready
// queue (sched::ReadyQueue). The runtime runs on an injected clock that each callback advances
// by its model WCET, so its dispatch times are exact; each callback then waits (real time)
// until what it published has been delivered, as the simulator's zero communication delay
// assumes. Never a wall-clock assertion.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <std_msgs/msg/string.hpp>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/sched/policy.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sim/simulator.hpp"
#include "ros_test_util.hpp"
#include "sim_trace.hpp"

namespace chainrt::runtime {
namespace {

using testing::scenario;
using testing::show;
using testing::simulated;
using testing::Trace;
using testing::unique_topic;
using testing::wait_matched;
using testing::wait_until;
using Str = std_msgs::msg::String;
constexpr Duration ms = 1'000'000;

// Builds executor 0 of `m` on real ROS 2 (one node per model node, callbacks in file order so
// registration order matches the simulator's), runs it until `dispatches` callbacks ran.
Trace measured(const Model& m, std::size_t dispatches,
               std::optional<std::uint64_t> wait_set_seed = std::nullopt) {
  const sched::ExecutorSetup setup = sched::make_setup(m, 0);
  Context ctx;
  std::map<std::string, std::unique_ptr<Node>> nodes;
  std::map<std::string, std::shared_ptr<Publisher<Str>>> pubs;  // topic -> publisher
  std::map<std::string, std::string> topic_name;
  for (const auto& t : m.topics) topic_name[t.name] = unique_topic(t.name);
  std::atomic<Duration> fake{1'000 * ms};
  const Duration t0 = fake.load();
  std::atomic<std::size_t> runs{0};
  std::vector<std::shared_ptr<PublisherBase>> keep;
  for (std::size_t ci : setup.callbacks) {
    const Callback& cb = m.callbacks[ci];
    auto& node = nodes[cb.node];
    if (!node) node = std::make_unique<Node>(ctx, cb.node);
    std::vector<Publisher<Str>*> outs;
    for (const auto& t : cb.publishes) {
      auto& p = pubs[t];
      if (!p) p = node->create_publisher<Str>(topic_name[t], 10);
      outs.push_back(p.get());
    }
    const Duration wcet = cb.wcet;
    auto body = [&fake, &runs, outs, wcet] {
      fake.fetch_add(wcet);
      // the chain instance travels in the message, as chainrt-run's header carries it
      const Stamp& st = current_stamp();
      for (auto* p : outs) {
        Str s;
        s.data = std::to_string(st.release) + " " + std::to_string(st.deadline) + " " + std::to_string(st.chain) +
                 " " + std::to_string(st.instance);
        p->publish(s);
      }
      // let DDS deliver what was published before the callback returns
      if (!outs.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      runs.fetch_add(1);
    };
    CallbackOptions co;
    co.name = cb.name;
    co.priority = cb.priority;
    if (cb.kind == CallbackKind::Timer)
      node->create_timer(cb.period, body, co, cb.offset);
    else
      node->create_subscription<Str>(topic_name[cb.topic], 10, [body](const Str&) { body(); }, co,
                                     [](const Str& msg) {
                                       Stamp st;
                                       std::istringstream in(msg.data);
                                       in >> st.release >> st.deadline >> st.chain >> st.instance;
                                       return st;
                                     });
  }
  for (auto& [t, p] : pubs) EXPECT_TRUE(wait_matched(*p, m.subscribers(t).size()));
  ExecutorOptions eo;
  eo.policy = setup.policy;
  eo.threads = setup.threads;
  for (auto& t : eo.threads) t.cores.clear();  // no pinning needed for the order
  eo.clock = [&fake] { return fake.load(); };
  eo.wait_set_seed = wait_set_seed;
  Executor ex(ctx, eo);
  for (auto& [name, n] : nodes) ex.add_node(*n);
  for (const auto& c : m.chains) ex.add_chain(ChainSpec::of(c));  // in model order, as chainrt-run
  ex.start();
  EXPECT_TRUE(wait_until([&] { return runs.load() >= dispatches; }));
  ex.request_stop();
  ex.join();
  Trace t;
  for (const auto& d : ex.trace()) t.emplace_back(ex.name_of(d.callback), d.start - t0);
  if (t.size() > dispatches) t.resize(dispatches);
  return t;
}

// LaME (Sec. 4.1): a best-effort thread refreshes its queue only when it is empty. A and B
// release together; A's output makes a1 (priority 5) ready while B is still queued: the
// best-effort thread runs B first, then refreshes and runs a1 before b1 (an always-refreshed
// queue would run a1 before B). The scenario keeps the thread busy without a gap (10 ms of work
// per 10 ms period), so the next releases coincide with a completion, as in the simulator.
TEST(SimVsRuntime, LameBestEffortThreadDispatchesAsTheSimulator) {
  const Model m = scenario(R"(
executors:
  - name: e
    host: h
    policy: lame
    thread_classes:
      - {name: be, kind: be, cores: [0]}
)");
  const Trace sim = simulated(m, 30 * ms);
  ASSERT_EQ(sim.size(), 12u) << show(sim);
  const Trace expect = {{"A", 0}, {"B", 3 * ms}, {"a1", 6 * ms}, {"b1", 8 * ms}};
  for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(sim[i], expect[i]) << show(sim);
  const Trace real = measured(m, sim.size());
  EXPECT_EQ(real, sim) << "runtime:   " << show(real) << "\nsimulator: " << show(sim);
}

// The same scenario under every policy of the descriptor (sched/policy.hpp): the default
// executor's polling points, the always-refreshed queues' orderings; each rule gives its own
// order, and the runtime follows the simulator.
TEST(SimVsRuntime, EveryPolicyDispatchesAsTheSimulator) {
  for (const auto& d : sched::policies()) {
    const std::string policy = d.name;
    const Model m = scenario("executors: [{name: e, host: h, threads: 1, policy: " + policy + "}]\n");
    const Trace sim = simulated(m, 30 * ms);
    ASSERT_EQ(sim.size(), 12u) << policy << ": " << show(sim);
    const Trace real = measured(m, sim.size());
    EXPECT_EQ(real, sim) << policy << "\nruntime:   " << show(real) << "\nsimulator: " << show(sim);
  }
}

// rclcpp >= 28's wait-set order (a fixed, unspecified permutation within each kind): the same
// seed gives the simulator and the runtime the same order.
TEST(SimVsRuntime, DefaultExecutorWaitSetOrderAsTheSimulator) {
  const Model m = scenario("executors: [{name: e, host: h, threads: 1, policy: ros-default}]\n");
  std::set<std::string> orders;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const Trace sim = simulated(m, 30 * ms, seed);
    ASSERT_EQ(sim.size(), 12u) << show(sim);
    const Trace real = measured(m, sim.size(), seed);
    EXPECT_EQ(real, sim) << "seed " << seed << "\nruntime:   " << show(real) << "\nsimulator: " << show(sim);
    orders.insert(show(sim));
  }
  EXPECT_GT(orders.size(), 1u);  // the seeds do draw different orders
}

}  // namespace
}  // namespace chainrt::runtime
