// chainrt reference system: the Autoware reference system's 24 nodes as real ROS 2 nodes on
// the chainrt runtime (runtime/node.hpp, executor.hpp), built from a chainrt model (the model
// file is the topology and the executor configuration: executors, threads, policies,
// priorities, pinning). Node semantics follow shared/reference/autoware-reference-system.md:
//   Sensor       timer: a fresh sample with its own entry, no work
//   Transform    each input: work, publish the input history + own entry
//   Fusion       each input is cached; the input that completes the pair works, merges
//                input 0 then input 1 (first wins), appends its entry (dropped = gaps on all
//                inputs), resets the caches and publishes. LaME's split form: fusion_input
//                callbacks only cache, the fusion_trigger callback works once all are cached.
//   Cyclic       subscriptions cache the latest sample; the timer works, merges every
//                non-empty cache in input order, appends its entry and resets the caches
//   Intersection each input independently: work, its own sequence counter and output topic
//   Command      sink: records every received sample (sink dump) for the KPIs
// Work: the callback's WCET from the model as thread CPU time (runtime::burn_cpu), or
// upstream's prime count with a limit calibrated to cost the same CPU time.
// Subscriptions and publishers use the model's queue depths (1, Command 10).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/reference_system/sample.hpp"
#include "chainrt/reference_system/topology.hpp"
#include "chainrt/runtime/monitor.hpp"

namespace chainrt::reference_system {

enum class Workload { CpuTime, PrimeCount };

struct SystemOptions {
  Duration duration = 10'000'000'000;
  Duration warmup = 1'000'000'000;          // runtime chain statistics skip this
  Duration discovery_timeout = 30'000'000'000;
  Duration usage_period = 100'000'000;      // process CPU / memory sampling period
  std::string topic_prefix;                 // prepended to every topic (isolates runs)
  Workload workload = Workload::CpuTime;
  std::string dump_path;                    // sink records (see SinkRecord); "" = none
  bool thread_params = true;                // apply the model's pinning / SCHED_FIFO
  bool topology_only = false;               // build, discover, count, stop (no spinning)
  bool trace = false;                       // keep the executors' dispatch records
};

struct TraceRecord {         // one dispatched callback instance (runtime::DispatchRecord)
  std::string executor, callback;
  std::size_t thread = 0;
  Duration start = 0, finish = 0, deadline = 0, release = 0;
  Duration cpu = 0;  // thread CPU time used (what the run's accounting compares with the WCET)
  Duration slept_until = 0, woke = 0;  // the thread's late wake-up before it (0: none)
};

// One sample received by a sink, as written to the dump file (little-endian, 4112 bytes).
struct SinkRecord {
  std::uint32_t sink;       // index in SystemResult::sinks
  std::uint32_t reserved;
  std::int64_t received;    // CLOCK_MONOTONIC ns at the sink callback's start
  Sample sample;
};
static_assert(sizeof(SinkRecord) == 16 + kMessageSize);

struct TopicCount {
  std::string topic;
  std::size_t expected_publishers = 0, expected_subscribers = 0;  // from the model
  std::size_t publishers = 0, subscribers = 0;                    // counted by rcl (graph)
};

struct UsageSample {
  Duration time;      // since the executors started
  Duration cpu;       // process CPU time (user + system) since start of the process
  std::int64_t rss;   // resident set size, bytes
};

struct SystemResult {
  std::vector<std::pair<std::string, std::string>> nodes;  // name, type
  std::vector<std::string> sinks;
  std::vector<TopicCount> topics;
  runtime::RunReport runtime;                              // the executors' chain statistics
  std::vector<UsageSample> usage;
  std::map<std::string, std::int64_t> prime_limits;        // per WCET (prime-count workload)
  std::uint64_t records = 0, records_lost = 0;
  Duration started = 0, stopped = 0;                       // CLOCK_MONOTONIC ns
  std::vector<std::string> warnings;
  std::vector<TraceRecord> trace;                          // with SystemOptions::trace
};

// Build the system of every executor of the model in this process, wait for discovery, run
// for options.duration (or only count the graph with topology_only) and write the sink dump.
SystemResult run_reference_system(const Model& model, const SystemOptions& options);

// Prime-count limit whose count_primes() costs about `work` of thread CPU time here.
std::int64_t calibrate_prime_limit(Duration work);

std::string to_json(const SystemResult& r);

}  // namespace chainrt::reference_system
