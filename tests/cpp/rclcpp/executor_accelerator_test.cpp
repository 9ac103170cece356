// Shared accelerators from unmodified-style rclcpp callbacks under the ChainExecutor
// (chainrt/rclcpp/accelerator.hpp): a request carries the priority of the chain whose callback
// runs, without the callback passing it. Real ROS 2 (the nodes' wall timers, the executor's
// threads); the device is the emulated one with a gated first request, so the order in which
// requests queue is fixed by the accelerator's own state, never by wall-clock timing, and the
// device order is read from the accelerator's trace.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <rclcpp/rclcpp.hpp>

#include "chainrt/rclcpp/accelerator.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "rclcpp_util.hpp"

namespace {

using chainrt::AcceleratorAccess;
using chainrt::Duration;
using chainrt::rclcpp::ChainExecutor;
using chainrt::rclcpp::ChainExecutorOptions;
using chainrt::rclcpp::testing::Spinner;
using chainrt::rclcpp::testing::wait_until;
namespace acc = chainrt::rclcpp;
using namespace std::chrono_literals;
constexpr Duration ms = 1'000'000;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new chainrt::rclcpp::testing::RclcppEnvironment);

// Three chains of one timer each, on three executor threads (each callback may block on the
// device while the others run): high (chain priority 3), low2 (2), low1 (1); the rclpy test's too.
const std::string kModel = CHAINRT_SOURCE_DIR "/tests/cpp/runtime/data/accelerator_client.yaml";

// An emulated device whose first request waits (in the device) until `gate` requests have been
// issued: the rest queue behind it meanwhile (serving(): the first is in service). Later
// requests take no time.
struct GatedAccelerator {
  std::shared_ptr<acc::SharedAccelerator> device;
  std::shared_ptr<std::atomic<bool>> in_service = std::make_shared<std::atomic<bool>>(false);
  GatedAccelerator(const std::string& name, AcceleratorAccess access, std::uint64_t gate) {
    auto first = std::make_shared<std::atomic<bool>>(true);
    auto self = std::make_shared<acc::SharedAccelerator*>(nullptr);
    acc::AcceleratorOptions o;
    o.name = name;
    o.access = access;
    o.trace_capacity = 64;
    device = acc::add_accelerator(o, std::make_unique<acc::EmulatedDevice>([first, self, gate, s = in_service](Duration) {
      if (!first->exchange(false)) return;
      s->store(true);
      wait_until([&] { return (*self)->requests() >= gate; });
    }));
    *self = device.get();
  }
  void wait_serving() const { wait_until([&] { return in_service->load(); }); }
  ~GatedAccelerator() {
    device->stop();
    acc::unregister_accelerator(device->options().name);
  }
};

// Runs the three nodes (plain rclcpp nodes with wall timers) under the model; `body[name]` is
// what the callback of that node does on its first run (later runs do nothing). Returns the
// accelerator's device order as callback names (`site` of the trace: the dispatching callback's
// id unless a body gave one; sites >= 100 are named "plain<site>").
struct Outcome {
  std::vector<std::string> order;
  std::uint64_t exceptions = 0;
};
Outcome run_nodes(acc::SharedAccelerator& device, std::size_t requests,
                  std::map<std::string, std::function<void()>> body) {
  std::vector<std::shared_ptr<rclcpp::Node>> nodes;
  std::vector<rclcpp::TimerBase::SharedPtr> timers;
  std::map<std::string, std::atomic<bool>> once;
  for (const char* n : {"H", "L1", "L2"}) once[n] = false;
  const std::pair<const char*, const char*> named[] = {{"acc_hi", "H"}, {"acc_lo1", "L1"}, {"acc_lo2", "L2"}};
  for (auto [node, cb] : named) {
    auto nd = std::make_shared<rclcpp::Node>(node);
    const std::string name = cb;
    timers.push_back(nd->create_wall_timer(20ms, [&, name] {
      if (once[name].exchange(true) || !body.count(name)) return;
      body[name]();
    }));
    nodes.push_back(nd);
  }
  ChainExecutorOptions o;
  o.model_file = kModel;
  o.thread_params = false;
  o.print_exceptions = false;
  ChainExecutor exec(o);
  for (auto& n : nodes) exec.add_node(n);
  EXPECT_TRUE(exec.unmatched().empty());
  {
    Spinner<ChainExecutor> spin(exec);
    EXPECT_TRUE(wait_until([&] { return device.requests() >= requests && device.idle(); }));
    EXPECT_TRUE(wait_until([&] {
      for (const auto& [name, f] : body)
        if (!once[name].load()) return false;
      return true;
    }));
  }
  Outcome out;
  device.drain();
  for (const auto& r : device.trace())
    out.order.push_back(r.site >= 100 ? "plain" + std::to_string(r.site) : exec.name_of(r.site));
  out.exceptions = exec.exceptions();
  return out;
}

