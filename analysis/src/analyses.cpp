// The shipped analyses and their registry (analysis.hpp). Each class only states what it
// bounds and when it applies; the equations live in chain_rta.cpp (edf-mt, fp-mt, picas-st),
// casini.cpp (ros-default-st) and cros_rt.cpp (cros-rt).
//  - edf-mt:  EDF ready-queue paper (Al Arafat et al.), Sec. V, Theorems 1-2, Eq. 8-12.
//  - fp-mt:   LaME Sec. 4.2 Theorem 1 (Sobhani et al. RTAS 2023, Thm 2): fixed-priority
//             chains on a priority-driven multi-threaded executor, dedicated cores or
//             SCHED_DEADLINE reservations (sbf of the periodic resource), constrained deadlines.
//  - picas-st: PiCAS (Choi et al. RTAS 2021): chain-aware fixed priorities on single-threaded
//             executors, one per core; chains across executors composed end to end.
//  - cros-rt: CROS-RT fixed-point RTA with C^I, C^L, C^R, interference and blocking.
//  - ros-default-st: Casini et al. ECRTS 2019, default single-threaded executor on a
//             reservation (baseline).
// Not shipped as a verdict: the default MULTI-threaded executor analyses of Jiang et al.
// (RTSS 2022) and Sobhani et al. (RTAS 2023, standard executor; LaME Theorems 2 and 3), which
// Teper et al. (EMSOFT 2024) refuted with starvation counterexamples (docs/analysis.md).
#include <algorithm>
#include <set>

#include "accelerator.hpp"
#include "chain_rta.hpp"
#include "fixed_point.hpp"
#include "join_wait.hpp"
#include "sag_model.hpp"
#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/sched/policy.hpp"

