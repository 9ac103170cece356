// PiCAS configuration synthesis: P1–P4 (see synthesize.hpp for the rules and the one
// deviation from the workshop paper's wording).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/synth/synthesize.hpp"

namespace chainrt::synth {

namespace {

std::string pct(double u) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * u);
  return buf;
}

// Nodes of a chain in the chain's callback order, each once.
std::vector<std::size_t> chain_nodes(const Model& m, const Chain& c) {
  std::vector<std::size_t> out;
  for (const auto& name : c.callbacks) {
    const auto ix = static_cast<std::size_t>(&m.node(m.callback(name).node) - m.nodes.data());
    if (std::find(out.begin(), out.end(), ix) == out.end()) out.push_back(ix);
  }
  return out;
}

// Utilisation of each node: Σ wcet / release period of its callbacks.
std::vector<double> node_utilisation(const Model& m) {
  const auto periods = release_periods(m);
  std::vector<double> u(m.nodes.size(), 0.0);
  for (std::size_t c = 0; c < m.callbacks.size(); ++c)
    if (periods[c] > 0)
      u[&m.node(m.callbacks[c].node) - m.nodes.data()] += static_cast<double>(m.callbacks[c].wcet) / periods[c];
  return u;
}

void check_synthesizable(const Model& m, int cores) {
  if (m.chains.empty()) throw std::invalid_argument("the model has no chains to synthesize a configuration for");
  if (m.hosts.size() > 1)
    throw std::invalid_argument("the model has " + std::to_string(m.hosts.size()) +
                                " hosts; synthesis places nodes on the cores of one host");
  if (cores < 1) throw std::invalid_argument("cores must be at least 1");
  if (cores > 64) throw std::invalid_argument("at most 64 cores are supported");
}

int cores_of(const Model& m, const Options& opt) {
  if (opt.cores > 0) return opt.cores;
  return m.hosts.empty() ? 1 : m.hosts.front().cores;
}

}  // namespace

std::vector<int> chain_order(const Model& m) {
  std::vector<int> order(m.chains.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Chain& x = m.chains[a];
    const Chain& y = m.chains[b];
    const bool xrt = x.criticality_class == CriticalityClass::RealTime;
    const bool yrt = y.criticality_class == CriticalityClass::RealTime;
    if (xrt != yrt) return xrt;
    if (x.criticality != y.criticality) return x.criticality > y.criticality;
    const int xp = x.priority.value_or(std::numeric_limits<int>::min());
    const int yp = y.priority.value_or(std::numeric_limits<int>::min());
    if (xp != yp) return xp > yp;
    return x.deadline < y.deadline;
  });
  return order;
}

std::vector<int> callback_priorities(const Model& m, const std::vector<int>& order) {
  // Ranks from the top: chain by chain in P1 order, each chain from its LAST callback to its
  // first (P2); a callback already ranked by a more critical chain keeps its rank.
  const int n = static_cast<int>(m.callbacks.size());
  std::vector<int> prio(n, 0);
  int next = n;
  for (int k : order) {
    const Chain& c = m.chains[k];
    for (auto it = c.callbacks.rbegin(); it != c.callbacks.rend(); ++it) {
      const std::size_t cb = m.callback_index(*it);
      if (prio[cb] == 0) prio[cb] = next--;
    }
  }
  for (int cb = 0; cb < n; ++cb)
    if (prio[cb] == 0) prio[cb] = next--;
  return prio;
}

