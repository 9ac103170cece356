// Shared accelerators in the analyses (accelerator.hpp): the device bounds and the model the
// chain engine analyses for the CPU side.
//
// Deviation from Kim et al. (JSA 2018), said here as the other analyses do: the paper's tasks
// are sporadic tasks on partitioned fixed-priority cores, its requests counted per task with
// ⌈w/T⌉ + 1; here a request comes from a callback piece of a chain (model/accelerator.hpp) and
// is counted per chain instance that can be in flight, with the requesting chain's own
// instance left out (⌈w/T⌉ for its later ones), equal priorities taken in arrival order (only
// the one queued when it arrives is ahead), and the server's overhead per request charged both in
// the device's service time and as CPU work on the server's core. The paper's text is not in
// shared/papers: the terms are re-derived from its stated design (one lower-priority request in
// progress, the higher-priority requests, the overhead), not copied.
#include "accelerator.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "fixed_point.hpp"

namespace chainrt::detail {

// ---- the terms ----------------------------------------------------------------------------------

Duration server_lp_blocking(const std::vector<Duration>& lp_service) {
  Duration b = 0;
  for (Duration s : lp_service) b = std::max(b, s);
  return b;
}

Duration requests_in_window(Duration w, Duration T, Duration J, Urgency u) {
  const Duration l = w + std::max<Duration>(0, J);
  const Duration n = l <= 0 ? 0 : (l + T - 1) / T;  // ⌈(w + J)/T⌉
  switch (u) {
    case Urgency::Higher: return n + 1;
    case Urgency::HigherOwn: return n;
    case Urgency::Equal: return 1;
    case Urgency::EqualOwn: return 0;
  }
  return n + 1;
}

Duration server_hp_requests(Duration w, const std::vector<HpSite>& hp) {
  Duration sum = 0;
  for (const HpSite& h : hp) sum += requests_in_window(w, h.period, h.jitter, h.urgency) * h.service;
  return sum;
}

std::optional<Duration> server_waiting_time(Duration lp_blocking, const std::vector<HpSite>& hp, Duration limit) {
  const auto r = least_fixed_point(0, limit, [&](Duration w) { return lp_blocking + server_hp_requests(w, hp); });
  return r.value;
}

std::optional<Duration> block_preemptive_response(Duration lp_blocking, Duration overhead, Duration segment,
                                                  const std::vector<HpSite>& hp, Duration limit) {
  const Duration own = lp_blocking + overhead + segment;
  const auto r = least_fixed_point(own, limit, [&](Duration R) { return own + server_hp_requests(R, hp); });
  return r.value;
}

Duration server_request_response(Duration wait, Duration overhead, Duration segment) {
  return wait + overhead + segment;
}

Duration fifo_blocking(const std::vector<Duration>& per_thread, Duration own) {
  Duration sum = 0;
  for (Duration g : per_thread) sum += g;
  return sum - own;
}

Duration direct_request_response(Duration blocking, Duration segment) { return blocking + segment; }

Duration suspension_oblivious_wcet(Duration cpu, const std::vector<Duration>& call_responses) {
  Duration w = cpu;
  for (Duration r : call_responses) w += r;
  return w;
}

// ---- the hook -----------------------------------------------------------------------------------

namespace {

constexpr const char* kEngines = "fp-mt, picas-st and edf-mt";

std::string quote(const std::string& s) { return "'" + s + "'"; }

bool shares_core(const std::vector<int>& a, const std::vector<int>& b) {
  if (a.empty() || b.empty()) return true;
  return std::any_of(a.begin(), a.end(), [&](int c) { return std::find(b.begin(), b.end(), c) != b.end(); });
}

// The server threads must run their overhead whenever they have some: above every thread that
// may share their core (no reservation, no equal SCHED_FIFO priority, no other server there),
// on a host without a platform blackout curve.
std::string server_placement(const Model& m) {
  for (const Host& h : m.hosts)
    for (std::size_t i = 0; i < h.accelerators.size(); ++i) {
      const Accelerator& a = h.accelerators[i];
      if (a.access != AcceleratorAccess::Server) continue;
      const std::string who = "the server of accelerator " + quote(a.name) + " on host " + quote(h.name);
      if (!h.blackout.empty())
        return who + " runs on a host with a platform blackout curve, which the server bounds do not charge";
      for (std::size_t j = 0; j < h.accelerators.size(); ++j)
        if (j != i && h.accelerators[j].access == AcceleratorAccess::Server &&
            shares_core(a.server_cores, h.accelerators[j].server_cores))
          return who + " may share a core with the server of " + quote(h.accelerators[j].name) +
                 " (give each server a core of its own)";
      for (const Executor& e : m.executors) {
        if (e.host != h.name) continue;
        for (const Thread& t : e.threads) {
          if (!shares_core(a.server_cores, t.cores)) continue;
          if (t.reservation)
            return who + " may share a core with thread " + quote(t.name) + " of " + quote(e.name) +
                   ", which has a SCHED_DEADLINE reservation (it would preempt the server)";
          const auto p = thread_fifo_priority(e, t);
          if (p && *p >= *a.server_priority)
            return who + " (SCHED_FIFO " + std::to_string(*a.server_priority) + ") may share a core with thread " +
                   quote(t.name) + " of " + quote(e.name) + " at SCHED_FIFO " + std::to_string(*p) +
                   ": the server's priority must be above every thread on its core";
        }
      }
    }
  return "";
}

// The chains whose path contains callback `c` of the expanded model.
std::vector<std::size_t> chains_through(const Model& x, const std::string& c) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < x.chains.size(); ++i)
    if (std::find(x.chains[i].callbacks.begin(), x.chains[i].callbacks.end(), c) != x.chains[i].callbacks.end())
      out.push_back(i);
  return out;
}

