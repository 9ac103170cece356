// chainrt model: the one description of a ROS 2 system that analysis, simulation and the
// runtime all read. Owns the data types of hosts, executors (threads, thread classes,
// reservations), nodes, callback groups, topics, callbacks and processing chains.
//
// Concepts follow the papers in shared/papers:
//  - chains of callbacks τ_i = (V_i, Λ_i, T_i, D_i, π_i) with intra-process / same-host /
//    remote communication (CROS-RT, "Target system" and "Communication categories");
//  - callback groups (mutually exclusive, reentrant) and the multi-threaded executor with a
//    readyQueue (EDF ready-queue paper, Sec. III);
//  - chain criticality classes (RT with a level, BE), thread classes with SCHED_DEADLINE
//    budgets, callback affinity, Fusion input/trigger callbacks (LaME, Sec. 4.1 and 5);
//  - callback and executor priorities (PiCAS);
//  - shared accelerators (PiCAS Sec. IV): devices of a host that run one segment (copy-in,
//    kernel, copy-out) at a time, non-preemptively, reached directly (first come, first
//    served) or through a chain-priority server (Kim et al., JSA 2018); model/accelerator.hpp
//    says how callbacks with accelerator segments run.
//
// Units: every duration is an integer number of nanoseconds (Duration); sizes are bytes.
// Priorities: a larger number is more important (as SCHED_FIFO and the PiCAS paper).
// The format on disk is documented in docs/model.md; parsing lives in yaml_io.hpp.
#pragma once

#include <algorithm>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace chainrt {

using Duration = std::int64_t;  // nanoseconds
using Bytes = std::int64_t;

enum class CallbackKind {
  Timer,          // released periodically by the executor's clock
  Subscription,   // released by a message on its topic
  Service,        // a service server: released by a request, answers with a response
  Client,         // a client's continuation: released by the response to its node's request
  FusionInput,    // LaME: subscription that only caches its input
  FusionTrigger,  // LaME: subscription that works and publishes once every fused input is cached
};

enum class GroupType { MutuallyExclusive, Reentrant };

// What carries a chain hop: a message on a topic, a service request (caller -> server) or the
// server's response (server -> the caller's client callback).
enum class HopKind { Topic, Request, Response };

// CROS-RT's three disjoint communication categories Λ^I, Λ^L, Λ^R.
enum class CommKind { IntraProcess, SameHost, Remote };

// Executor policies, listed once in policies.def; the names are the same everywhere in chainrt
// (CLI, JSON, files). What each one does is its descriptor (sched/policy.hpp).
enum class Policy {
#define CHAINRT_POLICY(id, name) id,
#include "chainrt/model/policies.def"
#undef CHAINRT_POLICY
};
inline constexpr std::size_t kPolicyCount = 0
#define CHAINRT_POLICY(id, name) +1
#include "chainrt/model/policies.def"
#undef CHAINRT_POLICY
    ;

enum class CriticalityClass { RealTime, BestEffort };

// What a timer's `offset` is worth to the analyses. Free (the default): the timer starts at an
// arbitrary phase (the analyses assume none). Guaranteed: chainrt's executors arm it on the
// host's release grid — releases at epoch + offset + k·period on CLOCK_MONOTONIC, the epoch
// shared by every executor of the run (sched/timer.hpp, ReleaseGrid) — and every timer of the
// host starts at k = 0, so offsets between guaranteed timers of one host hold for the whole run,
// up to each timer's declared release `jitter`. Observed: measured on a run of unmodified nodes
// (`chainrt profile --write`); informative only, never used as guaranteed.
enum class TimerPhase { Free, Guaranteed, Observed };

