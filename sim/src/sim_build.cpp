// chainrt sim: the simulator's set-up from the model — chains, callbacks, their outputs and
// implicit fusion sets, executors (each with its sched::Dispatcher), threads and cores.
#include "sim_state.hpp"

namespace chainrt::sim {

std::vector<std::vector<CacheOnlyCharge>> cache_only_charges(const Model& model) {
  std::vector<std::vector<CacheOnlyCharge>> out;
  for (const auto& set : implicit_fusion_sets(model)) {
    auto& mine = out.emplace_back();
    for (std::size_t c : set) {
      const Callback& cb = model.callbacks[c];
      mine.push_back({c, std::min(cb.best_case(), cb.wcet)});
    }
  }
  return out;
}

}  // namespace chainrt::sim

namespace chainrt::sim::detail {

void Simulator::build() {
  const std::size_t n = m_.callbacks.size();
  cb_.resize(n);
  r_.callbacks.resize(n);
  for (std::size_t c = 0; c < n; ++c) r_.callbacks[c].name = m_.callbacks[c].name;
  build_chains();
  build_callbacks();
  build_outputs();
  build_executors();
  if (am_) build_devices();
  if (o_.global_threads) build_groups();
  heap_.reserve(1024 + 4 * n + th_.size());
}

// Chains: their stats, leaves (a branching chain's fork-join end) and EDF keys.
void Simulator::build_chains() {
  r_.chains.resize(m_.chains.size());
  chain_deadline_.resize(m_.chains.size());
  std::vector<sched::ChainCompletion::Chain> ends(m_.chains.size());
  for (std::uint32_t i = 0; i < m_.chains.size(); ++i) {
    const Chain& ch = m_.chains[i];
    ChainStats& st = r_.chains[i];
    st.name = ch.name;
    st.deadline = ch.deadline;
    chain_deadline_[i] = ch.deadline;
    st.period = ch.period;
    if (ch.callbacks.empty()) {
      ends[i].source = static_cast<std::uint32_t>(m_.callbacks.size() + i);
      continue;
    }
    const std::size_t src = m_.callback_index(ch.callbacks.front());
    ends[i].source = static_cast<std::uint32_t>(src);
    ends[i].deadline = ch.deadline;
    if (st.period == 0 && m_.callbacks[src].is_timer()) st.period = m_.callbacks[src].period;
    // The instance ends when every leaf (the last callback of each root-to-leaf path) has run for
    // it: a branching chain's fork-join end, as the runtime's monitor has it (ChainSpec::leaves).
    std::vector<std::string> leaves;
    for (const auto& path : ch.paths())
      if (!path.empty() && std::find(leaves.begin(), leaves.end(), path.back()) == leaves.end())
        leaves.push_back(path.back());
    if (leaves.empty()) leaves.push_back(ch.callbacks.back());
    for (const auto& l : leaves) ends[i].leaves.push_back(static_cast<CallbackId>(m_.callback_index(l)));
    for (std::size_t p = 0; p < ch.callbacks.size(); ++p) {
      const std::size_t c = m_.callback_index(ch.callbacks[p]);
      const bool leaf = std::find(leaves.begin(), leaves.end(), ch.callbacks[p]) != leaves.end();
      cb_[c].chains.push_back(ChainRef{i, p == 0, leaf});
      if (cb_[c].chains.size() > kMaxStamps)
        throw std::invalid_argument("simulator: callback " + m_.callbacks[c].name + " is on more than 8 chains");
    }
    if (ch.deadline > 0)
      cb_[src].source_rel_deadline = std::min(cb_[src].source_rel_deadline, ch.deadline);
  }
  completion_ = sched::ChainCompletion(std::move(ends));
  chain_key_.assign(m_.chains.size(), 0);
  for (std::uint32_t i = 0; i < m_.chains.size(); ++i) {
    const Chain& ch = m_.chains[i];
    if (ch.callbacks.empty() || ch.deadline <= 0) continue;
    const Duration src_d = cb_[m_.callback_index(ch.callbacks.front())].source_rel_deadline;
    chain_key_[i] = src_d != kNoDeadline ? std::min(ch.deadline, src_d) : ch.deadline;
  }
}

// Callbacks: execution times, timers (armed in build_executors), input queues, fusion inputs.
void Simulator::build_callbacks() {
  const std::size_t n = m_.callbacks.size();
  std::uint32_t pool_size = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const Callback& cb = m_.callbacks[c];
    CbState& s = cb_[c];
    s.kind = cb.kind;
    s.wcet = cb.wcet;
    s.bcet = std::min(cb.best_case(), cb.wcet);
    if (auto x = o_.exec_script.find(cb.name); x != o_.exec_script.end()) s.exec_script = &x->second;
    if (auto x = o_.release_script.find(cb.name); x != o_.release_script.end() && cb.is_timer())
      s.release_script = &x->second;
    if (cb.is_timer()) {
      auto it = o_.offsets.find(cb.name);
      const Duration off = it != o_.offsets.end() ? it->second : cb.offset;
      s.clock.rule = o_.timer_rule;
      s.offset = off;
      s.jitter = cb.jitter;
      if (auto d = o_.release_delays.find(cb.name); d != o_.release_delays.end())
        s.fixed_delay = std::clamp<Duration>(d->second, 0, cb.jitter);
      if (cb.period <= 0) throw std::invalid_argument("simulator: timer " + cb.name + " has no period");
    } else {
      s.q_begin = pool_size;
      s.q_cap = static_cast<std::uint32_t>(std::max(1, cb.queue_depth));
      pool_size += s.q_cap;
    }
    for (const std::string& f : cb.fuses) {
      const std::size_t in = m_.callback_index(f);
      s.fuses.push_back(static_cast<std::uint32_t>(in));
      cb_[in].fused_by.push_back(static_cast<std::uint32_t>(c));
    }
  }
  pool_.resize(pool_size);
}

