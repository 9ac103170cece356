// Supply bound functions (supply.hpp): the periodic resource model of Shin & Lee and the
// dedicated core; the formula is the one quoted in shared/reference/response-time-analyses.md.
#include "chainrt/analysis/supply.hpp"

#include <algorithm>

#include "fixed_point.hpp"

namespace chainrt {

Duration Supply::sbf(Duration d) const {
  if (d <= 0) return 0;
  if (!reservation) return d;
  const Duration Q = reservation->budget, P = reservation->period;
  if (Q >= P) return d;
  if (Q <= 0) return 0;
  const Duration gap = P - Q;
  if (d < gap) return 0;
  const Duration k = (d - gap) / P;
  return k * Q + std::max<Duration>(0, d - 2 * gap - k * P);
}

Duration Supply::sbf_inverse(Duration x) const {
  if (x <= 0) return 0;
  if (!reservation || reservation->budget >= reservation->period) return x;
  const Duration Q = reservation->budget, P = reservation->period;
  if (Q <= 0) return -1;  // never
  // x = k·Q + r with 0 < r <= Q: reached r units into the (k+1)-th supply slot, which starts
  // at 2(P − Q) + k·P.
  const Duration k = (x - 1) / Q;
  const Duration r = x - k * Q;
  return 2 * (P - Q) + k * P + r;
}

Duration Supply::lsbf(Duration d) const {
  if (!reservation || reservation->budget >= reservation->period) return std::max<Duration>(0, d);
  const Duration Q = reservation->budget, P = reservation->period;
  const Duration x = d - 2 * (P - Q);
  if (x <= 0) return 0;
  return static_cast<Duration>((static_cast<__int128>(Q) * x) / P);
}

Duration SupplySet::sbf(Duration d) const {
  Duration s = 0;
  for (const auto& t : threads) s += t.sbf(d);
  return s;
}

bool SupplySet::dedicated() const {
  return std::all_of(threads.begin(), threads.end(), [](const Supply& s) {
    return !s.reservation || s.reservation->budget >= s.reservation->period;
  });
}

std::optional<Duration> SupplySet::first_at_least(Duration x, Duration from, Duration limit) const {
  // sbf is non-decreasing: binary search on [from, limit].
  if (sbf(from) >= x) return from;
  if (sbf(limit) < x) return std::nullopt;
  Duration lo = from, hi = limit;  // sbf(lo) < x <= sbf(hi)
  while (hi - lo > 1) {
    Duration mid = lo + (hi - lo) / 2;
    if (sbf(mid) >= x) hi = mid;
    else lo = mid;
  }
  return hi;
}

Duration platform_blackout(const std::vector<BlackoutPoint>& curve, Duration delta) {
  if (delta <= 0 || curve.empty()) return 0;
  const BlackoutPoint& last = curve.back();
  const Duration whole = delta;
  Duration s = 0;
  if (delta > last.window) {
    // ⌊Δ/W⌋·S(W) (<= Δ, so no overflow) and the rest below.
    const Duration k = delta / last.window;
    s = k * last.max;
    delta -= k * last.window;
  }
  for (const auto& p : curve)
    if (delta > 0 && p.window >= delta) {
      s += std::min(p.max, delta);
      break;
    }
  return std::min(s, whole);
}

BlackoutBucket platform_bucket(const std::vector<BlackoutPoint>& curve) {
  BlackoutBucket b;
  if (curve.empty()) return b;
  b.window = curve.back().window;
  b.max = platform_blackout(curve, b.window);
  Duration prev = 0;  // w_{k−1}
  for (const auto& p : curve) {
    const Duration x = std::max(prev, std::min(p.max, p.window));
    // m_k − ⌊ρ·x⌋ >= m_k − ρ·x (128-bit: ρ·x <= x, the product may not fit in 64 bits)
    const auto rho_x = static_cast<Duration>(static_cast<__int128>(b.max) * x / b.window);
    b.burst = std::max(b.burst, std::min(p.max, p.window) - rho_x);
    prev = p.window;
  }
  return b;
}

Duration BlackoutBucket::at(Duration delta) const {
  if (delta <= 0 || max <= 0) return std::max<Duration>(0, std::min(delta, burst));
  const __int128 rho = (static_cast<__int128>(max) * delta + window - 1) / window;  // ⌈ρΔ⌉ <= Δ
  return static_cast<Duration>(std::min<__int128>(delta, burst + rho));
}

std::optional<Duration> platform_stretch(const std::vector<BlackoutPoint>& curve, Duration e, Duration limit) {
  if (e <= 0) return 0;
  // L ↦ e + S(L) is non-decreasing: the one fixed-point search (fixed_point.hpp).
  return detail::least_fixed_point(e, limit, [&](Duration L) { return e + platform_blackout(curve, L); }).value;
}

}  // namespace chainrt