// A timer period as an exact fraction of nanoseconds, num / den (den >= 1, reduced), for a
// period the model gives as a rate or a fraction ("30 Hz", "1/30 s"): the timer's k-th release
// after its first is at round(k·num/den) (half up) — rounded once per release, never
// accumulated, so 1/30 s and 1/5 s coincide at every 6th release of the first for ever.
// A whole period is den == 1. Contract: pure, noexcept, no allocation; k, t >= 0; the products
// are taken in 128 bits (no overflow for any period of the model's limits and k < 2^62).
struct ExactPeriod {
  Duration num = 0;
  std::int64_t den = 1;
  constexpr ExactPeriod() = default;
  constexpr ExactPeriod(Duration whole) noexcept : num(whole) {}  // NOLINT: a whole period converts
  constexpr ExactPeriod(Duration n, std::int64_t d) noexcept : num(n), den(d) {}
  constexpr Duration whole() const noexcept { return den > 0 ? num / den : 0; }  // floor(num/den)
  constexpr bool fractional() const noexcept { return den > 1; }
  // round(k·num/den): the k-th release after the first.
  constexpr Duration at(std::int64_t k) const noexcept {
    const __int128 twice = static_cast<__int128>(2) * k * num + den;
    return static_cast<Duration>(twice / (2 * static_cast<__int128>(den)));
  }
  // The smallest k >= 0 with at(k) >= t.
  constexpr std::int64_t first_at_or_after(Duration t) const noexcept {
    if (t <= 0 || num <= 0) return 0;
    // at(k) >= t  <=>  2k·num + den >= 2t·den  <=>  k >= (2t·den - den) / (2·num)
    const __int128 a = static_cast<__int128>(2) * t * den - den, b = static_cast<__int128>(2) * num;
    return static_cast<std::int64_t>((a + b - 1) / b);
  }
  bool operator==(const ExactPeriod&) const = default;
};

struct Reservation {  // SCHED_DEADLINE runtime Q every period P
  Duration budget = 0;
  Duration period = 0;
  bool operator==(const Reservation&) const = default;
};

// One point of a platform's blackout curve: on any one core of the host, in any window of
// length `window`, at most `max` time is taken by something above every thread of the model
// (hypervisor steal, a VM stall, interrupt and non-preemptible kernel work). Measured by
// chainrt's platform probe; the analyses that support it (analysis/supply.hpp, Blackout) charge
// it as a top-priority interferer on every core.
struct BlackoutPoint {
  Duration window = 0;
  Duration max = 0;
  bool operator==(const BlackoutPoint&) const = default;
};

// ---- shared accelerators (PiCAS Sec. IV) ---------------------------------------------------

// How the callbacks reach a shared accelerator.
enum class AcceleratorAccess {
  Direct,  // each callback calls the device itself: requests run first come, first served, and
           // the calling thread is blocked (no CPU) until its segment is done
  Server,  // through the chain-priority server (Kim et al. JSA 2018): the server thread runs the
           // requests one at a time in the order of their priority (a running one is never
           // preempted); the calling callback's thread is free meanwhile, and the callback goes
           // on in a continuation released when its segment is done
};

// What runs an accelerator's segments under `chainrt run` and the runtime's accelerators:
// the emulated device (each part a wait of its duration; no GPU needed) or a CUDA GPU
// (runtime/cuda_device.hpp: the segments' copies and kernels on CUDA streams whose priorities
// follow the requests' chain priorities; only in builds with a CUDA toolkit).
enum class AcceleratorDevice { Emulated, Cuda };

// A device of a host (a GPU, a DLA, an FPGA) that executes one segment at a time.
struct Accelerator {
  std::string name;                   // unique among the host's accelerators
  AcceleratorAccess access = AcceleratorAccess::Direct;
  // Server mode: the server thread (SCHED_FIFO priority, pinning) and its CPU time per request
  // (receiving it, launching the segment, sending the result: Kim et al.'s overhead).
  std::optional<int> server_priority;
  std::vector<int> server_cores;      // empty = any core of the host
  Duration server_overhead = 0;
  // Server mode, `preemption: block`: the device (a GPU whose streams carry the requests'
  // priorities; GCAPS, Wang et al., ECRTS 2024) switches to a more urgent request after the
  // thread block in progress, not after the whole segment: a segment runs as non-preemptive
  // chunks — its copy-in, its kernel's blocks of its `block` duration, its copy-out — and a
  // strictly more urgent queued request takes the device between two chunks (the preempted one
  // resumes later, without a second overhead). false (`preemption: request`): a request in
  // service is never preempted.
  bool block_preemption = false;
  AcceleratorDevice device = AcceleratorDevice::Emulated;
  // `device: cuda`: the GPU's index, and how a request's effective chain priority maps to a
  // CUDA stream priority (cuda_stream_level, model/accelerator.hpp): `stream_priorities` are
  // chain-priority thresholds, descending — a request at or above the first gets the greatest
  // stream priority, at or above the second the next one, ...; empty: one threshold per
  // distinct effective priority of the callbacks that use the accelerator.
  int cuda_device = 0;
  std::vector<int> stream_priorities;
  bool operator==(const Accelerator&) const = default;
};