namespace chainrt {

namespace detail {
AnalysisResult cros_rt_analyze(const Model& m);
}

namespace {

using namespace detail;

// Every segment of a task: its segments, or those of all its paths (Task::paths).
std::vector<Segment> segments_of(const Task& t) {
  std::vector<Segment> out = t.segments;
  for (const auto& p : t.paths) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Structural checks shared by the engine-based analyses. `single_threaded`: every executor
// that runs work must have exactly one thread.
bool structure_ok(const Model& m, const View& v, bool single_threaded, bool linear_only, std::string* why,
                  bool skip_be = false, bool shared_cores = false) {
  std::set<int> used;
  for (const auto& t : v.tasks)
    for (int c : t.work) used.insert(v.cbs[c].executor);
  for (int x : used) {
    const Executor& e = m.executors[x];
    if (single_threaded && e.threads.size() != 1) {
      if (why) *why = "executor '" + e.name + "' has " + std::to_string(e.threads.size()) +
                      " threads; this analysis is for single-threaded executors";
      return false;
    }
    if (e.threads.size() > 64) {
      if (why) *why = "executor '" + e.name + "' has more than 64 threads";
      return false;
    }
  }
  for (const auto& t : v.tasks) {
    if (t.segments.empty() && t.paths.empty()) {
      if (why) *why = "chain '" + t.name + "' branches across several executors (not supported)";
      return false;
    }
    if (linear_only && !t.linear) {
      if (why) *why = "chain '" + t.name + "' branches (this analysis handles linear chains)";
      return false;
    }
    for (const Segment& s : segments_of(t)) {
      std::uint64_t mask = v.cbs[s.cbs.front()].threads;
      if (skip_be) {  // a segment on LaME best-effort threads is reported unbounded (also when split)
        std::uint64_t any = 0;
        for (int c : s.cbs) any |= v.cbs[c].threads;
        bool on_be = false;
        for (std::size_t th = 0; th < v.thread_be[s.executor].size() && th < 64; ++th)
          on_be |= (any >> th & 1) && v.thread_be[s.executor][th];
        if (on_be) continue;
      }
      for (int c : s.cbs)
        if (v.cbs[c].threads != mask || mask == 0) {
          if (why) *why = "the callbacks of chain '" + t.name + "' on executor '" + m.executors[s.executor].name +
                          "' may run on different threads (affinity); analysed only when they share one thread set";
          return false;
        }
      bool be = false;
      for (std::size_t th = 0; th < v.thread_be[s.executor].size() && th < 64; ++th)
        be |= (mask >> th & 1) && v.thread_be[s.executor][th];
      if (be && skip_be) continue;  // reported without a bound by fp-mt (LaME BE threads)
      for (std::size_t th = 0; th < v.thread_shared[s.executor].size() && th < 64; ++th)
        if ((mask >> th & 1) && v.thread_shared[s.executor][th] && !(shared_cores && v.foreign_ok[s.executor][th])) {
          if (why) *why = "thread '" + m.executors[s.executor].threads[th].name + "' of executor '" +
                          m.executors[s.executor].name +
                          "' shares its core with another thread and has no reservation or dominating SCHED_FIFO "
                          "priority (no supply bound" +
                          (shared_cores ? std::string(": it is pinned to several cores, or a thread of its own executor "
                                                      "or one with a reservation may run there)")
                                        : std::string(")"));
          return false;
        }
    }
  }
  return true;
}

bool structure_ok(const Model& m, bool single_threaded, bool linear_only, std::string* why) {
  return structure_ok(m, build_view(m, model_hop_cost(m)), single_threaded, linear_only, why);
}

// LaME Sec. 4.2 Theorem 2 (Sobhani et al. 2023, standard executor, constrained deadlines) as a
// best-effort check for a chain on BE threads — reported in the reason text only, never as a
// bound (the standard-executor analysis was refuted by Teper et al. 2024; LaME cites an
// amended version that is not in the specification). Theorem 3 (arbitrary deadlines) needs
// the workload W* of Lemma 6 in Sobhani et al., which is not reprinted: not implemented.
//   dbf(Δ) = |Π|·(E_c − e_last) + Σ_{x ∈ S − c} W_x(Δ, D_x − E_x),
//   W_x(l, α) = ⌊(l + α)/T_x⌋·E_x + min(E_x, l + α − ⌊(l + α)/T_x⌋·T_x)  (reference page),
//   R_c = Δ + sbf⁻¹(e_last − 1) for the least Δ with dbf(Δ) < sbf_Π(Δ).
std::optional<Duration> lame_theorem2_check(const View& v, int k) {
  const Task& tk = v.tasks[k];
  if (tk.segments.size() != 1 || !tk.linear) return std::nullopt;
  const Segment& seg = tk.segments[0];
  const std::uint64_t mask = v.cbs[seg.cbs.front()].threads;
  SupplySet pi;
  for (std::size_t t = 0; t < v.supply[seg.executor].size() && t < 64; ++t)
    if (mask >> t & 1) pi.threads.push_back(v.supply[seg.executor][t]);
  if (pi.threads.empty()) return std::nullopt;
  const Duration elast = v.cbs[seg.cbs.back()].wcet;
  struct W {
    Duration E, T, alpha;
  };
  std::vector<W> others;
  for (std::size_t i = 0; i < v.tasks.size(); ++i) {
    if (static_cast<int>(i) == k) continue;
    Duration E = 0;
    for (int c : v.tasks[i].work)
      if (v.cbs[c].executor == seg.executor && (v.cbs[c].threads & mask)) E += v.cbs[c].wcet;
    if (E > 0) others.push_back({E, v.tasks[i].T, std::max<Duration>(0, v.tasks[i].D - E)});
  }
  const Duration base = static_cast<Duration>(pi.size()) * (tk.path_wcet - elast);
  auto dbf = [&](Duration d) {
    Duration sum = base;
    for (const auto& o : others) {
      const Duration l = d + o.alpha, n = l / o.T;
      sum += n * o.E + std::min(o.E, l - n * o.T);
    }
    return sum;
  };
  // The least Δ with dbf(Δ) < sbf_Π(Δ): the least fixed point of Δ ↦ (Δ where it holds, else the
  // first later point where the supply exceeds dbf(Δ)), non-decreasing (fixed_point.hpp).
  const auto found = least_fixed_point(1, tk.T, [&](Duration d) {
    const Duration need = dbf(d);
    return need < pi.sbf(d) ? d : pi.first_at_least(need + 1, d + 1, tk.T + 1).value_or(tk.T + 1);
  });
  if (!found) return std::nullopt;
  Duration inv = 0;
  for (const auto& s : pi.threads) inv = std::max(inv, s.sbf_inverse(elast - 1));
  return *found.value + inv;
}

// EDF needs a bound on the absolute deadline every pending callback of a chain instance is
// queued with (workload.cpp, edf_keys: a shared timer keys with its chains' shortest deadline, a
// callback shared by several chains with the deadline of the message at its queue's head).
// Messages a path callback takes from a publisher whose hop is on no chain carry none.
bool keyed_deadlines(const View& v, std::string* why) {
  for (const auto& t : v.tasks)
    if (t.reported && !t.edf_unkeyed.empty()) {
      if (why) *why = t.edf_unkeyed;
      return false;
    }
  return true;
}

// A platform blackout curve (model Host::blackout) is charged by global_segment_bound on
// threads without a reservation (chain_rta.cpp) and by cros-rt's busy-period window
// (cros_rt.cpp). Not derived: the supply a SCHED_DEADLINE reservation keeps under blackouts (CBS
// replenishment after a stall), and ros-default-st's recurrence. True, with the reason in `why`,
// when the model has a curve the analysis cannot take (`charges_platform`: it charges one).
bool refuse_platform(const Model& m, std::string* why, bool charges_platform) {
  auto refuse = [&](std::string r) {
    if (why) *why = std::move(r);
    return true;
  };
  for (const auto& h : m.hosts) {
    if (h.blackout.empty()) continue;
    if (!charges_platform)
      return refuse("host '" + h.name + "' has a platform blackout curve, which this analysis does not charge (edf-mt, "
                    "fp-mt, picas-st and cros-rt do)");
    for (const auto& e : m.executors)
      if (e.host == h.name)
        for (const auto& t : e.threads)
          if (t.reservation)
            return refuse("thread '" + t.name + "' of '" + e.name + "' has a SCHED_DEADLINE reservation on host '" +
                          h.name + "', which has a platform blackout curve: the supply of a reservation under "
                          "blackouts is not analysed");
  }
  return false;
}

class GlobalAnalysis : public ResponseTimeAnalysis {
 public:
  GlobalAnalysis(std::string name, std::string summary, Policy policy, Order order, bool single, bool deadlines,
                 std::vector<std::pair<Policy, DefaultFor>> defaults)
      : name_(std::move(name)), summary_(std::move(summary)), policy_(policy), order_(order), single_(single),
        deadlines_(deadlines), defaults_(std::move(defaults)) {}
  std::string name() const override { return name_; }
  std::string summary() const override { return summary_; }
  Policy policy() const override { return policy_; }
  DefaultFor default_for(Policy p) const override {
    for (const auto& [q, f] : defaults_)
      if (q == p) return f;
    return DefaultFor::None;
  }
  bool single_threaded() const override { return single_; }
  bool applicable(const Model& m, std::string* why) const override {
    if (uses_accelerators(m)) {  // the device bounds, then the CPU side as pieces (accelerator.hpp)
      const AcceleratorPlan plan = plan_accelerators(m);
      if (!plan.refused.empty()) {
        if (why) *why = plan.refused;
        return false;
      }
      return applicable_with(plan.model, plan.cost, why);
    }
    return applicable_with(m, model_hop_cost(m), why);
  }
  AnalysisResult analyze(const Model& m) const override { return run(m, false); }
  bool schedulable(const Model& m) const override { return run(m, true).schedulable; }

  // The holistic analysis with the fusion rounds of guaranteed phases (join_wait.hpp): run with
  // every round that can form; a round whose pairing condition fails at the fixed point (or that
  // has no bound) is dropped and the analysis run again, its chains then charged the generic
  // join term. Rounds are only ever dropped, so this ends after at most one run per fusion set.
  AnalysisResult run(const Model& m, bool verdict_only) const {
    if (uses_accelerators(m)) {
      const AcceleratorPlan plan = plan_accelerators(m);
      if (!plan.refused.empty()) return not_applicable(m, plan.refused, name_);
      return finish_accelerators(plan, run_with(plan.model, plan.cost, verdict_only));
    }
    return run_with(m, model_hop_cost(m), verdict_only);
  }

  bool applicable_with(const Model& m, const HopCost& cost, std::string* why) const {
    if (refuse_platform(m, why, true)) return false;
    View v = build_view(m, cost);
    return structure_ok(m, v, single_, false, why, order_ == Order::FixedPriority, true) &&
           (order_ != Order::Edf || keyed_deadlines(v, why));
  }

  AnalysisResult run_with(const Model& m, const HopCost& cost, bool verdict_only) const {
    std::string why;
    if (refuse_platform(m, &why, true)) return not_applicable(m, why, name_);
    const View base = build_view(m, cost);
    if (!structure_ok(m, base, single_, false, &why, order_ == Order::FixedPriority, true) ||
        (order_ == Order::Edf && !keyed_deadlines(base, &why)))
      return not_applicable(m, why, name_);
    std::vector<int> disabled;
    for (;;) {
      View v = base;
      fusion_rounds(m, v, cost, disabled);
      std::vector<int> failed;
      AnalysisResult r = run_view(v, verdict_only, &failed);
      if (failed.empty()) return r;
      disabled.insert(disabled.end(), failed.begin(), failed.end());
    }
  }

  AnalysisResult run_view(const View& v, bool verdict_only, std::vector<int>* failed_rounds) const {
    HolisticOptions opt;
    opt.analysis = name_;
    opt.require_deadlines_met = deadlines_;
    opt.verdict_only = verdict_only;
    opt.work_windows = true;
    opt.failed_rounds = failed_rounds;
    const Order order = order_;
    SegmentBound seg = [order](const View& vv, int k, const Segment& s, const Windows& W, Duration arrival,
                               Duration limit) { return global_segment_bound(vv, order, k, s, W, arrival, limit); };
    std::function<bool(int, std::string*)> skip;
    if (order_ == Order::FixedPriority) {
      // LaME best-effort threads pick the first eligible callback and refresh only when their
      // wait set is empty (the default executor's polling points): no priority-driven bound.
      skip = [&v](int k, std::string* w) {
        for (const Segment& s : segments_of(v.tasks[k])) {
          std::uint64_t mask = v.cbs[s.cbs.front()].threads;
          for (std::size_t t = 0; t < v.thread_be[s.executor].size() && t < 64; ++t)
            if ((mask >> t & 1) && v.thread_be[s.executor][t]) {
              *w = "runs on LaME best-effort threads: the default executor's polling points can starve callbacks "
                   "(Teper et al. 2024), so LaME's Theorems 2-3 are not used as a verdict";
              if (auto r = lame_theorem2_check(v, k)) *w += "; LaME Thm 2 best-effort check (not a bound): " + std::to_string(*r) + " ns";
              return true;
            }
        }
        return false;
      };
    }
    return holistic(v, seg, opt, skip);
  }

  static AnalysisResult not_applicable(const Model& m, const std::string& why, const std::string& name = "") {
    AnalysisResult r;
    r.analysis = name;
    r.schedulable = false;
    for (const auto& c : m.chains) {
      ChainBound b;
      b.chain = c.name;
      b.deadline = c.deadline;
      b.reason = "analysis not applicable: " + why;
      r.chains.push_back(b);
    }
    if (m.chains.empty()) r.schedulable = false;
    return r;
  }

 private:
  std::string name_, summary_;
  Policy policy_;
  Order order_;
  bool single_, deadlines_;
  std::vector<std::pair<Policy, DefaultFor>> defaults_;
};

class RosDefaultSt : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "ros-default-st"; }
  std::string summary() const override {
    return "Casini et al. ECRTS 2019: default single-threaded executor on a reservation (busy window, Sec. 6)";
  }
  Policy policy() const override { return Policy::RosDefault; }
  DefaultFor default_for(Policy p) const override {
    return p == Policy::RosDefault ? DefaultFor::SingleThreaded : DefaultFor::None;
  }
  bool single_threaded() const override { return true; }
  bool applicable(const Model& m, std::string* why) const override {
    return !refuse_accelerators(m, name(), why) && !refuse_platform(m, why, false) && structure_ok(m, true, true, why);
  }
  AnalysisResult analyze(const Model& m) const override { return run(m, false); }
  bool schedulable(const Model& m) const override { return run(m, true).schedulable; }

