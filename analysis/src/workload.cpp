// Building the analyses' view of a model (workload.hpp).
#include "workload.hpp"

#include "chainrt/model/facts.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <cstdlib>
#include <set>

#include "chainrt/analysis/comm_fit.hpp"
#include "join_wait.hpp"

namespace chainrt::detail {

HopCost model_hop_cost(const Model& m) {
  const Communication comm = m.communication;
  const Communication fit = fitted_communication(m.communication);
  return [comm, fit](const Hop& h) {
    Duration c = std::max(comm.cost_of(h.comm).cost(h.message_size), fit.cost_of(h.comm).cost(h.message_size));
    // Nearest measured size (all samples at that size).
    Bytes best = -1;
    for (const auto& ms : comm.measurements)
      if (ms.kind == h.comm && (best < 0 || std::llabs(ms.size - h.message_size) < std::llabs(best - h.message_size)))
        best = ms.size;
    for (const auto& ms : comm.measurements)
      if (ms.kind == h.comm && (ms.size == best || std::llabs(ms.size - h.message_size) == std::llabs(best - h.message_size)))
        c = std::max(c, ms.latency);
    return c;
  };
}


namespace {

std::optional<Duration> executions_upto(const Model& m, std::size_t c, Duration x, int depth) {
  const Callback& cb = m.callbacks[c];
  if (depth > static_cast<int>(m.callbacks.size())) return std::nullopt;  // a topic cycle
  if (cb.is_timer()) return ceil_div(x, cb.period) + 2;
  // released by messages on its topic (a service's request and a client's response are, once
  // the loader lowered them: model/src/validate.cpp, lower_services)
  if (cb.kind != CallbackKind::Subscription && cb.kind != CallbackKind::FusionInput &&
      cb.kind != CallbackKind::FusionTrigger && cb.kind != CallbackKind::Service && cb.kind != CallbackKind::Client)
    return std::nullopt;
  Duration n = cb.queue_depth + 1;
  for (std::size_t u = 0; u < m.callbacks.size(); ++u)
    for (const auto& t : m.callbacks[u].publishes)
      if (t == cb.topic) {
        auto nu = executions_upto(m, u, x, depth + 1);
        if (!nu) return std::nullopt;
        n += *nu;
      }
  return n;
}

}  // namespace

std::optional<Duration> executions_in_window(const Model& m, std::size_t callback, Duration x) {
  return executions_upto(m, callback, x, 0);
}

// Appends callback c, reached over a hop of cost hc, to the linear segments of one path: a new
// segment where the executor changes (hc is then the cost that delivers it), else the same one.
void append_path_piece(std::vector<Segment>& segs, int c, Duration hc, const std::vector<int>& side, const View& v) {
  if (segs.empty() || v.cbs[c].executor != segs.back().executor) {
    Segment s;
    s.executor = v.cbs[c].executor;
    s.comm_before = hc;
    s.path_piece = true;
    s.side = side;
    segs.push_back(s);
  } else {
    segs.back().intra_comm += hc;
    if (hc > 0) segs.back().delayed_hops++;
  }
  segs.back().cbs.push_back(c);
  segs.back().hop_into.push_back(segs.back().cbs.size() == 1 ? 0 : hc);
}

void recompute_hops(Segment& s) {
  s.intra_comm = 0;
  s.delayed_hops = 0;
  for (std::size_t j = 1; j < s.hop_into.size(); ++j) {
    s.intra_comm += s.hop_into[j];
    if (s.hop_into[j] > 0) s.delayed_hops++;
  }
}

// The linear segments of every root-to-leaf path of a branching chain (Task::paths).
std::vector<std::vector<Segment>> path_segments(const Model& m, const Chain& ch, const View& v, const HopCost& cost) {
  std::vector<std::vector<Segment>> out;
  for (const auto& p : ch.paths()) {
    std::vector<int> ids;
    for (const auto& n : p) ids.push_back(static_cast<int>(m.callback_index(n)));
    std::vector<int> side;
    for (const auto& n : ch.callbacks)
      if (std::find(p.begin(), p.end(), n) == p.end()) side.push_back(static_cast<int>(m.callback_index(n)));
    std::vector<Segment> segs;
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const int c = ids[j];
      Duration hc = 0;
      if (j > 0)
        for (const auto& h : ch.hops)
          if (h.from == p[j - 1] && h.to == p[j]) hc = cost(h);
      append_path_piece(segs, c, hc, side, v);
    }
    out.push_back(std::move(segs));
  }
  return out;
}

