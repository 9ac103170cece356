// The schedule-abstraction graph exploration (sag.hpp): one function per rule of Nasri &
// Brandenburg (RTSS 2017) and of the precedence extension (Nasri, Nelissen & Brandenburg,
// ECRTS 2019), the graph built breadth-first one dispatch at a time, states with the same
// dispatched jobs merged.
#include "sag.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace chainrt::detail::sag {

Preemption::Preemption(std::vector<Above> jobs) : jobs_(std::move(jobs)) {
  std::sort(jobs_.begin(), jobs_.end(), [](const Above& a, const Above& b) { return a.start.lo < b.start.lo; });
  for (const Above& a : jobs_) span_ = std::max(span_, a.finish.hi - a.start.lo);
}

// A job above runs in [from, to) only if it starts before `to` and finishes after `from`, and
// does at most its cost and at most finish.hi - from there (every job with finish.hi > from has
// start.lo > from - span_, where the scan begins).
Duration Preemption::work(Duration from, Duration to) const {
  const auto first = std::lower_bound(jobs_.begin(), jobs_.end(), from - span_,
                                      [](const Above& a, Duration t) { return a.start.lo < t; });
  Duration w = 0;
  groups_.clear();
  for (auto it = first; it != jobs_.end() && it->start.lo < to; ++it) {
    if (it->finish.hi <= from) continue;
    const Duration d = std::min(it->cost, it->finish.hi - from);
    if (it->group == kNoGroup) {
      w += d;
    } else if (it->start.lo <= from) {
      auto g = std::find_if(groups_.begin(), groups_.end(), [&](const auto& x) { return x.first == it->group; });
      if (g == groups_.end()) groups_.emplace_back(it->group, d);
      else g->second += d;
    }
  }
  Duration one = 0;
  for (const auto& g : groups_) one = std::max(one, g.second);
  return w + one;
}

Duration Preemption::finish_by(Duration start, Duration cost) const {
  Duration t = start + cost;
  for (;;) {  // the work above only grows with t and is finite: a fixed point is reached
    const Duration next = start + cost + work(start, t);
    if (next == t) return t;
    t = next;
  }
}

Duration Preemption::idle_by(Duration x) const {
  // a job above that starts at t itself keeps them busy at t: the work up to and including t
  Duration t = x;
  for (;;) {
    const Duration next = x + work(x, t + 1);
    if (next == t) return t;
    t = next;
  }
}

