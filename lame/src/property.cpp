// The LaME property check (lame/property.hpp): random LaME systems, planned by Algorithms 1-3
// and the BE check, against the simulator.
#include "chainrt/lame/property.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "chainrt/analysis/generator.hpp"
#include "chainrt/lame/lame.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

namespace chainrt::lame {

void SystemText::timer(const std::string& n, int period_ms, int wcet_us, const std::string& out) {
  callbacks.push_back("  - {name: " + n + ", kind: timer, node: " + n + "_node, period: " + std::to_string(period_ms) +
                      "ms, wcet: " + std::to_string(wcet_us) + "us, publishes: [" + out + "]}");
}

void SystemText::sub(const std::string& n, const std::string& in, int wcet_us, const std::string& out) {
  callbacks.push_back("  - {name: " + n + ", kind: subscription, node: " + n + "_node, topic: " + in +
                      ", wcet: " + std::to_string(wcet_us) + "us" + (out.empty() ? "" : ", publishes: [" + out + "]") + "}");
}

void SystemText::chain(const std::string& n, const std::string& cbs, int deadline_ms, int criticality) {
  chains.push_back("  - {name: " + n + ", callbacks: [" + cbs + "], deadline: " + std::to_string(deadline_ms) + "ms, " +
                   (criticality > 0 ? "class: rt, criticality: " + std::to_string(criticality) : std::string("class: be")) + "}");
}

Model SystemText::model() const {
  std::ostringstream y;
  y << "chainrt: 1\nname: t\nhosts:\n  - {name: h, cores: " << cores << "}\n"
    << "executors:\n  - {name: x, host: h, policy: lame}\n";
  std::vector<std::string> nodes, topics;
  for (const auto& c : callbacks) {
    auto n = c.substr(c.find("node: ") + 6);
    nodes.push_back(n.substr(0, n.find(',')));
    auto p = c.find("publishes: [");
    if (p != std::string::npos) topics.push_back(c.substr(p + 12, c.find(']', p) - p - 12));
  }
  y << "nodes:\n";
  for (const auto& n : nodes) y << "  - {name: " << n << ", executor: x}\n";
  y << "topics:\n";
  for (const auto& t : topics) y << "  - {name: " << t << "}\n";
  y << "callbacks:\n";
  for (const auto& c : callbacks) y << c << "\n";
  y << "chains:\n";
  for (const auto& c : chains) y << c << "\n";
  return load_model_from_string(y.str(), "test.yaml");
}

Model property_system(std::uint64_t seed) {
  gen::Rng rng(seed * 7919);
  SystemText s;
  s.cores = static_cast<int>(rng.uniform_int(1, 3));
  const int nchains = static_cast<int>(rng.uniform_int(2, 5));
  const int periods[] = {20, 40, 50, 100, 200};
  auto shares = gen::uunifast(rng, nchains, 0.5 * s.cores + 0.3 * rng.uniform01());
  std::vector<std::pair<std::string, std::string>> rt_paths;  // chain -> last callback/topic
  for (int c = 0; c < nchains; ++c) {
    const int T = periods[rng.uniform_int(0, 4)];
    const int n = static_cast<int>(rng.uniform_int(1, 3));
    const std::string p = "c" + std::to_string(c) + "_";
    const double per_cb = std::max(0.01, std::min(0.9, shares[c])) * T * 1000.0 / n;
    const int w = std::max(50, static_cast<int>(per_cb));
    std::string cbs;
    // Sometimes a BE chain branches off an earlier RT chain (Fig. 3).
    const bool be = rng.uniform01() < 0.5;
    if (be && !rt_paths.empty() && rng.uniform01() < 0.5) {
      auto& [up_chain, up_cbs] = rt_paths[rng.uniform_int(0, static_cast<int>(rt_paths.size()) - 1)];
      const std::string last = up_cbs.substr(up_cbs.rfind(' ') + 1);
      s.sub(p + "b", "topic_" + last, w);
      // deadline of the branch = the upstream chain's period (kept in the chain line)
      const std::string line = up_cbs + ", " + p + "b";
      const auto tpos = s.chains[std::stoi(up_chain.substr(1))].find("deadline: ");
      const std::string dl = s.chains[std::stoi(up_chain.substr(1))].substr(tpos + 10);
      s.chains.push_back("  - {name: " + p.substr(0, p.size() - 1) + ", callbacks: [" + line + "], deadline: " +
                         dl.substr(0, dl.find(',')) + ", class: be}");
      continue;
    }
    s.timer(p + "0", T, w, "topic_" + p + "0");
    cbs = p + "0";
    for (int j = 1; j < n; ++j) {
      const std::string name = p + std::to_string(j);
      s.sub(name, "topic_" + p + std::to_string(j - 1), w, "topic_" + name);
      cbs += ", " + name;
    }
    s.chain(p.substr(0, p.size() - 1), cbs, T, be ? 0 : static_cast<int>(rng.uniform_int(1, 3)));
    if (!be) rt_paths.push_back({p.substr(0, p.size() - 1), cbs});
  }
  return s.model();
}

PropertyReport check_property(std::uint64_t first_seed, std::uint64_t count) {
  PropertyReport rep;
  for (std::uint64_t seed = first_seed; seed < first_seed + count; ++seed) {
    Model m;
    try {
      m = property_system(seed);
    } catch (const ModelError& e) {
      throw std::runtime_error("seed " + std::to_string(seed) + ": the drawn system does not validate: " + e.what());
    }
    ++rep.systems;
    auto a = allocate(m);
    bool any = false;
    for (const auto& v : a.verdicts) any |= v.bounded;
    if (!any) continue;
    ++rep.accepted;
    for (auto mode : {sim::ExecTime::Wcet, sim::ExecTime::Mix}) {
      sim::SimOptions so;
      so.duration = 4'000'000'000;
      so.exec = mode;
      so.seed = seed;
      so.keep_samples = false;
      auto r = sim::simulate(a.model, so);
      for (const auto& v : a.verdicts) {
        if (!v.bounded) continue;
        const auto* cs = r.chain(v.chain);
        if (!cs) throw std::runtime_error("seed " + std::to_string(seed) + ": chain " + v.chain + " was not simulated");
        ++rep.checked;
        const bool be = v.cls == CriticalityClass::BestEffort;
        if (be && mode == sim::ExecTime::Wcet) ++rep.be_checked;
        if (cs->wcrt > v.bound)
          rep.violations.push_back({seed, v.chain, be ? "be" : "rt", v.thread_class,
                                    mode == sim::ExecTime::Wcet ? "wcet" : "mix", v.bound, cs->wcrt,
                                    save_model_to_string(a.model)});
      }
    }
  }
  return rep;
}

}  // namespace chainrt::lame