namespace {

// The supply of every executor thread (View::supply), whether it shares its core
// (thread_shared), and the threads of other executors that may preempt or run ahead of a
// shared one (foreign, foreign_ok).
// An unpinned thread that never waits for a core: no thread of its host is pinned or has a
// reservation, fewer than `cores` other threads of the host have a SCHED_FIFO priority at least
// its own (a thread without one: every other thread counts) — so the kernel's global SCHED_FIFO
// scheduling always leaves it a core — and none of those runs on its core in the simulator's
// round robin (model/facts.hpp, simulated_core).
bool unpinned_never_waits(const Model& m, std::size_t x, std::size_t t, int cores) {
  const Executor& e = m.executors[x];
  const std::optional<int> mine = thread_fifo_priority(e, e.threads[t]);
  const int my_core = simulated_core(m, x, t);
  int above = 0;
  for (std::size_t y = 0; y < m.executors.size(); ++y) {
    const Executor& oe = m.executors[y];
    if (oe.host != e.host) continue;
    for (std::size_t u = 0; u < oe.threads.size(); ++u) {
      const Thread& o = oe.threads[u];
      if (!o.cores.empty() || o.reservation) return false;
      if (y == x && u == t) continue;
      const std::optional<int> theirs = thread_fifo_priority(oe, o);
      if (mine && theirs.value_or(0) < *mine) continue;
      if (simulated_core(m, y, u) == my_core) return false;
      ++above;
    }
  }
  return above < cores;
}

void thread_supply(const Model& m, View& v) {
  // Executors: supply of every thread. A thread without a reservation is on a dedicated core
  // when it is pinned to one core and every other thread that may run there (pinned to it, or
  // unpinned on the host) has no reservation and a lower SCHED_FIFO priority (a thread without
  // one is below every FIFO thread) — or when it is the only such thread; an unpinned thread
  // when the host has at least as many cores as threads, or when it never waits for a core
  // (unpinned_never_waits). A reservation gives its
  // periodic-resource supply (SCHED_DEADLINE isolates it from the rest).
  std::map<std::string, int> host_ix;
  for (std::size_t h = 0; h < m.hosts.size(); ++h) host_ix[m.hosts[h].name] = static_cast<int>(h);
  struct ThreadRef {
    int host;
    const Thread* t;
    std::optional<int> fifo;  // thread_fifo_priority (facts.hpp)
  };
  std::vector<ThreadRef> all_threads;
  std::vector<int> threads_on_host(std::max<std::size_t>(1, m.hosts.size()), 0);
  for (const auto& e : m.executors) {
    int h = host_ix.count(e.host) ? host_ix[e.host] : 0;
    for (const auto& t : e.threads) {
      threads_on_host[h]++;
      all_threads.push_back({h, &t, thread_fifo_priority(e, t)});
    }
  }
  auto may_run_on = [](const Thread& t, int core) {
    return t.cores.empty() || std::find(t.cores.begin(), t.cores.end(), core) != t.cores.end();
  };
  std::vector<bool> host_has_pinned(threads_on_host.size(), false);
  for (const auto& o : all_threads) host_has_pinned[o.host] = host_has_pinned[o.host] || !o.t->cores.empty();
  auto dedicated_core = [&](int h, const Executor& e, const Thread& t) {
    if (t.cores.size() != 1) return false;
    const int core = t.cores[0];
    const std::optional<int> mine = thread_fifo_priority(e, t);
    for (const auto& o : all_threads) {
      if (o.t == &t || o.host != h || !may_run_on(*o.t, core)) continue;
      if (o.t->reservation) return false;
      if (!mine || o.fifo.value_or(0) >= *mine) return false;
    }
    return true;
  };
  v.supply.resize(m.executors.size());
  v.thread_be.resize(m.executors.size());
  v.thread_shared.resize(m.executors.size());
  v.foreign.resize(m.executors.size());
  v.foreign_ok.resize(m.executors.size());
  v.host_of.resize(m.executors.size());
  for (std::size_t x = 0; x < m.executors.size(); ++x) {
    const Executor& e = m.executors[x];
    int h = host_ix.count(e.host) ? host_ix[e.host] : 0;
    v.host_of[x] = h;
    const int cores = m.hosts.empty() ? 1 : m.hosts[h].cores;
    for (const auto& t : e.threads) {
      Supply s;
      bool be = false;
      for (const auto& tc : e.thread_classes)
        if (tc.name == t.thread_class && tc.kind == CriticalityClass::BestEffort) be = true;
      if (t.reservation) {
        s.reservation = t.reservation;
      } else {
        // (Unpinned threads are spread over the host's cores, so they may share one with a
        // pinned thread.)
        const bool dedicated =
            t.cores.size() == 1
                ? dedicated_core(h, e, t)
                : t.cores.empty() && ((threads_on_host[h] <= cores && !host_has_pinned[h]) ||
                                      unpinned_never_waits(m, x, static_cast<std::size_t>(&t - e.threads.data()), cores));
        v.thread_shared[x].push_back(!dedicated);
      }
      if (t.reservation) v.thread_shared[x].push_back(false);
      // Threads that may preempt or run ahead of a shared thread on its one core.
      std::vector<View::ThreadRef> foreign;
      // (An unpinned thread may be kept off the host's cores by any of the host's threads that
      // may run there: global SCHED_FIFO is work-conserving, so it waits only while threads of
      // at least its priority run.)
      bool ok = !t.reservation && t.cores.size() <= 1 && v.thread_shared[x].back();
      if (ok) {
        const int core = t.cores.empty() ? -1 : t.cores[0];
        for (std::size_t y = 0; y < m.executors.size() && ok; ++y) {
          const Executor& oe = m.executors[y];
          if ((host_ix.count(oe.host) ? host_ix[oe.host] : 0) != h) continue;
          for (std::size_t u = 0; u < oe.threads.size(); ++u) {
            const Thread& o = oe.threads[u];
            if (&o == &t || (core >= 0 && !may_run_on(o, core))) continue;
            if (o.reservation || y == x) {
              ok = false;
              break;
            }
            const std::optional<int> mine = thread_fifo_priority(e, t), theirs = thread_fifo_priority(oe, o);
            if (!mine || theirs.value_or(0) >= *mine)
              foreign.push_back({static_cast<int>(y), static_cast<int>(u)});
          }
        }
      }
      v.foreign[x].push_back(ok ? std::move(foreign) : std::vector<View::ThreadRef>{});
      v.foreign_ok[x].push_back(ok);
      v.supply[x].push_back(s);
      v.thread_be[x].push_back(be);
    }
  }
}

// Every callback as numbers (CbInfo): WCET, BCET, effective priority, executor, mutually
// exclusive group and thread mask.
void callback_info(const Model& m, View& v) {
  std::map<std::string, int> group_ix;
  for (std::size_t g = 0; g < m.groups.size(); ++g) group_ix[m.groups[g].name] = static_cast<int>(g);
  v.cbs.resize(m.callbacks.size());
  for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
    const Callback& cb = m.callbacks[i];
    CbInfo& c = v.cbs[i];
    c.wcet = cb.wcet;
    c.bcet = cb.best_case();
    c.prio = effective_priority(m, i).value_or(kNoPriority);
    c.executor = static_cast<int>(m.executor_index(m.node(cb.node).executor));
    auto g = group_ix.find(cb.group);
    c.mutex_group = (g != group_ix.end() && m.groups[g->second].type == GroupType::MutuallyExclusive) ? g->second : -1;
    c.threads = thread_mask(m.executors[c.executor], cb);
  }
}

