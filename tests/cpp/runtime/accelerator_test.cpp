// The runtime's shared accelerator (runtime/accelerator.hpp) against the simulator's device
// (sim/simulator.cpp): the same requests, issued at the simulator's instants, give the same
// device trace — order, start and finish of every segment — for direct access (first come,
// first served, the caller blocked) and for the chain-priority server (a queued request
// overtaken by a more urgent one, the one in service never preempted, the server's overhead
// before each segment). Time is virtual: the emulated device's waits and the server's overhead
// advance a clock that the test moves from one issue instant to the next, so nothing depends
// on the machine's speed. Never a wall-clock assertion.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/accelerator_client.hpp"
#include "chainrt/sim/simulator.hpp"
#include "../accelerator_scenario.hpp"

namespace chainrt::runtime {
namespace {

constexpr Duration ms = 1'000'000;

// A clock only the device and the test move. The accelerator's thread waits in virtual time
// (the device's parts, the server's overhead); advance_to(t) lets it finish, in order, every
// wait that ends by t, then sets the clock to t.
class VirtualTime {
 public:
  Duration now() const {
    std::lock_guard<std::mutex> lk(m_);
    return now_;
  }
  void wait(Duration d) {
    std::unique_lock<std::mutex> lk(m_);
    const Duration end = now_ + d;
    waiting_ = true;
    end_ = end;
    ++gen_;
    cv_.notify_all();
    cv_.wait(lk, [&] { return now_ >= end; });
    waiting_ = false;
    cv_.notify_all();
  }
  void advance_to(Duration t, const SharedAccelerator& acc) {
    for (;;) {
      settle(acc);
      std::unique_lock<std::mutex> lk(m_);
      if (!waiting_ || end_ > t) break;
      const std::uint64_t g = gen_;
      now_ = end_;
      cv_.notify_all();
      // until that wait has returned (the thread moves on: another wait, or idle)
      cv_.wait(lk, [&] { return !waiting_ || gen_ != g; });
    }
    std::lock_guard<std::mutex> lk(m_);
    now_ = std::max(now_, t);
    cv_.notify_all();
  }
  // The accelerator's thread is in a virtual wait or has nothing to do.
  void settle(const SharedAccelerator& acc) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lk(m_);
        if (waiting_) return;
      }
      // Never both locks at once: the accelerator reads this clock under its own lock. Idle
      // here is final: only this test gives the accelerator new requests.
      if (acc.idle()) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  Duration now_ = 0, end_ = 0;
  bool waiting_ = false;
  std::uint64_t gen_ = 0;
};

// The three-chain scenario (accelerator_scenario.hpp) with the given accelerator.
Model scenario(const std::string& accelerator) {
  return load_model_from_string(chainrt::test::three_chain_segments_with(accelerator));
}

struct Use {
  std::string who;
  std::uint32_t segment;
  Duration issued, start, finish;
  bool operator==(const Use&) const = default;
};

std::string show(const std::vector<Use>& u) {
  std::string s;
  for (const auto& x : u)
    s += x.who + "/" + std::to_string(x.segment) + " " + std::to_string(x.issued / ms) + "|" +
         std::to_string(x.start / ms) + "-" + std::to_string(x.finish / ms) + "  ";
  return s;
}

// The simulator's device trace of the first 100 ms (one period).
std::vector<Use> simulated(const Model& m, std::vector<std::string>* pieces, Duration duration = 100 * ms) {
  sim::SimOptions o;
  o.duration = duration;
  o.trace = true;
  const auto r = sim::simulate(m, o);
  *pieces = r.trace_callbacks;
  std::vector<Use> out;
  for (const auto& e : r.device_trace)
    out.push_back({r.trace_callbacks[e.callback], e.segment, e.issued, e.start, e.finish});
  return out;
}

// How a request reaches the accelerator: its own submit()/call(), or the client API from a
// callback's thread that runs under a dispatch context (the priority chainrt's executors set) —
// the continuation form (submit_on_accelerator: the thread returns at once) or the blocking form
// (run_on_accelerator: the thread waits). The client API's requests are all segment 0.
enum class Form { Accelerator, Continuation, Blocking };

// The runtime's accelerator on the model's (one) device, fed the simulator's requests at their
// instants: direct ones by a blocked caller thread each, server ones by submit() with the
// requesting callback's effective priority (or through the client API, `form`).
std::vector<Use> measured(const Model& m, const std::vector<Use>& requests, const std::vector<std::string>& pieces,
                          Form form = Form::Accelerator) {
  const AcceleratedModel am = expand_accelerators(m);
  const chainrt::Accelerator& a = m.hosts[0].accelerators[0];
  VirtualTime vt;
  AcceleratorOptions o;
  o.name = a.name;
  o.access = a.access;
  o.overhead = a.server_overhead;
  o.block_preemption = a.block_preemption;
  o.clock = [&vt] { return vt.now(); };
  o.spend = [&vt](Duration d) { vt.wait(d); };
  o.trace_capacity = 64;
  SharedAccelerator acc(o, std::make_unique<EmulatedDevice>([&vt](Duration d) { vt.wait(d); }));
  std::vector<Use> order = requests;
  std::stable_sort(order.begin(), order.end(), [](const Use& x, const Use& y) { return x.issued < y.issued; });
  std::vector<std::thread> callers;
  auto site_of = [&](const std::string& who) {
    return static_cast<std::uint32_t>(std::find(pieces.begin(), pieces.end(), who) - pieces.begin());
  };
  for (const Use& u : order) {
    vt.advance_to(u.issued, acc);
    const std::size_t piece = am.model.callback_index(u.who);
    const AcceleratorSegment& s = m.callbacks[am.pieces[piece].origin].accelerator_segments[u.segment];
    const DeviceWork w{s.copy_in, s.kernel, s.copy_out, s.block.value_or(0)};
    const std::uint32_t site = site_of(u.who);
    const std::uint64_t before = acc.requests();
    const auto prio = effective_priority(am.model, piece);
    const DispatchContext dc{prio ? std::optional<int>(static_cast<int>(*prio)) : std::nullopt, site};
    if (form == Form::Continuation) {
      std::thread([&acc, dc, w] {
        DispatchScope scope(dc);
        submit_on_accelerator(acc, w, nullptr, nullptr);
      }).join();  // the callback's thread returned: the request is queued
    } else if (form == Form::Blocking) {
      callers.emplace_back([&acc, dc, w] {
        DispatchScope scope(dc);
        run_on_accelerator(acc, w);
      });
      while (acc.requests() == before) std::this_thread::sleep_for(std::chrono::microseconds(100));
    } else if (a.access == AcceleratorAccess::Direct) {
      callers.emplace_back([&acc, site, u, w] { acc.call(site, u.segment, w); });
      while (acc.requests() == before) std::this_thread::sleep_for(std::chrono::microseconds(100));
    } else {
      EXPECT_TRUE(acc.submit(prio ? std::optional<int>(static_cast<int>(*prio)) : std::nullopt, site, u.segment, w,
                             nullptr, nullptr, 0));
    }
  }
  vt.advance_to(100 * ms, acc);
  acc.drain();
  for (auto& t : callers) t.join();
  acc.stop();
  std::vector<Use> out;
  for (const auto& r : acc.trace()) out.push_back({pieces[r.site], r.segment, r.issued, r.start, r.finish});
  return out;
}

void expect_same(const std::string& accelerator, const std::vector<std::string>& expected_order,
                 Form form = Form::Accelerator, Duration block = 0) {
  Model m = scenario(accelerator);
  for (auto& cb : m.callbacks)  // block preemption: every kernel in blocks of `block`
    for (auto& s : cb.accelerator_segments)
      if (block > 0) s.block = std::min(block, s.kernel);
  std::vector<std::string> pieces;
  auto sim = simulated(m, &pieces);
  ASSERT_EQ(sim.size(), expected_order.size()) << show(sim);
  for (std::size_t i = 0; i < sim.size(); ++i) EXPECT_EQ(sim[i].who, expected_order[i]) << show(sim);
  const auto real = measured(m, sim, pieces, form);
  if (form != Form::Accelerator)
    for (Use& u : sim) u.segment = 0;  // (the client API does not number segments)
  EXPECT_EQ(real, sim) << "runtime:   " << show(real) << "\nsimulator: " << show(sim);
}

TEST(RuntimeAccelerator, DirectAccessServesFirstComeFirstServedAsTheSimulator) {
  // H waits behind both lower-priority segments (the priority inversion).
  expect_same("{name: gpu, access: direct}", {"lo1", "lo2", "hi", "lo1"});
}

TEST(RuntimeAccelerator, ServerServesByChainPriorityAsTheSimulator) {
  // H overtakes L2's queued request, not L1's running one; L1's continuation (its thread was
  // free, so it ran at once) asks again while H runs and overtakes L2 too.
  expect_same("{name: gpu, access: server, priority: 90, cores: [3]}", {"lo1", "hi", "lo1#1", "lo2"});
}

// The client API's two forms from callbacks' threads under chainrt's dispatch context: the
// device serves them as the simulator does (on this scenario every callback has a core of its
// own, so a blocked thread delays nobody; docs/accelerator.md says which bound covers which).
TEST(RuntimeAccelerator, ClientContinuationFormServesAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3]}", {"lo1", "hi", "lo1#1", "lo2"},
              Form::Continuation);
  expect_same("{name: gpu, access: direct}", {"lo1", "lo2", "hi", "lo1"}, Form::Continuation);
}

