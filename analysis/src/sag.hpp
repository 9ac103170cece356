// Schedule-abstraction graph (SAG) response-time analysis of a finite set of non-preemptive jobs
// under job-level fixed-priority (JLFP) scheduling on one processor, with precedence
// constraints and delays (private to analysis/; sag_model.cpp builds the jobs of a chainrt
// model, sag_analysis.cpp registers the analysis).
//
// Sources: Nasri & Brandenburg, "An Exact and Sustainable Analysis of Non-Preemptive
// Scheduling", RTSS 2017 (Sec. III-IV: the graph, a state's availability interval A(v), the
// earliest and latest start times EST/LST, t_wc and t_high, the expansion and merge rules);
// Nasri, Nelissen & Brandenburg, ECRTS 2019 (precedence constraints between jobs with a
// delay interval on each edge; a state keeps the finish intervals of the dispatched jobs whose
// successors are not all dispatched).
//
// Deviations, with their reasons:
//  - A job counts as certainly ready (t_wc, t_high) only once every predecessor has finished
//    (plus the largest delay): a job whose predecessor is not dispatched is not ready whatever
//    its release says. Without this the latest start times of lower-priority jobs are cut too
//    early and the bound is unsound with precedence constraints.
//  - A job released by the job that frees the processor over an edge without delay (a message
//    published inside the callback, queued before the executor selects again) is ready at the
//    very instant the processor frees, whenever in A(v) that is: no lower-priority job is
//    dispatched before it. With the intervals alone (its r^max = A^max) a lower-priority job
//    could start in [A^min, A^max), a schedule that cannot happen. On one core the same holds for
//    a predecessor dispatched before that job: it finished before that job started, at least
//    C^min before the processor frees, so over an edge whose delay is at most that C^min its
//    successor is ready by then. And every job dispatched before a job finished by that job's
//    LST: the kept finish intervals are cut there (the paper keeps them as dispatched).
//  - Two states merge (RTSS 2017 Sec. IV-C) when they dispatched the same jobs and their
//    availability intervals and every kept finish interval overlap; the merged state keeps the
//    hulls. Without precedence this is the paper's rule (exact); with it, the hull of the finish
//    intervals may pair an early finish of one predecessor with a late one of another (sound,
//    possibly pessimistic). On one core, states in which some job is ready when the processor frees
//    (the rule above) merge only with the same last job: the merged state would forget which job
//    frees the processor, and with it the rule (measured: without it the bounds of the
//    harness's offsets/fusion family under edf stay up to 1.8× the simulated worst case).
//
// Time is integer nanoseconds. Not thread-safe per call state; explore() is reentrant.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::detail::sag {

struct Interval {
  Duration lo = 0, hi = 0;
};

// A job's priority: lexicographic, smaller first (the executor's ready-queue key, then the
// instance order of one callback's jobs; `tie` orders the jobs of one callback and release that
// may not exist, sag_model.hpp: interchangeable, any fixed order covers the executor's).
struct Priority {
  std::int64_t tier = 0, value = 0, rank = 0, id = 0, seq = 0, tie = 0;
  auto operator<=>(const Priority&) const = default;
};

// An edge from a predecessor job: the job becomes ready `delay` after the predecessor finishes.
struct Pred {
  std::size_t job = 0;
  Interval delay;
};

struct Job {
  Interval release;         // [r^min, r^max]: arrival window (release jitter)
  Interval cost;            // [C^min, C^max]
  Priority priority;
  std::vector<Pred> preds;  // every predecessor must finish first (none: released by `release` alone)
  int group = -1;           // on several cores: no two jobs of one group (>= 0) run at once
  // Released when a job of another thread finishes: a selection at that very instant may not
  // see it yet (an executor handles the completions of one instant one at a time), so a
  // lower-priority job may still start at its latest release (t_high counts it 1 ns later).
  bool seen_late = false;
};

struct Limits {
  std::size_t max_states = 2'000'000;  // states built over the whole exploration
  double max_seconds = 10.0;           // wall-clock budget of one exploration (a safety net: the state limit decides first on any system that fits in memory)
};

struct Result {
  bool complete = false;       // false: a limit was reached (`why`), the intervals are partial
  std::string why;
  std::vector<Interval> start;   // per job: [earliest, latest] start over every schedule
  std::vector<Interval> finish;  // per job: [earliest, latest] finish over every schedule
  std::size_t states = 0;        // states built (after merging)
  std::size_t edges = 0;         // dispatches explored
};

