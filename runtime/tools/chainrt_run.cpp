// chainrt-run: run (one process of) a chainrt model on real ROS 2 under the chainrt executor and
// print the observed per-chain latencies (WCRT, BCRT, mean, p99, misses, drops). The Python
// command `chainrt run` starts one chainrt-run per process of the model and merges the results.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fstream>
#include <string>

#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"

using namespace chainrt;

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: chainrt-run MODEL [--process NAME] [--duration 10s] [--warmup 500ms]\n"
               "                   [--policy ros-default|picas|fp|edf|mixed|lame] [--threads N]\n"
               "                   [--json FILE|-] [--namespace /ns] [--run-id ID]\n"
               "                   [--topic-prefix /ns] [--stats-period 1s]\n"
               "                   [--no-thread-params] [--fifo PRIO] [--trace FILE]\n"
               "                   [--list-processes]\n");
  return 1;
}
Duration duration_arg(const char* flag, const std::string& v) {
  std::string why;
  auto d = parse_duration(v, &why);
  if (!d) throw std::invalid_argument(std::string(flag) + ": " + why);
  return *d;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string path, json_out;
  bool list = false;
  runtime::ModelRunOptions o;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--process") o.process = next();
      else if (a == "--duration") o.duration = duration_arg("--duration", next());
      else if (a == "--warmup") o.warmup = duration_arg("--warmup", next());
      else if (a == "--stats-period") o.stats_period = duration_arg("--stats-period", next());
      else if (a == "--discovery-timeout") o.discovery_timeout = duration_arg("--discovery-timeout", next());
      else if (a == "--policy") {
        std::string p = next();
        o.policy = policy_from(p);
        if (!o.policy) throw std::invalid_argument("unknown policy '" + p + "'");
      } else if (a == "--threads") o.threads = std::stoi(next());
      else if (a == "--json") json_out = next();
      else if (a == "--topic-prefix") o.topic_prefix = next();
      else if (a == "--namespace") o.topic_prefix = o.ns = next();  // nodes and topics
      else if (a == "--run-id") o.run_id = next();
      else if (a == "--no-thread-params") o.thread_params = false;
      else if (a == "--fifo") o.fifo = std::stoi(next());
      else if (a == "--trace") o.trace_path = next();
      else if (a == "--list-processes") list = true;
      else if (a == "-h" || a == "--help") return usage() - 1;
      else if (!a.empty() && a[0] == '-') throw std::invalid_argument("unknown option " + a);
      else path = a;
    }
    if (path.empty()) return usage();
    Model model = load_model(path);
    if (list) {
      for (const auto& p : runtime::model_processes(model)) std::printf("%s\n", p.c_str());
      return 0;
    }
    runtime::RunReport r = runtime::run_model(model, o);
    for (const auto& w : r.warnings) std::fprintf(stderr, "chainrt-run: warning: %s\n", w.c_str());
    if (!json_out.empty()) {
      std::string js = runtime::to_json(r, true);
      if (json_out == "-") {
        std::cout << js << std::endl;
      } else {
        std::ofstream f(json_out);
        f << js << "\n";
        f.flush();
        if (!f) {  // a report that cannot be written is an error, not a silent exit 0
          std::fprintf(stderr, "chainrt-run: cannot write the report to %s\n", json_out.c_str());
          return 1;
        }
      }
    } else {
      int w = 16;
      for (const auto& c : r.chains) w = std::max(w, static_cast<int>(c.name.size()));
      std::printf("%-*s %10s %10s %10s %10s %9s %7s %6s\n", w, "chain", "wcrt", "bcrt", "mean",
                  "p99", "instances", "misses", "drops");
      for (const auto& c : r.chains)
        std::printf("%-*s %10s %10s %10s %10s %9llu %7llu %6llu\n", w, c.name.c_str(),
                    pretty_duration(c.wcrt_ns).c_str(), pretty_duration(c.bcrt_ns).c_str(),
                    pretty_duration(static_cast<Duration>(c.mean_ns)).c_str(),
                    pretty_duration(c.p99_ns).c_str(),
                    static_cast<unsigned long long>(c.instances),
                    static_cast<unsigned long long>(c.deadline_misses),
                    static_cast<unsigned long long>(c.drops));
    }
    return runtime::signal_received() ? 130 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-run: %s\n", e.what());
    return 1;
  }
}
