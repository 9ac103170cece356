// chainrt sim: the soundness harness's fusion systems (private to sim/; soundness.hpp,
// `fusion`). Random systems with one or two implicit fusion nodes (model/facts.hpp) whose 2-3
// inputs come from different timers — all of one period (as the reference system's LiDARs),
// harmonic, or unrelated — through 0-2 callbacks each; after the join 1-3 callbacks (sometimes
// a fan-out on the fused topic); most sources start a declared chain through the join, some
// feed an input on no declared chain; 0-3 background chains; 1-3 executors (1-2 threads where
// the analysis allows, cores sometimes shared). The harness's offsets (random, clustered,
// climbed) then set the sources' phases against each other.
#pragma once

#include <cstdint>

#include "chainrt/model/model.hpp"

namespace chainrt {
class ResponseTimeAnalysis;
}

namespace chainrt::sim {

// A fusion system the analysis applies to (up to four draws from `seed`), or false.
// `phases`: the offsets/fusion family — every timer's phase guaranteed (model
// TimerPhase::Guaranteed) at a declared offset (a fusion node's sources in phase in half of the
// systems, at random offsets in the others), most with a declared release jitter (up to a
// twentieth of the period), and the sources of a fusion node mostly of one period; the harness
// then keeps the offsets and varies the jitter (within the declared one) and execution times.
bool generate_fusion_system(const ResponseTimeAnalysis& a, std::uint64_t seed, Model& out, bool phases = false);

}  // namespace chainrt::sim
