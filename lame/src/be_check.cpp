// LaME best-effort starvation-freedom check (Sec. 4.2 "Ensuring Starvation Freedom for BE
// Chains", Alg. 3 line 33): does every BE chain finish within the controller period?
//
// Why not Theorems 2 and 3 as printed: they are Sobhani et al.'s (RTAS 2023) analyses of the
// STANDARD multi-threaded executor, which Teper et al. (EMSOFT 2024) refuted with starvation
// counterexamples; the amended version LaME cites is not in our specification, and Theorem 3's
// workload W* (Lemma 6 of Sobhani et al.) is not reprinted. More importantly a LaME BE thread
// does not behave like either analysis assumes: it refreshes the shared wait set only when the
// set is EMPTY (LaME Sec. 4.1, sched/admission), so a released BE callback can wait, with a BE
// thread idle, while the set holds work the BE thread may not run (RT work, another class's).
// Theorem 2 has no term for that wait: for a BE chain alone on a dedicated BE core its bound is
// the chain's isolated execution time, which the simulator exceeds as soon as the RT thread
// holds an item in the set (test LameBeCheck.TheoremsTwoAndThreeMissTheAdmissionWait; Theorem 3
// reduces to Theorem 2 there under a workload W* of Lemma 5's shape). So we use our own busy
// window, with the same shape as Theorem 2 (a demand that must stay below sbf_Π) and every term
// derived here; it covers arbitrary-deadline chains (bounds above the period: Theorem 3's case)
// through the chain's own later instances. It is checked against the simulator by tests/cpp/lame
// (property test with the soundness harness's adversarial search).
//
// Derivation. BE chain J owns callbacks j = 1..n_J (its own part, Algorithm 1), all on BE thread
// class B with m threads of identical supply (sbf_B = m·sbf, sbf⁻¹ one thread's pseudo-inverse).
// Its own part is released when its first own callback gets its input: at a timer's release, or
// when the message from the prefix's owner U arrives. With r the chain's release, that happens
// within A_J of r: A_J = the timer's jitter, or R_U + d_in (the prefix's bound plus the delay of
// the incoming hop). So in a window of length x at most q(x) = ⌈(x + A_J)/T_J⌉ own parts start.
//
// J-busy period. Let [s, s + L) be a maximal interval in which J always has an unfinished
// instance (released own part not yet completed nor dropped); at s no older instance is left, so
// the only J work in it is that of the q(L) instances released in it. Every instance released
// in the busy period completes in it, so R_J <= A_J + L. At an instant t of [s, s + x) take the
// OLDEST unfinished instance: its current callback c holds the head message of c's queue (every
// older instance is done and c's messages come in FIFO order from one publisher). Then exactly
// one of:
//  (A) c runs it. A job from start to end lasts at most sbf⁻¹(e_c) on its thread, so these
//      instants number at most q(x)·Ew_J, Ew_J = Σ_j sbf⁻¹(e_j);
//  (F) its message is in flight on a hop of J's own part: at most q(x)·D_J, D_J the sum of the
//      own hops' delays (model communication costs; the largest measured latency of the kind);
//  (W) it waits to be admitted to the wait set: at most δ_B per job (below), q(x)·n_J·δ_B;
//  (C) it is in the set but its mutually exclusive group is taken by a group-mate g running on a
//      B thread (groups spanning classes are split per class, allocate.cpp): at most
//      G(x) = Σ_g n_g(x)·sbf⁻¹(e_g) instants (J's own other callbacks included, n_g = q(x));
//  (D) it is eligible in the set and every B thread is busy or without budget (an idle B thread
//      takes the first eligible callback at the dispatch that admitted it).
// Supply delivered to B in the window is at least sbf_B(x). In (D) every unit goes to B work;
// in (A) and (C) one thread runs B work and the other m − 1 deliver at most 1 per unit of time;
// in (W) and (F) at most m per unit. All B work executed in the window is at most
// q(x)·E_J (J's own) + W(x), W(x) = Σ_{c ∈ B \ own(J)} n_c(x)·e_c. If J were still unfinished
// at s + x:
//   sbf_B(x) <= W(x) + q(x)·(E_J + (m − 1)·Ew_J + m·(n_J·δ_B + D_J)) + (m − 1)·G(x)
// so L < the least x where the right-hand side is below sbf_B(x) (every shorter prefix of the
// busy period satisfies the inequality), and R_J = A_J + x. The search is the analyses' one
// fixed-point search (analysis/src/fixed_point.hpp): x = sbf_B⁻¹(RHS(x) + 1).
// Overload refused: when the right-hand side grows at least as fast as the supply (its rate
// Σ e_c/T_c + ... >= m·Q/P) there is no such x; the check says so instead of searching.
//
// δ_B. Between two refreshes of the wait set nothing enters it and it only shrinks; a BE thread
// refreshes when it selects with the set empty, an RT thread at every selection — and an idle
// thread selects at every dispatch. So when the executor has RT threads, a released B job is
// admitted at its release's dispatch if one of them is idle, else when the first busy one ends
// its job: within max_{c ∈ RT} sbf_k⁻¹(e_c). In any case it is admitted once the set has drained:
// while a B job waits with a B thread idle, the set holds only items no idle B thread may run
// (items of other classes, B items whose group is taken); every item leaves once, after at most
// its class's running job and its own execution: at most
//   drain_B = 2·Σ_{c ∉ B} sbf_k⁻¹(e_c) + 2·Σ_{c ∈ B, grouped, m > 1} sbf_B⁻¹(e_c)
// (each callback holds at most one queued and one running instance). The items of an RT class
// k never stay in the set when no more of its jobs can be pending than it has threads and no two
// that can be pending together share a mutually exclusive group — at most one job per chain
// when every chain's bound is within its period, at most m_k chains, no group shared by two
// chains: an idle thread of k takes a released item in the dispatch that admits it; such
// classes are left out of drain_B. (A group-blocked B item holds an idle B thread only while
// another B thread runs its group-mate: for m = 1 B's own items are left out too.) The same holds for another BE
// class whose chains' bounds are within their periods, no more of them than its threads, every
// callback on one of them and no group shared by two (decided with the current iterate of the holistic
// iteration below: a fixed point is self-consistent, and the first-violation argument covers
// it). The wait is at most the smaller of the two. (A refresh in the middle of a dispatch pass lets the idle threads tried
// before it look again — the runtime wakes them — so admitted work finds an idle B thread at
// once.)
//
// n_c(x): jobs of another callback c of B executing in a window of length x. A timer with jitter
// ρ: ⌈(x + ρ)/T⌉ releases in it plus one pending and one running at its start (rcl keeps one
// pending release). A callback on its owner chain's own part: one job per instance, and an
// instance's work lies in [r, r + R_owner], so ⌈(x + R_owner)/T⌉ (needs a single publisher on
// its topic; otherwise the class has no bound). The bounds of BE chains depend on each other
// (through R_owner): holistic iteration from below, sound by the first-violation argument (up to
// the first instant any chain exceeds its bound, every count above holds).
//
// Refused with a reason (no bound): a class without budget, callbacks whose release rate is
// unknown, a host with a platform blackout curve (the reservations' supply under blackouts is
// not analysed) and a reservation of another executor on a core of the plan (the cores' EDF of
// reservations then no longer gives every reservation its budget).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "chainrt/analysis/supply.hpp"
#include "chainrt/lame/lame.hpp"
#include "fixed_point.hpp"

