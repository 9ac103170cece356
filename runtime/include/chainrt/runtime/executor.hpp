// chainrt runtime: the real-time executor on rcl. It drives the scheduling module shared with
// the simulator and the other executors (sched::Dispatcher): mechanism here, policy there.
//
// EDF ready-queue paper, Sec. IV-A, with incremental updating:
//  - readyQueue updating (Algorithm 2) is event driven instead of a full refresh: the DDS
//    layer's "new message" listener (rmw on_new_message callback) enlists the subscription in a
//    lock-free dirty list and wakes an idle thread; an executor thread takes the enlisted
//    subscriptions' messages into their preallocated input rings and pushes them with the
//    deadline of their chain instance (O(log n) each); timers are released by the executor's
//    clock (O(1) when none is due). Selection never rescans every callback, so the cost of a
//    dispatch does not grow with the number of callbacks (the paper's executor refreshes the
//    whole wait set before every selection, Sec. VI-B / Fig. 6).
//  - callback selection (Algorithm 1) is sched::Dispatcher::take under ONE lock, a
//    priority-inheritance mutex (LaME Sec. 4.1 RT mutex); running groups are frozen while a
//    thread selects, which is the skippedGroups rule; affinity masks restrict the threads.
//  - one queued instance per callback; a subscription with more inputs is queued again as soon
//    as its instance is taken; timer overruns follow sched::TimerClock (skipped releases are
//    counted as drops, the running instance keeps its release and deadline).
//  - chain instances: a timer starting a chain stamps its instance with d = a + D (Sec. IV-B);
//    subscriptions inherit the stamp of their input message (see node.hpp, Stamp).
// Admission (the Dispatcher's, the rule the simulator uses too): ready work enters the queue at
// once (readyQueue policies), at polling points (ROS default: the readySet of the default
// executor, Sec. II, cleared and refilled with the ready callbacks whose group can run at that
// instant) or, for LaME's best-effort threads, at a refresh (LaME Sec. 4.1).
//
// ROS time (clock.hpp): a timer on a ROS or system clock is released by that clock, with the
// overrun rule of sched::TimerClock applied in that clock's time. The executor registers an rcl
// jump callback on every ROS clock its timers use (threshold: clock change, any forward or
// backward jump, as rcl's timers do): /clock moving wakes an idle thread, which re-reads the
// clock and releases what is due; while /clock stands still no ROS-clock timer is released.
// Jumps are handled as rcl_timer handles them: a switch between system and simulated time keeps
// the part of the period still to wait (re-armed at the first non-zero ROS time); a backward
// jump before the timer's last call re-arms it one period after the new time; a forward jump
// past several periods releases once and counts the skipped ones as drops.
// Chain instances stay on the executor's clock: a timer released by ROS time stamps its
// instance with the executor-clock time at which the executor saw it due (under system time:
// that time less the lateness, at most one period), and its EDF deadline is that release + D.
// Response times and deadline misses are real durations; simulated time only decides *when* a
// chain is released. (Sim time slower or faster than wall time does not stretch deadlines.)
//
// Threads: one per sched::ThreadSpec, with its SCHED_FIFO priority, pinning and SCHED_DEADLINE
// reservation (threads.hpp); without privilege: a warning and normal scheduling.
// Dispatch path: no allocation and no exception after start(); user exceptions are caught,
// reported with the callback's name and counted, and the executor goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/controlled_executor.hpp"
#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/node.hpp"
#include "chainrt/runtime/threads.hpp"
#include "chainrt/sched/dispatcher.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::runtime {

// A processing chain as the executor monitors it (callbacks by name; the first is its source
// timer; the leaves, by default the last callback, complete an instance).
struct ChainSpec {
  std::string name;
  std::vector<std::string> callbacks;
  std::vector<std::string> leaves;  // empty: {callbacks.back()}
  Duration period = 0;
  Duration deadline = 0;            // relative deadline D_i

  // The monitored view of a model chain: its callbacks, and as leaves the last callback of
  // every root-to-leaf path (a branching chain ends when all of them completed).
  static ChainSpec of(const Chain& chain);
};

