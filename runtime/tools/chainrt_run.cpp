// chainrt-run: run (one process of) a chainrt model on real ROS 2 under the chainrt executor and
// print the observed per-chain latencies (WCRT, BCRT, mean, p99, misses, drops). The Python
// command `chainrt run` starts one chainrt-run per process of the model and merges the results.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fstream>
#include <memory>
#include <string>

#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/sched/policy.hpp"
#include "chainrt/runtime/supervised.hpp"
#ifdef CHAINRT_HAVE_CUDA
#include "chainrt/runtime/cuda_device.hpp"
#endif
#ifdef CHAINRT_HAVE_LAME
#include "chainrt/runtime/lame_controller.hpp"
#endif

using namespace chainrt;

namespace {
int usage() {
  std::string names;  // the policies' names, from their descriptors (sched/policy.hpp)
  for (const auto& d : sched::policies()) names += (names.empty() ? "" : "|") + std::string(d.name);
  std::fprintf(stderr,
               "usage: chainrt-run MODEL [--process NAME] [--duration 10s] [--warmup 500ms]\n"
               "                   [--policy %s] [--threads N]\n"
               "                   [--json FILE|-] [--namespace /ns] [--run-id ID]\n"
               "                   [--topic-prefix /ns] [--stats-period 1s]\n"
               "                   [--no-thread-params] [--fifo PRIO] [--trace FILE]\n"
               "                   [--list-processes]\n"
               "                   [--lame-controller PERIOD] [--lame-reservation-period 10ms]\n"
               "                   [--scale-wcet AT:FACTOR]...\n",
               names.c_str());
  return 1;
}
Duration duration_arg(const char* flag, const std::string& v) {
  std::string why;
  auto d = parse_duration(v, &why);
  if (!d) throw std::invalid_argument(std::string(flag) + ": " + why);
  return *d;
}
// --scale-wcet AT:FACTOR.
runtime::WcetStep wcet_step_arg(const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("--scale-wcet: expected AT:FACTOR, e.g. 90s:1.64");
  runtime::WcetStep st;
  st.at = duration_arg("--scale-wcet", v.substr(0, colon));
  std::size_t used = 0;
  try {
    st.factor = std::stod(v.substr(colon + 1), &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() - colon - 1 || !(st.factor > 0) || st.factor > 1000)
    throw std::invalid_argument("--scale-wcet: the factor must be a number in (0, 1000]");
  return st;
}

// The command line.
struct Args {
  std::string path, json_out;
  bool list = false, help = false;
  runtime::ModelRunOptions o;
  Duration lame_period = 0, lame_reservation_period = 10'000'000;
};

// The command line parsed; std::invalid_argument with one line on a bad one.
Args parse_args(int argc, char** argv) {
  Args r;
  runtime::ModelRunOptions& o = r.o;
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
    else if (a == "--json") r.json_out = next();
    else if (a == "--topic-prefix") o.topic_prefix = next();
    else if (a == "--namespace") o.topic_prefix = o.ns = next();  // nodes and topics
    else if (a == "--run-id") o.run_id = next();
    else if (a == "--no-thread-params") o.thread_params = false;
    else if (a == "--fifo") o.fifo = std::stoi(next());
    else if (a == "--trace") o.trace_path = next();
    else if (a == "--list-processes") r.list = true;
    else if (a == "--lame-controller") {
      r.lame_period = duration_arg("--lame-controller", next());
      if (r.lame_period <= 0) throw std::invalid_argument("--lame-controller: the period must be positive");
    } else if (a == "--lame-reservation-period") {
      r.lame_reservation_period = duration_arg("--lame-reservation-period", next());
      if (r.lame_reservation_period <= 0) throw std::invalid_argument("--lame-reservation-period must be positive");
    } else if (a == "--scale-wcet") o.wcet_steps.push_back(wcet_step_arg(next()));
    else if (a == "-h" || a == "--help") {
      r.help = true;
      return r;
    } else if (!a.empty() && a[0] == '-') throw std::invalid_argument("unknown option " + a);
    else r.path = a;
  }
  return r;
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
  if (argc < 2) return usage();
#ifdef CHAINRT_HAVE_CUDA
  runtime::register_cuda_backend();  // `device: cuda` accelerators run on the GPU
#endif
  try {
    Args args = parse_args(argc, argv);
    if (args.help) return usage() - 1;
    runtime::ModelRunOptions& o = args.o;
    if (args.path.empty()) return usage();
    Model model = load_model(args.path);
    if (args.list) {
      for (const auto& p : runtime::model_processes(model)) std::printf("%s\n", p.c_str());
      return 0;
    }
    std::sort(o.wcet_steps.begin(), o.wcet_steps.end(),
              [](const runtime::WcetStep& x, const runtime::WcetStep& y) { return x.at < y.at; });
#ifdef CHAINRT_HAVE_LAME
    std::unique_ptr<runtime::LameController> lame;
    if (args.lame_period > 0) {
      runtime::LameControllerOptions lo;
      lo.period = args.lame_period;
      lo.plan.period = args.lame_reservation_period;
      lame = std::make_unique<runtime::LameController>(model, lo);
      model = lame->planned_model();
      o.observer = lame.get();
      o.policy.reset();
      o.threads.reset();
    }
#else
    if (args.lame_period > 0) throw std::invalid_argument("--lame-controller: this build has no LaME module");
#endif
    runtime::RunReport r = runtime::run_model(model, o);
    for (const auto& w : r.warnings) std::fprintf(stderr, "chainrt-run: warning: %s\n", w.c_str());
    if (!args.json_out.empty()) {
      std::string js = runtime::to_json(r, true);
#ifdef CHAINRT_HAVE_LAME
      if (lame) {
        js.pop_back();  // the closing brace
        js += ", \"lame_controller\": " + lame->log_json() + "}";
      }
#endif
      if (!write_json(js, args.json_out)) return 1;
    } else {
      print_table(r);
    }
    return runtime::signal_received() ? 130 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-run: %s\n", e.what());
    return 1;
  }
}
