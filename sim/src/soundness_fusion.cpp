// chainrt sim: the soundness harness's fusion systems (soundness_fusion.hpp).
#include "soundness_fusion.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/yaml_io.hpp"

namespace chainrt::sim {

namespace {

// One fusion system's model text (fusion_yaml), drawn in stages from one random stream in this
// order: the executors, threads and cores; the periods' mode and the load; each fusion node with
// the part after its join and its sources' chains; the background chains.
class FusionSystem {
 public:
  FusionSystem(std::uint64_t seed, bool single_threaded, bool phases) : seed_(seed), rng_(seed ^ 0xf05e5ULL) {
    executors_ = static_cast<int>(rng_.uniform_int(1, 3));
    threads_.assign(static_cast<std::size_t>(executors_), 1);
    for (auto& t : threads_) {
      if (!single_threaded && rng_.uniform01() < 0.5) t = 2;
      total_threads_ += t;
    }
    // Usually a core per thread; sometimes fewer (threads share cores: some analyses refuse).
    cores_ = rng_.uniform01() < 0.8 ? total_threads_ : static_cast<int>(rng_.uniform_int(1, total_threads_));
    // Periods: all sources of a fusion node alike (the reference system's LiDARs), harmonic, or
    // unrelated; the load scale per system.
    mode_ = static_cast<int>(rng_.uniform_int(0, 2));
    // (Guaranteed phases: mostly sources of one period, which fusion rounds need; its own stream.)
    if (phases && gen::Rng(seed ^ 0x9a5e5ULL).uniform01() < 0.7) mode_ = 0;
    base_ = kMs * (mode_ == 2 ? rng_.uniform_int(10, 100) : std::vector<Duration>{10, 20, 50, 100}[rng_.uniform_int(0, 3)]);
    load_ = 0.01 + 0.05 * rng_.uniform01();  // WCET / period per callback, at most
    // A quarter of the systems four times as heavy (the processing after a join may then outlast
    // the gap between two fusions; its own earlier publications queue ahead of it). Drawn from
    // its own stream, so the other draws stay those of the lighter systems.
    gen::Rng heavy(seed ^ 0x4ea7ULL);
    if (heavy.uniform01() < 0.25) load_ *= 4;
  }

  // The model text, "" when no chain was declared through a fusion node.
  std::string yaml(const ResponseTimeAnalysis& a) {
    long_deadlines_ = rng_.uniform01() < 0.5;
    const int fusions = rng_.uniform01() < 0.75 ? 1 : 2;
    for (int f = 0; f < fusions; ++f) fusion_node("F" + std::to_string(f));
    if (declared_through_fusion_ == 0) return "";
    // Background chains (interference).
    const int background = static_cast<int>(rng_.uniform_int(0, 3));
    for (int b = 0; b < background; ++b) {
      const std::string B = "b" + std::to_string(b);
      const Duration T = kMs * rng_.uniform_int(5, 100);
      std::string topic;
      write_chain("c_" + B, timer_pipeline(B, T, topic), T);
    }
    return text(a);
  }

 private:
  static constexpr Duration kMs = 1'000'000;

  std::string pick_exec() { return "e" + std::to_string(rng_.uniform_int(0, executors_ - 1)); }
  Duration wcet_for(Duration period) {
    return std::max<Duration>(1000, static_cast<Duration>(static_cast<double>(period) * load_ * (0.2 + 0.8 * rng_.uniform01())));
  }
  std::string prio() { return rng_.uniform01() < 0.5 ? ", priority: " + std::to_string(rng_.uniform_int(1, 8)) : ""; }

  // A timer `name` of period T and 0-2 subscriptions after it, one node each: the path;
  // `topic` = the last one's topic.
  std::vector<std::string> timer_pipeline(const std::string& name, Duration T, std::string& topic) {
    std::vector<std::string> path;
    nodes_ << "  - {name: " << name << ", executor: " << pick_exec() << "}\n";
    topics_ << "  - {name: " << name << "}\n";
    cbs_ << "  - {name: " << name << "/timer, kind: timer, node: " << name << ", period: " << T << "ns, wcet: "
         << wcet_for(T) << "ns" << prio() << ", publishes: [" << name << "]}\n";
    path.push_back(name + "/timer");
    topic = name;
    const int subs = static_cast<int>(rng_.uniform_int(0, 2));
    for (int j = 0; j < subs; ++j) {
      const std::string n = name + "_x" + std::to_string(j);
      nodes_ << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      topics_ << "  - {name: " << n << "}\n";
      cbs_ << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << topic << ", wcet: "
           << wcet_for(T) << "ns" << prio() << ", publishes: [" << n << "]}\n";
      path.push_back(n + "/cb");
      topic = n;
    }
    return path;
  }

