// chainrt._rclpy_exec: the hot loop of chainrt.rclpy (the rclpy executor) in C++.
//
// Owns, for one chainrt.rclpy executor: the readiness of its rclpy entities, the sched
// ReadyQueue that orders them (EDF ready-queue paper Sec. IV-A, Algorithm 1; PiCAS/FP, mixed,
// ros-default through sched::key_of) and the sched::Admission rule that says when ready work
// enters it (ros-default's polling points, LaME's best-effort refresh) — both shared with the
// C++ runtime, the rclcpp executor and the simulator — the chain instances that travel from
// callback to callback (d_i^k = a_i^k + D_i, Sec. IV-B) and the run-time monitor (runtime/monitor.hpp: the same
// LatencyRecorder, RunReport and JSON as the C++ runtime). Python only takes the data of the
// selected entity and calls the user's callback; the wait, the ready-queue update and the
// selection happen here, without the GIL.
//
// Readiness is event driven, as rclpy's EventsExecutor does it (no rcl_wait, no wait-set
// rebuild per callback): rcl's on-new-message / on-new-request / on-new-response callbacks
// (called on the middleware's threads) count pending events per entity; timers are polled
// with rcl_timer_get_time_until_next_call at every selection (O(timers)). Entities that rcl
// cannot report this way (guard conditions with callbacks, waitables other than rclpy's QoS
// event handlers, which are rcl events with event callbacks) are pushed by Python
// (push_external) from a watcher thread.
//
// Threading contract: every method may be called from any thread; one std::mutex protects
// the state. next() sleeps without the GIL; a call that runs without the GIL takes it back
// through gil.hpp (a thread other than the exiting one is parked once the interpreter exits).
// The rcl event callbacks only take the mutex to post a wake-up. Allocation: storage is sized
// in the constructor; next()/done() allocate nothing (report_json allocates, it is off the
// dispatch path).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <rcl/client.h>
#include <rcl/error_handling.h>
#include <rcl/event.h>
#include <rcl/service.h>
#include <rcl/subscription.h>
#include <rcl/timer.h>
#include <rcutils/allocator.h>
#include <rmw/rmw.h>
#include <rmw/serialized_message.h>
#include <rosidl_typesupport_cpp/message_type_support.hpp>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/code_model.hpp"
#include "chainrt/runtime/entity_binding.hpp"
#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/dispatch_context.hpp"
#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/monitor_msg.hpp"
#include "chainrt/runtime/threads.hpp"
#include "chainrt/runtime/tracing.hpp"
#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/ready_queue.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"
#include "gil.hpp"
#if defined(CHAINRT_LAME_RUNTIME_AVAILABLE)
#include "chainrt/lame/controller.hpp"
#include "chainrt/runtime/lame_controller.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace chainrt::rclpy_exec {

// `m` serialized as the middleware serializes it (rmw_serialize, CDR): what an rclpy Publisher
// of chainrt_msgs/msg/ChainStats publishes as is (publish(bytes)). Allocates.
static std::string serialized(const chainrt_msgs::msg::ChainStats& m) {
  rmw_serialized_message_t buf = rmw_get_zero_initialized_serialized_message();
  rcutils_allocator_t alloc = rcutils_get_default_allocator();
  if (rmw_serialized_message_init(&buf, 0, &alloc) != RMW_RET_OK) throw std::bad_alloc();
  const rmw_ret_t rc =
      rmw_serialize(&m, rosidl_typesupport_cpp::get_message_type_support_handle<chainrt_msgs::msg::ChainStats>(), &buf);
  std::string out = rc == RMW_RET_OK ? std::string(reinterpret_cast<const char*>(buf.buffer), buf.buffer_length) : "";
  (void)rmw_serialized_message_fini(&buf);
  if (rc != RMW_RET_OK) throw std::runtime_error("the monitoring message could not be serialized");
  return out;
}

using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

// kEvent: an rcl_event_t (rclpy's QoS EventHandler waitables), ordered as a client (last).
enum Kind : int { kTimer = 0, kSubscription = 1, kService = 2, kClient = 3, kExternal = 4, kEvent = 5 };

