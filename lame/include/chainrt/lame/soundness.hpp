// chainrt lame: LaME's plans under the soundness harness (sim/soundness.hpp). Every bound
// `allocate` reports — RT chains (fp-mt, LaME Theorem 1) and BE chains (the busy window of
// be_check.cpp) — is checked against the simulator running the PLAN (thread classes,
// reservations, affinities, split groups), with the harness's adversarial search: synchronous
// and random timer phases, WCET, BCET/WCET mixes and uniform times, and with `climb` a hill
// climb over timer offsets and per-callback execution times; with `harsh` its perturbations
// (shuffled priorities, execution below WCET, constrained deadlines, jitter, deadlines equal to
// the bounds).
//
// The systems (random_system): 1-4 cores, 2-6 chains, RT (criticality 1-3) or BE; BE chains
// that branch off an earlier chain's prefix (Fig. 3), BE chains slow enough to overlap their
// next instance (chain WCET 0.6-1.2 x the period: bounds above the period), systems whose BE
// side is overloaded (some BE class then has more work than supply), callbacks sharing nodes
// (mutually exclusive default groups), lone timers on no chain, intra-process message costs,
// subscription queues of depth 1-3.
//
// Contract: pure functions of their inputs (random_system is deterministic in the seed); the
// harness runs systems in parallel with `jobs` threads; allocates freely.
#pragma once

#include <cstdint>
#include <string>

#include "chainrt/model/model.hpp"
#include "chainrt/sim/soundness.hpp"

namespace chainrt::lame {

// One random LaME system for `seed` (see the header comment). Always succeeds.
Model random_system(std::uint64_t seed);

struct SoundnessCounts {
  std::int64_t systems_bounded = 0;     // systems with at least one chain bound
  std::int64_t be_bounded = 0;          // BE chain bounds reported (per analysed system)
  std::int64_t be_beyond_period = 0;    // ... of which above the chain's period (own later instances)
  std::int64_t be_overload_refused = 0; // BE chains refused because their class is overloaded
  std::int64_t rt_bounded = 0;          // RT chain bounds reported
};

// The harness on LaME's plans: options.generator defaults to random_system, options.simulated
// to the plan's model; options.analysis is ignored ("lame"). `counts` (optional) receives the
// verdicts' tallies over every analysis run (harsh systems are analysed twice when their
// deadlines are set to the bounds).
sim::SoundnessReport run_soundness(sim::SoundnessOptions options, SoundnessCounts* counts = nullptr);
// {"rt_bounded": N, "be_bounded": N, "be_beyond_period": N, "be_overload_refused": N}
std::string counts_to_json(const SoundnessCounts& counts);

}  // namespace chainrt::lame