  void write_chain(const std::string& name, const std::vector<std::string>& path, Duration D) {
    chains_ << "  - {name: " << name << ", callbacks: [";
    for (std::size_t j = 0; j < path.size(); ++j) chains_ << (j ? ", " : "") << path[j];
    chains_ << "], deadline: " << D << "ns, priority: " << rng_.uniform_int(1, 4) << "}\n";
  }

  // The part after fusion node F's join: 1-3 callbacks, sometimes a fan-out extra on the fused
  // topic; returns the path of the callbacks.
  std::vector<std::string> after_join(const std::string& F, Duration tmin) {
    const int after = static_cast<int>(rng_.uniform_int(1, 3));
    std::vector<std::string> suffix;
    std::string in = F + "_out";
    for (int j = 0; j < after; ++j) {
      const std::string n = F + "_y" + std::to_string(j);
      nodes_ << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      topics_ << "  - {name: " << n << "}\n";
      cbs_ << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << in << ", wcet: "
           << wcet_for(tmin) << "ns" << prio() << (j + 1 < after ? ", publishes: [" + n + "]" : std::string()) << "}\n";
      suffix.push_back(n + "/cb");
      in = n;
    }
    if (rng_.uniform01() < 0.3) {
      const std::string n = F + "_fan";
      nodes_ << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      cbs_ << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << F << "_out, wcet: "
           << wcet_for(tmin) << "ns" << prio() << "}\n";
    }
    return suffix;
  }

  // Fusion node F: its 2-3 sources' periods, the part after the join, and each source's chain.
  void fusion_node(const std::string& F) {
    nodes_ << "  - {name: " << F << ", executor: " << pick_exec() << "}\n";
    topics_ << "  - {name: " << F << "_out}\n";
    const int sources = static_cast<int>(rng_.uniform_int(2, 3));
    std::vector<Duration> periods;
    for (int s = 0; s < sources; ++s) {
      Duration T = base_;
      if (mode_ == 1) T = base_ * (Duration{1} << rng_.uniform_int(0, 2));
      if (mode_ == 2) T = kMs * rng_.uniform_int(10, 100);
      periods.push_back(T);
    }
    const std::vector<std::string> suffix = after_join(F, *std::min_element(periods.begin(), periods.end()));
    for (int s = 0; s < sources; ++s) {
      const std::string S = F + "_s" + std::to_string(s);
      const Duration T = periods[static_cast<std::size_t>(s)];
      std::string topic;
      std::vector<std::string> path = timer_pipeline(S, T, topic);
      // The fusion member: works when it completes the set, else a short cache-only run.
      const Duration w = wcet_for(T);
      cbs_ << "  - {name: " << F << "/" << S << ", kind: subscription, node: " << F << ", topic: " << topic
           << ", wcet: " << w << "ns, bcet: " << std::max<Duration>(1, w / 50) << "ns" << prio() << ", publishes: ["
           << F << "_out]}\n";
      path.push_back(F + "/" + S);
      if (rng_.uniform01() < 0.8) {
        path.insert(path.end(), suffix.begin(), suffix.end());
        ++declared_through_fusion_;
      } else if (rng_.uniform01() < 0.5) {
        continue;  // an input on no declared chain
      }
      // Deadlines beyond the period (the wait takes up to one) in half of the systems.
      const Duration D = long_deadlines_ ? T + static_cast<Duration>(2.0 * static_cast<double>(T) * rng_.uniform01()) : T;
      write_chain("c_" + S, path, D);
    }
  }

