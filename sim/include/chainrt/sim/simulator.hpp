// chainrt sim: deterministic discrete-event simulator of ROS 2 executors running a chainrt
// model. It drives the shared scheduling code (sched/: Dispatcher, TimerClock, make_setup) and
// adds what is executor SEMANTICS rather than policy:
//  - ros-default: the readySet of the default executors (EDF ready-queue paper Sec. II/III):
//    refilled only at polling points (when empty or when nothing in it is eligible), one
//    instance per callback per polling window, timer ≻ subscription ≻ service ≻ client then
//    registration order; at a polling point the set is CLEARED and refilled only with the
//    pending callbacks whose group can be taken now (the multi-threaded clearing behaviour of
//    Case Study 2 / Fig. 5, and the starvation it can cause, Teper et al. EMSOFT 2024).
//    With one thread this is the single-threaded executor. Among ready callbacks of one kind:
//    registration order (the published models), or rclcpp >= 28's unspecified wait-set order
//    drawn from SimOptions::wait_set_seed (sched::wait_set_order). The queue and admission rule
//    (when released work enters the queue) are sched::Dispatcher's, every executor's.
//  - every other policy: the readyQueue executor (Sec. IV-A): the queue is refreshed
//    before every selection (pending callbacks enter at once), one queued instance per
//    callback, Algorithm 1 selection; lame adds affinity masks and RT/BE thread classes
//    (LaME Sec. 4.1), picas fixed priorities and executor priorities (PiCAS Sec. II).
//  - timers: periodic with offset and jitter, the rcl overrun rule (sched::TimerClock) of the
//    ROS 2 line modelled (SimOptions::timer_rule: Jazzy and Kilted by default, or Humble/Iron);
//    subscriptions: a FIFO of queue_depth messages, the oldest overwritten (a drop);
//    fusion_input caches, fusion_trigger works once every fused input has been cached once.
//  - threads on cores: a thread is pinned to its first listed core (unpinned threads are spread
//    round-robin over the host's cores); per core, preemptive: SCHED_DEADLINE-like
//    reservations (budget Q replenished every P, EDF among them) before SCHED_FIFO threads
//    (by priority; an executor's `priority` is its threads' default) before other threads.
//  - accelerators (PiCAS Sec. IV; model/accelerator.hpp): a device runs one segment at a time,
//    never preempted. Direct access: first come first served, the calling thread blocked (no
//    CPU) until its segment is done. Server access: the callback's piece returns, the server
//    thread (its priority, its core) spends its overhead and the device runs the most urgent
//    request (effective priority, then arrival); the continuation is released when it is done.
//    Device times: copy-in + kernel + copy-out, each drawn like a callback's execution time.
//  - chains: a chain instance is released when its first callback is released and finishes
//    when every leaf of the chain has completed for it (the last callback of a linear chain; a
//    branching chain's fork-join end, as the runtime's monitor); messages carry the instance's release, and the
//    EDF deadline d = a + D (Sec. IV-B) travels with them. Communication delay per hop from
//    the model's CommCost of the hop kind (CROS-RT), or sampled from its measurements.
// Zero overheads: selection, polling and publishing take no time. Time is integer ns.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/sched/ready_queue.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::sim {

// ---- A controller beside the executors (LaME's adaptive controller: lame/sim_control.hpp) ----
// What the executor's monitoring measured of one callback since the previous activation: its
// largest execution times (the CPU time each instance ran, preemption excluded: what
// CLOCK_THREAD_CPUTIME_ID measures on the runtime) and how many instances ran.
struct ExecSamples {
  std::array<Duration, 4> largest{};  // descending; 0: fewer instances ran
  std::uint64_t count = 0;
};
// A change applied to a running executor at once, as the runtime's Executor::reconfigure and
// sched_setattr do: queued and running instances carry over, none is lost.
struct Reconfiguration {
  std::size_t executor = 0;                              // index in model.executors
  std::vector<std::optional<Reservation>> reservations;  // by the executor's thread; empty: unchanged
  std::vector<sched::CallbackSpec> specs;                // by callback id (sched::make_setup order); empty: unchanged
  std::vector<sched::GroupSpec> groups;                  // with `specs`
};
class Control {
 public:
  virtual ~Control() = default;
  // The next activation at or after `now` (< 0: none); `missed`: a chain it watches completed
  // after its deadline since the last activation.
  virtual Duration next_activation(Duration now, bool missed) const = 0;
  virtual bool watches(std::size_t chain) const = 0;  // model chain index
  // An activation at `now` with the samples since the previous one (by model callback index);
  // the changes to apply now.
  virtual std::vector<Reconfiguration> activate(Duration now, bool missed, const std::vector<ExecSamples>& samples) = 0;
};

enum class ExecTime {
  Wcet,     // every instance runs its WCET
  Bcet,     // every instance runs its BCET
  Uniform,  // uniform in [BCET, WCET] (seeded)
  Mix,      // BCET or WCET, each with probability 1/2 (seeded): adversarial mixes
};
enum class CommDelay { Fixed, Sampled };

