// chainrt runtime: shared accelerators (PiCAS Sec. IV; the server after Kim et al., "A
// server-based approach for predictable GPU access with improved analysis", JSA 2018). The
// runtime side of model/accelerator.hpp, the one reading of a callback's accelerator segments
// that the simulator and the analyses share:
//  - direct access: the calling callback hands its segment to the device and its thread blocks
//    until the segment is done; the device serves requests first come, first served.
//  - server access: the request is queued at the accelerator's server, which serves the queued
//    requests in the order of their priority (the requesting callback's effective priority;
//    ties and requests without one in arrival order, those last). A request in service is
//    never preempted (request-level preemption: a more urgent request overtakes queued ones
//    only). The server thread spends the accelerator's overhead on its core before each
//    segment; the calling thread is free meanwhile, and the request's completion hook (run on
//    the server thread when the segment is done) releases the continuation.
//
// Several processes share one accelerator through a shared-memory queue served by one of them
// (AcceleratorOptions::shared_memory and serve; accelerator_shm.hpp), in the same order.
//
// The device itself is a DeviceBackend: EmulatedDevice (the default: copy-in, kernel and
// copy-out as waits of their durations on the accelerator's own thread, one request at a
// time) needs no GPU; CudaDevice (cuda_device.hpp, only in builds with a CUDA toolkit) runs
// them on a GPU, on CUDA streams of the requests' priorities.
//
// Block-level preemption (AcceleratorOptions::block_preemption, the model's `preemption: block`;
// model.hpp Accelerator::block_preemption): a more urgent request does not wait for the whole
// request in service, only for its current non-preemptive chunk (copy-in, one thread block of
// the kernel, copy-out). With a backend that runs one request at a time (EmulatedDevice), the
// accelerator's thread serves a request chunk by chunk and, between two chunks, gives the
// device to a strictly more urgent queued request (the preempted one is queued again, same
// priority and arrival, and resumes where it stopped without a second overhead): the
// simulator's rule. With a concurrent backend (CudaDevice: DeviceBackend::concurrent()), it
// starts a request as soon as it is strictly more urgent than every request in flight —
// several requests in flight at once, each on the stream of its level — and the GPU's block
// scheduler runs the more urgent one's blocks first as the blocks in progress end.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::runtime {

// The device work of one request: the three parts of an accelerator segment, and optionally
// real work — `job(job_context)`, run on the accelerator's thread after the backend's run() of
// the parts and before the request counts as done, never preempted by another request (a
// client's own device code: copies, a kernel launch and its synchronize). It must not throw.
struct DeviceWork {
  Duration copy_in = 0, kernel = 0, copy_out = 0;
  Duration block = 0;  // the kernel's longest thread block (0: the whole kernel is one block)
  void (*job)(void* context) noexcept = nullptr;
  void* job_context = nullptr;
  Duration total() const { return copy_in + kernel + copy_out; }
};

// A device. run() runs one request to completion: called only from the accelerator's one
// thread, it blocks until the work is done; it must not throw.
// A concurrent backend also keeps several requests in flight (block-level preemption):
// start() begins `work` at `level` (greater: more urgent) and returns at once; the device runs
// the more urgent level's work first at each block boundary, and calls done(context, ticket)
// from a thread of its own when the work is complete (done only signals; it must not call
// back into the backend). start() is called only from the accelerator's thread, never with
// work.job set.
class DeviceBackend {
 public:
  using Done = void (*)(void* context, std::uint64_t ticket) noexcept;
  virtual ~DeviceBackend() = default;
  virtual std::string name() const = 0;
  virtual void run(const DeviceWork& work) noexcept = 0;
  virtual bool concurrent() const noexcept { return false; }
  virtual void start(const DeviceWork& work, std::int64_t level, Done done, void* context,
                     std::uint64_t ticket) noexcept;
  // The level a request of effective chain priority `priority` (nullopt: none) runs at on a
  // concurrent backend: requests of one level do not preempt each other. Default: the priority
  // itself (none: below every priority).
  virtual std::int64_t level_of(std::optional<int> priority) const noexcept;
};