std::vector<Duration> release_periods(const Model& m) {
  const std::size_t n = m.callbacks.size();
  std::vector<Duration> period(n, 0);
  for (std::size_t c = 0; c < n; ++c)
    if (m.callbacks[c].kind == CallbackKind::Timer) period[c] = m.callbacks[c].period;
  // Propagate along topics; the shortest publisher period wins. At most n rounds (a path of
  // publications visits every callback at most once before it repeats).
  for (std::size_t round = 0; round < n; ++round) {
    bool changed = false;
    for (std::size_t c = 0; c < n; ++c) {
      if (period[c] == 0) continue;
      for (const auto& topic : m.callbacks[c].publishes)
        for (std::size_t s : m.subscribers(topic))
          if (m.callbacks[s].kind != CallbackKind::Timer && (period[s] == 0 || period[c] < period[s])) {
            period[s] = period[c];
            changed = true;
          }
    }
    if (!changed) break;
  }
  // Chains may declare a period for a source that publishes nothing upstream of them.
  for (const auto& ch : m.chains)
    for (const auto& name : ch.callbacks) {
      const std::size_t c = m.callback_index(name);
      if (period[c] == 0 && ch.period > 0) period[c] = ch.period;
    }
  return period;
}

Placement place_nodes(const Model& m, const std::vector<int>& order, int cores, double capacity,
                      std::vector<std::string>* decisions) {
  const auto u = node_utilisation(m);
  Placement p;
  p.core.assign(m.nodes.size(), -1);
  p.chain.assign(m.nodes.size(), -1);
  std::vector<double> load(cores, 0.0);
  auto least_loaded = [&](double need, bool must_fit) {
    int best = -1;
    for (int k = 0; k < cores; ++k)
      if ((!must_fit || load[k] + need <= capacity + 1e-12) && (best < 0 || load[k] < load[best])) best = k;
    return best;
  };
  for (int k : order) {
    const Chain& c = m.chains[k];
    std::vector<std::size_t> todo;
    std::map<int, int> placed_on;  // core -> number of the chain's nodes already there
    for (std::size_t n : chain_nodes(m, c)) {
      if (p.core[n] < 0) todo.push_back(n);
      else ++placed_on[p.core[n]];
    }
    if (todo.empty()) continue;
    double need = 0;
    for (auto n : todo) need += u[n];
    // The core that already holds most of the chain's nodes, if the rest fits there.
    int where = -1;
    int most = 0;
    for (auto [core, count] : placed_on)
      if (count > most && load[core] + need <= capacity + 1e-12) {
        most = count;
        where = core;
      }
    std::string how = "with its nodes already there";
    if (where < 0) {
      where = least_loaded(need, true);
      how = "least loaded core that fits the whole chain";
    }
    if (where >= 0) {
      for (auto n : todo) {
        p.core[n] = where;
        p.chain[n] = k;
      }
      load[where] += need;
      if (decisions)
        decisions->push_back("chain '" + c.name + "': " + std::to_string(todo.size()) + " node(s), utilisation " +
                             pct(need) + " -> core " + std::to_string(where) + " (" + how + ", load now " +
                             pct(load[where]) + ")");
      continue;
    }
    // Split: node by node, worst fit (the chain does not fit on any one core).
    for (auto n : todo) {
      int k2 = least_loaded(u[n], false);
      p.core[n] = k2;
      p.chain[n] = k;
      load[k2] += u[n];
      if (decisions)
        decisions->push_back("chain '" + c.name + "' does not fit on one core (needs " + pct(need) + "): node '" +
                             m.nodes[n].name + "' -> core " + std::to_string(k2) + " (least loaded)");
    }
  }
  // Nodes of no chain: worst fit, one summary line per core.
  std::map<int, std::string> unchained;
  for (std::size_t n = 0; n < m.nodes.size(); ++n) {
    if (p.core[n] >= 0) continue;
    int k2 = least_loaded(u[n], false);
    p.core[n] = k2;
    load[k2] += u[n];
    auto& list = unchained[k2];
    list += (list.empty() ? "" : ", ") + m.nodes[n].name;
  }
  if (decisions)
    for (const auto& [core, list] : unchained)
      decisions->push_back("nodes in no chain -> core " + std::to_string(core) + " (least loaded, one by one, load now " +
                           pct(load[core]) + "): " + list);
  return p;
}

