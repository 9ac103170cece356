// The jobs of a chainrt model for the schedule-abstraction graph (sag_model.hpp): what the
// executor releases on one thread, written as non-preemptive jobs with precedence edges.
#include "sag_model.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/model/policy_list.hpp"
#include "chainrt/sched/policy.hpp"
#include "chainrt/sched/setup.hpp"
#include "workload.hpp"

namespace chainrt::detail::sag {

namespace {

bool fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

// One message path: publisher -> subscriber, with the chains whose hop it is and its delay bound.
struct Out {
  std::size_t to = 0;
  std::vector<std::size_t> chains;
  Duration cost = 0;
};

// Every (publisher, subscriber) pair as the simulator and the executors deliver them: each topic
// a callback publishes (a service request or response, once the loader lowered services, is one)
// to every subscriber, the chains whose hop it is, and the hop's worst-case cost
// (model_hop_cost: the declared, fitted and measured costs, the largest).
std::vector<std::vector<Out>> outs_of(const Model& m) {
  const HopCost cost = model_hop_cost(m);
  std::unordered_map<std::string, std::vector<std::size_t>> subscribers;  // by topic, in model order
  for (std::size_t c = 0; c < m.callbacks.size(); ++c)
    if (!m.callbacks[c].topic.empty()) subscribers[m.callbacks[c].topic].push_back(c);
  std::unordered_map<std::string, std::vector<std::pair<std::size_t, const Hop*>>> hops;  // by "from\nto"
  for (std::size_t i = 0; i < m.chains.size(); ++i)
    for (const Hop& h : m.chains[i].hops) hops[h.from + '\n' + h.to].emplace_back(i, &h);
  std::vector<std::vector<Out>> outs(m.callbacks.size());
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const Callback& cb = m.callbacks[c];
    for (const std::string& topic : cb.publishes) {
      const Topic* tp = m.topic(topic);
      const auto subs = subscribers.find(topic);
      if (subs == subscribers.end()) continue;
      for (std::size_t sub : subs->second) {
        Hop h{cb.name, m.callbacks[sub].name, topic, m.placement_comm(cb, m.callbacks[sub]), tp ? tp->size : 0};
        Out o{sub, {}, 0};
        if (const auto on = hops.find(h.from + '\n' + h.to); on != hops.end())
          for (const auto& [chain, ch] : on->second) {
            o.chains.push_back(chain);
            h.comm = ch->comm;
            if (ch->message_size > 0) h.message_size = ch->message_size;
          }
        o.cost = cost(h);
        outs[c].push_back(std::move(o));
      }
    }
  }
  return outs;
}

// The executors that run callbacks, in model order (none: `why` says so).
std::vector<std::size_t> work_executors(const Model& m, std::string* why) {
  std::vector<bool> used(m.executors.size(), false);
  for (const Callback& cb : m.callbacks) used[m.executor_index(m.node(cb.node).executor)] = true;
  std::vector<std::size_t> out;
  for (std::size_t e = 0; e < used.size(); ++e)
    if (used[e]) out.push_back(e);
  if (out.empty()) fail(why, "the model has no callbacks");
  return out;
}

// Where the threads of the executors run: each thread's cores (its pinned ones, else every core of
// its host; as numbers on the host) and the core the simulator runs it on (simulated_core).
struct OnHost {
  std::size_t at;  // position of its executor in xs
  std::optional<int> priority;  // SCHED_FIFO (nullopt: none, below every real-time thread)
  std::string thread;
  std::string host;
  std::vector<int> cores;  // sorted, distinct
  int simulated = 0;
};

std::vector<OnHost> threads_on_hosts(const Model& m, const std::vector<std::size_t>& xs) {
  std::vector<OnHost> out;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Executor& e = m.executors[xs[k]];
    int n = 1;
    for (const Host& h : m.hosts)
      if (h.name == e.host) n = std::max(1, h.cores);
    for (std::size_t t = 0; t < e.threads.size(); ++t) {
      OnHost o{k, thread_fifo_priority(e, e.threads[t]), e.threads[t].name, e.host, {},
               simulated_core(m, xs[k], t)};
      for (int c : e.threads[t].cores) o.cores.push_back(((c % n) + n) % n);
      if (o.cores.empty())
        for (int c = 0; c < n; ++c) o.cores.push_back(c);
      std::sort(o.cores.begin(), o.cores.end());
      o.cores.erase(std::unique(o.cores.begin(), o.cores.end()), o.cores.end());
      out.push_back(std::move(o));
    }
  }
  return out;
}

std::string core_list(const std::vector<int>& cores) {
  std::string s;
  for (int c : cores) s += (s.empty() ? "" : ",") + std::to_string(c);
  return (cores.size() == 1 ? "core " : "cores ") + s;
}

// Several threads (of one executor: global scheduling; or one each of several executors). A
// thread runs on its cores (pinned, else every core of its host) under the kernel's global
// fixed-priority scheduling of real-time threads, and in the simulator on one core
// (simulated_core); the analysis covers both. Threads of one executor each need a core of their
// own. A thread whose cores hold fewer than their number of threads at its priority or above (it
// included) is never kept from a core: the threads of one executor (each a core of its own), a
// thread with a core to itself, the top threads of a set of cores. Otherwise the threads above
// preempt it; threads at its own priority (round-robin or FIFO between them, or the kernel's
// fair share between threads without one) decline. Preemption (sag.hpp) charges the work of
// the threads listed above a thread: on c cores with h threads above, the thread waits only
// while c of them run, so while one of any h - c + 1 of them runs (the others number c - 1);
// the list holds h - c + 1 of them, the simulator's core mates above it first (there it waits
// while any of those runs), then those of the highest priority. Sets of cores that overlap
// without being equal decline.
struct Placement {
  std::vector<std::vector<std::size_t>> above;  // per executor of `xs` (in its order): the positions of those preempting it
  std::vector<bool> one_core;                   // per executor of `xs`: its threads are pinned to one core each
};

