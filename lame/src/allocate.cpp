// LaME Algorithm 2 (chain-to-threadclass allocation) and Algorithm 3 (least RT budget), Sec.
// 4.3, with the shipped fp-mt analysis (LaME Theorem 1) as the schedulability test and the BE
// check of be_check.cpp.
//
// Deviations from the paper, each for a reason:
//  - RT linear chains that share callbacks (two RT branches of one nonlinear chain) are placed
//    together as one unit: fp-mt bounds a chain only when all its callbacks run on one thread
//    set, so the shared prefix and both branches must share a thread class.
//  - A callback group (mutually exclusive) whose callbacks land in different thread classes is
//    split into one group per class ("<group>@<class>"): otherwise an RT callback could wait
//    for a best-effort group-mate without bound (fp-mt has no bound for BE work). The written
//    model lists every split; the node's callbacks in different classes may then run in
//    parallel (LaME's affinity API runs them on different threads too).
//  - Algorithm 2 restores, on a demotion, the classes as they were before the merges done for
//    that chain (the paper's P*_RT, P*_BE) — kept across the retries those merges cause.
//  - Algorithm 3 merges an RT class left without chains into the busiest one (lines 5-7) only
//    when the merged class stays schedulable at 100 %; otherwise the empty class is dropped
//    and its core goes entirely to its BE counterpart.
//  - Budgets are searched in per-mille steps of the period (step = 10 ‰ = the paper's 1 %).
//  - The capacity rule for the BE side (Options::be_placement = Capacity, the default; Paper
//    keeps the paper's steps), so that BE chains do not starve where the cores have room:
//    (a) an RT class left without chains is merged into the busiest one (Algorithm 3, lines
//        5-7) only when the merged class's least budgets take no more of the cores than the
//        busiest class's alone; the paper merges whenever the merged class is schedulable, and
//        since fp-mt charges a chain's own work once per thread, the merged class often needs
//        its full budget on every thread, which leaves the BE classes of all those cores nothing;
//    (b) BE chains are placed once Algorithm 3 has fixed the budgets, largest utilisation first,
//        on the BE class with the most capacity left (its threads x budget share, less the
//        utilisation placed) among those it fits in; one that fits nowhere goes to a class that
//        is overloaded already, else to the one with the most room — the overload stays in as
//        few classes as possible. The paper's lines 38-41 spread the chains by utilisation
//        before the BE classes have budgets, so an overloaded BE side overloads every class.
//    Cost to the RT side: (b) none (the RT classes, budgets and bounds are fixed before); (a)
//    the RT chains of the busiest class do not get the empty class's thread — their budget and
//    bound are those of their own class (the merge would not have lowered the budget it takes).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "chainrt/lame/lame.hpp"