bool has_hop(const Chain& ch, const std::string& from, const std::string& to) {
  return std::any_of(ch.hops.begin(), ch.hops.end(), [&](const Hop& h) { return h.from == from && h.to == to; });
}

// Every execution of request site `p` belongs to an instance of a chain through it: walking back
// from p along the topics that release it, every publisher reaches its subscriber over a hop of
// one of those chains. Else the reason.
std::string uncovered(const Model& x, std::size_t p, const std::vector<std::size_t>& chains) {
  const std::string& name = x.callbacks[p].name;
  if (chains.empty()) return "callback " + quote(name) + " requests a server-mode accelerator but is on no chain";
  std::vector<std::size_t> todo{p};
  std::set<std::size_t> seen{p};
  while (!todo.empty()) {
    const std::size_t q = todo.back();
    todo.pop_back();
    const Callback& cb = x.callbacks[q];
    if (cb.is_timer() || cb.topic.empty()) continue;
    for (std::size_t u = 0; u < x.callbacks.size(); ++u) {
      const auto& pubs = x.callbacks[u].publishes;
      if (std::find(pubs.begin(), pubs.end(), cb.topic) == pubs.end()) continue;
      const bool on_chain = std::any_of(chains.begin(), chains.end(),
                                        [&](std::size_t i) { return has_hop(x.chains[i], x.callbacks[u].name, cb.name); });
      if (!on_chain)
        return "callback " + quote(name) + " requests a server-mode accelerator and is also released by " +
               quote(x.callbacks[u].name) + " (topic " + quote(cb.topic) +
               "), not over a hop of a chain through it: its requests cannot be counted per chain instance";
      if (seen.insert(u).second) todo.push_back(u);
    }
  }
  return "";
}

// How late a release of the chain may come: its first callback's jitter when a timer.
Duration release_jitter(const Model& x, const Chain& ch) {
  const Callback& first = x.callback(ch.callbacks.front());
  return first.is_timer() ? first.jitter : 0;
}

// A place where requests are issued on a server-mode accelerator.
struct Site {
  std::size_t piece = 0;               // callback of the expanded model
  std::size_t device = 0;              // accelerator_index
  Duration segment = 0;                // G (worst case)
  Duration chunk = 0;                  // its longest non-preemptive chunk (block preemption)
  std::optional<int> priority;         // effective priority in the expanded model
  std::vector<std::size_t> chains;     // chains through it
};

// Is site `s` at least as urgent as `p` at the server (priority, then arrival): higher or equal
// priority; a site without priority is last (equal to the others without).
bool at_least_as_urgent(const Site& s, const Site& p) {
  if (!s.priority) return !p.priority;
  return !p.priority || *s.priority >= *p.priority;
}

