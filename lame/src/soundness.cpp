// LaME's plans under the soundness harness (lame/soundness.hpp): the random systems, the plan as
// an analysis (its verdicts as bounds) and the plan's model as what the simulator runs.
#include "chainrt/lame/soundness.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <sstream>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/lame/lame.hpp"
#include "chainrt/model/yaml_io.hpp"

namespace chainrt::lame {

namespace {

// Allocate's verdicts as an analysis result: every bounded linear chain (RT and BE).
class PlanAnalysis : public ResponseTimeAnalysis {
 public:
  explicit PlanAnalysis(SoundnessCounts* counts) : counts_(counts) {}
  std::string name() const override { return "lame"; }
  std::string summary() const override {
    return "LaME plan (Enright et al.): RT chains by fp-mt (Theorem 1), BE chains by the busy window of be_check.cpp";
  }
  Policy policy() const override { return Policy::Lame; }
  bool applicable(const Model& model, std::string* why) const override {
    std::string exec;
    for (const auto& ch : model.chains)
      for (const auto& n : ch.callbacks) {
        const std::string& e = model.node(model.callback(n).node).executor;
        if (!exec.empty() && e != exec) {
          if (why) *why = "LaME allocates the chains of one executor";
          return false;
        }
        exec = e;
      }
    if (exec.empty() && why) *why = "no chains";
    return !exec.empty();
  }
  AnalysisResult analyze(const Model& model) const override {
    const Allocation a = allocate(model);
    AnalysisResult r;
    r.analysis = name();
    r.schedulable = a.rt_schedulable && a.be_starvation_free;
    if (counts_) {
      bool any = false;
      for (const auto& v : a.verdicts) any = any || v.bounded;
      std::lock_guard<std::mutex> lk(mutex_);
      if (any) bounded_systems_.insert(model.name);
    }
    for (const auto& v : a.verdicts) {
      ChainBound b;
      b.chain = v.chain;
      b.bounded = v.bounded;
      b.wcrt_bound = v.bound;
      b.deadline = v.deadline;
      b.slack = v.deadline - v.bound;
      b.schedulable = v.bounded && v.meets_deadline;
      b.reason = v.reason;
      r.chains.push_back(b);
      if (!counts_) continue;
      if (v.cls == CriticalityClass::RealTime) {
        rt_bounded_ += v.bounded;
      } else {
        be_bounded_ += v.bounded;
        for (const auto& l : a.lin.chains)
          if (l.name == v.chain && v.bounded && v.bound > l.period) ++be_beyond_;
        be_overload_ += !v.bounded && v.reason.find("overloaded") != std::string::npos;
      }
    }
    return r;
  }
  void tally() const {
    if (!counts_) return;
    counts_->systems_bounded = static_cast<std::int64_t>(bounded_systems_.size());
    counts_->rt_bounded = rt_bounded_;
    counts_->be_bounded = be_bounded_;
    counts_->be_beyond_period = be_beyond_;
    counts_->be_overload_refused = be_overload_;
  }

 private:
  SoundnessCounts* counts_;
  mutable std::atomic<std::int64_t> rt_bounded_{0}, be_bounded_{0}, be_beyond_{0}, be_overload_{0};
  mutable std::mutex mutex_;
  mutable std::set<std::string> bounded_systems_;  // by model name (one per drawn system)
};

// A drawn system before it is written: its callbacks, nodes and chains.
struct RandomCb {
  std::string name, node, kind, topic, out;
  Duration wcet = 0, period = 0;
  int depth = 1;
};
struct RandomChain {
  std::string name;
  std::vector<std::string> path;
  Duration period = 0, deadline = 0;
  int criticality = 0;  // 0: BE
};
struct RandomDraw {
  std::vector<RandomCb> cbs;
  std::vector<std::string> nodes;
  std::vector<RandomChain> chains;
};

constexpr int kPeriodsMs[] = {10, 20, 25, 40, 50, 100, 200};

// The node of a new callback named `own`: a quarter of the callbacks join an existing node
// (its default group is mutually exclusive).
std::string node_for(gen::Rng& rng, RandomDraw& d, const std::string& own) {
  if (!d.nodes.empty() && rng.uniform01() < 0.25)
    return d.nodes[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(d.nodes.size()) - 1))];
  d.nodes.push_back(own);
  return own;
}

