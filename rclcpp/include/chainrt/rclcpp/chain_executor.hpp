// chainrt rclcpp: ChainExecutor, an rclcpp::Executor that runs UNMODIFIED rclcpp nodes (timers,
// subscriptions incl. intra-process, services, clients, actions and every other waitable, QoS
// events) with chainrt's scheduling: the ready queue, admission rule, timer rule and policies of
// the C++ runtime, the rclpy executor and the simulator (sched::Dispatcher, sched::TimerClock;
// every policy of policies.def), on one or more threads with the
// model's pinning, SCHED_FIFO and SCHED_DEADLINE.
//
//   chainrt::rclcpp::ChainExecutor exec;                        // monitoring only, ros-default
//   chainrt::rclcpp::ChainExecutor exec("system.yaml");         // a model binds the callbacks
//   exec.set_callback_priority(timer, 10);                      // or marks in code say it (below)
//   exec.add_node(node);  exec.spin();
//
// Papers: EDF ready-queue paper Sec. IV-A (readyQueue, Algorithm 1 selection with the
// skippedGroups rule, Algorithm 2 updating, event driven as in the runtime: see executor.hpp of
// chainrt::runtime), Sec. IV-B (chain instances carry d = a + D); PiCAS (callback priorities);
// LaME Sec. 4.1/4.3 (thread classes, the online controller).
//
// How it sits in rclcpp (29.x; 28.x has the same API): nodes and callback groups are tracked by
// rclcpp's own ExecutorEntitiesCollector (the base class's add_node / add_callback_group /
// remove_*: rclcpp's contract, e.g. a node belongs to one executor). Readiness is event driven
// as in rclcpp's EventsExecutor — the rcl/rmw "on new message/request/response" callbacks,
// Waitable::set_on_ready_callback (intra-process subscriptions, QoS events, actions) and the
// executor's notify waitable (guard conditions of nodes and groups: entities added or removed,
// cancel(), shutdown) — but instead of EventsExecutor's FIFO of events the ready work goes into
// the shared sched::Dispatcher (its ready queue and admission rule), and it honours
// callback groups (EventsExecutor ignores them): a mutually exclusive group never runs two
// callbacks at once, on any number of threads (the ready queue's group lanes), a reentrant one may.
// rclcpp's wait-set path (get_next_ready_executable, a wait set rebuilt per wait) is not used:
// its cost grows with the number of entities at every wait (rclcpp's SingleThreadedExecutor
// and MultiThreadedExecutor), the cost the EDF paper measures in Sec. VI-B.
//
// Timers: a timer on the steady clock (create_wall_timer, rclcpp's default for nodes'
// wall timers) is released by sched::TimerClock (rcl's overrun rule) on the executor's clock,
// armed on the release grid when it is bound to a model callback (the model's offset from the
// run's epoch, as every chainrt executor arms its timers; docs/model.md, "Timer phases"), else at
// rcl's next call time; re-armed at rcl's next call time when reset, never released while
// cancelled; at its release the executor calls rcl_timer_call itself (TimerInfo's expected call
// time is the release). A timer on ROS or system time is released when rcl says it is ready
// (rcl applies the same overrun rule and its time-jump rules); the executor re-reads those
// timers at least every 100 ms and when a ROS clock jumps. Timers of waitables (an action
// server's goal-expiry timer) make the waitable poll itself when they are due.
//
// Binding to a model (runtime/entity_binding.hpp: the rule of docs/model.md, the same code as
// chainrt.rclpy's): node name and timer period / topic / service name. A model callback no
// entity took stops the first spin*() with UnboundModelCallbacks (allow_unbound runs anyway). A
// bound callback gets the model's name, effective
// priority and thread affinity; a timer that starts a model chain stamps its instances
// (release, d = a + D) and the executor hands the instance to the chain's successors in this
// executor when a callback starts (the messages of unmodified nodes carry no stamp), once per
// successor callback (chains with a common prefix share the instance there, as its message). Entities
// the model does not have run last and are listed (unmatched()). Without a model every entity
// runs under ros-default (or the policy given) and is monitored.
//
// Monitoring: the runtime's figures (runtime/monitor.hpp) — per callback instances, CPU and
// wall times, exceptions, drops; per chain response times and deadline misses — in report()
// and, every stats_period, on `stats_topic` (/chainrt/chain_stats, chainrt_msgs/msg/ChainStats,
// runtime/monitor_msg.hpp) with the dispatches since the previous message, so `chainrt
// discover`, `chainrt profile --write` and `chainrt run`'s verdicts work on rclcpp nodes.
//
// Deviations from rclcpp's executors (docs/rclcpp.md): an exception of a user callback is
// reported with the callback's name and counted, and the executor goes on (rclcpp lets it
// leave spin(); rethrow_exceptions restores that); spin() runs the calling thread as executor
// thread 0 and the others on threads of its own (as MultiThreadedExecutor); spin_some() runs
// what was ready when it was called, in the ready queue's order (rclcpp: timers first).
//
// Threading contract: add_node / remove_node / add_callback_group / cancel from any thread at
// any time (rclcpp's contract); spin* from one thread at a time (a second throws, as rclcpp).
// Dispatch path (the private functions below, marked HOT): no allocation and no exception after
// the first spin while the set of entities stays the same; rclcpp's own take-and-execute code
// (execute_subscription: the message memory strategy) allocates as in every rclcpp executor.
// Adding or removing entities rebuilds the executor's tables on an executor thread (allocates).
#pragma once