namespace {

constexpr Duration kNever = std::numeric_limits<Duration>::max();
constexpr std::uint32_t kStart = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kMerged = kStart - 1;

// A dispatched job whose successors are not all dispatched yet, with its finish interval.
struct Kept {
  std::uint32_t job = 0;
  Interval finish;
};

// A vertex of the graph: the jobs dispatched on the way to it (J^P), the processor
// availability interval A(v) (RTSS 2017 Def. 2: the finish interval of the last dispatched job)
// and the finish intervals the precedence rules still need (ECRTS 2019).
struct State {
  std::vector<std::uint64_t> done;
  // per k = 1..m: earliest (pa) and latest (ca) instant at which k cores are free, both sorted;
  // on one core {A^min(v)} and {A^max(v)}
  std::vector<Duration> pa, ca;
  std::vector<Interval> groups;  // per group: the finish interval of its last dispatched job
  std::vector<Kept> kept;  // by job index
  std::uint32_t lo = 0;    // position in the scan order before which every job is dispatched
  // The job whose finish A(v) is; kStart at the root (nothing has run), kMerged when merged
  // states ended with different jobs.
  std::uint32_t last = kStart;
  // Some job is ready when the processor frees (ready_when_free, which reads `last`): a state
  // with another last job does not merge into this one (mergeable). Only precision depends on it.
  bool pins = false;
};

// The jobs with what the rules look up: successors, the scan order (by earliest possible
// ready time, so a state's candidates are a prefix of its undispatched jobs) and that time.
struct Prepared {
  const std::vector<Job>* jobs = nullptr;
  std::vector<std::vector<std::uint32_t>> succ;
  std::vector<std::uint32_t> order;
  std::vector<Duration> earliest_ready;
  std::size_t groups = 0;  // 1 + the largest group id
  const Preemption* above = nullptr;  // threads preempting this one (one core), else nullptr
};

bool has(const std::vector<std::uint64_t>& bits, std::size_t j) { return bits[j >> 6] >> (j & 63) & 1; }
void set(std::vector<std::uint64_t>& bits, std::size_t j) { bits[j >> 6] |= std::uint64_t{1} << (j & 63); }
bool overlap(Interval a, Interval b) { return a.lo <= b.hi && b.lo <= a.hi; }
Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

// A topological order of the precedence graph; throws on a cycle.
std::vector<std::uint32_t> topological(const std::vector<Job>& jobs, const std::vector<std::vector<std::uint32_t>>& succ) {
  std::vector<std::size_t> indeg(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) indeg[j] = jobs[j].preds.size();
  std::vector<std::uint32_t> out;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (indeg[j] == 0) out.push_back(static_cast<std::uint32_t>(j));
  for (std::size_t k = 0; k < out.size(); ++k)
    for (std::uint32_t s : succ[out[k]])
      if (--indeg[s] == 0) out.push_back(s);
  if (out.size() != jobs.size()) throw std::invalid_argument("sag: the precedence constraints have a cycle");
  return out;
}

Prepared prepare(const std::vector<Job>& jobs, const Preemption* above) {
  Prepared p;
  p.jobs = &jobs;
  if (above && !above->empty()) p.above = above;
  p.succ.resize(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j)
    for (const Pred& e : jobs[j].preds) {
      if (e.job >= jobs.size() || e.job == j) throw std::invalid_argument("sag: a predecessor names no other job");
      p.succ[e.job].push_back(static_cast<std::uint32_t>(j));
    }
  const std::vector<std::uint32_t> topo = topological(jobs, p.succ);
  // The earliest a job can be ready in any schedule: its release, and each predecessor's
  // earliest ready time + its least cost + the least delay (no interference at all).
  p.earliest_ready.assign(jobs.size(), 0);
  std::vector<std::size_t> rank(jobs.size());
  for (std::size_t k = 0; k < topo.size(); ++k) {
    const std::uint32_t j = topo[k];
    rank[j] = k;
    Duration r = jobs[j].release.lo;
    for (const Pred& e : jobs[j].preds)
      r = std::max(r, p.earliest_ready[e.job] + jobs[e.job].cost.lo + e.delay.lo);
    p.earliest_ready[j] = r;
  }
  p.order = topo;
  for (const Job& j : jobs)
    if (j.group >= 0) p.groups = std::max(p.groups, static_cast<std::size_t>(j.group) + 1);
  std::stable_sort(p.order.begin(), p.order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return p.earliest_ready[a] != p.earliest_ready[b] ? p.earliest_ready[a] < p.earliest_ready[b] : rank[a] < rank[b];
  });
  return p;
}

// ---- the rules ------------------------------------------------------------------------------

// ECRTS 2019 (precedence with delays): the ready interval of job j in state s, every
// predecessor dispatched: from the later of its release and each predecessor's finish plus the
// edge's delay, earliest and latest. nullopt while a predecessor is not dispatched (j is then
// neither possibly nor certainly ready).
std::optional<Interval> ready_interval(const Prepared& p, std::uint32_t job, const State& s) {
  const Job& j = (*p.jobs)[job];
  Interval r = j.release;
  for (const Pred& e : j.preds) {
    if (!has(s.done, e.job)) return std::nullopt;
    auto it = std::lower_bound(s.kept.begin(), s.kept.end(), e.job,
                               [](const Kept& k, std::size_t job) { return k.job < job; });
    r.lo = std::max(r.lo, it->finish.lo + e.delay.lo);
    r.hi = std::max(r.hi, it->finish.hi + e.delay.hi);
  }
  if (j.group >= 0) {  // its group's last job finished (several cores)
    r.lo = std::max(r.lo, s.groups[static_cast<std::size_t>(j.group)].lo);
    r.hi = std::max(r.hi, s.groups[static_cast<std::size_t>(j.group)].hi);
  }
  return r;
}

