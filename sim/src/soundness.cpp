// chainrt sim: the soundness harness (see soundness.hpp): generated systems x adversarial
// simulations under each analysis's policy, compared against its bounds. Built only when the
// chainrt_analysis target exists (sim/CMakeLists.txt).
#include "chainrt/sim/soundness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/witness.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "soundness_fusion.hpp"

namespace chainrt::sim {
namespace {

struct Variant {
  const char* name;
  ExecTime exec;
  bool random_offsets;
};
constexpr Variant kVariants[] = {
    {"synchronous-wcet", ExecTime::Wcet, false},
    {"offsets-wcet", ExecTime::Wcet, true},
    {"synchronous-mix", ExecTime::Mix, false},
    {"offsets-uniform", ExecTime::Uniform, true},
};

const char* exec_name(ExecTime e) {
  switch (e) {
    case ExecTime::Wcet: return "wcet";
    case ExecTime::Bcet: return "bcet";
    case ExecTime::Uniform: return "uniform";
    case ExecTime::Mix: return "mix";
  }
  return "wcet";
}

// Single-threaded executors packed onto fewer cores, pinned or not, with random SCHED_FIFO
// priorities 1-3 or none (PiCAS's executors sharing a core). False (nothing changed) when an
// executor has several threads or a reservation.
bool share_cores(Model& model, gen::Rng& rng) {
  bool single = !model.executors.empty();
  for (const auto& e : model.executors) single &= e.threads.size() == 1 && !e.threads[0].reservation;
  if (!single) return false;
  for (auto& h : model.hosts) {
    h.cores = static_cast<int>(rng.uniform_int(1, std::max(1, h.cores / 2)));
    for (auto& a : h.accelerators)  // an accelerator server pinned to a core that is gone: another one
      for (int& c : a.server_cores)
        if (c >= h.cores) c = static_cast<int>(rng.uniform_int(0, h.cores - 1));
  }
  for (auto& e : model.executors) {
    int cores = 1;
    for (const auto& h : model.hosts)
      if (h.name == e.host) cores = h.cores;
    Thread& t = e.threads[0];
    const double r = rng.uniform01();
    if (r < 0.2) t.cores.clear();  // unpinned
    else t.cores = {static_cast<int>(rng.uniform_int(0, cores - 1))};
    const auto p = rng.uniform_int(0, 3);
    if (p == 0) t.fifo_priority.reset();
    else t.fifo_priority = static_cast<int>(p);
  }
  return true;
}

// Some core may run threads of two executors (pinned to it, or unpinned on a host where the
// threads outnumber the cores or some thread is pinned).
bool has_shared_cores(const Model& m) {
  for (const auto& h : m.hosts) {
    std::vector<std::pair<int, const Thread*>> ts;  // (executor, thread)
    for (std::size_t x = 0; x < m.executors.size(); ++x)
      if (m.executors[x].host == h.name)
        for (const auto& t : m.executors[x].threads) ts.emplace_back(static_cast<int>(x), &t);
    bool pinned = false;
    for (const auto& [x, t] : ts) pinned |= !t->cores.empty();
    for (std::size_t a = 0; a < ts.size(); ++a)
      for (std::size_t b = a + 1; b < ts.size(); ++b) {
        if (ts[a].first == ts[b].first) continue;
        const auto& ca = ts[a].second->cores;
        const auto& cb = ts[b].second->cores;
        if (ca.empty() || cb.empty()) {
          if (pinned || static_cast<int>(ts.size()) > h.cores) return true;
          continue;
        }
        for (int c : ca)
          if (std::find(cb.begin(), cb.end(), c) != cb.end()) return true;
      }
  }
  return false;
}

// Linear chains with at least `len` callbacks, not yet edited by a feature.
std::vector<std::size_t> chains_of_length(const Model& m, std::size_t len, const std::vector<bool>& used) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < m.chains.size(); ++i)
    if (!used[i] && m.chains[i].is_linear() && m.chains[i].callbacks.size() >= len) out.push_back(i);
  return out;
}

// A callback on two chains (soundness.hpp). Merge: B's callback at position p − 1 publishes the
// topic of A's callback x instead of its own, and B becomes B[0..p−1], x, A's tail (B's old
// tail is never triggered again). Fork: A's callback A[j] also publishes B[1]'s topic, B's timer
// publishes nothing (a lone timer), and B becomes A[0..j], B[1..] with A's period and a
// deadline in [T/2, T]. `kind`: 0 merge, 1 fork.
bool share_callbacks(Model& m, gen::Rng& rng, int* kind, bool fan_out = false) {
  std::vector<bool> used(m.chains.size(), false);
  auto cands = chains_of_length(m, 2, used);
  if (cands.size() < 2) return false;
  const std::size_t a = cands[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(cands.size()) - 1))];
  std::size_t b = a;
  while (b == a) b = cands[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(cands.size()) - 1))];
  Chain A = m.chains[a], B = m.chains[b];
  auto cb = [&](const std::string& n) -> Callback& { return m.callbacks[m.callback_index(n)]; };
  *kind = fan_out ? 1 : rng.uniform01() < 0.5 ? 0 : 1;
  if (*kind == 0) {
    const std::size_t pa = static_cast<std::size_t>(rng.uniform_int(1, static_cast<std::int64_t>(A.callbacks.size()) - 1));
    const std::size_t pb = static_cast<std::size_t>(rng.uniform_int(1, static_cast<std::int64_t>(B.callbacks.size()) - 1));
    cb(B.callbacks[pb - 1]).publishes = {cb(A.callbacks[pa]).topic};
    std::vector<std::string> path(B.callbacks.begin(), B.callbacks.begin() + static_cast<std::ptrdiff_t>(pb));
    path.insert(path.end(), A.callbacks.begin() + static_cast<std::ptrdiff_t>(pa), A.callbacks.end());
    B.callbacks = path;
  } else {
    const std::size_t j = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(A.callbacks.size()) - 2));
    cb(A.callbacks[j]).publishes.push_back(cb(B.callbacks[1]).topic);
    cb(B.callbacks[0]).publishes.clear();
    std::vector<std::string> path(A.callbacks.begin(), A.callbacks.begin() + static_cast<std::ptrdiff_t>(j) + 1);
    path.insert(path.end(), B.callbacks.begin() + 1, B.callbacks.end());
    B.callbacks = path;
    B.period = A.period;
    B.deadline = rng.uniform_int(std::max<Duration>(1, A.period / 2), A.period);
  }
  B.hops.clear();
  m.chains[b] = B;
  if (fan_out) m.chains.erase(m.chains.begin() + static_cast<std::ptrdiff_t>(b));  // its branch: work on no chain
  m.reindex();
  return true;
}

