// chainrt._rclpy_exec: the hot loop of chainrt.rclpy (the rclpy executor) in C++.
//
// Owns, for one chainrt.rclpy executor: the readiness of its rclpy entities, the
// sched::Dispatcher that orders them (EDF ready-queue paper Sec. IV-A, Algorithm 1; PiCAS/FP,
// mixed, ros-default) and says when ready work enters its queue (ros-default's polling points,
// LaME's best-effort refresh) — shared with the C++ runtime, the rclcpp executor and the
// simulator — the chain instances that travel from
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
#include "loop.hpp"

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

// entities: (kind, rcl handle address (0: external), group, priority or None, affinity, name)
Loop::Loop(const std::string& policy, std::vector<bool> group_reentrant,
           const std::vector<std::tuple<int, std::uintptr_t, std::uint32_t, std::optional<int>,
                                        std::uint64_t, std::string>>& entities,
           const std::vector<std::tuple<std::string, Duration, Duration, std::vector<std::vector<CallbackId>>>>& chains,
           const std::vector<std::tuple<std::string, std::vector<int>, std::optional<int>, Duration, Duration, bool>>& threads,
           std::size_t sample_capacity, const std::vector<std::uint32_t>& take_positions)
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
  groups_ = groups;
  tids_ = std::vector<std::atomic<int>>(threads_.size());
  // The ready queue and admission of the C++ runtime, the rclcpp executor and the simulator
  // (sched/dispatcher.hpp), e.g. ros-default's polling points.
  std::vector<bool> rt;
  for (const auto& ts : threads_) rt.push_back(ts.role == CriticalityClass::RealTime);
  dispatcher_ = std::make_unique<sched::Dispatcher>(*p, std::move(specs), std::move(groups), std::move(rt));
  running_.resize(threads_.size());
  // The chains: their source timers' stamps, the hand-over to successors, and the monitor's
  // completion of their instances (sched::ChainCompletion, on entity ids).
  std::vector<runtime::ChainTrack> tracks;
  std::vector<sched::ChainCompletion::Chain> ends;
  for (std::uint32_t c = 0; c < chains.size(); ++c) {
    const auto& [name, period, deadline, paths] = chains[c];
    runtime::ChainTrack& t = tracks.emplace_back();
    t.name = name;
    t.period = period;
    t.deadline = deadline;
    sched::ChainCompletion::Chain& end = ends.emplace_back();
    end.deadline = deadline;
    end.source = static_cast<std::uint32_t>(entities_.size() + c);  // (no callback here)
    for (const auto& path : paths) {
      if (path.empty()) continue;
      for (CallbackId id : path) {
        check(id);
        if (std::find(t.members.begin(), t.members.end(), id) == t.members.end()) t.members.push_back(id);
      }
      end.source = t.members.front();  // chains with the same first callback share its id
      Entity& src = entities_[path.front()];
      if (src.kind == kTimer) src.src.starts(c, deadline);
      for (std::size_t k = 0; k + 1 < path.size(); ++k) {
        auto& succ = entities_[path[k]].successors;
        std::pair<CallbackId, std::uint32_t> s{path[k + 1], c};
        if (std::find(succ.begin(), succ.end(), s) == succ.end()) succ.push_back(s);
      }
      end.leaves.push_back(path.back());
    }
  }
  // The deadline an instance of chain c carries to its later callbacks: D_c, or less when its
  // timer's instance has a smaller one (the instance is one; the simulator's chain key).
  for (std::uint32_t c = 0; c < tracks.size(); ++c) {
    const Duration d = tracks[c].deadline;
    Duration key = d > 0 ? d : kNoDeadline;
    if (key != kNoDeadline && !tracks[c].members.empty())
      key = std::min(key, entities_[tracks[c].members.front()].src.rel_deadline);
    chain_key_.push_back(key);
  }
  monitor_.init(std::move(tracks), sched::ChainCompletion(std::move(ends)), sample_capacity);
  monitor_.reserve_trace(16384);
  // Event callbacks last: rcl calls them at once for events that arrived before.
  for (std::size_t i = 0; i < entities_.size(); ++i) install(static_cast<CallbackId>(i), true);
  started_at_ = now_ns();
}

