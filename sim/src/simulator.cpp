// chainrt sim: the discrete-event core (see simulator.hpp for the semantics it models and the
// paper sections behind them). One event heap; per executor a sched::Dispatcher whose queue is
// the readyQueue (every other policy) or the default executor's readySet (ros-default);
// per core a preemptive thread scheduler with SCHED_DEADLINE-like reservations.
#include "chainrt/sim/simulator.hpp"
#include "sim_state.hpp"

namespace chainrt::sim {
namespace detail {

Duration Simulator::pending_deadline(std::uint32_t c) const {
  const CbState& s = cb_[c];
  Duration d = kNoDeadline;
  if (s.kind == CallbackKind::Timer) {
    if (s.source_rel_deadline != kNoDeadline) d = s.clock.next + s.source_rel_deadline;  // d = a + D
    return d;
  }
  if (s.q_count == 0) return d;
  const Message& msg = pool_[s.q_begin + s.q_head];
  for (std::uint32_t k = 0; k < msg.n; ++k)
    if (chain_key_[msg.s[k].chain] > 0) d = std::min(d, msg.s[k].release + chain_key_[msg.s[k].chain]);
  if (s.source_rel_deadline != kNoDeadline) d = std::min(d, msg.arrival + s.source_rel_deadline);
  return d;
}

void Simulator::on_release(std::uint32_t c) {
  ExecState& e = ex_[cb_[c].exec];
  if (!pending(c)) return;
  admit(e, c);
  mark_dispatch(cb_[c].exec);
}

void Simulator::dispatch(ExecState& e, std::uint32_t first) {
  bool idle_before = false;  // an idle thread found nothing earlier in this pass
  if (first != kNone && !th_[first].busy && !kept_off_core(e, first)) {
    if (!try_take(e, first)) {
      if (e.d.polls()) return;
      idle_before = true;
    }
  }
  // LaME's best-effort refresh can admit work in the middle of a pass: the idle threads tried
  // before it look again, as the runtime wakes them (Executor::wake_others on admitted()).
  for (bool again = true; again;) {
    again = false;
    for (std::uint32_t t : e.threads) {
      if (th_[t].busy || t == first || kept_off_core(e, t)) continue;
      const bool took = try_take(e, t);
      if (e.d.admitted() && idle_before) again = true;
      if (!took) {
        idle_before = true;
        if (e.d.polls() || e.d.idle()) return;
      }
    }
    first = kNone;
  }
}

bool Simulator::kept_off_core(const ExecState& e, std::uint32_t t) const {
  const ThreadState& me = th_[t];
  if (me.cls != 1 || (!group_of_core_.empty() && group_of_core_[me.core] != kNone)) return false;
  for (std::uint32_t u : e.threads) {
    const ThreadState& o = th_[u];
    if (u != t && o.core == me.core && o.runnable() && o.cls == 1 && o.rank <= me.rank) return true;
  }
  return false;
}

// Selection under the executor's admission rule (a polling point of the default executors,
// LaME's best-effort refresh) and Algorithm 1: sched::Dispatcher::take.
bool Simulator::try_take(ExecState& e, std::uint32_t t) {
  const CallbackId lc = e.d.take(th_[t].local, Src{this, &e});
  if (lc == kNoCallback) return false;
  start_exec(t, static_cast<std::uint32_t>(e.setup.callbacks[lc]));
  return true;
}

void Simulator::start_exec(std::uint32_t t, std::uint32_t c) {
  ThreadState& th = th_[t];
  CbState& s = cb_[c];
  th.busy = true;
  th.cb = c;
  th.start = now_;
  if (s.kind == CallbackKind::Timer) {
    const auto tk = s.clock.take(now_);
    th.release = tk.released + s.cur_jitter;
    th.chain_release = tk.released;
    th.input.n = 0;
    th.input.arrival = th.release;
    s.timer_ready = false;
    if (tk.skipped > 0) {
      r_.callbacks[c].drops += tk.skipped;
      for (const ChainRef& r : s.chains)
        if (r.source) r_.chains[r.chain].drops += tk.skipped, r_.chains[r.chain].released += tk.skipped;
    }
    s.cur_jitter = jitter_sample(s);
    push_event(s.clock.next + s.cur_jitter, Ev::TimerFire, c);
  } else {
    copy_message(th.input, pool_[s.q_begin + s.q_head]);
    s.q_head = (s.q_head + 1) % s.q_cap;
    --s.q_count;
    th.release = th.input.arrival;
    th.chain_release = th.release;
    if (pending(c)) admit(ex_[s.exec], c);  // the next input: one instance at a time
  }
  th.chain_instance = s.started++;
  for (const ChainRef& r : s.chains)
    if (r.source) ++r_.chains[r.chain].released;
  th.completes_pair = true;
  if (s.fset != kNone)
    for (std::uint32_t o : fsets_[s.fset])
      if (o != c && !cb_[o].fresh) th.completes_pair = false;
  if (s.exec_script && s.exec_k < s.exec_script->size())  // SimOptions::exec_script
    th.exec_total = scaled(std::clamp((*s.exec_script)[s.exec_k++], s.bcet, s.wcet));
  else
    th.exec_total = th.completes_pair ? exec_time(s) : scaled(s.cache_only);  // a cache-only run (cache_only.hpp)
  th.drawn = th.exec_total;
  th.exec_done = 0;
  th.next_call = 0;
  th.remaining = chunk_end(th);
  mark(th.core);
}

void Simulator::record(std::uint32_t chain, Duration release) {
  ChainStats& st = r_.chains[chain];
  const Duration rt = now_ - release;
  if (st.instances == 0 || rt > st.wcrt) st.wcrt = rt;
  if (st.instances == 0 || rt < st.bcrt) st.bcrt = rt;
  st.mean += static_cast<double>(rt);  // sum until finalised
  ++st.instances;
  if (st.deadline > 0 && rt > st.deadline) {
    ++st.deadline_misses;
    if (o_.control && o_.control->watches(chain) && !missed_) {
      missed_ = true;
      const Duration at = o_.control->next_activation(now_, true);
      if (at >= 0 && (control_at_ < 0 || at < control_at_)) schedule_control(at);
    }
  }
  if (o_.keep_samples) {
    st.samples.push_back(rt);
    st.releases.push_back(release);
  }
}

void Simulator::schedule_control(Duration at) {
  control_at_ = std::max(at, now_);
  push_event(control_at_, Ev::Control, ++control_version_);
}

void Simulator::control_activation() {
  std::vector<ExecSamples> taken(samples_.size());
  std::swap(taken, samples_);
  const bool missed = missed_;
  missed_ = false;
  for (const Reconfiguration& r : o_.control->activate(now_, missed, taken)) reconfigure(r);
  const Duration at = o_.control->next_activation(now_ + 1, missed_);
  control_at_ = -1;
  if (at >= 0) schedule_control(at);
}

// As the runtime's Executor::reconfigure (a new ready queue; queued and running instances carry
// over; kind and wait-set order stay) and sched_setattr on the executor's threads.
void Simulator::reconfigure(const Reconfiguration& r) {
  if (r.executor >= ex_.size()) throw std::invalid_argument("simulator: a reconfiguration names no executor");
  ExecState& e = ex_[r.executor];
  if (r.reservations.size() > e.threads.size())
    throw std::invalid_argument("simulator: a reconfiguration names more threads than the executor has");
  for (std::size_t t = 0; t < r.reservations.size(); ++t) set_reservation(e.threads[t], r.reservations[t]);
  if (!r.specs.empty()) {
    auto fresh = e.d.rebuilt(r.specs, r.groups);
    e.d.install(fresh);
  }
  mark_dispatch(static_cast<std::uint32_t>(r.executor));
}

// A reservation set on a running thread. With the same period as before, the replenishment grid
// stays and this period's remaining budget moves by the change (the core's reservations stay
// in phase, as the supply bound function of the analyses assumes); otherwise a new server
// starts now with a full budget.
void Simulator::set_reservation(std::uint32_t t, const std::optional<Reservation>& r) {
  ThreadState& th = th_[t];
  charge(cores_[th.core]);
  const bool on = r && r->budget > 0 && r->period > 0;
  if (on && th.has_res && th.P == r->period) {
    th.budget = std::max<Duration>(0, th.budget + r->budget - th.Q);
    th.Q = r->budget;
  } else if (on) {
    th.has_res = true;
    th.cls = 0;
    th.Q = r->budget;
    th.P = r->period;
    th.budget = th.Q;
    th.rank = now_ + th.P;
    push_event(now_ + th.P, Ev::Replenish, t, ++th.res_gen);
  } else if (th.has_res) {
    th.has_res = false;
    ++th.res_gen;
    th.cls = 2;
    th.rank = t;
  }
  mark(th.core);
}

Duration Simulator::comm_delay(const Out& out) {
  if (o_.comm == CommDelay::Sampled) {
    const auto& ms = m_.communication.measurements;
    Bytes best = -1;
    for (const auto& mm : ms)
      if (mm.kind == out.comm && (best < 0 || std::llabs(mm.size - out.size) < std::llabs(best - out.size))) best = mm.size;
    if (best >= 0) {
      std::uint32_t count = 0;
      for (const auto& mm : ms)
        if (mm.kind == out.comm && mm.size == best) ++count;
      std::uint32_t pick = static_cast<std::uint32_t>(rng_.next() % count);
      for (const auto& mm : ms)
        if (mm.kind == out.comm && mm.size == best && pick-- == 0) return mm.latency;
    }
  }
  return out.fixed_delay;
}

void Simulator::complete_exec(std::uint32_t t) {
  ThreadState& th = th_[t];
  const std::uint32_t c = th.cb;
  CbState& s = cb_[c];
  ExecState& e = ex_[s.exec];
  CallbackStats& cs = r_.callbacks[c];
  ++cs.executions;
  ++r_.executions;
  cs.max_latency = std::max(cs.max_latency, now_ - th.release);
  if (o_.trace) {
    if (r_.trace.size() < o_.trace_limit) r_.trace.push_back(TraceEntry{t, c, th.release, th.start, now_});
    else r_.trace_truncated = true;
  }
  if (o_.control) {  // the monitoring's sample: this instance's execution time
    ExecSamples& x = samples_[c];
    ++x.count;
    Duration v = th.drawn;
    for (Duration& slot : x.largest)
      if (v > slot) std::swap(v, slot);
  }
  // chain instances: start, forward, or finish (Sec. III: R = finish of the last - release of the first)
  Message out;
  out.n = 0;
  bool publish = true;
  if (s.kind == CallbackKind::FusionTrigger)
    for (std::uint32_t in : s.fuses) publish = publish && cb_[in].cached;
  for (const ChainRef& r : s.chains) {
    Stamp in{r.chain, -1, 0};
    if (r.source) {
      in = Stamp{r.chain, th.chain_release, th.chain_instance};
    } else {
      for (std::uint32_t k = 0; k < th.input.n; ++k)
        if (th.input.s[k].chain == r.chain) in = th.input.s[k];
    }
    if (in.release < 0) continue;
    if (r.last) {
      if (completion_.leaf_done(r.chain, c, in.instance)) record(r.chain, in.release);
    } else if (out.n < kMaxStamps) {
      out.s[out.n++] = in;
    }
  }
  if (s.fset != kNone) {  // implicit fusion: cache, and publish once the set is complete
    copy_message(s.cache, out);
    s.fresh = true;
    for (std::uint32_t o : fsets_[s.fset]) publish = publish && cb_[o].fresh;
    if (publish) {
      out.n = 0;
      for (std::uint32_t o : fsets_[s.fset]) {
        CbState& mem = cb_[o];
        for (std::uint32_t k = 0; k < mem.cache.n && out.n < kMaxStamps; ++k) out.s[out.n++] = mem.cache.s[k];
        mem.fresh = false;
      }
    }
  }
  if (s.kind == CallbackKind::FusionInput && !s.cached) {
    s.cached = true;
    for (std::uint32_t trig : s.fused_by)
      if (pending(trig)) on_release(trig);
  }
  if (publish) {
    for (Out& o : s.outs) {
      Message msg;
      msg.n = 0;
      for (std::uint32_t k = 0; k < out.n; ++k)
        for (std::uint32_t ch : o.chains)
          if (out.s[k].chain == ch) msg.s[msg.n++] = out.s[k];
      if (o.device) {  // a server-mode request: its continuation is delivered by the device
        const DeviceCall& call = *s.piece->request;
        Request rq;
        rq.piece = c;
        rq.target = o.sub;
        rq.segment = static_cast<std::uint32_t>(call.segment);
        const auto prio = effective_priority(m_, c);
        rq.key = prio ? -static_cast<std::int64_t>(*prio) : std::numeric_limits<std::int64_t>::max();
        msg.arrival = now_;
        if (flight_free_.empty()) {
          rq.slot = static_cast<std::uint32_t>(flight_.size());
          flight_.emplace_back();
        } else {
          rq.slot = flight_free_.back();
          flight_free_.pop_back();
        }
        copy_message(flight_[rq.slot], msg);
        issue(static_cast<std::uint32_t>(accelerator_index(*user_, call.accelerator)), rq);
        continue;
      }
      // DDS delivers one writer's samples to a reader in the order they were written (a
      // reliable reader waits for a gap to be filled, a best-effort one discards an older
      // sample): a message never overtakes an earlier one on the same pair, however the
      // latencies are drawn (CommDelay::Sampled draws each message's independently).
      const Duration d = comm_delay(o);
      const bool in_flight = o.last_arrival >= now_;  // an earlier message arrives now or later
      msg.arrival = std::max(now_ + d, o.last_arrival);
      o.last_arrival = msg.arrival;
      if (d == 0 && !in_flight) {
        deliver(o.sub, msg);
      } else {
        std::uint32_t slot;
        if (flight_free_.empty()) {
          slot = static_cast<std::uint32_t>(flight_.size());
          flight_.emplace_back();
          copy_message(flight_.back(), msg);
        } else {
          slot = flight_free_.back();
          flight_free_.pop_back();
          copy_message(flight_[slot], msg);
        }
        push_event(msg.arrival, Ev::Deliver, o.sub, slot);
      }
    }
  }
  // Publishing happens inside the callback: idle threads react to the new messages while its
  // group is still taken; only then does the callback return and free its group.
  flush_dispatch();
  e.d.done(th.local);
  th.busy = false;
  th.cb = kNone;
  mark_dispatch(s.exec, t);
}

void Simulator::deliver(std::uint32_t sub, const Message& msg) {
  CbState& s = cb_[sub];
  if (s.q_cap == 0) return;  // a timer subscribed to nothing
  if (s.q_count == s.q_cap) {  // queue full: the oldest message is overwritten (a drop)
    const Message& old = pool_[s.q_begin + s.q_head];
    ++r_.callbacks[sub].drops;
    for (std::uint32_t k = 0; k < old.n; ++k) ++r_.chains[old.s[k].chain].drops;
    s.q_head = (s.q_head + 1) % s.q_cap;
    --s.q_count;
    ExecState& e = ex_[s.exec];
    if (!e.d.polls() && e.d.queued(s.local)) {  // still visible, re-keyed by its new oldest message
      copy_message(pool_[s.q_begin + (s.q_head + s.q_count) % s.q_cap], msg);
      ++s.q_count;
      e.d.rekey(s.local, pending_deadline(sub));
      on_release(sub);
      return;
    }
  }
  copy_message(pool_[s.q_begin + (s.q_head + s.q_count) % s.q_cap], msg);
  ++s.q_count;
  on_release(sub);
}

// Where the thread's current CPU chunk ends (CPU time of the instance): at the next direct call,
// or at the end of the instance's CPU time (a call beyond it is made when the CPU part is over).
Duration Simulator::chunk_end(const ThreadState& th) const {
  const Piece* p = cb_[th.cb].piece;
  if (p && th.next_call < p->direct.size()) return std::min(p->direct[th.next_call].at, th.exec_total);
  return th.exec_total;
}

// The thread ran its chunk: a direct call (the thread blocks) or the end of the instance.
void Simulator::chunk_done(std::uint32_t t) {
  ThreadState& th = th_[t];
  th.exec_done = chunk_end(th);
  const Piece* p = cb_[th.cb].piece;
  if (p && th.next_call < p->direct.size()) {
    const DeviceCall& call = p->direct[th.next_call];
    Request rq;
    rq.piece = th.cb;
    rq.call = th.next_call;
    rq.thread = t;
    rq.segment = static_cast<std::uint32_t>(call.segment);
    th.suspended = true;
    issue(static_cast<std::uint32_t>(accelerator_index(*user_, call.accelerator)), rq);
    return;
  }
  complete_exec(t);
}

void Simulator::charge(Core& k) {
  if (k.running != kNone) {
    ThreadState& th = th_[k.running];
    const Duration el = now_ - k.since;
    th.remaining -= el;
    if (th.has_res) th.budget -= el;
  }
  k.since = now_;
}

void Simulator::resched(std::uint32_t core) {
  if (!group_of_core_.empty() && group_of_core_[core] != kNone) return resched_group(groups_[group_of_core_[core]]);
  Core& k = cores_[core];
  k.dirty = false;
  charge(k);
  std::uint32_t best = kNone;
  for (std::uint32_t t : k.threads)
    if (th_[t].runnable() && (best == kNone || runs_before(t, best, t == k.running, best == k.running))) best = t;
  if (best == k.running && best == kNone) return;
  k.running = best;
  ++k.version;
  if (best != kNone) {
    const ThreadState& th = th_[best];
    Duration dt = th.remaining;
    if (th.has_res) dt = std::min(dt, th.budget);
    push_event(now_ + dt, Ev::CoreDone, core, k.version);
  }
}

// SimOptions::global_threads: the group's ready threads of the highest class and rank run, one
// per core; a running thread chosen again keeps its core (and its pending completion event), one
// no longer chosen is preempted, a newly chosen one takes a free core.
void Simulator::resched_group(CoreGroup& g) {
  for (std::uint32_t c : g.cores) {
    cores_[c].dirty = false;
    charge(cores_[c]);
  }
  auto running = [&](std::uint32_t t) { return cores_[th_[t].core].running == t; };
  std::vector<std::uint32_t>& ready = ready_scratch_;
  ready.clear();
  for (std::uint32_t t : g.threads)
    if (th_[t].runnable()) ready.push_back(t);
  const std::size_t n = std::min(ready.size(), g.cores.size());
  std::partial_sort(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(n), ready.end(),
                    [&](std::uint32_t a, std::uint32_t b) { return runs_before(a, b, running(a), running(b)); });
  auto chosen = [&](std::uint32_t t) {
    return std::find(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(n), t) != ready.begin() + static_cast<std::ptrdiff_t>(n);
  };
  for (std::uint32_t c : g.cores)
    if (Core& k = cores_[c]; k.running != kNone && !chosen(k.running)) {
      k.running = kNone;
      ++k.version;
    }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t t = ready[i];
    if (running(t)) continue;
    for (std::uint32_t c : g.cores) {
      Core& k = cores_[c];
      if (k.running != kNone) continue;
      k.running = t;
      k.since = now_;
      ++k.version;
      th_[t].core = c;
      const ThreadState& th = th_[t];
      push_event(now_ + (th.has_res ? std::min(th.remaining, th.budget) : th.remaining), Ev::CoreDone, c, k.version);
      break;
    }
  }
}

// The first timer releases, reservations' replenishments and the control's activation.
void Simulator::start() {
  for (std::uint32_t c = 0; c < cb_.size(); ++c) {
    CbState& s = cb_[c];
    if (s.kind != CallbackKind::Timer) continue;
    s.cur_jitter = jitter_sample(s);
    push_event(s.clock.next + s.cur_jitter, Ev::TimerFire, c);
  }
  for (std::uint32_t t = 0; t < th_.size(); ++t)
    if (th_[t].has_res) push_event(0, Ev::Replenish, t, th_[t].res_gen);
  if (o_.control) {
    samples_.assign(cb_.size(), ExecSamples{});
    const Duration at = o_.control->next_activation(0, false);
    if (at >= 0) schedule_control(at);
  }
}

void Simulator::handle(const Event& ev) {
  switch (ev.kind) {
    case Ev::TimerFire:
      cb_[ev.a].timer_ready = true;
      on_release(ev.a);
      break;
    case Ev::Deliver:
      flight_free_.push_back(ev.b);
      deliver(ev.a, flight_[ev.b]);  // the slot is reused only by a later publish
      break;
    case Ev::CoreDone: {
      Core& k = cores_[ev.a];
      if (ev.b != k.version || k.running == kNone) break;
      charge(k);
      const std::uint32_t t = k.running;
      if (th_[t].remaining <= 0) {
        k.running = kNone;
        if (th_[t].device != kNone) {  // an accelerator's server thread: its overhead is spent
          th_[t].busy = false;
          start_device(th_[t].device);
        } else {
          chunk_done(t);
        }
      }
      mark(ev.a);
      break;
    }
    case Ev::DeviceDone:
      device_done(ev.a);
      break;
    case Ev::Replenish: {
      ThreadState& th = th_[ev.a];
      if (ev.b != th.res_gen || !th.has_res) break;  // replaced by a Control's reservation
      charge(cores_[th.core]);
      th.budget = th.Q;
      th.rank = now_ + th.P;  // server deadline
      push_event(now_ + th.P, Ev::Replenish, ev.a, th.res_gen);
      mark(th.core);
      break;
    }
    case Ev::Control:
      if (ev.a == control_version_) control_activation();
      break;
  }
}

// Unfinished instances older than their deadline at the end count as misses (a starved chain
// must not look fine because it never completes).
void Simulator::count_unfinished(Duration end) {
  auto late = [&](const Message& msg) {
    for (std::uint32_t k = 0; k < msg.n; ++k) {
      const Duration D = chain_deadline_[msg.s[k].chain];
      if (D > 0 && end - msg.s[k].release > D) ++r_.chains[msg.s[k].chain].deadline_misses;
    }
  };
  for (std::uint32_t c = 0; c < cb_.size(); ++c) {
    const CbState& s = cb_[c];
    for (std::uint32_t i = 0; i < s.q_count; ++i) late(pool_[s.q_begin + (s.q_head + i) % s.q_cap]);
    if (s.kind == CallbackKind::Timer && s.timer_ready)
      for (const ChainRef& r : s.chains)
        if (r.source && chain_deadline_[r.chain] > 0 && end - s.clock.next > chain_deadline_[r.chain])
          ++r_.chains[r.chain].deadline_misses;
  }
  for (const Event& ev : heap_)
    if (ev.kind == Ev::Deliver) late(flight_[ev.b]);
  for (const DeviceState& d : dev_) {  // server-mode requests waiting or in service
    for (const Request& rq : d.queue)
      if (rq.slot != kNone) late(flight_[rq.slot]);
    if (d.busy && d.current.slot != kNone) late(flight_[d.current.slot]);
  }
  for (const ThreadState& th : th_)
    if (th.busy && th.cb != kNone) {
      Message in = th.input;
      for (const ChainRef& r : cb_[th.cb].chains)
        if (r.source && in.n < kMaxStamps) in.s[in.n++] = Stamp{r.chain, th.chain_release, th.chain_instance};
      late(in);
    }
}

SimResult Simulator::run() {
  start();
  const Duration end = o_.duration;
  while (!heap_.empty() && heap_.front().t <= end) {
    now_ = heap_.front().t;
    // every event of this instant first (simultaneous releases are seen together), then the
    // dispatch decisions, then the cores. A completion is the exception: it runs its own
    // dispatch pass at once (complete_exec), so completions of one instant are applied one at
    // a time (docs/simulator.md, "Instants").
    while (!heap_.empty() && heap_.front().t == now_) {
      const Event ev = heap_.front();
      std::pop_heap(heap_.begin(), heap_.end(), EventLater{});
      heap_.pop_back();
      ++r_.events;
      handle(ev);
    }
    flush_devices();
    flush_dispatch();
    while (!dirty_.empty()) {
      const std::uint32_t core = dirty_.back();
      dirty_.pop_back();
      resched(core);
    }
  }
  now_ = end;
  count_unfinished(end);
  for (ChainStats& st : r_.chains) {
    if (st.instances > 0) st.mean /= static_cast<double>(st.instances);
    if (!st.samples.empty()) {
      std::vector<Duration> v = st.samples;
      const std::size_t k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      st.p99 = v[k];
    }
  }
  r_.duration = end;
  return std::move(r_);
}

}  // namespace detail