struct ExecutorOptions {
  Policy policy = Policy::RosDefault;
  std::vector<sched::ThreadSpec> threads;  // empty: one thread with default scheduling
  std::size_t trace_capacity = 1 << 16;    // dispatch records kept (a ring)
  std::size_t samples_per_chain = 1 << 17; // response times kept per chain (a ring)
  Duration stats_period = 0;               // publish chain stats every ...; 0: never
  // chainrt_msgs/msg/ChainStats messages (monitor_msg.hpp); events go to events_topic(stats_topic)
  std::string stats_topic = "/chainrt/chain_stats";
  // Create the events publisher (events_topic(stats_topic)) even when stats_period is 0, for
  // publish_event() (LaME's controller decisions).
  bool monitoring_events = false;
  std::string run_id;                      // carried by every monitoring message
  std::string name = "chainrt_executor";
  bool print_exceptions = true;            // report user exceptions on stderr
  Duration record_from = 0;                // chain instances released earlier are not measured
  // Baseline for the overhead benchmark only: before every selection, poll EVERY subscription
  // (rcl_take) as the EDF paper's executor refreshes its whole wait set (Algorithm 2); O(n)
  // per selection instead of the event-driven O(changed).
  bool full_refresh = false;
  // The executor's clock, in ns (empty: CLOCK_MONOTONIC). Timers are released on it and
  // dispatches are stamped with it; deterministic scenarios (tests, simulated time) inject
  // their own. Called on the dispatch path by executor threads: must be thread-safe and must
  // neither allocate nor block. With an injected clock an idle thread re-reads it at least
  // every millisecond (the clock may be advanced from outside).
  std::function<Duration()> clock;
  // The release epoch of the timers on the executor's clock (sched::ReleaseGrid: releases at
  // epoch + offset + k·period). Unset: the run's epoch, sched::release_epoch() (the environment's
  // CHAINRT_RELEASE_EPOCH_NS, else the process-wide one) on CLOCK_MONOTONIC; with an injected
  // clock: its time at prepare().
  std::optional<Duration> release_epoch;
  // ros-default: the order among ready callbacks of one kind as rclcpp >= 28 has it (a fixed,
  // unspecified permutation of the registration order; sched::wait_set_order) drawn from this
  // seed; unset: registration order (the published models of the default executor).
  std::optional<std::uint64_t> wait_set_seed;
  // Called when an instance of chain `chain` (index in add_chain order) completes after its
  // deadline (LaME's controller activates at once on an RT miss). Runs on an executor thread
  // on the dispatch path, under the ready-queue lock: must not block, allocate or call the
  // executor.
  std::function<void(std::uint32_t chain)> on_deadline_miss;
};

class Executor : public ControlledExecutor {
 public:
  explicit Executor(Context& context, ExecutorOptions options = {});
  ~Executor() override;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Registration (before prepare/start). Callback ids follow the creation order of the
  // entities (the registration order that breaks ties in the ready queue).
  void add_node(Node& node);
  void add_chain(ChainSpec chain);
  // Chain instances released before `t` (CLOCK_MONOTONIC ns) are not measured (warm-up).
  void measure_from(Duration t) noexcept {
    options_.record_from = t;
    monitor_.record_from(t);
  }

  // Resolve names, allocate every structure, arm the timers on the release grid
  // (sched::ReleaseGrid; ExecutorOptions::release_epoch) and attach the DDS listeners. start() calls it when needed.
  void prepare();
  void start();                    // start the threads (and the stats publisher)
  void request_stop() noexcept;    // async-signal-safe
  void join();
  void spin_for(Duration d);       // start, run d (or until stopped), stop, join
  void spin();                     // start, run until stopped (signal or request_stop), join
  bool stop_requested() const noexcept { return stop_.load(std::memory_order_acquire) != 0; }

  // Deterministic-scenario hook: take what is ready now into the ready queue without
  // dispatching (only while no executor thread runs). Returns the number of ready instances.
  std::size_t poll_ready();

  std::size_t callback_count() const noexcept override { return slots_.size(); }
  sched::CallbackId id_of(const std::string& name) const noexcept;
  const std::string& name_of(sched::CallbackId id) const noexcept;
  sched::CallbackId callback_id(const std::string& name) const override { return id_of(name); }
  std::string callback_name(sched::CallbackId id) const override { return name_of(id); }
  Policy policy() const noexcept { return options_.policy; }
  std::size_t thread_count() const noexcept { return threads_spec_.size(); }

