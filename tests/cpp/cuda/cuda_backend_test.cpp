// The CUDA backend on a GPU (runtime/cuda_device.hpp): the stream-priority mapping, and the
// device order of a long low-priority request and a short high-priority one issued while the
// low one runs — through the block-preemptive server (several requests in flight on streams of
// their priorities: the high one finishes first, after at most a block of the low one) and
// through the request-level server (one request at a time: the low one finishes first). Orders
// only, read from the accelerator's trace; no wall-clock figure is asserted. Exit status: 0
// passed, 1 failed, 77 skipped (no usable CUDA device, with the reason).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/cuda_device.hpp"

using namespace chainrt;
using namespace chainrt::runtime;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

constexpr Duration ms = 1'000'000;

// The sites, in completion order, of a low request (site 1: 300 ms in 1 ms blocks, priority 1)
// and a high one (site 2: 5 ms, priority 2) issued while the low one is on the device.
std::vector<std::uint32_t> order(bool block_preemption, std::string* error) {
  AcceleratorOptions o;
  o.name = block_preemption ? "gpu-block" : "gpu-request";
  o.access = AcceleratorAccess::Server;
  o.block_preemption = block_preemption;
  o.trace_capacity = 4;
  auto dev = std::make_unique<CudaDevice>(CudaDeviceOptions{0, {2}});
  CudaDevice& d = *dev;
  SharedAccelerator acc(o, std::move(dev));
  DeviceWork low{0, 300 * ms, 0, 1 * ms};
  DeviceWork high{0, 5 * ms, 0, 0};
  acc.submit(1, 1, 0, low, nullptr, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the low request is on the GPU
  acc.submit(2, 2, 0, high, nullptr, nullptr, 0);
  acc.drain();
  acc.stop();
  *error = d.error();
  std::vector<std::uint32_t> sites;
  for (const auto& r : acc.trace()) sites.push_back(r.site);
  return sites;
}

}  // namespace

int main() {
  std::string why;
  if (!cuda_devices(nullptr, &why)) {
    std::printf("skipped: no usable CUDA device (%s)\n", why.c_str());
    return 77;
  }
  try {
    CudaDevice d(CudaDeviceOptions{0, {2}});
    const CudaStreamRange r = d.range();
    std::printf("device %s, stream priorities least %d greatest %d\n", d.name().c_str(), r.least, r.greatest);
    check(r.levels() >= 2, "the GPU has at least two stream priorities");
    check(d.stream_priority(2) == r.greatest, "chain priority 2 (threshold 2) runs at the greatest stream priority");
    check(d.stream_priority(1) == r.least, "chain priority 1 (below every threshold) runs at the least");
    check(d.stream_priority(std::nullopt) == r.least, "a request without a priority runs at the least");
    check(d.level_of(2) > d.level_of(1), "the more urgent chain has the greater level");
    std::string error;
    const auto block = order(true, &error);
    check(error.empty(), "no CUDA error (block preemption): " + error);
    check(block == std::vector<std::uint32_t>{2, 1}, "block preemption: the high request finishes first");
    const auto request = order(false, &error);
    check(error.empty(), "no CUDA error (request level): " + error);
    check(request == std::vector<std::uint32_t>{1, 2}, "request level: the low request in service finishes first");
  } catch (const std::exception& e) {
    check(false, std::string("the CUDA backend could be used: ") + e.what());
  }
  return failures == 0 ? 0 : 1;
}
