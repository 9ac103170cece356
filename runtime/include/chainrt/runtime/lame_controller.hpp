// chainrt runtime: LaME's adaptive resource controller on the real executor (LaME Sec. 4.3,
// Fig. 1 and Fig. 8). A non-real-time thread that activates every controller period (10 s by
// default) and at once when an RT chain misses its deadline; it reads the execution times the
// executor measured (the 4 largest thread-CPU times per callback since the last activation
// and their count, Executor::take_cpu_window), lets lame::Controller decide whether the plan
// still holds (fp-mt with its robust estimate) or needs new budgets or a new allocation
// (Algorithms 3 or 1-3), publishes the decision on the monitoring topic ("lame_decision"
// events, Executor::publish_event), and applies a new plan to the RUNNING
// executor: new SCHED_DEADLINE runtime/period on the thread-class threads (sched_setattr), and
// when the chain-to-class allocation changed, new callback affinity masks, priorities and
// groups (Executor::reconfigure: queued and running instances carry over, none is lost).
//
// Threads ("slots"): a plan's thread classes change shape (RT classes merge, an empty RT class
// is dropped) while an executor's threads are fixed when it is built, so the executor runs the
// paper's initial structure (Algorithm 2, lines 3-8) for good — one RT slot "rt@k" and one BE
// slot "be@k" per core k — and a plan is mapped onto it: the thread of class X on core k runs
// on slot (kind of X, k); X's callbacks may run on exactly the slots of X's threads; a slot no
// class uses gets normal scheduling and no callback.
//
// Deviations from the paper, with the reason:
//  - Slots are NOT pinned to their core. Linux refuses SCHED_DEADLINE for a thread whose
//    affinity is narrower than its root domain (EPERM), and the paper's per-core isolation
//    (cgroup cpusets as separate root domains) would change the machine's cpuset
//    configuration. The kernel schedules the reservations by global EDF over the cores; the
//    per-core sums stay within the admission limit, so every reservation is admitted, but a
//    budget is then guaranteed only up to global EDF's bounded tardiness, not exactly as the
//    supply bound function assumes.
//  - Every core's RT + BE budgets add up to the kernel's admission limit
//    (sched_rt_runtime_us / sched_rt_period_us, 95 % by default; read, never changed) less
//    the fair-class deadline server's 5 %, i.e. 90 %, not to 100 %
//    (lame::Options::capacity_permille). A reservation refused while another slot left
//    SCHED_DEADLINE in the same step is retried once, one period later (lame_apply: the kernel
//    returns a departing thread's bandwidth only at its 0-lag time); one the kernel still
//    refuses (other tenants' SCHED_DEADLINE threads) is logged with the activation; the thread
//    keeps its old parameters.
//
// Contract: start()/stop()/log() from the thread that owns the run (not thread-safe among
// themselves); on_deadline_miss() from executor threads (lock-free, no allocation, no
// blocking). The controller thread allocates freely; it never runs on an executor thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/lame/controller.hpp"
#include "chainrt/lame/slots.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"

namespace chainrt::runtime {

struct LameControllerOptions {
  Duration period = 10'000'000'000;   // controller period (LaME: 10 s)
  Duration min_gap = 500'000'000;     // at least this long between two miss-triggered activations
  lame::Options plan;                 // cores, SCHED_DEADLINE period, step; capacity: see below
  // Share of a core the reservations may take (‰); 0: the kernel's admission limit.
  int capacity_permille = 0;
  bool log_stderr = true;             // one line per activation on stderr
};

// One activation as logged (the run report's "lame_controller" entries).
struct LameActivation {
  Duration at = 0;                    // since the executor started (ns)
  std::string trigger;                // "initial", "period", "deadline miss", "demotion due"
  std::string decision;               // "holds", "reallocated"
  std::string kind;                   // lame::ControllerEvent::kind ("hold", "budget", "replan", ...)
  std::vector<std::string> chains;    // chains whose thread class changed
  std::string why;
  double decide_cpu_ms = 0;           // lame::Controller::activate's thread-CPU time
  double apply_cpu_ms = 0;            // applying the plan (sched_setattr, queue swap)
  int analyses = 0;
  bool allocation_changed = false;    // chain-to-class assignment (affinities) changed
  std::vector<std::string> classes;   // "rt0 cores 0 budget 6.8ms/10ms" after the activation
  std::vector<std::string> demoted;   // RT chains demoted to BE by this plan
  std::vector<std::string> errors;    // reservations the kernel refused
};

// As a RunObserver of run_model (model_app.hpp): run `planned_model()` with it as the observer
// and it builds its executor on the slots, attaches, starts with the run and stops before it.
class LameController : public RunObserver {
 public:
  // Runs the initial allocation (Algorithms 1-3) of `model` with its own execution times.
  // Throws std::invalid_argument when the model cannot be allocated (lame::allocate).
  LameController(const Model& model, LameControllerOptions options);
  ~LameController() override;
  LameController(const LameController&) = delete;
  LameController& operator=(const LameController&) = delete;