// The monitor's figures (allocates; thread-safe).
runtime::RunReport Loop::report(std::size_t max_samples) {
  runtime::RunReport r;
  r.policy = policy_name_;
  r.threads = threads_.size();
  std::unique_lock<std::mutex> lk(m_);
  r.duration_ns = now_ns() - started_at_;
  r.dispatches = monitor_.dispatches();
  r.warnings = warnings_;
  for (auto& e : entities_) r.callbacks.push_back(e.stats);
  monitor_.report(r.chains, max_samples, [&](CallbackId id) { return entities_[id].stats.drops; });
  return r;
}

// One monitoring message, as the C++ executors publish it (chainrt_msgs/msg/ChainStats,
// runtime::to_message; docs/runtime.md), serialized (CDR): the report (with chain samples),
// run_id, executor, seq (the caller's message counter, kept across loops), and the dispatches
// since the previous call (measured ones only, started at or after set_record_from) with
// samples_lost, the dispatches the trace ring overwrote before they could be taken.
// Allocates; off the dispatch path; thread-safe.
std::string Loop::monitor_message(const std::string& run_id, const std::string& executor, std::uint64_t seq) {
  chainrt_msgs::msg::ChainStats msg;
  std::vector<std::string> names;  // this call's own: callers on several threads each get theirs
  runtime::stats_message(report(2048), run_id, executor, seq, monitor_, published_, m_, names,
                         [&](std::vector<std::string>& to) {
                           for (const auto& e : entities_) to.push_back(e.stats.name);
                         }, msg);
  return serialized(msg);
}

// Standard tracing (runtime/tracing.hpp, the C++ executor's events): every entity tied to its
// rcl handle and named `chainrt:<callback>`, the executor and its chains (provider `chainrt`).
// The callback pointer of the events is the Entity.
void Loop::trace_registration(const std::string& name) {
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
  const auto& chains = monitor_.chains();
  for (std::uint32_t c = 0; c < chains.size(); ++c) {
    if (hooks_.chain_init) hooks_.chain_init(this, c, chains[c].name.c_str(), chains[c].period, chains[c].deadline);
    if (!hooks_.chain_callback) continue;
    std::uint32_t pos = 0;
    for (CallbackId id : chains[c].members)
      hooks_.chain_callback(this, c, pos++, &entities_[id], entities_[id].stats.name.c_str(),
                            monitor_.completion().is_leaf(c, id) ? 1 : 0);
  }
}

// The dispatcher's inputs the model gives one executor (sched::make_setup): policy, threads
// and, per model callback of the executor in file order, (name, effective priority, affinity
// mask, then what the binding rule sees of it: node, kind, period, period tolerance, topic or
// service; runtime::binding_candidate). `model`: a chainrt._core.Model (nanobind shares the
// type between the two extensions), so the model is not written and parsed again here.
nb::dict model_setup(const Model& model, const std::string& executor,
                     std::optional<std::string> policy, std::optional<int> threads) {
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
    const Model* base, const std::string& executor, const std::string& policy, int plain_threads,
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
  try {
    runtime::CodeModel cm = runtime::model_from_code(in, base, require_wcet);
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
  LameControl(const Model& model, Duration controller_period, Duration reservation_period, int capacity_permille) {
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
  m.doc() = "chainrt.rclpy's dispatch loop: event-driven readiness, the sched Dispatcher, monitor";
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
      .def(nb::init<const chainrt::Model&, chainrt::Duration, chainrt::Duration, int>(), "model"_a,
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
  m.def("model_setup", &chainrt::rclpy_exec::model_setup, "model"_a, "executor"_a, "policy"_a = nb::none(),
        "threads"_a = nb::none());
  m.def("monotonic_ns", &chainrt::runtime::now_ns);
  m.def("binding_match", &chainrt::rclpy_exec::binding_match, "candidates"_a, "entity"_a);
  m.def("model_from_code", &chainrt::rclpy_exec::model_from_code, "base"_a.none(), "executor"_a, "policy"_a,
        "plain_threads"_a, "host_cores"_a, "entities"_a, "threads"_a, "chains"_a, "require_wcet"_a);
  m.def("explain_unbound", &chainrt::rclpy_exec::explain_unbound, "candidates"_a, "seen"_a);
  chainrt::rclpy_exec::bind_accelerator(m);
}
