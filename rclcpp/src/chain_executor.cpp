// chainrt rclcpp: the ChainExecutor (see chain_executor.hpp for the design and the papers): its
// set-up, the dispatch path and rclcpp's spin functions.
#include "chain_executor_state.hpp"

namespace chainrt::rclcpp {

ChainExecutor::ChainExecutor() : ChainExecutor(ChainExecutorOptions{}) {}

ChainExecutor::ChainExecutor(const std::string& model_file, ChainExecutorOptions options)
    : ChainExecutor([&] {
        options.model_file = model_file;
        return std::move(options);
      }()) {}

ChainExecutor::ChainExecutor(ChainExecutorOptions options)
    : ::rclcpp::Executor(options.executor_options), options_(std::move(options)) {
  init();
}

void ChainExecutor::init() {
  if (options_.threads && (*options_.threads < 1 || *options_.threads > 64))
    throw std::invalid_argument("threads must be 1..64");
  if (!options_.model_file.empty() || !options_.model_yaml.empty()) {
    model_text_ = options_.model_yaml;
    model_origin_ = options_.model_file.empty() ? std::string("<model>") : options_.model_file;
    // Parsed now so that a bad file fails at construction; bound when the first node is known.
    Model m = options_.model_file.empty() ? load_model_from_string(model_text_, model_origin_)
                                          : load_model(options_.model_file);
    model_ = std::make_unique<Model>(std::move(m));
    file_model_ = std::make_unique<Model>(*model_);  // marks in code are built on it
  }
  if (options_.lame_controller > 0) {
#if defined(CHAINRT_HAVE_LAME)
    if (!model_) throw std::invalid_argument("the LaME controller needs a model (the chains to plan)");
    if (options_.policy && *options_.policy != Policy::Lame)
      throw std::invalid_argument("the LaME controller runs the lame policy");
    runtime::LameControllerOptions lo;
    lo.period = options_.lame_controller;
    lo.plan.period = options_.lame_reservation_period;
    lo.capacity_permille = options_.lame_capacity_permille;
    lo.log_stderr = options_.lame_log;
    lame_ = std::make_unique<runtime::LameController>(*model_, lo);
    lame_->set_run_id(options_.run_id.empty() ? "rclcpp-" + std::to_string(getpid()) : options_.run_id);
    // the executor runs the plan: its model, its executor, its thread slots
    *model_ = lame_->planned_model();
    options_.executor = lame_->executor_name();
    options_.policy = Policy::Lame;
    options_.threads.reset();
#else
    throw std::invalid_argument("this build of chainrt has no LaME controller (lame/ was not built)");
#endif
  }
  if (options_.run_id.empty()) options_.run_id = "rclcpp-" + std::to_string(getpid());
  monitor_.reserve_trace(options_.trace_capacity);
  policy_ = options_.policy.value_or(Policy::RosDefault);
  const int n = options_.threads.value_or(1);
  for (int i = 0; i < n; ++i) {
    sched::ThreadSpec ts;
    ts.name = "t" + std::to_string(i);
    threads_spec_.push_back(ts);
  }
  // A model with one executor (or a named one) is bound now; else at the first rebuild that
  // knows a node the model has.
  if (model_ && (model_->executors.size() == 1 || !options_.executor.empty())) bind_model({});
  running_.assign(threads_spec_.size(), Running{});
  tids_ = std::vector<std::atomic<int>>(threads_spec_.size());
  bound_ = std::make_unique<Bound>();
  if (binder_) init_chains();
  // The notify waitable carries the guard conditions of the nodes and groups (entities added or
  // removed), cancel()'s and the context's shutdown: any of them makes the executor look again.
  notify_waitable_->set_on_ready_callback([this](std::size_t, int) {
    rebuild_requested_.store(true, std::memory_order_release);
    wake_others();
  });
}

// The model's executor (by name, or the one of the first node the model has) with its policy and
// threads; chains are bound in init_chains().
void ChainExecutor::bind_model(const std::vector<std::string>& node_names) {
  binder_ = std::make_unique<runtime::EntityBinder>(*model_, options_.executor, node_names, options_.policy,
                                                    options_.threads);
  const sched::ExecutorSetup& setup = binder_->setup();
  policy_ = options_.policy.value_or(setup.policy);
  threads_spec_ = setup.threads;
#if defined(CHAINRT_HAVE_LAME)
  if (lame_) threads_spec_ = lame_->slot_threads();
#endif
  if (threads_spec_.size() > sched::kMaxThreads) throw std::invalid_argument("an executor has at most 64 threads");
}

// The chains of the bound model: the instances a source timer stamps (sched::ChainSource),
// their hand-over to successors in this executor, and the monitor's completion of them
// (sched::ChainCompletion, on model callback ids).
void ChainExecutor::init_chains() {
  const Model& m = binder_->model();
  Bound& b = *bound_;
  b.cbs.resize(binder_->size());
  for (auto& c : b.cbs) c.inputs.reserve(64);
  auto model_id = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < binder_->size(); ++i)
      if (binder_->callback(i).name == name) return i;
    return std::nullopt;
  };
  std::vector<runtime::ChainTrack> tracks(m.chains.size());
  std::vector<sched::ChainCompletion::Chain> ends(m.chains.size());
  for (std::uint32_t c = 0; c < m.chains.size(); ++c) {
    const Chain& ch = m.chains[c];
    runtime::ChainTrack& t = tracks[c];
    t.name = ch.name;
    t.period = ch.period;
    t.deadline = ch.deadline;
    ends[c].deadline = ch.deadline;
    for (const auto& n : ch.callbacks)
      if (auto id = model_id(n)) t.members.push_back(static_cast<CallbackId>(*id));
    // chains with the same first callback share its number (its index in the model)
    const std::optional<std::size_t> source = ch.callbacks.empty() ? std::nullopt : model_id(ch.callbacks.front());
    ends[c].source = static_cast<std::uint32_t>(ch.callbacks.empty() ? m.callbacks.size() : m.callback_index(ch.callbacks.front()));
    for (const auto& path : ch.paths()) {
      if (path.empty()) continue;
      for (std::size_t k = 0; k + 1 < path.size(); ++k) {
        auto a = model_id(path[k]), z = model_id(path[k + 1]);
        if (!a || !z) continue;
        auto& succ = b.cbs[*a].successors;
        const std::pair<std::size_t, std::uint32_t> e{*z, c};
        if (std::find(succ.begin(), succ.end(), e) == succ.end()) succ.push_back(e);
      }
      if (auto leaf = model_id(path.back())) ends[c].leaves.push_back(static_cast<CallbackId>(*leaf));
    }
    if (source && binder_->callback(*source).kind == CallbackKind::Timer) b.cbs[*source].source.starts(c, ch.deadline);
  }
  sched::ChainCompletion completion(std::move(ends));
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  monitor_.init(std::move(tracks), std::move(completion), options_.samples_per_chain);
}

