// cros-rt: the CROS-RT fixed-point response-time analysis (Lee, "CROS-RT: Cross-layer priority
// scheduling for predictable inter-process communication in ROS 2", slides "Communication
// cost decomposition" and "Interference and blocking"):
//   C_i = Σ_{λ ∈ Λ_i^I} C^I + Σ_{λ ∈ Λ_i^L} C^L + Σ_{λ ∈ Λ_i^R} C^R   (+ the callbacks' WCETs)
//   R_i^(a+1) = C_i + I_i(R_i^(a)) + B_i,   I_i(R) = Σ_{h ∈ hp(i)} ⌈R / T_h⌉ · C_h
//   B_i = |Λ_i^R| (N − i) max_{lp} e^sub_sel + σ_i T_i,  σ_i = 1[R_i > T_i]
// Per-message costs come from the model's `communication` (fixed + per_kib·size), or, when
// `communication.measurements` are given, from a least-squares fit raised to cover every
// measurement (comm_fit.hpp); a hop is never charged less than the declared cost or the
// latency measured at the nearest size (workload.hpp, model_hop_cost).
// Where we deviate, on the safe side, and why:
//  - I_i uses ⌈(R + J_h)/T_h⌉ with release jitter J_h = R_h − C_h: a higher-priority chain
//    whose callbacks are spread over executors can place two instances' work inside one
//    window of length R; the slides' formula (J_h = 0) misses that.
//  - hp(i) is ranked by the priorities the executor really uses, not by the chains'
//    priorities: inside an executor, chain h interferes with chain i when one of h's callbacks
//    there has an effective priority >= the lowest of i's callbacks there (the picas executor
//    orders its readyQueue by callback priority; the slides' hp(i) by chain priority is the
//    same only under CROS-RT's P1/P2, which a model need not follow — with callback priorities
//    that contradict the chain priorities the chain-priority ranking gave 4 ms for a chain the
//    simulator shows at 10 ms). Across executors that can share a core (same host,
//    intersecting thread pinning; unpinned threads may use every core), h interferes when its
//    executor priority (executor priority or SCHED_FIFO priority) is >= i's executor's there
//    (it can run ahead of i). Chains that do not outrank i anywhere can only block it.
//  - callbacks of lower-priority chains inside chain i's own executor (when CROS-RT's P3, one
//    chain per executor, is not respected) block non-preemptively: one max WCET each time the
//    chain enters the executor or resumes there after a delayed hop.
//  - e^sub_sel is not in chainrt's model; it is bounded by the fixed part of the remote cost.
//  - R_i > T_i: the slides allow it with the σ_i T_i term of B_i (one more period when the
//    bound exceeds the period). That covers at most one earlier instance still in progress; with
//    R_i ≥ 2 T_i several are, and the term is not a bound. chainrt analyses the overlap instead
//    with the level-i busy period (Lehoczky, RTSS 1990; Tindell, Burns & Wellings, Real-Time
//    Systems 6(2), 1994, with release jitter): instances q = 0, 1, … of the chain released back
//    to back each finish within w_i(q) of the first one's release, and
//      w_i(q) = J_i + (q+1)(C_i + B_i) + S_i(w, q) + Σ_{h ∈ hp(i)} ⌈(w + J_h)/T_h⌉ · C_h
//      R_i = max_{q = 0..Q} (w_i(q) − q T_i),  Q the first q with w_i(q) ≤ (q+1) T_i
//    (for q = 0 this is the recurrence above). Blocking and e^sub_sel are charged per instance
//    (each enters its executors anew) and S_i charges the later instances released inside the
//    window, ⌈w/T_i⌉ − (q+1) more instances (they may run a callback ahead of an earlier
//    instance on a shared CPU). Proof sketch: between the release of instance 0 and the end of
//    instance q, the earliest unfinished instance always runs, travels a hop, or waits for a
//    CPU that hp work, one lower-priority callback per executor entry, or another instance of
//    the chain holds.
//    A *pipelined* chain — each callback of its work on its own executor, no two of those
//    executors able to share a CPU, its hops delivering in order (DDS does for one writer and
//    one reader) — is a tandem of FIFO stages, one per callback s, and pays its hops once:
//      w_i(q) = J_i + Σ hops + Σ_s x_s(q),
//      x_s(q) = B_s + (q+1) E_s + Σ_{h ∈ hp(i)} ⌈(x + R_h − C_{h,s})/T_h⌉ · C_{h,s}
//    with E_s the stage's WCET, B_s one lower-priority callback of its executor, C_{h,s} the
//    work of h that may run on the stage's CPU (h's callbacks there, plus h's hop costs, which
//    the slides charge as interference) and R_h − C_{h,s} its jitter there; the message
//    selection term of B_i is a delay of the hop. Proof sketch (the stage decomposition):
//    going back from the end of instance q at the last stage, each stage's interval in which it
//    always has an instance of the chain pending begins with the arrival of an instance
//    j_{s−1} <= j_s, delivered one hop after stage s−1 finished it; the intervals are disjoint,
//    each holds the stage's work for j_{s−1}..j_s (at most q − j_0 + 1 instances), hp work on
//    its CPU and one blocking. So the end of q is within w_i(q − j_0) of j_0's release.
//    x_s(a + b + 1) <= x_s(a) + x_s(b) − B_s (⌈⌉ is subadditive), so max_n (w_i(n) − n T_i) is
//    reached before the first n with w_i(n) <= (n+1) T_i: the same Q as above. Summing the
//    disjoint intervals' hp work over the whole window instead gives the whole-chain form
//    w_i(q) = J_i + Σ hops + B_i + (q+1) E_i + I_i(w); cros-rt keeps the smaller of the two.
//    Instances the executor drops (a timer's overrun, a message overwritten in a full queue)
//    only remove work.
//  - the paper's model has no platform: a CPU is always there for the highest-priority ready
//    thread. On a VM it is not (hypervisor steal, VM stalls, long non-preemptible kernel
//    sections). cros-rt charges a host's blackout curve (model hosts[].blackout: S_h(Δ), the
//    most time one core of host h is taken above every thread in any window Δ; supply.hpp,
//    platform_blackout) in the window of its busy period:
//      w_i(q) = J_i + max(q+1, ⌈w/T_i⌉)(C_i + B_i) + I_i(w) + P_i(w),
//      P_i(w) = Σ_{h ∈ hosts(i)} n_{i,h} · S_h(w)
//    with n_{i,h} the cores of h chain i can be delayed on: those its executors' threads may run
//    on (all of the host's for an unpinned thread), and all of h's cores when a hop of the chain
//    with a cost starts or ends on h (a hop runs on CPUs too — DDS threads, the kernel's
//    softirqs — on any core of its hosts, and is stretched by a blackout there). Proof sketch:
//    the proof above classifies every instant of the window as one at which the earliest
//    unfinished instance runs, travels a hop, or waits for a CPU; the platform adds the instants
//    at which it is stopped or kept waiting because a core it runs or may run on is taken. Each
//    such instant is one at which some core counted in n_{i,h} is taken, so they number at most
//    Σ_h n_{i,h}·S_h(w) in a window of w (every core loses at most S_h(w) there). The other
//    instants are charged as before: hp work delayed by the platform elsewhere still counts
//    only its releases in the window (its jitter R_h − C_h is the bound with the platform).
//    The busy-period demand check adds the curve's long-run rate Σ_h n_{i,h}·S_h(W_h)/W_h (W_h
//    its longest window; beyond it S_h is sub-additive, supply.hpp).
//    A pipelined chain on a host with a curve is analysed with this window and with the
//    whole-chain form, the smaller kept, not with the stage form:
//      w_i(q) = J_i + Σ hops + B_i + (q+1) E_i + I_i(w) + P̂_i(w),  P̂_i(w) = Σ_h n_{i,h}·Ŝ_h(w)
//    The stage and the whole-chain form stop at the first q with w_i(q) <= (q+1) T_i because
//    their windows are sub-additive in q; S_h between the curve's measured windows (the next
//    longer window's maximum) is not (points {1 ms: 0.1 ms, 10 ms: 5 ms} give
//    S(1 ms + 1 ns) = 1 ms + 1 ns > S(1 ms) + S(1 ns)), so the whole-chain form charges
//    Ŝ_h(Δ) = min(Δ, σ_h + ⌈ρ_h Δ⌉) >= S_h(Δ), concave and so sub-additive (platform_bucket,
//    supply.hpp). Derivation: the stage decomposition's intervals are disjoint; each stage's is
//    stretched by the blackouts of the cores its thread may run on, each hop's by those of its
//    hosts' cores, together at most P_i(w) <= P̂_i(w) over the window. The non-pipelined window
//    needs no sub-additivity: its busy period ends when instance q is done before q + 1 is
//    released. The stage form would need a charge per stage and the hops' stretches between
//    them; not derived, so not used on such a host.
//    (A SCHED_DEADLINE reservation under blackouts is not analysed: cros-rt refuses
//    reservations anyway.) Checked by the soundness harness's `platform` feature.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "chain_rta.hpp"
#include "fixed_point.hpp"
#include "chainrt/analysis/comm_fit.hpp"
#include "chainrt/analysis/supply.hpp"
#include "chainrt/model/facts.hpp"

