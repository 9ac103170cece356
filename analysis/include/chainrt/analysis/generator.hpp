// chainrt workload generation for the papers' experiments: a seeded PRNG that gives the same
// numbers on every platform (xoshiro256** seeded through splitmix64; no std::*_distribution),
// utilisation splitting (UUniFast, UUniFast-discard — Bini & Buttazzo 2005; RandFixedSum —
// Stafford's algorithm as used by Emberson et al., WATERS 2010), and system generators that
// return ordinary, validated chainrt::Model objects:
//  - the EDF ready-queue paper's generator (Sec. VI-C, Fig. 7; parameters m, n, b, U_norm, g, α
//    taken from Jiang et al. RTSS 2022), see EdfPaperParams;
//  - CROS-RT's "randomly generated chains (UUniFast)" for the predictability experiment.
// Same seed and parameters => the same model, bit for bit.
//
// Usage:
//   chainrt::gen::EdfPaperParams p;  p.m = 4; p.u_norm = 0.5;
//   chainrt::Model sys = chainrt::gen::edf_paper_system(p, /*seed=*/42);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::gen {

// splitmix64 (Steele, Lea, Flood 2014): seeds the main generator from one 64-bit seed.
std::uint64_t splitmix64(std::uint64_t& state);

// xoshiro256** (Blackman & Vigna 2018). Deterministic everywhere: only integer arithmetic,
// doubles built from the top 53 bits.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  double uniform01();                                    // [0, 1), multiple of 2^-53
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);  // inclusive, unbiased (rejection)
  // Derive an independent stream (e.g. one per generated system of an experiment point).
  static std::uint64_t stream_seed(std::uint64_t base, std::uint64_t index);

 private:
  std::uint64_t s_[4];
};

// UUniFast: n shares summing to `total` (each in [0, total]), uniformly distributed.
std::vector<double> uunifast(Rng& rng, int n, double total);
// UUniFast-discard: redraw until every share is <= `cap` (default 1). nullopt after
// `max_tries` draws (e.g. when total > n * cap).
std::optional<std::vector<double>> uunifast_discard(Rng& rng, int n, double total,
                                                    double cap = 1.0, int max_tries = 1000);
// RandFixedSum (Stafford): n values uniformly distributed on {x in [lo, hi]^n : Σx = total}.
// Requires n*lo <= total <= n*hi.
std::vector<double> randfixedsum(Rng& rng, int n, double total, double lo = 0.0, double hi = 1.0);

// The EDF ready-queue paper's synthetic workload (Sec. VI-C, after Jiang et al. 2022):
// one executor with m threads on m dedicated cores; the number of chains is uniform in
// [min(2, n), n] and the callbacks per chain uniform in [min(2, b), b]; total utilisation
// m * U_norm split over chains with UUniFast-discard (shares above 1 set to 1, as the paper
// says), then over each chain's callbacks with UUniFast; chain period uniform in
// [period_min, period_max] time units, deadline = period, WCET = period * share rounded to
// the nearest time unit (at least one unit, so every callback does work); the number of
// mutually exclusive groups is uniform in [0, g] and round(α * |all callbacks|) randomly chosen
// callbacks are distributed uniformly over them (none when 0 groups); the other callbacks of a
// chain share that chain's reentrant group. The first callback of every chain is a timer, the
// others are subscriptions on the chain's topics.
// Priorities (used by fixed-priority policies, ignored by EDF): chains deadline-monotonic
// (ties by index), callback priority = chain rank * 1024 + position (PiCAS/LaME rule).
struct EdfPaperParams {
  int m = 4;
  int n = 8;
  int b = 5;
  double u_norm = 0.3;
  int g = 2;
  double alpha = 0.2;
  std::int64_t period_min = 50;
  std::int64_t period_max = 200;
  Duration time_unit = 1'000'000;  // 1 time unit = 1 ms
  Policy policy = Policy::Edf;     // policy written into the executor
  int executors = 1;               // >1: chains partitioned worst-fit over single-threaded
                                   // executors, one per core (see partition_single_threaded)
};
Model edf_paper_system(const EdfPaperParams& p, std::uint64_t seed);

// The same chains re-deployed as one single-threaded executor per core (m executors), chains
// assigned worst-fit decreasing by utilisation and chains that share a mutually exclusive
// group kept on one executor (a group belongs to one node, hence one executor). Used to run
// the single-threaded baselines (ros-default-st, picas-st) on the Fig. 7 systems.
Model partition_single_threaded(const Model& multi, Policy policy);

// CROS-RT-style random chains (slides "Randomly generated chains (UUniFast)"): `chains`
// chains, each of `callbacks` callbacks on one single-threaded executor per chain spread over
// `hosts` hosts (so hops are same-host or remote), chain utilisations by UUniFast-discard of
// `total_u` over the hosts' capacity, periods uniform in [period_min, period_max] time units,
// implicit deadlines, chain 0 highest priority (rate-monotonic otherwise), message size
// `message_size` on every hop, communication costs from `comm`.
struct UUniFastChainsParams {
  int chains = 4;
  int callbacks = 3;
  int hosts = 2;
  double total_u = 0.5;   // per host
  std::int64_t period_min = 10;
  std::int64_t period_max = 200;
  Duration time_unit = 1'000'000;
  Bytes message_size = 1024;
  Communication comm{{20'000, 2'000}, {150'000, 10'000}, {400'000, 90'000}, {}};
};
Model uunifast_chains_system(const UUniFastChainsParams& p, std::uint64_t seed);

}  // namespace chainrt::gen
