// chainrt runtime: the CUDA backend of a shared accelerator (accelerator.hpp), built only where
// a CUDA toolkit is found (cmake/ChainrtCuda.cmake; the library chainrt_cuda). No CUDA header is
// needed to use it: streams are passed as void* (a cudaStream_t).
//
// The request's priority reaches the GPU's block scheduler through CUDA stream priorities: a
// request runs on the stream of its level, cuda_stream_level(thresholds, its effective chain
// priority) (model/accelerator.hpp: the greatest stream priority for the most important chain
// class, the least for requests below every threshold or without a priority). On a
// `preemption: block` accelerator the server keeps requests of several levels in flight
// (SharedAccelerator's concurrent serving) and the GPU starts the more urgent stream's thread
// blocks as the blocks in progress end — the blocking GCAPS (Wang et al., ECRTS 2024) builds on;
// chainrt's bound for it is block_preemptive_response (analysis/src/accelerator.hpp).
//
// A request without a job runs as synthetic device work of its durations (CudaWork); a request
// with a job runs the caller's own device code on the accelerator's thread, whole (request-
// level: on its own streams, which chainrt does not prioritize).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/runtime/accelerator.hpp"

namespace chainrt::runtime {

// Device work of given durations on a GPU: a copy-in as a host-to-device transfer of pinned
// memory sized to its duration at the copy bandwidth measured when this is made (a device-to-
// host one for the copy-out), the kernel as ⌈kernel / block⌉ waves of thread blocks, one block
// per multiprocessor per wave, each block spinning on the GPU's global timer for `block` (the
// whole kernel when block is 0). A block asks for more than half of a multiprocessor's shared
// memory, so that no other block runs beside it on its multiprocessor: a wave holds the whole
// GPU, as a real kernel's blocks that fill it do.
class CudaWork {
 public:
  // Throws std::runtime_error (CUDA's reason) when device `device` cannot be used.
  explicit CudaWork(int device);
  ~CudaWork();
  CudaWork(const CudaWork&) = delete;
  CudaWork& operator=(const CudaWork&) = delete;
  // Enqueues the work on `stream` (a cudaStream_t; nullptr: the legacy default stream) and
  // returns; false with CUDA's reason in *error when a call failed. Thread-safe, no allocation.
  bool enqueue(const DeviceWork& work, void* stream, std::string* error) const noexcept;
  // A kernel of `kernel` whose blocks share their multiprocessors, as many small blocks of a
  // real kernel do: ⌈kernel / block⌉ waves of blocks_per_multiprocessor() blocks per
  // multiprocessor, 128 threads each and no shared memory, block i spinning for a length in
  // [block / 2, 3 block / 2) (spread by i, so that blocks end at different times and a block
  // of another kernel finds room soon; the longest is under 3 block / 2). Thread-safe, no
  // allocation; false with CUDA's reason in *error when the launch failed.
  bool enqueue_packed(Duration kernel, Duration block, void* stream, std::string* error) const noexcept;
  int blocks_per_multiprocessor() const noexcept { return packed_per_sm_; }
  int device() const noexcept { return device_; }
  int multiprocessors() const noexcept { return sms_; }
  std::string device_name() const { return name_; }
  double h2d_bytes_per_ns() const noexcept { return h2d_; }
  double d2h_bytes_per_ns() const noexcept { return d2h_; }

 private:
  int device_ = 0, sms_ = 0, packed_per_sm_ = 1;
  std::size_t smem_ = 0, bytes_ = 0;
  std::string name_;
  double h2d_ = 0, d2h_ = 0;
  void* host_ = nullptr;    // pinned
  void* dev_ = nullptr;     // copies' target
  int* sink_ = nullptr;     // the spin kernel's output (keeps its loop)
};

// The CUDA stream priorities of a device: CUDA's (least, greatest) pair; levels = the count.
struct CudaStreamRange {
  int least = 0, greatest = 0;
  int levels() const { return least - greatest + 1; }
};

struct CudaDeviceOptions {
  int device = 0;
  std::vector<int> stream_priorities;  // thresholds, descending (model: Accelerator::stream_priorities)
};

class CudaDevice : public DeviceBackend {
 public:
  // Throws std::runtime_error with CUDA's reason when the device cannot be used.
  explicit CudaDevice(CudaDeviceOptions options);
  ~CudaDevice() override;  // synchronizes its streams
  std::string name() const override;
  // One request at a time (request-level): on the least level's stream, then a synchronize.
  void run(const DeviceWork& work) noexcept override;
  bool concurrent() const noexcept override { return true; }
  // On the stream of `level` (level_of); done() from CUDA's host-function thread.
  void start(const DeviceWork& work, std::int64_t level, Done done, void* context, std::uint64_t ticket) noexcept override;
  // levels − 1 − cuda_stream_level(...): greater is more urgent.
  std::int64_t level_of(std::optional<int> priority) const noexcept override;

  CudaStreamRange range() const noexcept { return range_; }
  // The CUDA stream priority a request of `priority` runs at (the stated mapping).
  int stream_priority(std::optional<int> priority) const noexcept;
  void* stream_of_level(std::int64_t level) const noexcept;
  const CudaWork& work() const noexcept { return *work_; }
  // The first CUDA error met by run() or start() (empty: none).
  std::string error() const;

 private:
  struct Pending {
    Done done = nullptr;
    void* context = nullptr;
    std::uint64_t ticket = 0;
  };
  static void host_done(void* pending) noexcept;
  void fail(const std::string& what) noexcept;

  CudaDeviceOptions o_;
  std::unique_ptr<CudaWork> work_;
  CudaStreamRange range_;
  std::vector<void*> streams_;     // per level, 0 = the least
  std::vector<Pending> pending_;   // a ring of completion records (preallocated)
  std::atomic<std::uint64_t> next_{0};
  mutable std::atomic<bool> failed_{false};
  std::string error_;
};

// Whether a CUDA device can be used here: the device count, or false with CUDA's reason.
bool cuda_devices(int* count, std::string* why) noexcept;

// Makes `device: cuda` accelerators of this program run on CudaDevice (make_cuda_backend,
// accelerator.hpp); a program that links chainrt_cuda calls it once.
void register_cuda_backend();

}  // namespace chainrt::runtime