// A chain that branches onto another executor and joins at an implicit fusion node whose
// inputs are all on the chain (soundness.hpp): with u = A[j], w = A[j+1], v = A[j+2], u also
// publishes to a new subscription y in a node of another executor, y publishes to a new
// subscription z in w's node that publishes what w publishes ({w, z} is the fusion set), and A
// becomes the DAG u → w → v, u → y → z → v. `leaf`: y ends the branch instead (no z).
bool branch_join(Model& m, gen::Rng& rng, bool* leaf) {
  std::vector<bool> used(m.chains.size(), false);
  auto cands = chains_of_length(m, 3, used);
  if (m.executors.size() == 1 && m.executors[0].threads.size() >= 2 && m.nodes.size() >= 2) {
    // One multi-threaded executor (the EDF paper's system): split it into two, each with half
    // of the threads and of the nodes, so that the branch runs on another multi-threaded one.
    Executor e2 = m.executors[0];
    e2.name = m.executors[0].name + "_b";
    const std::size_t half = m.executors[0].threads.size() / 2;
    e2.threads.assign(m.executors[0].threads.begin() + static_cast<std::ptrdiff_t>(half), m.executors[0].threads.end());
    m.executors[0].threads.resize(half);
    for (std::size_t n = 0; n < m.nodes.size(); ++n)
      if (n % 2 == 1) m.nodes[n].executor = e2.name;
    m.executors.push_back(e2);
    m.reindex();
  }
  if (cands.empty() || m.executors.size() < 2) return false;
  const std::size_t a = cands[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(cands.size()) - 1))];
  Chain A = m.chains[a];
  const std::size_t j = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(A.callbacks.size()) - 3));
  const Callback u = m.callback(A.callbacks[j]), w = m.callback(A.callbacks[j + 1]);
  const std::string& wx = m.node(w.node).executor;
  std::vector<std::size_t> nodes;  // nodes of another executor than w's and u's
  for (std::size_t n = 0; n < m.nodes.size(); ++n)
    if (m.nodes[n].executor != wx && m.nodes[n].executor != m.node(u.node).executor) nodes.push_back(n);
  if (nodes.empty()) return false;
  const Node& n2 = m.nodes[nodes[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(nodes.size()) - 1))]];
  std::string group;
  for (const auto& g : m.groups)
    if (g.node == n2.name && (group.empty() || g.type == GroupType::Reentrant)) group = g.name;
  *leaf = rng.uniform01() < 0.25;
  const std::string ty = A.name + "_bj_y", tz = A.name + "_bj_z";
  Callback y;
  y.name = A.name + "_branch";
  y.kind = CallbackKind::Subscription;
  y.node = n2.name;
  y.group = group;
  y.topic = ty;
  y.wcet = std::max<Duration>(1, w.wcet);
  y.priority = w.priority;
  if (!*leaf) y.publishes = {tz};
  Callback z;
  z.name = A.name + "_join";
  z.kind = CallbackKind::Subscription;
  z.node = w.node;
  z.group = w.group;
  z.topic = tz;
  z.wcet = std::max<Duration>(1, w.wcet / 2);
  z.priority = w.priority;
  z.publishes = w.publishes;
  m.callbacks[m.callback_index(u.name)].publishes.push_back(ty);
  m.topics.push_back(Topic{ty, 64});
  m.callbacks.push_back(y);
  if (!*leaf) {
    m.topics.push_back(Topic{tz, 64});
    m.callbacks.push_back(z);
  }
  std::vector<Hop> hops;
  for (std::size_t k = 1; k < A.callbacks.size(); ++k) hops.push_back(Hop{A.callbacks[k - 1], A.callbacks[k]});
  hops.push_back(Hop{u.name, y.name});
  A.callbacks.push_back(y.name);
  if (!*leaf) {
    hops.push_back(Hop{y.name, z.name});
    hops.push_back(Hop{z.name, A.callbacks[j + 2]});
    A.callbacks.push_back(z.name);
  }
  A.hops = hops;
  m.chains[a] = A;
  m.reindex();
  return true;
}

// Shared accelerators (PiCAS Sec. IV; model/accelerator.hpp): every host gets a device "gpu"
// reached directly (first come, first served) or through the chain-priority server (kind 0 and
// 1), or both a server-mode "gpu" and a direct-mode "dla" (kind 2). The server thread runs at
// SCHED_FIFO 99 (the model's threads are kept below), pinned to a random core shared with the
// executors' threads or unpinned, with an overhead of 0-100 us per request. About two thirds of
// the chains get one or two segments on callbacks of theirs (timers and subscriptions outside
// implicit fusion sets): a device time of 10-100 % of the callback's WCET split into copy-in,
// kernel and copy-out, issued anywhere in its CPU time, best cases below the worst for half of
// them; the segments of each device are scaled to a utilization of at most 5-40 % of it.
// `block` (feature accelerator-block): the server-mode "gpu" (kinds 1 and 2 only) has block
// preemption, and each of its segments a block of 1-100 % of its kernel (a third of them whole
// kernels, a third at most 10 %).
bool add_accelerators(Model& m, gen::Rng& rng, int* kind, bool block = false) {
  const double r = rng.uniform01();
  *kind = block ? (r < 0.6 ? 1 : 2) : r < 0.4 ? 0 : r < 0.8 ? 1 : 2;
  for (auto& e : m.executors) {
    if (e.priority && *e.priority > 98) e.priority = 98;
    for (auto& t : e.threads)
      if (t.fifo_priority && *t.fifo_priority > 98) t.fifo_priority = 98;
  }
  for (auto& h : m.hosts) {
    Accelerator gpu;
    gpu.name = "gpu";
    gpu.access = *kind == 0 ? AcceleratorAccess::Direct : AcceleratorAccess::Server;
    if (gpu.access == AcceleratorAccess::Server) {
      gpu.server_priority = 99;
      if (rng.uniform01() < 0.6) gpu.server_cores = {static_cast<int>(rng.uniform_int(0, std::max(1, h.cores) - 1))};
      gpu.server_overhead = rng.uniform01() < 0.3 ? 0 : rng.uniform_int(1, 100'000);
      gpu.block_preemption = block;
    }
    h.accelerators.push_back(gpu);
    if (*kind == 2) h.accelerators.push_back(Accelerator{"dla", AcceleratorAccess::Direct, std::nullopt, {}, 0});
  }
  std::set<std::size_t> fused;
  for (const auto& set : implicit_fusion_sets(m)) fused.insert(set.begin(), set.end());
  struct Use {
    std::size_t cb;
    std::string device;
    Duration period;
  };
  std::vector<Use> uses;
  std::set<std::size_t> taken;
  for (const auto& ch : m.chains) {
    if (rng.uniform01() < 0.35) continue;
    const int n = rng.uniform01() < 0.3 ? 2 : 1;
    for (int k = 0; k < n; ++k) {
      const std::size_t c = m.callback_index(
          ch.callbacks[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(ch.callbacks.size()) - 1))]);
      const Callback& cb = m.callbacks[c];
      if (fused.count(c) || taken.count(c) || cb.wcet < 10 ||
          (cb.kind != CallbackKind::Timer && cb.kind != CallbackKind::Subscription))
        continue;
      taken.insert(c);
      uses.push_back({c, *kind == 2 && rng.uniform01() < 0.5 ? "dla" : "gpu", ch.period});
    }
  }
  if (uses.empty()) return false;
  std::map<std::pair<std::string, std::string>, double> util;  // (host, device) -> utilization
  for (const Use& u : uses) {
    Callback& cb = m.callbacks[u.cb];
    AcceleratorSegment s;
    s.accelerator = u.device;
    s.after = rng.uniform_int(0, cb.wcet);
    const Duration g = std::max<Duration>(3, static_cast<Duration>(cb.wcet * (0.1 + 0.9 * rng.uniform01())));
    s.copy_in = static_cast<Duration>(g * 0.2 * rng.uniform01());
    s.copy_out = static_cast<Duration>(g * 0.2 * rng.uniform01());
    s.kernel = std::max<Duration>(1, g - s.copy_in - s.copy_out);
    cb.accelerator_segments.push_back(s);
    util[{m.executor_of(cb).host, u.device}] += static_cast<double>(s.wcet()) / static_cast<double>(u.period);
  }
  for (const Use& u : uses) {
    Callback& cb = m.callbacks[u.cb];
    AcceleratorSegment& s = cb.accelerator_segments.back();
    const double limit = 0.05 + 0.35 * rng.uniform01(), have = util[{m.executor_of(cb).host, u.device}];
    if (have > limit) {
      const double f = limit / have;
      s.copy_in = static_cast<Duration>(s.copy_in * f);
      s.copy_out = static_cast<Duration>(s.copy_out * f);
      s.kernel = std::max<Duration>(1, static_cast<Duration>(s.kernel * f));
    }
    if (rng.uniform01() < 0.5) {
      s.kernel_bcet = rng.uniform_int(1, s.kernel);
      if (s.copy_in) s.copy_in_bcet = rng.uniform_int(0, s.copy_in);
      if (s.copy_out) s.copy_out_bcet = rng.uniform_int(0, s.copy_out);
    }
    if (block && u.device == "gpu") {
      const double b = rng.uniform01();
      s.block = b < 1.0 / 3 ? s.kernel
                : b < 2.0 / 3 ? std::max<Duration>(1, static_cast<Duration>(s.kernel * 0.1 * rng.uniform01()))
                              : rng.uniform_int(1, s.kernel);
    }
  }
  m.reindex();
  return true;
}

