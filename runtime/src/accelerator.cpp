// chainrt runtime: shared accelerators, direct or through the chain-priority server
// (accelerator.hpp).
#include "chainrt/runtime/accelerator.hpp"

#include "chainrt/runtime/accelerator_shm.hpp"

#include <time.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "chainrt/runtime/threads.hpp"

namespace chainrt::runtime {

namespace {

// An absolute sleep: a wake-up that comes early is slept again, never cut short.
void sleep_ns(Duration d) {
  if (d <= 0) return;
  const Duration end = now_ns() + d;
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

namespace {
std::atomic<CudaBackendFactory> cuda_factory{nullptr};
}  // namespace

void set_cuda_backend_factory(CudaBackendFactory factory) noexcept { cuda_factory = factory; }

std::unique_ptr<DeviceBackend> make_cuda_backend(int device, const std::vector<int>& thresholds) {
  if (CudaBackendFactory f = cuda_factory.load()) return f(device, thresholds);
  throw std::runtime_error(
      "this program has no CUDA backend: chainrt was built without a CUDA toolkit (a `device: cuda` "
      "accelerator needs a build where CMake finds one; docs/accelerator.md)");
}

void DeviceBackend::start(const DeviceWork& work, std::int64_t, Done done, void* context,
                          std::uint64_t ticket) noexcept {
  run(work);
  done(context, ticket);
}

std::int64_t DeviceBackend::level_of(std::optional<int> priority) const noexcept {
  return priority ? *priority : std::numeric_limits<std::int64_t>::min();
}

SharedAccelerator::SharedAccelerator(AcceleratorOptions options, std::unique_ptr<DeviceBackend> device)
    : o_(std::move(options)), device_(std::move(device)) {
  if (!device_) throw std::invalid_argument("accelerator '" + o_.name + "' has no device backend");
  if (o_.access != AcceleratorAccess::Server) o_.block_preemption = false;
  if (o_.block_preemption && !o_.shared_memory.empty()) {
    o_.block_preemption = false;
    if (o_.warnings)
      o_.warnings->push_back("accelerator '" + o_.name +
                             "': shared by several processes, it serves each request to completion "
                             "(block-level preemption is in-process only)");
  }
  trace_.reserve(o_.trace_capacity);
  // The accelerator's threads run as the accelerator's thread spec says (a client process's
  // completion thread too: it releases the continuations, as the server thread does in-process).
  auto setup = [this] {
    sched::ThreadSpec spec;
    spec.name = o_.name;
    spec.cores = o_.cores;
    spec.fifo_priority = o_.fifo_priority;
    ThreadSetupResult r = apply_thread_spec(spec);
    std::lock_guard<std::mutex> lk(m_);
    if (o_.warnings)
      for (auto& w : r.warnings) o_.warnings->push_back("accelerator '" + o_.name + "': " + w);
  };
  if (!o_.shared_memory.empty()) {
    seg_ = std::make_unique<AcceleratorShm>(o_.shared_memory, o_.capacity, o_.access);
    local_.resize(o_.capacity);
    abandoned_.assign(o_.capacity, false);
    client_thread_ = std::thread([this, setup] {
      if (!o_.serve) setup();
      shm_complete();
    });
    if (!o_.serve) return;
  } else {
    queue_.reserve(o_.capacity + 1);  // + a preempted request queued again (chunked serving)
    if (o_.block_preemption && device_->concurrent()) flights_.resize(o_.capacity);
  }
  thread_ = std::thread([this, setup] {
    setup();
    if (seg_) shm_serve();
    else loop();
  });
}

SharedAccelerator::~SharedAccelerator() { stop(); }

Duration SharedAccelerator::now() const { return o_.clock ? o_.clock() : now_ns(); }

long SharedAccelerator::enqueue(const Request& r) noexcept {
  if (seg_) return shm_enqueue(r);
  std::lock_guard<std::mutex> lk(m_);
  if (stop_ || queue_.size() >= o_.capacity) return -1;
  queue_.push_back(r);
  queue_.back().seq = seq_++;
  queue_.back().issued = now();
  cv_.notify_one();
  return 0;
}

bool SharedAccelerator::call(std::uint32_t site, std::uint32_t segment, const DeviceWork& work,
                             std::optional<int> priority) {
  bool finished = false;
  Request r;
  if (o_.access == AcceleratorAccess::Server)
    r.key = priority ? -static_cast<std::int64_t>(*priority) : std::numeric_limits<std::int64_t>::max();
  r.site = site;
  r.segment = segment;
  r.work = work;
  r.finished = &finished;
  const long slot = enqueue(r);
  if (slot < 0) {
    std::lock_guard<std::mutex> lk(m_);
    if (stop_ || server_gone_) return false;
    throw std::runtime_error("accelerator '" + o_.name + "': more than " + std::to_string(o_.capacity) +
                             " requests queued at once");
  }
  std::unique_lock<std::mutex> lk(m_);
  done_cv_.wait(lk, [&] { return finished || stop_ || server_gone_; });
  if (!finished && seg_ && !stop_) {
    lk.unlock();
    shm_abandon(slot);  // `finished` dies with this frame: its completion must not touch it
    lk.lock();
  }
  return finished;
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
  return enqueue(r) >= 0;
}

// The server's CPU time per request (Kim et al.'s overhead), on the accelerator's thread.
void SharedAccelerator::spend_overhead() {
  if (o_.overhead <= 0) return;
  if (o_.spend) o_.spend(o_.overhead);
  else burn_cpu(o_.overhead);
}

// The device's part of one request on the accelerator's thread: the server's overhead, the
// backend, then the request's own job.
void SharedAccelerator::serve_one(const Request& r, Duration& start, Duration& finish) {
  if (o_.access == AcceleratorAccess::Server) spend_overhead();
  start = now();
  device_->run(r.work);
  if (r.work.job) r.work.job(r.work.job_context);
  finish = now();
}

void SharedAccelerator::record(const DeviceRecord& d) {
  if (trace_.size() < o_.trace_capacity) trace_.push_back(d);
  else if (o_.trace_capacity > 0) truncated_ = true;
}

std::vector<SharedAccelerator::Request>::iterator SharedAccelerator::next_request() {
  const bool server = o_.access == AcceleratorAccess::Server;
  auto best = queue_.begin();
  for (auto it = queue_.begin(); it != queue_.end(); ++it)
    if (served_before(server, it->key, it->seq, best->key, best->seq)) best = it;
  return best;
}

SharedAccelerator::Request SharedAccelerator::pop_next() {
  auto best = next_request();
  const Request r = *best;
  *best = queue_.back();
  queue_.pop_back();
  return r;
}

// Completion of a request (lk unlocked on entry, locked on return): the completion hook on the
// accelerator's thread, then the trace and the blocked caller.
void SharedAccelerator::finish_request(const Request& r, Duration start, Duration finish,
                                       std::unique_lock<std::mutex>& lk) {
  if (r.done) r.done(r.context, r.token);
  lk.lock();
  record(DeviceRecord{r.site, r.segment, r.issued, start, finish});
  if (r.finished) *r.finished = true;
}

// The accelerator's thread: take the next request (served_before: the simulator's rule),
// spend the server's overhead, run the device, then wake the blocked caller or run the
// completion hook.
void SharedAccelerator::loop() {
  if (o_.block_preemption) {
    if (device_->concurrent()) loop_concurrent();
    else loop_chunks();
    return;
  }
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const Request r = pop_next();
    busy_ = true;
    lk.unlock();
    Duration start = 0, finish = 0;
    serve_one(r, start, finish);
    finish_request(r, start, finish, lk);
    busy_ = false;
    done_cv_.notify_all();
  }
}

// Block preemption on a backend of one request at a time: the request runs chunk by chunk
// (copy-in, each block of its kernel, copy-out: the simulator's start_device / device_done);
// between two chunks a strictly more urgent queued request takes the device and this one is
// queued again with its priority and arrival, to resume where it stopped (its overhead was
// spent at its first start).
void SharedAccelerator::loop_chunks() {
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Request r = pop_next();
    busy_ = true;
    lk.unlock();
    if (!r.started) {
      spend_overhead();
      r.started = true;
      r.start = now();
      r.left_in = r.work.copy_in;
      r.left_kernel = r.work.kernel;
      r.left_out = r.work.copy_out;
    }
    bool preempted = false;
    while (r.left_in + r.left_kernel + r.left_out > 0) {
      DeviceWork chunk;
      if (r.left_in > 0) std::swap(chunk.copy_in, r.left_in);
      else if (r.left_kernel > 0) r.left_kernel -= (chunk.kernel = r.work.block > 0 ? std::min(r.work.block, r.left_kernel) : r.left_kernel);
      else std::swap(chunk.copy_out, r.left_out);
      device_->run(chunk);
      if (r.left_in + r.left_kernel + r.left_out == 0) break;
      lk.lock();
      preempted = std::any_of(queue_.begin(), queue_.end(), [&](const Request& q) { return q.key < r.key; });
      if (preempted) queue_.push_back(r);
      lk.unlock();
      if (preempted) break;
    }
    if (preempted) {
      lk.lock();
      busy_ = false;
      continue;
    }
    if (r.work.job) r.work.job(r.work.job_context);
    finish_request(r, r.start, now(), lk);
    busy_ = false;
    done_cv_.notify_all();
  }
}

void SharedAccelerator::on_device_done(void* self, std::uint64_t ticket) noexcept {
  auto* a = static_cast<SharedAccelerator*>(self);
  std::lock_guard<std::mutex> lk(a->m_);
  a->flights_[ticket].complete = true;
  a->flights_[ticket].finish = a->now();
  a->cv_.notify_all();
}

// Block preemption on a concurrent backend (a GPU's prioritized streams): the most urgent
// queued request is started as soon as its level is strictly above every level in flight, so
// requests of several levels are in flight at once and the device's block scheduler preempts
// between blocks. A request with a job (the caller's own device code) is served whole, when
// nothing else is in flight. Completions are reported by the backend (on_device_done) and
// finished here, on the accelerator's thread. On stop, the requests in flight are waited for.
void SharedAccelerator::loop_concurrent() {
  std::unique_lock<std::mutex> lk(m_);
  auto priority_of = [](const Request& r) -> std::optional<int> {
    if (r.key == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
    return static_cast<int>(-r.key);
  };
  // whether the most urgent queued request may start now
  auto startable = [&] {
    if (queue_.empty()) return false;
    const Request& r = *next_request();
    const std::int64_t level = device_->level_of(priority_of(r));
    bool free = false;  // a slot for it (as many as the queue's capacity)
    for (const Flight& f : flights_) {
      if (f.in_use && (r.work.job || f.level >= level)) return false;
      free = free || !f.in_use;
    }
    return free;
  };
  auto in_flight = [&] {
    return std::any_of(flights_.begin(), flights_.end(), [](const Flight& f) { return f.in_use; });
  };
  for (;;) {
    cv_.wait(lk, [&] {
      return (stop_ && !in_flight()) ||
             std::any_of(flights_.begin(), flights_.end(), [](const Flight& f) { return f.complete; }) ||
             (!stop_ && startable());
    });
    if (stop_ && !in_flight()) return;
    for (Flight& f : flights_) {
      if (!f.complete) continue;
      const Request r = f.r;
      const Duration finish = f.finish;
      f = Flight{};
      lk.unlock();
      finish_request(r, r.start, finish, lk);
    }
    while (!stop_ && startable()) {
      Request r = pop_next();
      const std::size_t i = static_cast<std::size_t>(
          std::find_if(flights_.begin(), flights_.end(), [](const Flight& f) { return !f.in_use; }) - flights_.begin());
      busy_ = true;
      lk.unlock();
      if (r.work.job) {
        Duration start = 0, finish = 0;
        serve_one(r, start, finish);
        finish_request(r, start, finish, lk);
        continue;
      }
      spend_overhead();
      r.start = now();
      lk.lock();
      flights_[i] = Flight{r, device_->level_of(priority_of(r)), true, false, 0};
      lk.unlock();
      device_->start(r.work, flights_[i].level, &SharedAccelerator::on_device_done, this, i);
      lk.lock();
    }
    busy_ = in_flight();
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
  return seg_ ? outstanding_ == 0 && !busy_ : queue_.empty() && !busy_;
}

std::uint64_t SharedAccelerator::requests() const {
  std::lock_guard<std::mutex> lk(m_);
  return seq_;
}

std::size_t SharedAccelerator::queued() const {
  if (!seg_) {
    std::lock_guard<std::mutex> lk(m_);
    return queue_.size();
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < seg_->capacity(); ++i)
    n += seg_->slot(i).state.load(std::memory_order_acquire) == shm::Queued;
  return n;
}

std::uint64_t SharedAccelerator::lost() const {
  std::lock_guard<std::mutex> lk(m_);
  return lost_;
}

std::uint64_t SharedAccelerator::recoveries() const { return seg_ ? seg_->recoveries() : 0; }

void SharedAccelerator::drain() {
  std::unique_lock<std::mutex> lk(m_);
  done_cv_.wait(lk, [&] {
    return stop_ || server_gone_ || (seg_ ? outstanding_ == 0 && !busy_ : queue_.empty() && !busy_);
  });
}

void SharedAccelerator::stop() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_all();
  done_cv_.notify_all();
  if (seg_) futex_wake_all(seg_->header().work);
  if (thread_.joinable()) thread_.join();
  // the completion thread outlives the server thread: a granted job of this process runs there
  client_stop_ = true;
  if (seg_) futex_wake_all(seg_->header().completions);
  if (client_thread_.joinable()) client_thread_.join();
  seg_.reset();
}

}  // namespace chainrt::runtime
