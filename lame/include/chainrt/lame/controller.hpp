// chainrt lame: the decision logic of LaME's adaptive resource controller (Sec. 4.3, Fig. 1
// flowchart, Fig. 8 overhead). An activation takes the execution times measured at run time
// (the executor's monitoring: per callback the few largest thread-CPU times and the number of
// instances since the last activation), forms a robust estimate from them, checks whether the
// current plan still holds under it (fp-mt on the current thread classes and budgets) and, when
// it does not, reacts in the paper's order: first new budgets for the current allocation
// (Algorithm 3 alone), then, when that is not enough, Algorithms 1-3 again. Every activation is
// logged with its own thread-CPU time and number of response-time analyses.
//
// What makes it robust on a noisy machine (ControllerOptions; found on real ROS 2 runs, where a
// single ~8 ms VM stall or a momentary peak demoted the front hot path):
//  - the estimate of a callback is a high order statistic over the samples of the last `window`
//    controller periods (the largest after dropping `outlier_permille` of them, at most
//    kTopSamples - 1), not the single largest value of one activation. The window is a span of
//    time, not a number of activations: miss-triggered activations 0.5 s apart each carry only
//    half a second of samples, and a window of the last two of them made the estimate (and the
//    verdict "a demotion is needed") flip from one activation to the next;
//  - hysteresis: a plan is replaced only when it no longer holds with the estimate, and a new
//    plan is computed for the estimate plus `margin_permille` (when that margin still fits
//    without demotions), so small growth does not re-plan again;
//  - budgets before allocation: a violation first re-searches the budgets of the current
//    allocation (no callback moves, no ready-queue swap), as the paper's controller does;
//  - no demotion on one noisy activation, and none deferred for longer than a controller
//    period: a plan that demotes more RT chains than the current one is taken only when
//    `demote_after` activations needed it within one episode spanning at least `demote_hold`
//    (a controller period); an activation that holds in between does not end the episode, only
//    a whole `demote_hold` without the need does. The caller activates the controller again at
//    demotion_due() so that the deferral ends one period after the need was first seen;
//  - supply margin: an RT miss while the plan holds with the estimate means the RT threads got
//    less than their reservations (hypervisor steal, a stalled VM, interrupts) or the estimate
//    is too low. Each such activation raises a margin on every execution time by
//    `supply_step_permille` (up to `supply_max_permille`, at most once per `supply_settle`
//    after the last raise or re-plan); the plan is checked and re-planned
//    with the times x (1 + supply margin). It falls by one step at every periodic activation
//    after a controller period without an RT miss.
// Which chains to demote: the paper's Algorithm 2 demotes the chain that fits nowhere once the
// classes are merged, which can be a more critical one than the chain whose growth forced the
// merge (replayed on real run D2: the front hot path c01, criticality 2, instead of the rear
// LiDAR chain c07, criticality 1). A demotion plan is therefore also sought by demoting the least
// critical RT chains first (lame::Options::demote), and of two plans the one whose demoted
// chains are less critical is taken (criticalities compared from the highest down, then fewer
// chains); a re-plan or promotion never demotes a more critical chain than the plan it replaces.
// While the plan holds but has demoted chains, every activation also tries the allocation with
// the estimate and takes it when it demotes fewer chains (deviation: the paper re-plans only on
// a violation; without it a chain demoted under a transient overload stays BE for good).
// Deviations from the paper (Sec. 4.3 re-plans with the measured times as they are): the time
// window, the deferral and the supply margin; each was needed on this VM (docs/lame.md).
//
// Contract: not thread-safe (one controller thread owns it); activate() allocates and may take
// milliseconds — it runs on the controller's non-real-time thread, never on an executor
// thread. Applying a new plan to running threads is the caller's job (plan() after an event
// whose decision is "reallocated").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chainrt/lame/lame.hpp"

