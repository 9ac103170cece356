// Shared accelerators end to end through the runtime as `chainrt run` runs a model (run_model:
// rcl nodes, chainrt executors, one SharedAccelerator per accelerator on the emulated device,
// server continuations delivered on their own topics), against the simulator: the same
// deterministic scenario (tests/cpp/accelerator_scenario.hpp: three executors on their own cores,
// one device) gives the same dispatch trace — every callback piece and its start — and the same
// device trace — every segment's issue, start and finish — for direct access, the server and the
// server with its overhead; and every chain instance released completes (none lost across a
// callback suspended on the device).
//
// Time is virtual: the run's clock (ModelRunOptions::clock) is moved only by this test. Each
// callback's CPU time, each device part and each server overhead is a wait on that clock; when
// nothing has happened for a while of real time (every thread waits on the clock or is idle, and
// what was published has been delivered), the clock jumps to the earliest end of a wait or the
// next timer release. The executors, the accelerators and DDS run for real; only time is not.
// Never a wall-clock assertion.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/sim/simulator.hpp"
#include "../accelerator_scenario.hpp"

namespace chainrt::runtime {
namespace {

constexpr Duration ms = 1'000'000;
constexpr Duration kT0 = 1'000 * ms;  // the virtual clock at the start of the run

class VirtualClock {
 public:
  Duration now() const noexcept { return now_.load(std::memory_order_acquire); }
  // A thread's wait of `d` on the clock (CPU time, a device part, the server's overhead).
  void wait(Duration d) {
    std::unique_lock<std::mutex> lk(m_);
    const Duration end = now() + d;
    auto it = ends_.insert(end);
    ++gen_;
    cv_.wait(lk, [&] { return now() >= end; });
    ends_.erase(it);
    ++gen_;
  }
  // Move the clock whenever the run is quiet, to the next wait's end or timer release
  // (`release_after(t)`: the first release after t), never past `limit`, until stop().
  template <class Next>
  void drive(Next release_after, Duration limit) {
    thread_ = std::thread([this, release_after, limit] {
      std::uint64_t seen = ~std::uint64_t{0};
      int quiet = 0;
      while (!stop_.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::lock_guard<std::mutex> lk(m_);
        if (gen_ != seen) {
          seen = gen_;
          quiet = 0;
          continue;
        }
        if (++quiet < 40) continue;  // 200 ms of real time without a change
        Duration next = release_after(now());
        if (!ends_.empty()) next = std::min(next, *ends_.begin());
        now_.store(std::min(next, limit), std::memory_order_release);
        ++gen_;
        cv_.notify_all();
      }
    });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  ~VirtualClock() { stop(); }

 private:
  std::atomic<Duration> now_{kT0};
  std::mutex m_;
  std::condition_variable cv_;
  std::multiset<Duration> ends_;
  std::uint64_t gen_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The three-chain scenario (accelerator_scenario.hpp) with the given accelerator.
Model scenario(const std::string& accelerator) {
  return load_model_from_string(chainrt::test::three_chain_segments_with(accelerator));
}

struct Traces {
  std::vector<std::string> dispatch;  // "piece@start", ordered by (start, piece)
  std::vector<std::string> device;    // "piece/segment issued|start-finish", in completion order
  std::vector<std::int64_t> instances;  // completed chain instances, per chain in model order
  std::vector<std::int64_t> released;   // (simulator) instances released
};

std::string at_ms(Duration t) { return std::to_string(t / ms) + "." + std::to_string(t % ms / 1000); }

std::string show(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "  ";
  return s;
}

Traces simulated(const Model& m, Duration duration) {
  sim::SimOptions o;
  o.duration = duration;
  o.trace = true;
  const auto r = sim::simulate(m, o);
  Traces t;
  std::vector<std::pair<Duration, std::string>> d;
  for (const auto& e : r.trace)
    if (e.start < duration) d.emplace_back(e.start, r.trace_callbacks[e.callback]);
  std::sort(d.begin(), d.end());
  for (const auto& [at, who] : d) t.dispatch.push_back(who + "@" + at_ms(at));
  for (const auto& e : r.device_trace)
    if (e.issued < duration)
      t.device.push_back(r.trace_callbacks[e.callback] + "/" + std::to_string(e.segment) + " " + at_ms(e.issued) +
                         "|" + at_ms(e.start) + "-" + at_ms(e.finish));
  for (const auto& c : m.chains) {
    t.instances.push_back(r.chain(c.name)->instances);
    t.released.push_back(r.chain(c.name)->released);
  }
  return t;
}

// A string field ("key": "value") or a number field ("key": 12) of a trace line.
std::string text_field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\": \"";
  const auto p = line.find(k);
  if (p == std::string::npos) return "";
  const auto b = p + k.size();
  return line.substr(b, line.find('"', b) - b);
}
Duration number_field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const auto p = line.find(k);
  return p == std::string::npos ? -1 : std::stoll(line.substr(p + k.size()));
}

class StartClock : public RunObserver {
 public:
  StartClock(VirtualClock& vc, const Model& m, Duration duration) : vc_(vc), m_(m), duration_(duration) {}
  // The clock stops at the run's end (the scenario is idle then), so no instance is released
  // that the run's stop would cut.
  void started(Duration start) override {
    vc_.drive([this, start](Duration now) {
      Duration next = std::numeric_limits<Duration>::max();
      for (const auto& cb : m_.callbacks) {
        if (cb.kind != CallbackKind::Timer || cb.period <= 0) continue;
        const Duration since = now - start - cb.offset;
        const Duration k = since < 0 ? 0 : since / cb.period + 1;
        next = std::min(next, start + cb.offset + k * cb.period);
      }
      return next;
    }, start + duration_);
  }