struct Host {
  std::string name;
  int cores = 1;
  std::vector<BlackoutPoint> blackout;  // empty: the CPU is always there (the papers' model)
  std::vector<Accelerator> accelerators{};
  const Accelerator* accelerator(const std::string& n) const {
    for (const auto& a : accelerators)
      if (a.name == n) return &a;
    return nullptr;
  }
  bool operator==(const Host&) const = default;
};

// One use of an accelerator by a callback: after `after` of the callback's CPU time it hands the
// device a segment — copy-in, kernel, copy-out, run back to back without preemption — and
// waits for it (self-suspends) before its CPU part goes on.
struct AcceleratorSegment {
  std::string accelerator;            // an accelerator of the callback's host
  Duration after = 0;                 // CPU time of the callback before the request (<= wcet)
  Duration copy_in = 0, kernel = 0, copy_out = 0;             // worst cases
  std::optional<Duration> copy_in_bcet, kernel_bcet, copy_out_bcet;  // best cases (default: worst)
  // On a `preemption: block` accelerator: the longest thread block of the kernel (the longest
  // the device runs it before it can switch; default: the whole kernel).
  std::optional<Duration> block;
  Duration wcet() const { return copy_in + kernel + copy_out; }
  // The longest non-preemptive chunk under block preemption: copy-in, one block, copy-out.
  Duration longest_chunk() const { return std::max({copy_in, std::min(block.value_or(kernel), kernel), copy_out}); }
  Duration bcet() const {
    return copy_in_bcet.value_or(copy_in) + kernel_bcet.value_or(kernel) + copy_out_bcet.value_or(copy_out);
  }
  bool operator==(const AcceleratorSegment&) const = default;
};

// LaME thread class: one thread per listed core, identical scheduling parameters.
struct ThreadClass {
  std::string name;
  CriticalityClass kind = CriticalityClass::RealTime;  // RT threads pick the highest priority,
                                                        // BE threads the first eligible callback
  std::vector<int> cores;
  std::optional<int> fifo_priority;
  std::optional<Reservation> reservation;
  bool operator==(const ThreadClass&) const = default;
};

struct Thread {
  std::string name;
  std::vector<int> cores;             // CPU pinning; empty = any core of the host
  std::optional<int> fifo_priority;   // SCHED_FIFO priority 1..99
  std::optional<Reservation> reservation;
  std::string thread_class;           // set when the thread was created by a thread class
  bool operator==(const Thread&) const = default;
};

struct Executor {
  std::string name;
  std::string host;
  std::string process;                // executors sharing a process talk intra-process
  Policy policy = Policy::RosDefault;
  std::optional<int> priority;        // PiCAS executor priority (larger = more important); its
                                      // threads' SCHED_FIFO default (thread_fifo_priority, facts.hpp)
  std::vector<Thread> threads;        // explicit threads followed by thread-class threads
  std::vector<ThreadClass> thread_classes;
  // The executor thread's own time per dispatched callback beyond the callback's WCET (taking
  // the ready-queue pop, rcl_take, the hand-over, the return to the wait). Every analysis and
  // the simulator charge it through one rule (facts.hpp, charged_wcet); `chainrt profile`
  // measures it from the dispatch records.
  Duration dispatch_overhead = 0;
  bool operator==(const Executor&) const = default;
};