#include <rclcpp/executor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/code_model.hpp"
#include "chainrt/runtime/controlled_executor.hpp"
#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/ros_compat.hpp"
#include "chainrt/runtime/threads.hpp"
#include "chainrt/sched/dispatcher.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"

namespace rclcpp {
class Node;
class PublisherBase;
}  // namespace rclcpp

namespace chainrt::runtime {
class EntityBinder;
class LameController;
}  // namespace chainrt::runtime

namespace chainrt::rclcpp {

struct ChainExecutorOptions {
  // The model (a file, or its YAML text) and which of its executors this is ("": the only
  // one, or the one hosting the first node added). Neither: no model (monitoring only).
  std::string model_file;
  std::string model_yaml;
  std::string executor;
  std::optional<Policy> policy;   // default: the model executor's, else ros-default
  std::optional<int> threads;     // N plain threads instead of the model's (1..64)
  bool thread_params = true;      // spin(): apply pinning, SCHED_FIFO, SCHED_DEADLINE
  Duration stats_period = 0;      // monitoring message every ...; 0: none
  std::string stats_topic = "/chainrt/chain_stats";
  std::string run_id;             // of the monitoring messages (default: rclcpp-<pid>)
  bool print_report = false;      // a summary on stderr when spin() returns
  bool print_exceptions = true;   // report user exceptions on stderr
  bool rethrow_exceptions = false;  // rethrow a user exception from spin*, as rclcpp does
  // Run although model callbacks of the executor have no entity (they are then only reported:
  // unused_model_callbacks(), the report's warnings). Default: the first spin*() after a node
  // the model hosts was added throws UnboundModelCallbacks.
  bool allow_unbound = false;
  std::size_t trace_capacity = 1 << 16;     // dispatch records kept (a ring)
  std::size_t samples_per_chain = 1 << 17;  // response times kept per chain (a ring)
  // The executor's clock in ns (empty: CLOCK_MONOTONIC), as runtime::ExecutorOptions::clock:
  // deterministic scenarios inject one. Thread-safe, no allocation, no blocking.
  std::function<Duration()> clock;
  // The release grid's epoch E (CLOCK_MONOTONIC ns) for the timers bound to model callbacks:
  // the k-th release of one with offset o is at E + o + k·period (sched/timer.hpp). Default: the
  // run's, sched::release_epoch (CHAINRT_RELEASE_EPOCH_NS, else the process's first arming + 50 ms).
  std::optional<Duration> release_epoch;
  // ros-default: rclcpp >= 28's wait-set order drawn from this seed (sched::wait_set_order).
  std::optional<std::uint64_t> wait_set_seed;
  // LaME's online controller (runtime/lame_controller.hpp, the runtime's) every this many ns,
  // and at once on an RT chain's deadline miss; 0: none. Needs a model: the executor runs LaME's
  // plan of it (policy lame, one RT and one BE thread per core with the plan's SCHED_DEADLINE
  // budgets); the controller re-plans from the CPU times measured here and applies new budgets
  // and callback priorities/affinities to the running executor. A mutually exclusive callback
  // group whose callbacks the plan puts in different thread classes is split as the plan splits
  // it (docs/lame.md): its callbacks in different classes may then run in parallel.
  Duration lame_controller = 0;
  Duration lame_reservation_period = 10'000'000;
  int lame_capacity_permille = 0;   // 0: the kernel's admission limit less the fair server's
  bool lame_log = true;             // one line per activation on stderr
  ::rclcpp::ExecutorOptions executor_options;  // the context
};

// ---- marks in code (docs/rclcpp.md, "Priorities, deadlines and chains in code") ----------------
// Without a model file, the executor is told in the nodes' own code or at composition time what a
// model would say; at the next spin*() it builds the model of these marks and its entities
// (runtime/code_model.hpp, the model library's Model) and binds and schedules by it exactly as by
// a model file. With a model file, the file wins where both speak. Marks are made before spin*()
// (while spinning they throw std::logic_error); off the dispatch path.

// An entity as rclcpp's create_* returned it (a timer, subscription, service or client).
class Entity {
 public:
  Entity(const ::rclcpp::TimerBase::SharedPtr& t);            // NOLINT: implicit on purpose
  Entity(const ::rclcpp::SubscriptionBase::SharedPtr& s);     // NOLINT
  Entity(const ::rclcpp::ServiceBase::SharedPtr& s);          // NOLINT
  Entity(const ::rclcpp::ClientBase::SharedPtr& c);           // NOLINT
  template <class T, class = std::enable_if_t<std::is_base_of_v<::rclcpp::SubscriptionBase, T> ||
                                             std::is_base_of_v<::rclcpp::TimerBase, T> ||
                                             std::is_base_of_v<::rclcpp::ServiceBase, T> ||
                                             std::is_base_of_v<::rclcpp::ClientBase, T>>>
  Entity(const std::shared_ptr<T>& e)                         // NOLINT: Subscription<Msg>, WallTimer<...>
      : Entity(upcast(e)) {}
  const void* key() const { return key_; }

