// chainrt runtime: synthetic device work of given durations on a GPU (cuda_device.hpp, CudaWork).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "chainrt/runtime/cuda_device.hpp"

namespace chainrt::runtime {

namespace {

// One thread block busy for `ns` of the GPU's global timer from its own start (so a block's
// length does not depend on when its wave began), holding its multiprocessor's shared memory.
__global__ void spin_blocks(long long ns, int* sink) {
  extern __shared__ int smem[];
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  now = start;
  while (static_cast<long long>(now - start) < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  if (threadIdx.x == 0) {
    smem[0] = static_cast<int>(now & 0xffff);
    sink[blockIdx.x & 1023] = smem[0];
  }
}

// One block of a packed kernel (CudaWork::enqueue_packed): busy for a length in
// [block / 2, 3 block / 2), spread over the blocks by a multiplicative hash of the index.
__global__ void spin_packed(long long block, int* sink) {
  const unsigned spread = (blockIdx.x * 2654435761u) >> 22;  // 0..1023
  const long long ns = block / 2 + block * static_cast<long long>(spread) / 1024;
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  now = start;
  while (static_cast<long long>(now - start) < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  if (threadIdx.x == 0) sink[blockIdx.x & 1023] = static_cast<int>(now & 0xffff);
}

constexpr int kPackedThreads = 128;

std::string cuda_text(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(cuda_text(e, what));
}

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;  // the largest single transfer

// Bytes per ns of one transfer of `bytes` (the median of five).
double bandwidth(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  float ms[5];
  for (float& m : ms) {
    check(cudaEventRecord(a), "cudaEventRecord");
    check(cudaMemcpyAsync(dst, src, bytes, kind), "cudaMemcpyAsync");
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&m, a, b), "cudaEventElapsedTime");
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms, ms + 5);
  return static_cast<double>(bytes) / (std::max(ms[2], 1e-3f) * 1e6);
}

}  // namespace

CudaWork::CudaWork(int device) : device_(device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  name_ = p.name;
  sms_ = p.multiProcessorCount;
  smem_ = std::min<std::size_t>(p.sharedMemPerMultiprocessor / 2 + 1024, p.sharedMemPerBlockOptin);
  check(cudaFuncSetAttribute(spin_blocks, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)),
        "cudaFuncSetAttribute");
  // the packed blocks leave a multiprocessor's shared memory unused but keep its carveout at the
  // greatest, as kernels that use shared memory do: with a smaller carveout a block that needs
  // more shared memory waited for all of a multiprocessor's packed blocks to end (measured on an
  // H200: docs/accelerator.md, "Measured on an NVIDIA H200")
  check(cudaFuncSetAttribute(spin_packed, cudaFuncAttributePreferredSharedMemoryCarveout,
                             static_cast<int>(cudaSharedmemCarveoutMaxShared)),
        "cudaFuncSetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&packed_per_sm_, spin_packed, kPackedThreads, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  packed_per_sm_ = std::max(packed_per_sm_, 1);
  bytes_ = kCopyBytes;
  check(cudaMallocHost(&host_, bytes_), "cudaMallocHost");
  check(cudaMalloc(&dev_, bytes_), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&sink_), 1024 * sizeof(int)), "cudaMalloc");
  h2d_ = bandwidth(dev_, host_, bytes_, cudaMemcpyHostToDevice);
  d2h_ = bandwidth(host_, dev_, bytes_, cudaMemcpyDeviceToHost);
}

CudaWork::~CudaWork() {
  cudaSetDevice(device_);
  cudaDeviceSynchronize();
  if (sink_) cudaFree(sink_);
  if (dev_) cudaFree(dev_);
  if (host_) cudaFreeHost(host_);
}

bool CudaWork::enqueue(const DeviceWork& w, void* stream_ptr, std::string* error) const noexcept {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  auto fail = [&](cudaError_t e, const char* what) {
    if (error) *error = cuda_text(e, what);
    return false;
  };
  auto copy = [&](Duration d, double rate, bool in) {
    std::size_t left = static_cast<std::size_t>(static_cast<double>(d) * rate);
    while (left > 0) {
      const std::size_t n = std::min(left, bytes_);
      const cudaError_t e = in ? cudaMemcpyAsync(dev_, host_, n, cudaMemcpyHostToDevice, stream)
                               : cudaMemcpyAsync(host_, dev_, n, cudaMemcpyDeviceToHost, stream);
      if (e != cudaSuccess) return e;
      left -= n;
    }
    return cudaSuccess;
  };
  if (w.copy_in > 0)
    if (cudaError_t e = copy(w.copy_in, h2d_, true); e != cudaSuccess) return fail(e, "copy-in");
  if (w.kernel > 0) {
    const Duration block = w.block > 0 ? std::min(w.block, w.kernel) : w.kernel;
    const long long waves = (w.kernel + block - 1) / block;
    const unsigned grid = static_cast<unsigned>(std::min<long long>(waves * sms_, 1ll << 30));
    spin_blocks<<<grid, 128, smem_, stream>>>(block, sink_);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return fail(e, "kernel launch");
  }
  if (w.copy_out > 0)
    if (cudaError_t e = copy(w.copy_out, d2h_, false); e != cudaSuccess) return fail(e, "copy-out");
  return true;
}

bool CudaWork::enqueue_packed(Duration kernel, Duration block, void* stream_ptr, std::string* error) const noexcept {
  if (kernel <= 0) return true;
  block = block > 0 ? std::min(block, kernel) : kernel;
  const long long waves = (kernel + block - 1) / block;
  const long long blocks = waves * sms_ * static_cast<long long>(packed_per_sm_);
  const unsigned grid = static_cast<unsigned>(std::min<long long>(blocks, 1ll << 30));
  spin_packed<<<grid, kPackedThreads, 0, static_cast<cudaStream_t>(stream_ptr)>>>(block, sink_);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    if (error) *error = cuda_text(e, "packed kernel launch");
    return false;
  }
  return true;
}

}  // namespace chainrt::runtime
