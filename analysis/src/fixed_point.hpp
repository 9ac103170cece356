// The one fixed-point search of the analyses (private to analysis/), after the fixed-point
// module of Brandenburg's response-time-analysis crate: the least x >= start with f(x) <= x
// for a non-decreasing f over integer nanoseconds, or a typed failure saying why there is none.
//
// Contract: f must be non-decreasing (every analysis' demand function is: it sums WCETs,
// carry-in workloads and step functions of x). Then every step strictly raises x, and x never
// passes `limit`, so the search ends within limit − start steps; `kMaxSteps` only guards
// against an f that breaks the contract (a bug, reported as StepLimit, never as a bound).
// `jump(x, fx)` (optional) may return a larger next candidate when it can prove that no point
// in [fx, jump) is a fixed point (chain_rta.cpp's concave envelope); it must never skip one.
//
// Cross-check (as the crate's `fixed_point_search` checks itself against its brute-force
// search with debug_assert_eq!): in a build without NDEBUG, or with CHAINRT_CHECK_FIXED_POINT
// defined, every search is compared with a brute-force scan of f — every x of [start, result]
// (or [start, limit] when there is no fixed point) when that range has at most
// kBruteForceExhaustive points, else the kBruteForceExhaustive/2 points just below the result
// and as many spread evenly over the range — and a disagreement aborts with both answers.
// The scan calls f again, so f must be pure apart from caches (every analysis' f is).
// No allocation; thread-safe if f is.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "chainrt/model/model.hpp"

#if !defined(NDEBUG) && !defined(CHAINRT_CHECK_FIXED_POINT)
#define CHAINRT_CHECK_FIXED_POINT 1
#endif

namespace chainrt::detail {

enum class SearchFailure {
  ExceedsLimit,  // no fixed point <= limit (the bound would exceed the period or deadline)
  StepLimit,     // f broke the contract (not non-decreasing): no bound, never a wrong one
};

struct SearchResult {
  std::optional<Duration> value;  // the least fixed point, when found
  SearchFailure failure = SearchFailure::ExceedsLimit;
  explicit operator bool() const { return value.has_value(); }
};

inline constexpr std::int64_t kMaxSteps = 50'000'000;
inline constexpr std::int64_t kBruteForceExhaustive = 1 << 16;

// Rounds of the holistic iteration over all chains (each round raises some chain's bound or
// ends it). Chains of a system that has not converged by then get no bound, with that reason —
// never the last, possibly too small, iterate.
inline constexpr int kMaxHolisticRounds = 500;

// The holistic analyses' work limit (HolisticOptions::max_pairs): 25,000,000 comparisons of
// chains sharing an executor, about 8 s of one core; 2,500 chains on one executor converge in
// three rounds (18,750,000); from 2,887 chains on one executor (three rounds beyond the limit)
// the analysis refuses at once.
inline constexpr std::uint64_t kMaxHolisticPairs = 25'000'000;

inline const char* to_string(SearchFailure f) {
  return f == SearchFailure::ExceedsLimit ? "exceeds the limit" : "the search made no progress (not monotone)";
}

// The brute-force answer on the points it scans (see the header): the least scanned x in
// [start, upto] with f(x) <= x, or nullopt when none of them is one.
template <class F>
std::optional<Duration> brute_force_fixed_point(Duration start, Duration upto, F& f) {
  if (upto < start) return std::nullopt;
  const Duration span = upto - start + 1;
  if (span <= kBruteForceExhaustive) {
    for (Duration x = start; x <= upto; ++x)
      if (f(x) <= x) return x;
    return std::nullopt;
  }
  // Spread points first (in increasing order), then the dense run just below `upto`.
  const Duration half = kBruteForceExhaustive / 2;
  const Duration dense_from = upto - half + 1;
  const Duration stride = (dense_from - start) / half + 1;
  for (Duration x = start; x < dense_from; x += stride)
    if (f(x) <= x) return x;
  for (Duration x = dense_from; x <= upto; ++x)
    if (f(x) <= x) return x;
  return std::nullopt;
}

// Least x in [start, limit] with f(x) <= x.
template <class F, class J>
SearchResult least_fixed_point(Duration start, Duration limit, F&& f, J&& jump) {
  SearchResult result{std::nullopt, SearchFailure::StepLimit};
  Duration x = start;
  for (std::int64_t step = 0; step < kMaxSteps; ++step) {
    if (x > limit) {
      result = {std::nullopt, SearchFailure::ExceedsLimit};
      break;
    }
    const Duration fx = f(x);
    if (fx <= x) {
      result = {x, SearchFailure::ExceedsLimit};
      break;
    }
    x = std::max(fx, jump(x, fx));
  }
#if CHAINRT_CHECK_FIXED_POINT
  if (result.failure != SearchFailure::StepLimit) {
    const auto brute = brute_force_fixed_point(start, result.value.value_or(limit), f);
    if (brute != result.value) {
      std::fprintf(stderr, "chainrt: fixed-point search on [%lld, %lld] found %lld, brute force %lld\n",
                   static_cast<long long>(start), static_cast<long long>(limit),
                   static_cast<long long>(result.value.value_or(-1)), static_cast<long long>(brute.value_or(-1)));
      std::abort();
    }
  }
#endif
  return result;
}

template <class F>
SearchResult least_fixed_point(Duration start, Duration limit, F&& f) {
  return least_fixed_point(start, limit, std::forward<F>(f), [](Duration, Duration fx) { return fx; });
}

}  // namespace chainrt::detail
