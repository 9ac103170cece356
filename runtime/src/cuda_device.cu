// chainrt runtime: the CUDA backend of a shared accelerator (cuda_device.hpp).
#include <cuda_runtime.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/runtime/cuda_device.hpp"

namespace chainrt::runtime {

namespace {

constexpr std::size_t kPending = 4096;  // completion records in the ring (> any queue's capacity)

std::string cuda_text(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

std::mutex error_mutex;

}  // namespace

bool cuda_devices(int* count, std::string* why) noexcept {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (count) *count = e == cudaSuccess ? n : 0;
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? cuda_text(e, "cudaGetDeviceCount") : "no CUDA device";
    return false;
  }
  return true;
}

CudaDevice::CudaDevice(CudaDeviceOptions options)
    : o_(std::move(options)), work_(std::make_unique<CudaWork>(o_.device)), pending_(kPending) {
  int least = 0, greatest = 0;
  if (cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest); e != cudaSuccess)
    throw std::runtime_error(cuda_text(e, "cudaDeviceGetStreamPriorityRange"));
  range_ = CudaStreamRange{least, greatest};
  // streams_[k]: level k, 0 the least stream priority
  for (int k = 0; k < range_.levels(); ++k) {
    cudaStream_t s = nullptr;
    if (cudaError_t e = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, least - k); e != cudaSuccess)
      throw std::runtime_error(cuda_text(e, "cudaStreamCreateWithPriority"));
    streams_.push_back(s);
  }
}

CudaDevice::~CudaDevice() {
  cudaSetDevice(o_.device);
  for (void* s : streams_) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(s));
    cudaStreamDestroy(static_cast<cudaStream_t>(s));
  }
}

std::string CudaDevice::name() const { return "cuda:" + std::to_string(o_.device) + " " + work_->device_name(); }

std::int64_t CudaDevice::level_of(std::optional<int> priority) const noexcept {
  const int levels = range_.levels();
  return levels - 1 - cuda_stream_level(o_.stream_priorities, priority, levels);
}

int CudaDevice::stream_priority(std::optional<int> priority) const noexcept {
  return range_.least - static_cast<int>(level_of(priority));
}

void* CudaDevice::stream_of_level(std::int64_t level) const noexcept {
  const auto k = std::clamp<std::int64_t>(level, 0, static_cast<std::int64_t>(streams_.size()) - 1);
  return streams_[static_cast<std::size_t>(k)];
}

void CudaDevice::fail(const std::string& what) noexcept {
  std::lock_guard<std::mutex> lk(error_mutex);
  if (!failed_.exchange(true)) error_ = what;
}

std::string CudaDevice::error() const {
  std::lock_guard<std::mutex> lk(error_mutex);
  return error_;
}

void CudaDevice::run(const DeviceWork& work) noexcept {
  cudaSetDevice(o_.device);
  std::string why;
  auto stream = static_cast<cudaStream_t>(streams_[0]);
  if (!work_->enqueue(work, stream, &why)) fail(why);
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) fail(cuda_text(e, "cudaStreamSynchronize"));
}

void CudaDevice::host_done(void* p) noexcept {
  const Pending& x = *static_cast<const Pending*>(p);
  x.done(x.context, x.ticket);
}

void CudaDevice::start(const DeviceWork& work, std::int64_t level, Done done, void* context,
                       std::uint64_t ticket) noexcept {
  cudaSetDevice(o_.device);
  auto stream = static_cast<cudaStream_t>(stream_of_level(level));
  Pending& p = pending_[next_.fetch_add(1) % kPending];
  p = Pending{done, context, ticket};
  std::string why;
  if (!work_->enqueue(work, stream, &why)) fail(why);
  if (cudaError_t e = cudaLaunchHostFunc(stream, &CudaDevice::host_done, &p); e != cudaSuccess) {
    fail(cuda_text(e, "cudaLaunchHostFunc"));
    done(context, ticket);  // nothing will report it: the request is not left waiting
  }
}

void register_cuda_backend() {
  set_cuda_backend_factory([](int device, const std::vector<int>& thresholds) -> std::unique_ptr<DeviceBackend> {
    return std::make_unique<CudaDevice>(CudaDeviceOptions{device, thresholds});
  });
}

}  // namespace chainrt::runtime