// Threads of a higher SCHED_FIFO priority on the analysed thread's core: they preempt it at
// once, and its executor stays non-preemptive within (a callback, once started, runs to its end
// between their jobs). Their jobs as windows (from their own graphs): a job above may run only
// within [start.lo, finish.hi] and needs at most `cost` of the processor.
//
// Deviation from the papers (they analyse one non-preemptive processor): the analysed thread's
// jobs are scheduled as on a processor of its own. A selection it would make at t (RTSS 2017's
// t_wc) may wait while a thread above runs: it happens at t (the simulator's thread selects
// then; a real one may, in a gap of theirs) or as late as the first instant after t at which
// they are certainly idle (`idle_by`), and sees every job released by the instant it happens
// (t_high is unchanged); a job selected at s finishes by the smallest t with t = s + C + the
// work the jobs above may do in [s, t) (`finish_by`: a job above may run there if it starts
// before t and finishes after s, and does at most its cost and at most finish.hi - s there).
// Every run's selection instants and finishes then lie in the graph's intervals, so it holds
// every schedule of the job set; the lower ends are unchanged (sound: a job above may not run).
class Preemption {
 public:
  struct Above {
    Interval start, finish;
    Duration cost = 0;
    // kNoGroup, or the jobs released together (over edges without delay) by one job of the
    // analysed thread or of a thread below it on the core. Such a job is released only when
    // that job finishes: the analysed thread then has no job pending or running (it ran that
    // job, or its thread ran only because the analysed one was idle), and none while it has
    // one, so it counts in [from, to) only if it may have been released by `from` (start.lo
    // <= from). At that release every thread above the analysed one is idle, so the group runs
    // at once, before the next such release: of all groups, the work of one counts (the
    // largest).
    std::size_t group = kNoGroup;
  };
  static constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);
  explicit Preemption(std::vector<Above> jobs);
  bool empty() const { return jobs_.empty(); }
  // The latest finish of a job that starts at `start` and needs `cost` of the processor.
  Duration finish_by(Duration start, Duration cost) const;
  // An instant >= x at which the threads above are idle in every run.
  Duration idle_by(Duration x) const;
  // The most the threads above may run in [from, to). Not thread-safe (a scratch list).
  Duration work(Duration from, Duration to) const;

 private:
  std::vector<Above> jobs_;  // by start.lo
  mutable std::vector<std::pair<std::size_t, Duration>> groups_;  // work(): per group, its work
  Duration span_ = 0;        // the longest finish.hi - start.lo
};

// Explores every schedule of `jobs` on `cores` identical processors (a job is never dispatched
// before its predecessors; the precedence graph must be acyclic) and returns each job's start
// and finish intervals. Throws std::invalid_argument on a cycle or a predecessor index out of
// range.
//
// Several cores (global non-preemptive JLFP scheduling, after Nasri, Nelissen & Brandenburg,
// "A Response-Time Analysis for Non-Preemptive Job Sets under Global Scheduling", ECRTS 2018):
// a state keeps, for k = 1..m, the earliest and latest instant at which k cores are free (both
// sorted); the next job starts in [max(r^min, PA_1), min(t_wc, t_high − 1)] with t_wc =
// max(CA_1, min r^max) and, after it, each other core is free at max(start, its instant) (the
// dispatch order is the start order) and the job's core at its finish. A group's jobs never
// overlap: the state keeps the finish interval of each group's last dispatched job, and a job
// of the group is ready no earlier. The zero-delay rule above is one core's and is not used.
// `above`: threads preempting this one (one core only; nullptr: none).
Result explore(const std::vector<Job>& jobs, const Limits& limits = {}, std::size_t cores = 1,
               const Preemption* above = nullptr);

// The same on one core with no thread above, with the background jobs out of the graph (for a
// job set whose graph outgrows the limits): the longest tail of the priority order made of
// jobs without successors (an executor's callbacks that carry no chain and publish nothing --
// the caching subscriptions of a node that reads its inputs on a timer). A deviation from the
// papers, sound and not exact:
//  - Foreground (every other job): a background job runs only at an instant when no foreground
//    job is pending, and once started holds the thread; so the foreground jobs are scheduled as
//    if each became ready when the background job running at its ready instant finishes, at
//    most B later (B: the largest background C^max), and otherwise alone. They are explored
//    with r^max and the delays of edges with a delay extended by B (an edge without delay
//    releases its successor when its predecessor frees the thread, when nothing else runs).
//  - Background: U is the union of the foreground jobs' [earliest ready, latest finish): outside
//    U none is pending or running. A background job b ready by a = its latest ready instant
//    waits for at most one lower-priority background job started by a and for the
//    higher-priority ones that may be pending after a (their latest finish after a, processed
//    first); while it waits, the thread serves background jobs at every instant outside U. It
//    starts by the first t outside U at which [a, t) outside U holds that work (a fixed point
//    in t); its earliest start is its earliest ready instant.
// `background` (optional) receives the number of background jobs (0: explore() was run).
Result explore_background(const std::vector<Job>& jobs, const Limits& limits = {}, std::size_t* background = nullptr);

// A schedule that reaches the latest finish of one job (one core, no groups): every job's
// release and execution time, to be replayed (the simulator's scripts). The graph is explored
// again with its edges kept; from the dispatch of `target` that starts latest (LST), the path
// is walked back to the root, each earlier job given the start and execution time with which
// it frees the processor exactly at the next one's start (RTSS 2017: every instant of a state's
// availability interval is reached by some schedule of the jobs on a path into it); the jobs on
// the path are released at their starts (within their windows), every other job at r^max and
// with C^max. On jobs without precedence the replay reaches the bound; with precedence the
// merged states' hulls of finish intervals may pair finishes no one schedule has, and the
// replay may then fall short (the bound's pessimism, or a schedule the walk does not find).
// Costs the exploration again and memory for every state and edge. nullopt: several cores or
// groups, a limit reached, or the target never dispatched.
struct Witness {
  std::vector<Duration> release, cost;  // per job
  std::vector<Duration> start;          // per job on the path (else -1)
  Duration finish = 0;                  // the target's latest finish the path leads to
};
std::optional<Witness> witness(const std::vector<Job>& jobs, std::size_t target, const Limits& limits = {});
// The same for several targets from one exploration: `targets` picks them from its result (e.g.
// the leaf jobs of each chain's worst instance); one witness per target picked, in its order
// (nullopt for a target never dispatched); empty when the exploration is not complete or the
// jobs have groups.
std::vector<std::optional<Witness>> witnesses(const std::vector<Job>& jobs,
                                              const std::function<std::vector<std::size_t>(const Result&)>& targets,
                                              const Limits& limits = {});

}  // namespace chainrt::detail::sag