Model build(const Model& m, const std::vector<int>& order, const Placement& p, int cores, ExecutorLayout layout,
            int fifo_base) {
  Model out = m;
  const auto prio = callback_priorities(m, order);
  for (std::size_t c = 0; c < out.callbacks.size(); ++c) out.callbacks[c].priority = prio[c];
  for (auto& ch : out.chains) ch.priority.reset();
  // P1 also as chain priorities (used by cros-rt and reported to users): top = #chains.
  for (std::size_t r = 0; r < order.size(); ++r) out.chains[order[r]].priority = static_cast<int>(order.size() - r);

  std::string host = m.hosts.empty() ? std::string("localhost") : m.hosts.front().name;
  if (out.hosts.empty()) out.hosts.push_back(Host{host, cores});
  out.hosts.front().cores = std::max(out.hosts.front().cores, cores);

  // Executor key per node: its core, plus its placing chain for PerChain.
  std::map<std::pair<int, int>, std::vector<std::size_t>> groups;  // (core, chain rank) -> nodes
  std::vector<int> rank_of(m.chains.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int>(r);
  for (std::size_t n = 0; n < m.nodes.size(); ++n) {
    int key = 0;
    if (layout == ExecutorLayout::PerChain) key = p.chain[n] < 0 ? static_cast<int>(order.size()) : rank_of[p.chain[n]];
    groups[{p.core[n], key}].push_back(n);
  }
  // Callbacks per node, for the executors' priorities (P3).
  std::map<std::string, int> node_top;
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    auto& t = node_top[m.callbacks[c].node];
    t = std::max(t, prio[c]);
  }
  struct Ex {
    std::string name;
    int core;
    int priority;
    std::vector<std::size_t> nodes;
  };
  std::vector<Ex> exs;
  for (auto& [key, nodes] : groups) {
    Ex e;
    e.core = key.first;
    e.priority = 0;
    for (auto n : nodes) e.priority = std::max(e.priority, node_top[m.nodes[n].name]);
    e.nodes = nodes;
    if (layout == ExecutorLayout::PerChain) {
      const std::string who = key.second < static_cast<int>(order.size()) ? m.chains[order[key.second]].name : "other";
      e.name = who + "_core" + std::to_string(key.first);
    } else {
      e.name = "core" + std::to_string(key.first);
    }
    exs.push_back(std::move(e));
  }
  // SCHED_FIFO per core by executor priority (P3): the lowest gets fifo_base.
  std::map<int, std::vector<Ex*>> per_core;
  for (auto& e : exs) per_core[e.core].push_back(&e);
  std::map<std::string, int> fifo;
  for (auto& [core, list] : per_core) {
    std::sort(list.begin(), list.end(), [](const Ex* a, const Ex* b) { return a->priority < b->priority; });
    for (std::size_t i = 0; i < list.size(); ++i) fifo[list[i]->name] = fifo_base + static_cast<int>(i);
  }
  if (!exs.empty()) {
    int top = 0;
    for (auto& [name, f] : fifo) top = std::max(top, f);
    if (top > 98)
      throw std::invalid_argument("too many executors on one core for SCHED_FIFO priorities from " +
                                  std::to_string(fifo_base));
  }
  std::string process = m.executors.empty() ? std::string() : m.executors.front().process;
  // The executors' own time per dispatch is the executor implementation's: each new executor
  // charges the largest of the model's.
  Duration overhead = 0;
  for (const auto& e : m.executors) overhead = std::max(overhead, e.dispatch_overhead);
  out.executors.clear();
  std::map<std::string, std::string> node_exec;
  for (const auto& e : exs) {
    Executor x;
    x.name = e.name;
    x.host = host;
    x.process = process.empty() ? std::string("synthesized") : process;
    x.policy = Policy::Picas;
    x.dispatch_overhead = overhead;
    // The model's executor priority is its threads' SCHED_FIFO priority (docs/model.md), which
    // also goes to its middleware threads (fastdds.py): the P3 rank on its core, not the rank
    // of its top callback (which only orders the executors).
    x.priority = fifo[e.name];
    Thread t;
    t.name = "t0";
    t.cores = {e.core};
    t.fifo_priority = fifo[e.name];
    x.threads.push_back(t);
    out.executors.push_back(x);
    for (auto n : e.nodes) node_exec[m.nodes[n].name] = e.name;
  }
  for (auto& n : out.nodes) n.executor = node_exec.at(n.name);
  // Affinities named threads of the old executors; a synthesized executor has one thread.
  for (auto& cb : out.callbacks) cb.affinity.clear();
  // validate() derives the hops' communication kinds from the new placement.
  validate(out, out.name);
  return out;
}