namespace chainrt::lame {

// How many of the largest samples per callback and activation a measurement carries.
inline constexpr int kTopSamples = 4;

// One callback's execution times since the previous activation (the executor's monitoring).
struct CpuSample {
  std::string callback;
  std::array<Duration, kTopSamples> largest{};  // descending; 0: fewer instances ran
  std::uint64_t count = 0;                      // instances measured
};

struct ControllerOptions {
  int window = 2;              // controller periods whose samples form the estimate (this one's included)
  int outlier_permille = 20;   // share of the window's samples ignored at the top (<= kTopSamples-1)
  int margin_permille = 50;    // a new plan is computed for the estimate x (1 + margin)
  int demote_after = 2;         // activations of one episode that must need a demotion ...
  // ... spanning at least this long (0: the controller period): miss-triggered activations come
  // in bursts 0.5 s apart during a VM stall and must not count as persistence. An episode ends
  // after this long without the need.
  Duration demote_hold = 0;
  int supply_step_permille = 50;   // supply margin added per RT miss the estimate does not explain
  int supply_max_permille = 300;   // ... at most
  // ... and at most once in this long, counted from the last raise or re-plan too: the misses
  // right after a re-plan are of instances released before it (its backlog), no evidence.
  Duration supply_settle = 1'000'000'000;
};

struct ControllerEvent {
  Duration at = 0;            // the caller's clock (e.g. CLOCK_MONOTONIC ns)
  std::string trigger;        // "initial", "period", "deadline miss"
  std::string decision;       // "holds", "reallocated"
  // What was done: "hold", "budget" (new budgets, same allocation), "replan" (new allocation),
  // "demote" (new allocation with more demoted chains), "promote" (fewer), "deferred" (the plan
  // no longer holds, but the only plan that does demotes: kept until demote_after).
  std::string kind;
  std::string why;            // what no longer held
  std::vector<std::string> chains;  // chains whose class changed (demoted, promoted or moved)
  int supply_permille = 0;    // the supply margin the activation checked and planned with
  double cpu_ms = 0;          // the activation's own thread-CPU time
  int analyses = 0;           // response-time analyses it ran
};

// When LaME's controller activates (Sec. 4.3): every `period` from `start`, at once when an RT
// chain missed its deadline — at most every `min_gap` (misses come in bursts) — and when a
// deferred demotion is due (Controller::demotion_due). One rule for the runtime's controller
// thread and the simulator's controller (sim_control.hpp). Times on the caller's clock.
// Not thread-safe; no allocation.
class ActivationClock {
 public:
  enum class Trigger { Period, Miss, Due };
  ActivationClock(Duration start, Duration period, Duration min_gap);
  // When the next activation is due: `miss`, an RT miss is pending; `due`, a deferred
  // demotion's due time on the caller's clock (0: none).
  Duration wake(bool miss, Duration due) const;
  // An activation at `now` (>= wake(miss, due)): what triggered it; the clock moves on (a
  // periodic activation to the next period; a miss's starts the gap).
  Trigger fire(Duration now, bool miss, Duration due);

 private:
  Duration due_at(Duration due) const { return due > 0 && due > last_activation_ ? due : next_; }
  Duration period_, min_gap_, next_, last_miss_, last_activation_;
};
const char* to_string(ActivationClock::Trigger t);

class Controller {
 public:
  // Runs the initial allocation (Algorithms 1-3) on the model's execution times.
  Controller(Model model, Options options, Duration now = 0, ControllerOptions policy = {});

  // One activation. `measured`: per callback its largest samples since the previous activation
  // (callbacks without a sample in the window keep their last estimate). `rt_miss`: triggered
  // by an RT deadline miss.
  const ControllerEvent& activate(const std::vector<CpuSample>& measured, bool rt_miss, Duration now);
  // The same with one value per callback (its largest; counted as one sample).
  const ControllerEvent& activate(const std::vector<std::pair<std::string, Duration>>& measured, bool rt_miss,
                                  Duration now);

  const Allocation& plan() const { return plan_; }
  const std::vector<ControllerEvent>& log() const { return log_; }
  // The current estimate of every callback's execution time (what the plan is checked with).
  const std::vector<std::pair<std::string, Duration>>& wcet() const { return wcet_; }
  const ControllerOptions& policy() const { return policy_; }
  // When a deferred demotion is due (the caller's clock): the caller activates the controller
  // then, so that no demotion is deferred for longer than `demote_hold`; 0: none deferred.
  Duration demotion_due() const;
  // The current supply margin (per mille on every execution time).
  int supply_permille() const { return supply_permille_; }

 private:
  bool holds(std::string* why, int* analyses) const;
  void estimate(const std::vector<CpuSample>& measured, Duration now, bool* changed);
  Duration hold_span() const;
  Allocation plan_for(int margin_permille, bool budgets_only, int* analyses,
                      const std::vector<std::string>* demote = nullptr) const;
  Allocation least_critical_demotion(int* analyses) const;
  // activate's stages: the plan holds (e: why; a promotion when one fits), the plan does not
  // hold (new budgets, a new allocation, or a demotion once due), and taking a new plan.
  std::optional<Allocation> while_holding(ControllerEvent& e, bool rt_miss, bool raised, bool settled, bool changed,
                                          Duration now, int* analyses);
  std::optional<Allocation> on_violation(ControllerEvent& e, std::string why, bool raised, Duration now,
                                         int* analyses);
  void adopt(ControllerEvent& e, Allocation next, Duration now);

  Model model_;
  Options options_;
  ControllerOptions policy_;
  Allocation plan_;
  std::vector<std::pair<std::string, Duration>> wcet_;  // estimate, by model callback index
  struct Timed {
    Duration at;
    CpuSample sample;
  };
  std::vector<std::vector<Timed>> window_;              // by callback index: the window's activations
  int pending_demotion_ = 0;                            // activations of the episode needing one
  Duration pending_since_ = 0;                          // when the first of them ran
  Duration pending_last_ = 0;                           // when the last of them ran
  int supply_permille_ = 0;                             // supply margin (see above)
  Duration last_miss_ = 0;                              // last miss-triggered activation
  Duration last_change_ = 0;                            // last re-plan or supply raise
  bool changed_once_ = false;                           // ... there was one
  bool missed_ = false;                                 // ... there was one
  std::vector<ControllerEvent> log_;
};

}  // namespace chainrt::lame