 private:
  VirtualClock& vc_;
  const Model& m_;
  Duration duration_;
};

Traces measured(const Model& m, Duration duration) {
  VirtualClock vc;
  StartClock observer(vc, m, duration);
  ModelRunOptions o;
  o.duration = duration;
  o.warmup = 0;
  o.thread_params = false;  // the order is the model's, not the machine's
  o.topic_prefix = "/accel_run_" + std::to_string(getpid());
  o.trace_path = ::testing::TempDir() + "accel_run_" + std::to_string(getpid()) + ".jsonl";
  o.observer = &observer;
  o.clock = [&vc] { return vc.now(); };
  o.work = [&vc](Duration d) { vc.wait(d); };
  o.device_wait = [&vc](Duration d) { vc.wait(d); };
  o.server_overhead = [&vc](Duration d) { vc.wait(d); };
  const RunReport r = run_model(m, o);
  vc.stop();
  Traces t;
  std::vector<std::pair<Duration, std::string>> d;
  std::ifstream in(o.trace_path);
  for (std::string line; std::getline(in, line);) {
    const std::string who = text_field(line, "callback");
    if (!text_field(line, "device").empty()) {
      if (number_field(line, "issued") < duration)
        t.device.push_back(who + "/" + std::to_string(number_field(line, "segment")) + " " +
                           at_ms(number_field(line, "issued")) + "|" + at_ms(number_field(line, "start")) + "-" +
                           at_ms(number_field(line, "finish")));
    } else if (number_field(line, "start") < duration) {
      d.emplace_back(number_field(line, "start"), who);
    }
  }
  std::remove(o.trace_path.c_str());
  std::remove((o.trace_path + ".start").c_str());
  std::sort(d.begin(), d.end());
  for (const auto& [at, who] : d) t.dispatch.push_back(who + "@" + at_ms(at));
  for (const auto& c : r.chains) t.instances.push_back(static_cast<std::int64_t>(c.instances));
  for (const auto& w : r.warnings) ADD_FAILURE() << "warning: " << w;
  return t;
}

void expect_same(const std::string& accelerator) {
  const Model m = scenario(accelerator);
  // four instances of every chain; each period's work ends by 66 ms, so the run ends idle
  const Duration duration = 380 * ms;
  const Traces sim = simulated(m, duration);
  ASSERT_EQ(sim.instances, (std::vector<std::int64_t>{4, 4, 4}));
  ASSERT_EQ(sim.released, sim.instances);
  const Traces real = measured(m, duration);
  EXPECT_EQ(real.dispatch, sim.dispatch) << "runtime:   " << show(real.dispatch) << "\nsimulator: " << show(sim.dispatch);
  EXPECT_EQ(real.device, sim.device) << "runtime:   " << show(real.device) << "\nsimulator: " << show(sim.device);
  // every instance released completed: none lost across a callback suspended on the device
  EXPECT_EQ(real.instances, sim.instances);
}

TEST(AcceleratorRun, DirectAccessTracesAsTheSimulator) { expect_same("{name: gpu, access: direct}"); }

TEST(AcceleratorRun, ServerTracesAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3]}");
}

TEST(AcceleratorRun, ServerWithOverheadTracesAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms}");
}

}  // namespace
}  // namespace chainrt::runtime