std::string show(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// L1 asks first, then (once L1's request is in service) L2, then H (once L2's is issued). The server runs H before the queued L2; direct access runs them in the
// order they came.
std::vector<std::string> high_overtakes(AcceleratorAccess access, const std::string& name) {
  GatedAccelerator g(name, access, 3);
  auto& d = *g.device;
  const acc::DeviceWork work{.copy_in = 1 * ms, .kernel = 2 * ms, .copy_out = 1 * ms};
  auto after = [&d](std::uint64_t n) { wait_until([&] { return d.requests() >= n; }); };
  const Outcome o = run_nodes(d, 3,
                              {{"L1", [&] { acc::run_on_accelerator(name, work); }},
                               {"L2", [&] { g.wait_serving(); acc::run_on_accelerator(name, work); }},
                               {"H", [&] { after(2); acc::run_on_accelerator(name, work); }}});
  EXPECT_EQ(o.exceptions, 0u);
  return o.order;
}

TEST(AcceleratorClient, ServerRunsTheHighChainsRequestBeforeQueuedLowerOnes) {
  const auto order = high_overtakes(AcceleratorAccess::Server, "gpu_server");
  EXPECT_EQ(show(order), "L1 H L2");
}

TEST(AcceleratorClient, DirectAccessIsFirstComeFirstServed) {
  const auto order = high_overtakes(AcceleratorAccess::Direct, "gpu_direct");
  EXPECT_EQ(show(order), "L1 L2 H");
}

// Outside a chainrt dispatch a request has the lowest priority: queued before the lowest chain's
// request, a plain thread's is still served after it; current_dispatch() says where one is.
TEST(AcceleratorClient, ARequestOutsideADispatchHasTheLowestPriority) {
  GatedAccelerator g("gpu_plain", AcceleratorAccess::Server, 3);
  auto& d = *g.device;
  const acc::DeviceWork work{.kernel = 1 * ms};
  EXPECT_EQ(acc::current_dispatch(), nullptr);
  std::atomic<bool> in_dispatch{false};
  std::thread blocker([&] { acc::run_on_accelerator("gpu_plain", work, 100u); });
  std::thread plain([&] {
    g.wait_serving();
    acc::run_on_accelerator("gpu_plain", work, 101u);
  });
  const Outcome o = run_nodes(d, 3, {{"L1", [&] {
                                        in_dispatch = acc::current_dispatch() != nullptr;
                                        wait_until([&] { return d.requests() >= 2; });
                                        acc::run_on_accelerator("gpu_plain", work);
                                      }}});
  blocker.join();
  plain.join();
  EXPECT_TRUE(in_dispatch.load());
  EXPECT_EQ(show(o.order), "plain100 L1 plain101");
}

// What a request's job throws on the device thread reaches the callback, which throws it out
// of the executor's dispatch; the accelerator goes on serving (the next requests run, in
// priority order) and nothing stays queued.
TEST(AcceleratorClient, AThrowingRequestLeavesTheAcceleratorUsable) {
  GatedAccelerator g("gpu_throw", AcceleratorAccess::Server, 3);
  auto& d = *g.device;
  auto after = [&d](std::uint64_t n) { wait_until([&] { return d.requests() >= n; }); };
  std::atomic<int> jobs{0};
  const acc::DeviceWork work{.kernel = 1 * ms};  // the first one's kernel holds the device (the gate)
  const Outcome o = run_nodes(
      d, 3,
      {{"L1", [&] { acc::run_on_accelerator("gpu_throw", work, [] { throw std::runtime_error("kernel failed"); }); }},
       {"L2", [&] { g.wait_serving(); acc::run_on_accelerator("gpu_throw", work, [&] { ++jobs; }); }},
       {"H", [&] { after(2); acc::run_on_accelerator("gpu_throw", work, [&] { ++jobs; }); }}});
  EXPECT_EQ(o.exceptions, 1u);
  EXPECT_EQ(show(o.order), "L1 H L2");
  EXPECT_EQ(jobs.load(), 2);
  // still usable afterwards, from any thread
  acc::run_on_accelerator("gpu_throw", {}, [&] { ++jobs; });
  EXPECT_EQ(jobs.load(), 3);
  EXPECT_TRUE(wait_until([&] { return d.idle(); }));
}

TEST(AcceleratorClient, AnUnknownAcceleratorIsAClearError) {
  try {
    acc::run_on_accelerator("no_such_device", acc::DeviceWork{});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no accelerator named 'no_such_device'"), std::string::npos) << e.what();
  }
}

}  // namespace