inline Duration mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Duration(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
inline Duration thread_cpu_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Duration(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

using runtime::kNoChain;

// A chain instance (release a_i^k, absolute deadline d_i^k, chain, k) and the fixed-capacity
// FIFO of those waiting at a subscription (inputs published by its chain predecessor in this
// executor, not yet taken): the runtime's (chain_track.hpp; push/pop allocate nothing, guarded
// here by m_).
using runtime::Stamp;
using runtime::StampRing;

// "arrival" order: the key of the dispatch running on this thread (-1: none). A message sent
// from inside a dispatch and delivered at once (Fast DDS hands a message to a reader of the same
// process in the writer's thread) takes this key rather than the clock: the work a stimulus
// causes keeps the stimulus's place in the queue (oldest stimulus first), so a chain's later
// hops are not queued behind unrelated inputs that arrived while its earlier hops ran.
// Written by begin()/done() of the thread's own dispatch, read by on_event() on the same thread.
thread_local Duration tl_dispatch_key = -1;

// Fixed-capacity FIFO of the arrival times of an entity's pending inputs ("arrival" order).
class ArrivalRing {
 public:
  void reserve(std::size_t n) { ring_.assign(n, 0); }
  void push(Duration t) noexcept {
    if (size_ == ring_.size()) return;  // more pending than remembered: the rest keep the last key
    ring_[(head_ + size_) % ring_.size()] = t;
    ++size_;
  }
  bool empty() const noexcept { return size_ == 0; }
  Duration front() const noexcept { return ring_[head_]; }
  void pop() noexcept { if (size_) { head_ = (head_ + 1) % ring_.size(); --size_; } }
 private:
  std::vector<Duration> ring_;
  std::size_t head_ = 0, size_ = 0;
};

struct Entity {
  int kind = kExternal;
  void* handle = nullptr;   // rcl_timer_t*, rcl_subscription_t*, ...
  std::atomic<std::int64_t> pending{0};  // middleware events not yet taken
  Stamp queued;             // the instance it is queued with
  StampRing inputs;         // chain instances at a subscription
  ArrivalRing arrivals;     // when its pending inputs arrived ("arrival" order)
  Duration last_arrival = 0;
  std::uint32_t starts_chain = kNoChain;  // a timer that releases a chain
  Duration chain_rel_deadline = kNoDeadline;
  // chain successors: (successor entity, chain); leaf_of: chains whose last callback this is
  std::vector<std::pair<CallbackId, std::uint32_t>> successors;
  std::vector<std::uint32_t> leaf_of;
  runtime::CallbackStats stats;
  runtime::CpuWindow window;  // largest CPU times since the last take_cpu_window() (LaME)
  std::uint32_t running = 0;  // instances now running
  // A model-bound timer on the release grid (arm_timer, sched::ReleaseGrid): released by this
  // clock on CLOCK_MONOTONIC instead of rcl's next call time (rcl_timer_call still runs it).
  bool on_grid = false;
  sched::TimerClock grid;
  std::uint64_t instances_released = 0;  // a timer that starts a chain: its instance counter
};

struct Running {
  CallbackId cb = kNoCallback;
  Stamp stamp;
  Duration start = 0, cpu0 = 0;
};

class Loop {
 public:
  // entities: (kind, rcl handle address (0: external), group, priority or None, affinity, name)
  Loop(const std::string& policy, std::vector<bool> group_reentrant,
       const std::vector<std::tuple<int, std::uintptr_t, std::uint32_t, std::optional<int>,
                                    std::uint64_t, std::string>>& entities,
       const std::vector<std::tuple<std::string, Duration, Duration, std::vector<std::vector<CallbackId>>>>& chains,
       const std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>, Duration, Duration, bool>>& threads,
       std::size_t sample_capacity, const std::vector<std::uint32_t>& take_positions = {})
      : entities_(entities.size()) {
    // "arrival": rclpy's EventsExecutor's order, earliest ready first -- the EDF queue keyed by
    // each input's arrival (a timer's by its release): EDF with every relative deadline 0. The
    // default without a model (chain deadlines are not used for the order then).
    arrival_ = policy == "arrival";
    auto p = arrival_ ? std::optional<Policy>(Policy::Edf) : policy_from(policy);
    if (!p) throw std::invalid_argument("unknown policy '" + policy + "'");
    policy_name_ = arrival_ ? std::string("arrival") : std::string(to_string(*p));
    std::vector<sched::CallbackSpec> specs;
    std::vector<sched::GroupSpec> groups;
    for (bool r : group_reentrant)
      groups.push_back(sched::GroupSpec{r ? GroupType::Reentrant : GroupType::MutuallyExclusive});
    if (groups.empty()) groups.push_back(sched::GroupSpec{});
    for (std::size_t i = 0; i < entities.size(); ++i) {
      const auto& [kind, handle, group, prio, affinity, name] = entities[i];
      Entity& e = entities_[i];
      e.kind = kind;
      e.handle = reinterpret_cast<void*>(handle);
      e.stats.name = name;
      e.inputs.reserve(64);
      e.arrivals.reserve(64);
      sched::CallbackSpec s;
      s.kind = kind == kTimer ? CallbackKind::Timer
             : kind == kService ? CallbackKind::Service
             : kind == kClient || kind == kEvent ? CallbackKind::Client : CallbackKind::Subscription;
      if (group >= groups.size()) throw std::invalid_argument("callback group out of range");
      s.group = group;
      s.priority = prio;
      s.affinity = affinity;
      specs.push_back(s);
      if (kind == kTimer) timers_.push_back(static_cast<CallbackId>(i));
    }
    // take_positions (ros-default only): rclpy's own SingleThreadedExecutor's take order
    // instead of ROS 2's default order. rclpy takes what one wait returned node by node, with
    // no rank of kinds across nodes: the ros-default key's kind rank is made equal for all and
    // the ordering is the given position (sched::CallbackSpec::wait_set_position, the key's
    // tie-break before registration order).
    if (!take_positions.empty() && policy == "ros-default") {
      if (take_positions.size() != specs.size()) throw std::invalid_argument("take_positions: one per entity");
      for (std::size_t i = 0; i < specs.size(); ++i) {
        specs[i].kind = CallbackKind::Timer;
        specs[i].wait_set_position = take_positions[i];
      }
    }
    for (const auto& [name, cores, fifo, budget, period, rt] : threads) {
      sched::ThreadSpec ts;
      ts.name = name;
      ts.role = rt ? CriticalityClass::RealTime : CriticalityClass::BestEffort;
      ts.cores = cores;
      ts.fifo_priority = fifo;
      if (budget > 0 && period > 0) ts.reservation = Reservation{budget, period};
      threads_.push_back(std::move(ts));
    }
    if (threads_.empty()) { sched::ThreadSpec ts; ts.name = "t0"; threads_.push_back(std::move(ts)); }
    policy_ = *p;
    groups_ = groups;
    tids_ = std::vector<std::atomic<int>>(threads_.size());
    queue_ = std::make_unique<sched::ReadyQueue>(*p, std::move(specs), std::move(groups), threads_.size());
    // When ready work enters queue_: the rule of the C++ runtime, the rclcpp executor and the
    // simulator (sched/admission.hpp), e.g. ros-default's polling points.
    std::vector<bool> rt;
    for (const auto& ts : threads_) rt.push_back(ts.role == CriticalityClass::RealTime);
    admission_ = std::make_unique<sched::Admission>(*queue_, sched::admission_rule(*p, rt), rt);
    running_.resize(threads_.size());
    for (std::uint32_t c = 0; c < chains.size(); ++c) {
      const auto& [name, period, deadline, paths] = chains[c];
      runtime::ChainStats st;
      st.name = name;
      st.period_ns = period;
      st.deadline_ns = deadline;
      chain_stats_.push_back(st);
      chain_misses_.push_back(0);
      latency_.emplace_back();
      latency_.back().reserve(sample_capacity);
      chain_members_.emplace_back();
      for (const auto& path : paths) {
        if (path.empty()) continue;
        for (CallbackId id : path) {
          check(id);
          auto& m = chain_members_.back();
          if (std::find(m.begin(), m.end(), id) == m.end()) m.push_back(id);
        }
        Entity& src = entities_[path.front()];
        if (src.kind == kTimer) runtime::choose_source_chain(src.starts_chain, src.chain_rel_deadline, c, deadline);
        for (std::size_t k = 0; k + 1 < path.size(); ++k) {
          auto& succ = entities_[path[k]].successors;
          std::pair<CallbackId, std::uint32_t> s{path[k + 1], c};
          if (std::find(succ.begin(), succ.end(), s) == succ.end()) succ.push_back(s);
        }
        auto& leaf = entities_[path.back()].leaf_of;
        if (std::find(leaf.begin(), leaf.end(), c) == leaf.end()) leaf.push_back(c);
      }
    }
    // The deadline an instance of chain c carries to its later callbacks: D_c, or less when its
    // timer's instance has a smaller one (the instance is one; the simulator's chain key).
    for (std::uint32_t c = 0; c < chain_stats_.size(); ++c) {
      const Duration d = chain_stats_[c].deadline_ns;
      Duration key = d > 0 ? d : kNoDeadline;
      if (key != kNoDeadline && !chain_members_[c].empty())
        key = std::min(key, entities_[chain_members_[c].front()].chain_rel_deadline);
      chain_key_.push_back(key);
    }
    // Event callbacks last: rcl calls them at once for events that arrived before.
    for (std::size_t i = 0; i < entities_.size(); ++i) install(static_cast<CallbackId>(i), true);
    started_at_ = mono_ns();
  }

  ~Loop() { detach(); }

  // Unregister the rcl event callbacks (before the entities or this loop go away).
  void detach() {
    if (detached_) return;
    detached_ = true;
    for (std::size_t i = 0; i < entities_.size(); ++i) install(static_cast<CallbackId>(i), false);
  }

  // Wait for and select the next callback for executor thread `t`: the most urgent queued
  // callback it may run (Algorithm 1). Returns its id; -1 on timeout (timeout_ns < 0: none),
  // -2 when woken by wake(), -3 when stopped. Called without the GIL.
  std::int64_t next(std::uint32_t t, Duration timeout_ns) {
    if (t >= threads_.size()) throw std::invalid_argument("thread index out of range");
    const Duration until = timeout_ns < 0 ? kNoDeadline : mono_ns() + timeout_ns;
    std::unique_lock<std::mutex> lk(m_);
    bool idle = false;  // this thread waited since it last looked (release jitter, arm_timer)
    for (;;) {
      if (stop_) return -3;
      const Duration now = mono_ns();
      const Duration next_timer = harvest(now, idle);
      idle = false;
      // Admission (a polling point of the default executor, LaME's best-effort refresh) and
      // Algorithm 1, as in the runtime and the simulator (sched::Admission::next).
      const CallbackId cb = admission_->next(t, AdmissionSource{this});
      if (cb != kNoCallback) {
        begin(t, cb);
        if (!queue_->empty()) cv_.notify_one();  // work left for another thread
        return cb;
      }
      if (admission_->admitted() && sleepers_) cv_.notify_all();
      if (woken_ > 0) { --woken_; return -2; }
      if (now >= until) return -1;
      const Duration wake_at = std::min(until, next_timer);
      ++sleepers_;
      if (wake_at == kNoDeadline) cv_.wait(lk);
      else cv_.wait_for(lk, std::chrono::nanoseconds(std::max<Duration>(wake_at - now, 0)));
      --sleepers_;
      idle = true;
    }
  }

  // The selected callback `cb` of thread `t` has finished. ran: the user's callback was called
  // (false when the take found no data); threw: it raised.
  void done(std::uint32_t t, CallbackId cb, bool ran, bool threw) {
    tl_dispatch_key = -1;
    runtime::clear_dispatch();
    const Duration cpu1 = thread_cpu_ns();
    const Duration finish = mono_ns();
    if (hooks_.callback_end && cb < entities_.size()) hooks_.callback_end(&entities_[cb]);
    std::unique_lock<std::mutex> lk(m_);
    Running& r = running_[t];
    if (r.cb != cb) throw std::invalid_argument("done() for a callback this thread does not run");
    Entity& e = entities_[cb];
    if (ran) {
      auto& cs = e.stats;
      ++cs.instances;
      if (threw) ++cs.exceptions;
      const Duration cpu = cpu1 - r.cpu0;
      const Duration wall = finish - r.start;
      cs.cpu_total += cpu;
      cs.cpu_max = std::max(cs.cpu_max, cpu);
      cs.cpu_min = cs.instances == 1 ? cpu : std::min(cs.cpu_min, cpu);
      e.window.record(cpu);
      cs.wall_total += wall;
      cs.wall_max = std::max(cs.wall_max, wall);
      cs.wall_min = cs.instances == 1 ? wall : std::min(cs.wall_min, wall);
      // the dispatch trace the monitoring messages carry (preallocated ring, no allocation)
      trace_[dispatches_ % trace_.size()] =
          runtime::DispatchRecord{cb, t, r.start, finish, cpu, r.stamp.deadline, r.stamp.release};
      ++dispatches_;
      if (r.stamp.chain != kNoChain) {
        for (std::uint32_t c : e.leaf_of)
          if (c == r.stamp.chain && r.stamp.release >= record_from_) {
            latency_[c].record(finish - r.stamp.release, chain_stats_[c].deadline_ns);
            const bool missed = chain_stats_[c].deadline_ns > 0 && finish - r.stamp.release > chain_stats_[c].deadline_ns;
            if (missed) ++chain_misses_[c];
            if (hooks_.chain_complete)
              hooks_.chain_complete(this, c, r.stamp.instance, &e, r.stamp.release, r.stamp.deadline, missed ? 1 : 0);
          }
      }
    }
    r.cb = kNoCallback;
    --e.running;
    queue_->complete(cb);
    if (!queue_->empty() && sleepers_) cv_.notify_all();
  }

  // Queue an entity that rcl cannot report by event (guard condition, waitable, task).
  void push_external(CallbackId cb) {
    check(cb);
    std::unique_lock<std::mutex> lk(m_);
    entities_[cb].pending.fetch_add(1);
    arrived(entities_[cb], 1);
    dirty_ = true;
    cv_.notify_all();
  }

  // Make one next() return -2 (rclpy's Executor.wake(): nodes, tasks or futures changed).
  void wake() {
    std::unique_lock<std::mutex> lk(m_);
    woken_ = static_cast<std::uint32_t>(std::max<std::size_t>(sleepers_, 1));
    cv_.notify_all();
  }
  void stop() {
    std::unique_lock<std::mutex> lk(m_);
    stop_ = true;
    cv_.notify_all();
  }
  void restart() {
    std::unique_lock<std::mutex> lk(m_);
    stop_ = false;
    woken_ = 0;
  }

  // Apply thread t's model parameters (pinning, SCHED_FIFO, SCHED_DEADLINE) to the calling
  // thread with the C++ runtime's rule and fallback; returns (pinned, fifo, deadline, warnings).
  std::tuple<bool, bool, bool, std::vector<std::string>> apply_thread(std::uint32_t t) {
    if (t >= threads_.size()) throw std::invalid_argument("thread index out of range");
    runtime::ThreadSetupResult r = runtime::apply_thread_spec(threads_[t]);
    tids_[t].store(static_cast<int>(gettid()), std::memory_order_release);
    std::unique_lock<std::mutex> lk(m_);
    for (auto& w : r.warnings) warnings_.push_back(w);
    return {r.pinned, r.fifo, r.deadline, r.warnings};
  }

  // ---- what an adaptive controller (LaME) needs; off the dispatch path, allocate ----------
  // Per callback that ran since the previous call: (name, instances, largest CPU times,
  // descending); restarts the window.
  std::vector<std::tuple<std::string, std::uint64_t, std::vector<Duration>>> take_cpu_window() {
    std::vector<std::tuple<std::string, std::uint64_t, std::vector<Duration>>> out;
    std::unique_lock<std::mutex> lk(m_);
    for (auto& e : entities_) {
      if (e.window.count)
        out.emplace_back(e.stats.name, e.window.count,
                         std::vector<Duration>(e.window.largest.begin(), e.window.largest.end()));
      e.window = runtime::CpuWindow{};
    }
    return out;
  }
  // Deadline misses per chain (model order) since the start.
  std::vector<std::uint64_t> chain_misses() {
    std::unique_lock<std::mutex> lk(m_);
    return chain_misses_;
  }
  std::vector<std::string> chain_names() const {
    std::vector<std::string> out;
    for (const auto& c : chain_stats_) out.push_back(c.name);
    return out;
  }
  // SCHED_DEADLINE runtime/period (budget 0: none) of executor thread t while it runs; "" or
  // the kernel's refusal.
  std::string set_thread_reservation(std::uint32_t t, Duration budget, Duration period) {
    if (t >= threads_.size()) throw std::invalid_argument("thread index out of range");
    const int tid = tids_[t].load(std::memory_order_acquire);
    if (tid == 0) return "executor thread " + std::to_string(t) + " is not running";
    std::optional<Reservation> r;
    if (budget > 0 && period > 0) r = Reservation{budget, period};
    return runtime::set_thread_reservation(tid, r);
  }
  // New priority and affinity mask for the callbacks named in `params` (others keep theirs), as
  // Executor::reconfigure does it: a new ready queue built outside the lock, queued and running
  // instances carried over under it, then swapped in (none is lost).
  void reconfigure(const std::vector<std::tuple<std::string, std::optional<int>, std::uint64_t>>& params) {
    std::vector<sched::CallbackSpec> specs;
    {
      std::unique_lock<std::mutex> lk(m_);
      for (CallbackId id = 0; id < entities_.size(); ++id) specs.push_back(queue_->spec(id));
    }
    for (const auto& [name, prio, aff] : params)
      for (CallbackId id = 0; id < entities_.size(); ++id)
        if (entities_[id].stats.name == name) {
          specs[id].priority = prio;
          specs[id].affinity = aff;
        }
    auto fresh = std::make_unique<sched::ReadyQueue>(policy_, std::move(specs), groups_, threads_.size());
    std::unique_lock<std::mutex> lk(m_);
    for (const auto& r : running_)
      if (r.cb != kNoCallback) fresh->start(r.cb);
    for (CallbackId id = 0; id < entities_.size(); ++id)
      if (queue_->queued(id)) fresh->push(id, queue_->deadline(id));
    // The admission rule keeps pointing at *queue_ (its waiting work carries over as is).
    std::swap(*queue_, *fresh);
    cv_.notify_all();  // threads may now see work their old masks hid
  }

  void add_warning(const std::string& w) {
    std::unique_lock<std::mutex> lk(m_);
    warnings_.push_back(w);
  }
  // Chain response-time statistics afresh from t: what was recorded so far is dropped, and an
  // instance released before t is not recorded (callback statistics are kept).
  void set_record_from(Duration t) {
    std::unique_lock<std::mutex> lk(m_);
    record_from_ = t;
    for (std::size_t c = 0; c < latency_.size(); ++c) {
      const std::size_t capacity = latency_[c].capacity();
      latency_[c] = runtime::LatencyRecorder{};
      latency_[c].reserve(capacity);
      chain_misses_[c] = 0;
    }
  }

  // Release of the chain instance now running on thread t (0 when none) and its deadline.
  std::tuple<Duration, Duration> current_stamp(std::uint32_t t) {
    std::unique_lock<std::mutex> lk(m_);
    const Stamp& s = running_.at(t).stamp;
    return {s.chain == kNoChain ? 0 : s.release, s.deadline};
  }
  // The grid instant (CLOCK_MONOTONIC) the timer now running on thread t was released at, whether
  // or not it starts a chain; 0 when what runs there is not a timer on the release grid.
  Duration current_grid_release(std::uint32_t t) {
    std::unique_lock<std::mutex> lk(m_);
    const Running& r = running_.at(t);
    return r.cb < entities_.size() && entities_[r.cb].on_grid ? r.stamp.release : 0;
  }
  // Give the next input of subscription `cb` a chain instance released at `release` (the
  // cross-process mechanism: the release comes from the message, e.g. its header stamp).
  void set_input_release(std::uint32_t t, Duration release) {
    std::unique_lock<std::mutex> lk(m_);
    Running& r = running_.at(t);
    if (r.cb == kNoCallback) return;
    for (std::uint32_t c = 0; c < chain_members_.size(); ++c)
      if (!chain_members_[c].empty() && chain_members_[c].front() == r.cb) {
        r.stamp = Stamp{.release = release,
                        .deadline = chain_stats_[c].deadline_ns > 0 ? release + chain_stats_[c].deadline_ns : kNoDeadline,
                        .chain = c,
                        .instance = input_instance_++};
        if (hooks_.chain_release) hooks_.chain_release(this, c, r.stamp.instance, r.stamp.release, r.stamp.deadline);
        return;
      }
  }

  std::size_t thread_count() const noexcept { return threads_.size(); }
  std::string policy() const { return policy_name_; }
  std::uint64_t dispatches() {
    std::unique_lock<std::mutex> lk(m_);
    return dispatches_;
  }

  // The monitor's report, in the C++ runtime's JSON (runtime/monitor.hpp to_json).
  std::string report_json(bool with_samples, std::size_t max_samples) {
    return runtime::to_json(report(max_samples), with_samples);
  }

  // The monitor's figures (allocates; thread-safe).
  runtime::RunReport report(std::size_t max_samples) {
    runtime::RunReport r;
    r.policy = policy_name_;
    r.threads = threads_.size();
    std::unique_lock<std::mutex> lk(m_);
    r.duration_ns = mono_ns() - started_at_;
    r.dispatches = dispatches_;
    r.warnings = warnings_;
    for (auto& e : entities_) r.callbacks.push_back(e.stats);
    for (std::size_t c = 0; c < chain_stats_.size(); ++c) {
      runtime::ChainStats st = chain_stats_[c];
      latency_[c].summarize(st, max_samples);
      for (CallbackId id : chain_members_[c]) st.drops += entities_[id].stats.drops;
      r.chains.push_back(std::move(st));
    }
    return r;
  }

  // Arm timer `id` (a model-bound timer with this period and model offset) on the release grid
  // (sched::ReleaseGrid): released at epoch + offset + k·period on CLOCK_MONOTONIC, the epoch
  // the run's (CHAINRT_RELEASE_EPOCH_NS, else the process-wide one), so that the model's
  // offsets hold across executors and processes. A timer armed after its first grid release
  // starts at a later grid index (reported). Call before spinning; thread-safe.
  // `period_den` > 1: the period is period_ns / period_den ns (a model period given as a rate or a
  // fraction, ExactPeriod).
  void arm_timer(CallbackId id, Duration period_ns, Duration offset_ns, std::int64_t period_den) {
    check(id);
    std::unique_lock<std::mutex> lk(m_);
    Entity& e = entities_[id];
    if (e.kind != kTimer || period_ns <= 0 || offset_ns < 0 || period_den < 1 || period_ns / period_den <= 0)
      throw std::invalid_argument("arm_timer: not a timer");
    const Duration now = mono_ns();
    const ExactPeriod period{period_ns, period_den};
    const sched::ReleaseGrid grid{sched::release_epoch(now), offset_ns % period.whole(), period};
    const sched::ReleaseGrid::Start st = grid.start(now);
    e.grid = grid.clock(now);
    e.on_grid = true;
    e.stats.grid_start_index = st.start_index;
    if (st.start_index > 0)
      warnings_.push_back("timer '" + e.stats.name + "' armed " + std::to_string(now - grid.at(0)) +
                          " ns after its first grid release: it starts at grid index " +
                          std::to_string(st.start_index) + " (its offset holds; the common start of the run's "
                          "timers does not — set " + sched::kReleaseEpochEnv + " for every process of the run)");
    cv_.notify_all();
  }

  // Where callback `id` lives (fully qualified node, kind, topic), reported with its figures so
  // that tools match callbacks by place (chainrt profile). Not thread-safe against a running loop:
  // call before spinning.
  void set_place(CallbackId id, const std::string& node, const std::string& kind, const std::string& topic) {
    check(id);
    std::unique_lock<std::mutex> lk(m_);
    auto& cs = entities_[id].stats;
    cs.node = node, cs.kind = kind, cs.topic = topic;
  }

  // One monitoring message, as the C++ executors publish it (chainrt_msgs/msg/ChainStats,
  // runtime::to_message; docs/runtime.md), serialized (CDR): the report (with chain samples),
  // run_id, executor, seq (the caller's message counter, kept across loops), and the dispatches
  // since the previous call (measured ones only, started at or after set_record_from) with
  // samples_lost, the dispatches the trace ring overwrote before they could be taken.
  // Allocates; off the dispatch path; thread-safe.
  std::string monitor_message(const std::string& run_id, const std::string& executor, std::uint64_t seq) {
    runtime::RunReport r = report(2048);
    r.run_id = run_id;
    r.executor = executor;
    std::vector<runtime::DispatchRecord> recent;
    std::vector<std::string> names;
    std::uint64_t lost = 0;
    {
      std::unique_lock<std::mutex> lk(m_);
      const std::uint64_t cap = trace_.size();
      const std::uint64_t from = std::max<std::uint64_t>(published_, dispatches_ > cap ? dispatches_ - cap : 0);
      lost = from - published_;
      for (std::uint64_t i = from; i < dispatches_; ++i)
        if (trace_[i % cap].start >= record_from_) recent.push_back(trace_[i % cap]);
      published_ = dispatches_;
      for (const auto& e : entities_) names.push_back(e.stats.name);
    }
    chainrt_msgs::msg::ChainStats msg;
    runtime::to_message(r, seq, lost, recent, names, msg);
    return serialized(msg);
  }

 private:
  void check(CallbackId cb) const {
    if (cb >= entities_.size()) throw std::invalid_argument("callback id out of range");
  }

  static void on_event(const void* user, size_t n) {
    auto* slot = static_cast<const std::pair<Loop*, CallbackId>*>(user);
    Loop* self = slot->first;
    self->entities_[slot->second].pending.fetch_add(static_cast<std::int64_t>(n));
    std::unique_lock<std::mutex> lk(self->m_);  // no lost wake-up against next()
    self->arrived(self->entities_[slot->second], n);
    self->dirty_ = true;
    if (self->sleepers_) self->cv_.notify_one();
  }

  // n inputs of `e` arrived now (under m_).
  void arrived(Entity& e, std::size_t n) noexcept {
    if (!arrival_) return;
    e.last_arrival = tl_dispatch_key >= 0 ? tl_dispatch_key : mono_ns();
    for (std::size_t k = 0; k < n; ++k) e.arrivals.push(e.last_arrival);
  }

  void install(CallbackId id, bool on) {
    Entity& e = entities_[id];
    if (!e.handle) return;
    if (slots_.empty()) {
      slots_.resize(entities_.size());
      for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i] = {this, static_cast<CallbackId>(i)};
    }
    rcl_event_callback_t fn = on ? &Loop::on_event : nullptr;
    const void* user = on ? &slots_[id] : nullptr;
    rcl_ret_t ret = RCL_RET_OK;
    switch (e.kind) {
      case kSubscription:
        ret = rcl_subscription_set_on_new_message_callback(static_cast<rcl_subscription_t*>(e.handle), fn, user);
        break;
      case kService:
        ret = rcl_service_set_on_new_request_callback(static_cast<rcl_service_t*>(e.handle), fn, user);
        break;
      case kClient:
        ret = rcl_client_set_on_new_response_callback(static_cast<rcl_client_t*>(e.handle), fn, user);
        break;
      case kEvent:
        ret = rcl_event_set_callback(static_cast<rcl_event_t*>(e.handle), fn, user);
        break;
      default: break;
    }
    if (ret != RCL_RET_OK) {
      if (on) warnings_.push_back("callback '" + e.stats.name + "': rcl refused its event callback (" +
                                  rcl_get_error_string().str + "); it will not run");
      rcl_reset_error();
    }
  }

  // The admission rule's view of the entities (sched::Admission's Src): a timer is ready once it
  // was released (it stays due until it runs), any other entity while it has pending events.
  // The key is the instance's absolute deadline, or its arrival ("arrival" order).
  struct AdmissionSource {
    const Loop* loop;
    bool ready(CallbackId id) const noexcept {
      const Entity& e = loop->entities_[id];
      return e.kind == kTimer || e.pending.load(std::memory_order_relaxed) > 0;
    }
    Duration deadline(CallbackId id) const noexcept {
      const Entity& e = loop->entities_[id];
      if (!loop->arrival_) return e.queued.deadline;
      if (e.kind == kTimer) return e.queued.release;
      return e.arrivals.empty() ? e.last_arrival : e.arrivals.front();
    }
  };

  // Move what became ready into the admission rule (under the lock); returns the next timer release.
  // idle: the calling thread waited until now (a grid timer's lateness is release jitter).
  Duration harvest(Duration now, bool idle = false) noexcept {
    Duration next_due = kNoDeadline;
    for (CallbackId id : timers_) {
      Entity& e = entities_[id];
      if (admission_->holds(id) || e.running) continue;  // taken only when it runs
      if (e.on_grid && grid_ready(e, now, idle, next_due)) {
        admission_->released(id, AdmissionSource{this});
        continue;
      }
      if (e.on_grid) continue;
      std::int64_t left = 0;
      if (rcl_timer_get_time_until_next_call(static_cast<rcl_timer_t*>(e.handle), &left) != RCL_RET_OK) {
        rcl_reset_error();  // cancelled or invalid: not ready
        continue;
      }
      if (left <= 0) {
        // rcl skips the periods a late timer missed (as sched::TimerClock's overrun rule):
        // count them as drops, as the C++ runtime does.
        std::int64_t period = 0;
        if (rcl_timer_get_period(static_cast<rcl_timer_t*>(e.handle), &period) == RCL_RET_OK && period > 0)
          e.stats.drops += static_cast<std::uint64_t>(-left / period);
        else
          rcl_reset_error();
        const Duration release = now + left;
        e.queued = Stamp{.release = release,
                         .deadline = e.chain_rel_deadline == kNoDeadline ? kNoDeadline : release + e.chain_rel_deadline,
                         .chain = e.starts_chain,
                         .instance = e.starts_chain == kNoChain ? 0 : e.instances_released++};
        if (e.starts_chain != kNoChain && hooks_.chain_release)
          hooks_.chain_release(this, e.starts_chain, e.queued.instance, e.queued.release, e.queued.deadline);
        admission_->released(id, AdmissionSource{this});
      } else {
        next_due = std::min(next_due, now + left);
      }
    }
    if (dirty_) {
      dirty_ = false;
      for (CallbackId id = 0; id < entities_.size(); ++id) {
        Entity& e = entities_[id];
        if (e.kind == kTimer || e.pending.load(std::memory_order_relaxed) <= 0 || admission_->holds(id)) continue;
        e.queued = e.inputs.empty() ? Stamp{} : e.inputs.front();
        admission_->released(id, AdmissionSource{this});
      }
    }
    return next_due;
  }

  // A grid timer (arm_timer): true when its release is due — its stamp set, lateness recorded
  // when a thread waited for it, skipped grid releases counted as drops (sched::TimerClock's
  // overrun rule) — else its next release lowers next_due. A cancelled timer is never due; one
  // whose period was changed leaves the grid (rcl's own next call time from then on).
  bool grid_ready(Entity& e, Duration now, bool idle, Duration& next_due) noexcept {
    auto* timer = static_cast<rcl_timer_t*>(e.handle);
    bool cancelled = false;
    std::int64_t period = 0;
    if (rcl_timer_is_canceled(timer, &cancelled) != RCL_RET_OK ||
        rcl_timer_get_period(timer, &period) != RCL_RET_OK) {
      rcl_reset_error();
      return false;
    }
    if (cancelled) return false;
    if (period != e.grid.period) {
      e.on_grid = false;
      return false;
    }
    if (!e.grid.ready(now)) {
      next_due = std::min(next_due, e.grid.next);
      return false;
    }
    if (idle) e.stats.release_jitter.record(now - e.grid.next);
    const sched::TimerClock::Take tk = e.grid.take(now);
    e.stats.drops += static_cast<std::uint64_t>(tk.skipped);
    e.queued = Stamp{.release = tk.released,
                     .deadline = e.chain_rel_deadline == kNoDeadline ? kNoDeadline : tk.released + e.chain_rel_deadline,
                     .chain = e.starts_chain,
                     .instance = e.starts_chain == kNoChain ? 0 : e.instances_released++};
    if (e.starts_chain != kNoChain && hooks_.chain_release)
      hooks_.chain_release(this, e.starts_chain, e.queued.instance, e.queued.release, e.queued.deadline);
    return true;
  }

  void begin(std::uint32_t t, CallbackId cb) noexcept {
    Entity& e = entities_[cb];
    Running& r = running_[t];
    r.cb = cb;
    r.stamp = e.queued;
    ++e.running;
    // The callback's priority for what it asks on the chain's behalf (the accelerator client);
    // the Python callback runs on this thread until done().
    runtime::set_dispatch(runtime::DispatchContext{queue_->spec(cb).priority, cb});
    if (arrival_)
      tl_dispatch_key = e.kind == kTimer ? e.queued.release : (e.arrivals.empty() ? e.last_arrival : e.arrivals.front());
    if (e.kind != kTimer) {
      if (!e.inputs.empty()) e.inputs.pop();
      if (!e.arrivals.empty()) e.arrivals.pop();
      if (e.pending.fetch_sub(1) > 1) dirty_ = true;  // more events: queue it again
    }
    // The chain instance reaches the successors' inputs when this callback STARTS, before it
    // can publish: with several executor threads a successor may be selected (its message
    // arrived) while this callback still runs; stamped at done() it would find no stamp and
    // the instance would be lost (seen with LaME's 4 threads: 15 of 40 instances counted).
    if (r.stamp.chain != kNoChain)
      for (auto [succ, c] : e.successors)
        if (c == r.stamp.chain || chain_members_[c].front() == chain_members_[r.stamp.chain].front())
          entities_[succ].inputs.push(Stamp{.release = r.stamp.release,
                                            .deadline = chain_key_[c] == kNoDeadline ? kNoDeadline : r.stamp.release + chain_key_[c],
                                            .chain = c,
                                            .instance = r.stamp.instance});
    if (hooks_.execute && e.handle) hooks_.execute(e.handle);
    if (hooks_.callback_start) hooks_.callback_start(&e, false);
    r.start = mono_ns();
    r.cpu0 = thread_cpu_ns();
  }

 public:
  // Standard tracing (runtime/tracing.hpp, the C++ executor's events): every entity tied to its
  // rcl handle and named `chainrt:<callback>`, the executor and its chains (provider `chainrt`).
  // The callback pointer of the events is the Entity.
  void trace_registration(const std::string& name) {
    if (!hooks_.any) return;
    for (auto& e : entities_) {
      const std::string symbol = "chainrt:" + e.stats.name;
      if (e.kind == kTimer && e.handle) {
        if (hooks_.timer_callback_added) hooks_.timer_callback_added(e.handle, &e);
      } else if (e.kind == kSubscription && e.handle) {
        if (hooks_.subscription_init) hooks_.subscription_init(e.handle, &e);
        if (hooks_.subscription_callback_added) hooks_.subscription_callback_added(&e, &e);
      }
      if (hooks_.callback_register) hooks_.callback_register(&e, symbol.c_str());
    }
    if (hooks_.executor_init)
      hooks_.executor_init(this, name.c_str(), policy_name_.c_str(), static_cast<std::uint32_t>(threads_.size()));
    for (std::uint32_t c = 0; c < chain_stats_.size(); ++c) {
      if (hooks_.chain_init)
        hooks_.chain_init(this, c, chain_stats_[c].name.c_str(), chain_stats_[c].period_ns, chain_stats_[c].deadline_ns);
      if (!hooks_.chain_callback) continue;
      std::uint32_t pos = 0;
      for (CallbackId id : chain_members_[c]) {
        const auto& leaf = entities_[id].leaf_of;
        hooks_.chain_callback(this, c, pos++, &entities_[id], entities_[id].stats.name.c_str(),
                              std::find(leaf.begin(), leaf.end(), c) != leaf.end() ? 1 : 0);
      }
    }
  }

 private:

  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Entity> entities_;
  std::vector<std::pair<Loop*, CallbackId>> slots_;
  std::vector<CallbackId> timers_;
  std::vector<sched::ThreadSpec> threads_;
  std::unique_ptr<sched::ReadyQueue> queue_;
  std::unique_ptr<sched::Admission> admission_;  // when ready work enters queue_ (shared rule)
  std::vector<Running> running_;
  std::vector<runtime::ChainStats> chain_stats_;
  std::vector<std::uint64_t> chain_misses_;
  std::vector<Duration> chain_key_;  // per chain: the relative deadline its instances carry
  Policy policy_ = Policy::RosDefault;
  std::vector<sched::GroupSpec> groups_;
  std::vector<std::atomic<int>> tids_;
  std::vector<runtime::LatencyRecorder> latency_;
  std::vector<std::vector<CallbackId>> chain_members_;
  std::vector<std::string> warnings_;
  std::string policy_name_;
  std::uint64_t dispatches_ = 0;
  std::vector<runtime::DispatchRecord> trace_ = std::vector<runtime::DispatchRecord>(16384);
  std::uint64_t published_ = 0;  // monitor_message: dispatches already taken
  std::uint64_t input_instance_ = 0;  // instances released by a message (set_input_release)
  const runtime::tracing::Hooks& hooks_ = runtime::tracing::hooks();
  std::size_t sleepers_ = 0;
  std::uint32_t woken_ = 0;
  bool dirty_ = true, stop_ = false, detached_ = false;
  bool arrival_ = false;  // "arrival" order (EventsExecutor's): EDF keyed by arrival times
  Duration started_at_ = 0, record_from_ = 0;
};

// The ReadyQueue inputs the model gives one executor (sched::make_setup): policy, threads
// and, per model callback of the executor in file order, (name, effective priority, affinity
// mask, then what the binding rule sees of it: node, kind, period, period tolerance, topic or
// service; runtime::binding_candidate).
nb::dict model_setup(const std::string& yaml, const std::string& executor,
                     std::optional<std::string> policy, std::optional<int> threads) {
  Model model = load_model_from_string(yaml, "<model>");
  std::size_t ex = model.executors.size();
  for (std::size_t i = 0; i < model.executors.size(); ++i)
    if (model.executors[i].name == executor) ex = i;
  if (ex == model.executors.size()) throw std::invalid_argument("the model has no executor '" + executor + "'");
  std::optional<Policy> pol;
  if (policy) {
    pol = policy_from(*policy);
    if (!pol) throw std::invalid_argument("unknown policy '" + *policy + "'");
  }
  sched::ExecutorSetup s = sched::make_setup(model, ex, pol, threads);
  nb::list th, cbs;
  for (const auto& t : s.threads)
    th.append(nb::make_tuple(t.name, t.cores, t.fifo_priority,
                             t.reservation ? t.reservation->budget : Duration{0},
                             t.reservation ? t.reservation->period : Duration{0},
                             t.role == CriticalityClass::RealTime));
  for (std::size_t i = 0; i < s.callbacks.size(); ++i) {
    const runtime::BindingCandidate b = runtime::binding_candidate(model.callbacks[s.callbacks[i]]);
    cbs.append(nb::make_tuple(b.name, s.specs[i].priority, s.specs[i].affinity, b.node, static_cast<int>(b.kind),
                              b.period, b.tolerance, b.topic));
  }
  nb::dict d;
  d["policy"] = std::string(to_string(s.policy));
  d["threads"] = th;
  d["callbacks"] = cbs;
  return d;
}

// runtime::model_from_code for chainrt.rclpy's marks in code (python/chainrt/rclpy/marks.py):
// the one builder of the model of marks, the rclcpp executor's too. Entities: (node, kind,
// period, topic, group, reentrant, bound, measured, marked, name, priority, wcet, thread);
// threads: (name, cores, fifo); chains: (name, entity indices, period, deadline, criticality
// class name, level, priority). Returns (YAML of the model, model name by entity, notes,
// callbacks without a WCET); ValueError with the one-line reason when a mark names nothing or
// the model is invalid.
using CodeEntityTuple = std::tuple<std::string, int, Duration, std::string, std::string, bool, std::string, Duration,
                                   bool, std::string, std::optional<int>, Duration, std::string>;
using CodeChainTuple = std::tuple<std::string, std::vector<std::size_t>, Duration, Duration, std::string, int,
                                  std::optional<int>>;
std::tuple<std::string, std::vector<std::string>, std::vector<std::string>, std::vector<std::string>> model_from_code(
    std::optional<std::string> base_yaml, const std::string& executor, const std::string& policy, int plain_threads,
    int host_cores, const std::vector<CodeEntityTuple>& entities,
    const std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>>>& threads,
    const std::vector<CodeChainTuple>& chains, bool require_wcet) {
  runtime::CodeMarks in;
  in.executor = executor;
  const auto pol = policy_from(policy);
  if (!pol) throw std::invalid_argument("unknown policy '" + policy + "'");
  in.policy = *pol;
  in.plain_threads = plain_threads;
  in.host_cores = host_cores;
  for (const auto& [node, kind, period, topic, group, reentrant, bound, measured, marked, name, priority, wcet, thread] : entities)
    in.entities.push_back(runtime::CodeEntity{node, static_cast<CallbackKind>(kind), period, topic, group, reentrant, bound,
                                              measured, marked, name, priority, wcet, thread});
  for (const auto& [name, cores, fifo] : threads) in.threads.push_back(runtime::CodeThread{name, cores, fifo});
  for (const auto& [name, members, period, deadline, cls, level, priority] : chains) {
    const auto c = criticality_class_from(cls);
    if (!c) throw std::invalid_argument("chain '" + name + "': unknown criticality '" + cls + "' (rt or be)");
    in.chains.push_back(runtime::CodeChain{name, members, period, deadline, *c, level, priority});
  }
  std::optional<Model> base;
  if (base_yaml) base = load_model_from_string(*base_yaml, "<model>");
  try {
    runtime::CodeModel cm = runtime::model_from_code(in, base ? &*base : nullptr, require_wcet);
    return {save_model_to_string(cm.model), cm.names, cm.notes, cm.unknown_wcet};
  } catch (const ModelError& e) {
    throw std::invalid_argument(e.what());
  }
}

#if defined(CHAINRT_LAME_RUNTIME_AVAILABLE)
// LaME's controller for chainrt.rclpy: the same lame::Controller (Algorithms 1-3, robust
// estimate, budgets first) and the same mapping of a plan onto fixed thread slots and order of
// applying it as the C++ executor's controller (lame/slots.hpp: slot_plan; runtime/lame_controller.hpp:
// lame_apply); this class only feeds it the Loop's measured CPU times and gives lame_apply the
// Loop's threads (sched_setattr) and ready queue. Not thread-safe: one
// controller thread calls step().
class LameControl {
 public:
  LameControl(const std::string& yaml, Duration controller_period, Duration reservation_period, int capacity_permille) {
    Model model = load_model_from_string(yaml, "<model>");
    lame::Options o;
    o.period = reservation_period;
    o.capacity_permille = capacity_permille > 0 ? capacity_permille : runtime::deadline_capacity_permille();
    o.controller_period = controller_period;
    ctl_ = std::make_unique<lame::Controller>(model, o, 0);
    const lame::Allocation& plan = ctl_->plan();
    for (std::size_t e = 0; e < plan.model.executors.size(); ++e)
      if (plan.model.executors[e].name == plan.executor) executor_index_ = e;
    cores_ = lame::plan_cores(plan);
    if (2 * static_cast<std::size_t>(cores_) > sched::kMaxThreads)
      throw std::invalid_argument("the LaME controller runs at most 32 cores");
    current_ = rclpy_slots(lame::slot_plan(plan, executor_index_, cores_).slots);
  }
  // Deviation for Python: BE threads run without a reservation (normal scheduling). All
  // Python callbacks share the GIL; a BE thread throttled by a small SCHED_DEADLINE budget while
  // it holds the GIL blocks every RT thread for as many periods as its callback needs (measured:
  // RT responses of 1.7 s with a 0.8 ms / 10 ms BE budget). Without a reservation it runs
  // whenever the RT threads wait, so an RT thread waits at most for one BE callback.
  std::vector<std::optional<Reservation>> rclpy_slots(std::vector<std::optional<Reservation>> slots) const {
    for (std::size_t s = static_cast<std::size_t>(cores_); s < slots.size(); ++s) slots[s].reset();
    return slots;
  }
  std::string executor() const { return ctl_->plan().executor; }
  // The executor's threads: rt@0.. and be@0.. with the current plan's reservations (the tuple
  // of model_setup()'s "threads": name, cores, fifo, budget, period, real-time).
  std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>, Duration, Duration, bool>> threads() const {
    std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>, Duration, Duration, bool>> out;
    for (std::size_t s = 0; s < current_.size(); ++s) {
      const auto& r = current_[s];
      out.emplace_back(lame::slot_name(static_cast<int>(s), cores_), std::vector<int>{},
                       std::nullopt, r ? r->budget : 0, r ? r->period : 0, s < static_cast<std::size_t>(cores_));
    }
    return out;
  }
  // Per model callback of the planned executor: (name, priority, affinity over the threads).
  std::vector<std::tuple<std::string, std::optional<int>, std::uint64_t>> callbacks() const {
    const lame::SlotPlan sp = lame::slot_plan(ctl_->plan(), executor_index_, cores_);
    std::vector<std::tuple<std::string, std::optional<int>, std::uint64_t>> out;
    for (std::size_t i = 0; i < sp.callbacks.size(); ++i)
      out.emplace_back(sp.callbacks[i], sp.specs[i].priority, sp.specs[i].affinity);
    return out;
  }
  // Model chains that are RT in the current plan (their misses wake the controller).
  std::vector<std::string> rt_chains() const {
    std::vector<std::string> out;
    const lame::Allocation& plan = ctl_->plan();
    for (const auto& p : plan.rt)
      for (int i : p.chains)
        if (std::find(out.begin(), out.end(), plan.lin.chains[i].origin) == out.end())
          out.push_back(plan.lin.chains[i].origin);
    return out;
  }
  // When a deferred demotion is due (ns since the start; 0: none): activate then too.
  Duration demotion_due() const { return ctl_->demotion_due(); }
  // One activation at `now` (ns since the start): measure, decide, apply. Returns the event.
  nb::dict step(Loop& loop, bool rt_miss, Duration now) {
    std::vector<lame::CpuSample> samples;
    std::vector<std::string> errors;
    lame::ControllerEvent e;
    double apply_ms = 0;
    {
      ReleaseGil unlocked;
      for (auto& [name, count, top] : loop.take_cpu_window()) {
        lame::CpuSample x;
        x.callback = name;
        x.count = count;
        for (std::size_t k = 0; k < top.size() && k < x.largest.size(); ++k) x.largest[k] = top[k];
        samples.push_back(std::move(x));
      }
      e = ctl_->activate(samples, rt_miss, now);
      if (e.decision == "reallocated") {
        const double c0 = static_cast<double>(runtime::thread_cpu_ns());
        lame::SlotPlan sp = lame::slot_plan(ctl_->plan(), executor_index_, cores_);
        sp.slots = rclpy_slots(std::move(sp.slots));
        std::vector<std::tuple<std::string, std::optional<int>, std::uint64_t>> params;
        for (std::size_t i = 0; i < sp.callbacks.size(); ++i)
          params.emplace_back(sp.callbacks[i], sp.specs[i].priority, sp.specs[i].affinity);
        runtime::LameApplySteps steps;
        steps.set_reservation = [&loop](int sl, const std::optional<Reservation>& r) {
          return loop.set_thread_reservation(static_cast<std::uint32_t>(sl), r ? r->budget : 0, r ? r->period : 0);
        };
        steps.reconfigure = [&] { loop.reconfigure(params); };
        for (const auto& r : runtime::lame_apply(current_, sp.slots, cores_, steps))
          errors.push_back(lame::slot_name(r.slot, cores_) + ": " + r.error);
        apply_ms = (static_cast<double>(runtime::thread_cpu_ns()) - c0) / 1e6;
      }
    }
    nb::dict d;
    d["at_ns"] = e.at;
    d["trigger"] = e.trigger;
    d["decision"] = e.decision;
    d["kind"] = e.kind;
    d["why"] = e.why;
    d["chains"] = e.chains;
    d["decide_cpu_ms"] = e.cpu_ms;
    d["apply_cpu_ms"] = apply_ms;
    d["analyses"] = e.analyses;
    d["errors"] = errors;
    nb::list classes;
    const lame::Allocation& plan = ctl_->plan();
    for (const auto* P : {&plan.rt, &plan.be})
      for (const auto& p : *P) {
        nb::dict c;
        c["name"] = p.name;
        c["kind"] = std::string(to_string(p.kind));
        c["cores"] = p.cores;
        c["budget_ns"] = p.budget;
        c["period_ns"] = p.period;
        std::vector<std::string> chains;
        for (int i : p.chains) chains.push_back(plan.lin.chains[i].name);
        c["chains"] = chains;
        classes.append(c);
      }
    d["classes"] = classes;
    std::vector<std::string> demoted;
    for (const auto& x : plan.demotions) demoted.push_back(x.chain);
    d["demoted"] = demoted;
    return d;
  }

 private:
  std::unique_ptr<lame::Controller> ctl_;
  std::size_t executor_index_ = 0;
  int cores_ = 1;
  std::vector<std::optional<Reservation>> current_;  // what the threads have (per slot)
};
#endif

// The binding rule (runtime/entity_binding.hpp) for chainrt.rclpy's binding.py. A model
// callback: (name, node, kind, period, tolerance, topic or service, used); a real entity:
// (fully qualified node without '/', plain node, kind, period, topic or service). Kinds are
// CallbackKind's values (binding.py's KIND_* 0..3).
using BindingCandidateTuple = std::tuple<std::string, std::string, int, Duration, Duration, std::string, bool>;
using RealEntityTuple = std::tuple<std::string, std::string, int, Duration, std::string>;
static_assert(static_cast<int>(CallbackKind::Timer) == 0 && static_cast<int>(CallbackKind::Subscription) == 1 &&
              static_cast<int>(CallbackKind::Service) == 2 && static_cast<int>(CallbackKind::Client) == 3);

std::vector<runtime::BindingCandidate> binding_candidates(const std::vector<BindingCandidateTuple>& in) {
  std::vector<runtime::BindingCandidate> out;
  for (const auto& [name, node, kind, period, tolerance, topic, used] : in)
    out.push_back(runtime::BindingCandidate{name, node, static_cast<CallbackKind>(kind), period, tolerance, topic, used});
  return out;
}
runtime::RealEntity real_entity(const RealEntityTuple& e) {
  const auto& [fq, plain, kind, period, topic] = e;
  return runtime::RealEntity{fq, plain, static_cast<CallbackKind>(kind), period, topic};
}
std::optional<std::size_t> binding_match(const std::vector<BindingCandidateTuple>& candidates, const RealEntityTuple& e) {
  return runtime::binding_match(binding_candidates(candidates), real_entity(e));
}
std::string explain_unbound(const std::vector<BindingCandidateTuple>& candidates, const std::vector<RealEntityTuple>& seen) {
  std::vector<runtime::RealEntity> s;
  for (const auto& e : seen) s.push_back(real_entity(e));
  return runtime::explain_unbound(binding_candidates(candidates), s);
}

}  // namespace chainrt::rclpy_exec

