// Registration of the parts of chainrt._core: each binding file defines
//   CHAINRT_BINDINGS(model, 0) { m.def(...); }
// and module.cpp calls every registered part in order (lower order first, so that types a
// later part uses are bound before it).
#pragma once

#include <nanobind/nanobind.h>

#include <vector>

namespace chainrt::py {

using BindFn = void (*)(nanobind::module_&);
struct BindEntry {
  const char* name;
  int order;
  BindFn fn;
};
std::vector<BindEntry>& bind_registry();
struct BindRegistrar {
  BindRegistrar(const char* name, int order, BindFn fn) { bind_registry().push_back({name, order, fn}); }
};

}  // namespace chainrt::py

#define CHAINRT_BINDINGS(part, order)                                                      \
  static void chainrt_bind_##part(nanobind::module_& m);                                   \
  static ::chainrt::py::BindRegistrar chainrt_registrar_##part(#part, order, &chainrt_bind_##part); \
  static void chainrt_bind_##part(nanobind::module_& m)
