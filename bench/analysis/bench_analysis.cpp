// Benchmark of the analysis module: analyses per second per analysis on systems from
// the EDF paper's generator (m = 4, n = 8, b = 5, U_norm = 0.3, g = 2, α = 0.2), one thread,
// repeated to show the spread; then the wall time of the whole Fig. 7 computation (the same
// points as `chainrt experiment schedulability`: 44 points x 2000 systems x 5 analyses and the
// jiang22 reference curve, generation included) on all hardware threads. Wall-clock numbers
// are printed, never asserted.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/batch.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/analysis/reference.hpp"

using namespace chainrt;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU time of the whole process (all threads), to tell contention on a shared machine from work.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Stats {
  double median, min, max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

bool single_threaded(const std::string& n) {
  const auto* a = find_analysis(n);  // nullptr: a reference curve (jiang22, the m-thread executor)
  return a != nullptr && a->single_threaded();
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 7, systems = 1000, fig7_sets = 2000;
  bool fig7 = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--systems") && i + 1 < argc) systems = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fig7-sets") && i + 1 < argc) fig7_sets = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-fig7")) fig7 = false;
    else {
      std::fprintf(stderr, "usage: bench_analysis [--repeat N] [--systems N] [--fig7-sets N] [--no-fig7]\n");
      return 1;
    }
  }
  gen::EdfPaperParams p;  // m = 4, n = 8, b = 5, U_norm = 0.3, g = 2, α = 0.2
  std::vector<Model> multi, part;
  for (int i = 0; i < systems; ++i) {
    multi.push_back(gen::edf_paper_system(p, gen::Rng::stream_seed(2024, i)));
    part.push_back(gen::partition_single_threaded(multi.back(), Policy::Picas));
  }
  std::printf("analyses per second, one thread, %d generated systems (m=4 n=8 b=5 U_norm=0.3 g=2 alpha=0.2),"
              " %d runs: median [min, max]\n",
              systems, repeat);
  for (const auto* a : analyses()) {
    const auto& set = single_threaded(a->name()) ? part : multi;
    std::vector<double> rates;
    int schedulable = 0;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = Clock::now();
      int s = 0;
      for (const auto& m : set) s += a->analyze(m).schedulable;
      rates.push_back(static_cast<double>(set.size()) / seconds_since(t0));
      schedulable = s;
    }
    Stats st = stats(rates);
    std::printf("  %-15s %9.0f /s  [%9.0f, %9.0f]  spread %4.1f%%  (%d/%d schedulable%s)\n", a->name().c_str(), st.median,
                st.min, st.max, 100.0 * (st.max - st.min) / st.median, schedulable, systems,
                single_threaded(a->name()) ? ", partitioned onto 4 single-threaded executors" : "");
  }
  {  // the jiang22 reference curve (reference.hpp; refuted, not a registry analysis)
    std::vector<double> rates;
    int schedulable = 0;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = Clock::now();
      int s = 0;
      for (const auto& m : multi) s += reference::jiang22(m).schedulable;
      rates.push_back(static_cast<double>(multi.size()) / seconds_since(t0));
      schedulable = s;
    }
    Stats st = stats(rates);
    std::printf("  %-15s %9.0f /s  [%9.0f, %9.0f]  spread %4.1f%%  (%d/%d schedulable; reference curve, unsound)\n",
                "(jiang22)", st.median, st.min, st.max, 100.0 * (st.max - st.min) / st.median, schedulable, systems);
  }
  {
    std::vector<double> rates;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = Clock::now();
      for (int i = 0; i < systems; ++i) {
        Model m = gen::edf_paper_system(p, gen::Rng::stream_seed(2024, i));
        (void)m;
      }
      rates.push_back(systems / seconds_since(t0));
    }
    Stats st = stats(rates);
    std::printf("  %-15s %9.0f /s  [%9.0f, %9.0f]\n", "(generation)", st.median, st.min, st.max);
  }
  if (!fig7) return 0;
  // The Fig. 7 points of python/chainrt/experiments/schedulability.py.
  struct Panel {
    const char* name;
    std::vector<double> values;
  };
  std::vector<Panel> panels{{"u_norm", {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}},
                            {"n", {2, 4, 6, 8, 10, 12, 14, 16}},
                            {"b", {2, 3, 4, 5, 6, 7, 8, 9, 10}},
                            {"g", {0, 1, 2, 3, 4, 5, 6}},
                            {"alpha", {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}}};
  std::vector<std::string> names;
  for (const auto* a : analyses()) names.push_back(a->name());
  names.push_back("jiang22");  // the reference curve the experiment also draws (reference.hpp)
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::size_t points = 0;
  auto t0 = Clock::now();
  const double c0 = cpu_seconds();
  for (const auto& panel : panels)
    for (double v : panel.values) {
      gen::EdfPaperParams q;
      std::string pn = panel.name;
      if (pn == "u_norm") q.u_norm = v;
      else if (pn == "n") q.n = static_cast<int>(v);
      else if (pn == "b") q.b = static_cast<int>(v);
      else if (pn == "g") q.g = static_cast<int>(v);
      else q.alpha = v;
      schedulable_counts(q, 1000 + points, 0, fig7_sets, names, threads);
      ++points;
    }
  double wall = seconds_since(t0);
  double cpu = cpu_seconds() - c0;
  std::printf("Fig. 7 computation: %zu points x %d systems x %zu curves on %d threads: %.1f s wall, %.1f s CPU "
              "(%.0f systems/s; wall/CPU x threads = %.2f, 1.00 when the cores are not shared)\n",
              points, fig7_sets, names.size(), threads, wall, cpu, points * fig7_sets / wall, wall * threads / cpu);
  return 0;
}