// The first core's availability interval A_1 = [PA_1, CA_1] (one core: A(v)).
Interval first_free(const State& s) { return {s.pa.front(), s.ca.front()}; }

// RTSS 2017 Eq. (EST): the earliest start of job i as the next dispatch after state v:
// EST_i(v) = max(r_i^min, A^min(v)).
Duration earliest_start(Interval ready, Interval avail) { return std::max(ready.lo, avail.lo); }

// RTSS 2017 Eq. (t_wc): by t_wc(v) = max(A^max(v), min{r_x^max | J_x not dispatched}) the
// processor is certainly free and some job certainly ready, so the next dispatch starts by then
// (a job counts only once its predecessors have finished: ready_interval).
Duration work_conserving_time(Interval avail, Duration min_certain_ready) {
  return std::max(avail.hi, min_certain_ready);
}

// RTSS 2017 Eq. (LST): job i can be next only if it starts no later than t_wc and before a
// higher-priority job is certainly ready, t_high(i) = min{r_x^max | p_x < p_i}:
// LST_i = min(t_wc, t_high − 1) (integer time: a job ready at t is seen by a selection at t).
// Several cores: min(t_wc, t_high), a job started at the very instant a higher-priority one is
// certainly ready is counted (the simulator's threads may select at that instant before the
// release is seen; a campaign found bounds 1 ns short with t_high − 1).
Duration latest_start(Duration t_wc, Duration t_high, bool several_cores) {
  if (t_high == kNever) return t_wc;
  return std::min(t_wc, several_cores ? t_high : t_high - 1);
}

// RTSS 2017 Sec. IV-B: the finish interval of the dispatched job, the new state's availability.
Interval finish_interval(const Prepared& p, Duration est, Duration lst, Interval cost) {
  return {est + cost.lo, p.above ? p.above->finish_by(lst, cost.hi) : lst + cost.hi};
}

// RTSS 2017 Sec. IV-C (merge): same dispatched jobs and overlapping intervals (sag.hpp); and,
// where a job is ready when the processor frees (State::pins, ready_when_free), the same last
// job: the merged state forgets it (kMerged), and with it the rule that nothing of lower priority
// goes before that job, so merging such states admits schedules that cannot happen.
bool mergeable(const State& a, const State& b) {
  if (a.done != b.done || a.kept.size() != b.kept.size()) return false;
  if (a.last != b.last && (a.pins || b.pins)) return false;
  for (std::size_t k = 0; k < a.pa.size(); ++k)
    if (!overlap({a.pa[k], a.ca[k]}, {b.pa[k], b.ca[k]})) return false;
  for (std::size_t g = 0; g < a.groups.size(); ++g)
    if (!overlap(a.groups[g], b.groups[g])) return false;
  for (std::size_t k = 0; k < a.kept.size(); ++k)
    if (a.kept[k].job != b.kept[k].job || !overlap(a.kept[k].finish, b.kept[k].finish)) return false;
  return true;
}

void merge_into(State& into, const State& from) {
  for (std::size_t k = 0; k < into.pa.size(); ++k) {
    into.pa[k] = std::min(into.pa[k], from.pa[k]);
    into.ca[k] = std::max(into.ca[k], from.ca[k]);
  }
  for (std::size_t g = 0; g < into.groups.size(); ++g) into.groups[g] = hull(into.groups[g], from.groups[g]);
  if (into.last != from.last) into.last = kMerged;
  into.pins = into.pins || from.pins;
  for (std::size_t k = 0; k < into.kept.size(); ++k) into.kept[k].finish = hull(into.kept[k].finish, from.kept[k].finish);
}

// ---- the exploration ------------------------------------------------------------------------

struct Candidate {
  std::uint32_t job;
  Interval ready;
  bool ready_when_free = false;  // see ready_when_free()
};