// A path callback (not the last) in an implicit fusion set whose other inputs the chain does
// not contain: the chain waits there for inputs from elsewhere (Task::join_wait).
void fusion_wait(const Model& m, const std::vector<std::vector<std::size_t>>& fusion_sets, Task& t) {
  // Another timer, at any
  // phase, up to its period (the simulator shows the front hot path of the reference system
  // at 104–115 ms with the lidars out of phase, against a 72 ms bound that ignored the wait).
  // A branching chain that contains every input of the set joins there within its own
  // instance and is analysed like any branching chain (tests/cpp/sim/test_fusion.cpp).
  auto on_path = [&](std::size_t c) { return std::find(t.path.begin(), t.path.end(), static_cast<int>(c)) != t.path.end(); };
  for (const auto& set : fusion_sets) {
    if (!t.join_wait.empty() || std::all_of(set.begin(), set.end(), on_path)) continue;
    for (std::size_t j = 0; j + 1 < t.path.size() && t.join_wait.empty(); ++j)
      if (std::find(set.begin(), set.end(), static_cast<std::size_t>(t.path[j])) != set.end()) {
        std::string missing;
        for (std::size_t c : set)
          if (!on_path(c)) missing += (missing.empty() ? "'" : ", '") + m.callbacks[c].name + "'";
        t.join_wait = "its data waits at fusion callback '" + m.callbacks[t.path[j]].name +
                      "' for the other input(s) " + missing + " of node '" + m.callbacks[t.path[j]].node +
                      "' (an implicit fusion set), which the chain does not contain: this analysis does not " +
                      "charge that wait (up to a period of their source, at any phase); fp-mt, edf-mt, picas-st " +
                      "and ros-default-st do (join_wait.hpp)";
      }
  }
}

