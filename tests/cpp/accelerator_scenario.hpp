// The accelerator tests' one platform: three single-threaded PiCAS executors, each on its own core
// (eh: thread priority 30 on core 0, e1: 20 on core 1, e2: 10 on core 2), one node each (nh, n1,
// n2), and one host of 4 cores whose accelerator entry the test gives (direct, or the server with
// its thread and overhead). The callbacks and chains on it are each test's own.
#pragma once

#include <string>

namespace chainrt::test {

// The model's hosts, executors and nodes; a test appends its `callbacks:` and `chains:`.
inline std::string three_executors_with(const std::string& accelerator) {
  return R"(hosts: [{name: h, cores: 4, accelerators: [)" + accelerator + R"(]}]
executors:
  - {name: eh, host: h, policy: picas, threads: [{name: t, cores: [0], priority: 30}]}
  - {name: e1, host: h, policy: picas, threads: [{name: t, cores: [1], priority: 20}]}
  - {name: e2, host: h, policy: picas, threads: [{name: t, cores: [2], priority: 10}]}
nodes: [{name: nh, executor: eh}, {name: n1, executor: e1}, {name: n2, executor: e2}]
)";
}

// Chains H > L1 > L2 of one callback each (hi, lo1, lo2).
inline const char* const kRankedChains = R"(chains:
  - {name: H, callbacks: [hi], priority: 3}
  - {name: L1, callbacks: [lo1], priority: 2}
  - {name: L2, callbacks: [lo2], priority: 1}
)";

}  // namespace chainrt::test