  // The model file: its executors (threads pinned and prioritised where cores are shared), then
  // what the stages wrote.
  std::string text(const ResponseTimeAnalysis& a) {
    std::ostringstream y;
    y << "chainrt: 1\nname: fusion_" << seed_ << (long_deadlines_ ? "\ndeadlines: arbitrary" : "")
      << "\nhosts:\n  - {name: h, cores: " << cores_ << "}\nexecutors:\n";
    for (int e = 0; e < executors_; ++e) {
      y << "  - name: e" << e << "\n    host: h\n    policy: " << to_string(a.policy()) << "\n    threads:\n";
      for (int t = 0; t < threads_[static_cast<std::size_t>(e)]; ++t) {
        y << "      - {name: e" << e << "_t" << t;
        if (cores_ < total_threads_) y << ", cores: [" << rng_.uniform_int(0, cores_ - 1) << "]";
        if (executors_ > 1 && cores_ < total_threads_) y << ", priority: " << rng_.uniform_int(1, 3);
        y << "}\n";
      }
    }
    y << "nodes:\n" << nodes_.str() << "topics:\n" << topics_.str() << "callbacks:\n" << cbs_.str() << "chains:\n"
      << chains_.str();
    return y.str();
  }

  const std::uint64_t seed_;
  gen::Rng rng_;
  int executors_ = 0, total_threads_ = 0, cores_ = 0, mode_ = 0, declared_through_fusion_ = 0;
  std::vector<int> threads_;
  Duration base_ = 0;
  double load_ = 0;
  bool long_deadlines_ = false;
  std::ostringstream nodes_, topics_, cbs_, chains_;
};

std::string fusion_yaml(const ResponseTimeAnalysis& a, std::uint64_t seed, bool single_threaded, bool phases) {
  return FusionSystem(seed, single_threaded, phases).yaml(a);
}

// The offsets/fusion family's phases (generate_fusion_system): every timer guaranteed; the
// sources of one fusion node (timers named F<f>_s<s>) in phase at one offset in half of the
// systems, else each at its own; other timers at random offsets; jitter up to T/20 on 70 %.
void guarantee_phases(Model& m, std::uint64_t seed) {
  gen::Rng rng(seed ^ 0x0ff5e7ULL);
  const bool in_phase = rng.uniform01() < 0.5;
  std::map<std::string, Duration> common;  // fusion node -> its sources' offset
  for (auto& cb : m.callbacks) {
    if (!cb.is_timer()) continue;
    cb.phase = TimerPhase::Guaranteed;
    const std::string node = cb.name.substr(0, cb.name.find('_'));
    const bool source = cb.name.size() > 1 && cb.name[0] == 'F' && cb.name.find("_s") != std::string::npos;
    Duration off = rng.uniform_int(0, cb.period - 1);
    if (source && in_phase) {
      if (!common.count(node)) common[node] = rng.uniform01() < 0.5 ? 0 : off;
      off = common[node] % cb.period;
    }
    cb.offset = off;
    cb.jitter = rng.uniform01() < 0.7 ? rng.uniform_int(0, cb.period / 20) : 0;
  }
}

// Pins every thread of a lone executor to a core of its own when it has several, the host has
// a core per thread and no thread is pinned yet; false when it does not.
bool pin_apart(Model& m) {
  if (m.executors.size() != 1 || m.executors.front().threads.size() < 2) return false;
  int threads = 0, cores = 0;
  for (const auto& e : m.executors)
    for (const auto& t : e.threads) {
      if (!t.cores.empty()) return false;
      ++threads;
    }
  for (const auto& h : m.hosts) cores += h.cores;
  if (m.hosts.size() != 1 || threads > cores) return false;
  int next = 0;
  for (auto& e : m.executors)
    for (auto& t : e.threads) t.cores = {next++};
  validate(m, m.name);
  return true;
}

}  // namespace

bool generate_fusion_system(const ResponseTimeAnalysis& a, std::uint64_t seed, Model& out, bool phases) {
  std::string why;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t s = gen::Rng::stream_seed(seed, static_cast<std::uint64_t>(attempt));
    const std::string text = fusion_yaml(a, s, attempt >= 2, phases);
    if (text.empty()) continue;
    Model m = load_model_from_string(text, "<fusion system>");
    if (phases) {
      guarantee_phases(m, s);
      validate(m, m.name);
    }
    if (a.applicable(m, &why)) {
      out = std::move(m);
      return true;
    }
    // The offsets/fusion family for an analysis that takes threads pinned apart only (sag): the
    // threads of a lone multi-threaded executor each pinned to a core of its own.
    if (phases && pin_apart(m) && a.applicable(m, &why)) {
      out = std::move(m);
      return true;
    }
  }
  return false;
}

}  // namespace chainrt::sim
