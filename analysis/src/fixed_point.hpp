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
// No allocation; thread-safe if f is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chainrt/model/model.hpp"

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

// Rounds of the holistic iteration over all chains (each round raises some chain's bound or
// ends it). Chains of a system that has not converged by then get no bound, with that reason —
// never the last, possibly too small, iterate.
inline constexpr int kMaxHolisticRounds = 500;

inline const char* to_string(SearchFailure f) {
  return f == SearchFailure::ExceedsLimit ? "exceeds the limit" : "the search made no progress (not monotone)";
}

// Least x in [start, limit] with f(x) <= x.
template <class F, class J>
SearchResult least_fixed_point(Duration start, Duration limit, F&& f, J&& jump) {
  Duration x = start;
  for (std::int64_t step = 0; step < kMaxSteps; ++step) {
    if (x > limit) return {std::nullopt, SearchFailure::ExceedsLimit};
    const Duration fx = f(x);
    if (fx <= x) return {x, SearchFailure::ExceedsLimit};
    x = std::max(fx, jump(x, fx));
  }
  return {std::nullopt, SearchFailure::StepLimit};
}

template <class F>
SearchResult least_fixed_point(Duration start, Duration limit, F&& f) {
  return least_fixed_point(start, limit, std::forward<F>(f), [](Duration, Duration fx) { return fx; });
}

}  // namespace chainrt::detail
