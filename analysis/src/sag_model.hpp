// The jobs of a chainrt model for the schedule-abstraction graph (sag.hpp), and what the
// analysis reads back from the graph: per chain, the worst-case end-to-end latency.
//
// The model it covers: every callback on an executor with one thread (a dedicated core, no
// reservation, no platform blackout curve; several such executors when their threads share cores
// only by SCHED_FIFO priority, pinned or not: placement in sag_model.cpp) under a ready-queue policy with a job-level fixed
// priority (job_level_fixed_priority); every timer's phase guaranteed on the host's release grid
// (sched/timer.hpp: releases at epoch + offset + k·period, up to `jitter` late); every other
// callback released by the messages of ONE publishing callback (one job per message, FIFO) or of
// one implicit fusion set; no explicit fusion callbacks, no accelerators; implicit fusion sets as rounds (sag_model.cpp,
// Builder::fuse) where their members follow releases of one period, else as maybe-jobs (below); chains
// starting at a timer.
//   fusion sets without rounds ("loose": members following timers of different periods, or a
//         set downstream of one): each member job may complete the set or only cache, so it
//         costs [cache-only BCET, WCET], and the fused message's jobs follow EVERY member job as
//         jobs that may not exist: cost [0, WCET] (ModelJobs::maybe). In non-preemptive
//         work-conserving JLFP scheduling a job of length 0 is the same as its absence: dispatched
//         at an instant the thread is free (when it is the highest-priority ready job), it frees
//         the thread at that very instant, and the next selection is the one made without it;
//         so every run, whichever member jobs fused, is a schedule of this job set. A chain whose
//         data passes such a set gets no bound (which message completes the set depends on the
//         arrival order; ModelJobs::chain_declined); the others are bounded with these jobs as
//         interference.
//   jobs: every timer release in the first `hyperperiods` hyperperiods (lcm of the periods), and
//         for each, one job of every callback its messages reach (publish / service request /
//         response), an edge from the publisher's job with the hop's delay in [0, hop cost];
//   costs: [BCET, WCET]; releases: [nominal, nominal + jitter];
//   priority: the executor's ready-queue key (sched::key_of) of the callback with the
//         job's absolute deadline — nominal release + the smallest deadline of the chains it
//         carries, as the executor stamps it — then the release order.
// Steady state: two hyperperiods are analysed from the common start; when at some timer
// release t of the first the thread is idle in every schedule (every job of an earlier release
// finished) and again at t + H, every later hyperperiod repeats [t, t + H), so the two hold
// every instance of the run.
// Where the graph shows a run could leave the job model — a callback released again before
// its previous job started (the executor keeps one queued instance per callback and one
// message per depth-1 queue; a timer taken after its next release skips it), or no such idle
// instant — the analysis declines with that reason.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sag.hpp"