std::optional<Placement> placement(const Model& m, const std::vector<std::size_t>& xs, std::string* why) {
  const std::vector<OnHost> on = threads_on_hosts(m, xs);
  Placement out{std::vector<std::vector<std::size_t>>(xs.size()), std::vector<bool>(xs.size(), true)};
  for (const OnHost& o : on) out.one_core[o.at] = out.one_core[o.at] && o.cores.size() == 1;
  auto& above = out.above;
  if (on.size() < 2) return out;
  if (xs.size() > 1)
    for (std::size_t k = 0; k < xs.size(); ++k)
      if (const Executor& e = m.executors[xs[k]]; e.threads.size() > 1) {
        fail(why, "executor '" + e.name + "' has " + std::to_string(e.threads.size()) +
                      " threads beside other executors; this analysis covers one multi-threaded executor or "
                      "several single-threaded ones");
        return std::nullopt;
      }
  const std::string alone = "; threads are analysed each on a core of its own, on one shared by SCHED_FIFO priority, "
                            "or unpinned with a different SCHED_FIFO priority each";
  const auto higher = [](const OnHost& a, const OnHost& b) { return a.priority > b.priority; };  // nullopt lowest
  for (std::size_t a = 0; a < on.size(); ++a) {
    std::vector<std::size_t> over, mates;  // on its cores: the threads above it; the simulator's core mates above it
    std::size_t level = 1;                  // threads on its cores at its priority or above, it included
    for (std::size_t b = 0; b < on.size(); ++b) {
      if (b == a || on[b].host != on[a].host) continue;
      if (on[b].cores != on[a].cores) {
        std::vector<int> both;
        std::set_intersection(on[a].cores.begin(), on[a].cores.end(), on[b].cores.begin(), on[b].cores.end(),
                              std::back_inserter(both));
        if (both.empty()) continue;
        fail(why, "threads '" + on[a].thread + "' (" + core_list(on[a].cores) + ") and '" + on[b].thread + "' (" +
                      core_list(on[b].cores) + ") may run on overlapping but different cores of host '" +
                      on[a].host + "'" + alone);
        return std::nullopt;
      }
      const bool same = on[b].simulated == on[a].simulated;
      if (same && (on[a].at == on[b].at || on[a].priority == on[b].priority)) {
        fail(why, "threads '" + on[a].thread + "' and '" + on[b].thread + "' share core " +
                      std::to_string(on[a].simulated) + " of host '" + on[a].host + "' " +
                      (on[a].at == on[b].at ? "in one executor" :
                       on[a].priority ? "at one SCHED_FIFO priority" : "without a SCHED_FIFO priority") + alone);
        return std::nullopt;
      }
      if (higher(on[b], on[a])) {
        over.push_back(b);
        if (same) mates.push_back(b);
      }
      if (!higher(on[a], on[b])) ++level;
    }
    const std::size_t c = on[a].cores.size();
    if (level > c && level != over.size() + 1) {  // kept from a core at times, with threads at its priority
      const auto peer = std::find_if(on.begin(), on.end(), [&](const OnHost& o) {
        return &o != &on[a] && o.host == on[a].host && o.cores == on[a].cores && o.priority == on[a].priority;
      });
      fail(why, "threads '" + on[a].thread + "' and '" + peer->thread + "' may wait for one of " +
                    core_list(on[a].cores) + " of host '" + on[a].host + "' " +
                    (on[a].priority ? "at one SCHED_FIFO priority" : "without a SCHED_FIFO priority") + alone);
      return std::nullopt;
    }
    const std::size_t need = level > c ? over.size() + 1 - c : 0;
    std::stable_sort(over.begin(), over.end(), [&](std::size_t x, std::size_t y) { return higher(on[x], on[y]); });
    std::vector<std::size_t> list = mates;
    for (std::size_t b : over)
      if (list.size() < need && std::find(list.begin(), list.end(), b) == list.end()) list.push_back(b);
    for (std::size_t b : list)
      if (std::find(above[on[a].at].begin(), above[on[a].at].end(), on[b].at) == above[on[a].at].end())
        above[on[a].at].push_back(on[b].at);
  }
  return out;
}

// One thread on a core of its own, a policy with a job-level fixed priority, the CPU always there.
bool covers_platform(const Model& m, std::size_t x, std::string* why) {
  const Executor& e = m.executors[x];
  if (!job_level_fixed_priority(e.policy))
    return fail(why, std::string("executor '") + e.name + "' uses policy " + to_string(e.policy) +
                         ", whose order is not a job-level fixed priority (" +
                         policy_list(job_level_fixed_priority, true) +
                         " are)");
  if (e.threads.empty()) return fail(why, "executor '" + e.name + "' has no thread");
  for (const Thread& t : e.threads)
    if (t.reservation) return fail(why, "thread '" + t.name + "' runs on a reservation");
  if (e.threads.size() > 1)  // global scheduling: any thread takes any callback, groups exclude
    for (const Callback& cb : m.callbacks) {
      if (m.node(cb.node).executor != e.name) continue;
      if (!cb.affinity.empty()) return fail(why, "callback '" + cb.name + "' is bound to some of the threads");
      if (m.group(cb.group).type != GroupType::MutuallyExclusive)
        return fail(why, "callback '" + cb.name + "' is in a reentrant group (two of its instances may overlap)");
    }
  if (uses_accelerators(m)) return fail(why, "the model uses accelerators");
  for (const Host& h : m.hosts)
    if (h.name == e.host && !h.blackout.empty()) return fail(why, "host '" + h.name + "' has a platform blackout curve");
  return true;
}

