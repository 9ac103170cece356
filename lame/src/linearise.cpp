// LaME Algorithm 1 (Sec. 4.2, "Analysis for Nonlinear Chains in Different Threadclasses"):
// linearise every chain and categorise the linear chains into S_RT and S_BE.
//
// A nonlinear chain appears in a chainrt model either as one branching chain (hops forming a
// tree; each root-to-leaf path is a linear chain "<name>#k") or, as in the Autoware LaME
// variant, as several linear chains that share their first callbacks (Fig. 3: c01 RT and c02 BE
// share FrontLidarDriver → PointsTransformerFront → PointCloudFusion). Both are split the same
// way: a shared callback belongs to the first RT path containing it (the most critical first,
// "the very first RT branch"), else to the first BE path; the other paths keep their own
// suffix. Deviation (documented in docs/lame.md): a path whose shared callbacks are not a
// common prefix with their owner (two chains MERGING into one callback rather than branching)
// is marked not composable; the allocation keeps it and its BE check says it has no bound.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "chainrt/lame/lame.hpp"

namespace chainrt::lame {

Linearised linearise(const Model& m) {
  Linearised out;
  // Lines 4-10: every chain becomes one or more linear chains.
  for (const auto& c : m.chains) {
    if (c.callbacks.empty()) throw std::invalid_argument("chain '" + c.name + "' has no callbacks");
    auto add = [&](const std::string& name, const std::vector<std::string>& path) {
      LinearChain l;
      l.name = name;
      l.origin = c.name;
      l.path = path;
      for (std::size_t j = 0; j + 1 < path.size(); ++j) {
        auto h = std::find_if(c.hops.begin(), c.hops.end(),
                              [&](const Hop& x) { return x.from == path[j] && x.to == path[j + 1]; });
        l.hops.push_back(h != c.hops.end() ? *h : Hop{path[j], path[j + 1], "", CommKind::IntraProcess, 0});
      }
      l.period = c.period;
      l.deadline = c.deadline;
      l.cls = c.criticality_class;
      l.criticality = c.criticality;
      out.chains.push_back(std::move(l));
    };
    if (c.is_linear()) {
      add(c.name, c.callbacks);
    } else {
      auto ps = c.paths();
      for (std::size_t k = 0; k < ps.size(); ++k) add(c.name + "#" + std::to_string(k), ps[k]);
    }
  }
  // Lines 11-17: categorise; S_RT in descending criticality (criticality-as-priority), stable.
  for (std::size_t i = 0; i < out.chains.size(); ++i)
    (out.chains[i].cls == CriticalityClass::RealTime ? out.rt : out.be).push_back(static_cast<int>(i));
  std::stable_sort(out.rt.begin(), out.rt.end(),
                   [&](int a, int b) { return out.chains[a].criticality > out.chains[b].criticality; });
  // Fig. 3: ownership of shared callbacks — the first RT path, else the first BE path.
  std::map<std::string, int> owner;
  for (auto list : {&out.rt, &out.be})
    for (int i : *list)
      for (const auto& cb : out.chains[i].path) owner.emplace(cb, i);
  for (std::size_t i = 0; i < out.chains.size(); ++i) {
    LinearChain& l = out.chains[i];
    const auto n = l.path.size();
    std::size_t f = 0;
    while (f < n && owner[l.path[f]] != static_cast<int>(i)) ++f;
    l.owned_from = f;
    for (std::size_t j = f; j < n; ++j)
      if (owner[l.path[j]] != static_cast<int>(i)) l.composable = false;
    if (f > 0) {
      l.upstream = owner[l.path[f - 1]];
      const LinearChain& u = out.chains[l.upstream];
      if (u.path.size() < f || !std::equal(l.path.begin(), l.path.begin() + static_cast<long>(f), u.path.begin()))
        l.composable = false;
    }
  }
  return out;
}

}  // namespace chainrt::lame