namespace chainrt::lame {

namespace {

constexpr Duration kNone = -1;
constexpr __int128 kCap = static_cast<__int128>(1) << 62;  // a hostile model's sums: no bound, no overflow

Duration ceil_div(Duration a, Duration b) { return a <= 0 ? 0 : (a + b - 1) / b; }

Duration capped(__int128 v) { return v > kCap ? static_cast<Duration>(kCap) : static_cast<Duration>(v); }

SupplySet supply_of(const ThreadClassPlan& c) {
  SupplySet s;
  for (std::size_t i = 0; i < c.cores.size(); ++i) {
    Supply k;
    if (c.budget > 0 && c.budget < c.period) k.reservation = Reservation{c.budget, c.period};
    else if (c.budget <= 0) k.reservation = Reservation{0, c.period > 0 ? c.period : 1};
    s.threads.push_back(k);
  }
  return s;
}

// sbf⁻¹ of one thread of class c: the least Δ with sbf(Δ) >= x (all threads of a class are
// identical); kNone when the class has no supply.
Duration stretch(const ThreadClassPlan& c, Duration x) {
  Supply k;
  if (c.budget <= 0) return x <= 0 ? 0 : kNone;
  if (c.budget < c.period) k.reservation = Reservation{c.budget, c.period};
  return k.sbf_inverse(x);
}

// Long-run supply rate of class c (units of supply per unit of time, all threads).
long double supply_rate(const ThreadClassPlan& c) {
  const long double m = static_cast<long double>(c.cores.size());
  if (c.budget <= 0 || c.period <= 0) return 0;
  if (c.budget >= c.period) return m;
  return m * static_cast<long double>(c.budget) / static_cast<long double>(c.period);
}

// Delay of a hop's message as the simulator draws it: the model's cost of the hop's kind for
// its size, or, with measurements of that kind, the largest measured latency if larger.
Duration hop_delay(const Model& m, const Hop& h) {
  Bytes size = h.message_size;
  if (size <= 0)
    if (const Topic* t = m.topic(h.topic)) size = t->size;
  Duration d = m.communication.cost_of(h.comm).cost(size);
  for (const auto& x : m.communication.measurements)
    if (x.kind == h.comm) d = std::max(d, x.latency);
  return d;
}

// The state of one BE check: the plan's inputs, what is derived from them once (owners,
// publishers, class members, groups, δ_B's lingering RT classes, class problems, stretched
// WCETs) and the holistic iteration's bounds R, reasons why and failures.
struct BeCheck {
  const Model& plan;
  const Linearised& lin;
  const std::vector<int>& be_chains;
  const std::vector<ThreadClassPlan>& classes;
  const std::vector<int>& cb_class;
  const std::vector<Duration>& rt_bound;
  const Duration limit;
  const std::size_t ncb = plan.callbacks.size();
  const std::size_t nc = classes.size();
  const std::size_t nl = lin.chains.size();
  std::vector<int> owner = std::vector<int>(ncb, -1);
  std::map<std::string, int> publishers{};
  std::vector<std::vector<int>> members = std::vector<std::vector<int>>(nc);
  std::vector<bool> grouped = std::vector<bool>(ncb, false), grouped_across = std::vector<bool>(ncb, false);
  std::vector<bool> lingers = std::vector<bool>(nc, false);
  std::vector<std::string> class_problem = std::vector<std::string>(nc);
  std::vector<Duration> stretched = std::vector<Duration>(ncb, 0);  // sbf⁻¹ of each callback on its class
  std::vector<Duration> R = std::vector<Duration>(nl, kNone);      // end-to-end bounds, BE and RT
  std::vector<std::string> why = std::vector<std::string>(nl);
  std::vector<bool> failed = std::vector<bool>(nl, false);