TEST(RuntimeAccelerator, ClientBlockingFormServesAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms}", {"lo1", "hi", "lo1#1", "lo2"},
              Form::Blocking);
  expect_same("{name: gpu, access: direct}", {"lo1", "lo2", "hi", "lo1"}, Form::Blocking);
}

// The continuation form frees the callback's thread: it runs other work while its request is
// on the device, and the continuation is released on the accelerator's thread when the device
// is done. (The device holds the request until the thread's other work has run; under the
// blocking form this would never end.)
TEST(RuntimeAccelerator, ContinuationFormRunsOtherWorkWhileTheRequestIsOnTheDevice) {
  std::mutex m;
  std::condition_variable cv;
  bool on_device = false, other_work_done = false;
  AcceleratorOptions o;
  o.name = "gpu";
  o.access = AcceleratorAccess::Server;
  o.trace_capacity = 4;
  SharedAccelerator acc(o, std::make_unique<EmulatedDevice>([&](Duration) {
    std::unique_lock<std::mutex> lk(m);
    on_device = true;
    cv.notify_all();
    cv.wait(lk, [&] { return other_work_done; });
  }));
  struct Released {
    std::mutex m;
    std::condition_variable cv;
    std::thread::id by;
    bool done = false;
  } released;
  auto release = [](void* c, std::uint64_t token) noexcept {
    auto* r = static_cast<Released*>(c);
    std::lock_guard<std::mutex> lk(r->m);
    r->by = std::this_thread::get_id();
    r->done = token == 42;
    r->cv.notify_all();
  };
  std::thread::id callback_thread;
  std::thread t([&] {
    callback_thread = std::this_thread::get_id();
    DispatchScope scope(DispatchContext{7, 3});
    submit_on_accelerator(acc, DeviceWork{0, ms, 0}, release, &released, 42);
    // the callback returned; the same thread now runs other work while the request is served
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return on_device; });
    other_work_done = true;
    cv.notify_all();
  });
  t.join();
  {
    std::unique_lock<std::mutex> lk(released.m);
    released.cv.wait(lk, [&] { return released.done; });
    EXPECT_NE(released.by, callback_thread);
  }
  acc.stop();
  ASSERT_EQ(acc.trace().size(), 1u);
  EXPECT_EQ(acc.trace()[0].site, 3u);
}