// The emulated device: each part a wait of its duration on the accelerator's thread (no CPU
// time is used, as a device's would not be). `wait` replaces the sleep (tests: a virtual
// clock); by default an absolute CLOCK_MONOTONIC sleep per part.
class EmulatedDevice : public DeviceBackend {
 public:
  using Wait = std::function<void(Duration)>;
  explicit EmulatedDevice(Wait wait = {});
  std::string name() const override { return "emulated"; }
  void run(const DeviceWork& work) noexcept override;

 private:
  Wait wait_;
};

// The CUDA backend for a `device: cuda` accelerator (device index, stream-priority thresholds),
// when the program linked chainrt_cuda and called register_cuda_backend() (cuda_device.hpp);
// otherwise it throws std::runtime_error saying so (a build without a CUDA toolkit).
using CudaBackendFactory = std::unique_ptr<DeviceBackend> (*)(int device, const std::vector<int>& thresholds);
void set_cuda_backend_factory(CudaBackendFactory factory) noexcept;
std::unique_ptr<DeviceBackend> make_cuda_backend(int device, const std::vector<int>& thresholds);

// One served request, as the accelerator's trace records it (the simulator's DeviceTraceEntry).
struct DeviceRecord {
  std::uint32_t site = 0;     // who asked (the caller's tag: a callback piece)
  std::uint32_t segment = 0;  // which of its segments
  Duration issued = 0, start = 0, finish = 0;  // start: the device begins (after the overhead)
};

struct AcceleratorOptions {
  std::string name;
  AcceleratorAccess access = AcceleratorAccess::Direct;
  Duration overhead = 0;                 // server: CPU time of the server thread per request
  std::optional<int> fifo_priority;      // the accelerator thread's SCHED_FIFO priority
  std::vector<int> cores;                // its pinning (empty: any)
  std::vector<std::string>* warnings = nullptr;  // what applying them could not do (filled at start)
  std::function<Duration()> clock;       // time of the trace (default: CLOCK_MONOTONIC)
  std::function<void(Duration)> spend;   // the server's overhead (default: burn_cpu, thread CPU time)
  std::size_t capacity = 256;            // requests queued at once (preallocated)
  std::size_t trace_capacity = 0;        // records kept (preallocated; 0: no trace)
  // Server access: block-level preemption (above); not with shared_memory (a shared
  // accelerator serves each request to completion).
  bool block_preemption = false;
  // One accelerator for several processes (accelerator_shm.hpp): the shared-memory segment's
  // name (AcceleratorShm::segment_name; empty: this process's accelerator only), and
  // whether this process runs its server thread (one user of the segment should; the others
  // are clients). Every user gives the same name, access and capacity.
  std::string shared_memory;
  bool serve = true;
  // A serving process's stop() keeps serving other live processes' requests for at most this
  // long (their runs may end a little later than this one's).
  Duration stop_grace = 5'000'000'000;
};

class AcceleratorShm;

// The accelerator of one host: its queue, its thread and its device.
// Thread-safe: call() and submit() may be called from any thread at once. After the
// constructor neither allocates: the queue and the trace are preallocated (`capacity`,
// `trace_capacity`); a full queue is refused (submit() false, call() throws only then).
class SharedAccelerator {
 public:
  // Runs on the accelerator's thread when a server-mode request's segment is done.
  using Completion = void (*)(void* context, std::uint64_t token) noexcept;

  SharedAccelerator(AcceleratorOptions options, std::unique_ptr<DeviceBackend> device);
  ~SharedAccelerator();  // stops the thread; queued requests are dropped
  SharedAccelerator(const SharedAccelerator&) = delete;
  SharedAccelerator& operator=(const SharedAccelerator&) = delete;

  const AcceleratorOptions& options() const noexcept { return o_; }
  std::string device_name() const { return device_->name(); }

  // Queue the work and block the calling thread until the device has run it: direct access
  // first come, first served; server access at `priority` (nullopt: after every prioritized
  // request). True when it ran; false when the accelerator was stopped, or its server (another
  // process) stopped or died, before it ran. Throws std::runtime_error only when the queue is
  // full.
  bool call(std::uint32_t site, std::uint32_t segment, const DeviceWork& work,
            std::optional<int> priority = std::nullopt);