namespace chainrt::detail {

namespace {

// The highest SCHED_FIFO priority of the executor's threads (a thread's own, else the
// executor's; 0 = none, below every FIFO thread) — thread_fifo_priority, model/facts.hpp.
int exec_priority(const Executor& e) {
  int p = 0;
  for (const auto& t : e.threads) p = std::max(p, thread_fifo_priority(e, t).value_or(0));
  return p;
}

// Executors a and b can compete for a CPU: same host and their threads' core sets intersect
// (a thread without pinning may run on any core of its host).
bool share_cpu(const Model& m, const View& v, int a, int b) {
  if (a == b) return true;
  if (v.host_of[a] != v.host_of[b]) return false;
  const int cores = m.hosts.empty() ? 1 : m.hosts[v.host_of[a]].cores;
  auto core_set = [&](int x) {
    std::set<int> s;
    for (const auto& t : m.executors[x].threads) {
      if (t.cores.empty())
        for (int c = 0; c < cores; ++c) s.insert(c);
      else
        s.insert(t.cores.begin(), t.cores.end());
    }
    return s;
  };
  std::set<int> ca = core_set(a), cb = core_set(b);
  for (int c : ca)
    if (cb.count(c)) return true;
  return false;
}

// Pipelined chain (see the header): a later instance of the chain can never take a CPU that an
// earlier one waits for — each callback of its work on its own executor, no two of those
// executors able to share a CPU.
bool pipelined(const Model& m, const View& v, const Task& t) {
  std::vector<int> xs;
  for (int c : t.work) xs.push_back(v.cbs[c].executor);
  for (std::size_t a = 0; a < xs.size(); ++a)
    for (std::size_t b = a + 1; b < xs.size(); ++b)
      if (share_cpu(m, v, xs[a], xs[b])) return false;  // (also true for xs[a] == xs[b])
  return true;
}

// P_i(w) = Σ_{h ∈ hosts(i)} n_{i,h}·S_h(w) (header): for each host with a blackout curve, the
// cores chain i can be delayed on there — its executors' threads' cores (all of the host's for
// an unpinned thread) and, for a hop with a cost, every core of the hop's hosts.
struct PlatformCharge {
  struct On {
    const std::vector<BlackoutPoint>* curve;
    Duration cores;
    BlackoutBucket bucket;  // Ŝ_h, the sub-additive bound of S_h (supply.hpp)
  };
  std::vector<On> hosts;
  bool empty() const { return hosts.empty(); }
  Duration at(Duration w) const {
    Duration s = 0;
    for (const On& h : hosts) s += h.cores * platform_blackout(*h.curve, w);
    return s;
  }
  // P̂_i(w) = Σ_h n_{i,h}·Ŝ_h(w) >= P_i(w), sub-additive in w (the whole-chain form's).
  Duration bucket_at(Duration w) const {
    Duration s = 0;
    for (const On& h : hosts) s += h.cores * h.bucket.at(w);
    return s;
  }
  // The long-run rate Σ_h n_{i,h}·S_h(W_h)/W_h, W_h the curve's longest window (beyond it S_h
  // grows by S_h(W_h) per W_h: supply.hpp); the bucket holds S_h(W_h) and W_h.
  long double rate() const {
    long double r = 0;
    for (const On& h : hosts)
      r += static_cast<long double>(h.cores) * static_cast<long double>(h.bucket.max) /
           static_cast<long double>(h.bucket.window);
    return r;
  }
};

PlatformCharge platform_charge(const Model& m, const View& v, const Task& t, const HopCost& cost) {
  PlatformCharge pc;
  if (m.hosts.empty()) return pc;
  std::map<int, std::set<int>> cores;  // host -> cores
  auto all_of = [&](int h) {
    for (int c = 0; c < m.hosts[h].cores; ++c) cores[h].insert(c);
  };
  for (int c : t.work) {
    const int x = v.cbs[c].executor, h = v.host_of[x];
    for (const auto& th : m.executors[x].threads) {
      if (th.cores.empty()) all_of(h);
      cores[h].insert(th.cores.begin(), th.cores.end());
    }
  }
  if (t.chain >= 0)
    for (const auto& hop : m.chains[t.chain].hops) {
      if (cost(hop) <= 0) continue;
      for (const std::string* end : {&hop.from, &hop.to})
        all_of(v.host_of[v.cbs[m.callback_index(*end)].executor]);
    }
  for (const auto& [h, cs] : cores)
    if (!m.hosts[h].blackout.empty())
      pc.hosts.push_back({&m.hosts[h].blackout, static_cast<Duration>(cs.size()), platform_bucket(m.hosts[h].blackout)});
  return pc;
}

// The level-i busy period does not end within this many of the chain's periods: no bound.
constexpr Duration kMaxBusyPeriods = 10'000;

// A stage of a pipelined chain: its callback's WCET, its blocking, and the work of each
// higher-priority chain that may run on its CPU (with that work's jitter R_h − C_{h,s}).
struct Stage {
  Duration wcet = 0, block = 0;
  struct Hp {
    Duration work, jitter, T;
  };
  std::vector<Hp> hp;
};

// R_i = max_{q = 0..Q} (w_i(q) − q T_i), Q the first q with w_i(q) <= (q+1) T_i (header);
// `window(q, start)` is w_i(q), searched from `start` (w_i(q−1), a lower bound of w_i(q)).
// Writes why into `why` when some w_i(q) has no fixed point within the limit.
Duration busy_period_bound(const std::function<SearchResult(Duration, Duration)>& window, Duration T, Duration start,
                           std::string* why) {
  Duration r = 0, w = start;
  for (Duration q = 0;; ++q) {
    const auto found = window(q, w);
    if (!found) {
      *why = found.failure == SearchFailure::ExceedsLimit
                 ? "the level-i busy period does not end within " + std::to_string(kMaxBusyPeriods) + " periods (overload)"
                 : std::string("no bound: ") + to_string(found.failure);
      return 0;
    }
    w = *found.value;
    r = std::max(r, w - q * T);
    if (w <= (q + 1) * T) return r;
  }
}

// The cros-rt analysis of one model (cros_rt_analyze): per task its work C_i (callbacks and
// hops), callbacks E_i, blocking B_i and bound R_i, iterated to a fixed point over all chains.
class CrosRtAnalysis {
 public:
  explicit CrosRtAnalysis(const Model& m)
      : m_(m), comm_(fitted_communication(m.communication)), cost_(model_hop_cost(m)), v_(build_view(m, cost_)),
        n_(v_.tasks.size()) {}