// Block-level preemption (`preemption: block`) on the emulated device: the accelerator's
// thread serves a request chunk by chunk (copy-in, each 4 ms block, copy-out) and gives the
// device to a more urgent request between two chunks, as the simulator does: H, asking at 4 ms
// while L1's first 4 ms block runs, runs from 5 ms (not after L1's whole 30 ms kernel), and L1
// resumes where it stopped. A runtime that serves requests whole gives L1 1–31, H 31–41.
TEST(RuntimeAccelerator, BlockPreemptionServesChunksAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3], preemption: block}",
              {"hi", "lo1", "lo1#1", "lo2"}, Form::Accelerator, 4 * ms);
  expect_same("{name: gpu, access: server, priority: 90, cores: [3], preemption: block}",
              {"hi", "lo1", "lo1#1", "lo2"}, Form::Continuation, 4 * ms);
}

TEST(RuntimeAccelerator, ServerOverheadBeforeEachSegmentAsTheSimulator) {
  expect_same("{name: gpu, access: server, priority: 90, cores: [3], overhead: 1ms}", {"lo1", "hi", "lo1#1", "lo2"});
}

// A completion hook runs on the accelerator's thread once the segment is done; a full queue is
// refused, not grown.
TEST(RuntimeAccelerator, CompletionRunsAfterTheSegmentAndAFullQueueIsRefused) {
  VirtualTime vt;
  AcceleratorOptions o;
  o.name = "gpu";
  o.access = AcceleratorAccess::Server;
  o.capacity = 2;
  o.clock = [&vt] { return vt.now(); };
  SharedAccelerator acc(o, std::make_unique<EmulatedDevice>([&vt](Duration d) { vt.wait(d); }));
  struct Seen {
    std::mutex m;
    std::vector<std::pair<std::uint64_t, Duration>> done;
    VirtualTime* vt;
  } seen{{}, {}, &vt};
  auto hook = [](void* c, std::uint64_t token) noexcept {
    auto* s = static_cast<Seen*>(c);
    std::lock_guard<std::mutex> lk(s->m);
    s->done.emplace_back(token, s->vt->now());
  };
  EXPECT_TRUE(acc.submit(1, 0, 0, DeviceWork{0, 5 * ms, 0}, hook, &seen, 7));
  vt.settle(acc);  // the first is in service: two more fill the queue, a third is refused
  EXPECT_TRUE(acc.submit(1, 1, 0, DeviceWork{0, 1 * ms, 0}, hook, &seen, 8));
  EXPECT_TRUE(acc.submit(5, 2, 0, DeviceWork{0, 1 * ms, 0}, hook, &seen, 9));
  EXPECT_FALSE(acc.submit(9, 3, 0, DeviceWork{0, 1 * ms, 0}, hook, &seen, 10));
  vt.advance_to(20 * ms, acc);
  acc.drain();
  acc.stop();
  const std::vector<std::pair<std::uint64_t, Duration>> expect = {{7, 5 * ms}, {9, 6 * ms}, {8, 7 * ms}};
  EXPECT_EQ(seen.done, expect);
}

}  // namespace
}  // namespace chainrt::runtime