 private:
  template <class T>
  static auto upcast(const std::shared_ptr<T>& e) {
    if constexpr (std::is_base_of_v<::rclcpp::SubscriptionBase, T>) return ::rclcpp::SubscriptionBase::SharedPtr(e);
    else if constexpr (std::is_base_of_v<::rclcpp::TimerBase, T>) return ::rclcpp::TimerBase::SharedPtr(e);
    else if constexpr (std::is_base_of_v<::rclcpp::ServiceBase, T>) return ::rclcpp::ServiceBase::SharedPtr(e);
    else return ::rclcpp::ClientBase::SharedPtr(e);
  }
  const void* key_ = nullptr;
};

// A callback's marks: its model name ("": "<node>/timer@20ms" and the like), its priority
// (larger = more important, as SCHED_FIFO and PiCAS) and its WCET (0: measured by the monitor
// when the model is saved).
struct CallbackMark {
  std::string name;
  std::optional<int> priority;
  std::chrono::nanoseconds wcet{0};
};

// A chain's marks (the model's chain fields): period (0: its source timer's), end-to-end deadline
// (0: the period), criticality class and level (LaME), chain priority (PiCAS; larger = more
// important).
struct ChainMark {
  std::chrono::nanoseconds deadline{0};
  std::chrono::nanoseconds period{0};
  CriticalityClass criticality_class = CriticalityClass::RealTime;
  int criticality = 0;
  std::optional<int> priority;
};

// An executor thread for a callback group: its name, pinning, SCHED_FIFO priority.
struct ThreadMark {
  std::string name;
  std::vector<int> cores;
  std::optional<int> fifo_priority;
};

// Thrown by the first spin*() when model callbacks of the executor have no entity: the model does
// not describe the nodes added (a wrong period, a renamed topic or service, a node not added).
// The message names each such callback and the nearest real entity, one per line.
class UnboundModelCallbacks : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class ChainExecutor : public ::rclcpp::Executor, public runtime::ControlledExecutor {
 public:
  RCLCPP_SMART_PTR_DEFINITIONS(ChainExecutor)

