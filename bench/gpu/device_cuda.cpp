// bench/gpu: the GPU (built with chainrt_cuda): each direct lane launches on a stream of its
// own (the high lane at the greatest CUDA stream priority when prioritized) and synchronizes
// it; the server rows use CudaDevice.
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "chainrt/runtime/cuda_device.hpp"
#include "device.hpp"
#include "gpu_bench.hpp"

namespace chainrt::bench_gpu {

namespace {

class CudaLanes : public Lanes {
 public:
  CudaLanes(const runtime::CudaWork& work, bool prioritized, int lanes) : work_(work) {
    int least = 0, greatest = 0;
    cudaDeviceGetStreamPriorityRange(&least, &greatest);
    for (int l = 0; l < lanes; ++l) {
      cudaStream_t s = nullptr;
      const int p = prioritized && l == 0 ? greatest : least;
      if (cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, p) != cudaSuccess)
        throw std::runtime_error("cudaStreamCreateWithPriority failed");
      streams_.push_back(s);
    }
  }
  ~CudaLanes() override {
    for (cudaStream_t s : streams_) {
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
    }
  }
  void run(int lane, const Job& job) override {
    std::string why;
    cudaStream_t s = streams_[static_cast<std::size_t>(lane)];
    const bool ok = job.packed ? work_.enqueue_packed(job.work.kernel, job.work.block, s, &why)
                               : work_.enqueue(job.work, s, &why);
    if (!ok) throw std::runtime_error(why);
    if (cudaError_t e = cudaStreamSynchronize(s); e != cudaSuccess)
      throw std::runtime_error(std::string("cudaStreamSynchronize: ") + cudaGetErrorString(e));
  }

 private:
  const runtime::CudaWork& work_;
  std::vector<cudaStream_t> streams_;
};

class Cuda : public Device {
 public:
  Cuda() : work_(0) {}
  std::string name() const override { return "cuda:0 " + work_.device_name(); }
  std::unique_ptr<Lanes> direct(bool prioritized, int lanes) override {
    return std::make_unique<CudaLanes>(work_, prioritized, lanes);
  }
  // thresholds {2}: the high chain (priority 2) on the greatest stream priority, the low ones
  // (priority 1) on the least
  std::unique_ptr<runtime::DeviceBackend> backend() override {
    return std::make_unique<runtime::CudaDevice>(runtime::CudaDeviceOptions{0, {2}});
  }
  bool other_process() const override { return true; }
  bool packs() const override { return true; }

 private:
  runtime::CudaWork work_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device() {
  std::string why;
  if (!runtime::cuda_devices(nullptr, &why)) throw std::runtime_error("no usable CUDA device: " + why);
  return std::make_unique<Cuda>();
}

}  // namespace chainrt::bench_gpu

namespace chainrt::bench_gpu {

int low_worker(int threads, Duration kernel, Duration block) {
  try {
    runtime::CudaWork work(0);
    CudaLanes lanes(work, false, threads);
    Job w;
    w.work.kernel = kernel;
    w.work.block = block;
    return run_low_threads("gpu-bench low worker", threads, [&](int k) {
      lanes.run(k, w);
      return true;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu-bench low worker: %s\n", e.what());
    return 1;
  }
}

}  // namespace chainrt::bench_gpu
