// bench/gpu: the emulated device (the dry run): direct lanes through one SharedAccelerator on
// the emulated device — first come, first served for the same priority, block-preemptive
// serving for the prioritized lanes (the model's reading of a GPU's stream priorities).
#include "device.hpp"

namespace chainrt::bench_gpu {

namespace {

class Emulated : public Device {
 public:
  std::string name() const override { return "emulated"; }
  std::unique_ptr<Lanes> direct(bool prioritized, int lanes) override {
    runtime::AcceleratorOptions o;
    o.name = prioritized ? "gpu-greatest" : "gpu-same";
    o.access = prioritized ? AcceleratorAccess::Server : AcceleratorAccess::Direct;
    o.block_preemption = prioritized;
    o.capacity = static_cast<std::size_t>(lanes) + 1;
    return std::make_unique<AcceleratorLanes>(
        std::make_unique<runtime::SharedAccelerator>(o, std::make_unique<runtime::EmulatedDevice>()));
  }
  std::unique_ptr<runtime::DeviceBackend> backend() override { return std::make_unique<runtime::EmulatedDevice>(); }
  bool other_process() const override { return false; }
  bool packs() const override { return false; }
};

}  // namespace

std::unique_ptr<Device> make_emulated_device() { return std::make_unique<Emulated>(); }

}  // namespace chainrt::bench_gpu