// Precedence with the last dispatched job (ECRTS 2019's ready time, kept relative to A(v)): a
// job whose predecessors have all finished by the instant the processor frees, whenever in A(v)
// that is, is ready and seen then: no lower-priority job can be dispatched next, and its r^max is
// at most A^max. The interval form alone (each predecessor's finish interval, a hull over the
// schedules merged into s) would let a lower-priority job start before it. On one core a
// predecessor has finished by then when it is the job that frees the processor, over an edge
// without delay (its message is queued inside that callback, before the executor selects the next
// one), or when it was dispatched before that job (it finished before that job started, at least
// C^min before the processor frees) over an edge whose delay is at most that C^min, or when its
// finish plus the delay is at most A^min.
bool ready_when_free(const Prepared& p, const Job& j, const State& s) {
  if (s.pa.size() > 1 || s.last == kStart || s.last == kMerged || j.preds.empty() || j.release.hi > s.pa.front())
    return false;
  const Duration last_least = (*p.jobs)[s.last].cost.lo;
  for (const Pred& e : j.preds) {
    if (e.job == s.last) {
      if (e.delay.hi != 0) return false;
      continue;
    }
    if (e.delay.hi <= last_least) continue;
    auto it = std::lower_bound(s.kept.begin(), s.kept.end(), e.job,
                               [](const Kept& k, std::size_t job) { return k.job < job; });
    if (it->finish.hi + e.delay.hi > s.pa.front()) return false;
  }
  return true;
}

// The jobs that may be dispatched next from s (every predecessor dispatched), scanned in
// earliest-ready order only as far as one could still start by t_wc; and min r^max among them.
std::vector<Candidate> candidates(const Prepared& p, const State& s, Duration* min_certain) {
  std::vector<Candidate> out;
  Duration least = kNever;
  for (std::size_t pos = s.lo; pos < p.order.size(); ++pos) {
    const std::uint32_t j = p.order[pos];
    if (p.earliest_ready[j] > std::max(s.ca.front(), least)) break;
    if (has(s.done, j)) continue;
    if (auto r = ready_interval(p, j, s)) {
      const bool at_free = ready_when_free(p, (*p.jobs)[j], s);
      if (at_free) r->hi = std::min(r->hi, s.ca.front());
      out.push_back({j, *r, at_free});
      least = std::min(least, r->hi);
    }
  }
  *min_certain = least;
  return out;
}

// The state after dispatching job j, started in [est, lst], with the given finish interval:
// its core free at the finish, every other core at max(start, its instant) (ECRTS 2018).
State successor(const Prepared& p, const State& s, std::uint32_t j, Duration est, Duration lst, Interval finish) {
  State n;
  n.done = s.done;
  set(n.done, j);
  n.pa.reserve(s.pa.size());
  n.ca.reserve(s.ca.size());
  for (std::size_t k = 1; k < s.pa.size(); ++k) {
    n.pa.push_back(std::max(est, s.pa[k]));
    n.ca.push_back(std::max(lst, s.ca[k]));
  }
  n.pa.insert(std::upper_bound(n.pa.begin(), n.pa.end(), finish.lo), finish.lo);
  n.ca.insert(std::upper_bound(n.ca.begin(), n.ca.end(), finish.hi), finish.hi);
  n.groups = s.groups;
  if ((*p.jobs)[j].group >= 0) n.groups[static_cast<std::size_t>((*p.jobs)[j].group)] = finish;
  n.last = j;
  auto all_done = [&](std::uint32_t x) {
    for (std::uint32_t q : p.succ[x])
      if (!has(n.done, q)) return false;
    return true;
  };
  // On one core every job dispatched before j finished before j started, by its LST.
  for (const Kept& k : s.kept)
    if (!all_done(k.job)) {
      n.kept.push_back(k);
      if (s.pa.size() == 1) n.kept.back().finish.hi = std::min(k.finish.hi, lst);
    }
  if (!p.succ[j].empty()) {
    auto at = std::lower_bound(n.kept.begin(), n.kept.end(), j, [](const Kept& k, std::uint32_t x) { return k.job < x; });
    n.kept.insert(at, Kept{j, finish});
  }
  n.lo = s.lo;
  while (n.lo < p.order.size() && has(n.done, p.order[n.lo])) ++n.lo;
  auto preds_done = [&](std::uint32_t q) {
    for (const Pred& e : (*p.jobs)[q].preds)
      if (!has(n.done, e.job)) return false;
    return true;
  };
  for (std::size_t k = 0; k < n.kept.size() && !n.pins; ++k)
    for (std::uint32_t q : p.succ[n.kept[k].job])
      if (!has(n.done, q) && preds_done(q) && ready_when_free(p, (*p.jobs)[q], n)) {
        n.pins = true;
        break;
      }
  return n;
}