bool uses_segments(const Model& m, const Chain& ch) {
  return std::any_of(ch.callbacks.begin(), ch.callbacks.end(),
                     [&](const std::string& n) { return !m.callback(n).accelerator_segments.empty(); });
}

// A system the analysis applies to, or false: the EDF-paper system (multi-threaded), its
// single-threaded partition, then CROS-RT's multi-host chains (harsh: in a random order, and a
// fifth of the systems overloaded).
struct FeatureDraw {
  int kind = -1;  // shared-callbacks: 0 merge, 1 fork; branch-join: 0 join, 1 leaf
  Duration platform_Q = 0, platform_T = 0;  // platform: Q of blackout every T on every core
};

}  // namespace

// The blackout curve of a core that loses Q every T at any phase: the most blackout in a window
// Δ is ⌊Δ/T⌋·Q + min(Q, Δ mod T); the points are its values at the windows where it stops
// rising (k·T + Q) and a ramp inside the first blackout (the curve's step rounding is above it).
std::vector<BlackoutPoint> periodic_blackout(Duration Q, Duration T) {
  std::vector<BlackoutPoint> c;
  for (Duration part : {Q / 4, Q / 2})
    if (part > 0 && (c.empty() || part > c.back().window)) c.push_back({part, part});
  c.push_back({Q, Q});
  for (Duration k = 1; k <= 4; ++k) {
    if (k * T > c.back().window) c.push_back({k * T, k * Q});
    c.push_back({k * T + Q, (k + 1) * Q});
  }
  return c;
}

// The system the simulator runs for a `platform` system: the analysed model plus, on every core
// of every host, a SCHED_FIFO 99 thread of its own executor whose timer takes the core for Q
// every T at `phase` — the blackouts the analysis knows only as the hosts' curves.
Model with_platform_threads(const Model& base, Duration Q, Duration T, Duration phase) {
  Model m = base;
  for (auto& h : m.hosts) h.blackout.clear();
  // (--harsh sets deadlines to the bounds, which cros-rt's busy period lets exceed the period.)
  m.constrained_deadlines = false;
  for (const auto& h : base.hosts)
    for (int c = 0; c < h.cores; ++c) {
      const std::string name = "__platform_" + h.name + "_" + std::to_string(c);
      Executor e;
      e.name = name;
      e.host = h.name;
      e.process = name;
      e.policy = base.executors.empty() ? Policy::RosDefault : base.executors.front().policy;
      e.threads.push_back(Thread{"t0", {c}, 99, std::nullopt, ""});
      m.executors.push_back(e);
      m.nodes.push_back(Node{name, name});
      Callback cb;
      cb.name = name;
      cb.kind = CallbackKind::Timer;
      cb.node = name;
      cb.wcet = Q;
      cb.bcet = Q;
      cb.period = T;
      cb.offset = (phase + c * (T / 3)) % T;
      cb.priority = 1;
      m.callbacks.push_back(cb);
    }
  validate(m, m.name);
  return m;
}

