// chainrt supply bound functions: how much CPU time a thread is guaranteed in any window of
// length Δ. A dedicated core supplies sbf(Δ) = Δ; a SCHED_DEADLINE reservation (budget Q every
// period P) is the periodic resource of Shin & Lee (RTSS 2003/2008), whose exact staircase is
//   sbf(Δ) = ⌊(Δ − (P − Q))/P⌋·Q + max(0, Δ − 2(P − Q) − ⌊(Δ − (P − Q))/P⌋·P)   (Δ ≥ P − Q)
// and 0 before; LaME Sec. 3 uses its linear lower bound lsbf(Δ) = (Q/P)(Δ − 2(P − Q)).
// A set of threads Π supplies the sum (LaME Sec. 3, sbf_Π). Integer nanoseconds throughout.
#pragma once

#include <optional>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

struct Supply {
  std::optional<Reservation> reservation;  // none: a dedicated core

  Duration sbf(Duration delta) const;
  // Pseudo-inverse (LaME Sec. 4.2): the least Δ with sbf(Δ) >= x (x <= 0 gives 0).
  Duration sbf_inverse(Duration x) const;
  // The linear lower bound lsbf(Δ) rounded down to integer ns (never above sbf).
  Duration lsbf(Duration delta) const;
};

// Supply of a set of threads: Σ sbf_k.
struct SupplySet {
  std::vector<Supply> threads;
  Duration sbf(Duration delta) const;
  // The least Δ >= from with sbf(Δ) >= x; nullopt if it exceeds `limit`.
  std::optional<Duration> first_at_least(Duration x, Duration from, Duration limit) const;
  bool dedicated() const;  // every thread on a dedicated core
  std::size_t size() const { return threads.size(); }
};

// A platform's blackout curve (model Host::blackout) as a function: S(Δ), the most time one
// core can be taken from every thread in any window of length Δ. Between measured windows the
// next longer one's maximum is used (S is non-decreasing); beyond the longest window W, S is
// sub-additive (a window of Δ is ⌊Δ/W⌋ windows of W and a rest), so
//   S(Δ) = ⌊Δ/W⌋·S(W) + S(Δ mod W);
// never more than Δ. An empty curve is 0 (the papers' model: a CPU is always there).
// Both functions: pure, no allocation, thread-safe; O(points) per evaluation.
Duration platform_blackout(const std::vector<BlackoutPoint>& curve, Duration delta);

// A sub-additive upper bound of platform_blackout (a token bucket): the curve's long-run rate
// ρ = S(W)/W (W its longest window) and the least burst σ with S(Δ) <= σ + ρΔ for every Δ,
//   Ŝ(Δ) = min(Δ, σ + ⌈ρΔ⌉),   σ = max_k (m_k − ρ·max(w_{k−1}, m_k))   (points (w_k, m_k), w_0 = 0)
// (on (w_{k−1}, w_k] S is min(Δ, m_k), whose excess over ρΔ peaks at Δ = max(w_{k−1}, m_k);
// beyond W, S(Δ) − ρΔ = S(Δ mod W) − ρ(Δ mod W)). Concave, hence sub-additive: what a busy
// period that stops at its first q with w(q) <= (q+1)T needs of its terms and S between the
// curve's points is not (cros_rt.cpp). Both: pure, no allocation, thread-safe.
struct BlackoutBucket {
  Duration burst = 0, max = 0, window = 1;  // σ, S(W), W
  Duration at(Duration delta) const;
};
BlackoutBucket platform_bucket(const std::vector<BlackoutPoint>& curve);

// The least L with L >= e + S(L): how long e units of execution can take on one core of that
// platform once they have the core (every blackout inside them is added); nullopt when it
// exceeds `limit` (a curve with S(Δ) close to Δ leaves no room).
std::optional<Duration> platform_stretch(const std::vector<BlackoutPoint>& curve, Duration e, Duration limit);

}  // namespace chainrt