  // No model: monitoring only (ros-default unless options.policy).
  ChainExecutor();
  explicit ChainExecutor(ChainExecutorOptions options);
  // The model in file `model_file` (throws std::invalid_argument with a one-line reason when it
  // cannot be loaded).
  explicit ChainExecutor(const std::string& model_file, ChainExecutorOptions options = {});
  ~ChainExecutor() override;

  // rclcpp::Executor's contract. spin(): until cancel() or the context shuts down, on the
  // executor's threads (thread 0 = the caller). spin_once(): one callback (waiting at most
  // `timeout`). spin_some() / spin_all(): what is ready now (spin_all: until nothing is).
  // spin_until_future_complete(): base class, one callback at a time, the future re-checked at
  // least every 100 ms.
  using ::rclcpp::Executor::add_node;
  using ::rclcpp::Executor::remove_node;
  void add_node(::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node, bool notify = true) override;
  void add_callback_group(::rclcpp::CallbackGroup::SharedPtr group,
                          ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node,
                          bool notify = true) override;
#if !CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES
  // rclcpp 28 (Jazzy) tells a derived executor of no change: these call handle_updated_entities.
  void remove_node(::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node, bool notify = true) override;
  void remove_callback_group(::rclcpp::CallbackGroup::SharedPtr group, bool notify = true) override;
#endif
  void spin() override;
  void spin_some(std::chrono::nanoseconds max_duration = std::chrono::nanoseconds(0)) override;
  void spin_all(std::chrono::nanoseconds max_duration) override;
  void cancel() override;

  // Bind an entity explicitly to model callback `model_callback` (wins over the matching rule):
  // the timer, subscription, service, client or waitable as rclcpp's create_* returned it. Off
  // the dispatch path (rebuilds the tables).
  void bind(const std::string& model_callback, const ::rclcpp::TimerBase::SharedPtr& timer);
  void bind(const std::string& model_callback, const ::rclcpp::SubscriptionBase::SharedPtr& subscription);
  void bind(const std::string& model_callback, const ::rclcpp::ServiceBase::SharedPtr& service);
  void bind(const std::string& model_callback, const ::rclcpp::ClientBase::SharedPtr& client);
  void bind(const std::string& model_callback, const ::rclcpp::Waitable::SharedPtr& waitable);
  // Marks in code (see above). set_callback_priority is mark(e, {.priority = p}); a chain lists
  // its entities source first (a subscription after X means X publishes its topic; a service
  // after X means X calls it); every callback of `group` runs on executor thread `thread`.
  void set_callback_priority(const Entity& e, int priority);
  void mark(const Entity& e, CallbackMark m);
  void add_chain(const std::string& name, const std::vector<Entity>& callbacks, ChainMark m = {});
  void set_callback_group_thread(const ::rclcpp::CallbackGroup::SharedPtr& group, ThreadMark thread);
  // The model the executor runs by (with marks: the one built of them; without marks or a
  // model: one of the entities added so far), as the model library writes it (yaml_io.hpp), so
  // that `chainrt check/analyze/simulate/synthesize` read it. A callback without a WCET gets the
  // monitor's largest measured CPU time; one never run and never given one makes it throw
  // std::invalid_argument naming it. Not while spinning (std::logic_error).
  std::string model_yaml();
  void save_model(const std::string& path);
  // What the model file overrode of the marks (also in warnings()).
  std::vector<std::string> mark_notes() const;

  // Entities the model does not describe (they run last), and model callbacks no entity was
  // bound to. Updated when the entities change.
  std::vector<std::string> unmatched() const;
  std::vector<std::string> unused_model_callbacks() const;

