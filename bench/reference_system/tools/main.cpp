// chainrt-reference-system: run the Autoware reference system (built from a chainrt model:
// topology, executors, policies, priorities, pinning, execution times) on real ROS 2 under
// the chainrt executor; write the sinks' samples (for the KPIs, computed in
// python/chainrt/reference_system/kpi.py) and a JSON summary (process CPU/memory over time,
// the executors' chain statistics, the topology counted in the ROS graph).
// `chainrt bench reference-system` builds the model variants and runs this program.
#include <sched.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/reference_system/system.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/supervised.hpp"

using namespace chainrt;

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: chainrt-reference-system MODEL [--duration 10s] [--warmup 1s] [--pin-core N]\n"
               "           [--workload cpu|primes] [--dump FILE] [--json FILE|-] [--topic-prefix /ns]\n"
               "           [--no-thread-params] [--topology] [--trace] [--discovery-timeout 30s]\n");
  return 1;
}
Duration duration_arg(const std::string& flag, const std::string& v) {
  std::string why;
  auto d = parse_duration(v, &why);
  if (!d) throw std::invalid_argument(flag + ": " + why);
  return *d;
}
}  // namespace

int main(int argc, char** argv) {
  if (!runtime::tie_to_parent_from_env()) return 1;  // the chainrt that started it is gone
  std::string path, json_out;
  int pin_core = -1;
  reference_system::SystemOptions o;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--duration") o.duration = duration_arg(a, next());
      else if (a == "--warmup") o.warmup = duration_arg(a, next());
      else if (a == "--discovery-timeout") o.discovery_timeout = duration_arg(a, next());
      else if (a == "--pin-core") pin_core = std::stoi(next());
      else if (a == "--workload") {
        std::string w = next();
        if (w == "cpu") o.workload = reference_system::Workload::CpuTime;
        else if (w == "primes") o.workload = reference_system::Workload::PrimeCount;
        else throw std::invalid_argument("--workload: cpu or primes, not '" + w + "'");
      } else if (a == "--dump") o.dump_path = next();
      else if (a == "--json") json_out = next();
      else if (a == "--topic-prefix") o.topic_prefix = next();
      else if (a == "--no-thread-params") o.thread_params = false;
      else if (a == "--topology") o.topology_only = true;
      else if (a == "--trace") o.trace = true;
      else if (a == "-h" || a == "--help") return usage() - 1;
      else if (!a.empty() && a[0] == '-') throw std::invalid_argument("unknown option " + a);
      else path = a;
    }
    if (path.empty()) return usage();
    if (pin_core >= 0) {  // the whole process (middleware threads too) on one core
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(pin_core, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0)
        std::fprintf(stderr, "chainrt-reference-system: warning: cannot pin to core %d\n", pin_core);
    }
    Model model = load_model(path);
    reference_system::SystemResult r = reference_system::run_reference_system(model, o);
    for (const auto& w : r.warnings) std::fprintf(stderr, "chainrt-reference-system: warning: %s\n", w.c_str());
    const std::string js = reference_system::to_json(r);
    if (json_out.empty() || json_out == "-") {
      std::cout << js << std::endl;
    } else {
      std::ofstream f(json_out);
      f << js << "\n";
    }
    return runtime::signal_received() ? 130 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-reference-system: %s\n", e.what());
    return 1;
  }
}
