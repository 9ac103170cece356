// chainrt tracing: tracetools::detail's symbol helpers (the C++ part of the tracetools
// interface, used by rclcpp to name callbacks in rclcpp_callback_register). Same contract as
// the wheel's: the returned string is malloc()ed and owned by the caller; nullptr on failure.
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace tracetools::detail {

__attribute__((visibility("default"))) char* demangle_symbol(const char* mangled) {
  if (mangled == nullptr) return nullptr;
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  return status == 0 ? out : nullptr;
}

__attribute__((visibility("default"))) char* get_symbol_funcptr(const void* funcptr) {
  Dl_info info;
  if (dladdr(funcptr, &info) == 0 || info.dli_sname == nullptr) return nullptr;
  char* demangled = demangle_symbol(info.dli_sname);
  return demangled != nullptr ? demangled : strdup(info.dli_sname);
}

}  // namespace tracetools::detail