// Timers with a guaranteed phase; every other callback fed by exactly one publisher; no cycle;
// no fusion; chains starting at timers.
bool covers_callbacks(const Model& m, const std::vector<std::vector<Out>>& outs, std::string* why) {
  const auto sets = implicit_fusion_sets(m);
  std::vector<bool> later_member(m.callbacks.size(), false);  // a set's members feed as one
  for (const auto& set : sets) {
    for (std::size_t i = 1; i < set.size(); ++i) {
      later_member[set[i]] = true;
      const auto& a = outs[set[0]];
      const auto& b = outs[set[i]];
      if (a.size() != b.size() ||
          !std::equal(a.begin(), a.end(), b.begin(), [](const Out& x, const Out& y) { return x.to == y.to; }))
        return fail(why, "the members of fusion set '" + m.callbacks[set[0]].name + "' reach different callbacks");
    }
  }
  std::vector<int> feeders(m.callbacks.size(), 0);
  for (std::size_t c = 0; c < outs.size(); ++c)
    if (!later_member[c])
      for (const Out& o : outs[c]) ++feeders[o.to];
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const Callback& cb = m.callbacks[c];
    if (cb.kind == CallbackKind::FusionInput || cb.kind == CallbackKind::FusionTrigger)
      return fail(why, "callback '" + cb.name + "' is a fusion callback");
    if (cb.is_timer()) {
      if (cb.period <= 0) return fail(why, "timer '" + cb.name + "' has no period");
      if (feeders[c] > 0) return fail(why, "timer '" + cb.name + "' also takes messages");
    } else if (feeders[c] > 1) {
      return fail(why, "callback '" + cb.name + "' takes messages from " + std::to_string(feeders[c]) +
                           " publishers (their order in its queue is not fixed)");
    }
  }
  for (const Chain& ch : m.chains)
    if (ch.callbacks.empty() || !m.callback(ch.callbacks.front()).is_timer())
      return fail(why, "chain '" + ch.name + "' does not start at a timer");
  return true;
}

Duration gcd(Duration a, Duration b) { return b == 0 ? a : gcd(b, a % b); }

// The span after which a timer's releases repeat, shifted by it: its period, or for a period
// given as a rate or a fraction (num/den ns, reduced) num ns, which hold den releases.
Duration release_span(const Callback& cb) { return cb.grid_period().num; }

// The hyperperiod of the timers (lcm of their release spans); nullopt when it overflows.
std::optional<Duration> hyperperiod(const Model& m) {
  Duration h = 1;
  for (const Callback& cb : m.callbacks) {
    if (!cb.is_timer()) continue;
    const Duration span = release_span(cb);
    const Duration g = gcd(h, span);
    if (h / g > std::numeric_limits<Duration>::max() / span) return std::nullopt;
    h = h / g * span;
  }
  return h;
}

// The EDF key of the chains whose instance a message carries (as the executors stamp it:
// d = a + the smallest of the chain's deadline and those of the chains its source starts).
std::vector<Duration> chain_keys(const Model& m) {
  std::vector<Duration> source_d(m.callbacks.size(), std::numeric_limits<Duration>::max());
  for (const Chain& ch : m.chains)
    if (ch.deadline > 0) {
      Duration& d = source_d[m.callback_index(ch.callbacks.front())];
      d = std::min(d, ch.deadline);
    }
  std::vector<Duration> key(m.chains.size(), 0);
  for (std::size_t i = 0; i < m.chains.size(); ++i)
    if (m.chains[i].deadline > 0)
      key[i] = std::min(m.chains[i].deadline, source_d[m.callback_index(m.chains[i].callbacks.front())]);
  return key;
}

// Per chain, the callbacks whose completion ends an instance: the last of each root-to-leaf path.
std::vector<std::vector<std::size_t>> chain_leaves(const Model& m) {
  std::vector<std::vector<std::size_t>> out(m.chains.size());
  for (std::size_t i = 0; i < m.chains.size(); ++i) {
    const Chain& ch = m.chains[i];
    for (const auto& p : ch.paths())
      if (!p.empty()) out[i].push_back(m.callback_index(p.back()));
    if (out[i].empty()) out[i].push_back(m.callback_index(ch.callbacks.back()));
  }
  return out;
}

// A chain instance a message carries: (chain, index in ModelJobs::instances).
using Stamp = std::pair<std::size_t, std::size_t>;

// What building the jobs of the timer releases needs.
struct Builder {
  const Model& m;
  const std::vector<std::vector<Out>>& outs;
  const std::vector<sched::ExecutorSetup>& setups;  // by executor index (those with callbacks)
  const std::vector<std::size_t>& executor;         // per callback: its executor
  const std::vector<int>& group;                    // per callback: its job group (sag.hpp), -1 on one thread
  std::vector<Duration> keys;
  std::vector<std::vector<std::size_t>> leaves;
  ModelJobs& mj;
  // Implicit fusion sets: per callback (set, member) or none; per set, its rounds: per member
  // the job of its k-th message and the stamps it carries (sag_model.hpp).
  std::vector<std::optional<std::pair<std::size_t, std::size_t>>> member;
  std::vector<std::size_t> members;  // per set: its size
  struct Cached {
    std::size_t job = 0;
    Duration root = 0;
    ExactPeriod period{};  // of the timer whose release it follows (its grid period)
    std::vector<Stamp> stamps;
  };
  ExactPeriod period{};  // of the timer release being followed (its grid period)
  std::vector<std::vector<std::vector<std::optional<Cached>>>> rounds;  // [set][round][member]
  // Loose sets (sag_model.hpp): per set, whether its members' jobs are not paired in rounds.
  std::vector<bool> loose;
  std::vector<std::string> set_name;  // per set: its first member's name
  // While following a loose set's fused message: its jobs may not exist (cost.lo 0), and whether
  // it would carry an instance with a deadline (its EDF key is then unknown to the job model).
  bool maybe = false, lost_deadline = false;
  std::string error;  // a reason to decline found while building

  bool is_leaf(std::size_t chain, std::size_t c) const {
    return std::find(leaves[chain].begin(), leaves[chain].end(), c) != leaves[chain].end();
  }

