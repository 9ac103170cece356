// chainrt-run: run (one process of) a chainrt model on real ROS 2 under the chainrt executor and
// print the observed per-chain latencies (WCRT, BCRT, mean, p99, misses, drops). The Python
// command `chainrt run` starts one chainrt-run per process of the model, each with the run's one
// specification (`--spec`, run_spec.hpp), and merges the results; its options are the table of
// run_options.def.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fstream>
#include <memory>
#include <string>

#include "chainrt/model/units.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/runtime/run_spec.hpp"
#include "chainrt/runtime/supervised.hpp"
#ifdef CHAINRT_HAVE_CUDA
#include "chainrt/runtime/cuda_device.hpp"
#endif
#ifdef CHAINRT_HAVE_LAME
#include "chainrt/runtime/lame_controller.hpp"
#endif

using namespace chainrt;

namespace {
int usage(int code) {
  std::fputs(runtime::run_usage().c_str(), code ? stderr : stdout);
  return code;
}

// The report as a table of chains on stdout.
void print_table(const runtime::RunReport& r) {
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

// The JSON report to json_out ("-": stdout); false (with a message) when it cannot be written.
bool write_json(const std::string& js, const std::string& json_out) {
  if (json_out == "-") {
    std::cout << js << std::endl;
    return true;
  }
  std::ofstream f(json_out);
  f << js << "\n";
  f.flush();
  if (!f) {  // a report that cannot be written is an error, not a silent exit 0
    std::fprintf(stderr, "chainrt-run: cannot write the report to %s\n", json_out.c_str());
    return false;
  }
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  if (!runtime::tie_to_parent_from_env()) return 1;  // the chainrt that started it is gone
  if (argc < 2) return usage(1);
#ifdef CHAINRT_HAVE_CUDA
  runtime::register_cuda_backend();  // `device: cuda` accelerators run on the GPU
#endif
  try {
    runtime::RunSpec spec = runtime::parse_run_command_line(argc, argv);
    if (spec.help) return usage(0);
    if (spec.model_file.empty() && !spec.model_text) return usage(1);
    runtime::ModelRunOptions& o = spec.run;
    Model model = runtime::load_run_model(spec);
    if (spec.list) {
      for (const auto& p : runtime::model_processes(model)) std::printf("%s\n", p.c_str());
      return 0;
    }
#ifdef CHAINRT_HAVE_LAME
    std::unique_ptr<runtime::LameController> lame;
    if (spec.lame_period > 0) {
      runtime::LameControllerOptions lo;
      lo.period = spec.lame_period;
      lo.plan.period = spec.lame_reservation_period;
      lame = std::make_unique<runtime::LameController>(model, lo);
      model = lame->planned_model();
      o.observer = lame.get();
      o.policy.reset();
      o.threads.reset();
    }
#else
    if (spec.lame_period > 0) throw std::invalid_argument("--lame-controller: this build has no LaME module");
#endif
    runtime::RunReport r = runtime::run_model(model, o);
    for (const auto& w : r.warnings) std::fprintf(stderr, "chainrt-run: warning: %s\n", w.c_str());
    if (!spec.json_out.empty()) {
      std::string js = runtime::to_json(r, true);
#ifdef CHAINRT_HAVE_LAME
      if (lame) {
        js.pop_back();  // the closing brace
        js += ", \"lame_controller\": " + lame->log_json() + "}";
      }
#endif
      if (!write_json(js, spec.json_out)) return 1;
    } else {
      print_table(r);
    }
    return runtime::signal_received() ? 130 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-run: %s\n", e.what());
    return 1;
  }
}