  // Owner linear chain of every callback (its own part), and publishers per topic.
  void find_owners() {
    for (std::size_t i = 0; i < lin.chains.size(); ++i)
      for (const auto& n : lin.chains[i].own()) owner[plan.callback_index(n)] = static_cast<int>(i);
    for (const auto& cb : plan.callbacks)
      for (const auto& t : cb.publishes) publishers[t]++;
  }

  // What else may take the plan's cores (per host of its executor): empty when nothing.
  std::string platform_problem() const {
    std::set<int> plan_cores;
    for (const auto& c : classes) plan_cores.insert(c.cores.begin(), c.cores.end());
    std::string host, lame_executor;
    for (std::size_t c = 0; c < ncb; ++c)
      if (cb_class[c] >= 0) {
        lame_executor = plan.node(plan.callbacks[c].node).executor;
        host = plan.executor(lame_executor).host;
        break;
      }
    if (const Host* h = host.empty() ? nullptr : plan.host(host); h && !h->blackout.empty())
      return "host '" + host + "' has a platform blackout curve; the supply of a reservation under "
             "blackouts is not analysed";
    for (const auto& e : plan.executors) {
      if (e.name == lame_executor || e.host != host) continue;
      for (const auto& t : e.threads) {
        if (!t.reservation) continue;
        const bool shares = t.cores.empty() || std::any_of(t.cores.begin(), t.cores.end(), [&](int k) {
          return plan_cores.count(k) > 0;
        });
        if (shares)
          return "thread '" + t.name + "' of executor '" + e.name +
                 "' holds a reservation on a core of the plan; the classes' reservations are then "
                 "not guaranteed their budgets";
      }
    }
    return "";
  }