  // The executor's key of callback c's job with the deadlines of the instances it carries
  // (each instance's release + its chain's key, the smallest), `late` ns later for a drifting one.
  Priority priority(std::size_t c, Duration root, const std::vector<Stamp>& stamps, Duration late) const {
    Duration d = sched::kNoDeadline;
    for (const auto& [chain, inst] : stamps)
      if (keys[chain] > 0) d = std::min(d, mj.instances[inst].release + late + keys[chain]);
    const sched::ExecutorSetup& setup = setups[executor[c]];
    const sched::CallbackId id = setup.id_of(c);
    const sched::Key k = sched::key_of(setup.policy, setup.specs[id], id, d);
    return Priority{k.tier, k.value, k.rank, static_cast<std::int64_t>(k.id), root};
  }

  // The job of callback c carrying `stamps`, ordered among c's jobs by `root` (the nominal
  // release of its timer job), after `preds`. `span`: how much later than the instances'
  // releases the release the executor stamps its key from may be (a drifting timer's window).
  std::size_t add(std::size_t c, Duration root, Duration span, Interval release, const std::vector<Stamp>& stamps,
                  std::vector<Pred> preds) {
    const Callback& cb = m.callbacks[c];
    Job j;
    j.release = release;
    j.cost = {maybe ? 0 : std::min(cb.best_case(), cb.wcet), cb.wcet};
    j.priority = priority(c, root, stamps, 0);
    if (maybe && lost_deadline && error.empty()) {
      // the fused message would carry instances with deadlines the job model does not know
      const sched::ExecutorSetup& setup = setups[executor[c]];
      const sched::CallbackId id = setup.id_of(c);
      const sched::Key early = sched::key_of(setup.policy, setup.specs[id], id, 0);
      const sched::Key none = sched::key_of(setup.policy, setup.specs[id], id, sched::kNoDeadline);
      if (early < none || none < early)
        error = "the ready-queue key of '" + cb.name + "' depends on the deadlines of the instances a fusion set of "
                "different periods fused, which depend on the arrival order";
    }
    if (maybe) j.priority.tie = static_cast<std::int64_t>(mj.jobs.size());  // distinct among one callback's (outside_job_model)
    mj.maybe.push_back(maybe);
    mj.priority_late.push_back(span > 0 ? priority(c, root, stamps, span) : j.priority);
    j.preds = std::move(preds);
    j.group = group[c];
    mj.jobs.push_back(std::move(j));
    mj.callback.push_back(c);
    mj.partition.push_back(executor[c]);
    mj.root_release.push_back(root);
    mj.of_callback[c].push_back(mj.jobs.size() - 1);
    return mj.jobs.size() - 1;
  }

  // The timer job at nominal release `root` and every job its messages release, depth first;
  // the chain instances it starts.
  void release(std::size_t timer, Duration root, Interval window, Duration span) {
    const Callback& cb = m.callbacks[timer];
    std::vector<Stamp> started;
    for (std::size_t i = 0; i < m.chains.size(); ++i)
      if (m.chains[i].callbacks.front() == cb.name) {
        started.emplace_back(i, mj.instances.size());
        mj.instances.push_back(ChainInstance{i, root, {}});
      }
    period = cb.grid_period();
    const std::size_t j = add(timer, root, span, window, started, {});
    follow(j, timer, root, span, started);
  }

  // The stamps a message of callback c on out o carries: a leaf records its instance and
  // forwards none; an instance goes on along its chain's hops only.
  std::vector<Stamp> carried(std::size_t c, const Out& o, const std::vector<Stamp>& stamps) const {
    std::vector<Stamp> out;
    for (const Stamp& s : stamps)
      if (!is_leaf(s.first, c) && std::find(o.chains.begin(), o.chains.end(), s.first) != o.chains.end())
        out.push_back(s);
    return out;
  }

  void follow(std::size_t job, std::size_t c, Duration root, Duration span, const std::vector<Stamp>& stamps) {
    for (const auto& [chain, inst] : stamps)
      if (is_leaf(chain, c)) mj.instances[inst].leaves.push_back(job);
    if (member[c] && loose[member[c]->first]) {
      follow_loose(job, c, root, span, stamps);
      return;
    }
    if (member[c]) {  // a fusion input: cached until its round is complete (fuse())
      const auto [set, i] = *member[c];
      auto& rs = rounds[set];
      std::size_t k = 0;
      while (k < rs.size() && rs[k][i]) ++k;
      if (k == rs.size()) rs.emplace_back(members[set]);
      rs[k][i] = Cached{job, root, period, stamps};
      return;
    }
    for (const Out& o : outs[c]) {
      const std::vector<Stamp> next_stamps = carried(c, o, stamps);
      const std::size_t next = add(o.to, root, span, {0, 0}, next_stamps, {Pred{job, {0, o.cost}}});
      follow(next, o.to, root, span, next_stamps);
    }
  }

  // A member job of a loose set (sag_model.hpp): it may complete the set, so the fused
  // message's jobs follow it as jobs that may not exist. They carry no instance: a chain whose
  // data goes on through the set is declined (which message completes the set depends on the
  // arrival order), and where such a chain has a deadline the EDF key of those jobs is unknown
  // (add() declines where the key depends on it).
  void follow_loose(std::size_t job, std::size_t c, Duration root, Duration span, const std::vector<Stamp>& stamps) {
    const std::size_t set = member[c]->first;
    bool lost = lost_deadline;
    for (const Out& o : outs[c])
      for (const Stamp& st : carried(c, o, stamps)) {
        std::string& why = mj.chain_declined[st.first];
        if (why.empty())
          why = "its data passes fusion set '" + set_name[set] + "', whose members follow releases of different "
                "periods: which message completes the set depends on the arrival order";
        lost = lost || keys[st.first] > 0;
      }
    const bool was_maybe = maybe, was_lost = lost_deadline;
    maybe = true;
    lost_deadline = lost;
    for (const Out& o : outs[c]) {
      const std::size_t next = add(o.to, root, span, {0, 0}, {}, {Pred{job, {0, o.cost}}});
      follow(next, o.to, root, span, {});
    }
    maybe = was_maybe;
    lost_deadline = was_lost;
  }