struct BitsHash {
  std::size_t operator()(const std::vector<std::uint64_t>& b) const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::uint64_t w : b) h = (h ^ w) * 0xbf58476d1ce4e5b9ULL + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

// One level of the graph: the states with the same number of dispatched jobs, merged.
class Level {
 public:
  // The index of the state s went into (merged or new).
  std::size_t add(State s) {
    auto& slot = by_set_[s.done];
    for (std::size_t i : slot)
      if (mergeable(states_[i], s)) {
        merge_into(states_[i], s);
        return i;
      }
    slot.push_back(states_.size());
    states_.push_back(std::move(s));
    return states_.size() - 1;
  }
  std::vector<State>& states() { return states_; }

 private:
  std::vector<State> states_;
  std::unordered_map<std::vector<std::uint64_t>, std::vector<std::size_t>, BitsHash> by_set_;
};

// The graph's edges, kept for a witness (witness()): per level (dispatches so far) and state,
// the dispatches into it, and each state's availability interval once the level is complete.
struct Edge {
  std::uint32_t parent = 0;  // the state in the level before
  std::uint32_t job = 0;
  Duration est = 0, lst = 0;
};
struct Graph {
  std::vector<std::vector<std::vector<Edge>>> in;  // [level][state]
  std::vector<std::vector<Interval>> avail;        // [level][state]
};

// Job c dispatched next from s, if the rules allow it (EST <= LST): its start and finish
// intervals recorded in r and the new state added to `next` (and the edge to `g` when kept;
// `from`: s's index in its level). t_high: over the higher-priority candidates.
void dispatch(const Prepared& p, const State& s, const Candidate& c, Duration t_wc, Duration t_high, Level& next,
              Result& r, Graph* g, std::uint32_t from) {
  const Duration est = earliest_start(c.ready, first_free(s));
  // with threads above, the selection due at t_wc may wait until they are idle; what it sees is
  // what is released by then (t_high unchanged)
  const Duration lst = latest_start(p.above ? p.above->idle_by(t_wc) : t_wc, t_high, s.pa.size() > 1);
  if (est > lst) return;
  const Interval fin = finish_interval(p, est, lst, (*p.jobs)[c.job].cost);
  Interval& st = r.start[c.job];
  Interval& fi = r.finish[c.job];
  st = {std::min(st.lo, est), std::max(st.hi, lst)};
  fi = {std::min(fi.lo, fin.lo), std::max(fi.hi, fin.hi)};
  ++r.edges;
  const std::size_t to = next.add(successor(p, s, c.job, est, lst, fin));
  if (!g) return;
  auto& in = g->in.back();
  if (in.size() <= to) in.resize(to + 1);
  in[to].push_back(Edge{from, c.job, est, lst});
}

// Every dispatch possible from s (RTSS 2017 Sec. IV-B with the rules above) into `next`;
// records the start and finish intervals of the dispatched jobs in r.
void expand(const Prepared& p, const State& s, Level& next, Result& r, Graph* g, std::uint32_t from) {
  Duration min_certain = kNever;
  std::vector<Candidate> cs = candidates(p, s, &min_certain);
  if (cs.empty()) throw std::logic_error("sag: a state with jobs left has no candidate");
  const Duration t_wc = work_conserving_time(first_free(s), min_certain);
  const auto& jobs = *p.jobs;
  std::sort(cs.begin(), cs.end(),
            [&](const Candidate& a, const Candidate& b) { return jobs[a.job].priority < jobs[b.job].priority; });
  Duration t_high = kNever;  // min r^max over the candidates of higher priority than the current one
  for (const Candidate& c : cs) {
    if (c.ready_when_free) {  // it is seen when the processor frees: nothing below it goes next
      dispatch(p, s, c, t_wc, t_high, next, r, g, from);
      return;
    }
    dispatch(p, s, c, t_wc, t_high, next, r, g, from);
    t_high = std::min(t_high, c.ready.hi + (jobs[c.job].seen_late ? 1 : 0));
  }
}

