// chainrt sim: the soundness harness. For a response-time analysis from the registry
// (analysis/analysis.hpp) it generates systems with the analysis engineer's generators
// (analysis/generator.hpp: the EDF ready-queue paper's Fig. 7 workload, its single-threaded
// partition, CROS-RT's multi-host chains), keeps those the analysis applies to, analyses them,
// and simulates each under the analysis's policy() with adversarial choices:
//   synchronous release at 0 with WCET execution (the critical instant of the classic
//   analyses), random offsets with WCET, random BCET/WCET mixes (scheduling anomalies of
//   non-preemptive dispatch), uniform execution times with random offsets.
// With `harsh`, every system is also pushed outside the papers' comfortable assumptions, each
// perturbation drawn independently per system (seeded): callback and chain priorities drawn
// at random from a small range (contradicting each other, with ties), best-case execution
// times anywhere in [1 ns, WCET], constrained deadlines in [D/2, D], single-threaded executors
// packed onto fewer cores (pinned or not) with random SCHED_FIFO priorities (PiCAS's executors
// sharing a core; ties and threads without one included), timer release jitter,
// overload (U_norm in [1, 1.3] for a fifth of the systems), deadlines set equal to the bounds
// (then analysed again), the generators tried in a random order (so multi-host systems also
// reach analyses that apply to partitioned ones), and two more simulations with the timers'
// offsets clustered within 3 ns of two instants. With `climb` > 0 a hill climbing search
// then starts from the worst simulation and mutates one or two of: a timer offset (anywhere,
// by ±10^k ns, or onto another timer's offset ± 2 ns) and a callback's execution time (its
// BCET, its WCET, or uniform between: execution below WCET, the non-preemptive anomalies),
// keeping a move when the worst observed/bound ratio does not decrease.
// With `feature`, every system must have that feature, drawn until it does (up to 8 draws per
// set, perturbed like the harsh systems where the feature needs it), so the feature's count is
// the number of applicable systems:
//   shared-cores     single-threaded executors packed onto fewer cores with random SCHED_FIFO
//                    priorities (PiCAS's executors sharing a core): some core can run threads of
//                    two executors;
//   shared-callbacks a callback on two chains: a merge (a subscription that serves two chains,
//                    each message carrying its own chain's instance) or a fork (a DAG of two chains
//                    from one timer that share a prefix and go on separately);
//   branch-join      a chain that branches, one branch on another executor, and joins at an
//                    implicit fusion node (two subscriptions of one node publishing the same
//                    topics) whose every input is on the chain (or, for a quarter, a branch that
//                    ends on the other executor). A system with one multi-threaded executor is
//                    split into two executors with half of its threads and nodes each.
//   accelerator      shared accelerators (PiCAS Sec. IV): a device per host reached directly or
//                    through the chain-priority server (or one of each), segments of random
//                    sizes on callbacks of most chains, the server thread on a core shared with
//                    the executors' threads or unpinned.
// Any chain whose simulated response time exceeds its WCRT bound, falls below its BCRT bound,
// or misses a deadline the analysis calls met is a counterexample; it is saved as a model file
// (offsets of the variant written into the timers; the header comment gives the simulate
// command that reproduces it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {
class ResponseTimeAnalysis;
}