  // The grid period of the releases reaching callback c (through its one feeder, or a fusion
  // set's rounds); nullopt where none is fixed (a loose set on the way, no timer, a cycle).
  std::optional<ExactPeriod> source_period(std::size_t c, const std::vector<std::size_t>& feeder,
                                           const std::vector<std::vector<std::size_t>>& sets, std::size_t depth) const {
    if (m.callbacks[c].is_timer()) return m.callbacks[c].grid_period();
    if (depth > m.callbacks.size() || feeder[c] == kNoJob) return std::nullopt;
    const std::size_t f = feeder[c];
    if (!member[f]) return source_period(f, feeder, sets, depth + 1);
    std::optional<ExactPeriod> p;
    for (std::size_t x : sets[member[f]->first]) {
      const auto q = source_period(x, feeder, sets, depth + 1);
      if (!q || (p && !(*p == *q))) return std::nullopt;
      p = q;
    }
    return p;
  }

  // Which sets are loose: those whose members do not all follow releases of one period.
  void find_loose(const std::vector<std::vector<std::size_t>>& sets) {
    std::vector<std::size_t> feeder(m.callbacks.size(), kNoJob);
    for (std::size_t c = 0; c < outs.size(); ++c)
      if (!member[c] || member[c]->second == 0)
        for (const Out& o : outs[c]) feeder[o.to] = c;
    loose.assign(sets.size(), false);
    for (std::size_t s = 0; s < sets.size(); ++s) {
      set_name.push_back(m.callbacks[sets[s][0]].name);
      std::optional<ExactPeriod> p;
      for (std::size_t x : sets[s]) {
        const auto q = source_period(x, feeder, sets, 0);
        if (!q || (p && !(*p == *q))) loose[s] = true;
        p = q;
      }
    }
  }

  // Every complete round of every fusion set: the fused message, one job of each subscriber
  // after every member's job of the round (the last to finish publishes), carrying the
  // instances of every member; then on, depth first. A round cut by the horizon is left out.
  // A loose set has no rounds (follow_loose).
  // Whether callback `to` is reached from callback `from` over messages.
  bool reaches(std::size_t from, std::size_t to) const {
    std::vector<bool> seen(m.callbacks.size(), false);
    std::vector<std::size_t> todo{from};
    while (!todo.empty()) {
      const std::size_t c = todo.back();
      todo.pop_back();
      if (c == to) return true;
      for (const Out& o : outs[c])
        if (!seen[o.to]) {
          seen[o.to] = true;
          todo.push_back(o.to);
        }
    }
    return false;
  }

  // The sets in an order where every set comes after the sets whose output reaches it (its
  // members' jobs then all exist when it is fused).
  std::vector<std::size_t> fuse_order(const std::vector<std::vector<std::size_t>>& sets) const {
    std::vector<std::size_t> order, left(sets.size());
    std::iota(left.begin(), left.end(), 0);
    while (!left.empty()) {
      auto it = std::find_if(left.begin(), left.end(), [&](std::size_t b) {
        return std::none_of(left.begin(), left.end(), [&](std::size_t a) {
          return a != b && reaches(sets[a][0], sets[b][0]);
        });
      });
      if (it == left.end()) it = left.begin();  // sets feeding each other: no order holds
      order.push_back(*it);
      left.erase(it);
    }
    return order;
  }

  void fuse(const std::vector<std::vector<std::size_t>>& sets) {
    for (std::size_t set : fuse_order(sets)) {
      if (loose[set]) continue;  // its fused messages followed each member job (follow_loose)
      ExactPeriod p0{};  // the members' one period (find_loose)
      for (const auto& round : rounds[set])
        for (const auto& r : round)
          if (r && p0.num == 0) p0 = r->period;
      paired_sets.push_back(set);
      for (const auto& round : rounds[set]) {
        if (std::any_of(round.begin(), round.end(), [](const auto& r) { return !r; })) {
          for (const auto& r : round)  // the horizon cut the round: its instances are not counted
            if (r)
              for (const Stamp& st : r->stamps) mj.instances[st.second].cut = true;
          continue;
        }
        Duration root = 0;
        for (const auto& r : round) root = std::max(root, r->root);
        period = p0;
        const std::vector<Out>& first = outs[sets[set][0]];
        for (std::size_t o = 0; o < first.size(); ++o) {
          std::vector<Stamp> stamps;
          std::vector<Pred> preds;
          for (std::size_t i = 0; i < round.size(); ++i) {
            const Out& oi = outs[sets[set][i]][o];
            for (const Stamp& s : carried(sets[set][i], oi, round[i]->stamps)) stamps.push_back(s);
            preds.push_back(Pred{round[i]->job, {0, oi.cost}});
          }
          const std::size_t next = add(first[o].to, root, 0, {0, 0}, stamps, std::move(preds));
          follow(next, first[o].to, root, 0, stamps);
        }
      }
    }
  }

  std::vector<std::size_t> paired_sets;
};
}  // namespace

bool job_level_fixed_priority(Policy p) {
  return p == Policy::FixedPriority || p == Policy::Picas || p == Policy::Edf || p == Policy::Mixed;
}

bool sag_covers(const Model& m, std::string* why) {
  const std::vector<std::size_t> xs = work_executors(m, why);
  if (xs.empty()) return false;
  for (std::size_t x : xs)
    if (!covers_platform(m, x, why)) return false;
  if (!placement(m, xs, why)) return false;
  for (const Callback& cb : m.callbacks)  // the cheap refusal first (large models rarely pass it)
    if (cb.is_timer() && cb.phase != TimerPhase::Guaranteed)
      return fail(why, "timer '" + cb.name + "' has no guaranteed phase (phase: " + to_string(cb.phase) +
                           "): the relative releases of the timers are unknown");
  // Every non-timer callback has at most one publisher feeding it, so the callbacks a timer's
  // messages reach form a tree (a topic cycle has no timer feeding it and never runs).
  return covers_callbacks(m, outs_of(m), why);
}

