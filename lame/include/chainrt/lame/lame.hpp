// chainrt lame: the resource side of LaME (Enright, Sobhani, Kim, "Theory-Guided Adaptive
// Scheduling for ROS 2", shared/papers/lame_*). Owns
//  - Algorithm 1 (Sec. 4.2): linearise and categorise chains — `linearise`;
//  - Algorithm 2 (Sec. 4.3): chain-to-threadclass allocation, worst-fit decreasing with
//    merging of thread classes and RT→BE demotion — inside `allocate`;
//  - Algorithm 3 (Sec. 4.3): least RT thread-class budget by binary search, the rest of the
//    core to the BE counterpart, then the BE starvation-freedom check — inside `allocate`;
//  - the BE check itself (Sec. 4.2, "Ensuring Starvation Freedom") — `be_check.cpp`.
// RT chains are bounded by the shipped `fp-mt` analysis (LaME Theorem 1 = Sobhani et al.
// RTAS 2023 Thm 2); nothing here is a second response-time analysis of RT chains.
//
// Contract: pure functions of their inputs, not on any hot path; they allocate freely and are
// safe to call from any thread (no shared state). Errors in the model (chains spanning several
// executors, too many cores) throw std::invalid_argument with a one-line message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/model.hpp"

namespace chainrt::lame {

// One linear (sub)chain of Algorithm 1. A model chain that shares callbacks with others (a
// nonlinear chain written as several linear chains with a common prefix, or a branching chain)
// is split as in Fig. 3: each shared callback is owned by the first RT path that contains it
// (most critical first), else by the first BE path; a path that does not own its prefix keeps
// only its own suffix and is analysed compositionally: its bound is the bound of the prefix's
// owner (an upper bound on the prefix's completion) plus the bound of its own part.
struct LinearChain {
  std::string name;                 // model chain name; "<chain>#<k>" for a branching chain's path k
  std::string origin;               // the model chain it comes from
  std::vector<std::string> path;    // root-to-leaf callbacks
  std::vector<Hop> hops;            // path.size() - 1 hops
  std::size_t owned_from = 0;       // path[owned_from..] are its own; the rest belongs to `upstream`
  int upstream = -1;                // index of the owner of path[owned_from - 1]; -1 when it owns all
  bool composable = true;           // false: shares callbacks other than a common prefix (a merge)
  Duration period = 0, deadline = 0;
  CriticalityClass cls = CriticalityClass::RealTime;
  int criticality = 0;
  std::vector<std::string> own() const { return {path.begin() + static_cast<long>(owned_from), path.end()}; }
};

struct Linearised {
  std::vector<LinearChain> chains;
  std::vector<int> rt, be;          // S_RT (descending criticality) and S_BE (model order)
};

// Algorithm 1. Throws std::invalid_argument when a chain has no callbacks.
Linearised linearise(const Model& model);

struct Allocation;

// The BE side's rule (allocate.cpp header): Capacity (default) — an empty RT class is merged
// into the busiest only when that takes no more of the cores, and BE chains are placed after
// Algorithm 3 by the capacity the budgets leave each BE class, keeping an overload in as few
// classes as possible; Paper — Algorithm 3 lines 5-7 and Algorithm 2 lines 38-41 as printed.
enum class BePlacement { Capacity, Paper };

struct Options {
  // |M|; 0: every core of the executor's host. More than the host declares overrides the
  // model's cores: the planned model's host has them (and the allocation notes it).
  int cores = 0;
  Duration period = 10'000'000;          // SCHED_DEADLINE period T^r of every thread (10 ms)
  int step_permille = 10;                // Algorithm 3's step (1 % as in the paper)
  // Share of each core the reservations of its RT and BE classes may take together (‰). The
  // paper gives a core's whole period (1000); Linux admits SCHED_DEADLINE bandwidth only up
  // to sched_rt_runtime_us / sched_rt_period_us of every core (950 ‰ by default), so the
  // runtime's controller plans with that limit (deviation, runtime/lame_controller.hpp).
  int capacity_permille = 1000;
  Duration controller_period = 10'000'000'000;  // BE chains must finish within it (10 s)
  BePlacement be_placement = BePlacement::Capacity;
  // Execution times measured at run time (callback name -> WCET) that replace the model's.
  std::vector<std::pair<std::string, Duration>> measured_wcet;
  // Budget-only re-adjustment (the controller's first reaction to a violation, LaME Sec. 4.3):
  // when set, Algorithm 2 is skipped and Algorithm 3 searches new least budgets for this
  // plan's thread classes, chain allocation and demotions (it must come from allocate() on the
  // same model). Not owned; only read during the call.
  const Allocation* keep = nullptr;
  // RT chains (linear names or their model chains) demoted before Algorithm 2 runs: the
  // controller's choice of the least critical ones when only a plan with demotions holds
  // (controller.hpp). Algorithm 2 may demote more. Ignored with `keep`.
  std::vector<std::string> demote;
};

struct ThreadClassPlan {
  std::string name;                      // "rt0", "be0", ...
  CriticalityClass kind = CriticalityClass::RealTime;
  std::vector<int> cores;                // one thread per core
  Duration budget = 0;                   // SCHED_DEADLINE runtime per thread (0: none)
  Duration period = 0;
  std::vector<int> chains;               // indices into Linearised::chains
  double utilisation() const;            // per-thread utilisation of its chains (set by allocate)
  double util_ = 0;
};

struct Demotion {
  std::string chain;                     // linear chain name
  std::string reason;
};

struct ChainVerdict {
  std::string chain;                     // linear chain name
  CriticalityClass cls = CriticalityClass::RealTime;
  std::string thread_class;
  bool bounded = false;
  Duration bound = 0;                    // end-to-end, from the chain's release
  Duration deadline = 0;
  bool meets_deadline = false;           // bounded && bound <= deadline
  bool starvation_free = false;          // BE: bounded && bound <= controller period
  std::string reason;                    // why unbounded / how it was bounded
};

struct Allocation {
  Linearised lin;
  std::vector<ThreadClassPlan> rt, be;   // rt[i] and be[i] share their cores
  std::vector<Demotion> demotions;
  std::vector<ChainVerdict> verdicts;    // every linear chain, RT first
  std::vector<std::string> notes;        // changes made to the model (groups split, ...)
  Model model;                           // the input model with the plan applied (validates)
  std::string executor;                  // the executor that was allocated
  int analyses = 0;                      // response-time analyses run (controller cost)
  bool rt_schedulable = false;           // every remaining RT chain meets its deadline
  bool be_starvation_free = false;       // every BE chain bounded within the controller period
};

// Algorithms 2 and 3 (and Algorithm 1 first) on the one executor that runs the model's chains.
Allocation allocate(const Model& model, const Options& options = {});

// The analysis model of a plan: the input model with thread classes, reservations and
// affinities applied and the chains replaced by the linear chains (own parts for
// non-owners). fp-mt bounds its RT chains. Exposed for tests.
Model analysis_model(const Model& model, const std::string& executor, const Linearised& lin,
                     const std::vector<ThreadClassPlan>& rt, const std::vector<ThreadClassPlan>& be,
                     const std::vector<int>& rt_chains, bool final_model);

// The BE starvation-freedom check (be_check.cpp) on a planned model (`plan`: thread classes,
// reservations, affinities applied; `classes`: every thread class of the plan; `cb_class`:
// plan callback index -> index into `classes`, -1 when on no class). `rt_bound[i]`: the bound
// of linear chain i when it is RT and bounded, else -1. Verdicts for every chain in lin.be.
std::vector<ChainVerdict> be_check(const Model& plan, const Linearised& lin, const std::vector<int>& be_chains,
                                   const std::vector<ThreadClassPlan>& classes, const std::vector<int>& cb_class,
                                   const std::vector<Duration>& rt_bound, Duration limit);

}  // namespace chainrt::lame
