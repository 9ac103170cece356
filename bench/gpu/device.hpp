// bench/gpu: what a row needs of the device (gpu_bench.hpp): direct launches from lanes (the
// high chain's lane 0, the low threads' 1..), a backend for the server rows, and whether the
// low work can run in another process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "chainrt/runtime/accelerator.hpp"

namespace chainrt::bench_gpu {

// What a lane runs: device work, its kernel's blocks either alone on their multiprocessors
// (runtime::CudaWork::enqueue) or packed beside others (CudaWork::enqueue_packed; a GPU only).
struct Job {
  runtime::DeviceWork work;
  bool packed = false;
};

class Lanes {
 public:
  virtual ~Lanes() = default;
  // Runs `job` for lane `lane` and returns when it is done. Thread-safe across lanes.
  virtual void run(int lane, const Job& job) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  // Each lane launches itself (direct access); `prioritized`: lane 0 at the greatest stream
  // priority, the others at the least; else every lane at the same one.
  virtual std::unique_ptr<Lanes> direct(bool prioritized, int lanes) = 0;
  // A backend for a SharedAccelerator (the server rows).
  virtual std::unique_ptr<runtime::DeviceBackend> backend() = 0;
  virtual bool other_process() const = 0;
  // Whether direct lanes run packed jobs (blocks placed beside others on a multiprocessor).
  virtual bool packs() const = 0;
};

// The low threads of a worker process (gpu_bench.hpp's low_worker and low_client): `threads`
// threads call `once(k)` (k = 0..threads-1) back to back until it returns false or throws, or
// stdin closes; "ready" is printed once they run. Returns the process's exit status (1 when
// a thread's call threw, with its reason on stderr after `who`).
int run_low_threads(const char* who, int threads, const std::function<bool(int)>& once);

std::unique_ptr<Device> make_emulated_device();
// Throws std::runtime_error when this build has no CUDA backend or the GPU cannot be used.
std::unique_ptr<Device> make_cuda_device();

// The request path of a SharedAccelerator as lanes: lane 0 at chain priority 2, the others at 1.
class AcceleratorLanes : public Lanes {
 public:
  explicit AcceleratorLanes(std::unique_ptr<runtime::SharedAccelerator> acc) : acc_(std::move(acc)) {}
  void run(int lane, const Job& job) override {
    acc_->call(static_cast<std::uint32_t>(lane), 0, job.work, lane == 0 ? 2 : 1);
  }

 private:
  std::unique_ptr<runtime::SharedAccelerator> acc_;
};

}  // namespace chainrt::bench_gpu