namespace {

// Timer releases in `span` of the timers whose period is listed; nullopt beyond `cap`.
std::optional<std::size_t> releases_in(Duration span, const std::vector<Duration>& periods, std::size_t cap) {
  std::size_t n = 0;
  for (Duration p : periods) {
    n += static_cast<std::size_t>(span / p) + 1;
    if (n > cap) return std::nullopt;
  }
  return n;
}

std::optional<Duration> lcm(Duration a, Duration b) {
  const Duration g = gcd(a, b);
  if (a / g > std::numeric_limits<Duration>::max() / b) return std::nullopt;
  return a / g * b;
}

// How far a drifting timer's release moves each period against the job model's period P'
// (a whole multiple of the reference hyperperiod): |P - P'|, rounded up for a period given as a
// fraction (its releases are each within half a ns of k·P).
Duration drift_step(const Callback& cb, Duration model_period) {
  return std::abs(cb.period - model_period) + (cb.grid_period().fractional() ? 1 : 0);
}

// The split into reference and drifting timers (sag_model.hpp, drifting phases), when the
// common hyperperiod holds too many jobs: per callback its period in the job model (P' for a
// drifting timer), the reference hyperperiod and whether it drifts.
struct Split {
  std::vector<Duration> period;
  std::vector<bool> drifting;
  Duration reference = 1;
  Duration hyperperiod = 1;
};

std::optional<Split> split_timers(const Model& m, int hyperperiods, const std::vector<std::size_t>& tree,
                                  std::string* why) {
  Split s;
  s.period.assign(m.callbacks.size(), 0);
  s.drifting.assign(m.callbacks.size(), false);
  std::vector<std::size_t> timers;
  for (std::size_t c = 0; c < m.callbacks.size(); ++c)
    if (m.callbacks[c].is_timer()) timers.push_back(c);
  std::stable_sort(timers.begin(), timers.end(),
                   [&](std::size_t a, std::size_t b) { return m.callbacks[a].period < m.callbacks[b].period; });
  std::vector<Duration> kept;
  for (std::size_t c : timers) {
    const Duration p = m.callbacks[c].period;
    const auto h = lcm(s.reference, release_span(m.callbacks[c]));
    std::vector<Duration> with = kept;
    with.insert(with.end(), tree[c], p);  // one entry per job of a release
    if (h && *h <= std::numeric_limits<Duration>::max() / (hyperperiods + 1) &&
        releases_in(*h * hyperperiods, with, kMaxJobs)) {
      s.reference = *h;
      kept = std::move(with);
    } else {
      s.drifting[c] = true;
    }
  }
  s.hyperperiod = s.reference;
  std::string first;
  for (std::size_t c : timers) {
    if (!s.drifting[c]) continue;
    // One drifting timer: its relative phase is the only unknown, and every stretch of a run is
    // a stretch of the job model shifted by whole reference hyperperiods. Two drift against each
    // other as well, which one shift cannot place in their windows together.
    if (!first.empty()) {
      fail(why, "timers '" + first + "' and '" + m.callbacks[c].name + "' both drift against the timers whose pattern "
                    "repeats every " + std::to_string(s.reference) + " ns; this analysis takes one drifting timer");
      return std::nullopt;
    }
    first = m.callbacks[c].name;
    const Duration p = m.callbacks[c].period;
    const Duration rounded = (p + s.reference / 2) / s.reference * s.reference;
    if (rounded < s.reference) {
      fail(why, "timer '" + m.callbacks[c].name + "' (period " + std::to_string(p) +
                    " ns) drifts against timers whose pattern repeats only every " + std::to_string(s.reference) +
                    " ns, a longer span than its period");
      return std::nullopt;
    }
    s.period[c] = rounded;
    const auto h = lcm(s.hyperperiod, rounded);
    if (!h || *h > std::numeric_limits<Duration>::max() / (hyperperiods + 1)) {
      fail(why, "the timers' hyperperiod overflows");
      return std::nullopt;
    }
    s.hyperperiod = *h;
    // The phase window widens by the drift over the analysed span; a drift of a quarter period
    // or more is no longer a phase that moves slowly against the others.
    if ((s.hyperperiod * hyperperiods / rounded + 1) * drift_step(m.callbacks[c], rounded) > rounded / 4) {
      fail(why, "timer '" + m.callbacks[c].name + "' (period " + std::to_string(p) + " ns) is too far from a multiple of " +
                    std::to_string(s.reference) + " ns for its phase to drift slowly against the other timers");
      return std::nullopt;
    }
  }
  return s;
}

}  // namespace