namespace chainrt::lame {

double ThreadClassPlan::utilisation() const { return util_; }

namespace {

struct Ctx {
  const Model* model = nullptr;  // measured WCETs applied
  std::string executor;
  Linearised lin;
  std::vector<double> util;     // per linear chain: Σ own WCET / T
  const ResponseTimeAnalysis* fp = nullptr;
  int analyses = 0;
};

void set_util(const Ctx& c, std::vector<ThreadClassPlan>& P) {
  for (auto& p : P) {
    double u = 0;
    for (int i : p.chains) u += c.util[i];
    p.util_ = p.cores.empty() ? 0 : u / static_cast<double>(p.cores.size());
  }
}

int lowest_util(const Ctx& c, std::vector<ThreadClassPlan>& P, const std::set<int>& skip) {
  set_util(c, P);
  int best = -1;
  for (std::size_t i = 0; i < P.size(); ++i) {
    if (skip.count(static_cast<int>(i))) continue;
    if (best < 0 || P[i].util_ < P[best].util_) best = static_cast<int>(i);
  }
  return best;
}

// merge(Π1, Π2) of RT classes i < j and their BE counterparts (same index).
void merge(std::vector<ThreadClassPlan>& rt, std::vector<ThreadClassPlan>& be, int i, int j) {
  if (i > j) std::swap(i, j);
  for (auto* P : {&rt, &be}) {
    auto& a = (*P)[i];
    auto& b = (*P)[j];
    a.cores.insert(a.cores.end(), b.cores.begin(), b.cores.end());
    std::sort(a.cores.begin(), a.cores.end());
    a.chains.insert(a.chains.end(), b.chains.begin(), b.chains.end());
    P->erase(P->begin() + j);
  }
}

void rename(std::vector<ThreadClassPlan>& rt, std::vector<ThreadClassPlan>& be) {
  for (std::size_t i = 0; i < rt.size(); ++i) {
    rt[i].name = "rt" + std::to_string(i);
    be[i].name = "be" + std::to_string(i);
  }
}

// fp-mt bounds of the RT chains in `rt` (budget per class as set), one entry per linear chain
// (-1: not analysed or unbounded).
// `only`: analyse the chains of that class alone (classes share no threads and, after the
// group split, no callback groups, so the other classes' chains cannot change its bounds).
std::vector<Duration> rt_bounds(Ctx& c, const std::vector<ThreadClassPlan>& rt, const std::vector<ThreadClassPlan>& be,
                                std::vector<std::string>* reasons = nullptr, int only = -1) {
  std::vector<int> chains;
  for (std::size_t k = 0; k < rt.size(); ++k)
    if (only < 0 || static_cast<int>(k) == only) chains.insert(chains.end(), rt[k].chains.begin(), rt[k].chains.end());
  Model am = analysis_model(*c.model, c.executor, c.lin, rt, be, chains, false);
  AnalysisResult r = c.fp->analyze(am);
  c.analyses++;
  std::vector<Duration> out(c.lin.chains.size(), -1);
  if (reasons) reasons->assign(c.lin.chains.size(), "");
  for (int i : chains) {
    const ChainBound* b = r.find(c.lin.chains[i].name);
    if (b && b->bounded) out[i] = b->wcrt_bound;
    else if (reasons) (*reasons)[i] = b ? b->reason : "not analysed";
  }
  return out;
}

bool class_schedulable(Ctx& c, const std::vector<ThreadClassPlan>& rt, const std::vector<ThreadClassPlan>& be,
                       int k, std::string* why = nullptr) {
  std::vector<std::string> reasons;
  auto R = rt_bounds(c, rt, be, why ? &reasons : nullptr, k);
  for (auto it = rt[k].chains.rbegin(); it != rt[k].chains.rend(); ++it) {  // the newest first
    const int i = *it;
    if (R[i] < 0 || R[i] > c.lin.chains[i].deadline) {
      if (why) {
        *why = "'" + c.lin.chains[i].name + "': " +
               (R[i] < 0 ? (reasons[i].empty() ? "no bound" : reasons[i])
                         : "bound " + std::to_string(R[i]) + " ns > deadline " +
                               std::to_string(c.lin.chains[i].deadline) + " ns");
      }
      return false;
    }
  }
  return true;
}

}  // namespace

Model analysis_model(const Model& base, const std::string& executor, const Linearised& lin,
                     const std::vector<ThreadClassPlan>& rt, const std::vector<ThreadClassPlan>& be,
                     const std::vector<int>& rt_chains, bool final_model) {
  Model m = base;
  Executor* e = nullptr;
  for (auto& x : m.executors)
    if (x.name == executor) e = &x;
  if (!e) throw std::invalid_argument("no executor '" + executor + "'");
  e->policy = Policy::Lame;
  e->thread_classes.clear();
  e->threads.clear();
  std::map<std::string, std::string> cls_of;  // callback -> class name
  auto add_class = [&](const ThreadClassPlan& p) {
    ThreadClass tc;
    tc.name = p.name;
    tc.kind = p.kind;
    tc.cores = p.cores;
    if (p.budget > 0) tc.reservation = Reservation{std::min(p.budget, p.period), p.period};
    e->thread_classes.push_back(tc);
    for (int c : tc.cores) e->threads.push_back(Thread{tc.name + "/" + std::to_string(c), {c}, std::nullopt, tc.reservation, tc.name});
  };
  std::set<int> rt_set(rt_chains.begin(), rt_chains.end());
  for (const auto& p : rt) {
    if (p.chains.empty() && final_model) continue;
    add_class(p);
    for (int i : p.chains) {
      if (!rt_set.count(i)) continue;
      for (const auto& n : lin.chains[i].path) cls_of.emplace(n, p.name);
    }
  }
  for (const auto& p : be) {
    add_class(p);
    for (int i : p.chains)
      for (const auto& n : lin.chains[i].own()) cls_of.emplace(n, p.name);
  }
  // Work on no allocated chain runs on the first BE class.
  const std::string fallback = be.empty() ? "" : be.front().name;
  std::map<std::string, std::set<std::string>> group_classes;
  for (auto& cb : m.callbacks) {
    if (m.node(cb.node).executor != executor) continue;
    auto it = cls_of.find(cb.name);
    cb.affinity = {it != cls_of.end() ? it->second : fallback};
    group_classes[cb.group].insert(cb.affinity.front());
  }
  // Split mutually exclusive groups that span thread classes (see the header comment).
  for (auto& cb : m.callbacks) {
    if (m.node(cb.node).executor != executor) continue;
    auto gc = group_classes.find(cb.group);
    if (gc == group_classes.end() || gc->second.size() < 2) continue;
    const CallbackGroup& g = m.group(cb.group);
    if (g.type != GroupType::MutuallyExclusive) continue;
    const std::string name = g.name + "@" + cb.affinity.front();
    if (std::none_of(m.groups.begin(), m.groups.end(), [&](const CallbackGroup& x) { return x.name == name; }))
      m.groups.push_back(CallbackGroup{name, g.type, g.node});
    cb.group = name;
  }
  if (!final_model) {
    std::vector<Chain> chains;
    for (int i : rt_chains) {
      const LinearChain& l = lin.chains[i];
      Chain c;
      c.name = l.name;
      c.callbacks = l.path;
      c.hops = l.hops;
      c.period = l.period;
      c.deadline = l.deadline;
      c.criticality_class = CriticalityClass::RealTime;
      c.criticality = l.criticality;
      const Chain& o = base.chain(l.origin);
      c.priority = o.priority ? o.priority : std::optional<int>(l.criticality);
      chains.push_back(std::move(c));
    }
    m.chains = std::move(chains);
    // Only the analysed chains' callbacks: every other callback of the executor runs on BE
    // threads (no RT thread runs it, and after the split no RT callback shares its group), so
    // it cannot change an RT bound; leaving it out keeps the controller's analyses cheap.
    std::set<std::string> keep;
    for (const auto& c : m.chains) keep.insert(c.callbacks.begin(), c.callbacks.end());
    std::vector<Callback> cbs;
    cbs.reserve(keep.size());
    for (auto& cb : m.callbacks)
      if (keep.count(cb.name)) cbs.push_back(std::move(cb));
    m.callbacks = std::move(cbs);
  } else {
    // Demoted chains become best-effort; RT chains without a priority get their criticality
    // (criticality-as-priority, PiCAS order along the chain via effective_priority).
    std::set<std::string> rt_origins;
    for (int i : rt_chains) rt_origins.insert(lin.chains[i].origin);
    for (auto& c : m.chains) {
      if (c.criticality_class == CriticalityClass::RealTime && !rt_origins.count(c.name)) {
        c.criticality_class = CriticalityClass::BestEffort;
        c.criticality = 0;
        c.priority.reset();
      } else if (c.criticality_class == CriticalityClass::RealTime && !c.priority) {
        c.priority = c.criticality;
      }
    }
  }
  m.reindex();
  return m;
}

namespace {

// The inputs checked and the measured execution times applied (Options::measured_wcet).
Model checked_model(const Model& input, const Options& opt) {
  if (opt.period <= 0) throw std::invalid_argument("the SCHED_DEADLINE period must be positive");
  if (opt.step_permille <= 0 || opt.step_permille > 1000) throw std::invalid_argument("the budget step must be in (0, 100 %]");
  if (opt.capacity_permille <= 0 || opt.capacity_permille > 1000)
    throw std::invalid_argument("the core capacity must be in (0, 100 %]");
  Model model = input;
  for (const auto& [name, w] : opt.measured_wcet) {
    for (auto& cb : model.callbacks)
      if (cb.name == name) cb.wcet = std::max<Duration>(w, 1);
  }
  model.reindex();
  return model;
}

// The one executor that runs the chains.
std::string chains_executor(const Model& model) {
  std::set<std::string> execs;
  for (const auto& ch : model.chains)
    for (const auto& n : ch.callbacks) execs.insert(model.executor_of(model.callback(n)).name);
  if (execs.empty()) throw std::invalid_argument("the model has no chains to allocate");
  if (execs.size() > 1)
    throw std::invalid_argument("LaME allocates the chains of one executor; these chains run on " +
                                std::to_string(execs.size()) + " executors");
  return *execs.begin();
}

// The plan's number of cores; Options::cores above the model's gives the executor's host that
// many (the written plan says so in `note`).
int plan_cores(Model& model, const Options& opt, const std::string& executor, std::string& note) {
  const Executor& ex = model.executor(executor);
  const Host* host = model.host(ex.host);
  const int host_cores = host ? host->cores : 1;
  const int ncores = opt.cores > 0 ? opt.cores : host_cores;
  if (ncores > 32) throw std::invalid_argument("at most 32 cores");
  if (ncores > host_cores) {
    const std::string host_name = ex.host;
    for (auto& h : model.hosts)
      if (h.name == host_name) h.cores = ncores;
    model.reindex();
    note = "host '" + host_name + "' has " + std::to_string(ncores) + " cores in this plan (the model declares " +
           std::to_string(host_cores) + ")";
  }
  return ncores;
}

// RT units: RT chains that share callbacks are placed together (header comment).
std::vector<std::vector<int>> rt_units(const Linearised& lin) {
  std::vector<int> unit_of(lin.chains.size(), -1);
  std::vector<std::vector<int>> units;
  for (int i : lin.rt) {
    const int u = lin.chains[i].upstream;
    if (u >= 0 && lin.chains[u].cls == CriticalityClass::RealTime && unit_of[u] >= 0) {
      unit_of[i] = unit_of[u];
      units[unit_of[u]].push_back(i);
    } else {
      unit_of[i] = static_cast<int>(units.size());
      units.push_back({i});
    }
  }
  return units;
}

Duration budget_of(const Options& opt, int permille) {
  return static_cast<Duration>((static_cast<__int128>(opt.period) * permille) / 1000);
}

// The RT and BE thread classes being planned, and which RT units are demoted.
struct Classes {
  std::vector<ThreadClassPlan> rt, be;
  std::vector<bool> demoted;
};

// Budget-only re-adjustment: the kept plan's classes, allocation and demotions; every RT class
// starts at the full core again and Algorithm 3 searches its least budget.
void keep_classes(const Ctx& c, const Options& opt, const std::vector<std::vector<int>>& units, Duration full,
                  Classes& s, Allocation& out) {
  const Allocation& k = *opt.keep;
  if (k.lin.chains.size() != c.lin.chains.size() || k.executor != c.executor || k.be.size() > s.rt.size())
    throw std::invalid_argument("the plan to re-budget does not come from this model");
  std::vector<ThreadClassPlan> krt, kbe = k.be;
  for (const auto& b : kbe) {
    ThreadClassPlan r{"rt" + std::to_string(krt.size()), CriticalityClass::RealTime, b.cores, full, opt.period, {}, 0};
    for (const auto& p : k.rt)
      if (p.cores == b.cores) {
        r.name = p.name;
        r.chains = p.chains;
      }
    krt.push_back(r);
  }
  for (auto& b : kbe) {
    b.budget = 0;
    b.period = opt.period;
  }
  s.rt = std::move(krt);
  s.be = std::move(kbe);
  out.demotions = k.demotions;
  for (std::size_t u = 0; u < units.size(); ++u)
    for (int i : units[u])
      for (const auto& d : k.demotions)
        if (d.chain == c.lin.chains[i].name) s.demoted[u] = true;
}

// The RT units the controller demotes before Algorithm 2 (Options::demote).
void demote_requested(const Linearised& lin, const Options& opt, const std::vector<std::vector<int>>& units,
                      Classes& s, Allocation& out) {
  for (std::size_t u = 0; u < units.size(); ++u)
    for (int i : units[u])
      for (const auto& d : opt.demote)
        if (!s.demoted[u] && (d == lin.chains[i].name || d == lin.chains[i].origin)) s.demoted[u] = true;
  for (std::size_t u = 0; u < units.size(); ++u)
    if (s.demoted[u])
      for (int i : units[u])
        out.demotions.push_back({lin.chains[i].name, "demoted by the controller: the least critical RT chain(s) "
                                                     "while no plan without demoting holds"});
}

// Algorithm 2, lines 9-35: each RT unit to the lowest-utilisation RT class it is schedulable
// on; merging classes, and demoting where even one class of all cores fails.
void algorithm2(Ctx& c, const std::vector<std::vector<int>>& units, int ncores, Classes& s, Allocation& out) {
  const Linearised& lin = c.lin;
  auto& rt = s.rt;
  auto& be = s.be;
  int snap_unit = -1;
  std::vector<ThreadClassPlan> snap_rt, snap_be;
retry:
  for (auto& p : rt) p.chains.clear();
  for (auto& p : be) p.chains.clear();
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (s.demoted[u]) continue;
    std::set<int> visited;
    std::string last_why;
    for (;;) {
      const int k = lowest_util(c, rt, visited);
      rt[k].chains.insert(rt[k].chains.end(), units[u].begin(), units[u].end());
      if (class_schedulable(c, rt, be, k, &last_why)) break;
      rt[k].chains.resize(rt[k].chains.size() - units[u].size());
      visited.insert(k);
      if (visited.size() < rt.size()) continue;
      if (rt.size() == 1) {  // lines 24-28: nothing to merge; demote
        s.demoted[u] = true;
        for (int i : units[u])
          out.demotions.push_back({lin.chains[i].name, "not schedulable even on all " + std::to_string(ncores) +
                                                          " cores at 100 % budget (" + last_why + ")"});
        // Restore the merges done for this chain (P*_RT, P*_BE), then place the chains
        // before it again on the restored classes.
        if (snap_unit == static_cast<int>(u)) {
          rt = snap_rt;
          be = snap_be;
          rename(rt, be);
        }
        snap_unit = -1;
        goto retry;
      }
      // Lines 31-35: merge the two lowest-utilisation RT classes (and their BE counterparts).
      if (snap_unit != static_cast<int>(u)) {
        snap_unit = static_cast<int>(u);
        snap_rt = rt;
        snap_be = be;
      }
      const int a = lowest_util(c, rt, {});
      const int b = lowest_util(c, rt, {a});
      merge(rt, be, a, b);
      rename(rt, be);
      goto retry;
    }
    if (snap_unit == static_cast<int>(u)) snap_unit = -1;
  }
}

// Lines 38-41: BE chains (and demoted RT chains) to the lowest-utilisation BE class, largest
// utilisation first (worst-fit decreasing).
void be_worst_fit(const Ctx& c, const std::vector<int>& be_chains, std::vector<ThreadClassPlan>& be) {
  std::vector<int> order = be_chains;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c.util[a] > c.util[b]; });
  for (int i : order) {
    if (c.lin.chains[i].own().empty()) continue;  // owns nothing: only its prefix, elsewhere
    const int k = lowest_util(c, be, {});
    be[k].chains.push_back(i);
  }
}