ChainExecutor::~ChainExecutor() {
  spinning.store(false);
  wake_others();
  for (auto& th : helpers_)
    if (th.joinable()) th.join();
  stop_stats();
  notify_waitable_->clear_on_ready_callback();
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  for (auto& s : all_slots_)
    if (s->id != kNoCallback) uninstall(*s);
  // another executor's callback may still hold an event of one of these slots (on_event)
  while (deferred_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  for (auto& s : all_slots_)
    if (s->ws) {
      rcl_ret_t r = rcl_wait_set_fini(s->ws.get());
      (void)r;
      rcl_reset_error();
    }
}

Duration ChainExecutor::clock_now() const noexcept { return options_.clock ? options_.clock() : now_ns(); }

// ---- the dispatch path -----------------------------------------------------------------------

// Events reported inside a dispatch of this thread (a callback that publishes). The middleware
// reports a delivery from inside the publish with the subscription's reader lock held (Fast DDS:
// intra-process delivery on the publishing thread), a lock without priority inheritance. Waking
// the subscription's executor there lets its thread, when it outranks the publishing one on the
// same core, preempt the publisher and block in the take on that lock; a thread of middle
// priority (another executor's) then keeps the publisher, and with it the woken thread, off the
// CPU for as long as it runs — measured on the reference system at the stressed load: a
// caching subscription of the behaviour planner's executor (SCHED_FIFO 3) waiting 30.7 ms on a
// SCHED_OTHER publisher behind the hot path's executor (SCHED_FIFO 2), its timer 30.8 ms late.
// So such an event is enlisted, and its executor woken, only when the publishing callback has
// returned (every publish in it, and its lock, done): the message counts as published at the
// callback's end, as the model and the simulator take it. No allocation: a fixed array; a
// callback reaching more entities than it holds enlists the rest at once.
namespace {
constexpr int kMaxDeferredEvents = 32;
thread_local int t_dispatch_depth = 0;
thread_local int t_deferred_count = 0;
thread_local void* t_deferred[kMaxDeferredEvents];
}  // namespace

void ChainExecutor::on_event(Slot* s, std::size_t n, int data) noexcept {
  if (n > 0) {
    if (s->kind == Kind::Waitable) {
      if (data >= 0 && static_cast<std::size_t>(data) < kWaitableIds)
        s->wdata[static_cast<std::size_t>(data)].fetch_add(static_cast<std::int32_t>(n), std::memory_order_relaxed);
      else
        s->wother.fetch_add(static_cast<std::int32_t>(n), std::memory_order_relaxed);
      s->pending.fetch_add(static_cast<std::int64_t>(n), std::memory_order_release);
    } else {
      // A keep-last queue holds at most `depth` items: events beyond it are dropped inputs.
      std::int64_t cur = s->pending.load(std::memory_order_relaxed);
      for (;;) {
        std::int64_t want = cur + static_cast<std::int64_t>(n);
        std::int64_t drop = 0;
        if (s->depth > 0 && want > s->depth) {
          drop = want - s->depth;
          want = s->depth;
        }
        if (s->pending.compare_exchange_weak(cur, want, std::memory_order_acq_rel)) {
          if (drop > 0) s->event_drops.fetch_add(static_cast<std::uint64_t>(drop), std::memory_order_relaxed);
          break;
        }
      }
    }
  }
  if (t_dispatch_depth > 0 && t_deferred_count < kMaxDeferredEvents) {
    for (int i = 0; i < t_deferred_count; ++i)
      if (t_deferred[i] == s) return;
    s->ex->deferred_.fetch_add(1, std::memory_order_relaxed);
    t_deferred[t_deferred_count++] = s;
    return;
  }
  enlist(s);
}

void ChainExecutor::enlist(Slot* s) noexcept {
  ChainExecutor* ex = s->ex;
  if (!s->enlisted.exchange(true, std::memory_order_acq_rel)) {
    Slot* head = ex->dirty_.load(std::memory_order_relaxed);
    do {
      s->next_dirty = head;
    } while (!ex->dirty_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
  }
  ex->wake_others();
}

void ChainExecutor::flush_deferred() noexcept {
  // (enlist() never reports events, so the list does not grow while it is drained)
  for (int i = 0; i < t_deferred_count; ++i) {
    Slot* s = static_cast<Slot*>(t_deferred[i]);
    ChainExecutor* ex = s->ex;
    enlist(s);
    ex->deferred_.fetch_sub(1, std::memory_order_release);  // last touch of ex
  }
  t_deferred_count = 0;
}

void ChainExecutor::wake_others() noexcept {
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0 && !wake_pending_.exchange(true, std::memory_order_seq_cst))
    runtime::futex_wake_all(&wake_);
}

// The first release of a steady timer. A timer bound to a model callback is armed on the
// release grid (sched/timer.hpp: E + offset + k·period on CLOCK_MONOTONIC, E the run's release
// epoch), as chainrt's runtime and rclpy executor arm theirs, so that the model's offsets hold
// whenever the node created its timer; returns the grid index it starts at (> 0: armed after its
// first grid release). Any other timer, and a bound one after a reset (rclcpp's reset restarts
// the period), keeps rcl's next call time (the steady clock is CLOCK_MONOTONIC, the executor's).
// With an injected clock (a deterministic scenario) the phase is the model's: now + offset for a
// bound timer (as the simulator arms it), one period after now for the others. No allocation.
std::int64_t ChainExecutor::arm(Slot& s, Duration now, bool first) noexcept {
  if (options_.clock) {
    s.clock.next = s.model_id ? now + binder_->callback(*s.model_id).offset : now + s.clock.period;
    return 0;
  }
  if (first && s.model_id && binder_) {
    const Duration epoch = options_.release_epoch ? *options_.release_epoch : sched::release_epoch(now);
    const Callback& cb = binder_->callback(*s.model_id);
    const sched::ReleaseGrid grid{epoch, cb.offset, cb.grid_period()};  // a rate or fraction exactly
    s.clock = grid.clock(now, s.clock.rule);
    return grid.start(now).start_index;
  }
  std::int64_t next = 0;
  if (rcl_timer_get_next_call_time(s.handle.get(), &next) == RCL_RET_OK) {
    s.clock.next = next;
  } else {
    rcl_reset_error();
    s.clock.next = now + s.clock.period;
  }
  return 0;
}

Duration ChainExecutor::ready_deadline(const Slot& s) const noexcept {
  if (s.kind == Kind::Timer) {
    if (!s.mcb) return kNoDeadline;
    return s.mcb->source.deadline_of(s.steady ? s.clock.next : s.release_steady);
  }
  if (s.mcb && !s.mcb->inputs.empty()) return s.mcb->inputs.front().deadline;
  return kNoDeadline;
}

void ChainExecutor::make_ready(Slot& s) noexcept {
  if (s.mcb && s.kind == Kind::Subscription) keep_own(*s.mcb, s.pending.load(std::memory_order_acquire));
  tables_->dispatcher->released(s.id, Readiness{this});
}

void ChainExecutor::harvest(Duration now) noexcept {
  Tables& T = *tables_;
  // The dirty list is a stack (newest first); released in the order the events came, which is
  // registration order for a fan-out, each push then costs the ready queue O(1) instead of a
  // sift to the top. The queue's order does not depend on the order of pushes.
  Slot* s = nullptr;
  for (Slot* top = dirty_.exchange(nullptr, std::memory_order_acquire); top;) {
    Slot* below = top->next_dirty;
    top->next_dirty = s;
    s = top;
    top = below;
  }
  while (s) {
    Slot* next = s->next_dirty;
    s->enlisted.store(false, std::memory_order_release);
    if (s->id != kNoCallback && s->id < T.slots.size() && T.slots[s->id] == s) {
      if (s->kind == Kind::Timer) {
        if (s->reset.exchange(false, std::memory_order_acq_rel) && s->steady) arm(*s, now, false);
        next_timer_due_ = 0;
        next_rcl_check_ = 0;
      } else if (s->pending.load(std::memory_order_acquire) > 0 || s->poll.load(std::memory_order_acquire)) {
        if (!T.dispatcher->holds(s->id)) make_ready(*s);
      }
    }
    s = next;
  }
  if (now >= next_timer_due_) {
    Duration due = kNoDeadline;
    for (Slot* t : T.steady_timers) {
      if (t->released || T.dispatcher->holds(t->id)) continue;
      bool cancelled = false;
      if (rcl_timer_is_canceled(t->handle.get(), &cancelled) != RCL_RET_OK) {
        rcl_reset_error();
        continue;
      }
      if (cancelled) continue;  // its reset re-arms it (the reset callback enlists it)
      if (t->clock.ready(now)) {
        t->released = true;
        make_ready(*t);
      } else {
        due = std::min(due, t->clock.next);
      }
    }
    next_timer_due_ = due;
  }
  if (now >= next_rcl_check_ && !T.rcl_timed.empty()) {
    Duration wait = kRclTimerCheck;
    for (Slot* t : T.rcl_timed) {
      if (t->kind == Kind::Timer) {
        if (t->released || T.dispatcher->holds(t->id)) continue;
        std::int64_t left = 0;
        if (rcl_timer_get_time_until_next_call(t->handle.get(), &left) != RCL_RET_OK) {
          rcl_reset_error();  // cancelled: not ready
          continue;
        }
        if (left <= 0) {
          t->release_steady = now - std::min<Duration>(-left, t->clock.period);
          t->released = true;
          make_ready(*t);
        } else {
          wait = std::min<Duration>(wait, left);
        }
      } else {  // a waitable whose timer is due polls itself
        if (t->poll.load(std::memory_order_relaxed) || !t->ws) continue;
        for (auto& h : t->wt_timers) {
          std::int64_t left = 0;
          if (rcl_timer_get_time_until_next_call(h.get(), &left) != RCL_RET_OK) {
            rcl_reset_error();
            continue;
          }
          if (left <= 0) {
            t->poll.store(true, std::memory_order_release);
            if (!T.dispatcher->holds(t->id)) make_ready(*t);
            break;
          }
          wait = std::min<Duration>(wait, left);
        }
      }
    }
    next_rcl_check_ = now + wait;
  }
}

// The instance thread `t` takes of `id` (the lock held): the timer's release and chain instance,
// or the input's; the next event queued at once; the instance handed to the chain successors.
ChainExecutor::Taken ChainExecutor::take(sched::ThreadId t, CallbackId id) noexcept {
  Tables& T = *tables_;
  Slot& s = *T.slots[id];
  running_[t] = Running{&s, id};
  ++s.running;
  Taken k;
  k.queued_deadline = T.dispatcher->deadline(id);
  switch (s.kind) {
    case Kind::Timer: {
      s.released = false;
      if (s.steady) {
        // rcl_timer_call's rule (sched::TimerClock): the next release moves past now.
        const sched::TimerClock::Take tk = s.clock.take(clock_now());
        s.stats.drops += static_cast<std::uint64_t>(tk.skipped);
        k.stamp.release = tk.released;
        next_timer_due_ = std::min(next_timer_due_, s.clock.next);
      } else {
        k.stamp.release = s.release_steady;
      }
      if (s.mcb && s.mcb->source.chain != kNoChain) k.stamp = s.mcb->source.stamp(k.stamp.release);
      break;
    }
    case Kind::Waitable:
      if (s.poll.exchange(false, std::memory_order_acq_rel)) {
        k.poll = true;
      } else {
        for (std::size_t i = 0; i < kWaitableIds && k.wid < 0; ++i) {
          std::int32_t c = s.wdata[i].load(std::memory_order_relaxed);
          while (c > 0 && !s.wdata[i].compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) {
          }
          if (c > 0) k.wid = static_cast<int>(i);
        }
        if (k.wid < 0) {
          std::int32_t c = s.wother.load(std::memory_order_relaxed);
          while (c > 0 && !s.wother.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) {
          }
          if (c > 0) k.wid = -2;
        }
        s.pending.fetch_sub(1, std::memory_order_acq_rel);
      }
      [[fallthrough]];
    default:
      if (s.kind != Kind::Waitable) s.pending.fetch_sub(1, std::memory_order_acq_rel);
      if (s.mcb && s.kind == Kind::Subscription) keep_own(*s.mcb, s.pending.load(std::memory_order_acquire) + 1);
      if (s.mcb && !s.mcb->inputs.empty() && (s.kind != Kind::Waitable || s.ipc)) {
        k.stamp = s.mcb->inputs.front();
        s.mcb->inputs.pop();
      }
      if (s.pending.load(std::memory_order_acquire) > 0 || s.poll.load(std::memory_order_acquire)) {
        make_ready(s);  // the next event is queued at once (a reentrant group lets another thread take it)
        if (T.dispatcher->queued(id)) wake_others();
      }
      break;
  }
  // The chain instance reaches its successors in this executor when this callback STARTS: with
  // several threads a successor may be selected (its message arrived) while this one still runs.
  if (k.stamp.chain != kNoChain && s.mcb)
    hand_over(monitor_.completion(), *bound_, *s.mcb, k.stamp, [&](auto& to, std::uint32_t c) {
      const Duration D = monitor_.completion().chain(c).deadline;
      to.inputs.push(Stamp{k.stamp.release, D > 0 ? k.stamp.release + D : kNoDeadline, c, k.stamp.instance});
      ++to.in_flight;
    });
  return k;
}

// HOT: take `id` for thread `t` (lock held), run it without the lock, record it.
void ChainExecutor::dispatch(sched::ThreadId t, CallbackId id, std::unique_lock<runtime::PiMutex>& lk,
                             const runtime::LateWake& late) {
  const Taken k = take(t, id);
  Slot& s = *tables_->slots[id];
  // The callback's priority for what it asks on the chain's behalf (the accelerator client).
  const runtime::DispatchContext context{tables_->dispatcher->spec(id).priority, s.mon};
  lk.unlock();
  const runtime::DispatchScope in_dispatch(context);
  bool ran = true, threw = false;
  const Duration start = clock_now();
  runtime::CallbackCpu cpu_meter;  // on CLOCK_MONOTONIC: the executor's reading when that is its clock
  if (options_.clock) cpu_meter.start();
  else cpu_meter.start(start);
  ++t_dispatch_depth;  // events it reports are held back until it returns (on_event)
  try {
    ran = invoke(t, s, k);
  } catch (const std::exception& e) {
    threw = true;
    if (options_.print_exceptions)
      std::fprintf(stderr, "chainrt: callback '%s' threw: %s (the executor goes on)\n", s.stats.name.c_str(), e.what());
    keep_exception();
  } catch (...) {
    threw = true;
    if (options_.print_exceptions)
      std::fprintf(stderr, "chainrt: callback '%s' threw a non-standard exception (the executor goes on)\n",
                   s.stats.name.c_str());
    keep_exception();
  }
  const Duration finish = clock_now();
  const Duration cpu = options_.clock ? cpu_meter.stop() : cpu_meter.stop(finish);
  if (--t_dispatch_depth == 0) flush_deferred();
  lk.lock();
  if (k.stamp.chain != kNoChain && s.mcb)  // its message, if any, has been published by now
    hand_over(monitor_.completion(), *bound_, *s.mcb, k.stamp,
              [](auto& to, std::uint32_t) { to.in_flight -= to.in_flight > 0; });
  if (ran || threw) {
    monitor_.finished(s.stats, s.window,
                      runtime::DispatchRecord{s.mon, t, start, finish, cpu, k.queued_deadline,
                                              k.stamp.chain != kNoChain ? k.stamp.release : 0, late.slept_until,
                                              late.woke},
                      threw, s.mcb ? static_cast<CallbackId>(s.model_id.value_or(kNoCallback)) : kNoCallback, k.stamp,
                      [this](std::uint32_t c, Duration, bool missed) {
#if defined(CHAINRT_HAVE_LAME)
                        if (lame_ && missed) lame_->on_deadline_miss(c);  // lock-free
#else
                        (void)this, (void)c, (void)missed;
#endif
                      });
  }
  --s.running;
  tables_->dispatcher->done(t);  // (a rebuild meanwhile carried it over, remapped: resume())
  running_[t] = Running{};
}

// The user's callback of the instance `k` of `s` (no lock held); false when nothing ran (the
// entity is gone, a cancelled timer, no data).
bool ChainExecutor::invoke(sched::ThreadId t, Slot& s, const Taken& k) {
  bool ran = true;
  switch (s.kind) {
    case Kind::Timer:
      if (auto tm = s.timer.lock()) {
        const std::shared_ptr<rcl_timer_call_info_t>& info = s.info[t];
        const rcl_ret_t r = rcl_timer_call_with_info(const_cast<rcl_timer_t*>(s.handle.get()), info.get());
        if (r != RCL_RET_OK) {  // cancelled meanwhile (or invalid): not run
          rcl_reset_error();
          ran = false;
        } else {
          if (s.steady && !options_.clock) info->expected_call_time = k.stamp.release;
          execute_timer(tm, info);
        }
      } else {
        ran = false;
      }
      break;
    case Kind::Subscription: return run_alive(s.sub, [this](const auto& sp) { execute_subscription(sp); });
    case Kind::Service: return run_alive(s.srv, [this](const auto& sp) { execute_service(sp); });
    case Kind::Client: return run_alive(s.cli, [this](const auto& sp) { execute_client(sp); });
    case Kind::Waitable:
      if (auto w = s.wt.lock()) {
        if (k.poll) {
          ran = false;
          if (s.ws && !s.polling.exchange(true)) {
            ScopeExit done{[&s] { s.polling.store(false); }};
            rcl_wait_set_t& ws = *s.ws;
            if (rcl_wait_set_clear(&ws) == RCL_RET_OK) {
              w->add_to_wait_set(ws);
              const rcl_ret_t r = rcl_wait(&ws, 0);
              if (r == RCL_RET_OK && w->is_ready(ws)) {
                w->execute(w->take_data());
                ran = true;
              }
            }
            rcl_reset_error();
          }
        } else if (k.wid >= 0) {
          w->execute(w->take_data_by_entity_id(static_cast<std::size_t>(k.wid)));
        } else if (k.wid == -2) {
          w->execute(w->take_data());
        } else {
          ran = false;
        }
      } else {
        ran = false;
      }
      break;
  }
  return ran;
}

// With rethrow_exceptions, the first exception of a callback is kept for spin() to rethrow.
void ChainExecutor::keep_exception() {
  if (!options_.rethrow_exceptions) return;
  std::unique_lock<runtime::PiMutex> elk(mutex_);
  if (!pending_exception_) pending_exception_ = std::current_exception();
}

bool ChainExecutor::run_one(sched::ThreadId t, Duration until, bool wait) {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  bool changed = true;
  runtime::LateWake late;  // this thread's late wake-up from its last wait (the dispatch record's)
  for (;;) {
    if (rebuild_requested_.load(std::memory_order_acquire) || !tables_) {
      lk.unlock();
      rebuild();
      lk.lock();
      if (!tables_) return false;
    }
    if (!spinning.load() || !::rclcpp::ok(context_) || pending_exception_) return false;
    const std::uint32_t seq = wake_.load(std::memory_order_seq_cst);
    const Duration now = clock_now();
    Tables& T = *tables_;
    const std::size_t before = T.dispatcher->size();
    harvest(now);
    if (T.dispatcher->size() > before) changed = true;
    const CallbackId id = T.dispatcher->take(t, Readiness{this});
    if (T.dispatcher->admitted()) changed = true;
    if (changed && !T.dispatcher->empty() && sleepers_.load(std::memory_order_relaxed) > 0) wake_others();
    changed = false;
    if (id != kNoCallback) {
      dispatch(t, id, lk, late);
      return true;
    }
    if (!wait || now >= until) return false;
    Duration timeout = -1;
    auto bound = [&](Duration at) {
      if (at == kNoDeadline) return;
      const Duration d = std::max<Duration>(at - now, 0);
      timeout = timeout < 0 ? d : std::min(timeout, d);
    };
    bound(next_timer_due_);
    if (!T.rcl_timed.empty()) bound(next_rcl_check_);
    bound(until);
    if (timeout == 0) continue;
    if (options_.clock && (timeout < 0 || timeout > 1'000'000)) timeout = 1'000'000;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_pending_.store(false, std::memory_order_seq_cst);
    lk.unlock();
    runtime::futex_wait(&wake_, seq, timeout);
    // (on the steady clock only: a simulated clock's instants are not the kernel's)
    late = runtime::late_wake(timeout > 0 && !options_.clock ? now + timeout : 0);
    lk.lock();
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void ChainExecutor::thread_main(sched::ThreadId t) {
  while (spinning.load() && ::rclcpp::ok(context_)) {
    run_one(t, kNoDeadline, true);
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (pending_exception_) break;
  }
  spinning.store(false);
  wake_others();
}

// ---- rclcpp's spin functions -------------------------------------------------------------------

namespace {
struct SavedThread {
  int policy = SCHED_OTHER;
  sched_param param{};
  cpu_set_t cpus{};
  bool ok = false;
};
SavedThread save_thread() {
  SavedThread s;
  s.ok = pthread_getschedparam(pthread_self(), &s.policy, &s.param) == 0 &&
         sched_getaffinity(0, sizeof s.cpus, &s.cpus) == 0;
  return s;
}
void restore_thread(const SavedThread& s, bool had_reservation) {
  if (had_reservation) runtime::set_thread_reservation(static_cast<int>(gettid()), std::nullopt);
  if (!s.ok) return;
  pthread_setschedparam(pthread_self(), s.policy, &s.param);
  sched_setaffinity(0, sizeof s.cpus, &s.cpus);
}
}  // namespace

void ChainExecutor::spin() {
  if (spinning.exchange(true)) throw std::runtime_error("spin() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = now_ns();
  }
  start_stats();
  const std::size_t n = threads_spec_.size();
  ScopeExit lame_stop{[this] { stop_lame(); }};
  helpers_.clear();
  for (std::size_t t = 1; t < n; ++t)
    helpers_.emplace_back([this, t] {
      if (options_.thread_params) {
        runtime::ThreadSetupResult r = runtime::apply_thread_spec(threads_spec_[t]);
        std::unique_lock<runtime::PiMutex> lk(mutex_);
        for (auto& w : r.warnings) warnings_.push_back(std::move(w));
      }
      tids_[t].store(static_cast<int>(gettid()));
      thread_main(static_cast<sched::ThreadId>(t));
    });
  ScopeExit join{[this] {  // also when something below throws
    spinning.store(false);
    wake_others();
    for (auto& th : helpers_)
      if (th.joinable()) th.join();
    helpers_.clear();
  }};
  // Thread 0 is the caller; it takes its parameters only now, after every thread of the run
  // exists (a SCHED_DEADLINE thread may not create threads: clone fails with EAGAIN), and gets
  // its own back when spin() returns.
  tids_[0].store(static_cast<int>(gettid()));
  start_lame();
  const SavedThread saved = save_thread();
  bool reserved = false;
  if (options_.thread_params) {
    runtime::ThreadSetupResult r = runtime::apply_thread_spec(threads_spec_[0]);
    reserved = r.deadline;
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    for (auto& w : r.warnings) warnings_.push_back(std::move(w));
  }
  thread_main(0);
  stop_lame();
  if (options_.thread_params) restore_thread(saved, reserved);
  tids_[0].store(0);
  spinning.store(false);
  wake_others();
  for (auto& th : helpers_)
    if (th.joinable()) th.join();
  helpers_.clear();
  for (std::size_t t = 1; t < tids_.size(); ++t) tids_[t].store(0);
  stop_stats();
  if (options_.print_report) print_summary();
  rethrow_pending();
}

void ChainExecutor::spin_once_impl(std::chrono::nanoseconds timeout) {
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = now_ns();
  }
  const Duration until = timeout.count() < 0 ? kNoDeadline : clock_now() + timeout.count();
  run_one(0, until, true);
  rethrow_pending();
}

::rclcpp::FutureReturnCode ChainExecutor::spin_until_future_complete_impl(
    std::chrono::nanoseconds timeout,
    const std::function<std::future_status(std::chrono::nanoseconds)>& wait_for_future) {
  if (wait_for_future(std::chrono::seconds(0)) == std::future_status::ready) return ::rclcpp::FutureReturnCode::SUCCESS;
  if (spinning.exchange(true)) throw std::runtime_error("spin_until_future_complete() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = now_ns();
  }
  const Duration end = timeout.count() < 0 ? kNoDeadline : now_ns() + timeout.count();
  while (::rclcpp::ok(context_) && spinning.load()) {
    // One callback at a time; the future is re-checked at least every 100 ms (it may be
    // completed by another thread).
    const Duration slice = std::min<Duration>(end == kNoDeadline ? kRclTimerCheck : end - now_ns(), kRclTimerCheck);
    run_one(0, clock_now() + std::max<Duration>(slice, 0), true);
    rethrow_pending();
    if (wait_for_future(std::chrono::seconds(0)) == std::future_status::ready) return ::rclcpp::FutureReturnCode::SUCCESS;
    if (end != kNoDeadline && now_ns() >= end) return ::rclcpp::FutureReturnCode::TIMEOUT;
  }
  return ::rclcpp::FutureReturnCode::INTERRUPTED;
}

void ChainExecutor::spin_some(std::chrono::nanoseconds max_duration) { spin_some_impl(max_duration, false); }

void ChainExecutor::spin_all(std::chrono::nanoseconds max_duration) {
  if (max_duration.count() < 0) throw std::invalid_argument("max_duration must be greater than or equal to 0");
  spin_some_impl(max_duration, true);
}

void ChainExecutor::spin_some_impl(std::chrono::nanoseconds max_duration, bool exhaustive) {
  if (spinning.exchange(true)) throw std::runtime_error("spin_some() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  const Duration start = now_ns();
  auto time_left = [&] { return max_duration.count() == 0 || now_ns() - start < max_duration.count(); };
  std::size_t budget = SIZE_MAX;
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = start;
    harvest(clock_now());
    tables_->dispatcher->admit_all(Readiness{this});
    if (!exhaustive) budget = tables_->dispatcher->size() + tables_->dispatcher->waiting();
  }
  for (std::size_t done = 0; done < budget && time_left() && ::rclcpp::ok(context_) && spinning.load(); ++done) {
    if (!run_one(0, 0, false)) break;
    rethrow_pending();
  }
  rethrow_pending();
}

void ChainExecutor::cancel() {
  ::rclcpp::Executor::cancel();
  wake_others();
}

void ChainExecutor::rethrow_pending() {
  std::exception_ptr e;
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    std::swap(e, pending_exception_);
  }
  if (e) std::rethrow_exception(e);
}

}  // namespace chainrt::rclcpp
