// bench/gpu: the rows, the calibration, the bounds and the tables (gpu_bench.hpp).
#include "gpu_bench.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../../analysis/src/accelerator.hpp"
#include "chainrt/runtime/accelerator_shm.hpp"
#include "chainrt/runtime/threads.hpp"
#include "device.hpp"

extern char** environ;

namespace chainrt::bench_gpu {

namespace {

using runtime::DeviceWork;

using runtime::now_ns;

void sleep_until(Duration t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

enum class Path { Alone, Direct, Greatest, Server, BlockServer, OtherProcess, ShmServer };

// The low threads' kernels: one wave of long blocks, waves of short blocks each alone on its
// multiprocessor, or waves of short blocks packed several to a multiprocessor.
enum class Low { Long, Short, Packed };

struct Spec {
  const char* name;
  const char* how;
  Path path;
  Low low;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
      {"alone", "the high chain alone (its own stream)", Path::Alone, Low::Long},
      {"long-same", "low kernels of long blocks (one wave), every stream at the same priority", Path::Direct,
       Low::Long},
      {"long-greatest", "same, the high chain's stream at the greatest CUDA stream priority", Path::Greatest,
       Low::Long},
      {"server", "the non-preemptive chain-priority server (one request at a time, highest first), long blocks",
       Path::Server, Low::Long},
      {"short-same", "low kernels of short blocks, one per multiprocessor, every stream at the same priority",
       Path::Direct, Low::Short},
      {"short-greatest", "same, the high chain's stream at the greatest CUDA stream priority", Path::Greatest,
       Low::Short},
      {"shm-server",
       "chainrt's server for several processes (shared memory, one request at a time, highest first): the low "
       "threads in another process, long blocks",
       Path::ShmServer, Low::Long},
      {"short-block-server",
       "chainrt's block-preemptive server: requests in flight on streams of their chain priorities, short blocks",
       Path::BlockServer, Low::Short},
      {"short-other-process",
       "low kernels of short blocks in another process (another CUDA context), the high chain at the greatest "
       "stream priority",
       Path::OtherProcess, Low::Short},
      {"packed-same",
       "low kernels of short blocks packed beside each other on every multiprocessor (ending at spread times), "
       "every stream at the same priority",
       Path::Direct, Low::Packed},
      {"packed-greatest", "same, the high chain's stream at the greatest CUDA stream priority", Path::Greatest,
       Low::Packed},
  };
  return s;
}

Duration scaled(Duration d, double s) { return std::max<Duration>(1, static_cast<Duration>(std::llround(d * s))); }

struct Works {
  Job high, low_long, low_short, one_short_wave, low_packed, one_packed_wave;
  const Job& low(Low l) const { return l == Low::Long ? low_long : l == Low::Short ? low_short : low_packed; }
};

Works works(const Options& o) {
  Works w;
  w.high.work.kernel = scaled(o.high_kernel, o.scale);
  w.low_long.work.kernel = w.low_long.work.block = scaled(o.low_kernel, o.scale);
  w.low_short.work.kernel = scaled(o.low_kernel, o.scale);
  w.low_short.work.block = scaled(o.low_block, o.scale);
  w.one_short_wave.work.kernel = w.one_short_wave.work.block = w.low_short.work.block;
  w.low_packed = w.low_short;
  w.low_packed.packed = true;
  w.one_packed_wave = w.one_short_wave;
  w.one_packed_wave.packed = true;
  return w;
}

// SCHED_FIFO priorities with --realtime: the servers' threads and the GPU runtime's own (which
// carry the high chain's completions) above the high chain's thread, the low threads below.
constexpr int kServerPriority = 90, kHighPriority = 80, kLowPriority = 70;

void realtime(const Options& o, int priority) {
  if (!o.realtime) return;
  sched::ThreadSpec spec;
  spec.fifo_priority = priority;
  runtime::apply_thread_spec(spec);
}

// The high chain's responses: one request every period, with the low threads running back to
// back meanwhile (none when `low` is null).
std::vector<Duration> measure(Lanes& lanes, const Options& o, const Job& high, const Job* low, int samples) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> lows;
  if (low)
    for (int l = 1; l <= o.low_threads; ++l)
      lows.emplace_back([&, l] {
        realtime(o, kLowPriority);
        while (!stop.load()) lanes.run(l, *low);
      });
  std::vector<Duration> out;
  std::exception_ptr error;
  std::thread high_thread([&] {
    realtime(o, kHighPriority);
    const Duration period = scaled(o.period, o.scale);
    Duration next = now_ns() + (low ? 2 * low->work.kernel : period);
    try {
      for (int i = 0; i < samples + o.warmup; ++i) {
        sleep_until(next);
        const Duration t0 = now_ns();
        lanes.run(0, high);
        const Duration t1 = now_ns();
        if (i >= o.warmup) out.push_back(t1 - t0);
        next = std::max(next + period, t1 + period / 2);
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  high_thread.join();
  stop = true;
  for (auto& t : lows) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

Duration worst(const std::vector<Duration>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// Worst of `n` back-to-back runs of `w` alone on lane 0.
Duration alone(Lanes& lanes, const Job& w, int n) {
  Duration m = 0;
  for (int i = 0; i < n; ++i) {
    const Duration t0 = now_ns();
    lanes.run(0, w);
    m = std::max(m, now_ns() - t0);
  }
  return m;
}

std::unique_ptr<Lanes> server_lanes(Device& dev, const Options& o, bool block, int lanes) {
  runtime::AcceleratorOptions a;
  if (o.realtime) a.fifo_priority = kServerPriority;
  a.name = block ? "gpu-block-server" : "gpu-server";
  a.access = AcceleratorAccess::Server;
  a.block_preemption = block;
  a.capacity = static_cast<std::size_t>(lanes) + 1;
  return std::make_unique<AcceleratorLanes>(std::make_unique<runtime::SharedAccelerator>(a, dev.backend()));
}

// The accelerator of the shm-server row for its server (this process, on the device) or a
// client (the low worker; its backend is never used). Every user gives the same options.
constexpr std::size_t kShmCapacity = 16;

runtime::AcceleratorOptions shm_options(const std::string& segment, bool serve, bool realtime = false) {
  runtime::AcceleratorOptions a;
  if (realtime) a.fifo_priority = kServerPriority;
  a.name = "gpu-shm-server";
  a.access = AcceleratorAccess::Server;
  a.capacity = kShmCapacity;
  a.shared_memory = segment;
  a.serve = serve;
  return a;
}

std::string shm_segment() {
  return runtime::AcceleratorShm::segment_name("chainrt-gpu-bench-" + std::to_string(getpid()));
}

// The durations the bounds use, measured alone; *high_alone gets the high chain's responses
// alone (the alone row: G_h is their worst, over as many requests as every other row has).
Calibration calibrate(Device& dev, const Options& o, const Works& w, std::vector<Duration>* high_alone) {
  Calibration c;
  auto lanes = dev.direct(false, 1);
  *high_alone = measure(*lanes, o, w.high, nullptr, o.samples);
  c.high = worst(*high_alone);
  c.low_long = alone(*lanes, w.low_long, 5);
  c.low_short = alone(*lanes, w.low_short, 5);
  c.block_short = alone(*lanes, w.one_short_wave, 10);
  if (dev.packs()) {
    c.low_packed = alone(*lanes, w.low_packed, 5);
    c.block_packed = alone(*lanes, w.one_packed_wave, 10);
  }
  auto server = server_lanes(dev, o, false, 1);
  c.server_extra = std::max<Duration>(0, worst(measure(*server, o, w.high, nullptr, o.samples)) - c.high);
  auto block_server = server_lanes(dev, o, true, 1);
  c.block_server_extra = std::max<Duration>(0, worst(measure(*block_server, o, w.high, nullptr, o.samples)) - c.high);
  {
    AcceleratorLanes shm(
        std::make_unique<runtime::SharedAccelerator>(shm_options(shm_segment(), true, o.realtime), dev.backend()));
    c.shm_server_extra = std::max<Duration>(0, worst(measure(shm, o, w.high, nullptr, o.samples)) - c.high);
  }
  return c;
}

}  // namespace

#ifndef CHAINRT_HAVE_CUDA
std::unique_ptr<Device> make_cuda_device() {
  throw std::runtime_error("this build has no CUDA backend (no CUDA toolkit was found when it was configured)");
}
int low_worker(int, Duration, Duration) {
  std::fprintf(stderr, "gpu-bench: this build has no CUDA backend\n");
  return 2;
}
#endif

const std::vector<std::string>& row_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const Spec& s : specs()) v.push_back(s.name);
    return v;
  }();
  return n;
}

// The bound of a row's model from chainrt's accelerator analysis (analysis/src/accelerator.hpp),
// with the durations of the run's calibration; `terms` says which terms and model.
namespace {

Duration bound_of(const Spec& s, const Calibration& c, int low_threads, std::string* terms) {
  using namespace chainrt::detail;
  const Duration limit = std::numeric_limits<Duration>::max() / 4;
  const Duration low = s.low == Low::Long ? c.low_long : s.low == Low::Short ? c.low_short : c.low_packed;
  // one wave of blocks (packed: the longest blocks' wave)
  const Duration chunk = s.low == Low::Long ? c.low_long : s.low == Low::Short ? c.block_short : c.block_packed;
  switch (s.path) {
    case Path::Alone:
      *terms = "direct access alone: direct_request_response(0, G_h), G_h this row's own worst";
      return direct_request_response(fifo_blocking({c.high}, c.high), c.high);
    case Path::Direct: {
      *terms = "direct access, first come first served: fifo_blocking (one request of each other thread) + G_h";
      std::vector<Duration> per_thread(static_cast<std::size_t>(low_threads), low);
      per_thread.push_back(c.high);
      return direct_request_response(fifo_blocking(per_thread, c.high), c.high);
    }
    case Path::Greatest:
      *terms = "preemption: block, no server overhead: block_preemptive_response(B = one wave of low blocks, 0, G_h)";
      return block_preemptive_response(server_lp_blocking({chunk}), 0, c.high, {}, limit).value_or(limit);
    case Path::OtherProcess:
      *terms = "none: the driver time-slices CUDA contexts, which chainrt's model does not cover (its path for "
               "several processes is the shm-server row)";
      return 0;
    case Path::Server:
    case Path::ShmServer: {
      *terms = "preemption: request: server_request_response(server_waiting_time(B = ε + G_l), ε, G_h)";
      const Duration e = s.path == Path::Server ? c.server_extra : c.shm_server_extra;
      return server_request_response(server_waiting_time(server_lp_blocking({e + low}), {}, limit).value_or(limit), e,
                                     c.high);
    }
    case Path::BlockServer: {
      *terms = "preemption: block: block_preemptive_response(B = ε + one wave of low blocks, ε, G_h)";
      const Duration e = c.block_server_extra;
      return block_preemptive_response(server_lp_blocking({e + chunk}), e, c.high, {}, limit).value_or(limit);
    }
  }
  return limit;
}

}  // namespace

Duration row_bound(const std::string& row, const Calibration& c, int low_threads, std::string* terms) {
  for (const Spec& s : specs())
    if (row == s.name) return bound_of(s, c, low_threads, terms);
  throw std::invalid_argument("unknown row '" + row + "'");
}

namespace {

RunStats stats(std::vector<Duration> v, Duration bound) {
  RunStats r;
  r.n = v.size();
  r.bound_ms = static_cast<double>(bound) / 1e6;
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (Duration d : v) sum += static_cast<double>(d);
  r.mean_ms = sum / static_cast<double>(v.size()) / 1e6;
  const std::size_t k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
  r.p99_ms = static_cast<double>(v[std::min(k, v.size() - 1)]) / 1e6;
  r.max_ms = static_cast<double>(v.back()) / 1e6;
  return r;
}

// This program as a low worker in another process (main.cpp's --low-worker and --low-client):
// started with `args`, ready once it printed "ready"; it stops when its stdin closes, which
// the destructor does before it waits for it.
class Worker {
 public:
  Worker(const std::string& self, std::vector<std::string> args) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    args.insert(args.begin(), self);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, self.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(to_child[0]);
    close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    if (rc != 0) {
      pid_ = 0;
      throw std::runtime_error("cannot start the low worker " + self);
    }
    char buf[16] = {};
    const ssize_t got = read(from_, buf, sizeof buf - 1);
    ready_ = got > 0 && std::string(buf).rfind("ready", 0) == 0;
  }
  ~Worker() {
    close(to_);
    close(from_);
    int status = 0;
    if (pid_ > 0) waitpid(pid_, &status, 0);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  bool ready() const { return ready_; }

 private:
  pid_t pid_ = 0;
  int to_ = -1, from_ = -1;
  bool ready_ = false;
};

// The other-process row: this program as the low worker (direct launches in a CUDA context of
// its own), the high chain here on the greatest stream priority.
std::vector<Duration> measure_other_process(Device& dev, const Options& o, const Works& w) {
  Worker worker(o.self, {"--low-worker", std::to_string(o.low_threads), std::to_string(w.low_short.work.kernel),
                         std::to_string(w.low_short.work.block)});
  if (!worker.ready()) throw std::runtime_error("the low worker did not start");
  auto lanes = dev.direct(true, 1);
  return measure(*lanes, o, w.high, nullptr, o.samples);
}

// The shm-server row: this process serves the device through a shared-memory segment and runs
// the high chain as its client at chain priority 2; the low threads are clients in another
// process (this program as --low-client) at chain priority 1.
std::vector<Duration> measure_shm_server(Device& dev, const Options& o, const Works& w) {
  const std::string segment = shm_segment();
  AcceleratorLanes high(
      std::make_unique<runtime::SharedAccelerator>(shm_options(segment, true, o.realtime), dev.backend()));
  Worker worker(o.self, {"--low-client", segment, std::to_string(o.low_threads),
                         std::to_string(w.low_long.work.kernel), std::to_string(w.low_long.work.block)});
  if (!worker.ready()) throw std::runtime_error("the low client did not start");
  return measure(high, o, w.high, nullptr, o.samples);
}

std::vector<Duration> measure_row(Device& dev, const Options& o, const Spec& s, const Works& w,
                                  const std::vector<Duration>& high_alone) {
  const Job* low = &w.low(s.low);
  const int lanes = o.low_threads + 1;
  switch (s.path) {
    case Path::Alone: return high_alone;
    case Path::Direct: return measure(*dev.direct(false, lanes), o, w.high, low, o.samples);
    case Path::Greatest: return measure(*dev.direct(true, lanes), o, w.high, low, o.samples);
    case Path::Server: return measure(*server_lanes(dev, o, false, lanes), o, w.high, low, o.samples);
    case Path::BlockServer: return measure(*server_lanes(dev, o, true, lanes), o, w.high, low, o.samples);
    case Path::OtherProcess: return measure_other_process(dev, o, w);
    case Path::ShmServer: return measure_shm_server(dev, o, w);
  }
  return {};
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

}  // namespace

Result run(const Options& o) {
  for (const auto& r : o.rows)
    if (std::find(row_names().begin(), row_names().end(), r) == row_names().end())
      throw std::runtime_error("unknown row '" + r + "'");
  // With --realtime the device is made on a SCHED_FIFO thread, so that the GPU runtime's threads
  // made with its context (the completion callbacks of the servers' requests) inherit the
  // servers' priority; this thread then returns to SCHED_OTHER.
  realtime(o, kServerPriority);
  std::unique_ptr<Device> dev = o.device == "cuda" ? make_cuda_device() : make_emulated_device();
  if (o.realtime) {
    sched_param none{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &none);
  }
  Result res;
  res.options = o;
  res.device_name = dev->name();
  res.date = today();
  const Works w = works(o);
  for (const Spec& s : specs()) {
    if (!o.rows.empty() && std::find(o.rows.begin(), o.rows.end(), s.name) == o.rows.end()) continue;
    Row row{s.name, s.how, "", "", {}};
    if (s.path == Path::OtherProcess && !dev->other_process())
      row.skipped = "needs a GPU: the low work in another CUDA context";
    if (s.low == Low::Packed && !dev->packs())
      row.skipped = "needs a GPU: blocks placed beside others on a multiprocessor";
    res.rows.push_back(row);
  }
  for (int run = 0; run < o.runs; ++run) {
    std::vector<Duration> high_alone;
    const Calibration c = calibrate(*dev, o, w, &high_alone);
    res.calibration.push_back(c);
    for (Row& row : res.rows) {
      if (!row.skipped.empty()) continue;
      const Spec& s = *std::find_if(specs().begin(), specs().end(), [&](const Spec& x) { return row.name == x.name; });
      const Duration bound = bound_of(s, c, o.low_threads, &row.bound_terms);
      try {
        row.runs.push_back(stats(measure_row(*dev, o, s, w, high_alone), bound));
      } catch (const std::exception& e) {  // the row's failure is reported; the other rows go on
        row.skipped = std::string("failed in run ") + std::to_string(run + 1) + ": " + e.what();
        row.runs.clear();
      }
    }
  }
  return res;
}

int run_low_threads(const char* who, int threads, const std::function<bool(int)>& once) {
  std::atomic<bool> stop{false};
  std::atomic<int> status{0};
  std::mutex error_mutex;
  std::string error;
  std::vector<std::thread> t;
  for (int k = 0; k < threads; ++k)
    t.emplace_back([&, k] {
      try {
        while (!stop.load() && once(k)) {
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(error_mutex);
        if (status.exchange(1) == 0) error = e.what();
      }
    });
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (std::fread(&c, 1, 1, stdin) == 1) {
  }
  stop = true;
  for (auto& x : t) x.join();
  if (status.load() != 0) std::fprintf(stderr, "%s: %s\n", who, error.c_str());
  return status.load();
}

int low_client(const std::string& segment, int threads, Duration kernel, Duration block) {
  try {
    runtime::SharedAccelerator acc(shm_options(segment, false), std::make_unique<runtime::EmulatedDevice>());
    DeviceWork w;
    w.kernel = kernel;
    w.block = block;
    const int status = run_low_threads("gpu-bench low client", threads, [&](int k) {
      return acc.call(static_cast<std::uint32_t>(k + 1), 0, w, 1);  // false: the server went away
    });
    acc.stop();
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu-bench low client: %s\n", e.what());
    return 1;
  }
}

}  // namespace chainrt::bench_gpu
