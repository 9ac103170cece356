// chainrt lame: the property check of Algorithms 1-3 and the BE check against the simulator
// (docs/lame.md, "Checked against the simulator"), per seed range: system i of a range is
// lame::random_system of index i (soundness.hpp: 1-4 cores, RT and BE chains, BE chains
// branching off an earlier chain as in the paper's Fig. 3, BE chains slow enough to overlap
// their next instance, overloaded BE sides), planned by lame::allocate, and every RT and BE
// chain bound it reports is compared with the simulator running the plan under the soundness
// harness's adversarial search (harsh perturbations, a hill climb of 4 steps). A seed draws the
// same system wherever it runs, so a campaign splits the seeds into batches (`chainrt experiment
// lame-property`; `chainrt experiment soundness --analysis lame` gives the harness's full report).
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

// The system of index `seed` (the one check_property draws for it).
Model property_system(std::uint64_t seed);

struct PropertyViolation {
  std::uint64_t seed = 0;
  std::string chain;
  std::string cls;           // "rt" or "be"
  std::string thread_class;
  std::string exec;          // the adversarial simulation that beat the bound (soundness.hpp)
  Duration bound = 0, observed = 0;
  std::string model;         // the planned model with the simulation's timer offsets, as YAML
};

struct PropertyReport {
  std::int64_t systems = 0;     // drawn
  std::int64_t accepted = 0;    // with at least one bounded chain
  std::int64_t checked = 0;     // chain bounds compared (per simulation)
  std::int64_t be_checked = 0;  // best-effort chain bounds reported (per analysis)
  std::vector<PropertyViolation> violations;
};

// Seeds first_seed .. first_seed + count - 1 (first_seed + count <= 2^31). Separate calls may run
// in parallel (no shared state).
PropertyReport check_property(std::uint64_t first_seed, std::uint64_t count);

}  // namespace chainrt::lame
