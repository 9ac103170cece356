// The LaME property check (lame/property.hpp): LaME's random systems, planned by Algorithms 1-3
// and the BE check, against the simulator under the soundness harness (soundness.hpp).
#include "chainrt/lame/property.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "chainrt/analysis/generator.hpp"
#include "chainrt/lame/soundness.hpp"
#include "chainrt/model/yaml_io.hpp"

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

Model property_system(std::uint64_t seed) { return random_system(gen::Rng::stream_seed(0, seed)); }

PropertyReport check_property(std::uint64_t first_seed, std::uint64_t count) {
  if (first_seed + count > (std::uint64_t{1} << 31))
    throw std::invalid_argument("seeds beyond 2^31 are not drawn");
  // The harness writes a counterexample's model (offsets applied) into a folder: one of our own.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("chainrt-lame-property-" + std::to_string(::getpid()) + "-" + std::to_string(first_seed));
  sim::SoundnessOptions o;
  o.seed = 0;  // system i: random_system(stream_seed(0, i)), as property_system(i)
  o.first = static_cast<int>(first_seed);
  o.sets = static_cast<int>(count);
  o.harsh = true;
  o.climb = 4;
  o.counterexample_dir = dir.string();
  SoundnessCounts counts;
  const sim::SoundnessReport r = run_soundness(o, &counts);
  PropertyReport rep;
  rep.systems = r.systems;
  rep.accepted = counts.systems_bounded;
  rep.checked = r.chains_checked;
  rep.be_checked = counts.be_bounded;
  for (const auto& c : r.counterexamples) {
    PropertyViolation v;
    v.seed = static_cast<std::uint64_t>(c.set);
    v.chain = c.chain;
    const Model m = property_system(v.seed);
    for (const auto& ch : m.chains)
      if (ch.name == c.chain.substr(0, c.chain.find('#')))
        v.cls = ch.criticality_class == CriticalityClass::RealTime ? "rt" : "be";
    v.exec = c.variant;
    v.bound = c.bound;
    v.observed = c.observed;
    std::ifstream f(c.file);
    std::ostringstream text;
    text << f.rdbuf();
    v.model = text.str();
    rep.violations.push_back(std::move(v));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rep;
}

}  // namespace chainrt::lame
