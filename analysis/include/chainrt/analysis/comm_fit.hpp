// chainrt communication cost model fitting (CROS-RT, "Communication cost decomposition": each
// term of C^I, C^L, C^R is proportional to the message size and estimated by linear
// regression). From measured (size, latency) pairs of one communication kind we fit the
// least-squares line, then raise its intercept until no measurement lies above the line, so
// that the fitted cost is a worst-case (not a mean) cost for every measured size. Exact
// integer arithmetic (128-bit), no floating point.
#pragma once

#include <optional>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

struct CommFit {
  CommCost cost;          // fixed + per_kib (ns per KiB, rounded up)
  int samples = 0;
  Duration max_residual = 0;  // how far the intercept was raised above the LS intercept
};

// Fit of the measurements of `kind`; nullopt when there are none.
std::optional<CommFit> fit_comm_cost(const std::vector<CommMeasurement>& ms, CommKind kind);

// The model's communication costs with every kind that has measurements replaced by its fit.
Communication fitted_communication(const Communication& comm);

}  // namespace chainrt