  // Per class: its callbacks; per callback: whether it shares a mutually exclusive group with
  // another callback of its class (`grouped`), with one of another chain or of none
  // (`grouped_across`: two of them can be pending at once even when every chain has one
  // instance at a time).
  void find_groups() {
    for (std::size_t c = 0; c < ncb; ++c)
      if (cb_class[c] >= 0) members[cb_class[c]].push_back(static_cast<int>(c));
    for (std::size_t b = 0; b < nc; ++b)
      for (int c : members[b])
        for (int d : members[b]) {
          if (d == c || plan.callbacks[d].group != plan.callbacks[c].group ||
              plan.group(plan.callbacks[c].group).type != GroupType::MutuallyExclusive)
            continue;
          grouped[c] = true;
          if (owner[c] < 0 || owner[d] < 0 || owner[c] != owner[d]) grouped_across[c] = true;
        }
  }

  // An RT class whose items can stay in the wait set (header, δ_B): more of its chains than
  // threads, a mutually exclusive group of two of its callbacks, or a chain whose next instance
  // may come before it completes.
  void find_lingering_rt() {
    for (std::size_t k = 0; k < nc; ++k) {
      if (classes[k].kind != CriticalityClass::RealTime) continue;
      lingers[k] = classes[k].chains.size() > classes[k].cores.size();
      for (int i : classes[k].chains)
        if (i >= static_cast<int>(rt_bound.size()) || rt_bound[i] < 0 || rt_bound[i] > lin.chains[i].period)
          lingers[k] = true;
      for (int c : members[k]) lingers[k] = lingers[k] || grouped_across[c];
    }
  }

  // Why a BE class has no bound at all (class_problem), and each callback's stretched WCET.
  void find_class_problems(const std::string& platform) {
    for (std::size_t b = 0; b < nc; ++b) {
      if (classes[b].kind != CriticalityClass::BestEffort) continue;
      if (!platform.empty()) class_problem[b] = platform;
      if (classes[b].budget <= 0) class_problem[b] = "thread class '" + classes[b].name + "' has no budget";
      for (int c : members[b]) {
        const Callback& cb = plan.callbacks[c];
        if (!cb.is_timer() && (owner[c] < 0 || publishers[cb.topic] > 1))
          class_problem[b] = "callback '" + cb.name + "' may be released more than once per chain instance";
      }
    }
    for (std::size_t c = 0; c < ncb; ++c) {
      const int k = cb_class[c];
      if (k < 0) continue;
      stretched[c] = stretch(classes[k], plan.callbacks[c].wcet);
      if (stretched[c] != kNone) continue;
      for (std::size_t b = 0; b < nc; ++b)  // its items could hold the set for ever
        if (classes[b].kind == CriticalityClass::BestEffort && class_problem[b].empty())
          class_problem[b] = "work of thread class '" + classes[k].name + "' (no budget) can hold the wait set";
    }
  }