  // Server access: queue the work at `priority` (nullopt: after every prioritized request) and
  // return; `done(context, token)` runs on the accelerator's thread when it is done. False when
  // the queue is full (nothing queued).
  bool submit(std::optional<int> priority, std::uint32_t site, std::uint32_t segment, const DeviceWork& work,
              Completion done, void* context, std::uint64_t token) noexcept;

  // The served requests in completion order (at most trace_capacity). Call after stop().
  std::vector<DeviceRecord> trace() const;
  bool trace_truncated() const;
  // Waits until nothing is queued or in service.
  void drain();
  // Nothing queued or in service now (shared memory: none of this process's requests
  // outstanding); the number of requests this process queued so far.
  bool idle() const;
  std::uint64_t requests() const;
  // Requests waiting for the device now (shared memory: every process's).
  std::size_t queued() const;
  // Shared memory: the requests of this process whose server went away before serving them, and
  // the times the segment's mutex was taken back from a process that died holding it.
  std::uint64_t lost() const;
  std::uint64_t recoveries() const;
  void stop();

 private:
  struct Request {
    std::int64_t key = 0;  // server: -priority (none: last); direct: 0
    std::uint64_t seq = 0;
    std::uint32_t site = 0, segment = 0;
    DeviceWork work;
    Duration issued = 0;
    Completion done = nullptr;
    void* context = nullptr;
    std::uint64_t token = 0;
    bool* finished = nullptr;  // direct: the blocked caller's flag
    // block preemption: what is left of the work (chunked serving), and whether it started
    Duration left_in = 0, left_kernel = 0, left_out = 0;
    bool started = false;
    Duration start = 0;
  };
  // A request started on a concurrent backend and not yet reported done.
  struct Flight {
    Request r;
    std::int64_t level = 0;
    bool in_use = false, complete = false;
    Duration finish = 0;
  };
  // The queue: -1 when refused, else the request's slot (shared memory) or 0.
  long enqueue(const Request& r) noexcept;
  void loop();
  void loop_chunks();
  void loop_concurrent();
  std::vector<Request>::iterator next_request();  // caller holds m_; queue_ not empty
  Request pop_next();                             // ... and takes it out of the queue
  void finish_request(const Request& r, Duration start, Duration finish, std::unique_lock<std::mutex>& lk);
  static void on_device_done(void* self, std::uint64_t ticket) noexcept;
  Duration now() const;
  // Shared memory (accelerator_shm.cpp): the queue in the segment, its server loop, and this
  // process's completion thread (hooks, blocked callers, granted jobs).
  long shm_enqueue(const Request& r) noexcept;
  void shm_serve();
  void shm_complete();
  void shm_abandon(long slot) noexcept;
  void serve_one(const Request& r, Duration& start, Duration& finish);
  void spend_overhead();
  void record(const DeviceRecord& d);  // caller holds m_

  AcceleratorOptions o_;
  std::unique_ptr<DeviceBackend> device_;
  mutable std::mutex m_;
  std::condition_variable cv_;       // the thread: work or stop
  std::condition_variable done_cv_;  // callers of call() and drain()
  std::vector<Request> queue_;       // capacity preallocated; unordered, selected by (key, seq)
  std::vector<DeviceRecord> trace_;
  bool truncated_ = false;
  bool busy_ = false;
  bool stop_ = false;
  std::uint64_t seq_ = 0;
  std::vector<Flight> flights_;  // concurrent backend: capacity preallocated
  std::thread thread_;
  // shared memory
  std::unique_ptr<AcceleratorShm> seg_;
  std::vector<Request> local_;        // per slot: this process's hooks of its request there
  std::vector<bool> abandoned_;       // per slot: its blocked caller gave up (server gone)
  std::uint64_t outstanding_ = 0;     // this process's requests not yet complete
  std::uint64_t lost_ = 0;
  std::atomic<bool> server_gone_{false};
  std::atomic<bool> client_stop_{false};
  std::thread client_thread_;
};

}  // namespace chainrt::runtime
