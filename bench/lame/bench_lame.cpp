// bench/lame: wall time of one full LaME controller activation (Algorithm 1 linearisation,
// Algorithm 2 allocation with merging/demotion, Algorithm 3 budget search for every RT class,
// the BE check) on the Autoware LaME variant (13 chains), on one core of this machine.
// Prints median, p10/p90, min/max over --repeat runs, the number of response-time analyses
// per activation, and — for the same-run ratio the project compares — the time of one fp-mt
// analysis of the whole model measured in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <ctime>
#include <sched.h>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/lame/lame.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;
using Clock = std::chrono::steady_clock;

// CPU time of this thread (ms): what an activation costs, unlike wall time, is not inflated
// when other processes share the cores.
static double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

static double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double idx = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(idx);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

int main(int argc, char** argv) {
  int repeat = 200, cores = 0, fifo = 0;
  std::string path = std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_lame.yaml";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(3, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--cores") && i + 1 < argc) cores = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fifo") && i + 1 < argc) fifo = std::atoi(argv[++i]);
    else path = argv[i];
  }
  Model m;
  try {
    m = load_model(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_lame: %s\n", e.what());
    return 1;
  }
  // --fifo PRIO: measure at a SCHED_FIFO priority so that other processes on a shared machine
  // do not inflate the wall time (the controller itself runs at normal priority).
  if (fifo > 0) {
    sched_param sp{};
    sp.sched_priority = fifo;
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) std::fprintf(stderr, "bench_lame: SCHED_FIFO not available\n"), fifo = 0;
  }
  lame::Options o;
  o.cores = cores;
  for (int w = 0; w < 5; ++w) lame::allocate(m, o);  // warm-up
  std::vector<double> act, one, cpu;
  int analyses = 0;
  const auto* fp = find_analysis("fp-mt");
  for (int r = 0; r < repeat; ++r) {
    const double c0 = cpu_ms();
    auto t0 = Clock::now();
    auto a = lame::allocate(m, o);
    auto t1 = Clock::now();
    cpu.push_back(cpu_ms() - c0);
    analyses = a.analyses;
    act.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    auto t2 = Clock::now();
    auto res = fp->analyze(a.model);
    auto t3 = Clock::now();
    (void)res;
    one.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
  }
  const double med = pct(act, 0.5);
  std::printf("LaME activation (%s, %zu chains, %s cores): %d runs%s\n", m.name.c_str(), m.chains.size(),
              cores ? std::to_string(cores).c_str() : "host", repeat, fifo > 0 ? ", measured at SCHED_FIFO" : "");
  std::printf("  allocation + budget search + BE check: median %.3f ms, p10 %.3f, p90 %.3f, min %.3f, max %.3f\n", med,
              pct(act, 0.1), pct(act, 0.9), pct(act, 0.0), pct(act, 1.0));
  std::printf("  the same, thread CPU time: median %.3f ms, p10 %.3f, p90 %.3f, min %.3f, max %.3f\n", pct(cpu, 0.5),
              pct(cpu, 0.1), pct(cpu, 0.9), pct(cpu, 0.0), pct(cpu, 1.0));
  std::printf("  response-time analyses per activation: %d\n", analyses);
  std::printf("  one fp-mt analysis of the planned model: median %.3f ms (activation / analysis = %.1f)\n",
              pct(one, 0.5), med / std::max(1e-9, pct(one, 0.5)));
  std::printf("  target < 10 ms (median wall time): %s; CPU time %s (wall-time noise: p90/p10 = %.2f)\n",
              med < 10.0 ? "met" : "NOT met", pct(cpu, 0.5) < 10.0 ? "met" : "NOT met",
              pct(act, 0.9) / std::max(1e-9, pct(act, 0.1)));
  return 0;
}