Result explore_graph(const std::vector<Job>& jobs, const Limits& limits, std::size_t cores, Graph* g,
                     const Preemption* above = nullptr) {
  if (cores == 0) throw std::invalid_argument("sag: no core");
  if (above && !above->empty() && cores != 1) throw std::invalid_argument("sag: preemption on one thread only");
  const auto t0 = std::chrono::steady_clock::now();
  const Prepared p = prepare(jobs, above);
  Result r;
  r.start.assign(jobs.size(), Interval{kNever, std::numeric_limits<Duration>::min()});
  r.finish = r.start;
  Level level;
  State root;
  root.done.assign((jobs.size() + 63) / 64, 0);
  root.pa.assign(cores, 0);
  root.ca.assign(cores, 0);
  root.groups.assign(p.groups, Interval{std::numeric_limits<Duration>::min(), std::numeric_limits<Duration>::min()});
  while (root.lo < p.order.size() && has(root.done, p.order[root.lo])) ++root.lo;
  level.add(std::move(root));
  r.states = 1;
  auto keep_avail = [&](Level& l) {
    if (!g) return;
    g->avail.emplace_back();
    for (const State& s : l.states()) g->avail.back().push_back(first_free(s));
    g->in.back().resize(l.states().size());
  };
  if (g) g->in.emplace_back();
  keep_avail(level);
  for (std::size_t depth = 0; depth < jobs.size(); ++depth) {
    Level next;
    if (g) g->in.emplace_back();
    for (std::size_t i = 0; i < level.states().size(); ++i) {
      const State& s = level.states()[i];
      expand(p, s, next, r, g, static_cast<std::uint32_t>(i));
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (secs > limits.max_seconds || r.states + next.states().size() > limits.max_states) {
        r.why = "the schedule-abstraction graph grew beyond its limits (" + std::to_string(limits.max_states) +
                " states or " + std::to_string(limits.max_seconds) + " s) after " + std::to_string(depth) + " of " +
                std::to_string(jobs.size()) + " dispatches";
        return r;
      }
    }
    r.states += next.states().size();
    keep_avail(next);
    level = std::move(next);
  }
  r.complete = true;
  return r;
}

}  // namespace

Result explore(const std::vector<Job>& jobs, const Limits& limits, std::size_t cores, const Preemption* above) {
  return explore_graph(jobs, limits, cores, nullptr, above);
}

namespace {

// The background jobs (explore_background): the longest tail of the priority order made of
// jobs without successors.
std::vector<bool> background_jobs(const std::vector<Job>& jobs) {
  std::vector<bool> sink(jobs.size(), true), bg(jobs.size(), false);
  for (const Job& j : jobs)
    for (const Pred& e : j.preds) sink[e.job] = false;
  std::vector<std::size_t> by(jobs.size());
  std::iota(by.begin(), by.end(), std::size_t{0});
  std::sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) { return jobs[b].priority < jobs[a].priority; });
  for (std::size_t k = 0; k < by.size() && sink[by[k]]; ++k) {
    // a job of the same priority as a foreground one is not behind it: the tail ends before it
    if (k + 1 < by.size() && !sink[by[k + 1]] && !(jobs[by[k + 1]].priority < jobs[by[k]].priority)) break;
    bg[by[k]] = true;
  }
  return bg;
}