  AnalysisResult run(const Model& m, bool verdict_only) const {
    std::string why;
    if (refuse_accelerators(m, name(), &why) || refuse_platform(m, &why, false))
      return GlobalAnalysis::not_applicable(m, why, name());
    View v = build_view(m, model_hop_cost(m));
    if (!structure_ok(m, v, true, true, &why)) return GlobalAnalysis::not_applicable(m, why, name());
    HolisticOptions opt;
    opt.analysis = name();
    opt.verdict_only = verdict_only;
    // Fan-out work is released until its own end, not the path's (the busy window's jitter):
    // counted only until the path's end it was beaten by the simulator (fan-out-tail systems).
    opt.work_windows = true;
    return holistic(v, &casini_segment_bound, opt);
  }
};

class CrosRt : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "cros-rt"; }
  std::string summary() const override {
    return "CROS-RT (Lee): fixed-point RTA with C^I/C^L/C^R communication costs, interference and blocking";
  }
  Policy policy() const override { return Policy::Picas; }
  bool single_threaded() const override { return true; }
  bool applicable(const Model& m, std::string* why) const override {
    // A blackout curve is charged in the window (cros_rt.cpp); reservations are refused below.
    if (refuse_accelerators(m, name(), why) || refuse_platform(m, why, true)) return false;
    for (const auto& e : m.executors)
      if (e.threads.size() != 1) {
        if (why) *why = "CROS-RT assumes single-threaded executors; '" + e.name + "' has " +
                        std::to_string(e.threads.size()) + " threads";
        return false;
      }
    // CROS-RT's recurrence (R = C + I(R) + B) assumes the executors run as SCHED_FIFO threads
    // that get a core whenever nothing of higher priority runs; a SCHED_DEADLINE reservation
    // supplies only `budget` per `period`, which the recurrence does not model (it would
    // claim the dedicated-core bound on a 30 % reservation). The supply-aware analyses are
    // fp-mt, picas-st and ros-default-st.
    for (const auto& e : m.executors)
      for (const auto& t : e.threads)
        if (t.reservation) {
          if (why) *why = "CROS-RT assumes SCHED_FIFO executors without reservations; thread '" + t.name +
                          "' of '" + e.name + "' has a SCHED_DEADLINE reservation (use picas-st, fp-mt or "
                          "ros-default-st, which use its supply bound function)";
          return false;
        }
    return true;
  }
  AnalysisResult analyze(const Model& m) const override {
    std::string why;
    if (!applicable(m, &why)) return GlobalAnalysis::not_applicable(m, why, name());
    return detail::cros_rt_analyze(m);
  }
};