  AnalysisResult run();

 private:
  void work();
  int max_prio_on(std::size_t t, int x) const;
  int min_prio_on(std::size_t t, int x) const;
  void rank();
  void blocking();
  Duration interference(std::size_t i, Duration w) const;
  std::optional<Duration> whole_chain_form(std::size_t i, const PlatformCharge& platform, Duration limit) const;
  std::vector<Stage> stages_of(std::size_t i, Duration limit, long double& demand) const;
  bool chain_round(std::size_t i);

  const Model& m_;
  const Communication comm_;
  const HopCost cost_;  // the fit, never below the declared cost or a measurement
  const View v_;
  const std::size_t n_;
  std::vector<Duration> C_, B_, R_, E_;  // E: the callbacks' WCETs
  std::vector<std::set<int>> hosts_, execs_;
  std::vector<int> remote_hops_;
  std::vector<std::vector<std::size_t>> hp_, lp_;
  std::vector<Duration> B_sel_;
  std::vector<std::vector<Duration>> B_stage_;  // pipelined: per callback of t.work
  std::vector<std::string> failed_;
};

void CrosRtAnalysis::work() {
  C_.assign(n_, 0);
  B_.assign(n_, 0);
  R_.assign(n_, 0);
  E_.assign(n_, 0);
  hosts_.assign(n_, {});
  execs_.assign(n_, {});
  remote_hops_.assign(n_, 0);
  for (std::size_t i = 0; i < n_; ++i) {
    const Task& t = v_.tasks[i];
    for (int c : t.work) {
      C_[i] += v_.cbs[c].wcet;
      E_[i] += v_.cbs[c].wcet;
      execs_[i].insert(v_.cbs[c].executor);
      hosts_[i].insert(v_.host_of[v_.cbs[c].executor]);
    }
    if (t.chain >= 0) {
      const Chain& ch = m_.chains[t.chain];
      for (const auto& h : ch.hops) {
        C_[i] += cost_(h);
        if (h.comm == CommKind::Remote) remote_hops_[i]++;
      }
    }
  }
}

// The effective callback priorities (what the picas readyQueue orders by) of a task's callbacks
// on one executor.
int CrosRtAnalysis::max_prio_on(std::size_t t, int x) const {
  int p = kNoPriority;
  for (int c : v_.tasks[t].work)
    if (v_.cbs[c].executor == x) p = std::max(p, v_.cbs[c].prio);
  return p;
}

int CrosRtAnalysis::min_prio_on(std::size_t t, int x) const {
  int p = INT_MAX;
  for (int c : v_.tasks[t].work)
    if (v_.cbs[c].executor == x) p = std::min(p, v_.cbs[c].prio);
  return p;
}

// hp(i) and lp(i) (header: ranked by the priorities the executors really use).
void CrosRtAnalysis::rank() {
  hp_.assign(n_, {});
  lp_.assign(n_, {});
  for (std::size_t i = 0; i < n_; ++i) {
    for (std::size_t h = 0; h < n_; ++h) {
      if (h == i) continue;
      // Chains interfere only where their executors can run on a common core of a host.
      bool common_cpu = false;
      for (int xh : execs_[h])
        for (int xi : execs_[i]) common_cpu |= share_cpu(m_, v_, xh, xi);
      if (!common_cpu) continue;
      bool higher = !v_.tasks[i].has_deadline || !v_.tasks[h].has_deadline;
      for (int xh : execs_[h])
        for (int xi : execs_[i]) {
          if (higher) break;
          if (xh == xi) higher = max_prio_on(h, xi) >= min_prio_on(i, xi);
          else if (share_cpu(m_, v_, xh, xi) && exec_priority(m_.executors[xh]) >= exec_priority(m_.executors[xi]))
            higher = true;
        }
      (higher ? hp_[i] : lp_[i]).push_back(h);
    }
  }
}

// Blocking: non-preemptive lower-priority callbacks in the chain's own executors — one when the
// chain enters an executor and one after every hop with a delay inside it (at a zero-delay
// boundary the executor's only thread has just finished the chain's previous callback and takes
// the next one, which outranks the lower chain) — and the remote-message term of the slides
// (B_sel: a pipelined chain's hops carry it).
void CrosRtAnalysis::blocking() {
  const Duration e_sel = comm_.remote.fixed;
  B_sel_.assign(n_, 0);
  B_stage_.assign(n_, {});
  for (std::size_t i = 0; i < n_; ++i) {
    auto worst_lp = [&](int executor) {
      Duration worst = 0;
      for (std::size_t l : lp_[i])
        for (int d : v_.tasks[l].work)
          if (v_.cbs[d].executor == executor) worst = std::max(worst, v_.cbs[d].wcet);
      return worst;
    };
    const Task& t = v_.tasks[i];
    for (int c : t.work) B_stage_[i].push_back(worst_lp(v_.cbs[c].executor));
    if (t.linear && !t.segments.empty()) {
      for (const auto& s : t.segments) B_[i] += (1 + s.delayed_hops) * worst_lp(s.executor);
    } else {
      for (int c : t.path) B_[i] += worst_lp(v_.cbs[c].executor);
    }
    bool lp_remote = false;
    for (std::size_t l : lp_[i]) lp_remote |= remote_hops_[l] > 0;
    if (lp_remote) B_sel_[i] = static_cast<Duration>(remote_hops_[i]) * static_cast<Duration>(lp_[i].size()) * e_sel;
    B_[i] += B_sel_[i];
  }
}

// I_i(w) = Σ_{h ∈ hp(i)} ⌈(w + J_h)/T_h⌉·C_h (slides, "Interference and blocking", with release
// jitter J_h = R_h − C_h).
Duration CrosRtAnalysis::interference(std::size_t i, Duration w) const {
  Duration sum = 0;
  for (std::size_t h : hp_[i]) sum += ceil_div(w + std::max<Duration>(0, R_[h] - C_[h]), v_.tasks[h].T) * C_[h];
  return sum;
}

// Pipelined, the stage decomposition also gives the whole-chain form with the hops and blocking
// once: w_i(q) = J_i + Σ hops + B_i + (q+1) E_i + I_i(w) + P̂_i(w) (all interference in one
// window; tighter where an hp chain's hop costs would be charged on several stages).
std::optional<Duration> CrosRtAnalysis::whole_chain_form(std::size_t i, const PlatformCharge& platform,
                                                         Duration limit) const {
  const Task& t = v_.tasks[i];
  long double u = static_cast<long double>(E_[i]) / static_cast<long double>(t.T) + platform.rate();
  for (std::size_t h : hp_[i]) u += static_cast<long double>(C_[h]) / static_cast<long double>(v_.tasks[h].T);
  if (u > 1.0L) return std::nullopt;
  std::string why;
  const Duration once = t.src_jitter + C_[i] - E_[i] + B_[i];
  const Duration r = busy_period_bound(
      [&](Duration q, Duration start) {
        return least_fixed_point(start, limit, [&](Duration w) {
          return once + (q + 1) * E_[i] + interference(i, w) + platform.bucket_at(w);
        });
      },
      t.T, once + E_[i], &why);
  if (!why.empty()) return std::nullopt;
  return r;
}

// The stages of a pipelined chain (one per callback of its work) and the demand per period
// they add up to (>= T_i: the busy period never ends).
std::vector<Stage> CrosRtAnalysis::stages_of(std::size_t i, Duration limit, long double& demand) const {
  const Task& t = v_.tasks[i];
  std::vector<Stage> stages;
  for (std::size_t k = 0; k < t.work.size(); ++k) {
    const int x = v_.cbs[t.work[k]].executor;
    Stage st{v_.cbs[t.work[k]].wcet, B_stage_[i][k], {}};
    long double u = 0;
    for (std::size_t h : hp_[i]) {
      Duration on = 0;
      for (int d : v_.tasks[h].work)
        if (share_cpu(m_, v_, v_.cbs[d].executor, x)) on += v_.cbs[d].wcet;
      if (on == 0) continue;
      on += C_[h] - E_[h];  // h's hop costs, charged as interference (slides)
      st.hp.push_back({on, std::max<Duration>(0, R_[h] - on), v_.tasks[h].T});
      u += static_cast<long double>(on) / static_cast<long double>(v_.tasks[h].T);
    }
    demand += u >= 1.0L ? static_cast<long double>(limit) : static_cast<long double>(st.wcet) / (1.0L - u);
    stages.push_back(std::move(st));
  }
  return stages;
}

// One round for chain i: w_i(q), the end of instance q after the release of instance 0 of a
// level-i busy period (header) — per instance C_i + B_i and the later instances, or, pipelined,
// the hops once and each stage's own fixed point — and the whole-chain form, the smaller kept.
// True when its bound changed or it lost it.
bool CrosRtAnalysis::chain_round(std::size_t i) {
  for (std::size_t h : hp_[i])
    if (!failed_[h].empty()) {
      failed_[i] = "interfered with by a chain that has no bound";
      return true;
    }
  const Task& t = v_.tasks[i];
  const Duration limit = kMaxBusyPeriods * t.T;
  // The platform (header): a chain on a host with a blackout curve is analysed with the window
  // of the non-pipelined form, which needs no sub-additivity of S_h, and, pipelined, with the
  // whole-chain form charging the sub-additive Ŝ_h — not with the stage form.
  const PlatformCharge platform = platform_charge(m_, v_, t, cost_);
  const bool pipe = pipelined(m_, v_, t);
  const bool stage_form = pipe && platform.empty();
  const std::optional<Duration> whole = pipe ? whole_chain_form(i, platform, limit) : std::nullopt;
  std::function<SearchResult(Duration, Duration)> window;
  long double demand = 0;  // per period of T_i; >= T_i: the busy period never ends
  std::vector<Stage> stages;
  std::vector<Duration> x_prev;
  if (!stage_form) {
    window = [&](Duration q, Duration start) {
      return least_fixed_point(start, limit, [&](Duration w) {
        return t.src_jitter + std::max(q + 1, ceil_div(w, t.T)) * (C_[i] + B_[i]) + interference(i, w) +
               platform.at(w);
      });
    };
    long double u = static_cast<long double>(C_[i] + B_[i]) / static_cast<long double>(t.T) + platform.rate();
    for (std::size_t h : hp_[i]) u += static_cast<long double>(C_[h]) / static_cast<long double>(v_.tasks[h].T);
    demand = u * static_cast<long double>(t.T);
  } else {
    stages = stages_of(i, limit, demand);
    x_prev.assign(stages.size(), 0);
    window = [&](Duration q, Duration) {
      Duration w = t.src_jitter + (C_[i] - E_[i]) + B_sel_[i];  // J_i + Σ hops + message selection
      for (std::size_t k = 0; k < stages.size(); ++k) {
        const Stage& st = stages[k];
        const auto x = least_fixed_point(std::max(x_prev[k], st.block + (q + 1) * st.wcet), limit, [&](Duration y) {
          Duration next = st.block + (q + 1) * st.wcet;
          for (const auto& h : st.hp) next += ceil_div(y + h.jitter, h.T) * h.work;
          return next;
        });
        if (!x) return x;
        x_prev[k] = *x.value;
        w += *x.value;
      }
      return SearchResult{w, SearchFailure::ExceedsLimit};
    };
  }
  Duration r = 0;
  if (demand > static_cast<long double>(t.T)) {
    failed_[i] = "R_i exceeds T_i and the level-i busy period never ends (the chain and the chains that "
                 "interfere with it demand more than the CPU)";
  } else {
    r = busy_period_bound(window, t.T, t.src_jitter + C_[i] + B_[i], &failed_[i]);
  }
  if (whole && (!failed_[i].empty() || *whole < r)) {  // both forms are bounds: the smaller
    r = *whole;
    failed_[i].clear();
  }
  if (!failed_[i].empty()) return true;
  if (r > R_[i]) {
    R_[i] = r;
    return true;
  }
  return false;
}

AnalysisResult CrosRtAnalysis::run() {
  work();
  rank();
  blocking();
  failed_.assign(n_, "");
  for (std::size_t i = 0; i < n_; ++i) {
    R_[i] = C_[i] + B_[i] + v_.tasks[i].src_jitter;
    failed_[i] = v_.tasks[i].join_wait;
  }
  bool converged = false;
  for (int round = 0; round < kMaxHolisticRounds && !converged; ++round) {
    bool changed = false;
    for (std::size_t i = 0; i < n_; ++i)
      if (failed_[i].empty()) changed |= chain_round(i);
    converged = !changed;
  }
  if (!converged)
    for (std::size_t i = 0; i < n_; ++i)
      if (failed_[i].empty()) failed_[i] = "the fixed point over all chains did not converge";
  return collect_result("cros-rt", v_.tasks, R_, failed_);
}

}  // namespace

AnalysisResult cros_rt_analyze(const Model& m) { return CrosRtAnalysis(m).run(); }

}  // namespace chainrt::detail