// The segments of a chain (linear: maximal runs on one executor; branching: one segment on one
// executor, else the segments of its paths).
void chain_segments(const Model& m, const Chain& ch, const View& v, const HopCost& cost, Task& t) {
  if (t.linear) {
    for (std::size_t j = 0; j < t.path.size(); ++j) {
      int c = t.path[j];
      Duration hc = j == 0 ? 0 : cost(ch.hops[j - 1]);
      if (j == 0 || v.cbs[c].executor != t.segments.back().executor) {
        Segment s;
        s.executor = v.cbs[c].executor;
        s.comm_before = hc;
        t.segments.push_back(s);
      } else {
        t.segments.back().intra_comm += hc;
        if (hc > 0) t.segments.back().delayed_hops++;
      }
      t.segments.back().cbs.push_back(c);
      t.segments.back().hop_into.push_back(t.segments.back().cbs.size() == 1 ? 0 : hc);
    }
  } else {
    // A branching chain is one segment when it stays on one executor (callbacks in
    // topological order, every hop's cost as suspension); otherwise it has none and the
    // analyses say they do not apply.
    bool one = std::all_of(t.path.begin(), t.path.end(),
                           [&](int c) { return v.cbs[c].executor == v.cbs[t.path.front()].executor; });
    if (one) {
      Segment s;
      s.executor = v.cbs[t.path.front()].executor;
      s.cbs = t.path;
      for (const auto& h : ch.hops) {
        const Duration hc = cost(h);
        s.intra_comm += hc;
        if (hc > 0) s.delayed_hops++;  // each a delay whose end is a full eligibility event
      }
      t.segments.push_back(s);
    } else {
      t.paths = path_segments(m, ch, v, cost);
    }
  }
}

// The task of declared chain ci: its path, the work one instance triggers (marking `on_chain`
// and `triggered`), its width, best case, fusion wait and segments.
Task chain_task(const Model& m, const View& v, std::size_t ci, const std::vector<std::vector<int>>& triggers,
                const std::vector<std::vector<std::size_t>>& fusion_sets, const HopCost& cost,
                std::vector<bool>& on_chain, std::vector<bool>& triggered) {
  const Chain& ch = m.chains[ci];
  Task t;
  t.name = ch.name;
  t.chain = static_cast<int>(ci);
  t.reported = true;
  t.T = ch.period;
  t.D = ch.deadline;
  t.cls = ch.criticality_class;
  t.linear = ch.is_linear();
  for (const auto& n : ch.callbacks) t.path.push_back(static_cast<int>(m.callback_index(n)));
  for (int c : t.path) on_chain[c] = true;
  const Callback& first = m.callbacks[t.path.front()];
  if (first.is_timer()) t.src_jitter = first.jitter;
  // A period given as a rate or a fraction is released at offset + round(k·P), not on the
  // whole-ns grid offset + k·T the relative phases below assume: its phase counts as free.
  if (first.is_timer() && first.phase == TimerPhase::Guaranteed && !first.grid_period().fractional()) {
    t.grid_offset = first.offset;
    t.grid_host = v.host_of[v.cbs[t.path.front()].executor];
  }
  // Work of one instance: the path plus everything its callbacks trigger (transitively).
  std::set<int> work(t.path.begin(), t.path.end());
  std::vector<int> stack(t.path.begin(), t.path.end());
  while (!stack.empty()) {
    int c = stack.back();
    stack.pop_back();
    for (int s : triggers[c]) {
      triggered[s] = true;
      if (work.insert(s).second) {
        t.extras.push_back(s);
        stack.push_back(s);
      }
    }
  }
  t.work = t.path;
  t.work.insert(t.work.end(), t.extras.begin(), t.extras.end());
  for (int c : t.path) t.path_wcet += v.cbs[c].wcet;
  // Width: parallel branches of the chain graph plus extras.
  if (t.linear) {
    t.width = 1;
  } else {
    int leaves = static_cast<int>(ch.paths().size());
    t.width = std::max(1, leaves);
  }
  t.width += static_cast<int>(t.extras.size());
  // Best case: a path runs its callbacks one after the other. Of a branching chain only the
  // paths that end at its last callback in topological order count: an instance is over at
  // the latest when every leaf is done, and at the earliest when that callback is (the
  // simulator records the instance when the last-listed callback completes).
  for (const auto& p : ch.paths()) {
    if (p.back() != ch.callbacks.back()) continue;
    Duration b = 0;
    for (const auto& n : p) b += v.cbs[m.callback_index(n)].bcet;
    t.bcrt_lower = std::max(t.bcrt_lower, b);
  }
  fusion_wait(m, fusion_sets, t);
  chain_segments(m, ch, v, cost, t);
  return t;
}

