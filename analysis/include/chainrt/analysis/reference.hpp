// Published analyses that chainrt does NOT ship as verdicts, kept only so that experiments can
// draw a paper's comparison curve. They are not in the registry (analyses(), find_analysis()),
// so `chainrt analyze` and every other verdict path cannot use them.
//
// jiang22: the default multi-threaded executor analysis of Jiang et al., RTSS 2022 ([16] of the
// EDF ready-queue paper, its Fig. 7 baseline), as the reference page
// (../shared/reference/response-time-analyses.md) states it:
//   R_i = L* + e_i^last,  L* the least fixed point of
//   L = (C_i − e_i^last) + (1/m)·Σ_{k≠i} W_k(L)
// UNSOUND: Teper et al. (EMSOFT 2024, "Thread Carefully") show that the default executor can
// starve callbacks and give counterexamples to this analysis; also it charges no blocking for
// mutually exclusive callback groups. See reference_jiang22.cpp for exactly what is computed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::reference {

struct Jiang22Result {
  bool applicable = false;
  std::string why;                           // when not applicable
  std::vector<std::optional<Duration>> wcrt;  // per model chain; nullopt: no fixed point <= deadline
  bool schedulable = false;                  // applicable and every chain's R_i <= D_i
};

// Requires every chain to be linear and on one executor whose threads have dedicated cores.
Jiang22Result jiang22(const Model& m);

inline constexpr const char* kJiang22Label = "jiang22 (published, unsound: refuted by Teper et al. 2024)";

}  // namespace chainrt::reference