struct SimOptions {
  Duration duration = 10'000'000'000;  // 10 s
  std::uint64_t seed = 1;
  std::optional<Policy> policy;        // overrides every executor's policy
  std::optional<int> threads;          // overrides every executor's thread list by N threads
  ExecTime exec = ExecTime::Wcet;
  CommDelay comm = CommDelay::Fixed;
  bool random_jitter = true;           // timer release = nominal + U[0, jitter]; else + jitter
  std::map<std::string, Duration> offsets;  // timer name -> offset overriding the model's
  // timer name -> a constant release delay in [0, its jitter] for every release, instead of the
  // jitter draws (adversarial jitter: the soundness harness climbs over these)
  std::map<std::string, Duration> release_delays;
  // A scripted run (a schedule's witness, e.g. chainrt::sag_witnesses): callback name -> the
  // execution time of its k-th execution (k = 0, 1, ...; clamped to [BCET, WCET], a fusion
  // input's cache-only run included; later executions as `exec`), and timer name -> the delay
  // of its k-th release after its grid instant (clamped to [0, jitter]; later releases as
  // without it).
  std::map<std::string, std::vector<Duration>> exec_script, release_script;
  // ros-default executors: draw the order among ready callbacks of one kind as rclcpp >= 28
  // has it (a fixed, unspecified permutation; sched::wait_set_order) from this seed; unset:
  // registration order (the published models of the default executor).
  std::optional<std::uint64_t> wait_set_seed;
  // rcl's timer overrun rule: Rcl9 models Jazzy and Kilted (rcl 9, 10), Rcl5 Humble and Iron
  // (sched/include/chainrt/sched/timer.hpp).
  sched::TimerRule timer_rule = sched::TimerRule::Rcl9;
  // Unpinned threads as the kernel runs them: on a host whose threads are all unpinned, at every
  // instant the ready threads of the highest class and priority run, one per core, a running
  // thread keeping its core against an equal one (global fixed-priority scheduling; migration
  // costs nothing). Off: each thread stays on the core of model/facts.hpp's simulated_core, the
  // placement every analysis reads. Hosts with a pinned thread stay so placed either way.
  bool global_threads = false;
  bool trace = false;                  // record every execution (start/finish per thread)
  std::size_t trace_limit = 2'000'000;
  bool keep_samples = true;            // keep response times (for p99 and histograms)
  // A controller activated while the simulation runs (not owned; its state changes). Its
  // decisions depend only on the simulated measurements, so a run stays deterministic.
  Control* control = nullptr;
  // From `scale_at` on, every execution time drawn is x scale_num / scale_den (a CPU frequency
  // change, as chainrt-run's --scale-wcet); < 0: never.
  Duration scale_at = -1;
  std::int64_t scale_num = 1, scale_den = 1;
};

struct ChainStats {
  std::string name;
  Duration period = 0;
  Duration deadline = 0;
  Duration wcrt = 0;                   // observed maximum response time (0 if no instance)
  Duration bcrt = 0;                   // observed minimum
  double mean = 0;
  Duration p99 = 0;
  std::int64_t instances = 0;          // completed chain instances
  std::int64_t released = 0;           // chain instances released at the first callback
  std::int64_t deadline_misses = 0;    // completed late, or unfinished and older than D at the end
  std::int64_t drops = 0;              // instances lost: message overwritten, timer overrun skip
  std::vector<Duration> samples;       // response times in completion order (keep_samples)
  std::vector<Duration> releases;      // ... and the release of each of those instances
};

struct CallbackStats {
  std::string name;
  std::int64_t executions = 0;
  std::int64_t drops = 0;              // messages overwritten in its queue / timer releases skipped
  Duration max_latency = 0;            // release of the instance -> its completion
};

struct ThreadInfo {
  std::string executor;
  std::string name;
  std::string host;
  int core = 0;
};

struct TraceEntry {
  std::uint32_t thread = 0;            // index into SimResult::threads
  std::uint32_t callback = 0;          // index into model.callbacks
  Duration release = 0;                // when the instance became ready
  Duration start = 0;
  Duration finish = 0;
};

// One segment on a shared accelerator (PiCAS Sec. IV): who issued it, when, and when the device
// ran it.
struct DeviceTraceEntry {
  std::uint32_t accelerator = 0;       // index into SimResult::accelerators
  std::uint32_t callback = 0;          // the piece that issued it (as TraceEntry::callback)
  std::uint32_t segment = 0;           // index in the callback's accelerator_segments
  Duration issued = 0;
  Duration start = 0;                  // the device starts it (after the server's overhead)
  Duration finish = 0;
};

struct SimResult {
  Duration duration = 0;
  std::uint64_t executions = 0;        // callback instances completed
  std::uint64_t events = 0;
  std::vector<ChainStats> chains;      // model order
  std::vector<CallbackStats> callbacks;  // model order
  std::vector<ThreadInfo> threads;
  std::vector<TraceEntry> trace;
  // Names of the callbacks TraceEntry::callback indexes when the model uses accelerators: its
  // callbacks and the continuations of callbacks with server-mode segments ("<name>#k",
  // model/accelerator.hpp). Empty: the model's callbacks.
  std::vector<std::string> trace_callbacks;
  std::vector<std::string> accelerators;   // "host/name", every host's accelerators in order
  std::vector<DeviceTraceEntry> device_trace;
  bool trace_truncated = false;
  const ChainStats* chain(const std::string& name) const {
    for (const auto& c : chains)
      if (c.name == name) return &c;
    return nullptr;
  }
};

// Runs the simulation. Throws std::invalid_argument when the model cannot be simulated (e.g.
// a callback on more chains than a message can carry, affinity naming no thread).
SimResult simulate(const Model& model, const SimOptions& options);

// {"chains": {NAME: {period_ns, deadline_ns, wcrt_ns, bcrt_ns, mean_ns, p99_ns, instances,
//  deadline_misses, drops}}, "callbacks": {NAME: {executions, drops, max_latency_ns}},
//  "executions": N, "duration_ns": D}
std::string result_to_json(const SimResult& result);
// {"threads": [{executor, name, host, core}], "callbacks": [names],
//  "events": [[thread, callback, release_ns, start_ns, finish_ns], ...], "truncated": bool,
//  "accelerators": [names], "device": [[accelerator, callback, segment, issued_ns, start_ns, finish_ns], ...]}
std::string trace_to_json(const Model& model, const SimResult& result);

}  // namespace chainrt::sim