SimResult simulate(const Model& user_model, const SimOptions& options) {
  using detail::Simulator;
  // Each job runs its sampled time in [BCET, WCET + its executor's dispatch_overhead], the cost
  // interval every analysis charges (facts.hpp, charge_dispatch_overhead).
  Model storage;
  const Model& model = charge_dispatch_overhead(user_model, storage);
  if (!uses_accelerators(model)) {
    Simulator s(model, options);
    return s.run();
  }
  // Callbacks with server-mode segments run as pieces (model/accelerator.hpp); the result is
  // reported per callback of the model: its executions are its last piece's, its drops and
  // largest latency those of any piece.
  const AcceleratedModel am = expand_accelerators(model);
  Simulator s(am.model, options, &am, &model);
  SimResult r = s.run();
  for (const auto& c : am.model.callbacks) r.trace_callbacks.push_back(c.name);
  std::vector<CallbackStats> per(model.callbacks.size());
  r.executions = 0;
  for (std::size_t u = 0; u < model.callbacks.size(); ++u) {
    per[u].name = model.callbacks[u].name;
    per[u].executions = r.callbacks[am.last[u]].executions;
    for (std::size_t p = am.first[u]; p <= am.last[u]; ++p) {
      per[u].drops += r.callbacks[p].drops;
      per[u].max_latency = std::max(per[u].max_latency, r.callbacks[p].max_latency);
    }
    r.executions += static_cast<std::uint64_t>(per[u].executions);
  }
  r.callbacks = std::move(per);
  return r;
}

}  // namespace chainrt::sim