// Algorithm 3, lines 8-27: the least budget of RT class k (set on it and returned).
Duration least_budget(Ctx& c, const Options& opt, std::vector<ThreadClassPlan>& R, const std::vector<ThreadClassPlan>& B,
                      int k) {
  const int cap = opt.capacity_permille;
  int lo = 0, hi = cap, mid = cap;
  while (lo < hi) {  // lines 8-23
    mid = (lo + hi) / 2;
    R[k].budget = std::max<Duration>(1, budget_of(opt, mid));
    if (class_schedulable(c, R, B, k)) hi = mid;
    else lo = mid + opt.step_permille;
  }
  int best = std::min(cap, std::max(lo, std::min(mid, hi)));  // line 24
  R[k].budget = std::max<Duration>(1, budget_of(opt, best));
  // (the search assumes schedulability is monotone in the budget; confirm the result)
  while (best < cap && !class_schedulable(c, R, B, k)) {
    best = std::min(cap, best + opt.step_permille);
    R[k].budget = budget_of(opt, best);
  }
  return R[k].budget;
}

// Algorithm 3, lines 5-7: merge an empty class into the busiest one when that stays
// schedulable — and, under the capacity rule (header), only when the merged class's least
// budgets take no more of the cores than the busiest class's alone: otherwise the empty
// class's core is left entirely to its BE class.
void merge_empty_rt(Ctx& c, const Options& opt, Duration full, Classes& s) {
  auto& rt = s.rt;
  auto& be = s.be;
  for (std::size_t k = 0; k < rt.size(); ++k) {
    if (!rt[k].chains.empty()) continue;
    set_util(c, rt);
    int busiest = -1;
    for (std::size_t j = 0; j < rt.size(); ++j)
      if (j != k && !rt[j].chains.empty() && (busiest < 0 || rt[j].util_ > rt[busiest].util_)) busiest = static_cast<int>(j);
    if (busiest < 0) continue;
    auto rt2 = rt, be2 = be;
    merge(rt2, be2, static_cast<int>(k), busiest);
    const int merged = std::min(static_cast<int>(k), busiest);
    if (!class_schedulable(c, rt2, be2, merged)) continue;
    if (opt.be_placement == BePlacement::Capacity) {
      auto alone = rt;
      const __int128 before =
          static_cast<__int128>(least_budget(c, opt, alone, be, busiest)) * alone[busiest].cores.size();
      const __int128 after = static_cast<__int128>(least_budget(c, opt, rt2, be2, merged)) * rt2[merged].cores.size();
      rt2[merged].budget = full;
      if (after > before) continue;
    }
    rt = rt2;
    be = be2;
    rename(rt, be);
    k = static_cast<std::size_t>(-1);  // restart the scan
  }
}