namespace chainrt::detail::sag {

// A chain instance: its release (the source timer's nominal release) and the jobs whose
// completion ends it (the chain's leaf callbacks, reached along its hops).
struct ChainInstance {
  std::size_t chain = 0;
  Duration release = 0;
  std::vector<std::size_t> leaves;
  bool cut = false;  // its data waits at a fusion set whose round the horizon cut (not counted)
};

inline constexpr std::size_t kNoJob = static_cast<std::size_t>(-1);

struct ModelJobs {
  std::vector<Job> jobs;
  std::vector<std::size_t> callback;           // per job: model callback index
  std::vector<std::size_t> partition;          // per job: the executor (index in the model) running it
  std::vector<std::size_t> partitions;         // the executors with callbacks, in model order
  std::vector<std::vector<std::size_t>> above;  // per partition: the partitions (positions) whose
                                                // thread preempts its thread (placement, sag_model.cpp)
  std::vector<bool> one_core;                  // per partition: its thread is pinned to one core (else the
                                                // kernel may run it on any of several)
  std::size_t cores = 1;                       // threads of the executor (one executor), else 1
  // per implicit fusion set, per round, per member: its job (kNoJob: beyond the horizon)
  std::vector<std::vector<std::vector<std::size_t>>> fusion_rounds;
  std::vector<Duration> root_release;          // per job: nominal release of its timer job
  std::vector<ChainInstance> instances;
  std::vector<bool> maybe;                     // per job: it may not exist (after a loose fusion set; cost.lo 0)
  std::vector<std::string> chain_declined;     // per chain: why it gets no bound (empty: bounded as usual)
  std::vector<std::vector<std::size_t>> of_callback;  // per model callback: its jobs, in release order
  Duration hyperperiod = 0;
  Duration horizon = 0;                        // hyperperiods · hyperperiod
  Duration first_release = 0;                  // the smallest timer offset (the next window's first)
  // Drifting phases (below): the reference hyperperiod, and per model callback whether it is a
  // drifting timer (empty when every timer is on the common hyperperiod).
  Duration reference_hyperperiod = 0;
  std::vector<bool> drifting;
  // per job: the priority its key takes at the latest release of a drifting timer's job (equal
  // to jobs[j].priority for every other job)
  std::vector<Priority> priority_late;
};

// The position in mj.partitions of the executor running `job`.
inline std::size_t partition_position(const ModelJobs& mj, std::size_t job) {
  return static_cast<std::size_t>(std::find(mj.partitions.begin(), mj.partitions.end(), mj.partition[job]) -
                                  mj.partitions.begin());
}

// The most jobs the analysis builds; beyond it declines (and the other analyses answer).
inline constexpr std::size_t kMaxJobs = 20'000;

// Drifting phases. When the timers' common hyperperiod holds more than kMaxJobs jobs (periods
// such as 33,333,333 ns and 200 ms: 77 days), the timers are split: the reference timers (in
// order of period, each kept while the hyperperiod of those kept, H_ref, stays within the job
// limit) and the drifting ones. A drifting timer of period P is released at a relative phase
// psi = release mod H_ref against the reference timers' pattern (which repeats every H_ref);
// psi moves by P - P' every period (P' = P rounded to a multiple of H_ref) and, over the phase
// cycle, takes every value on its grid. Its jobs are written with period P' and a release
// anywhere in the phase window (default [0, H_ref), widened by the drift over the analysed span),
// so every relative phase the run reaches is one of the schedules explored: a finite worst case
// over all phases instead of none. Its chain latencies count from the window's start (an upper
// bound of the true latency); where its EDF key (a deadline from its release) could order it
// differently against a job that may be pending with it, the analysis declines.
struct PhaseWindow {
  Duration lo = 0, hi = 0;  // psi in [lo, hi), within [0, H_ref)
  bool widen = true;        // false: the drift over the analysed span not added (a scenario's phases)
};

// Whether the policy orders the ready queue by a job-level fixed priority (all but ros-default and
// lame).
bool job_level_fixed_priority(Policy p);
// Whether the model is inside the analysis' model (above); `why` says what is not.
bool sag_covers(const Model& m, std::string* why);
// The jobs of the first `hyperperiods` hyperperiods; nullopt with `why` when the model is not
// covered or the job count exceeds kMaxJobs.
// `window`: the drifting timers' phases considered (all of [0, H_ref) when absent).
std::optional<ModelJobs> build_jobs(const Model& m, int hyperperiods, std::string* why,
                                    const std::optional<PhaseWindow>& window = std::nullopt);
// After the exploration: an empty string when every run stays inside the job model (see above),
// else the reason it may not.
std::string outside_job_model(const Model& m, const ModelJobs& mj, const Result& r);

}  // namespace chainrt::detail::sag

namespace chainrt {
class ResponseTimeAnalysis;
namespace detail {
// The `sag` analysis (sag_analysis.cpp), for the registry (analyses.cpp).
const ResponseTimeAnalysis& sag_analysis();
}  // namespace detail
}  // namespace chainrt
