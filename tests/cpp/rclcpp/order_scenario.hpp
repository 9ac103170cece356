// The two-chain ordering scenario of the rclcpp executor's tests (executor_scheduling_test.cpp
// runs it from the model, executor_marks_test.cpp from marks in code): its YAML model.
#pragma once

#include <string>

#include "chainrt/model/yaml_io.hpp"

namespace chainrt::rclcpp::testing {

// Two chains released together every 10 ms: A -> a1 and B -> b1 (3 + 2 ms each, the thread
// never idles). Each policy gets parameters that order them its own way: fp: callback priorities
// A 3, B 2 (a1, b1 none: last) -> A B a1 b1; edf: CB's deadline is shorter -> B b1 A a1; picas:
// CA's chain priority is higher -> A a1 B b1.
inline Model order_scenario(const std::string& policy) {
  const bool fp = policy == "fp", picas = policy == "picas";
  return chainrt::load_model_from_string(R"(
name: order
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: )" + policy + R"(}]
nodes: [{name: na, executor: e}, {name: nb, executor: e}, {name: nc, executor: e}]
topics: [{name: ta, size: 16B}, {name: tb, size: 16B}]
callbacks:
  - {name: A, kind: timer, node: na, period: 10ms, wcet: 3ms, publishes: [ta])" + (fp ? ", priority: 3" : "") + R"(}
  - {name: B, kind: timer, node: nb, period: 10ms, wcet: 3ms, publishes: [tb])" + (fp ? ", priority: 2" : "") + R"(}
  - {name: a1, kind: subscription, node: nc, topic: ta, wcet: 2ms}
  - {name: b1, kind: subscription, node: nc, topic: tb, wcet: 2ms}
chains:
  - {name: CA, callbacks: [A, a1], deadline: 10ms)" + (picas ? ", priority: 2" : "") + R"(}
  - {name: CB, callbacks: [B, b1], deadline: 8ms)" + (picas ? ", priority: 1" : "") + R"(}
)", "<scenario>");
}

}  // namespace chainrt::rclcpp::testing