// Algorithm 3, lines 28-32: each RT class its least budget, its BE class the rest of the core.
void set_budgets(Ctx& c, const Options& opt, Duration full, Classes& s) {
  for (std::size_t k = 0; k < s.rt.size(); ++k) {
    if (s.rt[k].chains.empty()) {
      s.rt[k].budget = 0;
      s.be[k].budget = full;
      continue;
    }
    least_budget(c, opt, s.rt, s.be, static_cast<int>(k));
    s.be[k].budget = full - s.rt[k].budget;
  }
}

// BE chains by capacity (header): with the budgets known, each BE chain (largest utilisation
// first) goes to the BE class with the most capacity left among those it fits in (utilisation
// below the class's supply rate); one that fits nowhere goes to a class that is overloaded
// already, else to the one with the most room, so the overload stays in as few classes as
// possible. The RT classes, their budgets and bounds are fixed before: they do not change.
void be_by_capacity(const Ctx& c, const std::vector<int>& be_chains, std::vector<ThreadClassPlan>& be) {
  for (auto& p : be) p.chains.clear();
  std::vector<double> room(be.size(), 0.0);
  for (std::size_t k = 0; k < be.size(); ++k)
    if (be[k].budget > 0 && be[k].period > 0)
      room[k] = static_cast<double>(be[k].cores.size()) *
                std::min(1.0, static_cast<double>(be[k].budget) / static_cast<double>(be[k].period));
  std::vector<int> order = be_chains;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c.util[a] > c.util[b]; });
  for (int i : order) {
    if (c.lin.chains[i].own().empty()) continue;
    const int n = static_cast<int>(be.size());
    int k = -1;
    for (int j = 0; j < n; ++j)  // fits: the most room left
      if (room[j] > c.util[i] && (k < 0 || room[j] > room[k])) k = j;
    if (k < 0)  // fits nowhere: the most overloaded class ...
      for (int j = 0; j < n; ++j)
        if (room[j] < 0 && (k < 0 || room[j] < room[k])) k = j;
    if (k < 0)  // ... or the one with the most room (its own best chance)
      for (int j = 0; j < n; ++j)
        if (k < 0 || room[j] > room[k]) k = j;
    be[k].chains.push_back(i);
    room[k] -= c.util[i];
  }
}

