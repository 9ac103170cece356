// A run that reaches a chain's worst case as the exact analysis found it (sag), for the simulator
// to replay: the soundness harness's strongest search and the tests of sag's tightness.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

// A run that reaches (or aims at) a chain's worst case as the `sag` analysis found it: the
// execution time of each callback's k-th execution and the delay of each timer's k-th release
// (k = 0, 1, ... from the common start), for the simulator to replay (sim::SimOptions'
// exec_script and release_script). `latency`: sag's bound of the chain; `until`: the instant by
// which the instance has finished (simulate at least that long).
struct ScheduleWitness {
  std::string chain;
  Duration latency = 0, until = 0;
  std::map<std::string, std::vector<Duration>> exec, release_delay;
};
// One witness per chain sag bounds, where sag covers the model with one executor of one thread
// and no drifting timer (else none). Explores sag's graph once with its edges kept (sag.hpp,
// witnesses): for the soundness harness and tests, not for the analysis itself. The schedules
// are those of the model as the analyses bound it: each job's cost up to its WCET plus its
// executor's dispatch_overhead (model/facts.hpp, charge_dispatch_overhead).
std::vector<ScheduleWitness> sag_witnesses(const Model& model);

}  // namespace chainrt
