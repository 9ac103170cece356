#pragma once
// The simulator's charge for a cache-only run of implicit fusion (implicit_fusion_sets,
// model/facts.hpp): a member of a set whose input does not complete the set (some other member
// has no fresh input since the set last published) only caches its input, and the simulator
// charges that run the member's BCET (capped at its WCET; before the host's speed scaling)
// instead of an execution time drawn for the run. The simulator builds its callbacks from this
// function, and the accounting of real runs (chainrt.accounting, through the Python binding)
// compares such runs with the same charge.
#include <cstddef>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::sim {

struct CacheOnlyCharge {
  std::size_t callback = 0;  // index into Model::callbacks
  Duration charge = 0;       // what a cache-only run of it is charged
};

// One entry per implicit fusion set (the order of implicit_fusion_sets), its members in order.
std::vector<std::vector<CacheOnlyCharge>> cache_only_charges(const Model& model);

}  // namespace chainrt::sim