// The RT chains' verdicts from their final fp-mt bounds R.
void rt_verdicts(const Ctx& c, const Options& opt, const std::vector<ThreadClassPlan>& rt, const std::vector<Duration>& R,
                 const std::vector<std::string>& reasons, Allocation& out) {
  out.rt_schedulable = true;
  for (std::size_t k = 0; k < rt.size(); ++k)
    for (int i : rt[k].chains) {
      ChainVerdict v;
      v.chain = c.lin.chains[i].name;
      v.cls = CriticalityClass::RealTime;
      v.thread_class = rt[k].name;
      v.deadline = c.lin.chains[i].deadline;
      v.bounded = R[i] >= 0;
      v.bound = v.bounded ? R[i] : 0;
      v.meets_deadline = v.bounded && R[i] <= v.deadline;
      v.starvation_free = v.bounded && R[i] <= opt.controller_period;
      v.reason = v.bounded ? "fp-mt (LaME Theorem 1)" : reasons[i];
      out.rt_schedulable = out.rt_schedulable && v.meets_deadline;
      out.verdicts.push_back(v);
    }
}

// The BE check on the final model (out.model, written with the user's execution times; the
// check runs on the times that drove the plan).
void be_verdicts(const Ctx& c, const Options& opt, const Classes& s, const std::vector<int>& be_chains,
                 const std::vector<Duration>& R, Allocation& out) {
  const Model& model = *c.model;
  std::vector<ThreadClassPlan> classes;
  for (const auto& p : s.rt)
    if (!p.chains.empty()) classes.push_back(p);
  for (const auto& p : s.be) classes.push_back(p);
  std::vector<int> cb_class(model.callbacks.size(), -1);
  for (std::size_t i = 0; i < model.callbacks.size(); ++i) {
    const auto& aff = out.model.callbacks[i].affinity;
    if (aff.empty() || model.node(model.callbacks[i].node).executor != c.executor) continue;
    for (std::size_t k = 0; k < classes.size(); ++k)
      if (classes[k].name == aff.front()) cb_class[i] = static_cast<int>(k);
  }
  Model plan_model = out.model;
  for (std::size_t i = 0; i < plan_model.callbacks.size(); ++i) plan_model.callbacks[i].wcet = model.callbacks[i].wcet;
  auto bev = be_check(plan_model, c.lin, be_chains, classes, cb_class, R, opt.controller_period);
  out.be_starvation_free = true;
  for (auto& v : bev) {
    out.be_starvation_free = out.be_starvation_free && v.starvation_free;
    out.verdicts.push_back(v);
  }
}