  // RT bounds as given; BE chains start from below (0) or fail with their reason.
  void start_bounds() {
    for (std::size_t i = 0; i < nl; ++i)
      if (i < rt_bound.size() && rt_bound[i] >= 0) R[i] = rt_bound[i];
    for (int j : be_chains) {
      const LinearChain& l = lin.chains[j];
      const int b = class_of_chain(j);
      if (!l.composable) why[j] = "shares callbacks with another chain other than a common prefix (not composable)";
      else if (b >= 0 && !class_problem[b].empty()) why[j] = class_problem[b];
      else if (b >= 0 && l.period <= 0) why[j] = "has no period (minimum inter-arrival time)";
      if (!why[j].empty()) failed[j] = true;
      else R[j] = 0;  // the holistic iteration starts from below
    }
  }

  int class_of_chain(int j) const {
    for (const auto& n : lin.chains[j].own()) return cb_class[plan.callback_index(n)];
    return -1;
  }

  // Jobs of callback c (not of the chain analysed) executing in a window of length x (kNone:
  // unknown): the timer's count, the owner chain's count, the smaller when both are known.
  Duration n_of(int c, Duration x) const {
    const Callback& cb = plan.callbacks[c];
    Duration best = kNone;
    if (cb.is_timer() && cb.period > 0) best = ceil_div(x + cb.jitter, cb.period) + 2;
    const int o = owner[c];
    if (o >= 0 && R[o] != kNone && lin.chains[o].period > 0) {
      const Duration n = ceil_div(x + R[o], lin.chains[o].period);
      best = best == kNone ? n : std::min(best, n);
    }
    return best;
  }

  // The period of c's releases for the overload test (kNone: unknown).
  Duration period_of(int c) const {
    const Callback& cb = plan.callbacks[c];
    if (owner[c] >= 0 && lin.chains[owner[c]].period > 0) return lin.chains[owner[c]].period;
    return cb.is_timer() && cb.period > 0 ? cb.period : kNone;
  }

  void fail(int j, std::string reason) {
    failed[j] = true;
    why[j] = std::move(reason);
    R[j] = kNone;
  }

  // Whether BE class k's items can stay in the wait set (header, δ_B) given the current bounds:
  // its chains' bounds within their periods, no more chains than threads, no callback on no
  // chain, no two of its callbacks in one mutually exclusive group.
  bool be_lingers(std::size_t k) const {
    if (classes[k].chains.size() > classes[k].cores.size()) return true;
    for (int i : classes[k].chains)
      if (R[i] == kNone || R[i] > lin.chains[i].period) return true;
    for (int c : members[k])
      if (owner[c] < 0 || grouped_across[c]) return true;
    return false;
  }

  // δ_B (header): the admission wait, until an RT thread selects or the set is drained.
  Duration delta_of(std::size_t b) const {
    __int128 drain = 0;
    Duration rt_max = kNone;
    std::vector<bool> counts(nc, false);
    for (std::size_t k = 0; k < nc; ++k)
      counts[k] = k != b && (classes[k].kind == CriticalityClass::RealTime ? lingers[k] : be_lingers(k));
    for (std::size_t c = 0; c < ncb; ++c) {
      const int k = cb_class[c];
      if (k < 0) continue;
      if (classes[k].kind == CriticalityClass::RealTime) rt_max = std::max(rt_max, stretched[c]);
      // (B's own items block an idle B thread only while another B thread runs their group-mate)
      if (k == static_cast<int>(b) ? grouped[c] && classes[b].cores.size() > 1 : counts[k])
        drain += 2 * static_cast<__int128>(stretched[c]);
    }
    return capped(rt_max != kNone ? std::min<__int128>(rt_max, drain) : drain);
  }

  // Chain j's own part on its class B: its callbacks, the other callbacks of B, and the
  // group-mates of its callbacks in B (its own others included), with the work per own instance
  // E_J + (m − 1)·Ew_J + m·(n_J·δ_B + D_J).
  struct OwnPart {
    std::set<int> mine;
    std::vector<int> others, mates;
    __int128 per_instance = 0;
  };