// Direct access: each callback's segments as suspension-oblivious execution, each request
// blocked first come first served behind every other thread's largest segment (FIFO blocking).
void bound_direct_calls(const Model& user, const AcceleratedModel& am, const std::vector<AcceleratorRef>& devices,
                        Model& x) {
  // every thread's largest segment per device (a thread has one request at most)
  // [device][executor][thread]
  std::vector<std::vector<std::vector<Duration>>> largest(devices.size());
  for (auto& d : largest) {
    d.resize(x.executors.size());
    for (std::size_t e = 0; e < x.executors.size(); ++e) d[e].assign(x.executors[e].threads.size(), 0);
  }
  for (std::size_t c = 0; c < x.callbacks.size(); ++c)
    for (const DeviceCall& call : am.pieces[c].direct) {
      const std::size_t d = accelerator_index(user, call.accelerator);
      const std::size_t e = x.executor_index(x.node(x.callbacks[c].node).executor);
      const std::uint64_t mask = thread_mask(x.executors[e], x.callbacks[c]);
      for (std::size_t t = 0; t < x.executors[e].threads.size() && t < 64; ++t)
        if (mask >> t & 1) largest[d][e][t] = std::max(largest[d][e][t], am.segment(user, call, c).wcet());
    }
  for (std::size_t c = 0; c < x.callbacks.size(); ++c) {
    if (am.pieces[c].direct.empty()) continue;
    Callback& cb = x.callbacks[c];
    const std::size_t e = x.executor_index(x.node(cb.node).executor);
    const std::uint64_t mask = thread_mask(x.executors[e], cb);
    std::vector<Duration> responses;
    Duration best = cb.best_case();
    for (const DeviceCall& call : am.pieces[c].direct) {
      const std::size_t d = accelerator_index(user, call.accelerator);
      std::vector<Duration> per_thread;
      const std::size_t host = call.accelerator.host;
      for (std::size_t ee = 0; ee < x.executors.size(); ++ee)
        if (x.executors[ee].host == x.hosts[host].name)
          per_thread.insert(per_thread.end(), largest[d][ee].begin(), largest[d][ee].end());
      Duration own = std::numeric_limits<Duration>::max();
      for (std::size_t t = 0; t < x.executors[e].threads.size() && t < 64; ++t)
        if (mask >> t & 1) own = std::min(own, largest[d][e][t]);
      const AcceleratorSegment& seg = am.segment(user, call, c);
      responses.push_back(direct_request_response(fifo_blocking(per_thread, own), seg.wcet()));
      best += seg.bcet();
    }
    cb.wcet = suspension_oblivious_wcet(cb.wcet, responses);
    cb.bcet = best;
  }

}

// The server side as the engine sees it: continuations as subscriptions, each server's
// overhead as top-priority work on its cores.
void add_server_work(const Model& user, const AcceleratedModel& am, const std::vector<AcceleratorRef>& devices,
                     const std::vector<Site>& sites, Model& x) {
  // The continuations as the engine's subscriptions (counted per input, never dropped: one per
  // instance in flight); the server threads' overhead as top-priority work on their cores: per
  // site and chain a timer of the chain's period released anywhere in it (jitter T − 1), so that
  // the engine never gives it a window and counts its executions in any window of length l as
  // ⌈l/T⌉ + 2 (executions_in_window), at least the requests of that chain served in it.
  for (std::size_t c = 0; c < x.callbacks.size(); ++c)
    if (am.pieces[c].index > 0) {
      x.callbacks[c].kind = CallbackKind::Subscription;
      x.callbacks[c].queue_depth = 1;
    }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const Accelerator& acc = accelerator_of(user, devices[d]);
    if (acc.access != AcceleratorAccess::Server || acc.server_overhead <= 0) continue;
    const std::string host = x.hosts[devices[d].host].name;
    const std::string tag = "accelerator server " + host + "/" + acc.name;
    Executor e;
    e.name = tag;
    e.host = host;
    e.process = tag;
    e.policy = x.executors.empty() ? Policy::FixedPriority : x.executors.front().policy;
    e.threads.push_back(Thread{"t0", acc.server_cores, acc.server_priority, std::nullopt, ""});
    x.executors.push_back(e);
    x.nodes.push_back(Node{tag, tag});
    x.groups.push_back(CallbackGroup{tag + "/default", GroupType::MutuallyExclusive, tag});
    for (const Site& s : sites) {
      if (s.device != d) continue;
      for (std::size_t y : s.chains) {
        Callback t;
        t.name = tag + " " + x.callbacks[s.piece].name + " " + x.chains[y].name;
        t.kind = CallbackKind::Timer;
        t.node = tag;
        t.group = tag + "/default";
        t.wcet = acc.server_overhead;
        t.bcet = acc.server_overhead;
        t.period = x.chains[y].period;
        t.jitter = x.chains[y].period - 1;
        t.priority = s.priority;
        x.callbacks.push_back(t);
      }
    }
  }
}

}  // namespace

