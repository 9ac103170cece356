// bench/gpu: a high-priority chain's GPU requests against lower-priority GPU work, measured
// beside chainrt's accelerator bound for each way of reaching the device (docs/accelerator.md,
// "The GPU benchmark"). ROS-free: the accelerator runtime (chainrt_accelerator), its CUDA backend
// (chainrt_cuda) and the analysis' accelerator terms (analysis/src/accelerator.hpp).
//
// The high chain issues a kernel of `high_kernel` over the whole GPU every `period`; three
// low threads issue kernels of `low_kernel` back to back, of one wave of long blocks or of
// `low_block` blocks. Rows: the high chain alone; long and short blocks with every stream at
// the same priority (direct access: each thread launches on its own stream); the same with the
// high chain on the greatest CUDA stream priority; the non-preemptive chain-priority server
// (SharedAccelerator, one request at a time); the block-preemptive server (several requests in
// flight on streams of their priorities); the low kernels in another process, directly (another
// CUDA context) or as clients of chainrt's server for several processes; and low kernels
// whose short blocks are packed several to a multiprocessor and end at spread times (as a real
// kernel's many small blocks do), at one priority and with the high stream at the greatest.
// Every duration the bounds use is measured alone in the same run first (the calibration);
// the alone row is the high chain's part of it (G_h is its worst).
//
// The device is the GPU (`cuda`) or the emulated device (`emulated`, the dry run CI runs):
// there the direct rows go through one SharedAccelerator — first come, first served for the
// same-priority rows, block-preemptive for the prioritized ones — and the other-process row
// is skipped. The logic, the calibration, the bounds and the tables are the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::bench_gpu {

struct Options {
  std::string device = "emulated";  // emulated or cuda
  int runs = 3;
  int samples = 150;   // high-chain requests measured per row and run
  int warmup = 5;      // requests dropped at the start of each row
  double scale = 1.0;  // every duration below times this (the dry run shrinks them)
  Duration high_kernel = 2'000'000, period = 20'000'000;
  Duration low_kernel = 10'000'000, low_block = 250'000;
  int low_threads = 3;
  bool realtime = false;  // SCHED_FIFO for the bench's threads (where permitted)
  std::vector<std::string> rows;  // empty: all
  std::string self;  // this program (the other-process row runs it as the low worker)
};

// Durations measured alone in a run: what the bounds use.
struct Calibration {
  Duration high = 0;            // G_h: the high kernel's worst response alone (the alone row)
  Duration low_long = 0;        // one low kernel of long blocks (one wave) alone
  Duration low_short = 0;       // one low kernel of short blocks alone
  Duration block_short = 0;     // one wave of short blocks alone (the longest chunk)
  Duration low_packed = 0;      // one low kernel of packed short blocks alone (a GPU only)
  Duration block_packed = 0;    // one wave of packed short blocks alone: its longest blocks
  Duration server_extra = 0;    // the request-level server's extra per request alone (ε)
  Duration block_server_extra = 0;  // the block-preemptive server's (ε)
  Duration shm_server_extra = 0;    // the shared-memory server's for a request of this process (ε)
};

struct RunStats {
  std::size_t n = 0;
  double mean_ms = 0, p99_ms = 0, max_ms = 0;
  double bound_ms = 0;  // this run's bound (its calibration)
};

struct Row {
  std::string name, how, bound_terms;
  std::string skipped;  // non-empty: why the row did not run
  std::vector<RunStats> runs;
};

struct Result {
  Options options;
  std::string device_name, date;
  std::vector<Calibration> calibration;  // per run
  std::vector<Row> rows;
};

// The rows' names in order (Options::rows selects among them).
const std::vector<std::string>& row_names();

// The bound of a row's model from chainrt's accelerator analysis (the terms of
// analysis/src/accelerator.hpp) with the durations of a run's calibration; `terms` says which
// terms of which model. Throws std::invalid_argument for an unknown row.
Duration row_bound(const std::string& row, const Calibration& c, int low_threads, std::string* terms);

// Runs the benchmark; throws std::runtime_error with the reason when the device cannot be used.
Result run(const Options& options);

// The tables: markdown (per row: mean, p99 and worst over the runs, spread, bound) and JSON.
std::string markdown(const Result& r);
std::string json(const Result& r);

// The low worker of the other-process row: `threads` threads launch kernels of `kernel` in
// blocks of `block` back to back on streams of the least priority until stdin closes; prints
// "ready" once they run. Returns the process's exit status.
int low_worker(int threads, Duration kernel, Duration block);

// The low client of the shm-server row: `threads` threads request kernels of `kernel` in blocks
// of `block` back to back at chain priority 1 from the shared-memory accelerator `segment`
// (served by the benchmark's process) until stdin closes; prints "ready" once they run.
int low_client(const std::string& segment, int threads, Duration kernel, Duration block);

}  // namespace chainrt::bench_gpu