// Notes: mutually exclusive groups split across thread classes.
void split_group_notes(Allocation& out) {
  std::map<std::string, std::string> split;
  for (const auto& g : out.model.groups)
    if (auto at = g.name.find('@'); at != std::string::npos) {
      auto& s = split[g.name.substr(0, at)];
      s += (s.empty() ? "" : ", ") + g.name.substr(at + 1);
    }
  for (const auto& [g, classes_of] : split)
    out.notes.push_back("mutually exclusive group '" + g + "' spans thread classes " + classes_of +
                        ": split into one group per class (its callbacks in different classes may run in parallel)");
}

}  // namespace

Allocation allocate(const Model& input, const Options& opt) {
  Model model = checked_model(input, opt);
  Allocation out;
  Ctx c;
  c.model = &model;
  c.fp = find_analysis("fp-mt");
  if (!c.fp) throw std::invalid_argument("the fp-mt analysis is not available");
  c.executor = chains_executor(model);
  std::string cores_note;
  const int ncores = plan_cores(model, opt, c.executor, cores_note);

  // Algorithm 1.
  c.lin = linearise(model);
  const Linearised& lin = c.lin;
  for (const auto& l : lin.chains) {
    double u = 0;
    for (const auto& n : l.own()) u += static_cast<double>(model.callback(n).wcet);
    c.util.push_back(l.period > 0 ? u / static_cast<double>(l.period) : 0);
  }
  const std::vector<std::vector<int>> units = rt_units(lin);

  // Algorithm 2, lines 3-8: one RT and one BE class per core; RT at 100 %, BE at 0 % (100 %:
  // the core's capacity, Options::capacity_permille).
  const Duration full = budget_of(opt, opt.capacity_permille);
  Classes s;
  for (int k = 0; k < ncores; ++k) {
    s.rt.push_back({"rt" + std::to_string(k), CriticalityClass::RealTime, {k}, full, opt.period, {}, 0});
    s.be.push_back({"be" + std::to_string(k), CriticalityClass::BestEffort, {k}, 0, opt.period, {}, 0});
  }
  s.demoted.assign(units.size(), false);
  if (opt.keep) {
    keep_classes(c, opt, units, full, s, out);
  } else {
    demote_requested(lin, opt, units, s, out);
    algorithm2(c, units, ncores, s, out);
  }
  std::vector<int> be_chains = lin.be;
  for (std::size_t u = 0; u < units.size(); ++u)
    if (s.demoted[u]) be_chains.insert(be_chains.end(), units[u].begin(), units[u].end());
  if (!opt.keep) {
    be_worst_fit(c, be_chains, s.be);
    merge_empty_rt(c, opt, full, s);
  }
  set_budgets(c, opt, full, s);
  if (!opt.keep && opt.be_placement == BePlacement::Capacity) be_by_capacity(c, be_chains, s.be);

  // Final bounds.
  std::vector<int> rt_chains;
  for (const auto& p : s.rt) rt_chains.insert(rt_chains.end(), p.chains.begin(), p.chains.end());
  std::vector<std::string> reasons;
  std::vector<Duration> R = rt_bounds(c, s.rt, s.be, &reasons);
  rt_verdicts(c, opt, s.rt, R, reasons, out);
  out.model = analysis_model(model, c.executor, lin, s.rt, s.be, rt_chains, true);
  // Keep the user's execution times in the written model (measured ones only drive the plan).
  for (std::size_t i = 0; i < out.model.callbacks.size() && i < input.callbacks.size(); ++i)
    out.model.callbacks[i].wcet = input.callbacks[i].wcet;
  be_verdicts(c, opt, s, be_chains, R, out);
  if (!cores_note.empty()) out.notes.push_back(cores_note);
  split_group_notes(out);
  set_util(c, s.rt);
  set_util(c, s.be);
  out.rt.clear();
  for (const auto& p : s.rt)
    if (!p.chains.empty()) out.rt.push_back(p);
  out.be = s.be;
  out.lin = lin;
  out.executor = c.executor;
  out.analyses = c.analyses;
  return out;
}

}  // namespace chainrt::lame
