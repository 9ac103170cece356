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
// So we use our own busy-window argument, with the same shape as Theorem 2 (a demand that
// must stay below sbf_Π) and every term derived here; it is checked against the simulator by
// tests/cpp/lame (property test on random systems).
//
// Derivation. BE chain J (its own callbacks j = 1..n_J, all on BE thread class B with m
// threads, supply sbf_B = Σ_k sbf_k) is released at a' (its first own callback becomes ready;
// for a suffix chain a' <= release + R(upstream)). Take any instant t of [a', a' + x) at which
// J is not finished. Then one of:
//  (a) J's callback runs, possibly throttled: at most Ew_J = Σ_j sbf⁻¹_B(e_j) such instants;
//  (b) J's callback is released but not admitted to the wait set: a B thread that is idle does
//      not refresh only while the set holds work no B thread may run. Between two refreshes the
//      set only shrinks; each such item leaves when a thread of its class starts it, and a
//      thread that starts one finishes it within sbf⁻¹ of its own supply; a refresh happens at
//      the latest when an RT thread selects or the set is empty. So per callback of J at most
//      δ_B = Σ_{c not runnable by B} sbf⁻¹_{class(c)}(e_c) such instants: n_J·δ_B in total;
//  (c) J's callback is admitted but its mutually exclusive group is held by a group-mate g:
//      at most G_J(x) = Σ_g n_g(x)·sbf⁻¹_B(e_g) such instants;
//  (d) otherwise every B thread is busy with other work of B or has no supply (an idle B
//      thread with supply would take J's eligible callback).
// In (a)-(c) at most m·(time) supply is delivered; in (d) all delivered supply goes to other
// work of B, at most Σ_{c ∈ B, c ∉ J} n_c(x)·e_c. If J were unfinished at a' + x,
//      sbf_B(x) <= m·(Ew_J + n_J·δ_B + G_J(x)) + Σ_{c ∈ B \ J} n_c(x)·e_c,
// so the least x with  m·(Ew_J + n_J·δ_B + G_J(x)) + Σ n_c(x)·e_c < sbf_B(x)  bounds J's own
// part, and R_J = R(upstream) + x (the compositional step of Sec. 4.2).
// n_c(x): executions of callback c in a window of length x. A timer has at most one pending
// release (rcl), so at most ⌈x/T⌉ + 1; a callback on its owner chain's path runs once per
// instance, and an instance's work lies in [r, r + R_owner], so at most ⌈(x + R_owner)/T⌉
// (needs a single publisher on its topic; otherwise the class has no bound).
// The bounds of BE chains depend on each other (through R_owner): fixed point from below.
#include <algorithm>
#include <map>
#include <set>

#include "chainrt/analysis/supply.hpp"
#include "chainrt/lame/lame.hpp"