  // ---- Reconfiguration of a running executor (LaME's controller, lame_controller.hpp) ----
  // Called from a non-executor thread after prepare() (before or after start()); each takes
  // the ready-queue lock briefly and none may be called from a callback.
  //
  // Kernel thread id (gettid) of executor thread t once it has applied its ThreadSpec; 0
  // before. Lock-free, no allocation.
  int thread_tid(sched::ThreadId t) const noexcept;
  // Give running thread t a SCHED_DEADLINE reservation (budget/period), or normal scheduling
  // when `r` is empty: sched_setattr on the thread (threads.hpp). Returns "" on success, else
  // why it was refused (the thread keeps its old parameters). No lock; allocates only on error.
  std::string set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) override;
  // Replace the callbacks' scheduling parameters (by CallbackId: group, priority, affinity;
  // the kind and wait-set position are kept) and the callback groups. Builds a new ready queue
  // outside the lock (allocates), then under the lock carries every queued instance (with its
  // deadline) and every running instance over and swaps it in: no callback instance is lost,
  // a running one completes on its thread. O(n log n) under the lock. Throws
  // std::invalid_argument on a spec count or group id that does not fit.
  void reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec> groups) override;
  // The scheduling parameters of callback `id` now (a copy; takes the lock).
  sched::CallbackSpec spec_of(sched::CallbackId id) const override;
  // Per callback (by CallbackId), the largest thread-CPU time of one instance since the
  // previous call (0: none ran), and restart that window. `out` is resized to the callback
  // count (no allocation when it has the capacity).
  void take_cpu_max(std::vector<Duration>& out);
  // The same with the kCpuWindowTop largest times (descending, 0: fewer ran) and the number of
  // instances per callback: a controller's robust estimate (LaME) drops outliers with them.
  void take_cpu_window(std::vector<CpuWindow>& out) override;
  // Publishes `json` (one JSON object with an "event" key, std_msgs/String) on the events topic
  // (events_topic(stats_topic), next to the statistics); false when there is no events publisher
  // (stats_period 0 and monitoring_events unset, or not started). Not for executor threads:
  // allocates and publishes (rcl_publish; thread-safe).
  bool publish_event(const std::string& json) override;

  RunReport report(std::size_t max_samples = SIZE_MAX) const;
  std::vector<DispatchRecord> trace() const;       // oldest first
  std::vector<std::string> warnings() const;
  std::uint64_t exceptions() const;

 private:
  struct Slot;
  struct ClockWatch;  // the timers of one non-steady clock (ROS time)
  static void on_time_jump(const rcl_time_jump_t* jump, bool before_jump, void* user);
  void harvest_clocks(Duration now) noexcept;
  Duration clocks_timeout() const noexcept;  // ns until a non-steady timer is due; -1: none
  void thread_main(sched::ThreadId t);
  // prepare()'s stages: callbacks and their specs, chains, timers.
  void register_callbacks(const std::vector<Entity*>& entities, std::vector<sched::CallbackSpec>& specs,
                          std::vector<sched::GroupSpec>& groups);
  void bind_chains();
  void arm_timers();
  void watch_clock(Slot& s);
  void harvest(Duration now, bool idle = false) noexcept;  // Algorithm 2, incrementally; idle: the
                                                          // thread was waiting (release jitter)
  void make_ready(sched::CallbackId id) noexcept;
  Duration ready_deadline(sched::CallbackId id) const noexcept;
  void dispatch(sched::ThreadId t, sched::CallbackId id, Duration now,
                std::unique_lock<PiMutex>& lk, const LateWake& late = {}) noexcept;  // late: threads.hpp
  void wake_others() noexcept;
  Duration clock_now() const noexcept { return options_.clock ? options_.clock() : now_ns(); }
  void stats_main();
  void trace_registration();  // standard tracing (tracing.hpp), at prepare()
  static void on_new_message(const void* user, std::size_t n);
  static void enlist(const void* user) noexcept;  // the listener's work: dirty list, wake a thread
  friend void end_publish() noexcept;

  Context* context_;
  ExecutorOptions options_;
  std::vector<Node*> nodes_;
  std::vector<ChainSpec> chain_specs_;
  std::vector<sched::ThreadSpec> threads_spec_;
  bool prepared_ = false;
  bool started_ = false;

  mutable PiMutex mutex_;
  // The ready queue, admission, running threads and release grid (sched/dispatcher.hpp).
  std::unique_ptr<sched::Dispatcher> dispatcher_;
  struct Readiness;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::unique_ptr<ClockWatch>> clocks_;
  Duration next_timer_due_ = 0;
  ChainMonitor monitor_;  // chain instances, response times, the dispatch trace (chain_track.hpp)
  std::vector<std::string> warnings_;
  std::atomic<Slot*> dirty_{nullptr};
  // Deliveries held back by a publishing thread (end_publish) and not yet enlisted: the
  // destructor waits for none, since each names a Slot of this executor.
  std::atomic<std::uint32_t> deferred_{0};
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<std::uint32_t> sleepers_{0};
  std::atomic<bool> wake_pending_{false};  // a wake-up is on its way to the sleepers
  std::atomic<std::uint32_t> stop_{0};
  // Set by join() once every worker thread has ended: the statistics thread's last message waits
  // for it, so that it counts an instance a worker was still finishing when the stop came.
  std::atomic<std::uint32_t> workers_joined_{0};
  Duration started_at_ = 0, stopped_at_ = 0;

  std::unique_ptr<std::atomic<int>[]> tids_;     // per thread: gettid() once set up, else 0

  std::vector<std::thread> threads_;
  std::thread stats_thread_;
  std::unique_ptr<Node> stats_node_;
  std::shared_ptr<PublisherBase> stats_pub_;   // Publisher<chainrt_msgs::msg::ChainStats>
  std::shared_ptr<PublisherBase> events_pub_;  // Publisher<std_msgs::msg::String>
};

// SIGINT/SIGTERM stop every started executor of the process (request_stop); a second signal
// restores the default action. Idempotent.
void install_signal_handlers();
// True once SIGINT/SIGTERM arrived after install_signal_handlers().
bool signal_received() noexcept;
// Forget a received signal (tests, or an application that starts executors again).
void clear_signal() noexcept;

}  // namespace chainrt::runtime