namespace {

// The feature (soundness.hpp) applied to a generated system; false when it cannot have it.
bool apply_feature(const std::string& feature, Model& m, gen::Rng& rng, FeatureDraw& fd) {
  if (feature == "shared-cores") return share_cores(m, rng) && has_shared_cores(m);
  bool ok = false;
  if (feature == "shared-callbacks") {
    ok = share_callbacks(m, rng, &fd.kind);
  } else if (feature == "fan-out") {
    ok = share_callbacks(m, rng, &fd.kind, true);
  } else if (feature == "fan-out-tail") {
    // The fan-out at the lowest priorities of the system, its execution times raised 2-6x:
    // often without an end bound, so the analyses see it as a tail that only blocks (R_work,
    // priority-aware) — the case of a sensor chain feeding localisation and map nodes.
    std::vector<std::string> on_chain;
    for (const auto& ch : m.chains) on_chain.insert(on_chain.end(), ch.callbacks.begin(), ch.callbacks.end());
    ok = share_callbacks(m, rng, &fd.kind, true);
    if (ok) {
      std::vector<std::string> still;
      for (const auto& ch : m.chains) still.insert(still.end(), ch.callbacks.begin(), ch.callbacks.end());
      int lowest = 0;
      for (const auto& c : m.callbacks) lowest = std::min(lowest, c.priority.value_or(0));
      for (auto& c : m.callbacks)
        if (std::find(on_chain.begin(), on_chain.end(), c.name) != on_chain.end() &&
            std::find(still.begin(), still.end(), c.name) == still.end() && !c.is_timer()) {
          c.priority = --lowest;  // (a chain's own priorities are above: sched's effective priority)
          c.wcet *= rng.uniform_int(2, 6);
        }
      m.reindex();
    }
  } else if (feature == "platform") {
    // A platform that takes Q every T (2-15 % of T, T 1-20 ms) from every core, above every
    // thread: the model's threads stay below SCHED_FIFO 99 (the platform threads' priority).
    fd.platform_T = rng.uniform_int(1'000'000, 20'000'000);
    fd.platform_Q = std::max<Duration>(1, static_cast<Duration>(fd.platform_T * (0.02 + 0.13 * rng.uniform01())));
    for (auto& e : m.executors) {
      if (e.priority && *e.priority > 98) e.priority = 98;
      for (auto& t : e.threads)
        if (t.fifo_priority && *t.fifo_priority > 98) t.fifo_priority = 98;
    }
    for (auto& h : m.hosts) h.blackout = periodic_blackout(fd.platform_Q, fd.platform_T);
    ok = true;
  } else if (feature == "accelerator" || feature == "accelerator-block") {
    ok = add_accelerators(m, rng, &fd.kind, feature == "accelerator-block");
  } else if (feature == "branch-join") {
    bool leaf = false;
    ok = branch_join(m, rng, &leaf);
    fd.kind = leaf ? 1 : 0;
  }
  if (!ok) return false;
  try {
    validate(m, m.name);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// The system collapsed onto one single-threaded executor with every timer on the release grid
// (phase: guaranteed) at a random offset and a period rounded to the nearest of a harmonic set
// (hyperperiod 200 time units): the configuration the analyses of known phases need (sag), which
// the generators above never produce.
Model on_one_thread_with_phases(const Model& m, gen::Rng& rng) {
  Model c = m;
  Executor e = c.executors.front();
  e.threads = {Thread{"t0", {0}, std::nullopt, std::nullopt, ""}};
  e.thread_classes.clear();
  e.priority.reset();
  c.executors = {e};
  for (auto& n : c.nodes) n.executor = e.name;
  const Duration unit = 1'000'000;
  const Duration harmonic[] = {10, 20, 25, 40, 50, 100, 200};
  for (auto& cb : c.callbacks) {
    cb.affinity.clear();
    if (!cb.is_timer()) continue;
    Duration best = harmonic[0];
    for (Duration h : harmonic)
      if (std::llabs(h * unit - cb.period) < std::llabs(best * unit - cb.period)) best = h;
    cb.period = best * unit;
    cb.phase = TimerPhase::Guaranteed;
    cb.offset = rng.uniform_int(0, best - 1) * unit;
  }
  for (auto& ch : c.chains)
    if (!ch.callbacks.empty() && c.callback(ch.callbacks.front()).is_timer())
      ch.period = ch.deadline = c.callback(ch.callbacks.front()).period;
  c.reindex();
  return c;
}

bool generate(const ResponseTimeAnalysis& a, const SoundnessOptions& o, std::uint64_t seed, Model& out,
              bool* overloaded, FeatureDraw* fd = nullptr) {
  if (o.generator) {  // the caller's systems
    *overloaded = false;
    return o.generator(seed, out);
  }
  if (o.fusion || o.phases) {  // joins of several timers at implicit fusion nodes (soundness_fusion.hpp)
    *overloaded = false;
    return generate_fusion_system(a, seed, out, o.phases);
  }
  gen::Rng rng(seed ^ 0x5eedULL);
  gen::EdfPaperParams p;
  p.m = o.m;
  p.n = o.n;
  p.b = o.b;
  p.g = o.g;
  p.alpha = o.alpha * rng.uniform01();  // fraction of callbacks in mutually exclusive groups
  p.u_norm = o.u_min + (o.u_max - o.u_min) * rng.uniform01();
  p.policy = a.policy();
  int first = 0;
  if (o.harsh) {
    gen::Rng h(seed ^ 0x4a125bULL);
    if (h.uniform01() < 0.2) p.u_norm = 1.0 + 0.3 * h.uniform01();
    first = static_cast<int>(h.uniform_int(0, 2));
  }
  *overloaded = p.u_norm > 1.0;
  std::string why;
  Model multi = gen::edf_paper_system(p, seed);
  gen::Rng frng(seed ^ 0xfea7u);
  Model tried[3];
  for (int i = 0; i < 3; ++i) {
    Model m;
    switch ((first + i) % 3) {
      case 0: m = multi; break;
      case 1: m = gen::partition_single_threaded(multi, a.policy()); break;
      default: {
        gen::UUniFastChainsParams q;
        q.total_u = p.u_norm;
        m = gen::uunifast_chains_system(q, seed);
        for (auto& e : m.executors) e.policy = a.policy();
      }
    }
    if (!o.feature.empty() && !apply_feature(o.feature, m, frng, *fd)) continue;
    if (a.applicable(m, &why)) {
      out = std::move(m);
      return true;
    }
    tried[i] = std::move(m);
  }
  if (!o.feature.empty()) return false;
  for (Model& m : tried) {  // none fits as generated: the known-phase configuration (sag)
    if (m.executors.empty()) continue;
    Model one = on_one_thread_with_phases(m, frng);
    if (a.applicable(one, &why)) {
      out = std::move(one);
      return true;
    }
  }
  return false;
}

struct SetResult {
  bool generated = false, applicable = false, schedulable = false;
  std::int64_t chains_checked = 0, simulations = 0, fusion_chains_checked = 0, beyond_period_checked = 0;
  std::uint64_t executions = 0;
  double max_ratio = 0;
  int shuffled = 0, below_wcet = 0, constrained = 0, jitter = 0, overloaded = 0, tight = 0, shared_cores = 0;
  std::int64_t climb_simulations = 0;
  int climb_raised = 0;
  bool feature = false;
  int merge = 0, fork = 0, leaf = 0;
  int direct_access = 0, server_access = 0, both_access = 0;  // accelerator: the modes drawn
  std::map<std::string, double> ratios;  // per bounded chain: worst simulated / bound
  std::int64_t feature_chains = 0;       // bounded chains with the feature, in all simulations
  bool feature_bounded = false;          // some chain with the feature had a bound to check
  bool multi_threaded = false;           // some executor has several threads
  bool multi_host = false;               // the model has several hosts
  std::vector<Counterexample> cx;
};

// The harsh perturbations of a generated system (soundness.hpp); counts what it applied.
void perturb(Model& model, gen::Rng& rng, SetResult& sr, bool keep_cores) {
  if (rng.uniform01() < 0.5) {  // priorities that contradict each other, with ties
    sr.shuffled = 1;
    for (auto& cb : model.callbacks) cb.priority = static_cast<int>(rng.uniform_int(1, 8));
    for (auto& c : model.chains) c.priority = static_cast<int>(rng.uniform_int(1, 4));
  }
  if (rng.uniform01() < 0.5) {  // execution below WCET anywhere down to 1 ns
    sr.below_wcet = 1;
    for (auto& cb : model.callbacks) cb.bcet = rng.uniform_int(1, std::max<Duration>(1, cb.wcet));
  }
  if (rng.uniform01() < 0.3) {  // constrained deadlines
    sr.constrained = 1;
    for (auto& c : model.chains) c.deadline = rng.uniform_int(std::max<Duration>(1, c.deadline / 2), c.deadline);
  }
  if (rng.uniform01() < 0.4 && !keep_cores) {  // executors sharing cores, ordered by SCHED_FIFO priorities (PiCAS)
    if (share_cores(model, rng)) sr.shared_cores = 1;
  }
  if (rng.uniform01() < 0.2) {  // timer release jitter
    sr.jitter = 1;
    for (auto& cb : model.callbacks)
      if (cb.is_timer()) cb.jitter = rng.uniform_int(0, cb.period / 20);
  }
}

// A chain of a fusion system from one of a fusion node's sources to the node, most of them on
// through the join (soundness_fusion.cpp names them c_F<fusion>_s<source>; the background
// chains c_b<k>).
bool is_join_chain(const std::string& chain) { return chain.rfind("c_F", 0) == 0; }

// Simulated worst case against the bounds.
struct Check {
  double worst = 0;  // max observed / bound over bounded chains
  double sum = 0;    // Σ observed / bound (tie-break of the climb)
  std::int64_t chains = 0, fusion_chains = 0;
  std::int64_t beyond_period = 0;  // of `chains`: bounds above the chain's period (R > T analysed)
  std::map<std::string, double> ratio;  // per bounded chain with instances
  struct Violation {
    std::string chain, kind;
    Duration bound, observed;
  };
  std::vector<Violation> violations;
};

Check compare(const AnalysisResult& res, const SimResult& r) {
  Check c;
  for (const ChainBound& b : res.chains) {
    const ChainStats* st = r.chain(b.chain);
    if (!st || !b.bounded) continue;
    ++c.chains;
    if (b.wcrt_bound > st->period) ++c.beyond_period;
    if (is_join_chain(b.chain)) ++c.fusion_chains;
    if (b.wcrt_bound > 0 && st->instances > 0) {
      const double ratio = static_cast<double>(st->wcrt) / static_cast<double>(b.wcrt_bound);
      c.worst = std::max(c.worst, ratio);
      c.sum += ratio;
      c.ratio[b.chain] = ratio;
    }
    if (st->instances > 0 && st->wcrt > b.wcrt_bound) c.violations.push_back({b.chain, "wcrt", b.wcrt_bound, st->wcrt});
    else if (b.bcrt_bound && st->instances > 0 && st->bcrt < *b.bcrt_bound)
      c.violations.push_back({b.chain, "bcrt", *b.bcrt_bound, st->bcrt});
    else if (b.schedulable && st->deadline_misses > 0) c.violations.push_back({b.chain, "deadline", b.deadline, st->wcrt});
  }
  return c;
}

// One simulation setting: timer offsets and either an ExecTime rule or, for the climb, a fixed
// execution time per callback (exec[c] in [BCET, WCET]).
struct Setting {
  std::string name;
  ExecTime exec = ExecTime::Wcet;
  std::map<std::string, Duration> offsets;
  std::vector<Duration> fixed;  // empty, or one execution time per callback
  // Release jitter: drawn per release (random_jitter) or its maximum, or a constant delay per
  // timer (delays; the phases family's climb).
  bool random_jitter = true;
  std::map<std::string, Duration> delays;
  // A scripted run (SimOptions::exec_script, release_script: a sag witness) and how long it must
  // run at least.
  std::map<std::string, std::vector<Duration>> exec_script, release_script;
  Duration until = 0;
};

// The offsets/fusion family's simulations (SoundnessOptions::phases): the declared offsets,
// with the release jitter at its maximum, drawn per release, and none (constant delays of 0),
// under WCET, BCET/WCET mixes and uniform execution times; harsh: also a constant random delay
// per timer. Each with its simulation seed.
std::vector<std::pair<Setting, std::uint64_t>> phase_settings(const SoundnessOptions& o, const Model& model,
                                                              const std::vector<int>& timers, gen::Rng& rng,
                                                              std::uint64_t seed) {
  struct PhaseVariant {
    const char* name;
    ExecTime exec;
    int jitter;  // 0: maximum, 1: drawn per release, 2: none, 3: a constant random delay per timer
  };
  static constexpr PhaseVariant kPhaseVariants[] = {
      {"declared-wcet-max-jitter", ExecTime::Wcet, 0},     {"declared-wcet-random-jitter", ExecTime::Wcet, 1},
      {"declared-mix-random-jitter", ExecTime::Mix, 1},    {"declared-uniform-no-jitter", ExecTime::Uniform, 2},
      {"declared-wcet-random-delays", ExecTime::Wcet, 3},  {"declared-mix-max-jitter", ExecTime::Mix, 0}};
  std::vector<std::pair<Setting, std::uint64_t>> out;
  const int n = std::clamp(o.variants, 1, 4) + (o.harsh ? 2 : 0);
  for (int v = 0; v < n; ++v) {
    const PhaseVariant& var = kPhaseVariants[v];
    Setting st;
    st.name = var.name;
    st.exec = var.exec;
    st.random_jitter = var.jitter == 1;
    for (int c : timers) {
      const Callback& cb = model.callbacks[static_cast<std::size_t>(c)];
      if (var.jitter == 0) st.delays[cb.name] = cb.jitter;
      if (var.jitter == 2) st.delays[cb.name] = 0;
      if (var.jitter == 3) st.delays[cb.name] = rng.uniform_int(0, cb.jitter);
    }
    out.emplace_back(std::move(st), seed + static_cast<std::uint64_t>(v));
  }
  return out;
}

// One climb move of the offsets/fusion family: a timer's constant release delay to 0, to its
// declared jitter, or anywhere between.
void mutate_release_delay(Setting& next, const Model& model, const std::vector<int>& timers, gen::Rng& rng) {
  const Callback& cb = model.callbacks[static_cast<std::size_t>(timers[rng.uniform_int(0, timers.size() - 1)])];
  const double r = rng.uniform01();
  next.delays[cb.name] = r < 0.3 ? 0 : r < 0.6 ? cb.jitter : rng.uniform_int(0, cb.jitter);
}

// One set of the check (check_set), in its stages: draw the system and analyse it (analyse),
// plan its simulations (plan), simulate the fixed settings (explore), then climb from the worst
// of them (climb). Every simulation is compared with the analysis, its violations kept as
// counterexamples (simulate, save).
class SetCheck {
 public:
  SetCheck(const ResponseTimeAnalysis& a, const SoundnessOptions& o, int set)
      : a_(a), o_(o), set_(set), seed_(gen::Rng::stream_seed(o.seed, static_cast<std::uint64_t>(set))) {}

  SetResult run() {
    if (!analyse()) return sr_;
    plan();
    if (explore()) climb();
    return sr_;
  }

 private:
  // Draws the system (with a feature: up to 8 draws until one has it and the analysis applies),
  // perturbs it (harsh) and analyses it; false when it is not analysed.
  bool analyse() {
    bool overloaded = false;
    bool got = false;
    for (int draw = 0; draw < (o_.feature.empty() ? 1 : 8) && !got; ++draw) {
      if (draw > 0) seed_ = gen::Rng::stream_seed(seed_, 0x9e37u + static_cast<std::uint64_t>(draw));
      got = generate(a_, o_, seed_, model_, &overloaded, &fd_);
    }
    if (!got) return false;
    sr_.generated = true;
    gen::Rng hr(seed_ ^ 0x6a125bULL);
    if (o_.harsh) perturb(model_, hr, sr_, o_.feature == "shared-cores");
    if (o_.feature == "shared-cores") sr_.shared_cores = 1;
    if (o_.feature == "shared-callbacks") (fd_.kind == 0 ? sr_.merge : sr_.fork) = 1;
    if (o_.feature == "branch-join" && fd_.kind == 1) sr_.leaf = 1;
    if (o_.feature == "accelerator" || o_.feature == "accelerator-block")
      (fd_.kind == 0 ? sr_.direct_access : fd_.kind == 1 ? sr_.server_access : sr_.both_access) = 1;
    // BCET mixes need a best case: give callbacks without one a quarter of their WCET.
    for (auto& cb : model_.callbacks)
      if (!cb.bcet) cb.bcet = std::max<Duration>(1, cb.wcet / 4);
    std::string why;
    if (!a_.applicable(model_, &why)) return false;
    sr_.applicable = true;
    sr_.feature = !o_.feature.empty();
    for (const auto& e : model_.executors) sr_.multi_threaded = sr_.multi_threaded || e.threads.size() > 1;
    sr_.multi_host = model_.hosts.size() > 1;
    sr_.overloaded = overloaded;
    res_ = a_.analyze(model_);
    if (o_.harsh && hr.uniform01() < 0.4) {
      // Deadlines equal to the bounds (an EDF analysis sees new deadlines: analysed again).
      bool any = false;
      for (const ChainBound& b : res_.chains)
        if (b.bounded)
          for (auto& c : model_.chains)
            if (c.name == b.chain && b.wcrt_bound > 0) {
              c.deadline = b.wcrt_bound;
              any = true;
            }
      if (any) {
        sr_.tight = 1;
        res_ = a_.analyze(model_);
      }
    }
    sr_.schedulable = res_.schedulable;
    return true;
  }

  // What the simulations run and for how long, the timers they vary, and the chains with the feature.
  void plan() {
    // What the simulator runs: the system, or what the analysis made of it (SoundnessOptions).
    simulated_ = o_.simulated ? o_.simulated(model_) : model_;
    Duration longest = 0;
    for (const auto& c : model_.chains) longest = std::max(longest, c.period);
    for (const auto& cb : model_.callbacks)
      if (cb.is_timer()) longest = std::max(longest, cb.period);
    horizon_ = std::max<Duration>(1'000'000'000, longest * o_.horizon_periods);
    rng_ = gen::Rng(seed_ ^ 0x0ff5e75ULL);
    for (std::size_t c = 0; c < model_.callbacks.size(); ++c)
      if (model_.callbacks[c].is_timer()) timers_.push_back(static_cast<int>(c));
    // A system whose timers all have guaranteed phases (the offsets/fusion family, or the
    // known-phase configuration on_one_thread_with_phases gives sag) runs at its declared offsets.
    bool guaranteed = !timers_.empty();
    for (int c : timers_)
      guaranteed = guaranteed && model_.callbacks[static_cast<std::size_t>(c)].phase == TimerPhase::Guaranteed;
    declared_ = o_.phases || guaranteed;
    global_hosts_ = unpinned_threads_share_cores(simulated_);
    // The chains with the feature: those sharing a callback with another chain, or branching.
    std::map<std::string, int> on;
    for (const auto& c : model_.chains)
      for (const auto& n : c.callbacks) on[n]++;
    for (const auto& c : model_.chains) {
      bool f = o_.feature == "branch-join"                                          ? !c.is_linear()
               : o_.feature == "accelerator" || o_.feature == "accelerator-block" ? uses_segments(model_, c)
               : o_.feature == "shared-callbacks"                                   ? false
                                                                                    : !o_.feature.empty();
      if (o_.feature == "shared-callbacks")
        for (const auto& n : c.callbacks) f |= on[n] > 1;
      if (f) featured_.insert(c.name);
    }
  }

  // One simulation of setting `st`, compared with the bounds into `out`; false on a violation. A
  // system with a host whose unpinned threads outnumber its cores runs twice: with the simulator's placement
  // and with the kernel's global scheduling (SimOptions::global_threads); `out` is the worse.
  bool simulate_setting(const Setting& st, std::uint64_t sim_seed, Check& out) {
    const bool placed = simulate_once(st, sim_seed, false, out);
    if (!global_hosts_) return placed;
    Check g;
    const bool global = simulate_once(st, sim_seed, true, g);
    if (g.worst > out.worst) out = std::move(g);
    return placed && global;
  }

  bool simulate_once(const Setting& st, std::uint64_t sim_seed, bool global_threads, Check& out) {
    SimOptions so;
    so.global_threads = global_threads;
    so.duration = horizon_;
    so.seed = sim_seed;
    so.policy = a_.policy();
    so.exec = st.exec;
    so.keep_samples = false;
    so.offsets = st.offsets;
    so.random_jitter = st.random_jitter;
    so.release_delays = st.delays;
    so.exec_script = st.exec_script;
    so.release_script = st.release_script;
    so.duration = std::max(horizon_, st.until);
    const Model* run = &simulated_;
    if (!st.fixed.empty()) {
      fixed_model_ = simulated_;
      for (std::size_t c = 0; c < fixed_model_.callbacks.size(); ++c) {
        fixed_model_.callbacks[c].wcet = st.fixed[c];
        fixed_model_.callbacks[c].bcet = st.fixed[c];
      }
      run = &fixed_model_;
      so.exec = ExecTime::Wcet;
    }
    Model platform_model;
    if (fd_.platform_T > 0) {
      platform_model = with_platform_threads(*run, fd_.platform_Q, fd_.platform_T,
                                             static_cast<Duration>(sim_seed % static_cast<std::uint64_t>(fd_.platform_T)));
      run = &platform_model;
    }
    const SimResult r = simulate(*run, so);
    ++sr_.simulations;
    sr_.executions += r.executions;
    out = compare(res_, r);
    for (const auto& [name, ratio] : out.ratio) {
      sr_.ratios[name] = std::max(sr_.ratios[name], ratio);
      sr_.feature_chains += featured_.count(name);
      sr_.feature_bounded = sr_.feature_bounded || featured_.count(name);
    }
    sr_.chains_checked += out.chains;
    sr_.beyond_period_checked += out.beyond_period;
    if (o_.fusion || o_.phases) sr_.fusion_chains_checked += out.fusion_chains;
    sr_.max_ratio = std::max(sr_.max_ratio, out.worst);
    for (const auto& v : out.violations) {
      Counterexample c{set_, seed_, st.name, v.chain, v.kind, v.bound, v.observed, ""};
      if (!o_.counterexample_dir.empty()) c.file = save(st, so, v);
      sr_.cx.push_back(std::move(c));
    }
    return out.violations.empty();
  }

  // The counterexample's model file, with how to reproduce it; returns its path.
  std::string save(const Setting& st, const SimOptions& so, const Check::Violation& v) const {
    Model saved = simulated_;
    for (auto& cb : saved.callbacks)
      if (cb.is_timer() && st.offsets.count(cb.name)) cb.offset = st.offsets.at(cb.name);
    // The climb's execution times are the saved model's BCETs, replayed with --exec bcet
    // (the WCETs, and so the analysis' WCRT bounds, are unchanged).
    if (!st.fixed.empty())
      for (std::size_t i = 0; i < saved.callbacks.size(); ++i) saved.callbacks[i].bcet = st.fixed[i];
    // (A platform system is saved as simulated: with its platform threads, without the curve.)
    if (fd_.platform_T > 0)
      saved = with_platform_threads(saved, fd_.platform_Q, fd_.platform_T,
                                    static_cast<Duration>(so.seed % static_cast<std::uint64_t>(fd_.platform_T)));
    for (auto& e : saved.executors) e.policy = a_.policy();
    std::filesystem::create_directories(o_.counterexample_dir);
    const std::string file =
        o_.counterexample_dir + "/" + a_.name() + "-set" + std::to_string(set_) + "-" + st.name + ".yaml";
    std::ofstream f(file);
    f << "# soundness counterexample: analysis " << a_.name() << " bounds chain " << v.chain << " (" << v.kind
      << ") by " << v.bound << " ns; simulated " << v.observed << " ns\n";
    if (!st.delays.empty()) {  // (the simulator's release_delays: not a model field)
      f << "# constant release delays of the simulation (SimOptions::release_delays):";
      for (const auto& [t, d] : st.delays) f << " " << t << "=" << d << "ns";
      f << "\n";
    }
    for (const auto& [what, script] : {std::pair{"execution times", &st.exec_script}, {"release delays", &st.release_script}})
      for (const auto& [cb, xs] : *script) {  // (SimOptions::exec_script / release_script: not model fields)
        f << "# scripted " << what << " of " << cb << " (ns, from the start):";
        for (Duration x : xs) f << " " << x;
        f << "\n";
      }
    f << "# reproduce: chainrt simulate " << file << " --policy " << to_string(a_.policy()) << " --exec "
      << (st.fixed.empty() ? exec_name(st.exec) : "bcet") << " --seed " << so.seed << " --duration " << horizon_
      << "ns" << (so.global_threads ? " --unpinned global" : "") << " --json\n"
      << save_model_to_string(saved);
    return file;
  }

  // The worst simulation so far (the climb's start) among those with fixed times and delays.
  void consider(const Setting& st, const Check& c) {
    if (st.exec != ExecTime::Wcet && st.exec != ExecTime::Bcet) return;  // the climb needs fixed times
    if (declared_ && st.random_jitter && st.delays.empty()) return;       // ... and fixed release delays
    if (!have_best_ || c.worst > best_check_.worst || (c.worst == best_check_.worst && c.sum > best_check_.sum)) {
      best_ = st;
      best_check_ = c;
      have_best_ = true;
    }
  }

  // The fixed settings: the declared offsets with jitter varied (the offsets/fusion family), else
  // the variants' offsets, and (harsh) clustered offsets; false on a violation.
  bool explore() {
    if (declared_) {  // the offsets/fusion family: declared offsets, jitter varied (phase_settings)
      for (auto& [st, sim_seed] : phase_settings(o_, model_, timers_, rng_, seed_)) {
        Check c;
        if (!simulate_setting(st, sim_seed, c)) return false;
        consider(st, c);
      }
    }
    const int variants = std::clamp(o_.variants, 1, 4);
    for (int v = 0; v < variants && !declared_; ++v) {
      const Variant& var = kVariants[v];
      Setting st;
      st.name = var.name;
      st.exec = var.exec;
      for (int c : timers_) {
        const auto& cb = model_.callbacks[static_cast<std::size_t>(c)];
        st.offsets[cb.name] = var.random_offsets ? rng_.uniform_int(0, cb.period - 1) : 0;
      }
      Check c;
      if (!simulate_setting(st, seed_ + static_cast<std::uint64_t>(v), c)) return false;
      consider(st, c);
    }
    if (o_.harsh && !declared_) {
      // Offsets clustered within 3 ns of two instants: the releases' order is all that differs.
      for (int v = 0; v < 2; ++v) {
        Setting st;
        st.name = v == 0 ? "clustered-wcet" : "clustered-mix";
        st.exec = v == 0 ? ExecTime::Wcet : ExecTime::Mix;
        Duration base[2] = {0, 0};
        for (int c : timers_) {
          const auto& cb = model_.callbacks[static_cast<std::size_t>(c)];
          if (base[1] == 0) base[1] = rng_.uniform_int(0, cb.period - 1);
          st.offsets[cb.name] = std::min(cb.period - 1, base[rng_.uniform_int(0, 1)] + rng_.uniform_int(0, 3));
        }
        Check c;
        if (!simulate_setting(st, seed_ + 10 + static_cast<std::uint64_t>(v), c)) return false;
        consider(st, c);
      }
    }
    return replay_witnesses();
  }

  // sag's worst-case schedules replayed (chainrt::sag_witnesses: one per chain it bounds, where
  // it covers the system on one thread), whichever analysis is checked: a real run at each
  // bound sag reaches. Not a start of the climb (its scripts would override the climb's moves).
  bool replay_witnesses() {
    if (!declared_) return true;
    if (a_.name() == "sag" && std::none_of(res_.chains.begin(), res_.chains.end(),
                                           [](const ChainBound& b) { return b.bounded; }))
      return true;  // (sag declined: no witness, and no second exploration to learn it)
    for (const auto& e : simulated_.executors)
      if (e.policy != a_.policy()) return true;  // the witnesses are schedules of the model's own policy
    for (const ScheduleWitness& w : sag_witnesses(simulated_)) {  // of the charged model (facts.hpp)
      Setting st;
      st.name = "sag-witness-" + w.chain;
      st.exec = ExecTime::Wcet;
      st.random_jitter = false;
      st.exec_script = w.exec;
      st.release_script = w.release_delay;
      st.until = w.until;
      Check c;
      if (!simulate_setting(st, seed_ + 200, c)) return false;
    }
    return true;
  }

  // One or two random moves of the climb: a timer's release delay (declared offsets) or offset,
  // or a callback's execution time.
  void climb_moves(Setting& next) {
    const int moves = static_cast<int>(rng_.uniform_int(1, 2));
    for (int mv = 0; mv < moves; ++mv) {
      if (declared_ && !timers_.empty() && rng_.uniform01() < 0.5) {
        mutate_release_delay(next, model_, timers_, rng_);  // the declared offsets stay
      } else if (!declared_ && !timers_.empty() && rng_.uniform01() < 0.5) {
        const auto& cb = model_.callbacks[static_cast<std::size_t>(timers_[rng_.uniform_int(0, timers_.size() - 1)])];
        Duration& off = next.offsets[cb.name];
        const double r = rng_.uniform01();
        if (r < 0.3) {
          off = rng_.uniform_int(0, cb.period - 1);
        } else if (r < 0.7) {
          Duration d = 1;
          for (int k = static_cast<int>(rng_.uniform_int(0, 7)); k > 0; --k) d *= 10;
          off += rng_.uniform01() < 0.5 ? d : -d;
        } else {
          const auto& other =
              model_.callbacks[static_cast<std::size_t>(timers_[rng_.uniform_int(0, timers_.size() - 1)])];
          off = next.offsets[other.name] + rng_.uniform_int(-2, 2);
        }
        off = std::clamp<Duration>(off, 0, cb.period - 1);
      } else {
        const std::size_t c = static_cast<std::size_t>(rng_.uniform_int(0, model_.callbacks.size() - 1));
        const Duration lo = model_.callbacks[c].best_case(), hi = model_.callbacks[c].wcet;
        const double r = rng_.uniform01();
        next.fixed[c] = r < 0.4 ? lo : r < 0.7 ? hi : rng_.uniform_int(lo, hi);
      }
    }
  }

  // Hill climbing over offsets and per-callback execution times from the worst simulation.
  void climb() {
    if (o_.climb <= 0 || !have_best_ || best_check_.chains <= 0) return;
    Setting cur = best_;
    if (cur.fixed.empty()) {
      cur.fixed.resize(model_.callbacks.size());
      for (std::size_t c = 0; c < model_.callbacks.size(); ++c)
        cur.fixed[c] = cur.exec == ExecTime::Bcet ? model_.callbacks[c].best_case() : model_.callbacks[c].wcet;
    }
    if (declared_ && cur.delays.empty())  // (the maximum jitter as constant delays)
      for (int c : timers_)
        cur.delays[model_.callbacks[static_cast<std::size_t>(c)].name] = model_.callbacks[static_cast<std::size_t>(c)].jitter;
    Check cur_check = best_check_;
    const double start = best_check_.worst;
    for (int step = 0; step < o_.climb; ++step) {
      Setting next = cur;
      next.name = "climb" + std::to_string(step);
      climb_moves(next);
      Check c;
      ++sr_.climb_simulations;
      if (!simulate_setting(next, seed_ + 100 + static_cast<std::uint64_t>(step), c)) return;
      if (c.worst > cur_check.worst || (c.worst == cur_check.worst && c.sum >= cur_check.sum)) {
        cur = std::move(next);
        cur_check = c;
      }
    }
    sr_.climb_raised = cur_check.worst > start ? 1 : 0;
  }

  const ResponseTimeAnalysis& a_;
  const SoundnessOptions& o_;
  const int set_;
  std::uint64_t seed_;
  SetResult sr_;
  Model model_, simulated_;
  Model fixed_model_;  // the model with the climb's execution times as WCET (= BCET)
  FeatureDraw fd_;
  AnalysisResult res_;
  Duration horizon_ = 0;
  gen::Rng rng_{0};
  std::vector<int> timers_;
  bool declared_ = false;
  bool global_hosts_ = false;  // simulate_setting runs each setting placed and global too
  std::set<std::string> featured_;
  Setting best_;
  Check best_check_;
  bool have_best_ = false;
};

SetResult check_set(const ResponseTimeAnalysis& a, const SoundnessOptions& o, int set) {
  return SetCheck(a, o, set).run();
}

}  // namespace

namespace {

// An analysis checked under another policy it bounds (SoundnessOptions::policy): the same
// analysis, its policy() the one chosen (the generators and the simulator read it).
class UnderPolicy : public ResponseTimeAnalysis {
 public:
  UnderPolicy(const ResponseTimeAnalysis& a, Policy p) : a_(a), p_(p) {}
  std::string name() const override { return a_.name(); }
  std::string summary() const override { return a_.summary(); }
  Policy policy() const override { return p_; }
  bool bounds_policy(Policy p) const override { return a_.bounds_policy(p); }
  bool single_threaded() const override { return a_.single_threaded(); }
  bool applicable(const Model& m, std::string* why) const override { return a_.applicable(m, why); }
  AnalysisResult analyze(const Model& m) const override { return a_.analyze(m); }
  bool schedulable(const Model& m) const override { return a_.schedulable(m); }

 private:
  const ResponseTimeAnalysis& a_;
  const Policy p_;
};

}  // namespace

SoundnessReport run_soundness(const SoundnessOptions& o) {
  const ResponseTimeAnalysis* a = find_analysis(o.analysis);
  if (!a) throw std::invalid_argument("unknown analysis '" + o.analysis + "'");
  if (o.policy && *o.policy != a->policy()) {
    if (!a->bounds_policy(*o.policy))
      throw std::invalid_argument("analysis '" + o.analysis + "' does not bound policy " + to_string(*o.policy));
    const UnderPolicy under(*a, *o.policy);
    SoundnessOptions same = o;
    same.policy.reset();
    return run_soundness(under, same);
  }
  const auto& f = soundness_features();
  if (!o.feature.empty() && std::find(f.begin(), f.end(), o.feature) == f.end())
    throw std::invalid_argument("unknown feature '" + o.feature + "' (" + [&] {
      std::string all;
      for (const auto& n : f) all += (all.empty() ? "" : ", ") + n;
      return all;
    }() + ")");
  return run_soundness(*a, o);
}

SoundnessReport run_soundness(const ResponseTimeAnalysis& analysis, const SoundnessOptions& o) {
  const ResponseTimeAnalysis* a = &analysis;
  SoundnessReport rep;
  rep.analysis = a->name();
  rep.policy = to_string(a->policy());
  std::vector<SetResult> results(static_cast<std::size_t>(std::max(0, o.sets)));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int s; (s = next.fetch_add(1)) < o.sets;) results[static_cast<std::size_t>(s)] = check_set(*a, o, o.first + s);
  };
  const int jobs = std::max(1, std::min(o.jobs, 64));
  std::vector<std::thread> pool;
  for (int j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  rep.feature = o.feature;
  rep.phases = o.phases;
  std::vector<double> ratios;
  for (auto& r : results) {
    rep.systems += r.generated;
    rep.applicable += r.applicable;
    rep.schedulable += r.schedulable;
    rep.chains_checked += r.chains_checked;
    rep.beyond_period_checked += r.beyond_period_checked;
    rep.fusion_chains_checked += r.fusion_chains_checked;
    rep.simulations += r.simulations;
    rep.executions += r.executions;
    rep.max_ratio = std::max(rep.max_ratio, r.max_ratio);
    rep.shuffled_priorities += r.shuffled;
    rep.below_wcet += r.below_wcet;
    rep.constrained_deadlines += r.constrained;
    rep.jitter += r.jitter;
    rep.overloaded += r.overloaded;
    rep.tight_deadlines += r.tight;
    rep.shared_cores += r.shared_cores;
    rep.climb_simulations += r.climb_simulations;
    rep.climb_raised += r.climb_raised;
    rep.feature_systems += r.feature;
    rep.feature_chains_checked += r.feature_chains;
    rep.feature_bounded_systems += r.feature_bounded;
    rep.multi_threaded_systems += r.applicable && r.multi_threaded;
    rep.multi_host_systems += r.applicable && r.multi_host;
    rep.merges += r.merge;
    rep.forks += r.fork;
    rep.leaf_branches += r.leaf;
    rep.direct_access_systems += r.applicable && r.direct_access;
    rep.server_access_systems += r.applicable && r.server_access;
    rep.both_access_systems += r.applicable && r.both_access;
    for (const auto& [name, x] : r.ratios) {
      ratios.push_back(x);
      if ((o.fusion || o.phases) && is_join_chain(name)) rep.join_ratios.push_back(x);
      if (r.multi_threaded) rep.multi_threaded_ratios.push_back(x);
    }
    for (auto& c : r.cx) rep.counterexamples.push_back(std::move(c));
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    auto at = [&](double q) { return ratios[std::min(ratios.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ratios.size())))]; };
    rep.ratio_chains = static_cast<std::int64_t>(ratios.size());
    rep.ratio_median = at(0.5);
    rep.ratio_p90 = at(0.9);
    rep.ratio_p10 = at(0.1);
    double sum = 0;
    for (double x : ratios) sum += x;
    rep.ratio_mean = sum / static_cast<double>(ratios.size());
    rep.ratios = std::move(ratios);
    std::sort(rep.join_ratios.begin(), rep.join_ratios.end());
    std::sort(rep.multi_threaded_ratios.begin(), rep.multi_threaded_ratios.end());
  }
  rep.bound_over_worst = bound_over_worst(rep.ratios);
  return rep;
}