std::optional<ModelJobs> build_jobs(const Model& m, int hyperperiods, std::string* why,
                                    const std::optional<PhaseWindow>& window) {
  if (!sag_covers(m, why)) return std::nullopt;
  const auto outs = outs_of(m);
  std::vector<Duration> periods;  // one entry per job a timer release brings (the release's tree)
  std::vector<std::size_t> tree(m.callbacks.size(), 0);
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    if (!m.callbacks[c].is_timer()) continue;
    std::vector<std::size_t> todo{c};
    while (!todo.empty() && tree[c] <= kMaxJobs) {
      const std::size_t x = todo.back();
      todo.pop_back();
      ++tree[c];
      for (const Out& o : outs[x]) todo.push_back(o.to);
    }
    periods.insert(periods.end(), tree[c], m.callbacks[c].period);
  }
  const auto H = hyperperiod(m);
  Split split;
  if (H && *H <= std::numeric_limits<Duration>::max() / (hyperperiods + 1) &&
      releases_in(*H * hyperperiods, periods, kMaxJobs)) {
    split.period.assign(m.callbacks.size(), 0);  // only a drifting timer's is used
    split.hyperperiod = *H;
  } else if (auto s = split_timers(m, hyperperiods, tree, why)) {
    split = std::move(*s);
  } else {
    return std::nullopt;
  }
  ModelJobs mj;
  mj.hyperperiod = split.hyperperiod;
  mj.horizon = split.hyperperiod * hyperperiods;
  mj.of_callback.resize(m.callbacks.size());
  if (!split.drifting.empty()) {
    mj.drifting = split.drifting;
    mj.reference_hyperperiod = split.reference;
  }
  mj.first_release = std::numeric_limits<Duration>::max();
  for (std::size_t c = 0; c < m.callbacks.size(); ++c)
    if (m.callbacks[c].is_timer())
      mj.first_release = std::min(mj.first_release, split.drifting.empty() || !split.drifting[c] ? m.callbacks[c].offset : 0);
  std::vector<sched::ExecutorSetup> setups(m.executors.size());
  for (std::size_t x : work_executors(m, why)) {
    setups[x] = sched::make_setup(m, x);
    mj.partitions.push_back(x);
  }
  if (auto p = placement(m, mj.partitions, why)) {
    mj.above = std::move(p->above);
    mj.one_core = std::move(p->one_core);
  } else {
    return std::nullopt;
  }
  std::vector<std::size_t> executor(m.callbacks.size());
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) executor[c] = m.executor_index(m.node(m.callbacks[c].node).executor);
  std::vector<int> group(m.callbacks.size(), -1);  // on several threads: the callback group's index
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const Executor& e = m.executors[executor[c]];
    mj.cores = std::max(mj.cores, e.threads.size());
    if (e.threads.size() > 1)
      group[c] = static_cast<int>(&m.group(m.callbacks[c].group) - m.groups.data());
  }
  const auto sets = implicit_fusion_sets(m);
  if (!sets.empty() && !split.drifting.empty()) {
    fail(why, "a drifting timer beside a fusion set (its rounds pair messages of one period)");
    return std::nullopt;
  }
  Builder b{m, outs, setups, executor, group, chain_keys(m), chain_leaves(m), mj, {}, {}, {}, {}, {}, {}, false, false, {}, {}};
  for (const auto& set : sets) b.members.push_back(set.size());
  b.member.assign(m.callbacks.size(), std::nullopt);
  for (std::size_t f = 0; f < sets.size(); ++f)
    for (std::size_t i = 0; i < sets[f].size(); ++i) b.member[sets[f][i]] = std::make_pair(f, i);
  b.rounds.resize(sets.size());
  mj.chain_declined.assign(m.chains.size(), {});
  b.find_loose(sets);
  const PhaseWindow w = window.value_or(PhaseWindow{0, split.reference});
  std::vector<std::pair<Duration, std::size_t>> releases;
  std::size_t count = 0;
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const Callback& cb = m.callbacks[c];
    if (!cb.is_timer()) continue;
    const bool drifts = !split.drifting.empty() && split.drifting[c];
    // on the release grid (sched::ReleaseGrid): offset + round(k·P)
    const ExactPeriod P = drifts ? ExactPeriod{split.period[c]} : cb.grid_period();
    const Duration t0 = drifts ? 0 : cb.offset;
    for (std::int64_t k = 0; t0 + P.at(k) < mj.horizon && count <= kMaxJobs; ++k, ++count)
      releases.emplace_back(t0 + P.at(k), c);
  }
  std::sort(releases.begin(), releases.end());
  for (const auto& [t, c] : releases) {
    const Callback& cb = m.callbacks[c];
    if (split.drifting.empty() || !split.drifting[c]) {
      b.release(c, t, {t, t + cb.jitter}, 0);
    } else {
      // the relative phase moves by |P - P'| a period: over the analysed span at most `dev`
      const Duration dev = w.widen ? (mj.horizon / split.period[c] + 1) * drift_step(cb, split.period[c]) : 0;
      const Duration lo = std::max<Duration>(0, t + w.lo - dev), hi = t + w.hi - 1 + dev;
      b.release(c, lo, {lo, hi + cb.jitter}, hi - lo);
    }
    if (mj.jobs.size() > kMaxJobs) break;
  }
  if (mj.jobs.size() <= kMaxJobs)
    b.fuse(sets);
  if (!b.error.empty()) {
    fail(why, b.error);
    return std::nullopt;
  }
  if (mj.jobs.size() > kMaxJobs) {
    fail(why, "more than " + std::to_string(kMaxJobs) + " jobs in " + std::to_string(hyperperiods) +
                  " hyperperiod(s) of " + std::to_string(mj.hyperperiod) + " ns");
    return std::nullopt;
  }
  for (std::size_t set : b.paired_sets) {  // the rounds' jobs, for the pairing check (outside_job_model)
    std::vector<std::vector<std::size_t>> jobs;
    for (const auto& round : b.rounds[set]) {
      jobs.emplace_back();
      for (const auto& r : round) jobs.back().push_back(r ? r->job : kNoJob);
    }
    mj.fusion_rounds.push_back(std::move(jobs));
  }
  return mj;
}