// Pseudo-tasks: timers that start no chain, with whatever they trigger.
void timer_pseudo_tasks(const Model& m, View& v, const std::vector<std::vector<int>>& triggers,
                        const std::vector<bool>& on_chain) {
  for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
    const Callback& cb = m.callbacks[i];
    if (on_chain[i] || !cb.is_timer()) continue;
    Task t;
    t.name = cb.name;
    t.reported = false;
    t.has_deadline = false;
    t.T = cb.period;
    t.D = cb.period;
    t.src_jitter = cb.jitter;
    if (cb.phase == TimerPhase::Guaranteed && !cb.grid_period().fractional()) {  // as for a chain's source
      t.grid_offset = cb.offset;
      t.grid_host = v.host_of[v.cbs[i].executor];
    }
    t.path = {static_cast<int>(i)};
    std::set<int> work{static_cast<int>(i)};
    std::vector<int> stack{static_cast<int>(i)};
    while (!stack.empty()) {
      int c = stack.back();
      stack.pop_back();
      for (int s : triggers[c])
        if (work.insert(s).second) {
          t.extras.push_back(s);
          stack.push_back(s);
        }
    }
    t.work = t.path;
    t.work.insert(t.work.end(), t.extras.begin(), t.extras.end());
    t.width = 1 + static_cast<int>(t.extras.size());
    t.path_wcet = cb.wcet;
    t.bcrt_lower = cb.best_case();
    Segment s;
    s.executor = v.cbs[i].executor;
    s.cbs = t.path;
    t.segments.push_back(s);
    v.tasks.push_back(std::move(t));
  }
}

}  // namespace

View build_view(const Model& m, const HopCost& cost) {
  View v;
  v.model = &m;
  thread_supply(m, v);
  callback_info(m, v);
  // Which callbacks a callback triggers when it publishes (every subscriber of every topic).
  std::vector<std::vector<int>> triggers(m.callbacks.size());
  for (std::size_t i = 0; i < m.callbacks.size(); ++i)
    for (const auto& t : m.callbacks[i].publishes)
      for (auto s : m.subscribers(t)) triggers[i].push_back(static_cast<int>(s));
  std::vector<bool> on_chain(m.callbacks.size(), false);
  std::vector<bool> triggered(m.callbacks.size(), false);
  const auto fusion_sets = implicit_fusion_sets(m);
  for (std::size_t ci = 0; ci < m.chains.size(); ++ci)
    v.tasks.push_back(chain_task(m, v, ci, triggers, fusion_sets, cost, on_chain, triggered));
  timer_pseudo_tasks(m, v, triggers, on_chain);
  resolve_joins(m, v, cost);  // the join term of chains that wait at a fusion node (join_wait.hpp)
  edf_keys(m, v);
  work_paths(m, v, cost);
  return v;
}

