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

// The runtime's trace scenario on that platform (`accelerator`: the host's accelerator entry):
// L1 asks at 1 ms (30 ms of device work), L2 at 2 ms (copy-in 5, kernel 10, copy-out 5), H — the
// highest priority — at 4 ms (10 ms); L1's second segment (3 ms) comes 2 ms of CPU after its
// first is done. Every 100 ms.
inline std::string three_chain_segments_with(const std::string& accelerator) {
  return three_executors_with(accelerator) + R"(callbacks:
  - {name: hi, kind: timer, node: nh, period: 100ms, offset: 3ms, wcet: 2ms, priority: 30,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 10ms}]}
  - {name: lo1, kind: timer, node: n1, period: 100ms, wcet: 4ms, priority: 20,
     accelerator_segments: [{accelerator: gpu, after: 1ms, kernel: 30ms},
                            {accelerator: gpu, after: 3ms, copy_in: 1ms, kernel: 2ms}]}
  - {name: lo2, kind: timer, node: n2, period: 100ms, offset: 1ms, wcet: 2ms, priority: 10,
     accelerator_segments: [{accelerator: gpu, after: 1ms, copy_in: 5ms, kernel: 10ms, copy_out: 5ms}]}
)" + kRankedChains;
}

}  // namespace chainrt::test