struct Node {
  std::string name;
  std::string executor;
  bool operator==(const Node&) const = default;
};

struct CallbackGroup {
  std::string name;
  GroupType type = GroupType::MutuallyExclusive;
  std::string node;
  bool operator==(const CallbackGroup&) const = default;
};

struct Topic {
  std::string name;
  Bytes size = 64;                    // message size in bytes
  // Set only on the topics the loader derives for a service (services.hpp, lower_services):
  // the service whose requests or responses it carries. Never written to a file.
  std::string service;
  bool operator==(const Topic&) const = default;
};

// A ROS 2 service: a request from a caller to the server, a response back to the caller's node.
struct Service {
  std::string name;
  Bytes request_size = 64;            // bytes of one request
  Bytes response_size = 64;           // bytes of one response
  bool operator==(const Service&) const = default;
};

struct Callback {
  std::string name;
  CallbackKind kind = CallbackKind::Subscription;
  std::string node;
  std::string group;                  // never empty after loading: "<node>/default" otherwise
  Duration wcet = 0;
  std::optional<Duration> bcet;       // best case; defaults to wcet where an analysis needs one
  std::optional<int> priority;        // fixed callback priority (PiCAS / fp / mixed)
  std::vector<std::string> affinity;  // thread or thread-class names; empty = any thread
  // timers
  Duration period = 0;                // floor of exact_period when that is set
  // The period given as a rate or a fraction ("30 Hz", "1/30 s") when it is not a whole number
  // of ns: the release grid releases the timer by it (ExactPeriod) and `period` is its floor.
  std::optional<ExactPeriod> exact_period;
  Duration offset = 0;
  Duration jitter = 0;
  TimerPhase phase = TimerPhase::Free;
  // How far a real timer's period may be from `period` for an executor to bind it to this
  // callback; nullopt: 1 % of the period (docs/model.md, "Binding real callbacks").
  std::optional<Duration> period_tolerance;
  // subscriptions (and fusion callbacks); for services and clients the derived request or
  // response topic (lower_services), never written to a file
  std::string topic;
  // services and clients: the service they serve or whose responses they take
  std::string service;
  // the services it sends one request each to when it completes
  std::vector<std::string> calls;
  int queue_depth = 1;
  std::vector<std::string> fuses;     // FusionTrigger: the FusionInput callbacks it waits for
  // what it publishes when it completes
  std::vector<std::string> publishes;
  // accelerator use, in the order of `after` (timers and subscriptions only)
  std::vector<AcceleratorSegment> accelerator_segments{};

  Duration best_case() const { return bcet.value_or(wcet); }
  bool is_timer() const { return kind == CallbackKind::Timer; }
  // The period the release grid releases this timer by.
  ExactPeriod grid_period() const { return exact_period.value_or(ExactPeriod{period}); }
  bool operator==(const Callback&) const = default;
};

// One edge Λ of a chain: the message from `from` to `to` on `topic`.
struct Hop {
  std::string from;
  std::string to;
  std::string topic;
  CommKind comm = CommKind::IntraProcess;  // derived from placement unless the file overrides it
  Bytes message_size = 0;
  HopKind kind = HopKind::Topic;           // a request/response hop: `topic` is the service
  bool operator==(const Hop&) const = default;
};

struct Chain {
  std::string name;
  std::vector<std::string> callbacks;  // distinct callbacks, topological order, [0] is the source
  std::vector<Hop> hops;               // a path for linear chains, a DAG for branching ones
  Duration period = 0;                 // T_i
  Duration deadline = 0;               // D_i
  CriticalityClass criticality_class = CriticalityClass::RealTime;
  int criticality = 0;                 // RT level; larger = more critical
  std::optional<int> priority;         // chain priority π_i; larger = more important

  bool is_linear() const;
  // Root-to-leaf paths of the chain graph (one path for a linear chain).
  std::vector<std::vector<std::string>> paths() const;
  bool operator==(const Chain&) const = default;
};

