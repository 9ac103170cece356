// The simulator's side of the trace comparisons (the same deterministic scenario through the
// simulator and a real executor, dispatch by dispatch): tests/cpp/runtime/sim_vs_runtime_test.cpp
// for chainrt's executor on rcl, tests/cpp/rclcpp for the rclcpp executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

namespace chainrt::runtime::testing {

using Trace = std::vector<std::pair<std::string, Duration>>;  // (callback, start) in order

inline Trace simulated(const Model& m, Duration duration,
                       std::optional<std::uint64_t> wait_set_seed = std::nullopt) {
  sim::SimOptions o;
  o.duration = duration;
  o.wait_set_seed = wait_set_seed;
  o.trace = true;
  const auto r = sim::simulate(m, o);
  Trace t;
  for (const auto& e : r.trace) t.emplace_back(m.callbacks[e.callback].name, e.start);
  return t;
}


// Two timers A and B (3 ms each) released together every 10 ms; A feeds a1 (2 ms, priority 5),
// B feeds b1 (2 ms): 10 ms of work per period, so the thread never idles. `executors` gives
// the one executor "e" on host "h".
inline Model scenario(const std::string& executors) {
  return load_model_from_string("name: order\nhosts: [{name: h, cores: 1}]\n" + executors + R"(
nodes: [{name: na, executor: e}, {name: nb, executor: e}, {name: nc, executor: e}]
topics: [{name: ta, size: 16B}, {name: tb, size: 16B}]
callbacks:
  - {name: A, kind: timer, node: na, period: 10ms, wcet: 3ms, publishes: [ta]}
  - {name: B, kind: timer, node: nb, period: 10ms, wcet: 3ms, publishes: [tb]}
  - {name: a1, kind: subscription, node: nc, topic: ta, wcet: 2ms, priority: 5}
  - {name: b1, kind: subscription, node: nc, topic: tb, wcet: 2ms}
chains:
  - {name: CA, callbacks: [A, a1], deadline: 10ms}
  - {name: CB, callbacks: [B, b1], deadline: 10ms}
)");
}

inline std::string show(const Trace& t) {
  std::string s;
  for (const auto& [n, at] : t) s += n + "@" + std::to_string(at / 1000000) + "ms ";
  return s;
}

}  // namespace chainrt::runtime::testing