  Policy policy() const;
  std::size_t thread_count() const;
  // Chain instances released before now are not measured (a warm-up).
  void record_from_now();
  // The monitor (runtime/monitor.hpp's report and JSON); the dispatch trace, oldest first,
  // callbacks named by name_of(record.callback). Thread-safe; allocate.
  runtime::RunReport report(std::size_t max_samples = SIZE_MAX) const;
  std::string report_json(bool with_samples = false) const;
  std::vector<runtime::DispatchRecord> trace() const;
  std::string name_of(sched::CallbackId monitor_id) const;
  std::uint64_t exceptions() const;
  std::vector<std::string> warnings() const;
  // LaME's controller activations so far as a JSON array ("[]" without a controller).
  std::string lame_log_json() const;

  // runtime::ControlledExecutor (LaME's controller; callbacks of the current tables). Off the
  // dispatch path: each takes the ready-queue lock briefly and may allocate.
  std::size_t callback_count() const override;
  sched::CallbackId callback_id(const std::string& name) const override;
  std::string callback_name(sched::CallbackId id) const override;
  sched::CallbackSpec spec_of(sched::CallbackId id) const override;
  std::string set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) override;
  void reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec> groups) override;
  void take_cpu_window(std::vector<runtime::CpuWindow>& out) override;
  bool publish_event(const std::string& json) override;

 protected:
  void spin_once_impl(std::chrono::nanoseconds timeout) override;
  ::rclcpp::FutureReturnCode spin_until_future_complete_impl(
      std::chrono::nanoseconds timeout,
      const std::function<std::future_status(std::chrono::nanoseconds)>& wait_for_future) override;
  // The base class's add_* / remove_* call it (rclcpp 29; on rclcpp 28 this class's overrides of
  // them do, runtime/ros_compat.hpp): the entities changed.
#if CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES
  void handle_updated_entities(bool notify) override;
#else
  void handle_updated_entities(bool notify);