// Publish -> subscribers with the chains each hop belongs to, and the implicit fusion sets.
void Simulator::build_outputs() {
  const std::size_t n = m_.callbacks.size();
  // publish -> subscribers, with the chains each hop belongs to
  for (std::size_t c = 0; c < n; ++c) {
    const Callback& cb = m_.callbacks[c];
    for (const std::string& topic : cb.publishes) {
      const Topic* tp = m_.topic(topic);
      for (std::size_t sub : m_.subscribers(topic)) {
        Out o;
        o.sub = static_cast<std::uint32_t>(sub);
        o.comm = m_.placement_comm(cb, m_.callbacks[sub]);
        o.size = tp ? tp->size : 0;
        for (std::uint32_t i = 0; i < m_.chains.size(); ++i)
          for (const Hop& h : m_.chains[i].hops)
            if (h.from == cb.name && h.to == m_.callbacks[sub].name) {
              o.chains.push_back(i);
              o.comm = h.comm;
              if (h.message_size > 0) o.size = h.message_size;
            }
        o.fixed_delay = m_.communication.cost_of(o.comm).cost(o.size);
        cb_[c].outs.push_back(std::move(o));
      }
    }
  }

  // Implicit fusion sets (the reference system's Fusion node): two or more plain subscriptions
  // of one node that publish the same topics. Each caches its input; the one that completes
  // the set (every other member fresh) works and publishes one message carrying the chain
  // instances of all cached inputs; the others only cache and run their BCET.
  for (const auto& set : cache_only_charges(m_)) {  // implicit_fusion_sets, shared with the analyses
    std::vector<std::uint32_t> members;
    for (const CacheOnlyCharge& c : set) {
      members.push_back(static_cast<std::uint32_t>(c.callback));
      cb_[c.callback].cache_only = c.charge;
    }
    {
      for (std::uint32_t c : members) cb_[c].fset = static_cast<std::uint32_t>(fsets_.size());
      // whichever member publishes forwards the chain instances of every member's hops
      for (std::uint32_t c : members)
        for (Out& out : cb_[c].outs)
          for (std::uint32_t o : members)
            for (const Out& other : cb_[o].outs)
              if (other.sub == out.sub)
                for (std::uint32_t ch : other.chains)
                  if (std::find(out.chains.begin(), out.chains.end(), ch) == out.chains.end()) out.chains.push_back(ch);
      fsets_.push_back(members);
    }
  }
}