  OwnPart own_part(int j, int b) const {
    const LinearChain& l = lin.chains[j];
    const ThreadClassPlan& B = classes[b];
    const __int128 m = static_cast<__int128>(B.cores.size());
    OwnPart p;
    for (const auto& n : l.own()) p.mine.insert(static_cast<int>(plan.callback_index(n)));
    __int128 E = 0, Ew = 0, D = 0;
    for (int c : p.mine) {
      E += plan.callbacks[c].wcet;
      Ew += stretch(B, plan.callbacks[c].wcet);
    }
    for (std::size_t h = l.owned_from; h < l.hops.size(); ++h) D += hop_delay(plan, l.hops[h]);
    std::set<std::string> groups;
    for (int c : p.mine)
      if (plan.group(plan.callbacks[c].group).type == GroupType::MutuallyExclusive) groups.insert(plan.callbacks[c].group);
    for (int c : members[b]) {
      if (!p.mine.count(c)) p.others.push_back(c);
      if (groups.count(plan.callbacks[c].group) && (!p.mine.count(c) || grouped[c])) p.mates.push_back(c);
    }
    p.per_instance = E + (m - 1) * Ew + m * (static_cast<__int128>(p.mine.size()) * delta_of(b) + D);
    return p;
  }

  // Overload: the demand's long-run rate against the supply's. Empty when B is not overloaded,
  // otherwise the reason there is no bound.
  std::string overload(int j, const ThreadClassPlan& B, const OwnPart& p) const {
    const long double m = static_cast<long double>(B.cores.size());
    const Duration T = lin.chains[j].period;
    long double rate = static_cast<long double>(p.per_instance) / static_cast<long double>(T);
    for (int c : p.others) {
      const Duration q = period_of(c);
      if (q == kNone) return "the release rate of '" + plan.callbacks[c].name + "' on '" + B.name + "' is unknown";
      rate += static_cast<long double>(plan.callbacks[c].wcet) / static_cast<long double>(q);
    }
    for (int g : p.mates) {
      const Duration q = p.mine.count(g) ? T : period_of(g);
      if (q == kNone) continue;  // (also in `others`: refused above)
      rate += (m - 1) * static_cast<long double>(stretch(B, plan.callbacks[g].wcet)) / static_cast<long double>(q);
    }
    const long double supply = supply_rate(B);
    if (rate < supply) return "";
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.1f %% of its supply", static_cast<double>(100.0L * rate / supply));
    return "thread class '" + B.name + "' is overloaded: its work (with the waits this chain can see) needs " + buf +
           "; no bound";
  }

  // The demand on B of a window of length x holding chain j's q-th own instance (kNone: unknown).
  Duration demand(const ThreadClassPlan& B, const OwnPart& p, Duration x, Duration release_jitter, Duration T) const {
    const __int128 m = static_cast<__int128>(B.cores.size());
    const __int128 q = ceil_div(x + release_jitter, T);
    __int128 d = q * p.per_instance;
    for (int c : p.others) {
      const Duration n = n_of(c, x);
      if (n == kNone) return kNone;
      d += static_cast<__int128>(n) * plan.callbacks[c].wcet;
      if (d > kCap) return static_cast<Duration>(kCap);
    }
    for (int g : p.mates) {
      const Duration n = p.mine.count(g) ? static_cast<Duration>(q) : n_of(g, x);
      if (n == kNone) return kNone;
      d += (m - 1) * n * stretch(B, plan.callbacks[g].wcet);
      if (d > kCap) return static_cast<Duration>(kCap);
    }
    return capped(d);
  }

