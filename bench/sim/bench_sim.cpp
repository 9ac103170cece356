// bench/sim: how fast the discrete-event simulator runs (one core, one thread).
//  1. throughput: simulated callback executions per second of wall time, per workload and
//     policy (target: >= 5 million per second);
//  2. the wall time to simulate one hour of examples/autoware_lame.yaml under its own policy.
// Every figure is repeated (--repeat, default 5) and reported as median with min/max and the
// relative spread, so noise from the shared machine is visible. Output: a table, or --json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#ifdef CHAINRT_BENCH_GENERATOR
#include "chainrt/analysis/generator.hpp"
#endif

using namespace chainrt;

namespace {

// CPU time of this thread: the simulator is single-threaded, so this is its time "on one
// core", insensitive to being descheduled on a shared machine (wall time is reported too).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Stats {
  double median, min, max, mean, stdev;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s{};
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stdev += (x - s.mean) * (x - s.mean);
  s.stdev = v.size() > 1 ? std::sqrt(s.stdev / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

struct Case {
  std::string name;
  Model model;
  std::optional<Policy> policy;
  Duration duration;
};

struct Row {
  std::string name;
  std::uint64_t executions = 0;
  Stats seconds{}, rate{};  // CPU seconds per run, executions per CPU second
  Stats wall{};             // wall seconds per run
};

Row measure(const Case& c, int repeat) {
  Row r;
  r.name = c.name;
  std::vector<double> secs, rates, walls;
  sim::SimOptions o;
  o.duration = c.duration;
  o.policy = c.policy;
  o.keep_samples = true;  // as `chainrt simulate` runs (p99 needs the samples)
  sim::simulate(c.model, o);  // warm-up (page faults, caches)
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    const sim::SimResult res = sim::simulate(c.model, o);
    const double s = thread_cpu_seconds() - c0;
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    r.executions = res.executions;
    secs.push_back(s);
    rates.push_back(static_cast<double>(res.executions) / s);
  }
  r.seconds = stats(secs);
  r.wall = stats(walls);
  r.rate = stats(rates);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  bool json = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else {
      std::fprintf(stderr, "usage: bench_sim [--repeat N] [--json] [--quick]\n");
      return 1;
    }
  }
  const std::string ex = std::string(CHAINRT_SOURCE_DIR) + "/examples/";
  const Duration hour = 3600LL * 1'000'000'000LL, span = quick ? 60LL * 1'000'000'000LL : 600LL * 1'000'000'000LL;
  const Model lame = load_model(ex + "autoware_lame.yaml");
  const Model two = load_model(ex + "two_chains.yaml");
  const Model cs2 = load_model(ex + "case_study_2.yaml");
  std::vector<Case> cases = {
      {"autoware_lame/lame", lame, std::nullopt, span},
      {"autoware_lame/edf", lame, Policy::Edf, span},
      {"autoware_lame/ros-default", lame, Policy::RosDefault, span},
      {"two_chains/fp", two, Policy::FixedPriority, span},
      {"two_chains/ros-default", two, Policy::RosDefault, span},
      {"case_study_2/ros-default x2", cs2, Policy::RosDefault, span},
  };
#ifdef CHAINRT_BENCH_GENERATOR
  {
    gen::EdfPaperParams p;  // the EDF paper's Fig. 7 default point: m=4, n=8, b=5, U_norm=0.3
    cases.push_back({"edf_paper_fig7/edf (m=4)", gen::edf_paper_system(p, 7), std::nullopt, span});
    p.u_norm = 0.6;
    cases.push_back({"edf_paper_fig7/edf (m=4, U_norm=0.6)", gen::edf_paper_system(p, 7), std::nullopt, span});
  }
#endif
  std::vector<Row> rows;
  for (const Case& c : cases) rows.push_back(measure(c, repeat));
  const Row hour_row = measure(Case{"autoware_lame one hour (lame)", lame, std::nullopt, quick ? hour / 10 : hour}, repeat);

  double total_exec = 0, total_s = 0;
  for (const Row& r : rows) total_exec += static_cast<double>(r.executions), total_s += static_cast<double>(r.executions) / r.rate.median;
  const double overall = total_exec / total_s;
  if (json) {
    std::printf("{\"repeat\": %d, \"target_exec_per_s\": 5000000, \"throughput\": [", repeat);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("%s{\"workload\": \"%s\", \"executions\": %llu, \"exec_per_s_median\": %.0f, \"exec_per_s_min\": %.0f, "
                  "\"exec_per_s_max\": %.0f, \"rel_stdev\": %.4f, \"wall_exec_per_s_median\": %.0f}",
                  i ? ", " : "", r.name.c_str(), static_cast<unsigned long long>(r.executions), r.rate.median, r.rate.min,
                  r.rate.max, r.rate.stdev / r.rate.mean, static_cast<double>(r.executions) / r.wall.median);
    }
    std::printf("], \"overall_exec_per_s\": %.0f, \"ratio_to_target\": %.3f, \"autoware_lame_hour\": {\"simulated_s\": %lld, "
                "\"executions\": %llu, \"cpu_s_median\": %.4f, \"cpu_s_min\": %.4f, \"cpu_s_max\": %.4f, \"rel_stdev\": %.4f, \"wall_s_median\": %.4f}}\n",
                overall, overall / 5e6, static_cast<long long>((quick ? hour / 10 : hour) / 1'000'000'000LL),
                static_cast<unsigned long long>(hour_row.executions), hour_row.seconds.median, hour_row.seconds.min,
                hour_row.seconds.max, hour_row.seconds.stdev / hour_row.seconds.mean, hour_row.wall.median);
    return 0;
  }
  std::printf("simulator throughput per CPU second of one core, %d repeats (median [min, max], rel. stdev; wall median)\n", repeat);
  for (const Row& r : rows)
    std::printf("  %-40s %10llu exec  %6.2f M exec/s [%5.2f, %5.2f]  %4.1f%%  (wall %.2f M/s)\n", r.name.c_str(),
                static_cast<unsigned long long>(r.executions), r.rate.median / 1e6, r.rate.min / 1e6, r.rate.max / 1e6,
                100 * r.rate.stdev / r.rate.mean, static_cast<double>(r.executions) / r.wall.median / 1e6);
  std::printf("  overall: %.2f M exec/s = %.2f x the 5 M/s target\n", overall / 1e6, overall / 5e6);
  std::printf("one hour of autoware_lame.yaml (%s simulated, %llu executions): %.3f s CPU [%.3f, %.3f], %.1f%% (wall %.3f s)\n",
              quick ? "6 min" : "60 min", static_cast<unsigned long long>(hour_row.executions), hour_row.seconds.median,
              hour_row.seconds.min, hour_row.seconds.max, 100 * hour_row.seconds.stdev / hour_row.seconds.mean,
              hour_row.wall.median);
  return 0;
}