namespace chainrt::rclpy_exec {

void bind_accelerator(nb::module_& m);  // accelerator_binding.cpp
}  // namespace chainrt::rclpy_exec

NB_MODULE(_rclpy_exec, m) {
  using chainrt::rclpy_exec::Loop;
  using chainrt::rclpy_exec::ReleaseGil;
  m.doc() = "chainrt.rclpy's dispatch loop: event-driven readiness, the sched ReadyQueue, monitor";
  // A user's daemon thread may still hold the executor (and so its Loop) when the interpreter
  // exits; the process's end reclaims it. nanobind's leak report is for binding developers and
  // would reach the user's terminal at every such exit.
  nb::set_leak_warnings(false);
  // Threads still inside a call without the GIL when the interpreter exits are parked, not
  // aborted (gil.hpp).
  chainrt::rclpy_exec::register_exit_hook(m);
  nb::class_<Loop>(m, "Loop")
      .def(nb::init<const std::string&, std::vector<bool>,
                    const std::vector<std::tuple<int, std::uintptr_t, std::uint32_t, std::optional<int>,
                                                 std::uint64_t, std::string>>&,
                    const std::vector<std::tuple<std::string, chainrt::Duration, chainrt::Duration,
                                                 std::vector<std::vector<chainrt::sched::CallbackId>>>>&,
                    const std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>,
                                                 chainrt::Duration, chainrt::Duration, bool>>&,
                    std::size_t, const std::vector<std::uint32_t>&>(),
           "policy"_a, "group_reentrant"_a, "entities"_a, "chains"_a, "threads"_a, "sample_capacity"_a = 100000,
           "take_positions"_a = std::vector<std::uint32_t>{})
      .def("next", &Loop::next, "thread"_a, "timeout_ns"_a, nb::call_guard<ReleaseGil>())
      .def("done", &Loop::done, "thread"_a, "callback"_a, "ran"_a, "threw"_a)
      .def("push_external", &Loop::push_external, nb::call_guard<ReleaseGil>())
      .def("wake", &Loop::wake, nb::call_guard<ReleaseGil>())
      .def("stop", &Loop::stop, nb::call_guard<ReleaseGil>())
      .def("restart", &Loop::restart)
      .def("detach", &Loop::detach, nb::call_guard<ReleaseGil>())
      .def("apply_thread", &Loop::apply_thread, nb::call_guard<ReleaseGil>())
      .def("add_warning", &Loop::add_warning)
      .def("take_cpu_window", &Loop::take_cpu_window)
      .def("chain_misses", &Loop::chain_misses)
      .def("chain_names", &Loop::chain_names)
      .def("set_thread_reservation", &Loop::set_thread_reservation, "thread"_a, "budget_ns"_a, "period_ns"_a,
           nb::call_guard<ReleaseGil>())
      .def("reconfigure", &Loop::reconfigure, "params"_a, nb::call_guard<ReleaseGil>())
      .def("set_record_from", &Loop::set_record_from)
      .def("current_stamp", &Loop::current_stamp)
      .def("current_grid_release", &Loop::current_grid_release, "thread"_a)
      .def("set_input_release", &Loop::set_input_release)
      .def("thread_count", &Loop::thread_count)
      .def("policy", &Loop::policy)
      .def("dispatches", &Loop::dispatches)
      .def("set_place", &Loop::set_place, "callback"_a, "node"_a, "kind"_a, "topic"_a)
      .def("arm_timer", &Loop::arm_timer, "callback"_a, "period_ns"_a, "offset_ns"_a, "period_den"_a = 1)
      .def("trace_registration", &Loop::trace_registration, "executor"_a)
      .def_static("tracing", [] { return chainrt::runtime::tracing::hooks().any; })
      .def("monitor_message", [](Loop& loop, const std::string& run_id, const std::string& executor,
                                 std::uint64_t seq) {
             std::string cdr;
             {
               ReleaseGil released;
               cdr = loop.monitor_message(run_id, executor, seq);
             }
             return nb::bytes(cdr.data(), cdr.size());
           }, "run_id"_a, "executor"_a, "seq"_a)
      .def("report_json", &Loop::report_json, "with_samples"_a = false, "max_samples"_a = 2048,
           nb::call_guard<ReleaseGil>());
#if defined(CHAINRT_LAME_RUNTIME_AVAILABLE)
  using chainrt::rclpy_exec::LameControl;
  nb::class_<LameControl>(m, "LameControl")
      .def(nb::init<const std::string&, chainrt::Duration, chainrt::Duration, int>(), "yaml"_a,
           "controller_period_ns"_a, "reservation_period_ns"_a = 10'000'000, "capacity_permille"_a = 0,
           nb::call_guard<ReleaseGil>())
      .def("executor", &LameControl::executor)
      .def("threads", &LameControl::threads)
      .def("callbacks", &LameControl::callbacks)
      .def("rt_chains", &LameControl::rt_chains)
      .def("demotion_due_ns", &LameControl::demotion_due)
      .def("step", &LameControl::step, "loop"_a, "rt_miss"_a, "now_ns"_a);
  m.attr("HAVE_LAME") = true;
#else
  m.attr("HAVE_LAME") = false;
#endif
  m.def("model_setup", &chainrt::rclpy_exec::model_setup, "yaml"_a, "executor"_a, "policy"_a = nb::none(),
        "threads"_a = nb::none());
  m.def("monotonic_ns", &chainrt::rclpy_exec::mono_ns);
  m.def("binding_match", &chainrt::rclpy_exec::binding_match, "candidates"_a, "entity"_a);
  m.def("model_from_code", &chainrt::rclpy_exec::model_from_code, "base_yaml"_a.none(), "executor"_a, "policy"_a,
        "plain_threads"_a, "host_cores"_a, "entities"_a, "threads"_a, "chains"_a, "require_wcet"_a);
  m.def("explain_unbound", &chainrt::rclpy_exec::explain_unbound, "candidates"_a, "seen"_a);
  chainrt::rclpy_exec::bind_accelerator(m);
}