// The instants at which a foreground job may be pending or running, as sorted disjoint [lo, hi).
class Busy {
 public:
  void add(Duration lo, Duration hi) {
    if (lo < hi) spans_.push_back({lo, hi});
  }
  void close() {
    std::sort(spans_.begin(), spans_.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    std::vector<Interval> out;
    for (const Interval& s : spans_) {
      if (!out.empty() && s.lo <= out.back().hi) out.back().hi = std::max(out.back().hi, s.hi);
      else out.push_back(s);
    }
    spans_ = std::move(out);
  }
  // The first instant >= a outside every span at which the time outside them since a is at
  // least `need`.
  Duration serve(Duration a, Duration need) const {
    auto it = std::upper_bound(spans_.begin(), spans_.end(), a, [](Duration t, const Interval& s) { return t < s.hi; });
    Duration t = a;
    for (; it != spans_.end(); ++it) {
      if (t < it->lo) {
        if (it->lo - t > need) return t + need;  // at it->lo a foreground job may be ready and go first
        need -= it->lo - t;
      }
      t = std::max(t, it->hi);
    }
    return t + need;
  }

 private:
  std::vector<Interval> spans_;
};

// The background jobs' intervals (explore_background), in priority order, highest first.
void background_intervals(const std::vector<Job>& jobs, const std::vector<bool>& bg, Result& r) {
  Busy busy;
  auto ready_lo = [&](std::size_t j) {
    Duration t = jobs[j].release.lo;
    for (const Pred& e : jobs[j].preds) t = std::max(t, r.finish[e.job].lo + e.delay.lo);
    return t;
  };
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (bg[j]) order.push_back(j);
    else busy.add(ready_lo(j), r.finish[j].hi);
  }
  busy.close();
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].priority < jobs[b].priority; });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t b = order[k];
    Duration a = jobs[b].release.hi;  // its latest ready instant (its predecessors are foreground)
    for (const Pred& e : jobs[b].preds) a = std::max(a, r.finish[e.job].hi + e.delay.hi);
    Duration blocking = 0;  // one lower-priority background job started by a
    for (std::size_t l = k + 1; l < order.size(); ++l)
      if (ready_lo(order[l]) <= a) blocking = std::max(blocking, jobs[order[l]].cost.hi);
    Duration t = busy.serve(a, blocking);
    for (;;) {  // the higher-priority background work that may be pending in [a, t]
      Duration need = blocking;
      for (std::size_t h = 0; h < k; ++h)
        if (ready_lo(order[h]) <= t && r.finish[order[h]].hi > a) need += jobs[order[h]].cost.hi;
      const Duration next = busy.serve(a, need);
      if (next == t) break;
      t = next;
    }
    const Duration est = ready_lo(b);
    r.start[b] = {est, std::max(est, t)};
    r.finish[b] = {est + jobs[b].cost.lo, std::max(est, t) + jobs[b].cost.hi};
  }
}

}  // namespace

Result explore_background(const std::vector<Job>& jobs, const Limits& limits, std::size_t* background) {
  const std::vector<bool> bg = background_jobs(jobs);
  const std::size_t n_bg = static_cast<std::size_t>(std::count(bg.begin(), bg.end(), true));
  if (background) *background = n_bg;
  if (n_bg == 0) return explore(jobs, limits);
  Duration blocking = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (bg[j]) blocking = std::max(blocking, jobs[j].cost.hi);
  std::vector<std::size_t> local(jobs.size(), 0), of;
  std::vector<Job> fg;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (bg[j]) continue;
    local[j] = fg.size();
    of.push_back(j);
    Job job = jobs[j];
    job.release.hi += blocking;
    for (Pred& e : job.preds)
      if (e.delay.hi > 0) e.delay.hi += blocking;
    fg.push_back(std::move(job));
  }
  for (Job& job : fg)
    for (Pred& e : job.preds) e.job = local[e.job];  // a background job is nobody's predecessor
  const Result f = explore(fg, limits);
  Result r;
  r.complete = f.complete;
  r.why = f.why;
  r.states = f.states;
  r.edges = f.edges;
  r.start.assign(jobs.size(), Interval{kNever, std::numeric_limits<Duration>::min()});
  r.finish = r.start;
  for (std::size_t i = 0; i < of.size(); ++i) {
    r.start[of[i]] = f.start[i];
    r.finish[of[i]] = f.finish[i];
  }
  if (r.complete) background_intervals(jobs, bg, r);
  return r;
}

