// chainrt runtime: shared accelerators, direct or through the chain-priority server
// (accelerator.hpp).
#include "chainrt/runtime/accelerator.hpp"

#include <time.h>

#include <limits>
#include <stdexcept>

#include "chainrt/runtime/node.hpp"
#include "chainrt/runtime/threads.hpp"

namespace chainrt::runtime {

namespace {

Duration monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Duration>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// An absolute sleep: a wake-up that comes early is slept again, never cut short.
void sleep_ns(Duration d) {
  if (d <= 0) return;
  const Duration end = monotonic_ns() + d;
  timespec ts{static_cast<time_t>(end / 1'000'000'000), static_cast<long>(end % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

}  // namespace

EmulatedDevice::EmulatedDevice(Wait wait) : wait_(std::move(wait)) {}

void EmulatedDevice::run(const DeviceWork& w) noexcept {
  for (Duration part : {w.copy_in, w.kernel, w.copy_out}) {
    if (part <= 0) continue;
    if (wait_) wait_(part);
    else sleep_ns(part);
  }
}

SharedAccelerator::SharedAccelerator(AcceleratorOptions options, std::unique_ptr<DeviceBackend> device)
    : o_(std::move(options)), device_(std::move(device)) {
  if (!device_) throw std::invalid_argument("accelerator '" + o_.name + "' has no device backend");
  queue_.reserve(o_.capacity);
  trace_.reserve(o_.trace_capacity);
  thread_ = std::thread([this] {
    sched::ThreadSpec spec;
    spec.name = o_.name;
    spec.cores = o_.cores;
    spec.fifo_priority = o_.fifo_priority;
    ThreadSetupResult r = apply_thread_spec(spec);
    {
      std::lock_guard<std::mutex> lk(m_);
      if (o_.warnings)
        for (auto& w : r.warnings) o_.warnings->push_back("accelerator '" + o_.name + "': " + w);
    }
    loop();
  });
}

SharedAccelerator::~SharedAccelerator() { stop(); }

Duration SharedAccelerator::now() const { return o_.clock ? o_.clock() : monotonic_ns(); }

bool SharedAccelerator::enqueue(const Request& r) noexcept {
  std::lock_guard<std::mutex> lk(m_);
  if (stop_ || queue_.size() >= o_.capacity) return false;
  queue_.push_back(r);
  queue_.back().seq = seq_++;
  queue_.back().issued = now();
  cv_.notify_one();
  return true;
}

void SharedAccelerator::call(std::uint32_t site, std::uint32_t segment, const DeviceWork& work) {
  bool finished = false;
  Request r;
  r.site = site;
  r.segment = segment;
  r.work = work;
  r.finished = &finished;
  if (!enqueue(r))
    throw std::runtime_error("accelerator '" + o_.name + "': more than " + std::to_string(o_.capacity) +
                             " requests queued at once");
  std::unique_lock<std::mutex> lk(m_);
  done_cv_.wait(lk, [&] { return finished || stop_; });
}

bool SharedAccelerator::submit(std::optional<int> priority, std::uint32_t site, std::uint32_t segment,
                               const DeviceWork& work, Completion done, void* context, std::uint64_t token) noexcept {
  Request r;
  r.key = priority ? -static_cast<std::int64_t>(*priority) : std::numeric_limits<std::int64_t>::max();
  r.site = site;
  r.segment = segment;
  r.work = work;
  r.done = done;
  r.context = context;
  r.token = token;
  return enqueue(r);
}

// The accelerator's thread: take the next request (direct: the oldest; server: the most urgent,
// then the oldest — the same rule as the simulator's flush_devices), spend the server's
// overhead, run the device, then wake the blocked caller or run the completion hook.
void SharedAccelerator::loop() {
  const bool server = o_.access == AcceleratorAccess::Server;
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto best = queue_.begin();
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (server ? (it->key < best->key || (it->key == best->key && it->seq < best->seq)) : it->seq < best->seq)
        best = it;
    const Request r = *best;
    *best = queue_.back();
    queue_.pop_back();
    busy_ = true;
    lk.unlock();
    if (server && o_.overhead > 0) {
      if (o_.spend) o_.spend(o_.overhead);
      else burn_cpu(o_.overhead);
    }
    const Duration start = now();
    device_->run(r.work);
    if (r.work.job) r.work.job(r.work.job_context);
    const Duration finish = now();
    if (r.done) r.done(r.context, r.token);
    lk.lock();
    if (trace_.size() < o_.trace_capacity) trace_.push_back(DeviceRecord{r.site, r.segment, r.issued, start, finish});
    else if (o_.trace_capacity > 0) truncated_ = true;
    if (r.finished) *r.finished = true;
    busy_ = false;
    done_cv_.notify_all();
  }
}

std::vector<DeviceRecord> SharedAccelerator::trace() const {
  std::lock_guard<std::mutex> lk(m_);
  return trace_;
}

bool SharedAccelerator::trace_truncated() const {
  std::lock_guard<std::mutex> lk(m_);
  return truncated_;
}

bool SharedAccelerator::idle() const {
  std::lock_guard<std::mutex> lk(m_);
  return queue_.empty() && !busy_;
}

std::uint64_t SharedAccelerator::requests() const {
  std::lock_guard<std::mutex> lk(m_);
  return seq_;
}

void SharedAccelerator::drain() {
  std::unique_lock<std::mutex> lk(m_);
  done_cv_.wait(lk, [&] { return stop_ || (queue_.empty() && !busy_); });
}

void SharedAccelerator::stop() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_all();
  done_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace chainrt::runtime