// A registered analysis as every caller gets it: it sees the model with each callback's cost
// interval [BCET, WCET + its executor's dispatch_overhead] (facts.hpp, charge_dispatch_overhead)
// — the one place the executor's own time per dispatch enters every analysis.
class Charged : public ResponseTimeAnalysis {
 public:
  explicit Charged(const ResponseTimeAnalysis& a) : a_(&a) {}
  std::string name() const override { return a_->name(); }
  std::string summary() const override { return a_->summary(); }
  Policy policy() const override { return a_->policy(); }
  bool bounds_policy(Policy p) const override { return a_->bounds_policy(p); }
  DefaultFor default_for(Policy p) const override { return a_->default_for(p); }
  bool single_threaded() const override { return a_->single_threaded(); }
  bool applicable(const Model& m, std::string* why) const override {
    Model storage;
    return a_->applicable(charge_dispatch_overhead(m, storage), why);
  }
  AnalysisResult analyze(const Model& m) const override {
    Model storage;
    return a_->analyze(charge_dispatch_overhead(m, storage));
  }
  bool schedulable(const Model& m) const override {
    Model storage;
    return a_->schedulable(charge_dispatch_overhead(m, storage));
  }

 private:
  const ResponseTimeAnalysis* a_;
};

const std::vector<const ResponseTimeAnalysis*>& registry() {
  static const GlobalAnalysis edf_mt("edf-mt",
                                     "EDF ready-queue paper (Al Arafat et al.) Sec. V, Thm 1-2 (Eq. 8-12): GEDF with "
                                     "fixed preemption points + mutually exclusive group blocking, m threads",
                                     Policy::Edf, Order::Edf, false, true, {{Policy::Edf, DefaultFor::Any}});
  static const GlobalAnalysis fp_mt("fp-mt",
                                    "LaME Sec. 4.2 Thm 1 (Sobhani et al. 2023): fixed-priority chains on a "
                                    "priority-driven multi-threaded executor, dedicated cores or reservations (sbf)",
                                    Policy::FixedPriority, Order::FixedPriority, false, false,
                                    // LaME's real-time threads, and picas executors with several threads,
                                    // order their callbacks by fixed priority as fp does.
                                    {{Policy::FixedPriority, DefaultFor::Any},
                                     {Policy::Lame, DefaultFor::Any},
                                     {Policy::Picas, DefaultFor::MultiThreaded}});
  static const GlobalAnalysis picas_st("picas-st",
                                       "PiCAS (Choi et al. RTAS 2021): chain-aware fixed priorities on single-threaded "
                                       "executors, chains composed end to end",
                                       Policy::Picas, Order::FixedPriority, true, false,
                                       {{Policy::Picas, DefaultFor::SingleThreaded}});
  static const CrosRt cros_rt;
  static const RosDefaultSt ros_default_st;
  static const Charged all_charged[] = {Charged(edf_mt),  Charged(fp_mt),          Charged(picas_st),
                                        Charged(cros_rt), Charged(ros_default_st), Charged(sag_analysis())};
  static const std::vector<const ResponseTimeAnalysis*> all = [] {
    std::vector<const ResponseTimeAnalysis*> v;
    for (const Charged& a : all_charged) v.push_back(&a);
    return v;
  }();
  return all;
}

}  // namespace

