// synth/: configuration synthesis for PiCAS (Choi et al., "PiCAS: New Design of Priority-Driven
// Chain-Aware Scheduling for ROS2", RTAS 2021; summarised in Sec. II-A of the PiCAS workshop
// paper in shared/papers). From a model's chains, callbacks and nodes it derives everything a
// user would otherwise assign by hand, and writes a complete model variant:
//
//   P1  chain order: more critical chains first (class rt before be, then criticality, then the
//       user's chain priority, then the shorter deadline); every callback of a more critical
//       chain gets a higher priority than every callback of a less critical one.
//   P2  within a chain, a later callback gets a higher priority than an earlier one, so that
//       instances of one chain on one core finish in arrival order (the paper's design rule (2),
//       "no self-interference"). Deviation note: the workshop paper's sentence reads as if the
//       front of a chain were favoured; its own reference-system priorities (51 → 58 along the
//       hot path, shared/reference/autoware-reference-system.md) and rule (2) both need the back
//       favoured, which is what is implemented.
//   P3  an executor's priority is the highest priority of its callbacks; executors that share
//       a core run their single thread at SCHED_FIFO priorities in that order.
//   P4  chain-aware allocation: chains in P1 order place their not yet placed nodes together on
//       one core when they fit (the core already holding the chain's nodes first, else the least
//       loaded one); a chain that fits on no core is split node by node (worst fit).
//
// Executors: `PerChain` gives each (chain, core) pair its own single-threaded executor (the
// paper's layout, needs an analysis of executors sharing a core), `PerCore` one single-threaded
// executor per core. `Auto` builds both and keeps the better by the objective, judged by the
// model's shipped analysis (`analysis` option, else the default analysis of the synthesized
// model, or the exact `sag` analysis where it covers the configuration and certifies more chains
// or more slack than the default one: judge()).
//
// Contract: pure functions of their arguments; allocate; not used on any dispatch path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/model.hpp"

namespace chainrt::synth {

enum class ExecutorLayout { Auto, PerChain, PerCore };

// How two synthesized configurations compare (after schedulability of every chain):
//  Slack:    the larger minimum normalised slack min_i (D_i - R_i) / D_i;
//  Critical: lexicographically smaller R_i / D_i of the chains in P1 order.
enum class Objective { Slack, Critical };

struct Options {
  int cores = 0;                       // 0: the first host's cores
  ExecutorLayout layout = ExecutorLayout::Auto;
  Objective objective = Objective::Slack;
  std::string analysis;                // empty: the synthesized model's default analysis
  int fifo_base = 10;                  // SCHED_FIFO priority of the lowest executor on a core
  double capacity = 1.0;               // utilisation a core may take before a chain is split
};

// Judgement of one configuration by one analysis.
struct Score {
  bool applicable = false;             // the analysis applies (else `why`)
  std::string why;
  std::string analysis;
  int schedulable_chains = 0;
  bool schedulable = false;
  std::vector<double> ratio;           // R_i / D_i per chain in P1 order (inf without a bound)
  double min_slack = 0;                // min_i (D_i - R_i) / D_i (-inf without a bound)
  AnalysisResult result;
};
// true when `a` is strictly better than `b` under `objective`.
bool better(const Score& a, const Score& b, Objective objective);

// P1: chain indices, most critical first.
std::vector<int> chain_order(const Model& m);

// P1 + P2: callback priorities 1..N (N = number of callbacks, larger = more important) for the
// given chain order; callbacks in no chain get the lowest ones, in model order. A callback of
// several chains keeps the rank of the most critical one.
std::vector<int> callback_priorities(const Model& m, const std::vector<int>& order);

// Release period of every callback: a timer's period, a subscription's the shortest period of
// the callbacks publishing its topic (0 when nothing releases it).
std::vector<Duration> release_periods(const Model& m);

// P4: a node → core map with the chain that placed each node (-1: no chain), for the chain
// order; `decisions` (optional) gets one line per placement step. Used by the layouts.
struct Placement {
  std::vector<int> core;               // per node
  std::vector<int> chain;              // per node: the chain (index) that placed it, -1 none
};
Placement place_nodes(const Model& m, const std::vector<int>& order, int cores, double capacity,
                      std::vector<std::string>* decisions = nullptr);

// P3: the model variant for a placement: callback priorities, executors (single-threaded,
// policy picas, thread pinned to its core, SCHED_FIFO by P3), nodes moved. Validated.
Model build(const Model& m, const std::vector<int>& order, const Placement& p, int cores, ExecutorLayout layout,
            int fifo_base);

Score judge(const Model& synthesized, const std::vector<int>& order, const std::string& analysis);

struct Synthesis {
  Model model;
  Score score;
  ExecutorLayout layout = ExecutorLayout::PerCore;
  std::vector<std::string> decisions;  // what was decided and why, one line each
  std::uint64_t evaluated = 0;         // configurations judged
};

// The PiCAS heuristic (P1–P4). Throws std::invalid_argument when the model cannot be
// synthesized (no chains, several hosts, cores < 1).
Synthesis picas(const Model& m, const Options& opt);

// Baseline: every chain → core assignment times every chain priority order (cores^n · n!
// configurations, the chain's first placement deciding its nodes, P2 and P3 as above), the best
// by the objective. Refuses (std::invalid_argument) above `max_configurations`.
Synthesis exhaustive(const Model& m, const Options& opt, std::uint64_t max_configurations = 2'000'000);

}  // namespace chainrt::synth
