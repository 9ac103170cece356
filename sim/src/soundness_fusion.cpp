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

std::string fusion_yaml(const ResponseTimeAnalysis& a, std::uint64_t seed, bool single_threaded, bool phases) {
  gen::Rng rng(seed ^ 0xf05e5ULL);
  constexpr Duration ms = 1'000'000;
  const int executors = static_cast<int>(rng.uniform_int(1, 3));
  std::vector<int> threads(static_cast<std::size_t>(executors), 1);
  int total_threads = 0;
  for (auto& t : threads) {
    if (!single_threaded && rng.uniform01() < 0.5) t = 2;
    total_threads += t;
  }
  // Usually a core per thread; sometimes fewer (threads share cores: some analyses refuse).
  const int cores = rng.uniform01() < 0.8 ? total_threads : static_cast<int>(rng.uniform_int(1, total_threads));
  auto pick_exec = [&] { return "e" + std::to_string(rng.uniform_int(0, executors - 1)); };

  std::ostringstream nodes, topics, cbs, chains;
  // Periods: all sources of a fusion node alike (the reference system's LiDARs), harmonic, or
  // unrelated; the load scale per system.
  int mode = static_cast<int>(rng.uniform_int(0, 2));
  // (Guaranteed phases: mostly sources of one period, which fusion rounds need; its own stream.)
  if (phases && gen::Rng(seed ^ 0x9a5e5ULL).uniform01() < 0.7) mode = 0;
  const Duration base = ms * (mode == 2 ? rng.uniform_int(10, 100) : std::vector<Duration>{10, 20, 50, 100}[rng.uniform_int(0, 3)]);
  double load = 0.01 + 0.05 * rng.uniform01();  // WCET / period per callback, at most
  // A quarter of the systems four times as heavy (the processing after a join may then outlast
  // the gap between two fusions; its own earlier publications queue ahead of it). Drawn from
  // its own stream, so the other draws stay those of the lighter systems.
  gen::Rng heavy(seed ^ 0x4ea7ULL);
  if (heavy.uniform01() < 0.25) load *= 4;
  auto wcet_for = [&](Duration period) {
    return std::max<Duration>(1000, static_cast<Duration>(static_cast<double>(period) * load * (0.2 + 0.8 * rng.uniform01())));
  };
  auto prio = [&]() -> std::string {
    return rng.uniform01() < 0.5 ? ", priority: " + std::to_string(rng.uniform_int(1, 8)) : "";
  };
  // A timer `name` of period T and 0-2 subscriptions after it, one node each: the path;
  // `topic` = the last one's topic.
  auto timer_pipeline = [&](const std::string& name, Duration T, std::string& topic) {
    std::vector<std::string> path;
    nodes << "  - {name: " << name << ", executor: " << pick_exec() << "}\n";
    topics << "  - {name: " << name << "}\n";
    cbs << "  - {name: " << name << "/timer, kind: timer, node: " << name << ", period: " << T << "ns, wcet: "
        << wcet_for(T) << "ns" << prio() << ", publishes: [" << name << "]}\n";
    path.push_back(name + "/timer");
    topic = name;
    const int subs = static_cast<int>(rng.uniform_int(0, 2));
    for (int j = 0; j < subs; ++j) {
      const std::string n = name + "_x" + std::to_string(j);
      nodes << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      topics << "  - {name: " << n << "}\n";
      cbs << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << topic << ", wcet: "
          << wcet_for(T) << "ns" << prio() << ", publishes: [" << n << "]}\n";
      path.push_back(n + "/cb");
      topic = n;
    }
    return path;
  };
  auto write_chain = [&](const std::string& name, const std::vector<std::string>& path, Duration D) {
    chains << "  - {name: " << name << ", callbacks: [";
    for (std::size_t j = 0; j < path.size(); ++j) chains << (j ? ", " : "") << path[j];
    chains << "], deadline: " << D << "ns, priority: " << rng.uniform_int(1, 4) << "}\n";
  };
  int declared_through_fusion = 0;
  const bool long_deadlines = rng.uniform01() < 0.5;
  const int fusions = rng.uniform01() < 0.75 ? 1 : 2;
  for (int f = 0; f < fusions; ++f) {
    const std::string F = "F" + std::to_string(f);
    nodes << "  - {name: " << F << ", executor: " << pick_exec() << "}\n";
    topics << "  - {name: " << F << "_out}\n";
    const int sources = static_cast<int>(rng.uniform_int(2, 3));
    std::vector<Duration> periods;
    for (int s = 0; s < sources; ++s) {
      Duration T = base;
      if (mode == 1) T = base * (Duration{1} << rng.uniform_int(0, 2));
      if (mode == 2) T = ms * rng.uniform_int(10, 100);
      periods.push_back(T);
    }
    const Duration tmin = *std::min_element(periods.begin(), periods.end());
    // The part after the join: 1-3 callbacks, sometimes a fan-out extra on the fused topic.
    const int after = static_cast<int>(rng.uniform_int(1, 3));
    std::vector<std::string> suffix;
    std::string in = F + "_out";
    for (int j = 0; j < after; ++j) {
      const std::string n = F + "_y" + std::to_string(j);
      nodes << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      topics << "  - {name: " << n << "}\n";
      cbs << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << in << ", wcet: "
          << wcet_for(tmin) << "ns" << prio() << (j + 1 < after ? ", publishes: [" + n + "]" : std::string()) << "}\n";
      suffix.push_back(n + "/cb");
      in = n;
    }
    if (rng.uniform01() < 0.3) {
      const std::string n = F + "_fan";
      nodes << "  - {name: " << n << ", executor: " << pick_exec() << "}\n";
      cbs << "  - {name: " << n << "/cb, kind: subscription, node: " << n << ", topic: " << F << "_out, wcet: "
          << wcet_for(tmin) << "ns" << prio() << "}\n";
    }
    for (int s = 0; s < sources; ++s) {
      const std::string S = F + "_s" + std::to_string(s);
      const Duration T = periods[static_cast<std::size_t>(s)];
      std::string topic;
      std::vector<std::string> path = timer_pipeline(S, T, topic);
      // The fusion member: works when it completes the set, else a short cache-only run.
      const Duration w = wcet_for(T);
      cbs << "  - {name: " << F << "/" << S << ", kind: subscription, node: " << F << ", topic: " << topic
          << ", wcet: " << w << "ns, bcet: " << std::max<Duration>(1, w / 50) << "ns" << prio() << ", publishes: ["
          << F << "_out]}\n";
      path.push_back(F + "/" + S);
      if (rng.uniform01() < 0.8) {
        path.insert(path.end(), suffix.begin(), suffix.end());
        ++declared_through_fusion;
      } else if (rng.uniform01() < 0.5) {
        continue;  // an input on no declared chain
      }
      // Deadlines beyond the period (the wait takes up to one) in half of the systems.
      const Duration D = long_deadlines ? T + static_cast<Duration>(2.0 * static_cast<double>(T) * rng.uniform01()) : T;
      write_chain("c_" + S, path, D);
    }
  }
  if (declared_through_fusion == 0) return "";
  // Background chains (interference).
  const int background = static_cast<int>(rng.uniform_int(0, 3));
  for (int b = 0; b < background; ++b) {
    const std::string B = "b" + std::to_string(b);
    const Duration T = ms * rng.uniform_int(5, 100);
    std::string topic;
    write_chain("c_" + B, timer_pipeline(B, T, topic), T);
  }
  std::ostringstream y;
  y << "chainrt: 1\nname: fusion_" << seed << (long_deadlines ? "\ndeadlines: arbitrary" : "") << "\nhosts:\n  - {name: h, cores: " << cores << "}\nexecutors:\n";
  for (int e = 0; e < executors; ++e) {
    y << "  - name: e" << e << "\n    host: h\n    policy: " << to_string(a.policy()) << "\n    threads:\n";
    for (int t = 0; t < threads[static_cast<std::size_t>(e)]; ++t) {
      y << "      - {name: e" << e << "_t" << t;
      if (cores < total_threads) y << ", cores: [" << rng.uniform_int(0, cores - 1) << "]";
      if (executors > 1 && cores < total_threads) y << ", priority: " << rng.uniform_int(1, 3);
      y << "}\n";
    }
  }
  y << "nodes:\n" << nodes.str() << "topics:\n" << topics.str() << "callbacks:\n" << cbs.str() << "chains:\n" << chains.str();
  return y.str();
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
  }
  return false;
}

}  // namespace chainrt::sim
