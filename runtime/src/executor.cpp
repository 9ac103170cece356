// chainrt runtime: the executor (see executor.hpp for the design and the paper sections).
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/tracing.hpp"
#include "executor_state.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <rcl/error_handling.h>
#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/monitor_msg.hpp"

namespace chainrt::runtime {

void set_current_stamp(const Stamp& s) noexcept;  // node.cpp

namespace {

using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

// Registry of started executors for the signal handler (async-signal-safe: fixed array).
constexpr int kMaxExecutors = 64;
std::atomic<Executor*> g_executors[kMaxExecutors];
std::atomic<int> g_signal{0};

void register_executor(Executor* e) {
  for (auto& s : g_executors) {
    Executor* expected = nullptr;
    if (s.compare_exchange_strong(expected, e)) return;
  }
}
void unregister_executor(Executor* e) {
  for (auto& s : g_executors) {
    Executor* expected = e;
    s.compare_exchange_strong(expected, nullptr);
  }
}

void on_signal(int sig) {
  if (g_signal.exchange(1) != 0) {  // second signal: default action
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  for (auto& s : g_executors) {
    Executor* e = s.load();
    if (e) e->request_stop();
  }
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool signal_received() noexcept { return g_signal.load() != 0; }
void clear_signal() noexcept { g_signal.store(0); }

Executor::Executor(Context& context, ExecutorOptions options)
    : context_(&context), options_(std::move(options)) {
  threads_spec_ = options_.threads;
  if (threads_spec_.empty()) threads_spec_.push_back(sched::ThreadSpec{});
  if (threads_spec_.size() > sched::kMaxThreads)
    throw std::invalid_argument("an executor has at most 64 threads");
  for (std::size_t i = 0; i < threads_spec_.size(); ++i)
    if (threads_spec_[i].name.empty()) threads_spec_[i].name = "t" + std::to_string(i);
  tids_ = std::make_unique<std::atomic<int>[]>(threads_spec_.size());
}

Executor::~Executor() {
  request_stop();
  join();
  for (auto& w : clocks_)
    if (w->jump_callback) w->clock->remove_jump_callback(&Executor::on_time_jump, w.get());
  for (auto& s : slots_)
    if (s->sub) {
      try {
        s->sub->set_listener(nullptr, nullptr);
      } catch (...) {
      }
    }
  // No listener runs any more (the middleware's detach waits for a running one), but a
  // publishing thread may still hold a delivery it deferred; it enlists it as its publish
  // returns, which is a bounded wait.
  while (deferred_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  unregister_executor(this);
}

void Executor::add_node(Node& node) {
  if (prepared_) throw std::logic_error("add_node after prepare()");
  nodes_.push_back(&node);
}

void Executor::add_chain(ChainSpec chain) {
  if (prepared_) throw std::logic_error("add_chain after prepare()");
  chain_specs_.push_back(std::move(chain));
}

CallbackId Executor::id_of(const std::string& name) const noexcept {
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i]->entity->name() == name) return static_cast<CallbackId>(i);
  return kNoCallback;
}

const std::string& Executor::name_of(CallbackId id) const noexcept {
  return slots_[id]->entity->name();
}

void Executor::prepare() {
  if (prepared_) return;
  // Registration order = creation order of the entities (ties of the ready queue).
  std::vector<Entity*> entities;
  for (Node* n : nodes_)
    for (auto& e : n->entities()) entities.push_back(e.get());
  std::sort(entities.begin(), entities.end(),
            [](Entity* a, Entity* b) { return a->sequence() < b->sequence(); });
  std::vector<sched::CallbackSpec> specs;
  std::vector<sched::GroupSpec> groups;
  register_callbacks(entities, specs, groups);
  // The queue, admission and policy set-up every backend shares (sched/dispatcher.hpp).
  std::vector<bool> rt;
  for (const auto& t : threads_spec_) rt.push_back(t.role == CriticalityClass::RealTime);
  dispatcher_ = std::make_unique<sched::Dispatcher>(options_.policy, std::move(specs), std::move(groups),
                                                    std::move(rt), options_.wait_set_seed);
  bind_chains();
  if (!mutex_.priority_inheritance())
    warnings_.push_back("the ready-queue lock has no priority inheritance on this system "
                        "(PTHREAD_PRIO_INHERIT unsupported); a plain mutex is used");
  for (auto& s : slots_)
    if (s->sub) s->sub->prepare_slots(threads_spec_.size());
  arm_timers();
  // DDS listeners; enlist every subscription once for inputs that arrived before.
  for (auto& s : slots_)
    if (s->sub) {
      s->sub->set_listener(&Executor::on_new_message, s.get());
      on_new_message(s.get(), 0);
    }
  trace_registration();
  prepared_ = true;
}

// One Slot and one ready-queue spec per entity, in registration order; groups in first-use order.
void Executor::register_callbacks(const std::vector<Entity*>& entities, std::vector<sched::CallbackSpec>& specs,
                                  std::vector<sched::GroupSpec>& groups) {
  std::vector<const CallbackGroup*> group_ptrs;
  // A callback whose affinity names no thread of this executor could never run.
  const sched::AffinityMask all = threads_spec_.size() >= 64
                                      ? sched::kAnyThread
                                      : ((sched::AffinityMask{1} << threads_spec_.size()) - 1);
  for (Entity* e : entities) {
    auto s = std::make_unique<Slot>();
    s->exec = this;
    s->id = static_cast<CallbackId>(slots_.size());
    s->entity = e;
    s->timer = dynamic_cast<Timer*>(e);
    s->sub = dynamic_cast<SubscriptionBase*>(e);
    s->stats.name = e->name();
    s->stats.node = rcl_node_get_fully_qualified_name(e->node().get());
    s->stats.kind = to_string(e->kind());
    if (s->sub) s->stats.topic = s->sub->topic();
    sched::CallbackSpec spec;
    spec.kind = e->kind();
    spec.priority = e->options().priority;
    spec.affinity = e->options().affinity;
    const CallbackGroup* g = e->options().group;
    auto it = std::find(group_ptrs.begin(), group_ptrs.end(), g);
    if (it == group_ptrs.end()) {
      group_ptrs.push_back(g);
      groups.push_back(sched::GroupSpec{g->type()});
      spec.group = static_cast<sched::GroupId>(groups.size() - 1);
    } else {
      spec.group = static_cast<sched::GroupId>(it - group_ptrs.begin());
    }
    if ((spec.affinity & all) == 0) {
      warnings_.push_back("callback '" + e->name() +
                          "': its affinity contains no thread of this executor; any thread "
                          "may run it");
      spec.affinity = sched::kAnyThread;
    }
    specs.push_back(spec);
    slots_.push_back(std::move(s));
  }
}

// Chains: sources, leaves, members; a source timer stamps the instances (sched::TimerSource),
// the monitor follows them to their end (sched::ChainCompletion).
void Executor::bind_chains() {
  std::vector<ChainTrack> tracks(chain_specs_.size());
  std::vector<sched::ChainCompletion::Chain> ends(chain_specs_.size());
  std::vector<std::string> sources;  // chains with the same first callback share its number
  for (std::size_t c = 0; c < chain_specs_.size(); ++c) {
    const ChainSpec& cs = chain_specs_[c];
    ChainTrack& st = tracks[c];
    st.name = cs.name;
    st.period = cs.period;
    st.deadline = cs.deadline;
    ends[c].deadline = cs.deadline;
    for (const auto& n : cs.callbacks) {
      CallbackId id = id_of(n);
      if (id != kNoCallback) st.members.push_back(id);
    }
    const std::string source_name = cs.callbacks.empty() ? std::string() : cs.callbacks.front();
    auto known = std::find(sources.begin(), sources.end(), source_name);
    ends[c].source = static_cast<std::uint32_t>(known - sources.begin());
    if (known == sources.end()) sources.push_back(source_name);
    std::vector<std::string> leaves = cs.leaves;
    if (leaves.empty() && !cs.callbacks.empty()) leaves.push_back(cs.callbacks.back());
    for (const auto& n : leaves)
      if (CallbackId id = id_of(n); id != kNoCallback) ends[c].leaves.push_back(id);
    const CallbackId source = cs.callbacks.empty() ? kNoCallback : id_of(source_name);
    if (source == kNoCallback) continue;
    Slot& src = *slots_[source];
    if (!src.timer)
      warnings_.push_back("chain '" + cs.name + "': its first callback '" + source_name +
                          "' is not a timer; its instances are not stamped here");
    else
      src.src.starts(static_cast<std::uint32_t>(c), cs.deadline);
  }
  monitor_.init(std::move(tracks), sched::ChainCompletion(std::move(ends)), options_.samples_per_chain);
  monitor_.reserve_trace(options_.trace_capacity);
  monitor_.record_from(options_.record_from);
}

// The timers of the executor's clock on the release grid (sched/timer.hpp), so that the model's
// offsets hold across the executors and processes of the run; the timers of ROS and system
// clocks on their own clock (epoch = that clock's now).
void Executor::arm_timers() {
  const Duration epoch = clock_now();
  next_timer_due_ = kNoDeadline;
  for (auto& s : slots_)
    if (s->timer && s->timer->clock()) watch_clock(*s);
  // Jump callbacks as rcl's timers register them: any clock change, forward or backward jump.
  for (auto& w : clocks_)
    if (w->clock->type() == ClockType::Ros) {
      rcl_jump_threshold_t th;
      th.on_clock_change = true;
      th.min_forward.nanoseconds = 1;
      th.min_backward.nanoseconds = -1;
      w->clock->add_jump_callback(th, &Executor::on_time_jump, w.get());
      w->jump_callback = true;
    }
  dispatcher_->set_release_epoch(options_.release_epoch ? *options_.release_epoch
                                 : options_.clock       ? epoch
                                                        : sched::release_epoch(epoch));
  for (auto& s : slots_)
    if (s->timer && !s->watch) {
      const sched::ReleaseGrid::Start st =
          dispatcher_->arm(s->src.clock, s->timer->offset(), s->timer->grid_period(), epoch);
      s->stats.grid_start_index = st.start_index;
      if (st.start_index > 0)
        warnings_.push_back("timer '" + s->stats.name + "' armed " +
                            std::to_string(epoch - dispatcher_->grid(s->timer->offset(), s->timer->grid_period()).at(0)) +
                            " ns after its first grid release: it starts at grid index " +
                            std::to_string(st.start_index) + " (its offset holds; the common start of the run's "
                            "timers does not — set " + sched::kReleaseEpochEnv + " for every process of the run)");
      next_timer_due_ = std::min(next_timer_due_, s->src.clock.next);
    }
}

// Deliveries inside a publish of this thread (begin_publish / end_publish, node.cpp). The
// middleware calls the listener from inside rcl_publish with the subscription's reader lock held
// (Fast DDS: intra-process delivery on the publishing thread), and that lock has no priority
// inheritance. Waking the subscription's executor there lets its thread, when it outranks the
// publisher on the same core, preempt the publisher and block in rcl_take on that lock; a
// thread of middle priority (another executor's) then keeps the publisher, and with it the
// woken thread, off the CPU for as long as it runs — a timer of the woken executor released
// meanwhile starts only after it. So a delivery inside a publish is enlisted, and its executor
// woken, only once rcl_publish has returned and the lock is free. No allocation: a fixed
// array; a publish reaching more subscriptions than it holds enlists the rest at once.
namespace {
constexpr int kMaxDeferredDeliveries = 32;
thread_local int t_publish_depth = 0;
thread_local int t_deferred_count = 0;
thread_local const void* t_deferred[kMaxDeferredDeliveries];
}  // namespace

void begin_publish() noexcept { ++t_publish_depth; }

void end_publish() noexcept {
  if (--t_publish_depth > 0) return;
  // (enlist() never publishes, so the list does not grow while it is drained)
  for (int i = 0; i < t_deferred_count; ++i) {
    Executor* ex = static_cast<const Executor::Slot*>(t_deferred[i])->exec;
    Executor::enlist(t_deferred[i]);
    ex->deferred_.fetch_sub(1, std::memory_order_release);  // last touch of ex
  }
  t_deferred_count = 0;
}

void Executor::on_new_message(const void* user, std::size_t) {
  if (t_publish_depth > 0 && t_deferred_count < kMaxDeferredDeliveries) {
    for (int i = 0; i < t_deferred_count; ++i)
      if (t_deferred[i] == user) return;
    static_cast<const Slot*>(user)->exec->deferred_.fetch_add(1, std::memory_order_relaxed);
    t_deferred[t_deferred_count++] = user;
    return;
  }
  enlist(user);
}

void Executor::enlist(const void* user) noexcept {
  Slot* s = const_cast<Slot*>(static_cast<const Slot*>(user));
  Executor* ex = s->exec;
  if (!s->enlisted.exchange(true, std::memory_order_acq_rel)) {
    Slot* head = ex->dirty_.load(std::memory_order_relaxed);
    do {
      s->next_dirty = head;
    } while (!ex->dirty_.compare_exchange_weak(head, s, std::memory_order_release,
                                               std::memory_order_relaxed));
  }
  ex->wake_others();
}

Duration Executor::ready_deadline(CallbackId id) const noexcept {
  const Slot& s = *slots_[id];
  if (s.timer && s.watch) return s.src.deadline_of(s.release_steady);
  if (s.timer) return s.src.pending_deadline();
  return s.sub->has_input() ? s.sub->head_stamp().deadline : kNoDeadline;
}

// The dispatcher's view of the callbacks (sched::Dispatcher's Src): a subscription is ready
// while it holds an input, a timer once it is harvested (it stays due until it is taken).
struct Executor::Readiness {
  const Executor* ex;
  bool ready(CallbackId id) const noexcept {
    const Slot& s = *ex->slots_[id];
    if (s.sub) return s.sub->has_input();
    return true;  // a timer (or another entity kind) is ready once it was released
  }
  Duration deadline(CallbackId id) const noexcept { return ex->ready_deadline(id); }
};

void Executor::make_ready(CallbackId id) noexcept {
  dispatcher_->released(id, Readiness{this});
}

// Algorithm 2 (readyQueue updating), incrementally: only subscriptions the DDS listener
// enlisted since the last update, and timers only when one is due.
void Executor::harvest(Duration now, bool idle) noexcept {
  Slot* s = dirty_.exchange(nullptr, std::memory_order_acquire);
  while (s) {
    Slot* next = s->next_dirty;
    s->enlisted.store(false, std::memory_order_release);
    s->sub->take_available();
    if (s->sub->has_input()) make_ready(s->id);
    s = next;
  }
  if (options_.full_refresh)
    for (auto& sp : slots_)
      if (sp->sub && !dispatcher_->holds(sp->id)) {
        sp->sub->take_available();
        if (sp->sub->has_input()) make_ready(sp->id);
      }
  if (!clocks_.empty()) harvest_clocks(now);
  if (now < next_timer_due_) return;
  Duration due = kNoDeadline;
  for (auto& sp : slots_) {
    Slot& t = *sp;
    if (!t.timer || t.watch || dispatcher_->holds(t.id)) continue;
    if (t.src.clock.ready(now)) {
      // Release jitter against the grid, measured where a thread waited for this release (a
      // busy executor takes a due timer at its next selection: interference, not jitter).
      if (idle) t.stats.release_jitter.record(now - t.src.clock.next);
      make_ready(t.id);
    } else {
      due = std::min(due, t.src.clock.next);
    }
  }
  next_timer_due_ = due;
}

void Executor::wake_others() noexcept {
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0 &&
      !wake_pending_.exchange(true, std::memory_order_seq_cst))
    futex_wake_all(&wake_);
}

void Executor::dispatch(sched::ThreadId t, CallbackId id, Duration now,
                        std::unique_lock<PiMutex>& lk, const LateWake& late) noexcept {
  Slot& s = *slots_[id];
  const tracing::Hooks& tr = tracing::hooks();
  Stamp stamp;
  int slot = -1;
  const Duration queued_deadline = dispatcher_->deadline(id);
  if (s.timer && s.watch) {
    // rcl_timer_call on the timer's own clock; the stamp stays on the executor's clock.
    const Duration cnow = s.watch->clock->now();
    const sched::TimerClock::Take tk = s.src.clock.take(cnow);
    s.last = cnow;
    s.stats.drops += static_cast<std::uint64_t>(tk.skipped);
    stamp = s.src.stamp(s.release_steady);
    s.watch->due = std::min(s.watch->due, s.src.clock.next);
  } else if (s.timer) {
    // rcl_timer_call: the overrun rule moves the next release past now (sched::TimerClock).
    const sched::TimerSource::Taken tk = s.src.take(now);
    s.stats.drops += static_cast<std::uint64_t>(tk.skipped);
    stamp = tk.stamp;
    next_timer_due_ = std::min(next_timer_due_, s.src.clock.next);
    if (stamp.chain != kNoChain && tr.chain_release)
      tr.chain_release(this, stamp.chain, stamp.instance, stamp.release, stamp.deadline);
  } else {
    slot = s.sub->pop_input();
    if (slot >= 0) stamp = s.sub->stamp(slot);
    if (s.sub->has_input()) {  // the next input is queued at once
      make_ready(id);
      if (dispatcher_->queued(id)) wake_others();  // a reentrant group lets another thread take it
    }
  }
  if (s.timer || slot >= 0) {
    lk.unlock();
    set_current_stamp(stamp);
    if (tr.execute) tr.execute(s.timer ? static_cast<const void*>(s.timer)
                                       : static_cast<const void*>(s.sub->get()));
    if (tr.callback_start) tr.callback_start(&s, false);
    const Duration start = clock_now();
    CallbackCpu cpu_meter;  // on CLOCK_MONOTONIC: the executor's reading when that is its clock
    if (options_.clock) cpu_meter.start();
    else cpu_meter.start(start);
    bool threw = false;
    try {
      if (s.timer) s.timer->invoke();
      else s.sub->invoke(slot);
    } catch (const std::exception& e) {
      threw = true;
      if (options_.print_exceptions)
        std::fprintf(stderr, "chainrt: callback '%s' threw: %s (the executor goes on)\n",
                     s.stats.name.c_str(), e.what());
    } catch (...) {
      threw = true;
      if (options_.print_exceptions)
        std::fprintf(stderr, "chainrt: callback '%s' threw a non-standard exception "
                     "(the executor goes on)\n", s.stats.name.c_str());
    }
    const Duration finish = clock_now();
    const Duration cpu = options_.clock ? cpu_meter.stop() : cpu_meter.stop(finish);
    if (tr.callback_end) tr.callback_end(&s);
    set_current_stamp(Stamp{});
    lk.lock();
    // monitoring (preallocated, no allocation)
    monitor_.finished(s.stats, s.window_cpu, DispatchRecord{id, t, start, finish, cpu, queued_deadline, stamp.release,
                                                                late.slept_until, late.woke},
                      threw, id, stamp, [&](std::uint32_t c, Duration response, bool missed) {
                        const Duration d = chain_specs_[c].deadline;
                        if (tr.chain_complete)
                          tr.chain_complete(this, c, stamp.instance, &s, stamp.release,
                                            d > 0 ? stamp.release + d : kNoDeadline, missed ? 1 : 0);
                        if (options_.on_deadline_miss && missed) options_.on_deadline_miss(c);
                        (void)response;
                      });
  }
  dispatcher_->done(t);
  if (slot >= 0) s.sub->release_slot(slot);
}

void Executor::thread_main(sched::ThreadId t) {
  ThreadSetupResult setup = apply_thread_spec(threads_spec_[t]);
  const tracing::Hooks& trace = tracing::hooks();
  tids_[t].store(static_cast<int>(gettid()), std::memory_order_release);
  std::unique_lock<PiMutex> lk(mutex_);
  for (auto& w : setup.warnings) warnings_.push_back(std::move(w));
  // Other threads are woken only when this thread changed the queue (new releases, a freed
  // group) and work is left in it: no wake storms, and no two idle threads waking each other.
  bool changed = true;
  bool idle = false;  // this thread waited since its last selection
  LateWake late;      // its late wake-up from that wait (the dispatch record's)
  while (!stop_requested()) {
    const std::uint32_t seq = wake_.load(std::memory_order_seq_cst);
    const Duration now = clock_now();
    const std::size_t before = dispatcher_->size();
    harvest(now, idle);
    idle = false;
    if (dispatcher_->size() > before) changed = true;
    // Admission (a polling point of the default executor, LaME's best-effort refresh) and
    // Algorithm 1, as in the simulator (sched::Dispatcher::take).
    if (trace.get_next_ready) trace.get_next_ready();
    CallbackId id = dispatcher_->take(t, Readiness{this});
    if (dispatcher_->admitted()) changed = true;
    if (changed && !dispatcher_->empty()) wake_others();
    changed = false;
    if (id != kNoCallback) {
      dispatch(t, id, now, lk, late);
      late = {};
      changed = true;  // its group is free again
      continue;
    }
    // Idle: sleep until a message, a completion, the next timer release or stop.
    Duration timeout = next_timer_due_ == kNoDeadline ? -1 : std::max<Duration>(
                                                                 next_timer_due_ - now, 0);
    if (const Duration ct = clocks_timeout(); ct >= 0 && (timeout < 0 || ct < timeout))
      timeout = ct;
    if (timeout == 0) continue;
    if (options_.clock && (timeout < 0 || timeout > 1'000'000)) timeout = 1'000'000;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    // Any wake-up from now on must reach the futex: a waker that changes wake_ before the
    // futex_wait below makes it return at once (seq is older); one that changes it later sees
    // this thread in sleepers_ and the flag clear, so it issues FUTEX_WAKE.
    wake_pending_.store(false, std::memory_order_seq_cst);
    lk.unlock();
    if (trace.wait_for_work) trace.wait_for_work(timeout);
    futex_wait(&wake_, seq, timeout);
    // (on the steady clock only: a simulated clock's instants are not the kernel's)
    late = late_wake(timeout > 0 && !options_.clock ? now + timeout : 0);
    lk.lock();
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    idle = true;
  }
}

std::size_t Executor::poll_ready() {
  prepare();
  std::unique_lock<PiMutex> lk(mutex_);
  harvest(clock_now());
  dispatcher_->admit_all(Readiness{this});
  return dispatcher_->size() + dispatcher_->waiting();
}

void Executor::start() {
  if (started_) return;
  prepare();
  started_ = true;
  stop_.store(0);
  {
    std::unique_lock<PiMutex> lk(mutex_);  // read by report() on other threads
    started_at_ = now_ns();
  }
  register_executor(this);
  if (signal_received()) stop_.store(1);
  if (options_.stats_period > 0 || options_.monitoring_events) {
    static std::atomic<int> counter{0};
    stats_node_ = std::make_unique<Node>(
        *context_, "chainrt_monitor_" + std::to_string(getpid()) + "_" +
                       std::to_string(counter.fetch_add(1)));
    if (options_.stats_period > 0)
      stats_pub_ = std::make_shared<Publisher<chainrt_msgs::msg::ChainStats>>(*stats_node_, options_.stats_topic, 10);
    if (options_.monitoring_events)
      events_pub_ = std::make_shared<Publisher<std_msgs::msg::String>>(*stats_node_, events_topic(options_.stats_topic), 10);
    if (options_.stats_period > 0) stats_thread_ = std::thread([this] { stats_main(); });
  }
  for (std::size_t t = 0; t < threads_spec_.size(); ++t)
    threads_.emplace_back([this, t] { thread_main(static_cast<sched::ThreadId>(t)); });
}

void Executor::request_stop() noexcept {
  stop_.store(1, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&wake_);
  futex_wake_all(&stop_);
}

void Executor::join() {
  for (auto& th : threads_)
    if (th.joinable()) th.join();
  workers_joined_.store(1, std::memory_order_release);
  futex_wake_all(&workers_joined_);
  if (stats_thread_.joinable()) stats_thread_.join();
  {
    // report() may run concurrently on another thread (a monitor); it reads stopped_at_ under
    // the lock, so it is written under the lock too.
    std::unique_lock<PiMutex> lk(mutex_);
    if (started_ && stopped_at_ == 0) stopped_at_ = now_ns();
  }
  threads_.clear();
  unregister_executor(this);
}

void Executor::spin_for(Duration d) {
  start();
  const Duration end = now_ns() + d;
  for (;;) {
    Duration left = end - now_ns();
    if (left <= 0 || stop_requested()) break;
    futex_wait(&stop_, 0, std::min<Duration>(left, 100000000));
  }
  request_stop();
  join();
}

void Executor::spin() {
  start();
  while (!stop_requested()) futex_wait(&stop_, 0, 100000000);
  join();
}

int Executor::thread_tid(sched::ThreadId t) const noexcept {
  return t < threads_spec_.size() ? tids_[t].load(std::memory_order_acquire) : 0;
}

std::string Executor::set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) {
  const int tid = thread_tid(t);
  if (tid == 0) return "executor thread " + std::to_string(t) + " is not running";
  return runtime::set_thread_reservation(tid, r);
}

sched::CallbackSpec Executor::spec_of(CallbackId id) const {
  std::unique_lock<PiMutex> lk(mutex_);
  return dispatcher_->spec(id);
}

void Executor::reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec> groups) {
  if (!prepared_) throw std::logic_error("reconfigure before prepare()");
  // Built outside the lock: the only allocation of a reconfiguration.
  auto fresh = dispatcher_->rebuilt(std::move(specs), std::move(groups));
  {
    std::unique_lock<PiMutex> lk(mutex_);
    dispatcher_->install(fresh);
  }
  wake_others();  // threads may now see work their old masks hid
}  // the old queue's storage is freed here, outside the lock

}  // namespace chainrt::runtime