bool better(const Score& a, const Score& b, Objective objective) {
  if (a.applicable != b.applicable) return a.applicable;
  if (a.schedulable != b.schedulable) return a.schedulable;
  if (a.schedulable_chains != b.schedulable_chains) return a.schedulable_chains > b.schedulable_chains;
  if (objective == Objective::Slack) return a.min_slack > b.min_slack + 1e-12;
  for (std::size_t i = 0; i < a.ratio.size() && i < b.ratio.size(); ++i) {
    if (a.ratio[i] < b.ratio[i] - 1e-12) return true;
    if (a.ratio[i] > b.ratio[i] + 1e-12) return false;
  }
  return false;
}

namespace {
// The exact analysis a configuration is also judged by when no analysis is named: the
// schedule-abstraction graph (Nasri & Brandenburg, RTSS 2017), which covers one single-threaded
// executor per core with guaranteed timer phases (the PerCore layout) and certifies what the
// default analyses' free phases cannot (timers the release grid keeps aligned).
constexpr const char* kExactAnalysis = "sag";

Score judge_by(const Model& s, const std::vector<int>& order, const ResponseTimeAnalysis* a) {
  Score sc;
  sc.analysis = a->name();
  if (!a->applicable(s, &sc.why)) return sc;
  sc.applicable = true;
  sc.result = a->analyze(s);
  sc.schedulable = sc.result.schedulable;
  sc.min_slack = std::numeric_limits<double>::infinity();
  for (int k : order) {
    const ChainBound* b = sc.result.find(s.chains[k].name);
    double r = std::numeric_limits<double>::infinity();
    if (b && b->bounded && b->deadline > 0) r = static_cast<double>(b->wcrt_bound) / static_cast<double>(b->deadline);
    if (b && b->schedulable) ++sc.schedulable_chains;
    sc.ratio.push_back(r);
    sc.min_slack = std::min(sc.min_slack, 1.0 - r);
  }
  return sc;
}
}  // namespace

Score judge(const Model& s, const std::vector<int>& order, const std::string& analysis) {
  if (!analysis.empty()) {
    const ResponseTimeAnalysis* a = find_analysis(analysis);
    if (!a) throw std::invalid_argument("unknown analysis '" + analysis + "'");
    return judge_by(s, order, a);
  }
  Score sc;
  const ResponseTimeAnalysis* a = default_analysis(s, &sc.why);
  if (a) sc = judge_by(s, order, a);
  if (sc.schedulable) return sc;
  // automatic: the exact analysis' judgement where it covers the configuration and certifies more
  const ResponseTimeAnalysis* exact = find_analysis(kExactAnalysis);
  if (!exact || exact == a) return sc;
  Score e = judge_by(s, order, exact);
  return e.applicable && better(e, sc, Objective::Slack) ? e : sc;
}

namespace {

std::vector<ExecutorLayout> layouts_of(ExecutorLayout l) {
  if (l == ExecutorLayout::Auto) return {ExecutorLayout::PerChain, ExecutorLayout::PerCore};
  return {l};
}

const char* layout_name(ExecutorLayout l) {
  return l == ExecutorLayout::PerChain ? "one executor per chain and core" : "one executor per core";
}

}  // namespace

