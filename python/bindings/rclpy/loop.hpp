// chainrt._rclpy_exec: the Loop, chainrt.rclpy's dispatch loop (its design: rclpy_exec.cpp), with
// its entities and the hot path (next, done, harvest) inline; its set-up and monitoring in
// rclpy_exec.cpp. Private to python/bindings/rclpy.
#pragma once

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
#include "chainrt/sched/dispatcher.hpp"
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


using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

// kEvent: an rcl_event_t (rclpy's QoS EventHandler waitables), ordered as a client (last).
enum Kind : int { kTimer = 0, kSubscription = 1, kService = 2, kClient = 3, kExternal = 4, kEvent = 5 };

using runtime::now_ns;  // CLOCK_MONOTONIC (runtime/threads.hpp)
using runtime::thread_cpu_ns;

using sched::kNoChain;

// A chain instance (release a_i^k, absolute deadline d_i^k, chain, k) and the fixed-capacity
// FIFO of those waiting at a subscription (inputs published by its chain predecessor in this
// executor, not yet taken): the runtime's (chain_track.hpp; push/pop allocate nothing, guarded
// here by m_).
using sched::Stamp;
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
  // A timer: its clock on the release grid (when on_grid) and the chain instances it starts
  // (sched/dispatcher.hpp).
  sched::TimerSource src;
  // chain successors: (successor entity, chain)
  std::vector<std::pair<CallbackId, std::uint32_t>> successors;
  runtime::CallbackStats stats;
  runtime::CpuWindow window;  // largest CPU times since the last take_cpu_window() (LaME)
  std::uint32_t running = 0;  // instances now running
  // A model-bound timer on the release grid (arm_timer): released by src.clock on
  // CLOCK_MONOTONIC instead of rcl's next call time (rcl_timer_call still runs it).
  bool on_grid = false;
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
       std::size_t sample_capacity, const std::vector<std::uint32_t>& take_positions = {});

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
    const Duration until = timeout_ns < 0 ? kNoDeadline : now_ns() + timeout_ns;
    std::unique_lock<std::mutex> lk(m_);
    bool idle = false;  // this thread waited since it last looked (release jitter, arm_timer)
    for (;;) {
      if (stop_) return -3;
      const Duration now = now_ns();
      const Duration next_timer = harvest(now, idle);
      idle = false;
      // Admission (a polling point of the default executor, LaME's best-effort refresh) and
      // Algorithm 1, as in the runtime and the simulator (sched::Dispatcher::take).
      const CallbackId cb = dispatcher_->take(t, Readiness{this});
      if (cb != kNoCallback) {
        begin(t, cb);
        if (!dispatcher_->empty()) cv_.notify_one();  // work left for another thread
        return cb;
      }
      if (dispatcher_->admitted() && sleepers_) cv_.notify_all();
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
    const Duration finish = now_ns();
    if (hooks_.callback_end && cb < entities_.size()) hooks_.callback_end(&entities_[cb]);
    std::unique_lock<std::mutex> lk(m_);
    Running& r = running_[t];
    if (r.cb != cb) throw std::invalid_argument("done() for a callback this thread does not run");
    Entity& e = entities_[cb];
    if (ran)  // the monitor: figures, the dispatch trace, the chain instances it completes
      monitor_.finished(e.stats, e.window,
                        runtime::DispatchRecord{cb, t, r.start, finish, cpu1 - r.cpu0, r.stamp.deadline, r.stamp.release},
                        threw, cb, r.stamp, [&](std::uint32_t c, Duration, bool missed) {
                          if (hooks_.chain_complete)
                            hooks_.chain_complete(this, c, r.stamp.instance, &e, r.stamp.release, r.stamp.deadline,
                                                  missed ? 1 : 0);
                        });
    r.cb = kNoCallback;
    --e.running;
    dispatcher_->done(t);
    if (!dispatcher_->empty() && sleepers_) cv_.notify_all();
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
    std::vector<std::uint64_t> out;
    for (const auto& c : monitor_.chains()) out.push_back(c.latency.misses());
    return out;
  }
  std::vector<std::string> chain_names() const {
    std::vector<std::string> out;
    for (const auto& c : monitor_.chains()) out.push_back(c.name);
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
      for (CallbackId id = 0; id < entities_.size(); ++id) specs.push_back(dispatcher_->spec(id));
    }
    for (const auto& [name, prio, aff] : params)
      for (CallbackId id = 0; id < entities_.size(); ++id)
        if (entities_[id].stats.name == name) {
          specs[id].priority = prio;
          specs[id].affinity = aff;
        }
    auto fresh = dispatcher_->rebuilt(std::move(specs), groups_);
    std::unique_lock<std::mutex> lk(m_);
    dispatcher_->install(fresh);
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
    monitor_.restart_from(t);
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
    const auto& chains = monitor_.chains();
    for (std::uint32_t c = 0; c < chains.size(); ++c)
      if (!chains[c].members.empty() && chains[c].members.front() == r.cb) {
        r.stamp = Stamp{.release = release,
                        .deadline = chains[c].deadline > 0 ? release + chains[c].deadline : kNoDeadline,
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
    return monitor_.dispatches();
  }

  // The monitor's report, in the C++ runtime's JSON (runtime/monitor.hpp to_json).
  std::string report_json(bool with_samples, std::size_t max_samples) {
    return runtime::to_json(report(max_samples), with_samples);
  }

  // The monitor's figures (allocates; thread-safe).
  runtime::RunReport report(std::size_t max_samples);

  // Arm timer `id` (a model-bound timer with this period and model offset) on the release grid
  // (sched::ReleaseGrid): released at epoch + offset + k·period on CLOCK_MONOTONIC, the epoch
  // the run's (CHAINRT_RELEASE_EPOCH_NS, else the process-wide one), so that the model's
  // offsets hold across executors and processes. A timer armed after its first grid release
  // starts at a later grid index (reported). Call before spinning; thread-safe. `period_den` > 1:
  // the period is period_ns / period_den ns (a model period given as a rate or a fraction,
  // ExactPeriod).
  void arm_timer(CallbackId id, Duration period_ns, Duration offset_ns, std::int64_t period_den) {
    check(id);
    std::unique_lock<std::mutex> lk(m_);
    Entity& e = entities_[id];
    if (e.kind != kTimer || period_ns <= 0 || offset_ns < 0 || period_den < 1 || period_ns / period_den <= 0)
      throw std::invalid_argument("arm_timer: not a timer");
    const Duration now = now_ns();
    dispatcher_->set_release_epoch(sched::release_epoch(now));
    const ExactPeriod period{period_ns, period_den};
    const sched::ReleaseGrid grid = dispatcher_->grid(offset_ns % period.whole(), period);
    const sched::ReleaseGrid::Start st = dispatcher_->arm(e.src.clock, offset_ns % period.whole(), period, now);
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
  std::string monitor_message(const std::string& run_id, const std::string& executor, std::uint64_t seq);

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
    e.last_arrival = tl_dispatch_key >= 0 ? tl_dispatch_key : now_ns();
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
    if (e.kind == kSubscription)
      ret = rcl_subscription_set_on_new_message_callback(static_cast<rcl_subscription_t*>(e.handle), fn, user);
    else if (e.kind == kService)
      ret = rcl_service_set_on_new_request_callback(static_cast<rcl_service_t*>(e.handle), fn, user);
    else if (e.kind == kClient)
      ret = rcl_client_set_on_new_response_callback(static_cast<rcl_client_t*>(e.handle), fn, user);
    else if (e.kind == kEvent)
      ret = rcl_event_set_callback(static_cast<rcl_event_t*>(e.handle), fn, user);
    if (ret != RCL_RET_OK) {
      if (on) warnings_.push_back("callback '" + e.stats.name + "': rcl refused its event callback (" +
                                  rcl_get_error_string().str + "); it will not run");
      rcl_reset_error();
    }
  }

  // The dispatcher's view of the entities (sched::Dispatcher's Src): a timer is ready once it
  // was released (it stays due until it runs), any other entity while it has pending events.
  // The key is the instance's absolute deadline, or its arrival ("arrival" order).
  struct Readiness {
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
      if (dispatcher_->holds(id) || e.running) continue;  // taken only when it runs
      if (e.on_grid && grid_ready(e, now, idle, next_due)) {
        dispatcher_->released(id, Readiness{this});
        continue;
      }
      if (e.on_grid) continue;
      std::int64_t left = 0;
      if (rcl_timer_get_time_until_next_call(static_cast<rcl_timer_t*>(e.handle), &left) != RCL_RET_OK) {
        rcl_reset_error();  // cancelled or invalid: not ready
        continue;
      }
      if (left <= 0) {  // (the periods it misses are counted when it runs: begin, rcl_skipped)
        const Duration release = now + left;
        e.queued = e.src.stamp(release);
        if (e.src.chain != kNoChain && hooks_.chain_release)
          hooks_.chain_release(this, e.src.chain, e.queued.instance, e.queued.release, e.queued.deadline);
        dispatcher_->released(id, Readiness{this});
      } else {
        next_due = std::min(next_due, now + left);
      }
    }
    if (dirty_) {
      dirty_ = false;
      for (CallbackId id = 0; id < entities_.size(); ++id) {
        Entity& e = entities_[id];
        if (e.kind == kTimer || e.pending.load(std::memory_order_relaxed) <= 0 || dispatcher_->holds(id)) continue;
        e.queued = e.inputs.empty() ? Stamp{} : e.inputs.front();
        dispatcher_->released(id, Readiness{this});
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
    if (period != e.src.clock.period) {
      e.on_grid = false;
      return false;
    }
    if (!e.src.clock.ready(now)) {
      next_due = std::min(next_due, e.src.clock.next);
      return false;
    }
    if (idle) e.stats.release_jitter.record(now - e.src.clock.next);
    const sched::TimerSource::Taken tk = e.src.take(now);
    e.stats.drops += static_cast<std::uint64_t>(tk.skipped);
    e.queued = tk.stamp;
    if (e.src.chain != kNoChain && hooks_.chain_release)
      hooks_.chain_release(this, e.src.chain, e.queued.instance, e.queued.release, e.queued.deadline);
    return true;
  }

  // The releases of off-grid timer `e` that rcl_timer_call skips when it runs now: rcl moves
  // the next call time past now by whole periods (rcl/timer.c), the periods it passes over are
  // releases that never run (sched::TimerClock's overrun rule): drops, as the C++ runtime counts
  // them. Counted here, when the timer runs, and only here: a timer released on time but queued
  // behind a long callback misses them while it waits.
  static std::uint64_t rcl_skipped(const Entity& e) noexcept {
    auto* timer = static_cast<rcl_timer_t*>(e.handle);
    std::int64_t left = 0, period = 0;
    if (rcl_timer_get_time_until_next_call(timer, &left) != RCL_RET_OK ||
        rcl_timer_get_period(timer, &period) != RCL_RET_OK) {
      rcl_reset_error();
      return 0;
    }
    const std::int64_t ahead = -left - period;  // how far now is past the call after the next
    return period > 0 && ahead > 0 ? static_cast<std::uint64_t>(1 + (ahead - 1) / period) : 0;
  }

  void begin(std::uint32_t t, CallbackId cb) noexcept {
    Entity& e = entities_[cb];
    if (e.kind == kTimer && !e.on_grid && e.handle) e.stats.drops += rcl_skipped(e);
    Running& r = running_[t];
    r.cb = cb;
    r.stamp = e.queued;
    ++e.running;
    // The callback's priority for what it asks on the chain's behalf (the accelerator client);
    // the Python callback runs on this thread until done().
    runtime::set_dispatch(runtime::DispatchContext{dispatcher_->spec(cb).priority, cb});
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
        if (c == r.stamp.chain || monitor_.completion().chain(c).source == monitor_.completion().chain(r.stamp.chain).source)
          entities_[succ].inputs.push(Stamp{.release = r.stamp.release,
                                            .deadline = chain_key_[c] == kNoDeadline ? kNoDeadline : r.stamp.release + chain_key_[c],
                                            .chain = c,
                                            .instance = r.stamp.instance});
    if (hooks_.execute && e.handle) hooks_.execute(e.handle);
    if (hooks_.callback_start) hooks_.callback_start(&e, false);
    r.start = now_ns();
    r.cpu0 = thread_cpu_ns();
  }

 public:
  // Standard tracing (runtime/tracing.hpp, the C++ executor's events): every entity tied to its
  // rcl handle and named `chainrt:<callback>`, the executor and its chains (provider `chainrt`).
  // The callback pointer of the events is the Entity.
  void trace_registration(const std::string& name);

 private:

  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Entity> entities_;
  std::vector<std::pair<Loop*, CallbackId>> slots_;
  std::vector<CallbackId> timers_;
  std::vector<sched::ThreadSpec> threads_;
  // The ready queue, admission, running threads and release grid (sched/dispatcher.hpp).
  std::unique_ptr<sched::Dispatcher> dispatcher_;
  std::vector<Running> running_;
  std::vector<Duration> chain_key_;  // per chain: the relative deadline its instances carry
  std::vector<sched::GroupSpec> groups_;
  std::vector<std::atomic<int>> tids_;
  std::vector<std::string> warnings_;
  std::string policy_name_;
  // chains by the order given, response times, the dispatch trace (runtime/chain_track.hpp)
  runtime::ChainMonitor monitor_;
  std::uint64_t published_ = 0;  // monitor_message: dispatches already taken
  std::uint64_t input_instance_ = 0;  // instances released by a message (set_input_release)
  const runtime::tracing::Hooks& hooks_ = runtime::tracing::hooks();
  std::size_t sleepers_ = 0;
  std::uint32_t woken_ = 0;
  bool dirty_ = true, stop_ = false, detached_ = false;
  bool arrival_ = false;  // "arrival" order (EventsExecutor's): EDF keyed by arrival times
  Duration started_at_ = 0;
};

}  // namespace chainrt::rclpy_exec
