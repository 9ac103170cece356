// LaME's adaptive resource controller, decision logic (controller.hpp; LaME Sec. 4.3).
// As in the paper, a violation first re-adjusts only the budgets of the current allocation
// (Algorithm 3 alone); only when no budgets make every RT chain schedulable is the allocation
// repeated (Algorithms 1-3). Robustness measures (estimate over a time window, margin, deferred
// demotion, supply margin) and why each deviates from the paper are in the header.
#include "chainrt/lame/controller.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include "chainrt/analysis/analysis.hpp"

namespace chainrt::lame {

namespace {

// d x (1 + permille / 1000), rounded up (a margin never shrinks a time).
Duration with_permille(Duration d, int permille) {
  return d + (d * permille + 999) / 1000;
}

// The criticalities of a plan's demoted chains, highest first: of two plans the one with the
// lexicographically smaller list demotes less critical chains (then fewer of them).
std::vector<int> demotion_rank(const Allocation& a) {
  std::vector<int> out;
  for (const auto& d : a.demotions)
    for (const auto& l : a.lin.chains)
      if (l.name == d.chain) out.push_back(l.criticality);
  std::sort(out.rbegin(), out.rend());
  return out;
}

bool demotes_less(const Allocation& a, const Allocation& b) { return demotion_rank(a) < demotion_rank(b); }

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

ActivationClock::ActivationClock(Duration start, Duration period, Duration min_gap)
    : period_(std::max<Duration>(1, period)),
      min_gap_(std::max<Duration>(0, min_gap)),
      next_(start + period_),
      last_miss_(start - min_gap_),
      last_activation_(start) {}

Duration ActivationClock::wake(bool miss, Duration due) const {
  Duration w = std::min(next_, due_at(due));
  if (miss) w = std::min(w, last_miss_ + min_gap_);
  return w;
}

ActivationClock::Trigger ActivationClock::fire(Duration now, bool miss, Duration due) {
  const Duration d = due_at(due);
  const bool by_miss = miss && now >= last_miss_ + min_gap_;
  const bool by_due = !by_miss && now >= d && d < next_;
  last_activation_ = now;
  if (by_miss) {
    last_miss_ = now;
    return Trigger::Miss;
  }
  if (by_due) return Trigger::Due;
  while (next_ <= now) next_ += period_;
  return Trigger::Period;
}

const char* to_string(ActivationClock::Trigger t) {
  return t == ActivationClock::Trigger::Miss ? "deadline miss" : t == ActivationClock::Trigger::Due ? "demotion due" : "period";
}

Controller::Controller(Model model, Options options, Duration now, ControllerOptions policy)
    : model_(std::move(model)), options_(std::move(options)), policy_(policy) {
  policy_.window = std::max(1, policy_.window);
  policy_.outlier_permille = std::clamp(policy_.outlier_permille, 0, 1000);
  policy_.margin_permille = std::clamp(policy_.margin_permille, 0, 1000);
  policy_.demote_after = std::max(1, policy_.demote_after);
  policy_.supply_step_permille = std::clamp(policy_.supply_step_permille, 0, 1000);
  policy_.supply_max_permille = std::clamp(policy_.supply_max_permille, 0, 1000);
  for (const auto& cb : model_.callbacks) wcet_.emplace_back(cb.name, cb.wcet);
  window_.resize(wcet_.size());
  const double c0 = thread_cpu_ms();
  // The initial plan, like every later one, for the execution times plus the margin when that
  // demotes no more chains (measured times exceed a model's WCETs by the middleware's share:
  // seen on real ROS 2 as a re-plan or a miss before the first activation).
  int analyses = 0;
  plan_ = plan_for(policy_.margin_permille, false, &analyses);
  if (policy_.margin_permille > 0 && !plan_.demotions.empty()) {
    Allocation exact = plan_for(0, false, &analyses);
    if (demotes_less(exact, plan_)) plan_ = std::move(exact);
  }
  ControllerEvent e;
  e.at = now;
  e.trigger = "initial";
  e.decision = "reallocated";
  e.kind = "replan";
  e.why = "initial allocation";
  e.analyses = analyses;
  e.cpu_ms = thread_cpu_ms() - c0;
  log_.push_back(e);
}

bool Controller::holds(std::string* why, int* analyses) const {
  // fp-mt on the current classes and budgets with the current execution times.
  Model m = model_;
  std::map<std::string, Duration> w(wcet_.begin(), wcet_.end());
  for (auto& cb : m.callbacks)
    if (auto it = w.find(cb.name); it != w.end()) cb.wcet = with_permille(it->second, supply_permille_);
  m.reindex();
  std::vector<int> rt_chains;
  for (const auto& p : plan_.rt) rt_chains.insert(rt_chains.end(), p.chains.begin(), p.chains.end());
  if (rt_chains.empty()) return true;
  Model am = analysis_model(m, plan_.executor, plan_.lin, plan_.rt, plan_.be, rt_chains, false);
  AnalysisResult r = find_analysis("fp-mt")->analyze(am);
  ++*analyses;
  for (int i : rt_chains) {
    const auto& l = plan_.lin.chains[i];
    const ChainBound* b = r.find(l.name);
    if (!b || !b->bounded || b->wcrt_bound > l.deadline) {
      *why = "'" + l.name + "' " +
             (b && b->bounded ? "bound " + std::to_string(b->wcrt_bound) + " ns > deadline " + std::to_string(l.deadline) + " ns"
                              : "has no bound") +
             " with the measured execution times" +
             (supply_permille_ > 0 ? " + " + std::to_string(supply_permille_ / 10.0).substr(0, 4) + " % supply margin" : "");
      return false;
    }
  }
  return true;
}

namespace {

// Identity of the thread class a linear chain runs on: kind and cores (names change on merges).
std::vector<std::string> placement(const Allocation& a) {
  std::vector<std::string> out(a.lin.chains.size(), "");
  for (const auto* P : {&a.rt, &a.be})
    for (const auto& p : *P) {
      std::string id = to_string(p.kind);
      for (int c : p.cores) id += "/" + std::to_string(c);
      for (int i : p.chains) out[i] = id;
    }
  return out;
}

}  // namespace

Allocation Controller::least_critical_demotion(int* analyses) const {
  // RT chains of the current plan from the least critical up; demote them one more at a time
  // (with the chains already demoted) until Algorithm 2 finds a schedulable plan for the rest.
  std::vector<const LinearChain*> rt;
  for (const auto& p : plan_.rt)
    for (int i : p.chains) rt.push_back(&plan_.lin.chains[i]);
  std::stable_sort(rt.begin(), rt.end(),
                   [](const LinearChain* a, const LinearChain* b) { return a->criticality < b->criticality; });
  std::vector<std::string> demote;
  for (const auto& d : plan_.demotions) demote.push_back(d.chain);
  Allocation best;
  for (const LinearChain* l : rt) {
    demote.push_back(l->name);
    best = plan_for(0, false, analyses, &demote);
    if (best.rt_schedulable) break;
  }
  return best;
}

Duration Controller::hold_span() const {
  return policy_.demote_hold > 0 ? policy_.demote_hold : options_.controller_period;
}

Duration Controller::demotion_due() const {
  return pending_demotion_ > 0 ? pending_since_ + hold_span() : 0;
}

void Controller::estimate(const std::vector<CpuSample>& measured, Duration now, bool* changed) {
  // The window: the activations of the last `window` controller periods (an activation's samples
  // are those since the previous one), the current one always; at most kMaxWindow of them (the
  // runtime rate-limits miss-triggered activations, a caller of the library may not).
  constexpr std::size_t kMaxWindow = 256;
  const Duration span = static_cast<Duration>(policy_.window) * options_.controller_period;
  std::map<std::string, const CpuSample*> by_name;
  for (const auto& s : measured) by_name[s.callback] = &s;
  for (std::size_t i = 0; i < wcet_.size(); ++i) {
    auto& w = window_[i];
    CpuSample s;
    if (auto it = by_name.find(wcet_[i].first); it != by_name.end()) s = *it->second;
    w.push_back({now, s});
    std::size_t old = 0;
    while (old + 1 < w.size() && (w[old].at <= now - span || w.size() - old > kMaxWindow)) ++old;
    w.erase(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(old));
    // The window's largest samples (each activation's top kTopSamples contain every sample of
    // the union's top kTopSamples) and how many samples it holds.
    std::vector<Duration> top;
    std::uint64_t n = 0;
    for (const auto& [at, x] : w) {
      n += x.count;
      for (Duration d : x.largest)
        if (d > 0) top.push_back(d);
    }
    if (top.empty()) continue;  // nothing ran in the window: keep the last estimate
    std::sort(top.rbegin(), top.rend());
    // Drop the top outlier share of the samples (a VM stall charged to one instance), at most
    // kTopSamples - 1 of them and never all that are known.
    const std::uint64_t drop = std::min<std::uint64_t>(
        {n * static_cast<std::uint64_t>(policy_.outlier_permille) / 1000, static_cast<std::uint64_t>(kTopSamples - 1),
         static_cast<std::uint64_t>(top.size() - 1)});
    const Duration v = top[static_cast<std::size_t>(drop)];
    if (v != wcet_[i].second) {
      wcet_[i].second = v;
      *changed = true;
    }
  }
}

Allocation Controller::plan_for(int margin_permille, bool budgets_only, int* analyses,
                                const std::vector<std::string>* demote) const {
  Options o = options_;
  if (demote) o.demote = *demote;
  o.measured_wcet = wcet_;
  for (auto& [name, w] : o.measured_wcet) w = with_permille(with_permille(w, supply_permille_), margin_permille);
  if (budgets_only) o.keep = &plan_;
  Allocation a = allocate(model_, o);
  *analyses += a.analyses;
  return a;
}

const ControllerEvent& Controller::activate(const std::vector<std::pair<std::string, Duration>>& measured,
                                            bool rt_miss, Duration now) {
  std::vector<CpuSample> samples;
  samples.reserve(measured.size());
  for (const auto& [name, w] : measured) {
    if (w <= 0) continue;
    CpuSample s;
    s.callback = name;
    s.largest[0] = w;
    s.count = 1;
    samples.push_back(std::move(s));
  }
  return activate(samples, rt_miss, now);
}

const ControllerEvent& Controller::activate(const std::vector<CpuSample>& measured, bool rt_miss, Duration now) {
  const double c0 = thread_cpu_ms();
  ControllerEvent e;
  e.at = now;
  e.trigger = rt_miss ? "deadline miss" : "period";
  bool changed = false;
  estimate(measured, now, &changed);
  // The supply margin falls by a step at a periodic activation a controller period after the
  // last RT miss (an activation at a deferred demotion's due time counts as periodic).
  if (!rt_miss && supply_permille_ > 0 && (!missed_ || now - last_miss_ >= options_.controller_period))
    supply_permille_ = std::max(0, supply_permille_ - policy_.supply_step_permille);
  if (rt_miss) {
    missed_ = true;
    last_miss_ = now;
  }
  std::string why;
  int analyses = 0;
  bool ok = holds(&why, &analyses);
  bool raised = false;
  const bool settled = !changed_once_ || now - last_change_ >= policy_.supply_settle;
  if (ok && rt_miss && settled && supply_permille_ < policy_.supply_max_permille &&
      policy_.supply_step_permille > 0) {
    // A miss the estimate does not explain: charge the RT threads' supply shortfall to the
    // execution times (header) and check again.
    supply_permille_ = std::min(policy_.supply_max_permille, supply_permille_ + policy_.supply_step_permille);
    raised = true;
    changed_once_ = true;
    last_change_ = now;
    ok = holds(&why, &analyses);
  }
  std::optional<Allocation> next = ok ? while_holding(e, rt_miss, raised, settled, changed, now, &analyses)
                                      : on_violation(e, std::move(why), raised, now, &analyses);
  e.supply_permille = supply_permille_;
  if (next) adopt(e, std::move(*next), now);
  e.analyses = analyses;
  e.cpu_ms = thread_cpu_ms() - c0;
  log_.push_back(e);
  return log_.back();
}

std::optional<Allocation> Controller::while_holding(ControllerEvent& e, bool rt_miss, bool raised, bool settled,
                                                    bool changed, Duration now, int* analyses) {
  // An episode of needed demotions ends after a whole demote_hold without the need.
  if (pending_demotion_ > 0 && now - pending_last_ >= hold_span()) pending_demotion_ = 0;
  e.decision = "holds";
  e.kind = "hold";
  // A miss while the bounds hold with the measured times (and the supply margin, at its
  // maximum) is not explained by the model (kernel, middleware, monitoring overhead or a
  // stall of the machine); re-planning with the same times would give the same plan, so it
  // is logged and left alone.
  e.why = rt_miss ? (raised ? "an RT chain missed its deadline although the bounds hold with the measured execution "
                              "times: supply margin raised to " +
                                  std::to_string(supply_permille_) + " permille, the plan holds with it"
                            : "an RT chain missed its deadline although the bounds hold with the measured execution "
                              "times and the supply margin (" +
                                  std::to_string(supply_permille_) + " permille" +
                                  (settled ? ", its maximum)" : ", raised less than a settling time ago)"))
                  : (changed ? "the plan holds with the measured execution times" : "no change");
  if (plan_.demotions.empty()) return std::nullopt;
  // Deviation (the paper only re-plans on a violation): while chains are demoted, try the
  // allocation with the estimate (with the margin when it fits as well) and take it when it
  // demotes fewer chains.
  for (int margin : {policy_.margin_permille, 0}) {
    Allocation c = plan_for(margin, false, analyses);
    if (demotes_less(c, plan_)) {
      e.kind = "promote";
      e.why = "a demoted RT chain fits again with the measured execution times";
      return c;
    }
    if (margin == 0) break;
  }
  return std::nullopt;
}

std::optional<Allocation> Controller::on_violation(ControllerEvent& e, std::string why, bool raised, Duration now,
                                                   int* analyses) {
  std::optional<Allocation> next;
  if (raised) why += " (supply margin raised after an RT miss the estimate did not explain)";
  // 1. New budgets for the current allocation (no callback moves): with the margin, else
  //    without it.
  for (int margin : {policy_.margin_permille, 0}) {
    Allocation c = plan_for(margin, true, analyses);
    if (c.rt_schedulable) {
      next = std::move(c);
      e.kind = "budget";
      break;
    }
    if (margin == 0) break;
  }
  // 2. A new allocation (Algorithms 1-3) that demotes no more (or more critical) chains than
  //    the current plan.
  std::optional<Allocation> demoting;  // the plan without margin, when it demotes more
  if (!next)
    for (int margin : {policy_.margin_permille, 0}) {
      Allocation c = plan_for(margin, false, analyses);
      if (!demotes_less(plan_, c)) {
        next = std::move(c);
        e.kind = "replan";
        break;
      }
      if (margin == 0) {
        demoting = std::move(c);
        break;
      }
    }
  // 3. Only a plan with more demotions holds: take it once demote_after activations of one
  //    episode needed it and the episode spans demote_hold (header).
  if (!next) {
    if (pending_demotion_ == 0) pending_since_ = now;  // an episode ends only where the plan holds
    ++pending_demotion_;
    pending_last_ = now;
    if (pending_demotion_ >= policy_.demote_after && now - pending_since_ >= hold_span()) {
      // Algorithm 2's own demotions, or the least critical chains when that demotes less
      // critical ones (header).
      Allocation least = least_critical_demotion(analyses);
      if (least.rt_schedulable && (!demoting->rt_schedulable || demotes_less(least, *demoting)))
        next = std::move(least);
      else
        next = std::move(demoting);
      e.kind = "demote";
      pending_demotion_ = 0;
    } else {
      e.kind = "deferred";
    }
  } else {
    pending_demotion_ = 0;
  }
  e.why = why;
  if (e.kind == "deferred") {
    e.decision = "holds";
    e.why += "; only a plan that demotes an RT chain holds: deferred (needed at " + std::to_string(pending_demotion_) +
             " activations since " + std::to_string(pending_since_) + " ns; due at " + std::to_string(demotion_due()) +
             " ns)";
  }
  return next;
}

void Controller::adopt(ControllerEvent& e, Allocation next, Duration now) {
  const auto before = placement(plan_);
  const auto after = placement(next);
  for (std::size_t i = 0; i < after.size() && i < before.size(); ++i)
    if (after[i] != before[i]) e.chains.push_back(next.lin.chains[i].name);
  plan_ = std::move(next);
  e.decision = "reallocated";
  changed_once_ = true;
  last_change_ = now;
}

}  // namespace chainrt::lame