namespace chainrt::sim {

struct SoundnessOptions {
  std::string analysis;               // registry name, e.g. "edf-mt"
  // The policy the systems are generated and simulated under, where the analysis bounds several
  // (bounds_policy: the policies an analysis such as sag covers); unset: the analysis's policy().
  std::optional<Policy> policy;
  int sets = 100;                     // generated systems
  std::uint64_t seed = 1;
  int first = 0;                      // index of the first system: systems first .. first + sets - 1 of
                                      // `seed` (a campaign's batch; the same systems whatever the split)
  int variants = 4;                   // adversarial simulations per system (1..4, see above)
  int horizon_periods = 20;           // simulate for this many of the longest chain period
  double u_min = 0.1, u_max = 0.6;    // U_norm drawn per system in [u_min, u_max]
  int m = 4, n = 8, b = 5, g = 2;     // EDF-paper generator parameters
  double alpha = 0.6;                 // α drawn per system in [0, alpha]
  std::string counterexample_dir;     // where counterexamples are written ("" = not written)
  int jobs = 1;                       // worker threads
  bool harsh = false;                 // perturbed systems, clustered offsets (see above)
  int climb = 0;                      // hill-climbing simulations per system (see above)
  bool fusion = false;                // fusion systems instead (soundness_fusion.hpp): joins of several timers
  // The offsets/fusion family instead (soundness_fusion.hpp, `phases`): fusion systems whose
  // timers have guaranteed phases and declared release jitter; simulated at the declared
  // offsets only, with the jitter drawn per release, at its maximum, at zero, and hill-climbed
  // per timer (SimOptions::release_delays) with the execution times.
  bool phases = false;
  std::string feature;                // "", or one of soundness_features()
  // Systems from the caller instead of the generators above (e.g. LaME's best-effort systems,
  // lame/soundness.hpp): fills `out` for the seed, false when it draws none. The harsh
  // perturbations and the adversarial search apply to them as to generated ones.
  std::function<bool(std::uint64_t seed, Model& out)> generator;
  // The model the simulator runs for an analysed system, when the analysis decides more than
  // the executor policy (LaME: its plan's thread classes, budgets, affinities and group splits);
  // it must keep the system's callbacks, in the same order. Default: the system itself.
  std::function<Model(const Model&)> simulated;
};

// The features `feature` may name (for error messages and the CLI's choices).
const std::vector<std::string>& soundness_features();

struct Counterexample {
  int set = 0;
  std::uint64_t seed = 0;             // the generator seed of the system
  std::string variant;                // which adversarial simulation
  std::string chain;
  std::string kind;                   // "wcrt", "bcrt" or "deadline"
  Duration bound = 0;
  Duration observed = 0;
  std::string file;                   // saved model, when written
};

// The distribution of bound / worst simulated response over some chains, from their ascending
// worst / bound ratios: its median, 90th percentile and the count per kTightnessBuckets bucket
// ([1, 1.05), [1.05, 1.1), [1.1, 1.3), [1.3, 1.5), [1.5, 2), [2, 3), [3, ∞)); all zero for none.
struct BoundOverWorst {
  double median = 0, p90 = 0;
  std::vector<std::int64_t> histogram;
};
BoundOverWorst bound_over_worst(const std::vector<double>& ascending_ratios);
// As the report writes it (report_to_json; a campaign's merge of batches, through chainrt._core):
// {"median", "p90" (six decimals), "histogram", "bucket_upper_ends"}.
std::string bound_over_worst_to_json(const BoundOverWorst& distribution);

struct SoundnessReport {
  std::string analysis;
  std::string policy;                 // the policy simulated (SoundnessOptions::policy)
  int systems = 0;                    // generated
  int applicable = 0;                 // the analysis applies
  int schedulable = 0;                // ... and calls every chain schedulable
  std::int64_t chains_checked = 0;    // bounded chains compared against simulations
  std::int64_t beyond_period_checked = 0;  // of those, bounds above the chain's period (R > T)
  std::int64_t fusion_chains_checked = 0;  // fusion systems: of those, chains through a join
  std::int64_t simulations = 0;
  std::uint64_t executions = 0;       // simulated callback executions
  double max_ratio = 0;               // max observed WCRT / WCRT bound over checked chains
  // harsh: how many applicable systems had each perturbation
  int shuffled_priorities = 0, below_wcet = 0, constrained_deadlines = 0, jitter = 0, overloaded = 0,
      tight_deadlines = 0, shared_cores = 0;
  std::int64_t climb_simulations = 0;
  int climb_raised = 0;               // systems whose worst ratio the climb raised above the draws'
  std::string feature;
  bool phases = false;                // the offsets/fusion family (SoundnessOptions::phases)
  int feature_systems = 0;            // applicable systems with `feature` (all of them when set)
  // chain bounds checked (per simulation) of the chains with the feature: those that share a
  // callback with another chain, or branch (every chain for shared-cores)
  std::int64_t feature_chains_checked = 0;
  int feature_bounded_systems = 0;    // systems where some chain with the feature was bounded
  int multi_threaded_systems = 0;     // applicable systems with a multi-threaded executor
  int multi_host_systems = 0;         // applicable systems whose chains span several hosts
  int merges = 0, forks = 0, leaf_branches = 0;  // which shared-callback / branch construct
  // accelerator: applicable systems whose devices are reached directly, through the server, or
  // both (a server-mode and a direct-mode device on each host)
  int direct_access_systems = 0, server_access_systems = 0, both_access_systems = 0;
  // Tightness: per bounded chain, its worst simulated response over its bound (max over the
  // system's simulations); the median, 10th and 90th percentile and mean over all such chains
  // (bound / worst simulated, the other way round: 1 / median, and its 90th percentile 1 / p10).
  std::int64_t ratio_chains = 0;
  double ratio_median = 0, ratio_p90 = 0, ratio_p10 = 0, ratio_mean = 0;
  // The distribution of bound / worst simulated response over the same chains (tightness, the
  // other way round; BoundOverWorst).
  BoundOverWorst bound_over_worst;
  std::vector<double> ratios;         // every such chain's ratio, ascending (the figures above come from
                                      // it; a campaign merges its batches' lists into the same figures)
  // The fusion families (`fusion`, `phases`): the ratios of the chains from a fusion node's
  // sources alone, most of them through the join (ascending; the rest of `ratios` are the
  // background chains'), so that a report can tell the join's tightness from the other chains'.
  std::vector<double> join_ratios;
  // The ratios of the chains of systems with a multi-threaded executor alone (ascending).
  std::vector<double> multi_threaded_ratios;
  std::vector<Counterexample> counterexamples;
};

// The upper ends of the tightness histogram's buckets (the last one is open).
inline constexpr double kTightnessBuckets[] = {1.05, 1.1, 1.3, 1.5, 2.0, 3.0};

// Throws std::invalid_argument for an unknown analysis name, or a policy it does not bound.
SoundnessReport run_soundness(const SoundnessOptions& options);
// The same loop for any analysis object (tests use a deliberately wrong one).
SoundnessReport run_soundness(const ResponseTimeAnalysis& analysis, const SoundnessOptions& options);
std::string report_to_json(const SoundnessReport& report);

// The `platform` feature's platform: a core that loses Q every T, at any phase, as the blackout
// curve the analysis sees (its exact maximum at each k·T and k·T + Q, k <= 4), and the model the
// simulator runs — `base` without curves plus, on every core of every host, a SCHED_FIFO 99
// timer taking the core for Q every T at `phase` (core c shifted by c·T/3). Both allocate.
std::vector<BlackoutPoint> periodic_blackout(Duration Q, Duration T);
Model with_platform_threads(const Model& base, Duration Q, Duration T, Duration phase);

}  // namespace chainrt::sim