  // The bound of chain j's own part given the current bounds of the others (the busy window
  // above); kNone with the reason in why[j].
  Duration own_bound(int j, Duration release_jitter) {
    const int b = class_of_chain(j);
    const ThreadClassPlan& B = classes[b];
    const SupplySet sup = supply_of(B);
    const Duration T = lin.chains[j].period;
    const OwnPart p = own_part(j, b);
    if (std::string o = overload(j, B, p); !o.empty()) {
      why[j] = std::move(o);
      return kNone;
    }
    const Duration room = limit - release_jitter;
    if (room < 1) {
      why[j] = "its shared prefix alone takes the controller period";
      return kNone;
    }
    bool unknown = false;
    const auto found = detail::least_fixed_point(1, room, [&](Duration x) -> Duration {
      const Duration d = demand(B, p, x, release_jitter, T);
      if (d == kNone) {
        unknown = true;
        return room + 1;
      }
      const auto at = sup.first_at_least(d + 1, 0, room + 1);
      return at ? *at : room + 1;
    });
    if (unknown) {
      why[j] = "work on '" + B.name + "' has no bound (a chain it belongs to has none)";
      return kNone;
    }
    if (!found) {
      why[j] = "no bound within the controller period on '" + B.name + "' (" + detail::to_string(found.failure) +
               ": its supply is too small for its demand)";
      return kNone;
    }
    return *found.value;
  }

  // One round of the holistic iteration over chain j; whether its bound changed.
  bool raise(int j) {
    const LinearChain& l = lin.chains[j];
    Duration jitter = 0;  // A_J: when the own part starts, after the chain's release
    if (l.upstream >= 0) {
      if (R[l.upstream] == kNone) {
        fail(j, "its shared prefix (owned by '" + lin.chains[l.upstream].name + "') has no bound");
        return true;
      }
      jitter = R[l.upstream] +
               (l.owned_from > 0 && l.owned_from - 1 < l.hops.size() ? hop_delay(plan, l.hops[l.owned_from - 1]) : 0);
    } else if (!l.path.empty()) {
      jitter = plan.callback(l.path.front()).jitter;
    }
    Duration own = 0;
    if (class_of_chain(j) >= 0) {
      own = own_bound(j, jitter);
      if (own == kNone) {
        fail(j, why[j]);
        return true;
      }
    } else {
      jitter = l.upstream >= 0 ? R[l.upstream] : 0;  // owns nothing: it ends in its prefix
    }
    const Duration total = jitter + own;
    if (total <= R[j]) return false;
    R[j] = total;
    return true;
  }

  // The holistic iteration from below until no bound changes (or the rounds run out).
  void iterate() {
    for (int round = 0; round < detail::kMaxHolisticRounds; ++round) {
      bool changed = false;
      for (int j : be_chains)
        if (!failed[j]) changed = raise(j) || changed;
      if (!changed) return;
    }
    for (int j : be_chains)
      if (!failed[j]) fail(j, "the bounds of the best-effort chains did not converge");
  }

  std::vector<ChainVerdict> verdicts() const {
    std::vector<ChainVerdict> out;
    for (int j : be_chains) {
      const LinearChain& l = lin.chains[j];
      ChainVerdict v;
      v.chain = l.name;
      v.cls = CriticalityClass::BestEffort;
      const int b = class_of_chain(j);
      v.thread_class = b >= 0 ? classes[b].name : (l.upstream >= 0 ? "(shared prefix only)" : "");
      v.deadline = l.deadline;
      if (!failed[j] && R[j] != kNone) {
        v.bounded = true;
        v.bound = R[j];
        v.meets_deadline = R[j] <= l.deadline;
        v.starvation_free = R[j] <= limit;
        v.reason = l.upstream >= 0 ? "prefix bound of '" + lin.chains[l.upstream].name + "' + own part" : "";
      } else {
        v.reason = why[j].empty() ? "no bound" : why[j];
      }
      out.push_back(v);
    }
    return out;
  }
};

}  // namespace

std::vector<ChainVerdict> be_check(const Model& plan, const Linearised& lin, const std::vector<int>& be_chains,
                                   const std::vector<ThreadClassPlan>& classes, const std::vector<int>& cb_class,
                                   const std::vector<Duration>& rt_bound, Duration limit) {
  BeCheck s{plan, lin, be_chains, classes, cb_class, rt_bound, limit};
  s.find_owners();
  s.find_groups();
  s.find_lingering_rt();
  s.find_class_problems(s.platform_problem());
  s.start_bounds();
  s.iterate();
  return s.verdicts();
}

}  // namespace chainrt::lame
