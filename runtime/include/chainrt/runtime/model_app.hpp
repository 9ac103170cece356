// chainrt runtime: run a chainrt model on real ROS 2. Builds, for the executors of one
// process, rcl nodes, callback groups, timers and subscriptions from the model (sched::make_setup
// numbers callbacks and derives priorities, affinities and threads exactly as the simulator
// does); each callback burns its WCET as thread CPU time and then publishes, on each topic it
// publishes, a std_msgs/UInt8MultiArray of the topic's size that carries the chain-instance
// stamp in its first 32 bytes (ChainHeader). Executors with different `process` values are
// meant to run as separate processes (one `chainrt-run --process P` each).
//
// Shared accelerators (PiCAS Sec. IV; model/accelerator.hpp): the model runs as its pieces
// (expand_accelerators), one SharedAccelerator per accelerator the process uses, on the emulated
// device (runtime/accelerator.hpp). A direct-mode call blocks the calling callback's thread
// inside the piece (first come, first served); a server-mode request is submitted at the
// requesting piece's effective priority when its CPU part is done, and the server's completion
// publishes the chain instance's stamp on the continuation's own intra-process topic
// ("<callback>#k"), whose subscription is the continuation piece: the instance travels with it
// as with any message, so the chain completes at its last piece. An accelerator is one device:
// the callbacks using it must run in one process (a model that splits them is refused).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/monitor.hpp"

namespace chainrt::runtime {

// The chain-instance stamp carried by the model's messages (little-endian, 32 bytes).
struct ChainHeader {
  std::uint32_t magic = 0x43525431;  // "CRT1"
  std::uint32_t chain = 0xffffffffu; // model chain index
  std::uint64_t instance = 0;
  std::int64_t release = 0;          // CLOCK_MONOTONIC ns (processes of one host share it)
  std::int64_t deadline = 0;
};
static_assert(sizeof(ChainHeader) == 32);

class Executor;
struct ExecutorOptions;

// Something that steers a run of run_model (LaME's controller, lame_controller.hpp). Every
// call comes from the thread running run_model, in this order.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Before executor `e` of the model is built: may change its options (threads, hooks).
  virtual void configure(const chainrt::Executor& e, ExecutorOptions& options) { (void)e, (void)options; }
  // After it was prepared, before it starts.
  virtual void prepared(const chainrt::Executor& e, Executor& executor) { (void)e, (void)executor; }
  virtual void started(Duration start_ns) { (void)start_ns; }  // every executor runs
  virtual void stopping() {}                                  // before the executors stop
};

// From `at` after the start on, every callback burns `factor` times its WCET (emulates a CPU
// frequency drop, LaME Sec. 5.3, on a machine that cannot change its clock).
struct WcetStep {
  Duration at = 0;
  double factor = 1.0;
};

struct ModelRunOptions {
  std::string process;               // run the executors of this process; "" = every executor
  std::optional<Policy> policy;      // overrides every executor's policy
  std::optional<int> threads;        // N plain threads per executor (affinity ignored)
  Duration duration = 10'000'000'000;
  Duration warmup = 500'000'000;     // instances released earlier are not measured
  Duration discovery_timeout = 30'000'000'000;
  std::string topic_prefix;          // prepended to every topic (isolates concurrent runs)
  std::string ns;                    // ROS namespace of the nodes ("": the model's own names)
  std::string run_id;                // carried by the monitoring messages
  Duration stats_period = 0;         // <topic_prefix>/chainrt/chain_stats period; 0 = not published
  bool thread_params = true;         // apply pinning / SCHED_FIFO / SCHED_DEADLINE
  std::optional<int> fifo;           // SCHED_FIFO priority for threads the model gives none
  std::string trace_path;            // write the dispatch trace (JSON lines) here when set
  std::vector<WcetStep> wcet_steps;  // execution-time scaling over time (in order of `at`)
  RunObserver* observer = nullptr;   // not owned
  // Deterministic runs (tests): the clock of the executors, the accelerators and the run's
  // start and end (default CLOCK_MONOTONIC); a callback's CPU work (default burn_cpu, thread
  // CPU time); each wait of the emulated device and each server overhead (default an absolute
  // sleep, burn_cpu). Called from executor and accelerator threads: must be thread-safe.
  std::function<Duration()> clock;
  std::function<void(Duration)> work;
  std::function<void(Duration)> device_wait;
  std::function<void(Duration)> server_overhead;
};

// Process name of an executor: its `process`, or its own name when it has none.
std::string process_of(const chainrt::Executor& e);
// Distinct processes of the model, in executor order.
std::vector<std::string> model_processes(const Model& m);

// Run the executors of options.process for options.duration; the merged report of those
// executors (chains keep their samples for cross-process merging). Stops early on SIGINT or
// SIGTERM (install_signal_handlers() is called).
RunReport run_model(const Model& model, const ModelRunOptions& options);

// Merge per-executor (or per-process) reports of the same chains: samples are concatenated,
// extremes and counts combined, p99 recomputed.
RunReport merge_reports(const std::vector<RunReport>& parts);

}  // namespace chainrt::runtime