AcceleratorPlan plan_accelerators(const Model& user) {
  AcceleratorPlan plan;
  if (std::string why = server_placement(user); !why.empty()) {
    plan.refused = why;
    return plan;
  }
  const AcceleratedModel am = expand_accelerators(user);
  Model x = am.model;
  const auto devices = accelerator_refs(user);

  bound_direct_calls(user, am, devices, x);

  // Server access: the sites, their coverage by chains, and each request's response.
  std::vector<Site> sites;
  for (std::size_t c = 0; c < x.callbacks.size(); ++c) {
    if (!am.pieces[c].request) continue;
    Site s;
    s.piece = c;
    s.device = accelerator_index(user, am.pieces[c].request->accelerator);
    s.segment = am.segment(user, *am.pieces[c].request, c).wcet();
    s.chunk = am.segment(user, *am.pieces[c].request, c).longest_chunk();
    s.priority = effective_priority(x, c);
    s.chains = chains_through(x, x.callbacks[c].name);
    if (std::string why = uncovered(x, c, s.chains); !why.empty()) {
      plan.refused = why;
      return plan;
    }
    sites.push_back(s);
  }
  std::set<std::string> requesters;
  std::map<std::string, Duration> hop_cost;  // continuation topic -> the request's response bound
  constexpr Duration kNoBound = std::numeric_limits<Duration>::max() / 4;
  for (const Site& p : sites) {
    const Accelerator& acc = accelerator_of(user, devices[p.device]);
    const Duration eps = acc.server_overhead;
    std::vector<Duration> lp;
    for (const Site& s : sites)
      if (s.device == p.device && !at_least_as_urgent(s, p))
        lp.push_back(eps + (acc.block_preemption ? s.chunk : s.segment));
    const Duration blocking = server_lp_blocking(lp);
    Duration worst = 0;
    for (std::size_t own_chain : p.chains) {
      const Chain& X = x.chains[own_chain];
      requesters.insert(X.name);
      std::vector<HpSite> hp;
      for (const Site& s : sites) {
        if (s.device != p.device || !at_least_as_urgent(s, p)) continue;
        for (std::size_t y : s.chains) {
          // The requesting chain's own instance: the request itself and, on a path, its
          // sequential other requests are not ahead of it; a branching chain's other requests
          // may be (then counted as another chain's).
          const bool own = y == own_chain && (s.piece == p.piece || X.is_linear());
          const bool equal = s.priority == p.priority;
          hp.push_back({eps + s.segment, x.chains[y].period, release_jitter(x, x.chains[y]),
                        equal ? (own ? Urgency::EqualOwn : Urgency::Equal) : (own ? Urgency::HigherOwn : Urgency::Higher)});
        }
      }
      // Block preemption bounds the response directly; the whole-request server bounds the wait.
      std::optional<Duration> R;
      const char* bound = "response";
      const char* why = "block preemption: one lower-priority block in progress plus the higher-priority requests "
                        "exceed it";
      if (acc.block_preemption) {
        R = block_preemptive_response(blocking, eps, p.segment, hp, X.period);
      } else {
        bound = "waiting-time";
        why = "Kim et al.'s fixed point: one lower-priority request in progress plus the higher-priority requests "
              "exceed it";
        if (const auto w = server_waiting_time(blocking, hp, X.period)) R = server_request_response(*w, eps, p.segment);
      }
      if (!R) {
        plan.unbounded[X.name] = "the requests of " + quote(x.callbacks[p.piece].name) + " to accelerator " +
                                 quote(acc.name) + " have no " + bound + " bound within the period of chain " +
                                 quote(X.name) + " (" + why + ")";
        worst = kNoBound;
        continue;
      }
      worst = std::max(worst, *R);
    }
    hop_cost[x.callbacks[p.piece + 1].topic] = worst;
  }
  plan.requesters.assign(requesters.begin(), requesters.end());

  add_server_work(user, am, devices, sites, x);
  x.reindex();
  plan.model = std::move(x);
  const HopCost base = model_hop_cost(plan.model);
  plan.cost = [base, hop_cost](const Hop& h) {
    auto it = hop_cost.find(h.topic);
    return it != hop_cost.end() ? it->second : base(h);
  };
  return plan;
}

AnalysisResult finish_accelerators(const AcceleratorPlan& plan, AnalysisResult r) {
  for (ChainBound& b : r.chains) {
    auto it = plan.unbounded.find(b.chain);
    if (it == plan.unbounded.end() || b.bounded) continue;
    b.reason = it->second;
  }
  std::string broken;
  for (const std::string& c : plan.requesters) {
    const ChainBound* b = r.find(c);
    const Chain* ch = nullptr;
    for (const Chain& k : plan.model.chains)
      if (k.name == c) ch = &k;
    if (!b || !ch || !b->bounded || b->wcrt_bound >= ch->period) {
      broken = c;
      break;
    }
  }
  if (broken.empty()) return r;
  for (ChainBound& b : r.chains) {
    if (!b.bounded) continue;
    b.bounded = false;
    b.schedulable = false;
    b.wcrt_bound = 0;
    b.slack = 0;
    b.reason = "chain " + quote(broken) + " requests a server-mode accelerator and has no bound below its period; "
               "the accelerator's waiting-time bounds assume every requesting chain has one";
  }
  r.schedulable = false;
  return r;
}

bool refuse_accelerators(const Model& model, const std::string& analysis, std::string* why) {
  if (!uses_accelerators(model)) return false;
  if (why)
    *why = "the model uses accelerators, which " + analysis + " does not analyse (" + std::string(kEngines) +
           " do: the device bounds of Kim et al. 2018 with a self-suspension-aware chain analysis)";
  return true;
}

}  // namespace chainrt::detail
