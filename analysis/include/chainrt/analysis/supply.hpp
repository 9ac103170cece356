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

}  // namespace chainrt
