// chainrt-rs-chain-executor: upstream's reference system (its node classes, built by its
// create_autoware_nodes with its timing) spun by chainrt's ChainExecutor, laid out by a chainrt
// model of the reference system (one ChainExecutor per model executor; the nodes placed as the
// model says; policy, callback priorities, threads, pinning and SCHED_FIFO from the model).
//
//   chainrt-rs-chain-executor MODEL [--report FILE] [--warmup DURATION] [--trace FILE]
//
// Runs until SIGINT/SIGTERM (rclcpp's signal handler shuts the context down, every executor's
// spin returns). Upstream's sinks print the KPIs on stdout as in upstream's executables.
// --report: a JSON object with each executor's monitoring report (runtime/monitor.hpp's JSON:
// chains measured from the end of the warm-up), the entities the model does not describe and
// the executors' warnings. --trace: every executor's dispatch records (the last ones its ring
// holds) as a JSON array of [executor, callback, thread, start, finish, deadline, release,
// cpu] (CLOCK_MONOTONIC ns; the replica workload's trace format, which chainrt's Gantt reads).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rclcpp/rclcpp.hpp"

#include "reference_system/system/type/rclcpp_system.hpp"

#include "autoware_reference_system/autoware_system_builder.hpp"
#include "autoware_reference_system/system/timing/default.hpp"

#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/supervised.hpp"

namespace {

int usage() {
  std::fprintf(stderr, "usage: chainrt-rs-chain-executor MODEL [--report FILE] [--warmup DURATION] [--trace FILE]\n");
  return 1;
}

std::string json_string(const std::string& s) { return "\"" + chainrt::runtime::json_escape(s) + "\""; }

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
  return out + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (!chainrt::runtime::tie_to_parent_from_env()) return 1;  // the chainrt that started it is gone
  std::string model_path, report_path, trace_path;
  chainrt::Duration warmup = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--report" || a == "--warmup" || a == "--trace") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--report") {
        report_path = v;
      } else if (a == "--trace") {
        trace_path = v;
      } else {
        std::string why;
        auto d = chainrt::parse_duration(v, &why);
        if (!d) {
          std::fprintf(stderr, "chainrt-rs-chain-executor: --warmup: %s\n", why.c_str());
          return 1;
        }
        warmup = *d;
      }
    } else if (a == "--ros-args") {
      break;  // rclcpp's own arguments follow
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "chainrt-rs-chain-executor: unknown option %s\n", a.c_str());
      return usage();
    } else if (model_path.empty()) {
      model_path = a;
    } else {
      return usage();
    }
  }
  if (model_path.empty()) return usage();

  chainrt::Model model;
  try {
    model = chainrt::load_model(model_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-rs-chain-executor: %s\n", e.what());
    return 1;
  }

  rclcpp::init(argc, argv);
  auto nodes = create_autoware_nodes<RclcppSystem, nodes::timing::Default>();

  // one ChainExecutor per model executor, the nodes where the model puts them
  std::vector<std::shared_ptr<chainrt::rclcpp::ChainExecutor>> executors;
  std::map<std::string, std::size_t> index;
  try {
    for (const auto& e : model.executors) {
      chainrt::rclcpp::ChainExecutorOptions o;
      o.executor = e.name;
      index[e.name] = executors.size();
      executors.push_back(std::make_shared<chainrt::rclcpp::ChainExecutor>(model_path, o));
    }
    std::map<std::string, std::string> placement;
    for (const auto& n : model.nodes) placement[n.name] = n.executor;
    for (auto& node : nodes) {
      auto it = placement.find(node->get_name());
      if (it == placement.end())
        throw std::invalid_argument(std::string("the model has no node ") + node->get_name());
      executors[index.at(it->second)]->add_node(node);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-rs-chain-executor: %s\n", e.what());
    rclcpp::shutdown();
    return 1;
  }

  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < executors.size(); ++i) threads.emplace_back([&, i] { executors[i]->spin(); });
  std::thread warm([&] {  // the executors' chain statistics start after the warm-up
    auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(warmup);
    while (rclcpp::ok() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto& e : executors) e->record_from_now();
  });
  executors[0]->spin();
  for (auto& t : threads) t.join();
  warm.join();

  int rc = 0;
  if (!report_path.empty()) {
    std::ofstream f(report_path);
    f << "{\"executors\": {";
    for (std::size_t i = 0; i < executors.size(); ++i) {
      f << (i ? ", " : "") << json_string(model.executors[i].name) << ": {\"report\": "
        << executors[i]->report_json() << ", \"unmatched\": " << json_list(executors[i]->unmatched())
        << ", \"warnings\": " << json_list(executors[i]->warnings()) << "}";
    }
    f << "}}\n";
    if (!f) {
      std::fprintf(stderr, "chainrt-rs-chain-executor: cannot write %s\n", report_path.c_str());
      rc = 1;
    }
  }
  if (!trace_path.empty()) {
    std::ofstream f(trace_path);
    f << "[";
    bool first = true;
    for (std::size_t i = 0; i < executors.size(); ++i) {
      for (const auto& r : executors[i]->trace()) {
        f << (first ? "" : ",\n") << "[" << json_string(model.executors[i].name) << ", "
          << json_string(executors[i]->name_of(r.callback)) << ", " << r.thread << ", " << r.start << ", " << r.finish
          << ", " << r.deadline << ", " << r.release << ", " << r.cpu << ", " << r.slept_until << ", " << r.woke << "]";
        first = false;
      }
    }
    f << "]\n";
    if (!f) {
      std::fprintf(stderr, "chainrt-rs-chain-executor: cannot write %s\n", trace_path.c_str());
      rc = 1;
    }
  }
  executors.clear();
  nodes.clear();
  rclcpp::shutdown();
  return rc;
}