// A work path of a chain that waits at a fusion node (Task::join_work_before/_after): through
// its fusion input, the part after it, whose first hop is taken at the largest cost any member
// of the fusion set may publish with (as resolve_joins does for the chain's own successor);
// otherwise the whole path, which leaves the chain before the join and does not wait.
Duration placement_hop_cost(const Model& m, int from, int to, const HopCost& cost) {
  const Callback& a = m.callbacks[static_cast<std::size_t>(from)];
  const Callback& b = m.callbacks[static_cast<std::size_t>(to)];
  Hop h{a.name, b.name, b.topic, m.placement_comm(a, b), 0};
  if (const Topic* tp = m.topic(b.topic)) h.message_size = tp->size;
  return cost(h);
}

static void split_join_work_path(const Model& m, const View& v, Task& t, const std::vector<int>& p,
                                 const std::vector<int>& side, const HopCost& cost) {
  const auto at = std::find(p.begin(), p.end(), t.join->member);
  std::vector<Segment> segs;
  if (at == p.end()) {
    for (std::size_t j = 0; j < p.size(); ++j)
      append_path_piece(segs, p[j], j ? placement_hop_cost(m, p[j - 1], p[j], cost) : 0, side, v);
    t.join_work_before.push_back(std::move(segs));
    return;
  }
  const auto j0 = static_cast<std::size_t>(at - p.begin()) + 1;
  if (j0 >= p.size()) return;  // the path ends at the fusion input: inside the chain's own bound
  for (std::size_t j = j0; j < p.size(); ++j)
    append_path_piece(segs, p[j],
                      j == j0 ? fused_publication_hop(m, t.join->members, p[j0], cost)
                              : placement_hop_cost(m, p[j - 1], p[j], cost),
                      side, v);
  for (auto& sg : segs) sg.after_join = true;
  t.join_work_after.push_back(std::move(segs));
}

// Work paths (Task::work_paths): from the chain's first callback along every trigger edge
// (a publisher and a subscriber of its topic, both in the instance's work) to a callback that
// triggers nothing more in it. A callback triggered by several others is reached on each path
// (its release is the completion of one of them: the causal path argument of Task::paths).
std::optional<std::vector<std::vector<int>>> trigger_paths(const Model& m, const std::set<int>& in_work, int root,
                                                           std::string* why) {
  constexpr std::size_t kMaxWorkPaths = 256;
  std::vector<std::vector<int>> paths;
  std::vector<int> cur{root};
  bool cycle = false;
  std::function<void()> walk = [&]() {
    if (cycle || paths.size() > kMaxWorkPaths) return;
    const Callback& c = m.callbacks[static_cast<std::size_t>(cur.back())];
    bool leaf = true;
    for (const auto& topic : c.publishes)
      for (std::size_t sub : m.subscribers(topic)) {
        const int s = static_cast<int>(sub);
        if (!in_work.count(s)) continue;
        if (std::find(cur.begin(), cur.end(), s) != cur.end()) {
          cycle = true;
          return;
        }
        leaf = false;
        cur.push_back(s);
        walk();
        cur.pop_back();
      }
    if (leaf) paths.push_back(cur);
  };
  walk();
  if (cycle || paths.size() > kMaxWorkPaths) {
    if (why) *why = cycle ? "its instance's work has a topic cycle" : "its instance's work has too many paths";
    return std::nullopt;
  }
  return paths;
}

void work_paths(const Model& m, View& v, const HopCost& cost) {
  for (auto& t : v.tasks) {
    if (t.extras.empty()) continue;
    const std::set<int> in_work(t.work.begin(), t.work.end());
    const auto paths = trigger_paths(m, in_work, t.path.front(), &t.work_paths_why);
    if (!paths) continue;
    for (const auto& p : *paths) {
      std::vector<int> side;
      for (int c : t.path)
        if (std::find(p.begin(), p.end(), c) == p.end()) side.push_back(c);
      std::vector<Segment> segs;
      for (std::size_t j = 0; j < p.size(); ++j) {
        const int c = p[j];
        append_path_piece(segs, c, j > 0 ? placement_hop_cost(m, p[j - 1], c, cost) : 0, side, v);
      }
      t.work_paths.push_back(std::move(segs));
      if (t.join) split_join_work_path(m, v, t, p, side, cost);
    }
  }
}