  // The model to run: the input with the initial plan applied (thread classes, split groups,
  // affinities, priorities).
  const Model& planned_model() const { return planned_; }
  const std::string& executor_name() const { return executor_; }
  // The executor's threads: the slots with the initial plan's reservations.
  std::vector<sched::ThreadSpec> slot_threads() const;
  // Wire into the executor built from planned_model() with slot_threads() (after prepare(),
  // before start()): applies the initial plan's callback parameters. Any executor that gives
  // the controller what it needs (controlled_executor.hpp): the runtime's, the rclcpp one.
  void attach(ControlledExecutor& ex);
  // The run id of the decision events (run_model sets it through configure()).
  void set_run_id(std::string id) { run_id_ = std::move(id); }
  // ExecutorOptions::on_deadline_miss: wakes the controller when `chain` is an RT chain.
  void on_deadline_miss(std::uint32_t chain) noexcept;

  void start(Duration run_start);     // the controller thread (normal scheduling)
  void stop();
  std::vector<LameActivation> log() const;
  // The reservations the slots' threads hold now (by slot: rt@0.., be@0..), as the controller
  // applied them. Between attach() and start(), or after stop().
  std::vector<std::optional<Reservation>> applied_slots() const { return current_.slots; }
  std::string log_json() const;       // JSON array of the activations

  // RunObserver
  void configure(const chainrt::Executor& e, ExecutorOptions& options) override;
  void prepared(const chainrt::Executor& e, Executor& executor) override;
  void started(Duration start_ns) override;
  void stopping() override { stop(); }

 private:
  struct Applied {
    std::vector<sched::CallbackSpec> specs;   // by executor CallbackId
    std::vector<sched::GroupSpec> groups;
    std::vector<std::optional<Reservation>> slots;
  };
  Applied translate(const lame::Allocation& plan) const;
  void apply(const Applied& next, LameActivation& a);
  void mark_rt_chains(const lame::Allocation& plan);
  void main();
  void record(LameActivation a);
  void publish(const LameActivation& a);  // the decision event on the monitoring topic

  Model model_;
  Model planned_;
  std::string executor_;
  std::size_t executor_index_ = 0;
  int cores_ = 1;
  LameControllerOptions options_;
  std::unique_ptr<lame::Controller> decision_;
  ControlledExecutor* ex_ = nullptr;
  Applied current_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> rt_chain_;  // by model chain index
  std::size_t chain_count_ = 0;
  std::atomic<std::uint32_t> miss_{0};
  std::atomic<std::uint32_t> stop_{0};
  Duration run_start_ = 0;
  std::string run_id_;
  std::thread thread_;
  mutable std::mutex log_mutex_;
  std::vector<LameActivation> log_;
};

// Plans on the fixed thread slots (rt@k = slot k, be@k = slot cores + k): lame/slots.hpp
// (lame::slot_plan, lame::plan_cores, lame::slot_name), shared with chainrt.rclpy's controller
// and the simulator's.

// The order in which a new plan is applied to running threads: slot indices, and -1 where the
// callbacks' new parameters (ready-queue swap) go. 1. BE reservations that shrink or end; 2. RT
// reservations that grow; -1; 3. RT reservations that shrink; 4. BE reservations that grow.
// So an RT thread never serves its (new) work with less than its new budget and never loses
// budget before the work it no longer serves has left it, and the kernel's admission test sees
// freed bandwidth before it is asked for more. Slots whose reservation is unchanged are left
// out. Pure.
std::vector<int> lame_apply_order(const std::vector<std::optional<Reservation>>& current,
                                  const std::vector<std::optional<Reservation>>& next, int cores);

// The executor's side of applying a plan (lame_apply): how a slot's thread gets a reservation,
// how the callbacks get their new parameters, how to wait.
struct LameApplySteps {
  // SCHED_DEADLINE runtime/period (nullopt: normal scheduling) of slot `slot`'s running thread;
  // "" or the kernel's refusal.
  std::function<std::string(int slot, const std::optional<Reservation>&)> set_reservation;
  // The callbacks' new parameters (a ready-queue swap); empty when they did not change.
  std::function<void()> reconfigure;
  // Blocks the calling thread for `d` (the controller's, never an executor thread): sleeps.
  std::function<void(Duration d)> wait = [](Duration d) { std::this_thread::sleep_for(std::chrono::nanoseconds(d)); };
};
// A slot the kernel still refused, with its reason.
struct LameRefusal {
  int slot = 0;
  std::string error;
};
// The one rule for bringing running threads from the reservations `current` to `next` (both
// controllers call it: the C++ executor's and chainrt.rclpy's). In lame_apply_order's order;
// a grow refused before the shrinks is tried again after them; and when a slot left
// SCHED_DEADLINE in this step and a slot is still refused, waits once for the longest period
// of the slots that left (+1 ms) and tries the refused ones again — Linux returns a departing
// thread's bandwidth only at its 0-lag time (the inactive timer of switched_from_dl), at most
// one of its periods after sched_setattr, so a reservation that grows into it in the same step
// is refused (EBUSY; seen on real ROS 2 when a plan took the BE classes' budgets away and merged
// the RT classes). `current` becomes what the threads hold; returns the refusals left (those
// threads keep their old parameters). Not thread-safe; allocates; may block in `steps.wait`.
std::vector<LameRefusal> lame_apply(std::vector<std::optional<Reservation>>& current,
                                    const std::vector<std::optional<Reservation>>& next, int cores,
                                    const LameApplySteps& steps);

// The SCHED_DEADLINE bandwidth per core in ‰ that chainrt's reservations may take: the
// kernel's admission limit (sched_rt_runtime_us / sched_rt_period_us; -1 = no limit → 1000)
// less the 5 % of the fair-class deadline server (Linux >= 6.12); 950 when unreadable.
int deadline_capacity_permille() noexcept;

}  // namespace chainrt::runtime
