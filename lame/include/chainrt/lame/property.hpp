// chainrt lame: the property check of Algorithms 1-3 and the BE check against the simulator
// (docs/lame.md, "Checked against the simulator"). Seed s draws one random LaME system (1-3
// cores, 2-5 chains of 1-3 callbacks at a total utilisation of 0.5 per core plus up to 0.3,
// periods 20-200 ms, half of the chains best effort, some of those branching off an RT chain as
// in the paper's Fig. 3); lame::allocate plans it, and every RT and BE chain bound it reports is
// compared with the simulator's worst response time of the planned model under WCET and under
// random BCET/WCET mixes (4 s each). A seed draws the same system wherever it runs, so a
// campaign splits the seeds into batches (`chainrt experiment lame-property`, the property
// test in tests/cpp/lame).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::lame {

// A LaME system written as model YAML, one line per callback and chain (one host, one executor
// under the lame policy, a node per callback): the property's draws and hand-made test systems.
struct SystemText {
  int cores = 2;
  std::vector<std::string> callbacks, chains;
  void timer(const std::string& name, int period_ms, int wcet_us, const std::string& publishes);
  void sub(const std::string& name, const std::string& topic, int wcet_us, const std::string& publishes = "");
  // criticality 0: a best-effort chain
  void chain(const std::string& name, const std::string& callbacks, int deadline_ms, int criticality);
  Model model() const;  // throws ModelError
};

// The system of `seed` (allocates; throws ModelError should a draw not validate).
Model property_system(std::uint64_t seed);

struct PropertyViolation {
  std::uint64_t seed = 0;
  std::string chain;
  std::string cls;           // "rt" or "be"
  std::string thread_class;
  std::string exec;          // "wcet" or "mix"
  Duration bound = 0, observed = 0;
  std::string model;         // the planned model, as YAML
};

struct PropertyReport {
  std::int64_t systems = 0;     // drawn
  std::int64_t accepted = 0;    // with at least one bounded chain
  std::int64_t checked = 0;     // chain bounds compared (per simulation)
  std::int64_t be_checked = 0;  // of those, best-effort bounds under WCET
  std::vector<PropertyViolation> violations;
};

// Seeds first_seed .. first_seed + count - 1, in order. Not thread-safe to share a report;
// separate calls may run in parallel (no shared state).
PropertyReport check_property(std::uint64_t first_seed, std::uint64_t count);

}  // namespace chainrt::lame