namespace chainrt::lame {

namespace {

constexpr Duration kNone = -1;

Duration ceil_div(Duration a, Duration b) { return a <= 0 ? 0 : (a + b - 1) / b; }

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

// Least Δ with sbf(Δ) >= x for one thread of class c (all threads of a class are identical);
// kNone when the class has no supply.
Duration stretch(const ThreadClassPlan& c, Duration x) {
  Supply k;
  if (c.budget <= 0) return x <= 0 ? 0 : kNone;
  if (c.budget < c.period) k.reservation = Reservation{c.budget, c.period};
  return k.sbf_inverse(x);
}

}  // namespace

std::vector<ChainVerdict> be_check(const Model& plan, const Linearised& lin, const std::vector<int>& be_chains,
                                   const std::vector<ThreadClassPlan>& classes, const std::vector<int>& cb_class,
                                   const std::vector<Duration>& rt_bound, Duration limit) {
  const std::size_t ncb = plan.callbacks.size();
  // Owner linear chain of every callback (its own part), and publishers per topic.
  std::vector<int> owner(ncb, -1);
  for (std::size_t i = 0; i < lin.chains.size(); ++i)
    for (const auto& n : lin.chains[i].own()) owner[plan.callback_index(n)] = static_cast<int>(i);
  std::map<std::string, int> publishers;
  for (const auto& cb : plan.callbacks)
    for (const auto& t : cb.publishes) publishers[t]++;

  // Per class: its callbacks, whether every callback's rate is known, δ.
  const std::size_t nc = classes.size();
  std::vector<std::vector<int>> members(nc);
  for (std::size_t c = 0; c < ncb; ++c)
    if (cb_class[c] >= 0) members[cb_class[c]].push_back(static_cast<int>(c));
  std::vector<std::string> class_problem(nc);
  std::vector<Duration> delta(nc, 0);
  for (std::size_t b = 0; b < nc; ++b) {
    if (classes[b].kind != CriticalityClass::BestEffort) continue;
    if (classes[b].budget <= 0) class_problem[b] = "thread class '" + classes[b].name + "' has no budget";
    for (int c : members[b]) {
      const Callback& cb = plan.callbacks[c];
      if (!cb.is_timer() && (owner[c] < 0 || publishers[cb.topic] > 1))
        class_problem[b] = "callback '" + cb.name + "' may be released more than once per chain instance";
    }
    for (std::size_t c = 0; c < ncb; ++c) {
      const int k = cb_class[c];
      if (k < 0 || k == static_cast<int>(b)) continue;
      const Duration s = stretch(classes[k], plan.callbacks[c].wcet);
      if (s == kNone) {
        class_problem[b] = "work of thread class '" + classes[k].name + "' (no budget) can hold the wait set";
        break;
      }
      delta[b] = std::min<Duration>(delta[b] + s, Duration{1} << 60);
    }
  }

  const std::size_t nl = lin.chains.size();
  std::vector<Duration> R(nl, kNone);  // end-to-end bounds, BE and RT
  for (std::size_t i = 0; i < nl; ++i)
    if (i < rt_bound.size() && rt_bound[i] >= 0) R[i] = rt_bound[i];
  std::vector<std::string> why(nl);
  std::vector<bool> is_be(nl, false);
  for (int j : be_chains) is_be[j] = true;

  auto class_of_chain = [&](int j) -> int {
    for (const auto& n : lin.chains[j].own()) return cb_class[plan.callback_index(n)];
    return -1;
  };
  // Executions of callback c in a window of length x (kNone: unknown).
  auto n_of = [&](int c, Duration x) -> Duration {
    const Callback& cb = plan.callbacks[c];
    Duration best = kNone;
    if (cb.is_timer() && cb.period > 0) best = ceil_div(x, cb.period) + 1;
    const int o = owner[c];
    if (o >= 0 && R[o] != kNone) {
      const Duration n = ceil_div(x + R[o], lin.chains[o].period);
      best = best == kNone ? n : std::min(best, n);
    }
    return best;
  };

  // Initial bounds (from below): upstream + own work.
  auto upstream_bound = [&](int j) -> Duration {
    const int u = lin.chains[j].upstream;
    return u < 0 ? 0 : R[u];
  };
  std::vector<bool> failed(nl, false);
  for (int j : be_chains) {
    const LinearChain& l = lin.chains[j];
    const int b = class_of_chain(j);
    if (!l.composable) why[j] = "shares callbacks with another chain other than a common prefix (not composable)";
    else if (b >= 0 && !class_problem[b].empty()) why[j] = class_problem[b];
    if (!why[j].empty()) failed[j] = true;
    else R[j] = 0;  // the fixed point starts from below
  }
  // Order: upstreams before their suffixes (upstream index precedes in ownership order, but
  // iterate to a fixed point anyway).
  for (int round = 0; round < 200; ++round) {
    bool changed = false;
    for (int j : be_chains) {
      if (failed[j]) continue;
      const LinearChain& l = lin.chains[j];
      const Duration up = upstream_bound(j);
      if (l.upstream >= 0 && up == kNone) {
        failed[j] = true;
        why[j] = "its shared prefix (owned by '" + lin.chains[l.upstream].name + "') has no bound";
        changed = true;
        continue;
      }
      const int b = class_of_chain(j);
      Duration own = 0;
      if (b >= 0) {
        const ThreadClassPlan& B = classes[b];
        const SupplySet sup = supply_of(B);
        const Duration m = static_cast<Duration>(B.cores.size());
        std::set<int> mine;
        for (const auto& n : l.own()) mine.insert(static_cast<int>(plan.callback_index(n)));
        Duration Ew = 0;
        for (int c : mine) Ew += stretch(B, plan.callbacks[c].wcet);
        std::vector<int> mates;
        std::set<std::string> groups;
        for (int c : mine) {
          const auto& g = plan.group(plan.callbacks[c].group);
          if (g.type == GroupType::MutuallyExclusive) groups.insert(g.name);
        }
        for (int c : members[b])
          if (!mine.count(c) && groups.count(plan.callbacks[c].group)) mates.push_back(c);
        const __int128 fixed128 = static_cast<__int128>(m) * (Ew + static_cast<__int128>(mine.size()) * delta[b]);
        if (fixed128 > (static_cast<__int128>(1) << 62)) {
          failed[j] = true;
          why[j] = "no bound within the controller period on '" + B.name + "' (supply too small for its demand)";
          R[j] = kNone;
          changed = true;
          continue;
        }
        const Duration fixed = static_cast<Duration>(fixed128);
        const Duration room = limit - up;
        bool ok = true;
        // (accumulated in 128 bits: a hostile model's huge execution times or tiny periods
        // give no bound instead of an overflow)
        constexpr __int128 kCap = static_cast<__int128>(1) << 62;
        auto lhs = [&](Duration x) -> Duration {
          __int128 d = fixed;
          for (int g : mates) {
            const Duration n = n_of(g, x);
            if (n == kNone) return kNone;
            d += static_cast<__int128>(m) * n * stretch(B, plan.callbacks[g].wcet);
            if (d > kCap) return kNone;
          }
          for (int c : members[b]) {
            if (mine.count(c)) continue;
            const Duration n = n_of(c, x);
            if (n == kNone) return kNone;
            d += static_cast<__int128>(n) * plan.callbacks[c].wcet;
            if (d > kCap) return kNone;
          }
          return static_cast<Duration>(d);
        };
        Duration x = std::max<Duration>(1, Ew);
        for (;;) {
          if (x > room) {
            ok = false;
            break;
          }
          const Duration d = lhs(x);
          if (d == kNone) {
            ok = false;
            break;
          }
          if (d < sup.sbf(x)) break;
          auto nx = sup.first_at_least(d + 1, x + 1, room + 1);
          if (!nx) {
            ok = false;
            break;
          }
          x = *nx;
        }
        if (!ok) {
          failed[j] = true;
          why[j] = "no bound within the controller period on '" + B.name + "' (supply too small for its demand)";
          R[j] = kNone;
          changed = true;
          continue;
        }
        own = x;
      }
      const Duration total = up + own;
      if (R[j] == kNone || total > R[j]) {
        R[j] = total;
        changed = true;
      }
    }
    if (!changed) break;
  }

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

}  // namespace chainrt::lame
