// chainrt._core: the C++ core seen from Python. The parts are registered by the other files
// in this folder (registry.hpp); this file only orders and runs them.
#include <algorithm>

#include "registry.hpp"

namespace chainrt::py {
std::vector<BindEntry>& bind_registry() {
  static std::vector<BindEntry> entries;
  return entries;
}
}  // namespace chainrt::py

NB_MODULE(_core, m) {
  m.doc() = "chainrt core: model, analysis, simulator";
  // An interrupted command (Ctrl-C) may exit with a model still referenced from a frame; nanobind's
  // report of it at interpreter exit is for binding developers and would follow the user's one-line
  // "chainrt: interrupted".
  nanobind::set_leak_warnings(false);
  auto entries = chainrt::py::bind_registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& e : entries) e.fn(m);
}
