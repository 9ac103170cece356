// The accelerator's block-preemptive serving on a concurrent backend (accelerator.hpp; the
// CUDA backend's way): a request starts while others are in flight only when its level is
// strictly above theirs, so requests of several priorities are on the device at once and those
// of one level never are. The backend here is a fake that holds every started request until the
// test completes it, so the order is decided by the test alone (no timing).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "chainrt/runtime/accelerator.hpp"

namespace chainrt::runtime {
namespace {

class HeldDevice : public DeviceBackend {
 public:
  struct Started {
    Duration kernel;
    std::int64_t level;
    Done done;
    void* context;
    std::uint64_t ticket;
  };
  std::string name() const override { return "held"; }
  void run(const DeviceWork&) noexcept override {}
  bool concurrent() const noexcept override { return true; }
  void start(const DeviceWork& w, std::int64_t level, Done done, void* context, std::uint64_t ticket) noexcept override {
    std::lock_guard<std::mutex> lk(m_);
    started_.push_back({w.kernel, level, done, context, ticket});
    cv_.notify_all();
  }
  // The kernels started so far, once there are `n`.
  std::vector<Started> wait_started(std::size_t n) {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait_for(lk, std::chrono::seconds(20), [&] { return started_.size() >= n; });
    return started_;
  }
  // Completes the started request of kernel `kernel` (as the GPU's completion callback would).
  void complete(Duration kernel) {
    Started s{};
    {
      std::lock_guard<std::mutex> lk(m_);
      for (const auto& x : started_)
        if (x.kernel == kernel) s = x;
    }
    s.done(s.context, s.ticket);
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Started> started_;
};

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

TEST(AcceleratorConcurrent, AMoreUrgentRequestStartsWhileALessUrgentOneIsInFlight) {
  AcceleratorOptions o;
  o.name = "gpu";
  o.access = AcceleratorAccess::Server;
  o.block_preemption = true;
  o.trace_capacity = 8;
  auto dev = std::make_unique<HeldDevice>();
  HeldDevice& d = *dev;
  SharedAccelerator acc(o, std::move(dev));
  // kernels as names: 1 the first low request, 2 a second one of the same priority, 3 the high
  ASSERT_TRUE(acc.submit(1, 0, 0, DeviceWork{0, 1, 0}, nullptr, nullptr, 0));
  ASSERT_EQ(d.wait_started(1).size(), 1u);
  ASSERT_TRUE(acc.submit(1, 1, 0, DeviceWork{0, 2, 0}, nullptr, nullptr, 0));
  ASSERT_TRUE(acc.submit(9, 2, 0, DeviceWork{0, 3, 0}, nullptr, nullptr, 0));
  auto started = d.wait_started(2);
  settle();
  started = d.wait_started(2);
  // the high one is in flight beside the first low one, at a greater level; the second low
  // one waits (same level as the one in flight)
  ASSERT_EQ(started.size(), 2u);
  EXPECT_EQ(started[1].kernel, 3);
  EXPECT_GT(started[1].level, started[0].level);
  d.complete(3);
  settle();
  EXPECT_EQ(d.wait_started(2).size(), 2u);  // still only one request of the low level in flight
  d.complete(1);
  ASSERT_EQ(d.wait_started(3).size(), 3u);
  EXPECT_EQ(d.wait_started(3)[2].kernel, 2);
  d.complete(2);
  acc.drain();
  acc.stop();
  const auto trace = acc.trace();
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace[0].site, 2u);  // the high one finished first
  EXPECT_EQ(trace[1].site, 0u);
  EXPECT_EQ(trace[2].site, 1u);
}

// Without block preemption the same backend is used one request at a time (run()): the high
// request waits for the one in service.
TEST(AcceleratorConcurrent, RequestLevelServingKeepsOneRequestOnTheDevice) {
  AcceleratorOptions o;
  o.name = "gpu";
  o.access = AcceleratorAccess::Server;
  auto dev = std::make_unique<HeldDevice>();
  HeldDevice& d = *dev;
  SharedAccelerator acc(o, std::move(dev));
  ASSERT_TRUE(acc.submit(1, 0, 0, DeviceWork{0, 1, 0}, nullptr, nullptr, 0));
  acc.drain();
  EXPECT_EQ(d.wait_started(0).size(), 0u);  // run(), never start()
  acc.stop();
}

// The default level of a backend is the request's priority; none is below every priority.
TEST(AcceleratorConcurrent, DefaultLevelIsThePriority) {
  EmulatedDevice e;
  EXPECT_EQ(e.level_of(5), 5);
  EXPECT_LT(e.level_of(std::nullopt), e.level_of(-1'000'000));
}

}  // namespace
}  // namespace chainrt::runtime
