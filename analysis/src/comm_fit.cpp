// Least-squares fit of the per-message cost (comm_fit.hpp), CROS-RT's linear cost model.
#include "chainrt/analysis/comm_fit.hpp"

#include <algorithm>

namespace chainrt {

namespace {
using i128 = __int128;
i128 ceil_div128(i128 a, i128 b) {  // b > 0
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
}  // namespace

std::optional<CommFit> fit_comm_cost(const std::vector<CommMeasurement>& ms, CommKind kind) {
  i128 n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::vector<const CommMeasurement*> pts;
  for (const auto& m : ms) {
    if (m.kind != kind) continue;
    pts.push_back(&m);
    n += 1;
    sx += m.size;
    sy += m.latency;
    sxx += static_cast<i128>(m.size) * m.size;
    sxy += static_cast<i128>(m.size) * m.latency;
  }
  if (pts.empty()) return std::nullopt;
  // slope (ns per byte) = (nΣxy − ΣxΣy) / (nΣx² − (Σx)²); per_kib = ⌈1024·slope⌉, >= 0.
  i128 num = n * sxy - sx * sy;
  i128 den = n * sxx - sx * sx;
  i128 per_kib = 0;
  if (den > 0 && num > 0) per_kib = ceil_div128(num * 1024, den);
  CommFit f;
  f.samples = static_cast<int>(pts.size());
  f.cost.per_kib = static_cast<Duration>(per_kib);
  // LS intercept with the rounded slope: mean(y) − per_kib·mean(x)/1024; then the smallest
  // fixed part with cost(size_i) >= latency_i for every sample.
  Duration fixed = 0;
  bool first = true;
  for (const auto* m : pts) {
    CommCost c{0, f.cost.per_kib};
    Duration need = m->latency - c.cost(m->size);
    fixed = first ? need : std::max(fixed, need);
    first = false;
  }
  i128 ls_fixed = (sy * 1024 - per_kib * sx) / (1024 * n);
  f.cost.fixed = std::max<Duration>(0, fixed);
  f.max_residual = std::max<Duration>(0, f.cost.fixed - static_cast<Duration>(ls_fixed));
  return f;
}

Communication fitted_communication(const Communication& comm) {
  Communication c = comm;
  if (auto f = fit_comm_cost(comm.measurements, CommKind::IntraProcess)) c.intra_process = f->cost;
  if (auto f = fit_comm_cost(comm.measurements, CommKind::SameHost)) c.same_host = f->cost;
  if (auto f = fit_comm_cost(comm.measurements, CommKind::Remote)) c.remote = f->cost;
  return c;
}

}  // namespace chainrt
