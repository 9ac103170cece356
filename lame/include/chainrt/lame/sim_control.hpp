// chainrt lame: LaME's adaptive resource controller inside the simulator (LaME Sec. 4.3, Fig. 1
// flowchart). The decision is the same lame::Controller the runtime's controller thread runs
// (runtime/lame_controller.hpp), activated by the same rule (ActivationClock: every controller
// period, at once on an RT deadline miss, at most every min_gap, and when a deferred demotion is
// due), fed what the simulated executor's monitoring measured (per callback the 4 largest
// execution times since the last activation and their count) and applied as the runtime applies
// it: the plan on the fixed thread slots (slots.hpp), new reservations on the slot threads and
// new callback parameters by a ready-queue swap (sim::Reconfiguration). So a scenario's
// transient — misses after a workload change until the controller reacts — is deterministic:
// the same seed gives the same run and the same decisions.
//
// Deviations from the real executor, each for a reason: the slot threads are pinned to their
// cores (the runtime cannot pin SCHED_DEADLINE threads on Linux, the paper pins them); a new plan
// takes effect at the activation's instant (the runtime applies it in lame_apply's order within
// about a millisecond; the order matters for the kernel's admission test, which the simulator
// does not have); the controller's own CPU time is not charged to any core (the paper runs it
// on non-executor cores).
//
// Contract: one simulation at a time (the simulator calls it from its event loop); allocates
// freely; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "chainrt/lame/controller.hpp"
#include "chainrt/sim/simulator.hpp"

namespace chainrt::lame {

struct SimControlOptions {
  Duration period = 10'000'000'000;  // controller period (LaME: 10 s)
  Duration min_gap = 500'000'000;    // between two miss-triggered activations (the runtime's)
  Options plan;                      // cores, SCHED_DEADLINE period, step, capacity
  ControllerOptions policy;          // estimate window, margins, deferral (controller.hpp)
};

// One activation as the simulator's controller logged it.
struct SimActivation {
  Duration at = 0;
  std::string trigger;                // "initial", "period", "deadline miss", "demotion due"
  ControllerEvent event;              // decision, kind, why, analyses (cpu_ms: this machine's)
  std::vector<std::string> classes;   // "rt0 cores 0 budget 6.8ms/10ms" after the activation
  std::vector<std::string> demoted;   // RT chains demoted to BE by the plan after it
};

class SimControl : public sim::Control {
 public:
  // The initial allocation (Algorithms 1-3) of `model` with its own execution times. Throws
  // std::invalid_argument when the model cannot be allocated.
  SimControl(const Model& model, SimControlOptions options);

  // The model to simulate: the initial plan on the slots — per core k an RT thread class "rt@k"
  // and a BE thread class "be@k" (one thread each, pinned to k) with the initial reservations,
  // every callback's affinity over the slots, the plan's group splits and priorities.
  const Model& simulated_model() const { return simulated_; }
  const Controller& controller() const { return decision_; }
  const Allocation& initial_plan() const { return initial_; }
  const std::vector<SimActivation>& log() const { return log_; }

  // sim::Control
  Duration next_activation(Duration now, bool missed) const override;
  bool watches(std::size_t chain) const override;
  std::vector<sim::Reconfiguration> activate(Duration now, bool missed,
                                             const std::vector<sim::ExecSamples>& samples) override;

 private:
  void mark_rt_chains();
  void record(Duration at, const std::string& trigger, const ControllerEvent& e);

  Model model_;
  SimControlOptions options_;
  Controller decision_;
  Allocation initial_;
  Model simulated_;
  std::size_t executor_ = 0;          // index of the planned executor
  int cores_ = 1;
  ActivationClock clock_;
  bool miss_pending_ = false;
  std::vector<bool> rt_chain_;        // by model chain index
  std::vector<SimActivation> log_;
};

// A run of `model` with LaME's controller: SimControl's simulated_model() under `options`
// (its control set to the SimControl).
struct ControlledRun {
  sim::SimResult result;
  std::vector<SimActivation> activations;
  Model simulated;                    // the model that ran (the initial plan on the slots)
  Allocation initial_plan, final_plan;
};
ControlledRun simulate_with_controller(const Model& model, const SimControlOptions& control,
                                       sim::SimOptions options);

}  // namespace chainrt::lame
