// chainrt runtime: LaME's controller thread on the real executor (lame_controller.hpp; LaME
// Sec. 4.3). The decision is lame::Controller's; this file measures, wakes and applies.
#include "chainrt/runtime/lame_controller.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>
#include <stdexcept>
#include <utility>

#include "chainrt/runtime/monitor.hpp"
#include "chainrt/sched/setup.hpp"

namespace chainrt::runtime {

namespace {

double thread_cpu_ms() { return static_cast<double>(thread_cpu_ns()) / 1e6; }

void wait_word(std::atomic<std::uint32_t>* w, std::uint32_t expected, Duration timeout) {
  timespec ts{static_cast<time_t>(timeout / 1000000000), static_cast<long>(timeout % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}
void wake_word(std::atomic<std::uint32_t>* w) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

double bandwidth(const std::optional<Reservation>& r) {
  return r && r->budget > 0 && r->period > 0 ? static_cast<double>(r->budget) / static_cast<double>(r->period) : 0.0;
}

std::string ms(Duration d) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3gms", static_cast<double>(d) / 1e6);
  return b;
}

std::string describe(const lame::ThreadClassPlan& p) {
  std::string s = p.name + " cores";
  for (int c : p.cores) s += " " + std::to_string(c);
  s += p.budget > 0 ? " budget " + ms(p.budget) + "/" + ms(p.period) : " no reservation";
  return s;
}

std::string quote(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string list(const std::vector<std::string>& v) {  // a JSON array of strings
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + quote(v[i]);
  return s + "]";
}

// The fields every JSON form of an activation has (the monitoring event, the run log), in order:
// time, costs, trigger, decision, kind, chains, why.
std::string activation_fields(const LameActivation& a) {
  char num[200];
  std::snprintf(num, sizeof num, "\"at_ns\": %lld, \"decide_cpu_ms\": %.4f, \"apply_cpu_ms\": %.4f, \"analyses\": %d",
                static_cast<long long>(a.at), a.decide_cpu_ms, a.apply_cpu_ms, a.analyses);
  return std::string(num) + ", \"trigger\": " + quote(a.trigger) + ", \"decision\": " + quote(a.decision) +
         ", \"kind\": " + quote(a.kind) + ", \"chains\": " + list(a.chains) + ", \"why\": " + quote(a.why);
}

}  // namespace

int deadline_capacity_permille() noexcept {
  long long runtime = 0, period = 0;
  std::ifstream r("/proc/sys/kernel/sched_rt_runtime_us"), p("/proc/sys/kernel/sched_rt_period_us");
  if (!(r >> runtime) || !(p >> period) || period <= 0) return 950;
  if (runtime < 0) return 1000;  // no limit
  // Since Linux 6.12 every core's fair-class server is itself a SCHED_DEADLINE reservation
  // (50 ms every 1 s) counted against the same limit: leave its 5 % free.
  return static_cast<int>(std::clamp<long long>(runtime * 1000 / period - 50, 1, 1000));
}

LameController::LameController(const Model& model, LameControllerOptions options)
    : model_(model), options_(std::move(options)) {
  if (options_.period <= 0) throw std::invalid_argument("the controller period must be positive");
  lame::Options o = options_.plan;
  o.capacity_permille = options_.capacity_permille > 0 ? options_.capacity_permille : deadline_capacity_permille();
  o.controller_period = options_.period;
  options_.plan = o;
  decision_ = std::make_unique<lame::Controller>(model_, o, 0);
  const lame::Allocation& plan = decision_->plan();
  planned_ = plan.model;
  executor_ = plan.executor;
  for (std::size_t e = 0; e < planned_.executors.size(); ++e)
    if (planned_.executors[e].name == executor_) executor_index_ = e;
  cores_ = lame::plan_cores(plan);
  if (2 * static_cast<std::size_t>(cores_) > sched::kMaxThreads)
    throw std::invalid_argument("the LaME controller runs at most 32 cores");
  chain_count_ = model_.chains.size();
  rt_chain_ = std::make_unique<std::atomic<std::uint8_t>[]>(chain_count_ ? chain_count_ : 1);
  mark_rt_chains(plan);
  LameActivation a;
  a.trigger = "initial";
  a.decision = "reallocated";
  a.kind = "replan";
  a.why = "initial allocation";
  a.decide_cpu_ms = decision_->log().back().cpu_ms;
  a.analyses = decision_->log().back().analyses;
  for (const auto* P : {&plan.rt, &plan.be})
    for (const auto& p : *P) a.classes.push_back(describe(p));
  for (const auto& d : plan.demotions) a.demoted.push_back(d.chain + ": " + d.reason);
  a.allocation_changed = true;
  std::lock_guard<std::mutex> lk(log_mutex_);
  log_.push_back(std::move(a));
}

LameController::~LameController() { stop(); }

void LameController::mark_rt_chains(const lame::Allocation& plan) {
  std::set<std::string> rt;
  for (const auto& p : plan.rt)
    for (int i : p.chains) rt.insert(plan.lin.chains[i].origin);
  for (std::size_t c = 0; c < chain_count_; ++c)
    rt_chain_[c].store(rt.count(model_.chains[c].name) ? 1 : 0, std::memory_order_relaxed);
}

std::vector<sched::ThreadSpec> LameController::slot_threads() const {
  // The initial plan's reservations on the slots (translate() without an executor).
  const sched::ExecutorSetup setup = sched::make_setup(planned_, executor_index_);
  std::vector<sched::ThreadSpec> out;
  for (int kind = 0; kind < 2; ++kind)
    for (int k = 0; k < cores_; ++k) {
      sched::ThreadSpec t;
      t.name = lame::slot_name(kind * cores_ + k, cores_);
      t.role = kind == 0 ? CriticalityClass::RealTime : CriticalityClass::BestEffort;
      out.push_back(std::move(t));  // unpinned: see the header (SCHED_DEADLINE and root domains)
    }
  for (const auto& t : setup.threads) {
    const int k = t.cores.empty() ? 0 : t.cores.front();
    out[(t.role == CriticalityClass::RealTime ? 0 : cores_) + k].reservation = t.reservation;
  }
  return out;
}

std::vector<int> lame_apply_order(const std::vector<std::optional<Reservation>>& current,
                                  const std::vector<std::optional<Reservation>>& next, int cores) {
  std::vector<int> out;
  const int n = static_cast<int>(std::min(current.size(), next.size()));
  auto grows = [&](int s) { return bandwidth(next[s]) > bandwidth(current[s]); };
  auto add = [&](int from, int to, bool growing) {
    for (int s = from; s < to; ++s)
      if (next[s] != current[s] && grows(s) == growing) out.push_back(s);
  };
  add(std::min(cores, n), n, false);  // BE shrink
  add(0, std::min(cores, n), true);   // RT grow
  out.push_back(-1);                  // callbacks
  add(0, std::min(cores, n), false);  // RT shrink
  add(std::min(cores, n), n, true);   // BE grow
  return out;
}

LameController::Applied LameController::translate(const lame::Allocation& plan) const {
  Applied out;
  const lame::SlotPlan sp = lame::slot_plan(plan, executor_index_, cores_);
  out.slots = sp.slots;
  out.groups = sp.groups;
  out.specs = current_.specs;
  if (out.specs.size() != ex_->callback_count())
    for (sched::CallbackId id = 0; id < ex_->callback_count(); ++id) out.specs.push_back(ex_->spec_of(id));
  for (std::size_t i = 0; i < sp.callbacks.size(); ++i) {
    const sched::CallbackId id = ex_->callback_id(sp.callbacks[i]);
    if (id == sched::kNoCallback) continue;  // not run by this executor (e.g. a service)
    out.specs[id] = sp.specs[i];
  }
  return out;
}

std::vector<LameRefusal> lame_apply(std::vector<std::optional<Reservation>>& current,
                                    const std::vector<std::optional<Reservation>>& next, int cores,
                                    const LameApplySteps& steps) {
  const std::vector<int> order = lame_apply_order(current, next, cores);
  std::vector<LameRefusal> refused;
  Duration released_period = 0;  // the longest period of a slot that leaves SCHED_DEADLINE now
  auto attempt = [&](int s) {
    const std::string err = steps.set_reservation(s, next[s]);
    if (err.empty()) current[s] = next[s];
    return err;
  };
  for (int s : order) {
    if (s < 0) {
      if (steps.reconfigure) steps.reconfigure();
      continue;
    }
    if (!next[s] && current[s]) released_period = std::max(released_period, current[s]->period);
    std::string err = attempt(s);
    if (!err.empty()) refused.push_back({s, std::move(err)});
  }
  // A grow refused before the RT shrinks (the total was at the admission limit): again after them.
  for (auto& r : refused) r.error = attempt(r.slot);
  std::erase_if(refused, [](const LameRefusal& r) { return r.error.empty(); });
  // Bandwidth released in this step comes back at the 0-lag time (header): wait once, retry.
  if (!refused.empty() && released_period > 0) {
    steps.wait(released_period + 1'000'000);
    for (auto& r : refused) r.error = attempt(r.slot);
    std::erase_if(refused, [](const LameRefusal& r) { return r.error.empty(); });
  }
  return refused;
}

void LameController::apply(const Applied& next, LameActivation& a) {
  const double c0 = thread_cpu_ms();
  bool affinity = false, other = next.groups.size() != current_.groups.size();
  for (std::size_t id = 0; id < next.specs.size(); ++id) {
    const auto& n = next.specs[id];
    const auto& c = current_.specs[id];
    affinity = affinity || n.affinity != c.affinity;
    other = other || n.group != c.group || n.priority != c.priority;
  }
  for (std::size_t g = 0; !other && g < next.groups.size(); ++g) other = next.groups[g].type != current_.groups[g].type;
  LameApplySteps steps;
  steps.set_reservation = [this](int s, const std::optional<Reservation>& r) {
    return ex_->set_thread_reservation(static_cast<sched::ThreadId>(s), r);
  };
  if (affinity || other) steps.reconfigure = [&] { ex_->reconfigure(next.specs, next.groups); };
  for (const auto& r : lame_apply(current_.slots, next.slots, cores_, steps))
    a.errors.push_back(lame::slot_name(r.slot, cores_) + ": " + r.error);
  a.allocation_changed = affinity;
  current_.specs = next.specs;
  current_.groups = next.groups;
  a.apply_cpu_ms = thread_cpu_ms() - c0;
}

void LameController::attach(ControlledExecutor& ex) {
  ex_ = &ex;
  current_.slots.clear();
  for (const auto& t : slot_threads()) current_.slots.push_back(t.reservation);  // the threads start with them
  current_.specs.clear();
  Applied first = translate(decision_->plan());
  first.slots = current_.slots;
  ex.reconfigure(first.specs, first.groups);
  current_ = first;
}

void LameController::configure(const chainrt::Executor& e, ExecutorOptions& o) {
  if (e.name != executor_) return;
  o.policy = Policy::Lame;
  o.threads = slot_threads();
  o.monitoring_events = true;  // decisions go to the monitoring topic (publish())
  run_id_ = o.run_id;
  o.on_deadline_miss = [this](std::uint32_t chain) { on_deadline_miss(chain); };
}

void LameController::prepared(const chainrt::Executor& e, Executor& executor) {
  if (e.name == executor_) attach(executor);
}

void LameController::started(Duration start_ns) {
  if (ex_) start(start_ns);
}

void LameController::on_deadline_miss(std::uint32_t chain) noexcept {
  if (chain >= chain_count_ || !rt_chain_[chain].load(std::memory_order_relaxed)) return;
  if (miss_.exchange(1, std::memory_order_acq_rel) == 0) wake_word(&miss_);
}

void LameController::start(Duration run_start) {
  if (!ex_) throw std::logic_error("LameController::start before attach()");
  if (thread_.joinable()) return;
  run_start_ = run_start;
  stop_.store(0);
  thread_ = std::thread([this] { main(); });
}

void LameController::stop() {
  stop_.store(1);
  wake_word(&miss_);
  if (thread_.joinable()) thread_.join();
}

void LameController::main() {
  lame::ActivationClock clock(run_start_, options_.period, options_.min_gap);
  {
    LameActivation initial;
    {
      std::lock_guard<std::mutex> lk(log_mutex_);
      if (!log_.empty()) initial = log_.front();
    }
    publish(initial);  // the initial plan (subscribers that are already matched see it)
  }
  std::vector<CpuWindow> cpu;
  std::vector<lame::CpuSample> measured;
  while (!stop_.load()) {
    const Duration now = now_ns();
    const std::uint32_t miss = miss_.load(std::memory_order_acquire);
    // A deferred demotion is re-checked when it is due (lame::Controller::demotion_due): no
    // demotion waits longer than one controller period for the next periodic activation.
    const Duration due_at = decision_->demotion_due();
    const Duration due = due_at > 0 ? run_start_ + due_at : 0;
    const Duration wake = clock.wake(miss != 0, due);
    if (now < wake) {
      wait_word(&miss_, miss, std::min<Duration>(wake - now, 100'000'000));
      continue;
    }
    const auto trigger = clock.fire(now, miss != 0, due);
    const bool by_miss = trigger == lame::ActivationClock::Trigger::Miss;
    if (by_miss) miss_.store(0, std::memory_order_release);
    LameActivation a;
    try {
      ex_->take_cpu_window(cpu);
      measured.clear();
      for (sched::CallbackId id = 0; id < cpu.size(); ++id) {
        if (cpu[id].count == 0) continue;
        lame::CpuSample x;
        x.callback = ex_->callback_name(id);
        x.count = cpu[id].count;
        for (int k = 0; k < kCpuWindowTop && k < lame::kTopSamples; ++k) x.largest[k] = cpu[id].largest[k];
        measured.push_back(std::move(x));
      }
      const lame::ControllerEvent& e = decision_->activate(measured, by_miss, now - run_start_);
      a.at = now - run_start_;
      a.trigger = lame::to_string(trigger);
      a.decision = e.decision;
      a.kind = e.kind;
      a.chains = e.chains;
      a.why = e.why;
      a.decide_cpu_ms = e.cpu_ms;
      a.analyses = e.analyses;
      if (e.decision == "reallocated") {
        const lame::Allocation& plan = decision_->plan();
        apply(translate(plan), a);
        mark_rt_chains(plan);
        for (const auto* P : {&plan.rt, &plan.be})
          for (const auto& p : *P) a.classes.push_back(describe(p));
        for (const auto& d : plan.demotions) a.demoted.push_back(d.chain + ": " + d.reason);
      }
    } catch (const std::exception& ex) {
      a.at = now - run_start_;
      a.trigger = lame::to_string(trigger);
      a.decision = "failed";
      a.kind = "failed";
      a.why = ex.what();
    }
    publish(a);
    record(std::move(a));
  }
}

void LameController::publish(const LameActivation& a) {
  // One event per activation on the executor's monitoring topic (docs/lame.md).
  if (!ex_) return;
  const lame::Allocation& plan = decision_->plan();
  std::string classes = "[";
  bool first = true;
  for (const auto* P : {&plan.rt, &plan.be})
    for (const auto& p : *P) {
      std::vector<std::string> chains, cores;
      for (int i : p.chains) chains.push_back(plan.lin.chains[i].name);
      std::string c = "[";
      for (std::size_t k = 0; k < p.cores.size(); ++k) c += (k ? ", " : "") + std::to_string(p.cores[k]);
      classes += std::string(first ? "" : ", ") + "{\"name\": " + quote(p.name) + ", \"kind\": " +
                 quote(to_string(p.kind)) + ", \"cores\": " + c + "], \"budget_ns\": " + std::to_string(p.budget) +
                 ", \"period_ns\": " + std::to_string(p.period) + ", \"chains\": " + list(chains) + "}";
      first = false;
    }
  classes += "]";
  std::vector<std::string> demoted;
  for (const auto& d : plan.demotions) demoted.push_back(d.chain);
  const std::string js = std::string("{\"event\": \"lame_decision\", \"run_id\": ") + quote(run_id_) +
                         ", \"executor\": " + quote(executor_) + ", " + activation_fields(a) +
                         ", \"classes\": " + classes + ", \"demoted\": " + list(demoted) +
                         ", \"errors\": " + list(a.errors) + "}";
  ex_->publish_event(js);
}

void LameController::record(LameActivation a) {
  if (options_.log_stderr) {
    std::string line = "lame controller +" + std::to_string(static_cast<double>(a.at) / 1e9).substr(0, 7) +
                       " s (" + a.trigger + "): " + a.decision + (a.kind.empty() ? "" : " [" + a.kind + "]") + " - " + a.why;
    char cost[96];
    std::snprintf(cost, sizeof cost, " [%.2f ms CPU deciding, %.2f ms applying, %d analyses]", a.decide_cpu_ms,
                  a.apply_cpu_ms, a.analyses);
    line += cost;
    if (!a.classes.empty()) {
      line += "; classes:";
      for (const auto& c : a.classes) line += " " + c + ";";
    }
    for (const auto& d : a.demoted) line += " demoted " + d + ";";
    for (const auto& e : a.errors) line += " refused: " + e + ";";
    std::fprintf(stderr, "chainrt-run: %s\n", line.c_str());
  }
  std::lock_guard<std::mutex> lk(log_mutex_);
  log_.push_back(std::move(a));
}

std::vector<LameActivation> LameController::log() const {
  std::lock_guard<std::mutex> lk(log_mutex_);
  return log_;
}

std::string LameController::log_json() const {
  std::string s = "[";
  bool first = true;
  for (const auto& a : log()) {
    s += std::string(first ? "" : ", ") + "{" + activation_fields(a) +
         ", \"allocation_changed\": " + (a.allocation_changed ? "true" : "false") + ", \"classes\": " + list(a.classes) + ", \"demoted\": " + list(a.demoted) +
         ", \"errors\": " + list(a.errors) + "}";
    first = false;
  }
  return s + "]";
}

}  // namespace chainrt::runtime