namespace {

// The steady state: an instant t* of the first hyperperiod (a timer release) at which, in every
// schedule, the thread is idle with every job of an earlier timer release finished — and again
// at t* + H. From an idle instant the future depends only on the releases, which repeat every
// H; so [t*, t* + H) is every later hyperperiod's schedule, and the analysed span [0, 2H)
// holds every instance of the whole run (the start included). nullopt when there is none.
std::optional<Duration> idle_cut(const ModelJobs& mj, const Result& r) {
  std::map<Duration, Duration> latest;  // per root release: the latest finish of its jobs
  for (std::size_t j = 0; j < mj.jobs.size(); ++j) {
    Duration& l = latest[mj.root_release[j]];
    l = std::max(l, r.finish[j].hi);
  }
  std::map<Duration, Duration> before;  // per root release t: the latest finish of the roots before t
  Duration run = std::numeric_limits<Duration>::min();
  for (const auto& [t, l] : latest) {
    before[t] = run;
    run = std::max(run, l);
  }
  auto idle_at = [&](Duration t) {  // t: a root release (t + H is one as well, below 2H)
    const auto it = before.find(t);
    return it != before.end() && it->second <= t;
  };
  for (const auto& [t, l] : latest)
    if (t < mj.hyperperiod && idle_at(t) && idle_at(t + mj.hyperperiod)) return t;
  return std::nullopt;
}

// The ready-queue key of a drifting timer's job depends on where in its phase window it is
// released (an EDF deadline counts from the release); the graph used the window's earliest.
// The order it assumed holds in every run unless the job's key can pass that of a job that may
// be pending with it (each ready between its earliest arrival and its latest start): then the
// empty string is not returned.
std::string order_fixed(const Model& m, const ModelJobs& mj, const Result& r) {
  auto ready = [&](std::size_t j) {
    Duration a = mj.jobs[j].release.lo;
    for (const Pred& p : mj.jobs[j].preds) a = std::max(a, r.finish[p.job].lo + p.delay.lo);
    return a;
  };
  auto root = [&](std::size_t j) {
    while (!mj.jobs[j].preds.empty()) j = mj.jobs[j].preds.front().job;
    return j;
  };
  for (std::size_t d = 0; d < mj.jobs.size(); ++d) {
    if (mj.jobs[d].priority == mj.priority_late[d]) continue;
    for (std::size_t o = 0; o < mj.jobs.size(); ++o) {
      // the keys of one release move together; others' ranges apart keep their order
      if (o == d || mj.priority_late[d] < mj.jobs[o].priority || mj.priority_late[o] < mj.jobs[d].priority ||
          root(o) == root(d))
        continue;
      if (ready(d) <= r.start[o].hi && ready(o) <= r.start[d].hi)
        return "the deadline order of '" + m.callbacks[mj.callback[d]].name + "' (a drifting timer's job) against '" +
               m.callbacks[mj.callback[o]].name + "' depends on the relative phase while both may be pending";
    }
  }
  return {};
}

}  // namespace

std::string outside_job_model(const Model& m, const ModelJobs& mj, const Result& r) {
  std::vector<Duration> demand(mj.partitions.size(), 0);  // the work of one hyperperiod (the last analysed)
  for (std::size_t j = 0; j < mj.jobs.size(); ++j)
    if (mj.root_release[j] >= mj.horizon - mj.hyperperiod)
      demand[partition_position(mj, j)] += mj.jobs[j].cost.hi;
  for (std::size_t k = 0; k < mj.partitions.size(); ++k) {
    Duration need = demand[k];  // with the threads above it on its core
    for (std::size_t a : mj.above[k]) need += demand[a];
    if (need > mj.hyperperiod)
      return "overload: the jobs of one hyperperiod need " + std::to_string(need) + " ns of the thread of executor '" +
             m.executors[mj.partitions[k]].name + "'" + (mj.above[k].empty() ? "" : " and the threads above it on its core") +
             " in " + std::to_string(mj.hyperperiod) + " ns (utilisation " + std::to_string(need * 100 / mj.hyperperiod) +
             " %), so the backlog grows without bound";
  }
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const auto& js = mj.of_callback[c];
    // The jobs of a callback after a loose fusion set (maybe-jobs) need no such check: they are
    // interchangeable. They carry no instance, so one key (the callback's, with no deadline) and
    // subtrees of the same callbacks and costs; only their order among themselves (seq, tie)
    // differs. Label each run of the callback in a real run with the job of the smallest order
    // whose predecessor has finished and that no earlier run took (there is one: the message run
    // was delivered, so as many labels are free as messages pending or dropped, at least one),
    // and its successors with that job's subtree: that is a schedule of the job set (the label
    // was ready, and it goes before the callback's other ready labels as the executor's one
    // instance at a time does, whichever message it takes — FIFO or the newest after an
    // overwrite), a message overwritten in a depth-1 queue or never run is a label of cost 0.
    if (std::any_of(js.begin(), js.end(), [&](std::size_t j) { return mj.maybe[j]; })) continue;
    // a timer keeps one pending release; a subscription queues up to its depth of messages
    // (a message leaves the queue when its job starts)
    const Callback& cb = m.callbacks[c];
    const std::size_t depth = cb.is_timer() ? 1 : static_cast<std::size_t>(std::max(1, cb.queue_depth));
    for (std::size_t k = 0; k + depth < js.size(); ++k) {
      const Job& next = mj.jobs[js[k + depth]];
      // the earliest the next job can arrive: its release, or its predecessor's earliest finish
      Duration arrive = next.release.lo;
      for (const Pred& p : next.preds) arrive = std::max(arrive, r.finish[p.job].lo + p.delay.lo);
      if (r.start[js[k]].hi >= arrive)
        return "callback '" + cb.name + "' may be released " + std::to_string(depth) + " more time(s) (by " +
               std::to_string(arrive) + " ns) before an instance starts (as late as " + std::to_string(r.start[js[k]].hi) +
               " ns): the executor then merges or drops releases, which the job model does not";
    }
  }
  if (std::string order = order_fixed(m, mj, r); !order.empty()) return order;
  // A fusion round pairs the k-th message of each member: every member's next job starts only
  // after each job of the round finished (the set then completed and its caches were taken).
  for (const auto& rounds : mj.fusion_rounds)
    for (std::size_t k = 0; k + 1 < rounds.size(); ++k) {
      Duration done = std::numeric_limits<Duration>::min();
      for (std::size_t j : rounds[k])
        if (j != kNoJob) done = std::max(done, r.finish[j].hi);
      for (std::size_t j : rounds[k + 1])
        if (j != kNoJob && r.start[j].lo < done)
          return "fusion input '" + m.callbacks[mj.callback[j]].name + "' may take its next message (" +
                 std::to_string(r.start[j].lo) + " ns) before its set's round completed (" + std::to_string(done) +
                 " ns): the rounds would not pair the messages of one period";
    }
  if (mj.horizon < 2 * mj.hyperperiod) return "fewer than two hyperperiods analysed";
  if (!idle_cut(mj, r)) {
    return "the thread is idle at no timer release t of the first hyperperiod and at t + one hyperperiod in every "
           "schedule (work carried over from one hyperperiod to the next is not analysed)";
  }
  return {};
}

}  // namespace chainrt::detail::sag