std::vector<const ResponseTimeAnalysis*> analyses() { return registry(); }

const ResponseTimeAnalysis* find_analysis(const std::string& name) {
  for (const auto* a : registry())
    if (a->name() == name) return a;
  return nullptr;
}

const ResponseTimeAnalysis* default_analysis(Policy policy, bool multi, std::string* why) {
  const auto wanted = static_cast<unsigned>(multi ? DefaultFor::MultiThreaded : DefaultFor::SingleThreaded);
  for (const auto* a : registry())
    if (static_cast<unsigned>(a->default_for(policy)) & wanted) return a;
  if (why) {
    // The default multi-threaded executor is the one policy whose analyses were published, then refuted.
    if (policy == Policy::RosDefault && multi)
      *why = "the default multi-threaded executor has no sound analysis in chainrt (the published ones were "
             "refuted by Teper et al. 2024; see docs/analysis.md)";
    else
      *why = std::string("no analysis of the ") + to_string(policy) + " policy is shipped" +
             (multi && default_analysis(policy, false) ? " for multi-threaded executors" : "");
  }
  return nullptr;
}

const ResponseTimeAnalysis* default_analysis(const Model& m, std::string* why) {
  std::set<Policy> policies;
  bool multi = false;
  for (const auto& e : m.executors) {
    policies.insert(e.policy);
    multi |= e.threads.size() > 1;
  }
  if (policies.size() != 1) {
    if (why) *why = "the executors use different policies; pick one with --analysis";
    return nullptr;
  }
  return default_analysis(*policies.begin(), multi, why);
}

}  // namespace chainrt