BoundOverWorst bound_over_worst(const std::vector<double>& ascending_ratios) {
  BoundOverWorst d;
  d.histogram.assign(std::size(kTightnessBuckets) + 1, 0);
  if (ascending_ratios.empty()) return d;
  // bound / worst: the ratios' inverses, in descending order of the ratio (a tight chain first)
  std::vector<double> inv;
  for (double x : ascending_ratios) inv.push_back(x > 0 ? 1.0 / x : std::numeric_limits<double>::infinity());
  std::sort(inv.begin(), inv.end());
  auto at = [&](double q) { return inv[std::min(inv.size() - 1, static_cast<std::size_t>(q * static_cast<double>(inv.size())))]; };
  d.median = at(0.5);
  d.p90 = at(0.9);
  for (double b : inv) {
    std::size_t k = 0;
    while (k < std::size(kTightnessBuckets) && b >= kTightnessBuckets[k]) ++k;
    d.histogram[k]++;
  }
  return d;
}

namespace {
// The report's figures: six decimals.
std::string six_decimals(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6f", x);
  return b;
}
}  // namespace

std::string bound_over_worst_to_json(const BoundOverWorst& d) {
  std::ostringstream os;
  os << "{\"median\": " << six_decimals(d.median) << ", \"p90\": " << six_decimals(d.p90) << ", \"histogram\": [";
  for (std::size_t i = 0; i < d.histogram.size(); ++i) os << (i ? ", " : "") << d.histogram[i];
  os << "], \"bucket_upper_ends\": [";
  for (std::size_t i = 0; i < std::size(kTightnessBuckets); ++i) os << (i ? ", " : "") << six_decimals(kTightnessBuckets[i]);
  os << "]}";
  return os.str();
}