// The EDF key range of every chain (Task::key_lo, key_hi), after the rule the simulator and
// the runtime share: a timer that starts chains queues its instance with release + the
// smallest deadline among them; a message carries the instance's deadline along the chain's
// hops (the simulator: the earliest of the chains whose hop it is, the runtime: its source's),
// so a callback instance of chain i (release r) is keyed in [r + key_lo, r + D_i]. A callback's
// queue is FIFO and keyed by its oldest message: at a callback the chain shares with other
// chains (a merge), their earlier messages keep it keyed with THEIR deadlines, at most
// (arrival of the chain's own message, <= r + min(T_i, key_lo)) + D_j, while the chain's
// waits behind them — key_hi. A publisher whose hop into a path callback is on no chain sends
// messages without a deadline (queued last): then there is no key bound (edf_unkeyed).
namespace {
bool hop_on(const Chain& ch, const std::string& from, const std::string& to) {
  if (ch.is_linear()) {
    for (std::size_t j = 1; j < ch.callbacks.size(); ++j)
      if (ch.callbacks[j - 1] == from && ch.callbacks[j] == to) return true;
    return false;
  }
  return std::any_of(ch.hops.begin(), ch.hops.end(), [&](const Hop& h) { return h.from == from && h.to == to; });
}
}  // namespace

Duration edf_key_hi(const Model& m, const Task& t, const std::function<bool(std::size_t)>& same_message,
                    std::string* unkeyed) {
  Duration hi = t.D;
  if (!t.has_deadline || t.chain < 0) return hi;
  const Chain& ch = m.chains[static_cast<std::size_t>(t.chain)];
  for (std::size_t j = 1; j < t.path.size(); ++j) {
    const Callback& c = m.callbacks[static_cast<std::size_t>(t.path[j])];
    if (c.topic.empty()) continue;
    for (std::size_t ui = 0; ui < m.callbacks.size(); ++ui) {
      const Callback& u = m.callbacks[ui];
      if (std::find(u.publishes.begin(), u.publishes.end(), c.topic) == u.publishes.end()) continue;
      if (hop_on(ch, u.name, c.name) || (same_message && same_message(ui))) continue;
      Duration dj = -1;
      for (const auto& other : m.chains)
        if (hop_on(other, u.name, c.name)) dj = std::max(dj, other.deadline);
      if (dj < 0) {
        if (unkeyed)
          *unkeyed = "callback '" + c.name + "' of chain '" + t.name + "' also takes messages of '" + u.name +
                     "', which no chain passes on to it: they carry no deadline and are queued last, ahead of "
                     "the chain's own (no EDF key bound)";
        continue;
      }
      hi = std::max(hi, std::min(t.T, t.key_lo) + dj);
    }
  }
  return hi;
}

void edf_keys(const Model& m, View& v) {
  for (auto& t : v.tasks) {
    t.key_lo = t.key_hi = t.D;
    if (!t.has_deadline || t.chain < 0) continue;
    for (const auto& o : v.tasks)
      if (o.chain >= 0 && o.has_deadline && o.path.front() == t.path.front()) t.key_lo = std::min(t.key_lo, o.D);
  }
  for (auto& t : v.tasks)
    if (t.has_deadline && t.chain >= 0) t.key_hi = edf_key_hi(m, t, {}, &t.edf_unkeyed);
}

AnalysisResult collect_result(const std::string& analysis, const std::vector<Task>& tasks,
                              const std::vector<Duration>& R, const std::vector<std::string>& failed) {
  AnalysisResult res;
  res.analysis = analysis;
  res.schedulable = true;
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    const Task& t = tasks[k];
    if (!t.reported) continue;
    ChainBound b;
    b.chain = t.name;
    b.deadline = t.D;
    b.bcrt_bound = t.bcrt_lower;
    if (failed[k].empty()) {
      b.bounded = true;
      b.wcrt_bound = R[k];
      b.slack = t.D - R[k];
      b.schedulable = R[k] <= t.D;
      if (!b.schedulable) b.reason = "bound exceeds the deadline by " + std::to_string(R[k] - t.D) + " ns";
    } else {
      b.reason = failed[k];  // unbounded: slack 0, not schedulable
    }
    res.schedulable = res.schedulable && b.schedulable;
    res.chains.push_back(std::move(b));
  }
  return res;
}

}  // namespace chainrt::detail