#endif

 private:
  struct Slot;
  struct ModelCb;
  struct Tables;
  struct Bound;
  struct Running {
    Slot* slot = nullptr;
    sched::CallbackId qid = sched::kNoCallback;  // what the dispatcher counts as running
  };
  struct Readiness;

  void init();
  void bind_key(const std::string& model_callback, const void* key);
  // Marks: the model of them built and bound (start_checks, when they changed); the inputs of
  // runtime::model_from_code gathered from the current slots.
  struct Marks {
    std::vector<std::pair<const void*, CallbackMark>> callbacks;
    struct Chain {
      std::string name;
      std::vector<const void*> keys;
      ChainMark mark;
    };
    std::vector<Chain> chains;
    std::vector<std::pair<const void*, ThreadMark>> groups;  // by callback group
    std::vector<std::string> notes;                          // what the model file overrode
    bool dirty = false;                                      // changed since applied
  };
  // What the marks need of one listed timer, subscription, service or client (rebuild_mutex_
  // held; the tables' order).
  struct EntityView {
    const void* key = nullptr;
    const void* group = nullptr;
    bool reentrant = false;
    std::string fq_node;
    CallbackKind kind = CallbackKind::Timer;
    Duration period = 0;
    std::string topic;
    std::string model_name;  // "" when bound to no model callback
    Duration cpu_max = 0;
  };
  std::vector<EntityView> entity_views() const;
  runtime::CodeMarks gather(std::vector<const void*>& keys) const;
  // The nodes still alive, added ones first, then those of added groups (may repeat a node).
  // The caller holds nodes_mutex_. Allocates.
  std::vector<::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr> live_nodes() const;
  void check_markable() const;
  bool marks_pending() const;
  void apply_marks();
  // rebuild_mutex_ held, no executor thread running: `m` becomes the executor's model (its
  // executor `executor`), every entity is bound again at the next rebuild.
  void adopt_model(std::unique_ptr<Model> m, const std::string& executor);
  Model current_model();
  // At the start of every spin*(): the tables up to date; throws UnboundModelCallbacks when a
  // model callback has no entity (unless allow_unbound).
  void start_checks();
  void bind_model(const std::vector<std::string>& node_names);
  void init_chains();
  void spin_some_impl(std::chrono::nanoseconds max_duration, bool exhaustive);
  void start_stats();
  void stop_stats();
  void start_lame();
  void stop_lame();
  Duration clock_now() const noexcept;
  // Rebuild the tables from rclcpp's collection when entities changed (allocates; any
  // executor thread; carries queued work over). Returns whether anything changed.
  bool rebuild();
  // rebuild()'s stages (rebuild_mutex_ held): collect, match, tables, install.
  struct Rebuild;
  void collect_groups(Rebuild& r);
  void collect_entities(Rebuild& r);
  void match_slots(Rebuild& r);
  std::unique_ptr<Tables> make_tables(Rebuild& r);
  // The ready queue's groups of `slots` (specs[i] is slots[i]'s; sets its group): rclcpp's
  // callback groups, each mutually exclusive one split where LaME's plan puts its callbacks in
  // different groups (lame_params_; as chainrt's runtime runs the plan's groups: else an RT
  // callback waits for a BE group-mate that runs on a BE budget). Lock held; allocates.
  std::vector<sched::GroupSpec> lanes(const std::vector<Slot*>& slots, std::vector<sched::CallbackSpec>& specs) const;
  void prepare_created(Rebuild& r);
  void install_tables(Rebuild& r, std::unique_ptr<Tables> T);
  struct FoundGroup;  // a callback group and its node
  void name_slot(const Rebuild& r, Slot& s, const FoundGroup& f, const std::string& label);
  // A new slot described from its rclcpp entity.
  void describe(const Rebuild& r, Slot& s, const ::rclcpp::SubscriptionBase::SharedPtr& sub, const FoundGroup& f);
  void describe(const Rebuild& r, Slot& s, const ::rclcpp::TimerBase::SharedPtr& tm, const FoundGroup& f);
  void describe(const Rebuild& r, Slot& s, const ::rclcpp::Waitable::SharedPtr& w, const FoundGroup& f);
  void describe_endpoint(const Rebuild& r, Slot& s, CallbackKind kind, const std::string& service,
                         const FoundGroup& f);
  void install(Slot& s);    // event callbacks of a new entity
  void uninstall(Slot& s);  // ... of a removed one

  // HOT: an rmw/rcl thread (or a thread triggering a guard condition) reports events of `s`:
  // counts them, enlists `s` in the lock-free dirty list, wakes a sleeping executor thread —
  // once the callback running on the reporting thread returned, when that thread is a
  // ChainExecutor's inside a dispatch (flush_deferred). Lock-free, no allocation.
  static void on_event(Slot* s, std::size_t n, int waitable_data) noexcept;
  static void enlist(Slot* s) noexcept;  // the dirty list and the wake-up of on_event
  // HOT: the events this thread's dispatch held back, enlisted (after the user's callback).
  static void flush_deferred() noexcept;
  // HOT: wake sleeping executor threads (futex); lock-free, no allocation.
  void wake_others() noexcept;
  // HOT (ready-queue lock held): Algorithm 2 incrementally — the enlisted slots, the steady
  // timers when one is due (O(1) otherwise), the rcl-timed timers when their check is due.
  void harvest(Duration now) noexcept;
  void make_ready(Slot& s) noexcept;
  // a steady timer's first release (`first`: on creation; else after a reset); the grid index it starts at
  std::int64_t arm(Slot& s, Duration now, bool first) noexcept;
  Duration ready_deadline(const Slot& s) const noexcept;
  // HOT: take `id` for thread `t` (lock held), run it without the lock, record it. Catches
  // every exception of the callback. `late`: the thread's late wake-up before it (threads.hpp),
  // kept in its dispatch record.
  void dispatch(sched::ThreadId t, sched::CallbackId id, std::unique_lock<runtime::PiMutex>& lk,
                const runtime::LateWake& late = {});
  // dispatch()'s stages: the instance taken (lock held; no allocation), the user's callback run
  // (no lock), the first exception kept for spin() (rethrow_exceptions).
  struct Taken {
    sched::Stamp stamp;
    int wid = -1;          // a waitable's entity id with data (-2: other data; -1: none)
    bool poll = false;     // a waitable whose timer is due polls itself
    Duration queued_deadline = 0;
  };
  Taken take(sched::ThreadId t, sched::CallbackId id) noexcept;
  bool invoke(sched::ThreadId t, Slot& s, const Taken& k);
  void keep_exception();
  // One selection on thread `t`, waiting until `until` (executor clock; kNoDeadline: no
  // limit) for work; false when none came (timeout, cancel, shutdown).
  bool run_one(sched::ThreadId t, Duration until, bool wait);
  void thread_main(sched::ThreadId t);
  void stats_main();
  void rethrow_pending();
  void print_summary() const;

  ChainExecutorOptions options_;
  std::unique_ptr<Model> model_;    // parsed at construction, bound at the first rebuild
  std::string model_text_, model_origin_;
  std::unique_ptr<runtime::EntityBinder> binder_;
  std::unique_ptr<runtime::LameController> lame_;
  bool lame_attached_ = false;
  // LaME's decision by model callback (kept across rebuilds): priority, affinity over the slots,
  // and the callback's group in LaME's plan (which splits a mutually exclusive group whose
  // callbacks are in different thread classes, docs/lame.md)
  struct LameParams {
    std::optional<int> priority;
    sched::AffinityMask affinity = sched::kAnyThread;
    sched::GroupId group = 0;
  };
  std::vector<std::optional<LameParams>> lame_params_;
  std::unique_ptr<Bound> bound_;     // chain state by model callback and chain
  std::vector<sched::ThreadSpec> threads_spec_;
  Policy policy_ = Policy::RosDefault;

  mutable runtime::PiMutex mutex_;  // the ready-queue lock (priority inheritance)
  mutable std::mutex rebuild_mutex_;  // one rebuild at a time (and the marks)
  std::unique_ptr<Tables> tables_;  // current slots and their dispatcher
  mutable std::mutex nodes_mutex_;
  std::vector<::rclcpp::node_interfaces::NodeBaseInterface::WeakPtr> nodes_;  // in the order added
  std::vector<std::pair<::rclcpp::CallbackGroup::WeakPtr, ::rclcpp::node_interfaces::NodeBaseInterface::WeakPtr>>
      group_nodes_;
  std::vector<std::unique_ptr<Slot>> all_slots_;  // every slot ever made (stable pointers)
  std::vector<std::unique_ptr<ModelCb>> model_cbs_;
  std::vector<Running> running_;    // per thread
  std::atomic<Slot*> dirty_{nullptr};
  std::atomic<bool> rebuild_requested_{true};
  std::atomic<bool> unbound_{false};  // model callbacks without an entity (the last rebuild's)
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<std::uint32_t> deferred_{0};  // this executor's slots in another thread's held-back list
  std::atomic<std::uint32_t> sleepers_{0};
  std::atomic<bool> wake_pending_{false};
  Duration next_timer_due_ = 0;     // earliest release of a steady timer not yet released
  Duration next_rcl_check_ = 0;     // when rcl-timed timers are read again
  Duration started_at_ = 0;
  std::vector<std::string> warnings_;
  std::vector<std::pair<std::string, const void*>> explicit_;
  std::unique_ptr<Marks> marks_;
  std::unique_ptr<Model> file_model_;  // the model file as loaded (marks are built on it)
  std::vector<std::pair<const void*, std::string>> code_names_;  // entity -> callback of the marks' model
  runtime::ChainMonitor monitor_;  // chains by model index, response times, the dispatch trace
  std::vector<std::string> monitor_names_;  // by monitor id (slot creation order)
  std::exception_ptr pending_exception_;
  std::vector<std::thread> helpers_;
  std::thread stats_thread_;
  std::shared_ptr<::rclcpp::Node> stats_node_;
  std::shared_ptr<::rclcpp::PublisherBase> stats_pub_;   // chainrt_msgs::msg::ChainStats
  std::shared_ptr<::rclcpp::PublisherBase> events_pub_;  // std_msgs::msg::String (LaME's decisions)
  std::mutex publish_mutex_;
  std::atomic<std::uint32_t> stats_stop_{0};
  std::uint64_t stats_seq_ = 0;
  std::vector<std::atomic<int>> tids_;
};

}  // namespace chainrt::rclcpp