const std::vector<std::string>& soundness_features() {
  static const std::vector<std::string> f{"shared-cores", "shared-callbacks", "branch-join", "fan-out", "fan-out-tail",
                                          "platform", "accelerator", "accelerator-block"};
  return f;
}

std::string report_to_json(const SoundnessReport& r) {
  auto q = [](const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o + "\"";
  };
  const auto fmt = six_decimals;
  const std::string ratio = six_decimals(r.max_ratio);
  std::ostringstream os;
  os << "{\"analysis\": " << q(r.analysis) << ", \"policy\": " << q(r.policy) << ", \"systems\": " << r.systems << ", \"applicable\": " << r.applicable
     << ", \"schedulable\": " << r.schedulable << ", \"chains_checked\": " << r.chains_checked
     << ", \"beyond_period_checked\": " << r.beyond_period_checked
     << ", \"fusion_chains_checked\": " << r.fusion_chains_checked << ", \"simulations\": " << r.simulations << ", \"executions\": " << r.executions << ", \"max_ratio\": " << ratio
     << ", \"harsh\": {\"shuffled_priorities\": " << r.shuffled_priorities << ", \"below_wcet\": " << r.below_wcet
     << ", \"constrained_deadlines\": " << r.constrained_deadlines << ", \"jitter\": " << r.jitter
     << ", \"overloaded\": " << r.overloaded << ", \"tight_deadlines\": " << r.tight_deadlines
     << ", \"shared_cores\": " << r.shared_cores
     << ", \"climb_simulations\": " << r.climb_simulations << ", \"climb_raised\": " << r.climb_raised << "}"
     << ", \"feature\": " << q(r.feature) << ", \"phases\": " << (r.phases ? "true" : "false")
     << ", \"feature_systems\": " << r.feature_systems
     << ", \"feature_chains_checked\": " << r.feature_chains_checked
     << ", \"feature_bounded_systems\": " << r.feature_bounded_systems
     << ", \"multi_threaded_systems\": " << r.multi_threaded_systems
     << ", \"multi_host_systems\": " << r.multi_host_systems << ", \"merges\": " << r.merges << ", \"forks\": " << r.forks << ", \"leaf_branches\": " << r.leaf_branches
     << ", \"direct_access_systems\": " << r.direct_access_systems << ", \"server_access_systems\": " << r.server_access_systems
     << ", \"both_access_systems\": " << r.both_access_systems
     << ", \"tightness\": {\"chains\": " << r.ratio_chains << ", \"median\": " << fmt(r.ratio_median)
     << ", \"p90\": " << fmt(r.ratio_p90) << ", \"p10\": " << fmt(r.ratio_p10) << ", \"mean\": " << fmt(r.ratio_mean)
     << ", \"bound_over_worst\": " << bound_over_worst_to_json(r.bound_over_worst) << "}, \"ratios\": [";
  for (std::size_t i = 0; i < r.ratios.size(); ++i) {  // %.17g: the same double back in a reader
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", r.ratios[i]);
    os << (i ? ", " : "") << b;
  }
  os << "]";
  auto list = [&](const char* name, const std::vector<double>& xs) {
    os << ", \"" << name << "\": [";
    for (std::size_t i = 0; i < xs.size(); ++i) {
      char b[32];
      std::snprintf(b, sizeof b, "%.17g", xs[i]);
      os << (i ? ", " : "") << b;
    }
    os << "]";
  };
  // a subset's ratios and its own tightness (a campaign's merge computes the same from the lists)
  auto subset = [&](const char* name, const char* tightness, const std::vector<double>& xs) {
    list(name, xs);
    os << ", \"" << tightness << "\": {\"chains\": " << xs.size()
       << ", \"bound_over_worst\": " << bound_over_worst_to_json(bound_over_worst(xs)) << "}";
  };
  if (r.phases || !r.join_ratios.empty()) subset("join_ratios", "join_tightness", r.join_ratios);
  if (r.phases || !r.multi_threaded_ratios.empty())
    subset("multi_threaded_ratios", "multi_threaded_tightness", r.multi_threaded_ratios);
  os << ", \"counterexamples\": [";
  for (std::size_t i = 0; i < r.counterexamples.size(); ++i) {
    const auto& c = r.counterexamples[i];
    os << (i ? ", " : "") << "{\"set\": " << c.set << ", \"seed\": " << c.seed << ", \"variant\": " << q(c.variant)
       << ", \"chain\": " << q(c.chain) << ", \"kind\": " << q(c.kind) << ", \"bound_ns\": " << c.bound
       << ", \"observed_ns\": " << c.observed << ", \"file\": " << q(c.file) << "}";
  }
  os << "]}";
  return os.str();
}

}  // namespace chainrt::sim