Synthesis picas(const Model& m, const Options& opt) {
  const int cores = cores_of(m, opt);
  check_synthesizable(m, cores);
  Synthesis best;
  bool have = false;
  std::uint64_t evaluated = 0;
  const auto order = chain_order(m);
  std::vector<std::string> base;
  {
    std::string line = "chain order (P1: class, criticality, priority, deadline):";
    for (int k : order) line += " " + m.chains[k].name;
    base.push_back(line);
  }
  std::vector<std::string> placement_log;
  const Placement p = place_nodes(m, order, cores, opt.capacity, &placement_log);
  for (auto& l : placement_log) base.push_back(l);
  for (ExecutorLayout l : layouts_of(opt.layout)) {
    Synthesis s;
    s.layout = l;
    s.model = build(m, order, p, cores, l, opt.fifo_base);
    s.score = judge(s.model, order, opt.analysis);
    ++evaluated;
    if (!have || better(s.score, best.score, opt.objective)) {
      best = std::move(s);
      have = true;
    }
  }
  best.evaluated = evaluated;
  best.decisions = base;
  best.decisions.push_back(std::string("executors: ") + layout_name(best.layout) +
                           (opt.layout == ExecutorLayout::Auto ? " (the better of both layouts by the analysis)" : ""));
  best.model.name = m.name + "-picas-" + std::to_string(cores) + "cores";
  return best;
}

Synthesis exhaustive(const Model& m, const Options& opt, std::uint64_t max_configurations) {
  const int cores = cores_of(m, opt);
  check_synthesizable(m, cores);
  const std::size_t n = m.chains.size();
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < n; ++i) {
    count *= static_cast<std::uint64_t>(cores) * (i + 1);
    if (count > max_configurations)
      throw std::invalid_argument("exhaustive search over " + std::to_string(n) + " chains and " +
                                  std::to_string(cores) + " cores exceeds " + std::to_string(max_configurations) +
                                  " configurations");
  }
  const auto layouts = layouts_of(opt.layout);
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  Synthesis best;
  bool have = false;
  std::uint64_t evaluated = 0;
  const auto u = node_utilisation(m);
  // Fixed across configurations: each chain's nodes, and the order every configuration is
  // judged in (the model's own P1 order, so that all are compared alike).
  std::vector<std::vector<std::size_t>> nodes_of(n);
  for (std::size_t k = 0; k < n; ++k) nodes_of[k] = chain_nodes(m, m.chains[k]);
  const auto judge_order = chain_order(m);
  do {
    std::vector<int> assign(n, 0);
    while (true) {
      // Nodes follow the first chain (in `perm` order) that contains them.
      Placement p;
      p.core.assign(m.nodes.size(), -1);
      p.chain.assign(m.nodes.size(), -1);
      std::vector<double> load(cores, 0.0);
      for (int k : perm)
        for (auto nd : nodes_of[k])
          if (p.core[nd] < 0) {
            p.core[nd] = assign[k];
            p.chain[nd] = k;
            load[assign[k]] += u[nd];
          }
      for (std::size_t nd = 0; nd < m.nodes.size(); ++nd)
        if (p.core[nd] < 0) {
          int k2 = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
          p.core[nd] = k2;
          load[k2] += u[nd];
        }
      for (ExecutorLayout l : layouts) {
        Synthesis s;
        s.layout = l;
        s.model = build(m, perm, p, cores, l, opt.fifo_base);
        s.score = judge(s.model, judge_order, opt.analysis);
        ++evaluated;
        if (!have || better(s.score, best.score, opt.objective)) {
          best = std::move(s);
          have = true;
        }
      }
      std::size_t i = 0;
      while (i < n && ++assign[i] == cores) assign[i++] = 0;
      if (i == n) break;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  best.evaluated = evaluated;
  best.decisions.push_back("exhaustive search: " + std::to_string(evaluated) +
                           " configurations (chain -> core assignments x chain priority orders x layouts)");
  best.model.name = m.name + "-exhaustive-" + std::to_string(cores) + "cores";
  return best;
}

}  // namespace chainrt::synth