// Chain number c with utilisation share `share` drawn onto d (its callbacks too).
void draw_chain(gen::Rng& rng, RandomDraw& d, int c, double share) {
  RandomChain ch;
  ch.name = "c" + std::to_string(c);
  const bool be = rng.uniform01() < 0.55;
  ch.criticality = be ? 0 : static_cast<int>(rng.uniform_int(1, 3));
  const int n = static_cast<int>(rng.uniform_int(1, 3));
  double u = std::clamp(share, 0.02, 0.95);
  // Slow BE chains: the chain's work alone exceeds most of its period (its instances overlap).
  if (be && rng.uniform01() < 0.3) u = 0.6 + 0.6 * rng.uniform01();
  // A BE chain may branch off an earlier chain's prefix (Fig. 3).
  std::size_t up = d.chains.size();
  if (be && !d.chains.empty() && rng.uniform01() < 0.35)
    up = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(d.chains.size()) - 1));
  const std::string p = ch.name + "_";
  std::string prev_topic;
  if (up < d.chains.size()) {
    const RandomChain& U = d.chains[up];
    const std::size_t k = static_cast<std::size_t>(rng.uniform_int(1, static_cast<std::int64_t>(U.path.size())));
    ch.path.assign(U.path.begin(), U.path.begin() + static_cast<std::ptrdiff_t>(k));
    ch.period = U.period;
    for (auto& x : d.cbs)
      if (x.name == ch.path.back()) {
        if (x.out.empty()) x.out = "t_" + x.name;
        prev_topic = x.out;
      }
  } else {
    ch.period = static_cast<Duration>(kPeriodsMs[rng.uniform_int(0, 6)]) * 1'000'000;
  }
  const Duration per = std::max<Duration>(20'000, static_cast<Duration>(u * static_cast<double>(ch.period) / n));
  for (int j = 0; j < n; ++j) {
    RandomCb x;
    x.name = p + std::to_string(j);
    x.node = node_for(rng, d, p + std::to_string(j) + "_node");
    x.wcet = std::max<Duration>(20'000, static_cast<Duration>(static_cast<double>(per) * (0.5 + rng.uniform01())));
    if (prev_topic.empty()) {
      x.kind = "timer";
      x.period = ch.period;
    } else {
      x.kind = "subscription";
      x.topic = prev_topic;
      x.depth = static_cast<int>(rng.uniform_int(1, 3));
    }
    x.out = "t_" + x.name;
    prev_topic = x.out;
    d.cbs.push_back(x);
    ch.path.push_back(x.name);
  }
  // Subscriptions of the last callback's topic only exist on a chain: a leaf publishes nothing.
  ch.deadline = ch.period;
  d.chains.push_back(ch);
}

// The model file of a drawn system (the communication cost, when there is one, drawn here).
std::string random_yaml(gen::Rng& rng, const RandomDraw& d, int cores, std::uint64_t seed) {
  // A callback publishes only what some callback takes (a dangling topic is harmless, but
  // keep the file tidy).
  std::vector<std::string> taken;
  for (const auto& x : d.cbs)
    if (!x.topic.empty()) taken.push_back(x.topic);
  std::ostringstream y;
  y << "chainrt: 1\nname: lame_random_" << seed << "\nhosts:\n  - {name: h, cores: " << cores << "}\n"
    << "executors:\n  - {name: x, host: h, policy: lame}\n";
  if (rng.uniform01() < 0.2)
    y << "communication:\n  intra_process: {fixed: " << rng.uniform_int(10, 500) << "us, per_kib: 0us}\n";
  y << "nodes:\n";
  for (const auto& n : d.nodes) y << "  - {name: " << n << ", executor: x}\n";
  y << "callbacks:\n";
  for (const auto& x : d.cbs) {
    y << "  - {name: " << x.name << ", kind: " << x.kind << ", node: " << x.node << ", wcet: " << x.wcet << "ns";
    if (x.kind == "timer") y << ", period: " << x.period << "ns";
    else y << ", topic: " << x.topic << ", queue_depth: " << x.depth;
    if (std::find(taken.begin(), taken.end(), x.out) != taken.end()) y << ", publishes: [" << x.out << "]";
    y << "}\n";
  }
  y << "chains:\n";
  for (const auto& ch : d.chains) {
    y << "  - {name: " << ch.name << ", callbacks: [";
    for (std::size_t i = 0; i < ch.path.size(); ++i) y << (i ? ", " : "") << ch.path[i];
    y << "], deadline: " << ch.deadline << "ns, "
      << (ch.criticality > 0 ? "class: rt, criticality: " + std::to_string(ch.criticality) : std::string("class: be"))
      << "}\n";
  }
  return y.str();
}

}  // namespace

Model random_system(std::uint64_t seed) {
  gen::Rng rng(gen::Rng::stream_seed(seed, 0x1a3eULL));
  const int cores = static_cast<int>(rng.uniform_int(1, 4));
  const int nchains = static_cast<int>(rng.uniform_int(2, 6));
  // Utilisation of the whole system per core: from light to well above the cores (the BE side
  // of an overloaded system starves; the RT side is demoted where it does not fit).
  const double load = 0.2 + 1.0 * rng.uniform01();
  const auto shares = gen::uunifast(rng, nchains, load * cores);
  RandomDraw d;
  for (int c = 0; c < nchains; ++c) draw_chain(rng, d, c, shares[static_cast<std::size_t>(c)]);
  // Lone timers on no chain (they run on the first BE class).
  if (rng.uniform01() < 0.2) {
    RandomCb x;
    x.name = "lone_timer";
    x.node = node_for(rng, d, "lone_node");
    x.kind = "timer";
    x.period = static_cast<Duration>(kPeriodsMs[rng.uniform_int(0, 6)]) * 1'000'000;
    x.wcet = std::max<Duration>(20'000, static_cast<Duration>(static_cast<double>(x.period) * 0.1 * rng.uniform01()));
    d.cbs.push_back(x);
  }
  return load_model_from_string(random_yaml(rng, d, cores, seed), "lame_random_" + std::to_string(seed) + ".yaml");
}

sim::SoundnessReport run_soundness(sim::SoundnessOptions o, SoundnessCounts* counts) {
  PlanAnalysis a(counts);
  if (!o.generator)
    o.generator = [](std::uint64_t seed, Model& out) {
      out = random_system(seed);
      return true;
    };
  if (!o.simulated) o.simulated = [](const Model& m) { return allocate(m).model; };
  sim::SoundnessReport r = sim::run_soundness(a, o);
  a.tally();
  return r;
}

std::string counts_to_json(const SoundnessCounts& c) {
  return "{\"systems_bounded\": " + std::to_string(c.systems_bounded) + ", \"rt_bounded\": " + std::to_string(c.rt_bounded) + ", \"be_bounded\": " + std::to_string(c.be_bounded) +
         ", \"be_beyond_period\": " + std::to_string(c.be_beyond_period) +
         ", \"be_overload_refused\": " + std::to_string(c.be_overload_refused) + "}";
}

}  // namespace chainrt::lame