// Executors (their Dispatchers), threads, cores.
void Simulator::build_executors() {
  std::vector<std::uint32_t> host_core_base(m_.hosts.size() + 1, 0), host_rr(m_.hosts.size(), 0);
  for (std::size_t h = 0; h < m_.hosts.size(); ++h)
    host_core_base[h + 1] = host_core_base[h] + static_cast<std::uint32_t>(std::max(1, m_.hosts[h].cores));
  cores_.resize(std::max<std::uint32_t>(1, host_core_base.back()));
  for (std::size_t x = 0; x < m_.executors.size(); ++x) {
    const Executor& exd = m_.executors[x];
    std::optional<std::uint64_t> seed;
    if (o_.wait_set_seed) seed = *o_.wait_set_seed + x;
    ex_.emplace_back(sched::make_setup(m_, x, o_.policy, o_.threads), seed);
    ExecState& e = ex_.back();
    std::size_t h = 0;
    for (; h < m_.hosts.size(); ++h)
      if (m_.hosts[h].name == exd.host) break;
    const std::uint32_t host_cores = h < m_.hosts.size() ? host_core_base[h + 1] - host_core_base[h] : 1;
    const std::uint32_t base = h < m_.hosts.size() ? host_core_base[h] : 0;
    for (std::size_t t = 0; t < e.setup.threads.size(); ++t) {
      const sched::ThreadSpec& ts = e.setup.threads[t];
      ThreadState st;
      st.exec = static_cast<std::uint32_t>(x);
      st.local = static_cast<sched::ThreadId>(t);
      std::uint32_t core;
      if (!o_.threads && t < exd.threads.size())  // the model's threads: its placement rule (facts.hpp)
        core = static_cast<std::uint32_t>(simulated_core(m_, x, t)) % host_cores;
      else if (!ts.cores.empty()) core = static_cast<std::uint32_t>(ts.cores.front()) % host_cores;
      else core = h < m_.hosts.size() ? host_rr[h]++ % host_cores : 0;
      st.core = base + core;
      st.pinned = !ts.cores.empty();  // (make_setup copies the model thread's cores)
      const auto gid = static_cast<std::uint32_t>(th_.size());
      if (ts.reservation && ts.reservation->budget > 0 && ts.reservation->period > 0) {
        st.has_res = true;
        st.cls = 0;
        st.Q = ts.reservation->budget;
        st.P = ts.reservation->period;
      } else if (ts.fifo_priority) {  // thread_fifo_priority (model/facts.hpp), via make_setup
        st.cls = 1;
        st.rank = -static_cast<std::int64_t>(*ts.fifo_priority);
      } else {
        st.rank = gid;
      }
      th_.push_back(st);
      cores_[st.core].threads.push_back(gid);
      e.threads.push_back(gid);
      r_.threads.push_back(ThreadInfo{exd.name, ts.name, exd.host, static_cast<int>(core)});
    }
    for (std::size_t lc = 0; lc < e.setup.callbacks.size(); ++lc) {
      CbState& s = cb_[e.setup.callbacks[lc]];
      s.exec = static_cast<std::uint32_t>(x);
      s.local = static_cast<CallbackId>(lc);
      // On the release grid of epoch 0, armed at its first release: every timer starts at k = 0.
      if (s.kind == CallbackKind::Timer) e.d.arm(s.clock, s.offset, m_.callbacks[e.setup.callbacks[lc]].grid_period(), s.offset);
    }
  }
}

// SimOptions::global_threads: one group per host of several cores whose threads are all unpinned.
void Simulator::build_groups() {
  group_of_core_.assign(cores_.size(), kNone);
  std::uint32_t base = 0;
  for (const Host& h : m_.hosts) {
    const std::uint32_t n = static_cast<std::uint32_t>(std::max(1, h.cores));
    CoreGroup g;
    bool pinned = false;
    for (std::uint32_t t = 0; t < th_.size(); ++t)
      if (th_[t].core >= base && th_[t].core < base + n) {
        g.threads.push_back(t);
        pinned = pinned || th_[t].pinned;
      }
    if (n > 1 && !pinned && !g.threads.empty()) {
      for (std::uint32_t c = base; c < base + n; ++c) {
        g.cores.push_back(c);
        group_of_core_[c] = static_cast<std::uint32_t>(groups_.size());
      }
      groups_.push_back(std::move(g));
    }
    base += n;
  }
  ready_scratch_.reserve(th_.size());
}

}  // namespace chainrt::sim::detail
