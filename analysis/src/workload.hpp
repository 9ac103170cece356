// The analyses' view of a model (private to analysis/): callbacks as numbers (WCET, effective
// priority, executor, mutually exclusive group, thread mask), chains as "tasks" with their
// per-executor segments, hop costs and the work one instance triggers, and the supply of every
// executor thread. Built once per analysis run; the model is never modified.
//
// Workload that is not a declared chain is still analysed as interference:
//  - a timer that starts no chain becomes a pseudo-task (period = deadline = its period) that is
//    not reported;
//  - a subscription triggered by a chain callback but not on that chain (fan-out, or another
//    chain's callback that also listens to the topic) counts as extra work of the triggering
//    chain's every instance (it may run in parallel with the chain's path).
#pragma once

#include "chainrt/analysis/analysis.hpp"

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chainrt/analysis/supply.hpp"
#include "chainrt/model/model.hpp"

namespace chainrt::detail {

inline constexpr int kNoPriority = INT_MIN;  // sorts after every fixed priority (sched tier 1)
inline constexpr Duration kUnbounded = -1;   // no bound (a response, an end, a workload)

struct CbInfo {
  Duration wcet = 0;
  Duration bcet = 0;
  int prio = kNoPriority;     // effective priority, larger = more important
  int executor = 0;
  int mutex_group = -1;       // index into model.groups when mutually exclusive, else -1
  std::uint64_t threads = 0;  // mask of the executor's threads that may run it
};

struct Segment {
  int executor = 0;
  std::vector<int> cbs;       // consecutive path callbacks on this executor
  Duration intra_comm = 0;    // Σ hop costs between them (self-suspension)
  Duration comm_before = 0;   // cost of the hop that delivers the segment (0 for the first)
  int delayed_hops = 0;       // intra-segment hops with a non-zero cost
  // Linear segments: cost of the hop into cbs[j] (0 for j = 0). Every hop cost of every
  // analysis comes from the one HopCost of build_view (model_hop_cost: declared, fitted and
  // measured, the largest), so no analysis charges a hop less than the simulator may take.
  std::vector<Duration> hop_into;
  bool after_join = false;    // released by an implicit fusion's publication (join_wait.hpp)
  // A piece of one root-to-leaf path of a chain that branches across executors (Task::paths):
  // analysed like a linear segment, with the chain's callbacks off that path (`side`) as work
  // of the same instance that may run in parallel.
  bool path_piece = false;
  std::vector<int> side;
};

// A linear segment's intra_comm and delayed_hops from its hop_into (after it was split or cut).
void recompute_hops(Segment& s);

// The join of a chain at an implicit fusion set (facts.hpp) whose other inputs it does not
// contain (join_wait.hpp derives the wait and when it applies).
struct JoinInput {
  int callback = -1;          // another member of the set
  int task = -1;              // a declared linear chain through it (-1: none)
  int segment = -1;           // the segment of that chain that completes it
  Duration bpre = 0;          // lower bound: that chain's nominal release -> the member's completion
  Duration T = 0;             // that chain's period
};
struct JoinTerm {
  int member = -1;            // the chain's own member of the set (a callback)
  int first_after = -1;       // index of the chain's first segment after the join
  Duration bpre = 0;          // lower bound: nominal release -> the member's completion
  bool own_source_ok = false; // the source is a timer and no instance is lost before the member
  std::vector<JoinInput> inputs;
  std::string inputs_missing; // why some other input's arrivals are not bounded ("" when all are)
  std::vector<int> members;   // every member of the fusion set (callbacks), the chain's own included
};

struct Task {
  std::string name;
  int chain = -1;             // index into model.chains; -1 for a pseudo-task
  bool reported = false;
  bool has_deadline = true;   // pseudo-tasks have none (EDF puts them last)
  Duration T = 0, D = 0, src_jitter = 0;
  CriticalityClass cls = CriticalityClass::RealTime;
  std::vector<int> path;      // chain callbacks, topological order
  bool linear = true;
  std::vector<Segment> segments;
  // A chain that branches across executors: no `segments`, but the linear segments of each
  // root-to-leaf path. An instance ends when its last callback does; going back from it, each
  // callback was released by the completion of one predecessor (the one that published, or
  // completed a fusion set), so that causal path ran as a linear chain whose other callbacks
  // were parallel work: the response is at most the largest path bound.
  std::vector<std::vector<Segment>> paths;
  // The instance's work beyond its path (extras: fan-out) ends later than the path may: its
  // root-to-leaf paths through the trigger graph (`work_paths`, empty without extras) bound when
  // each callback of an instance's work is done (R_work, Windows::end in chain_rta.hpp), the
  // window other chains see it in. `work_paths_why` non-empty: no such bound (a topic cycle, or
  // too many paths): the extras are a tail that can only block.
  std::vector<std::vector<Segment>> work_paths;
  std::string work_paths_why;
  // The work paths of a chain that waits at a fusion node (`join`), split there: those that
  // leave the chain before its fusion input (no wait; join_work_before) and, of those through
  // it, the part after it (released by the fused publication; join_work_after).
  std::vector<std::vector<Segment>> join_work_before, join_work_after;
  std::vector<int> work;      // every callback one instance runs (path + extras)
  std::vector<int> extras;    // work not on the path
  int width = 1;              // callbacks of one instance that may run at the same time
  Duration bcrt_lower = 0;    // max over paths of Σ bcet
  Duration path_wcet = 0;     // Σ wcet of path callbacks
  // Non-empty when the chain's data can wait at an implicit fusion set (facts.hpp) for another
  // chain's input before its path goes on: the reason of an analysis that does not charge
  // that wait (cros-rt); the holistic driver charges it through `join` (join_wait.hpp).
  std::string join_wait;
  // When join_wait is set: the join term of the analyses that charge it (holistic driver,
  // join_wait.cpp), or `join_refused` saying why it cannot be charged for this chain.
  std::optional<JoinTerm> join;
  std::string join_refused;
  int shadow_of = -1;         // pseudo-task: the prefix (to the join) of later instances of that task
  // EDF keys (edf_keys in workload.cpp): the absolute deadline a pending callback of one
  // instance (release r) is queued with lies in [r + key_lo, r + key_hi]. key_lo < D when the
  // chain shares its timer with a chain of a shorter deadline; key_hi > D when messages of other
  // chains can queue ahead of the instance's at a callback it shares with them (a merge).
  Duration key_lo = 0, key_hi = 0;
  std::string edf_unkeyed;  // non-empty: a path callback can queue messages without a deadline
  // A fusion round (join_wait.hpp, fusion_rounds): set on the pseudo-task that stands for every
  // chain joining at one implicit fusion set whose inputs come from timers with guaranteed
  // phases (model TimerPhase::Guaranteed) of one period on one host. It is released at the
  // round's origin ρ (the earliest of those timers' grid releases of one index) and its work
  // is every such chain's; the chains themselves (`absorbed_by`) have no work of their own and
  // take their bounds from it.
  struct Round {
    int set = -1;                          // index into implicit_fusion_sets(model)
    std::string node;                      // the fusion node (for reasons)
    std::vector<int> chains;               // the absorbed tasks
    std::vector<Duration> delay;           // per absorbed chain: its nominal release after ρ
    std::vector<std::vector<int>> paths_of;  // per absorbed chain: its paths (indices into `paths`)
    struct Member {
      int callback = -1;
      Duration lower = 0;                  // lower bound from ρ to the member's start
      std::vector<std::pair<int, int>> ends;  // (path, segment) whose end is the member's completion
    };
    std::vector<Member> members;
    bool one_segment = false;              // all on one executor: analysed to its completion
  };
  std::optional<Round> round;
  int absorbed_by = -1;                    // a chain analysed as part of that round task
  // Its releases on the host's release grid (a source timer with a guaranteed phase, model
  // TimerPhase::Guaranteed): nominal releases at E + grid_offset + k·T on host grid_host
  // (-1: the phase is not guaranteed). Other segments see its interference by phase
  // (phased_workload, rta_terms.hpp).
  Duration grid_offset = 0;
  int grid_host = -1;
};

struct View {
  const Model* model = nullptr;
  std::vector<CbInfo> cbs;                       // index = model callback index
  std::vector<Task> tasks;                       // reported chains first, in model order
  std::vector<std::vector<Supply>> supply;       // [executor][thread]
  std::vector<std::vector<bool>> thread_be;      // [executor][thread]: LaME best-effort thread
  std::vector<std::vector<bool>> thread_shared;  // [executor][thread]: shares its core, no reservation
  // [executor][thread] of a shared thread pinned to ONE core (or unpinned: then every thread
  // of its host counts), when every other thread that may run there has no reservation and
  // belongs to another executor: those of them with a
  // SCHED_FIFO priority >= its own (a thread without one is below every FIFO thread; two such
  // threads count for each other) can preempt it or run ahead of it — PiCAS's executors
  // sharing a core. `foreign_ok` false: no such bound (several cores, reservations, threads of
  // its own executor on its core(s)).
  struct ThreadRef {
    int executor, thread;
  };
  std::vector<std::vector<std::vector<ThreadRef>>> foreign;
  std::vector<std::vector<bool>> foreign_ok;
  std::vector<int> host_of;                      // [executor] -> host index
};

using HopCost = std::function<Duration(const Hop&)>;
// Worst-case cost of a hop: the largest of the model's declared cost (fixed + per_kib·size),
// the least-squares fit of `communication.measurements` raised over every sample (CROS-RT's
// linear cost model, comm_fit.hpp) and the latency measured at the nearest measured size (a
// simulator or runtime that replays measurements may use that one). Never below what any of
// them could charge.
HopCost model_hop_cost(const Model& m);
View build_view(const Model& m, const HopCost& cost);
// Cost of the hop from callback `from` to callback `to` as placed (no declared chain hop): the
// placement's kind and the topic's size.
Duration placement_hop_cost(const Model& m, int from, int to, const HopCost& cost);

// Appends callback c, reached over a hop of cost hc, to the linear segments of one path: a new
// segment where the executor changes (hc is then the cost that delivers it), else the same one.
void append_path_piece(std::vector<Segment>& segs, int c, Duration hc, const std::vector<int>& side, const View& v);
// The root-to-leaf trigger paths from `root` inside `in_work` (a publisher and a subscriber of
// its topic, both in the work); nullopt with `why` on a topic cycle or more than 256 paths.
std::optional<std::vector<std::vector<int>>> trigger_paths(const Model& m, const std::set<int>& in_work, int root,
                                                           std::string* why);
// Fills every task's work paths (Task::work_paths); build_view calls it.
void work_paths(const Model& m, View& v, const HopCost& cost);
// Fills every task's EDF key range (Task::key_lo, key_hi, edf_unkeyed); build_view calls it.
void edf_keys(const Model& m, View& v);
// Task t's key_hi (edf_keys: its key_lo set): its deadline, raised where a path callback also
// takes messages another chain passes on to it — except from publishers `same_message` names
// (callback index: their messages are the ones t's own instance travels in, as a fusion set's
// members' one publication). Writes why there is no bound into `unkeyed` (when given).
Duration edf_key_hi(const Model& m, const Task& t, const std::function<bool(std::size_t)>& same_message,
                    std::string* unkeyed);

// (Effective priorities, thread FIFO priorities and thread masks: chainrt/model/facts.hpp,
// shared with sched/.)

// Work of a chain instance whose C units lie inside [release, release + R] and run on at most
// p threads at a time: the maximum amount in any window of length x (Bertogna & Cirinei's
// carry-in workload; for p > 1 Melani et al.'s form for parallel (DAG) tasks, ECRTS 2015):
//   W(x) = N·C + min(C, p·(x + R − ⌊C/p⌋ − N·T)),  N = ⌊(x + R − ⌊C/p⌋)/T⌋.
// p = 1 is the sequential form. A chain instance that fans out (extra work, branches) does
// more than x units in a window of x on several threads: the sequential form was beaten
// there (a shared-callback fork, soundness harness).
inline Duration carry_in_workload(Duration x, Duration C, Duration R, Duration T, Duration p = 1) {
  if (C <= 0 || x <= 0) return 0;
  if (p < 1) p = 1;
  Duration span = x + R - C / p;
  if (span < 0) return 0;
  Duration N = span / T;
  Duration rest = span - N * T;
  return N * C + (p * rest < C ? p * rest : C);
}

// Executions of callback c that can run (start, or continue from before) in any window of
// length x, whatever the response times — for work whose chain has no response bound. A
// timer: its releases in the window plus one pending and one running, ⌈x/T⌉ + 2 (rcl runs an
// overrun timer once). A subscription (or fusion callback): the messages in its queue at the
// window's start (queue_depth), one running, and every message published on its topic in the
// window — at most the executions of its publishers there, recursively. nullopt for services,
// clients and topic cycles.
std::optional<Duration> executions_in_window(const Model& m, std::size_t callback, Duration x);

// Number of instances of a task (period T, response bound R) that overlap a window of length
// x: releases in (t − R, t + x).
inline Duration overlapping_instances(Duration x, Duration R, Duration T) {
  if (x <= 0) return 0;
  return (x + R + T - 1) / T;
}

inline Duration ceil_div(Duration a, Duration b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// The result of an analysis from its per-task bounds: R[k] is task k's bound where failed[k] is
// empty, else failed[k] says why it has none. Only reported tasks (declared chains) appear.
AnalysisResult collect_result(const std::string& analysis, const std::vector<Task>& tasks,
                              const std::vector<Duration>& R, const std::vector<std::string>& failed);

}  // namespace chainrt::detail