namespace {

// The start and execution time of the job dispatched over one of the edges into a state so
// that the processor frees exactly at `a` (an edge whose finish interval holds it; the one
// closest to it when none does), preferring the longest execution.
std::pair<const Edge*, Duration> edge_finishing_at(const std::vector<Job>& jobs, const std::vector<Edge>& in,
                                                   Duration a) {
  const Edge* best = nullptr;
  Duration miss = kNever;
  for (const Edge& e : in) {
    const Interval cost = jobs[e.job].cost;
    const Duration lo = e.est + cost.lo, hi = e.lst + cost.hi;
    const Duration d = a < lo ? lo - a : a > hi ? a - hi : 0;
    if (d < miss) best = &e, miss = d;
  }
  const Interval cost = jobs[best->job].cost;
  const Duration start = std::clamp(a - cost.hi, best->est, best->lst);
  return {best, start};
}

}  // namespace

namespace {

// The witness of `target`'s latest finish from the kept graph (witness()).
std::optional<Witness> walk_back(const std::vector<Job>& jobs, const Graph& g, std::size_t target) {
  std::size_t level = 0, state = 0;
  const Edge* last = nullptr;  // the dispatch of the target that starts latest (its latest finish: LST + C^max)
  for (std::size_t l = 1; l < g.in.size(); ++l)
    for (std::size_t i = 0; i < g.in[l].size(); ++i)
      for (const Edge& e : g.in[l][i])
        if (e.job == target && (!last || e.lst > last->lst)) last = &e, level = l, state = i;
  if (!last) return std::nullopt;
  Witness w;
  w.start.assign(jobs.size(), -1);
  w.cost.resize(jobs.size());
  w.release.resize(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    w.cost[j] = jobs[j].cost.hi;
    w.release[j] = jobs[j].release.hi;
  }
  w.start[target] = last->lst;
  w.finish = last->lst + jobs[target].cost.hi;
  // Back along the path: each earlier dispatch ends exactly when the next one starts (or, before
  // an idle gap, as late as its state allows: the next job is then released at its start).
  Duration s = last->lst;
  state = last->parent;
  for (--level; level > 0; --level) {
    const Interval avail = g.avail[level][state];
    const Duration a = std::clamp(s, avail.lo, avail.hi);
    const auto [e, start] = edge_finishing_at(jobs, g.in[level][state], a);
    w.start[e->job] = start;
    w.cost[e->job] = std::clamp(a - start, jobs[e->job].cost.lo, jobs[e->job].cost.hi);
    s = start;
    state = e->parent;
  }
  // A job on the path is released at its start (no earlier: it would be pending at the earlier
  // dispatches), within its window; every other one as late as it may be.
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (w.start[j] >= 0) w.release[j] = std::clamp(w.start[j], jobs[j].release.lo, jobs[j].release.hi);
  return w;
}

}  // namespace

std::vector<std::optional<Witness>> witnesses(const std::vector<Job>& jobs,
                                              const std::function<std::vector<std::size_t>(const Result&)>& targets,
                                              const Limits& limits) {
  for (const Job& j : jobs)
    if (j.group >= 0) return {};
  Graph g;
  const Result r = explore_graph(jobs, limits, 1, &g);
  if (!r.complete) return {};
  std::vector<std::optional<Witness>> out;
  for (std::size_t t : targets(r)) out.push_back(t < jobs.size() ? walk_back(jobs, g, t) : std::nullopt);
  return out;
}

std::optional<Witness> witness(const std::vector<Job>& jobs, std::size_t target, const Limits& limits) {
  auto ws = witnesses(jobs, [&](const Result&) { return std::vector<std::size_t>{target}; }, limits);
  return ws.empty() ? std::nullopt : ws.front();
}

}  // namespace chainrt::detail::sag
