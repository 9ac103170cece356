// chainrt lame: the decision logic of LaME's adaptive resource controller (Sec. 4.3, Fig. 1
// flowchart, Fig. 8 overhead). An activation takes the execution times measured at run time
// (the executor's monitoring: the largest thread-CPU time per callback since the last
// activation), checks whether the current plan still holds under them (fp-mt on the current
// thread classes and budgets), and when it does not — or when an RT chain missed its deadline
// and the bounds disagree — re-runs Algorithms 1-3 with the measured times (which also demotes
// an RT chain that fits nowhere, in descending criticality). While the plan holds but has
// demoted chains, every activation also tries the allocation with the measured times and takes
// it when it demotes fewer chains (deviation: the paper re-plans only on a violation). Every
// activation is logged with its own thread-CPU time and number of response-time analyses.
//
// Contract: not thread-safe (one controller thread owns it); activate() allocates and may take
// milliseconds — it runs on the controller's non-real-time thread, never on an executor
// thread. Applying a new plan to running threads is the caller's job (plan() after a
// "reallocated" event).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "chainrt/lame/lame.hpp"

namespace chainrt::lame {

struct ControllerEvent {
  Duration at = 0;            // the caller's clock (e.g. CLOCK_MONOTONIC ns)
  std::string trigger;        // "initial", "period", "deadline miss"
  std::string decision;       // "holds", "reallocated"
  std::string why;            // what no longer held
  double cpu_ms = 0;          // the activation's own thread-CPU time
  int analyses = 0;           // response-time analyses it ran
};

class Controller {
 public:
  // Runs the initial allocation (Algorithms 1-3) on the model's execution times.
  Controller(Model model, Options options, Duration now = 0);

  // One activation. `measured`: callback name -> largest measured execution time (callbacks
  // not listed keep their last known time). `rt_miss`: triggered by an RT deadline miss.
  const ControllerEvent& activate(const std::vector<std::pair<std::string, Duration>>& measured, bool rt_miss,
                                  Duration now);

  const Allocation& plan() const { return plan_; }
  const std::vector<ControllerEvent>& log() const { return log_; }
  // The execution times the current plan was computed with.
  const std::vector<std::pair<std::string, Duration>>& wcet() const { return wcet_; }

 private:
  bool holds(std::string* why, int* analyses) const;

  Model model_;
  Options options_;
  Allocation plan_;
  std::vector<std::pair<std::string, Duration>> wcet_;
  std::vector<ControllerEvent> log_;
};

}  // namespace chainrt::lame