// Linear per-message cost model c(size) = fixed + per_kib * size / 1024 (CROS-RT: each term
// of C^I, C^L, C^R is proportional to the message size and fitted by linear regression).
struct CommCost {
  Duration fixed = 0;
  Duration per_kib = 0;
  Duration cost(Bytes size) const { return fixed + (per_kib * size + 1023) / 1024; }
  bool operator==(const CommCost&) const = default;
};

struct CommMeasurement {  // one measured latency of a message of `size` bytes
  CommKind kind = CommKind::SameHost;
  Bytes size = 0;
  Duration latency = 0;
  bool operator==(const CommMeasurement&) const = default;
};

struct Communication {
  CommCost intra_process;
  CommCost same_host;
  CommCost remote;
  std::vector<CommMeasurement> measurements;
  const CommCost& cost_of(CommKind k) const {
    return k == CommKind::IntraProcess ? intra_process : k == CommKind::SameHost ? same_host : remote;
  }
  bool operator==(const Communication&) const = default;
};

class Model {
 public:
  std::string name;
  bool constrained_deadlines = true;   // reject D > T for real-time chains when set
  std::vector<Host> hosts;
  std::vector<Executor> executors;
  std::vector<Node> nodes;
  std::vector<CallbackGroup> groups;
  std::vector<Topic> topics;          // the file's topics, then the derived ones of services
  std::vector<Service> services;
  std::vector<Callback> callbacks;
  std::vector<Chain> chains;
  Communication communication;

  // Name lookups (built by reindex(), which the loader calls; call it after editing names).
  void reindex();
  const Callback& callback(const std::string& name) const;
  const Chain& chain(const std::string& name) const;
  const Node& node(const std::string& name) const;
  const Executor& executor(const std::string& name) const;
  const CallbackGroup& group(const std::string& name) const;
  const Topic* topic(const std::string& name) const;
  const Service* service(const std::string& name) const;
  const Host* host(const std::string& name) const;
  std::size_t callback_index(const std::string& name) const;
  std::size_t executor_index(const std::string& name) const;
  const Executor& executor_of(const Callback& cb) const { return executor(node(cb.node).executor); }

  // Subscribers of a topic, in registration (file) order (for a derived service topic: the
  // server, or the clients of one node).
  std::vector<std::size_t> subscribers(const std::string& topic) const;
  // The callback that serves `service` (nullopt: none).
  std::optional<std::size_t> server_of(const std::string& service) const;
  // The client callback of `service` in `node` that takes the responses (nullopt: none).
  std::optional<std::size_t> client_of(const std::string& node, const std::string& service) const;
  // Communication kind between two callbacks from their placement (CROS-RT categories).
  CommKind placement_comm(const Callback& from, const Callback& to) const;

  // U_i = Σ_j e_{i,j} / T_i (WCET sum of the chain's distinct callbacks over its period).
  double chain_utilisation(const Chain& c) const;
  Duration chain_wcet(const Chain& c) const;  // E_i

  bool operator==(const Model& o) const;

 private:
  std::unordered_map<std::string, std::size_t> callback_ix_, chain_ix_, node_ix_, executor_ix_,
      group_ix_, topic_ix_, service_ix_, host_ix_;
};

const char* to_string(CallbackKind k);
const char* to_string(GroupType t);
const char* to_string(CommKind k);
const char* to_string(Policy p);
const char* to_string(CriticalityClass c);
const char* to_string(AcceleratorAccess a);
const char* to_string(AcceleratorDevice d);
const char* to_string(TimerPhase p);
const char* to_string(HopKind k);
std::optional<CallbackKind> callback_kind_from(const std::string& s);
std::optional<GroupType> group_type_from(const std::string& s);
std::optional<CommKind> comm_kind_from(const std::string& s);
std::optional<Policy> policy_from(const std::string& s);
std::optional<CriticalityClass> criticality_class_from(const std::string& s);
std::optional<AcceleratorAccess> accelerator_access_from(const std::string& s);
std::optional<AcceleratorDevice> accelerator_device_from(const std::string& s);
std::optional<TimerPhase> timer_phase_from(const std::string& s);

}  // namespace chainrt
