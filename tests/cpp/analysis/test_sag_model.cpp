// The sag analysis on whole models (analysis/src/sag_model.cpp) against the exhaustive brute
// force (sag_brute_force.hpp) over the jobs of tiny random systems whose times are all on a
// grid of 10 µs, so that every execution time in [BCET, WCET] and every release within the
// jitter on that grid can be enumerated: per chain, the bound never below the worst latency of
// any scenario (0 counterexamples) and less than one grid step above it (the brute force cannot
// start a job 1 ns before a release; the analysis can, as a run can). Also: what the analysis declines, and why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "sag_brute_force.hpp"
#include "sag_model.hpp"

using namespace chainrt;
using namespace chainrt::detail::sag;

namespace {

struct Lcg {
  std::uint64_t s;
  int operator()(int lo, int hi) {  // inclusive
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((s >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

std::string header(const std::string& policy) {
  return "chainrt: 1\nname: tiny\nhosts: [{name: h, cores: 1}]\nexecutors:\n  - {name: e, host: h, policy: " + policy +
         ", threads: [{name: t0, cores: [0]}]}\nnodes: [{name: n, executor: e}]\n";
}

constexpr Duration kGrid = 10'000;  // 10 µs: chainrt's shortest period

std::string ticks(int n) { return std::to_string(n * kGrid) + "ns"; }

// Two chains: a timer of period 6 or 12 ticks followed by 0-1 subscriptions, WCET 1-3 ticks,
// BCET up to 1 tick less, jitter 0-1 tick, random priorities; a hyperperiod of at most 12 ticks.
std::string tiny_system(Lcg& rng, const std::string& policy) {
  std::string cbs, chains, topics;
  for (int c = 0; c < 2; ++c) {
    const int T = rng(0, 1) ? 6 : 12;
    const int len = rng(1, 2);
    const std::string cn = "c" + std::to_string(c);
    std::string list;
    for (int k = 0; k < len; ++k) {
      const int w = rng(1, 3);
      const std::string name = cn + "_" + std::to_string(k);
      std::string cb = "  - {name: " + name + ", node: n, wcet: " + ticks(w) + ", bcet: " +
                       ticks(std::max(1, w - rng(0, 1))) + ", priority: " + std::to_string(rng(1, 20));
      if (k == 0)
        cb += ", kind: timer, period: " + ticks(T) + ", phase: guaranteed, offset: " + ticks(rng(0, T - 1)) +
              ", jitter: " + ticks(rng(0, 1));
      else
        cb += ", kind: subscription, topic: " + cn + "_t";
      if (k + 1 < len) {
        cb += ", publishes: [" + cn + "_t]";
        topics += "  - {name: " + cn + "_t}\n";
      }
      cbs += cb + "}\n";
      list += (k ? ", " : "") + name;
    }
    chains += "  - {name: " + cn + ", callbacks: [" + list + "], deadline: " + ticks(T) + "}\n";
  }
  return header(policy) + (topics.empty() ? "" : "topics:\n" + topics) + "callbacks:\n" + cbs + "chains:\n" + chains;
}

}  // namespace

TEST(SagModel, TinySystemsAgainstBruteForce) {
  for (const char* policy : {"fp", "edf"}) {
    Lcg rng{policy[0] == 'f' ? 3u : 4u};
    int analysed = 0, chains = 0, exact = 0, counterexamples = 0;
    for (int s = 0; s < 300; ++s) {
      const std::string yaml = tiny_system(rng, policy);
      const Model m = load_model_from_string(yaml, "tiny.yaml");
      const AnalysisResult r = find_analysis("sag")->analyze(m);
      if (!r.chains[0].bounded) continue;
      ++analysed;
      std::string why;
      const auto mj = build_jobs(m, 2, &why);  // as the analysis: the start and the steady state
      ASSERT_TRUE(mj) << why;
      // the brute force in ticks (every time of the model is a multiple of one)
      std::vector<Job> jobs = mj->jobs;
      for (Job& j : jobs) {
        for (Interval* v : {&j.release, &j.cost}) *v = {v->lo / kGrid, v->hi / kGrid};
        for (Pred& p : j.preds) p.delay = {p.delay.lo / kGrid, p.delay.hi / kGrid};
      }
      const chainrt::test::Truth truth = chainrt::test::brute_force(jobs);
      std::vector<Duration> worst(m.chains.size(), 0);
      for (const ChainInstance& in : mj->instances)
        for (std::size_t j : in.leaves)
          worst[in.chain] = std::max(worst[in.chain], truth.worst[j] * kGrid - in.release);
      for (std::size_t i = 0; i < m.chains.size(); ++i) {
        ++chains;
        if (r.chains[i].wcrt_bound < worst[i]) {
          ++counterexamples;
          ADD_FAILURE() << policy << " chain " << i << ": bound " << r.chains[i].wcrt_bound << " < " << worst[i] << "\n"
                        << yaml;
        }
        exact += r.chains[i].wcrt_bound == worst[i];
        // Tight up to the grid: the analysis works in nanoseconds, where a lower-priority job may
        // start 1 ns before a higher-priority release, off the brute force's grid.
        EXPECT_LT(r.chains[i].wcrt_bound, worst[i] + kGrid) << policy << " chain " << i << "\n" << yaml;
      }
    }
    std::printf("%s: %d tiny systems analysed, %d chains, %d bounds exact\n", policy, analysed, chains, exact);
    EXPECT_EQ(counterexamples, 0);
    EXPECT_GE(analysed, 100) << "too few systems inside the analysis' model to mean anything";
  }
}

// A fusion set of different periods (timers of 12 and 24 ticks into the two inputs of node F,
// whose output feeds one subscription): every input job may complete the set, so the output's
// jobs may not exist (cost [0, WCET], sag_model.hpp); the chains end at the inputs. A third timer
// chain beside them. The brute force runs the same jobs, a cost of 0 among every integer one.
std::string tiny_fusion(Lcg& rng, const std::string& policy) {
  auto cb = [&](const std::string& name, const std::string& rest) {  // timers: one execution time
    const int w = rng(1, 2);
    const bool timer = rest.find("timer") != std::string::npos;
    return "  - {name: " + name + ", wcet: " + ticks(w) + ", bcet: " + ticks(timer ? w : std::max(1, w - rng(0, 1))) +
           ", priority: " + std::to_string(rng(1, 20)) + ", " + rest + "}\n";
  };
  std::string cbs;
  for (int i = 0; i < 2; ++i) {
    const std::string s = std::to_string(i);
    const int T = i ? 24 : 12;
    cbs += cb("s" + s, "node: n, kind: timer, period: " + ticks(T) + ", phase: guaranteed, offset: " + ticks(rng(0, T - 1)) +
                           ", publishes: [t" + s + "]");
    cbs += cb("F" + s, "node: fuse, kind: subscription, topic: t" + s + ", publishes: [f]");
  }
  cbs += cb("out", "node: n, kind: subscription, topic: f");
  cbs += cb("u", "node: n, kind: timer, period: " + ticks(24) + ", phase: guaranteed, offset: " + ticks(rng(0, 23)));
  return "chainrt: 1\nname: tiny\nhosts: [{name: h, cores: 1}]\nexecutors:\n  - {name: e, host: h, policy: " + policy +
         ", threads: [{name: t0, cores: [0]}]}\nnodes: [{name: n, executor: e}, {name: fuse, executor: e}]\n"
         "topics: [{name: t0}, {name: t1}, {name: f}]\ncallbacks:\n" + cbs +
         "chains:\n  - {name: c0, callbacks: [s0, F0], deadline: " + ticks(12) + "}\n  - {name: c1, callbacks: [s1, F1], "
         "deadline: " + ticks(24) + "}\n  - {name: cu, callbacks: [u], deadline: " + ticks(24) + "}\n";
}

TEST(SagModel, UnpairedFusionAgainstBruteForce) {
  for (const char* policy : {"fp", "edf"}) {
    Lcg rng{policy[0] == 'f' ? 5u : 6u};
    int analysed = 0, chains = 0, exact = 0, counterexamples = 0, maybe = 0;
    for (int s = 0; s < 60; ++s) {
      const std::string yaml = tiny_fusion(rng, policy);
      const Model m = load_model_from_string(yaml, "tiny.yaml");
      const AnalysisResult r = find_analysis("sag")->analyze(m);
      if (!r.chains[2].bounded) continue;
      ++analysed;
      std::string why;
      const auto mj = build_jobs(m, 2, &why);
      ASSERT_TRUE(mj) << why;
      std::vector<Job> jobs = mj->jobs;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        maybe += mj->maybe[j] && jobs[j].cost.lo == 0;
        for (Interval* v : {&jobs[j].release, &jobs[j].cost}) *v = {v->lo / kGrid, v->hi / kGrid};
        for (Pred& p : jobs[j].preds) p.delay = {p.delay.lo / kGrid, p.delay.hi / kGrid};
      }
      const chainrt::test::Truth truth = chainrt::test::brute_force(jobs);
      std::vector<Duration> worst(m.chains.size(), 0);
      for (const ChainInstance& in : mj->instances)
        for (std::size_t j : in.leaves) worst[in.chain] = std::max(worst[in.chain], truth.worst[j] * kGrid - in.release);
      for (std::size_t i = 0; i < m.chains.size(); ++i) {
        ASSERT_TRUE(r.chains[i].bounded) << r.chains[i].reason << "\n" << yaml;
        ++chains;
        if (r.chains[i].wcrt_bound < worst[i]) {
          ++counterexamples;
          ADD_FAILURE() << policy << " chain " << i << ": bound " << r.chains[i].wcrt_bound << " < " << worst[i] << "\n"
                        << yaml;
        }
        exact += r.chains[i].wcrt_bound == worst[i];
        EXPECT_LT(r.chains[i].wcrt_bound, worst[i] + kGrid) << policy << " chain " << i << "\n" << yaml;
      }
    }
    std::printf("%s: %d tiny systems with a fusion set of different periods analysed, %d chains, %d bounds exact, %d jobs "
                "that may not exist\n", policy, analysed, chains, exact, maybe);
    EXPECT_EQ(counterexamples, 0);
    EXPECT_GE(analysed, 30);
    EXPECT_GT(maybe, 0);
  }
}

TEST(SagModel, DeclinesOutsideItsModel) {
  const std::string cbs = "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, priority: 1";
  const std::string chains = "}\nchains:\n  - {name: A, callbacks: [a], deadline: 10ms}\n";
  auto why = [&](const std::string& yaml) {
    const AnalysisResult r = find_analysis("sag")->analyze(load_model_from_string(yaml, "t.yaml"));
    EXPECT_FALSE(r.chains[0].bounded);
    return r.chains[0].reason;
  };
  EXPECT_NE(why(header("fp") + cbs + chains).find("no guaranteed phase"), std::string::npos);
  EXPECT_NE(why(header("ros-default") + cbs + ", phase: guaranteed" + chains).find("job-level fixed priority"),
            std::string::npos);
  const std::string two = "chainrt: 1\nname: t\nhosts: [{name: h, cores: 2}]\nexecutors:\n  - {name: e, host: h, policy: "
                          "fp, threads: [{name: t0, cores: [0]}, {name: t1, cores: [1]}]}\nnodes: [{name: n, executor: e}]\n";
  const std::string floating = "chainrt: 1\nname: t\nhosts: [{name: h, cores: 2}]\nexecutors:\n  - {name: e, host: h, "
                               "policy: fp, threads: [{name: t0}, {name: t1}]}\nnodes: [{name: n, executor: e}]\n";
  for (const std::string& platform : {two, floating}) {  // two threads, each a core: global scheduling, analysed
    const AnalysisResult r = find_analysis("sag")->analyze(load_model_from_string(platform + cbs + ", phase: guaranteed" + chains, "t.yaml"));
    EXPECT_TRUE(r.chains[0].bounded) << r.chains[0].reason;
  }
  // three unpinned threads of one executor on two cores: two of them share one in the simulator
  std::string three = floating;
  three.replace(three.find("{name: t1}"), 10, "{name: t1}, {name: t2}");
  EXPECT_NE(why(three + cbs + ", phase: guaranteed" + chains).find("share core 0 of host 'h' in one executor"),
            std::string::npos);
  // a thread pinned to core 1 beside an unpinned one (cores 0 and 1): overlapping core sets
  const std::string overlap = "chainrt: 1\nname: t\nhosts: [{name: h, cores: 2}]\nexecutors:\n  - {name: e, host: h, "
                              "policy: fp, threads: [{name: t0}]}\n  - {name: f, host: h, policy: fp, threads: [{name: u, "
                              "cores: [1], priority: 5}]}\nnodes: [{name: n, executor: e}, {name: o, executor: f}]\n";
  const std::string two_nodes = cbs + ", phase: guaranteed}\n  - {name: b, kind: timer, node: o, period: 10ms, wcet: 1ms, "
                                      "phase: guaranteed" + chains;
  EXPECT_NE(why(overlap + two_nodes).find("threads 't0' (cores 0,1) and 'u' (core 1) may run on overlapping but different "
                                          "cores of host 'h'"), std::string::npos) << why(overlap + two_nodes);
  // three unpinned executors on two cores, two of them without a SCHED_FIFO priority: either may wait for the other
  std::string fair = overlap;
  fair.replace(fair.find(", cores: [1], priority: 5"), 25, "");
  fair.replace(fair.find("nodes:"), 0, "  - {name: g, host: h, policy: fp, threads: [{name: v, priority: 9}]}\n");
  fair.replace(fair.find("]\n", fair.find("nodes:")), 0, ", {name: q, executor: g}");
  const std::string three_nodes = cbs + ", phase: guaranteed}\n  - {name: b, kind: timer, node: o, period: 10ms, wcet: 1ms, "
                                        "phase: guaranteed}\n  - {name: c, kind: timer, node: q, period: 10ms, wcet: 1ms, "
                                        "phase: guaranteed" + chains;
  EXPECT_NE(why(fair + three_nodes).find("may wait for one of cores 0,1 of host 'h' without a SCHED_FIFO priority"),
            std::string::npos) << why(fair + three_nodes);
  // Overload (utilisation 1.2): the backlog grows; the reason names the demand against the time.
  const std::string over = header("fp") +
                           "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 6ms, phase: guaranteed, "
                           "priority: 2}\n  - {name: b, kind: timer, node: n, period: 10ms, wcet: 6ms, phase: guaranteed, "
                           "priority: 1}\nchains:\n  - {name: A, callbacks: [a], deadline: 10ms}\n";
  EXPECT_NE(why(over).find("overload: the jobs of one hyperperiod need 12000000 ns of the thread of executor 'e' in 10000000 ns "
                           "(utilisation 120 %)"), std::string::npos) << why(over);
  // A low-priority chain starved past its period: its timer is released again while queued.
  const std::string starved = header("fp") +
                              "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 6ms, phase: "
                              "guaranteed, priority: 2}\n  - {name: b, kind: timer, node: n, period: 20ms, offset: 1ms, "
                              "wcet: 2ms, phase: guaranteed, priority: 3}\n  - {name: c, kind: timer, node: n, period: 5ms, "
                              "wcet: 1500us, phase: guaranteed, priority: 1}\nchains:\n  - {name: A, callbacks: [a], "
                              "deadline: 10ms}\n";
  EXPECT_NE(why(starved).find("may be released 1 more time(s)"), std::string::npos) << why(starved);
  // A drifting timer faster than the pattern of the reference timers (which repeats every 30 ms).
  const std::string timers = "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, phase: guaranteed}\n"
                             "  - {name: b, kind: timer, node: n, period: 15ms, wcet: 1ms, phase: guaranteed}\n";
  const std::string chain = "chains:\n  - {name: A, callbacks: [a], deadline: 10ms}\n";
  const std::string fast = header("edf") + timers +
                           "  - {name: c, kind: timer, node: n, period: 14000001ns, wcet: 1ms, phase: guaranteed}\n" + chain;
  EXPECT_NE(why(fast).find("drifts against timers whose pattern repeats only every"), std::string::npos) << why(fast);
  // ... one far from a multiple of it (40 ms against 30 ms), and two drifting timers
  const std::string far = header("edf") + timers +
                          "  - {name: c, kind: timer, node: n, period: 40000001ns, wcet: 1ms, phase: guaranteed}\n" + chain;
  EXPECT_NE(why(far).find("too far from a multiple"), std::string::npos) << why(far);
  const std::string drifting_two = header("edf") + timers +
                          "  - {name: c, kind: timer, node: n, period: 30000001ns, wcet: 1ms, phase: guaranteed}\n"
                          "  - {name: d, kind: timer, node: n, period: 60000007ns, wcet: 1ms, phase: guaranteed}\n" + chain;
  EXPECT_NE(why(drifting_two).find("both drift"), std::string::npos) << why(drifting_two);
}

// Two single-threaded executors on one core: the one at SCHED_FIFO 20 preempts the other (no
// real-time priority). h (2 ms from 0) delays l (3 ms from 1 ms) by the 1 ms it has left: l's
// chain 4 ms, on cores of their own 3 ms; each is in the simulator's run. Equal priorities, or
// two threads without one, on one core decline; so does the demand of both above the core.
TEST(SagModel, ExecutorsSharingACoreByPriority) {
  auto model = [](const std::string& sched_h, const std::string& sched_l, const std::string& wcet_l = "3ms") {
    return "chainrt: 1\nname: t\nhosts: [{name: h, cores: 2}]\nexecutors:\n"
           "  - {name: eh, host: h, policy: fp, threads: [{name: th" + sched_h + "}]}\n"
           "  - {name: el, host: h, policy: fp, threads: [{name: tl" + sched_l + "}]}\n"
           "nodes: [{name: nh, executor: eh}, {name: nl, executor: el}]\ncallbacks:\n"
           "  - {name: h, kind: timer, node: nh, period: 10ms, wcet: 2ms, phase: guaranteed}\n"
           "  - {name: l, kind: timer, node: nl, period: 10ms, offset: 1ms, wcet: " + wcet_l + ", phase: guaranteed}\n"
           "chains:\n  - {name: H, callbacks: [h], deadline: 10ms}\n  - {name: L, callbacks: [l], deadline: 10ms}\n";
  };
  auto analyze = [](const std::string& yaml) { return find_analysis("sag")->analyze(load_model_from_string(yaml, "t.yaml")); };
  const AnalysisResult shared = analyze(model(", cores: [0], priority: 20", ", cores: [0]"));
  ASSERT_TRUE(shared.chains[1].bounded) << shared.chains[1].reason;
  EXPECT_EQ(shared.chains[0].wcrt_bound, 2'000'000);
  EXPECT_EQ(shared.chains[1].wcrt_bound, 4'000'000);
  const AnalysisResult apart = analyze(model(", cores: [0], priority: 20", ", cores: [1]"));
  EXPECT_EQ(apart.chains[1].wcrt_bound, 3'000'000);
  const AnalysisResult swapped = analyze(model(", cores: [0]", ", cores: [0], priority: 20"));
  EXPECT_EQ(swapped.chains[0].wcrt_bound, 5'000'000);  // h, started at 0, is preempted by l's 3 ms at 1 ms
  EXPECT_EQ(swapped.chains[1].wcrt_bound, 3'000'000);
  auto reason = [&](const std::string& yaml) { return analyze(yaml).chains[0].reason; };
  EXPECT_NE(reason(model(", cores: [0], priority: 20", ", cores: [0], priority: 20")).find("at one SCHED_FIFO priority"),
            std::string::npos);
  EXPECT_NE(reason(model(", cores: [0]", ", cores: [0]")).find("without a SCHED_FIFO priority"), std::string::npos);
  EXPECT_NE(reason(model(", cores: [0], priority: 20", ", cores: [0]", "9ms")).find("and the threads above it on its core"),
            std::string::npos);
}

// Incommensurate periods (a hyperperiod of 33,333,333 x 200,000,000 ns, far more jobs than the
// limit): the 200 ms timer drifts against the other, and over every relative phase a's worst
// case is one execution of b started 1 ns before a's release.
TEST(SagModel, DriftingPhasesGiveTheWorstOverEveryPhase) {
  const std::string drift = header("edf") +
                            "callbacks:\n  - {name: a, kind: timer, node: n, period: 33333333ns, wcet: 1ms, phase: "
                            "guaranteed}\n  - {name: b, kind: timer, node: n, period: 200ms, wcet: 1ms, phase: guaranteed}\n"
                            "chains:\n  - {name: A, callbacks: [a], deadline: 33333333ns}\n";
  const Model m = load_model_from_string(drift, "t.yaml");
  std::string why;
  const auto mj = build_jobs(m, 2, &why);
  ASSERT_TRUE(mj) << why;
  EXPECT_EQ(mj->reference_hyperperiod, 33'333'333);
  EXPECT_EQ(mj->hyperperiod, 199'999'998);
  EXPECT_TRUE(mj->drifting[1] && !mj->drifting[0]);
  const AnalysisResult r = find_analysis("sag")->analyze(m);
  ASSERT_TRUE(r.chains[0].bounded) << r.chains[0].reason;
  EXPECT_GE(r.chains[0].wcrt_bound, 1'999'999);
  EXPECT_LE(r.chains[0].wcrt_bound, 2'000'010);  // the drift over the analysed span: a few ns
}

// The job limit is the stated one: a system just under it is analysed, one just over declines.
TEST(SagModel, JobLimit) {
  auto system = [&](int jobs_per_hyperperiod) {
    return header("fp") + "callbacks:\n  - {name: a, kind: timer, node: n, period: 1ms, wcet: 100us, phase: guaranteed}\n"
                          "  - {name: b, kind: timer, node: n, period: " + std::to_string(jobs_per_hyperperiod - 1) +
           "ms, wcet: 100us, phase: guaranteed}\nchains:\n  - {name: A, callbacks: [a], deadline: 1ms}\n";
  };
  std::string why;
  EXPECT_TRUE(build_jobs(load_model_from_string(system(static_cast<int>(kMaxJobs) / 2), "t.yaml"), 1, &why)) << why;
  EXPECT_FALSE(build_jobs(load_model_from_string(system(static_cast<int>(kMaxJobs) + 1), "t.yaml"), 1, &why));
  EXPECT_NE(why.find("more than"), std::string::npos) << why;
}

// Rates given exactly (1/30 s and 1/5 s): commensurate — one hyperperiod of 200 ms, no drifting
// timer, the 30 Hz jobs at the grid's instants round(k·P); and the worst case is that of the
// aligned phases (a released with b, first by its deadline: 1 ms), where the same rates in whole
// ns (33,333,333 ns and 200 ms) drift and give b's execution in front of a (2 ms).
TEST(SagModel, RatesGivenExactlyAreCommensurate) {
  auto model = [&](const std::string& pa, const std::string& pb) {
    return load_model_from_string(header("edf") + "callbacks:\n  - {name: a, kind: timer, node: n, period: " + pa +
                                      ", wcet: 1ms, phase: guaranteed}\n  - {name: b, kind: timer, node: n, period: " +
                                      pb + ", wcet: 1ms, phase: guaranteed}\n"
                                      "chains:\n  - {name: A, callbacks: [a], deadline: 30ms}\n",
                                  "t.yaml");
  };
  const Model exact = model("1/30 s", "1/5 s");
  std::string why;
  const auto mj = build_jobs(exact, 2, &why);
  ASSERT_TRUE(mj) << why;
  EXPECT_EQ(mj->hyperperiod, 200'000'000);
  EXPECT_TRUE(mj->drifting.empty());
  std::vector<Duration> releases;
  for (std::size_t j : mj->of_callback[0]) releases.push_back(mj->root_release[j]);
  ASSERT_GE(releases.size(), 7u);
  EXPECT_EQ(releases, (std::vector<Duration>{0, 33'333'333, 66'666'667, 100'000'000, 133'333'333, 166'666'667,
                                             200'000'000, 233'333'333, 266'666'667, 300'000'000, 333'333'333,
                                             366'666'667}));
  const AnalysisResult r = find_analysis("sag")->analyze(exact);
  ASSERT_TRUE(r.chains[0].bounded) << r.chains[0].reason;
  EXPECT_EQ(r.chains[0].wcrt_bound, 1'000'000);
  const AnalysisResult drifting = find_analysis("sag")->analyze(model("33333333ns", "200ms"));
  ASSERT_TRUE(drifting.chains[0].bounded) << drifting.chains[0].reason;
  EXPECT_GE(drifting.chains[0].wcrt_bound, 1'999'999);
  EXPECT_TRUE(model("30 Hz", "5 Hz") == exact);
}
