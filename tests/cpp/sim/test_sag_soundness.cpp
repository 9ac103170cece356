// The sag analysis (analysis/src/sag_*.cpp) against the simulator on random small systems of
// its model: one single-threaded executor (fp, picas, edf), timers with guaranteed phases and
// release jitter, linear chains of subscriptions, BCET < WCET. Every run of the simulator —
// WCET, BCET, uniform and BCET/WCET mixes under several seeds, releases at the end of their
// jitter or drawn — must stay within the bound (0 counterexamples); where execution times are
// fixed and there is no jitter, the bound equals the simulated worst case (the job set is then
// one schedule). The examples' aligned robot is bounded at its simulated worst case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/witness.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {

struct Lcg {
  std::uint64_t s;
  int operator()(int lo, int hi) {  // inclusive
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((s >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

// A random system: 2-3 chains of 1-3 callbacks (a timer, then subscriptions), periods from
// {10, 20, 40} ms, offsets and WCETs in 100 µs steps, BCET = WCET (`fixed`) or below it,
// jitter (unless `fixed`) up to 1 ms, utilisation kept under about 0.7.
// `executors` 2: two single-threaded executors of one process, pinned to cores 0 and 1, each
// callback on either (chains cross them). `threads` > 1 (one executor): that many threads
// pinned to cores of their own, each callback in one of three nodes (their default groups
// exclude each other's callbacks). `shared`: the executors' threads all on core 0 at SCHED_FIFO
// priorities 30, 20, 10, ... (the last, in every other system, without one). `unpinned` > 0
// (with `shared`): those threads unpinned on a host of that many cores instead.
std::string random_system(Lcg& rng, const std::string& policy, bool fixed, int executors = 1, int threads = 1,
                          bool shared = false, int unpinned = 0) {
  std::string cbs, chains, topics;
  const int n = rng(2, 3);
  const int periods[] = {10, 20, 40};
  double util = 0;
  for (int c = 0; c < n; ++c) {
    const int T = periods[rng(0, 2)];
    const int len = rng(1, 3);
    const std::string cn = "c" + std::to_string(c);
    std::string list;
    for (int k = 0; k < len; ++k) {
      const int w = rng(3, std::max(4, static_cast<int>(T * 10 * 0.7 / (n * len))));  // x100 µs
      util += w / (T * 10.0);
      const int b = fixed ? w : rng(1, w);
      const std::string name = cn + "_" + std::to_string(k);
      const std::string node = executors > 1 ? "n" + std::to_string(rng(0, executors - 1))
                               : threads > 1 ? "n" + std::to_string(rng(0, 2))
                                             : "n";
      std::string cb = "  - {name: " + name + ", node: " + node + ", wcet: " + std::to_string(w * 100) + "us, bcet: " +
                       std::to_string(b * 100) + "us, priority: " + std::to_string(rng(1, 50));
      if (k == 0)
        cb += ", kind: timer, period: " + std::to_string(T) + "ms, phase: guaranteed, offset: " +
              std::to_string(rng(0, T - 1) * 1000) + "us, jitter: " + std::to_string(fixed ? 0 : rng(0, 10) * 100) + "us";
      else
        cb += ", kind: subscription, topic: " + cn + "_t" + std::to_string(k - 1);
      if (k + 1 < len) {
        cb += ", publishes: [" + cn + "_t" + std::to_string(k) + "]";
        topics += "  - {name: " + cn + "_t" + std::to_string(k) + "}\n";
      }
      cbs += cb + "}\n";
      list += (k ? ", " : "") + name;
    }
    chains += "  - {name: " + cn + ", callbacks: [" + list + "], deadline: " + std::to_string(T) + "ms}\n";
  }
  (void)util;
  const int host_cores = unpinned > 0 ? unpinned : shared ? 1 : executors * threads;
  std::string platform = "chainrt: 1\nname: r\nhosts: [{name: h, cores: " + std::to_string(host_cores) +
                         "}]\nexecutors:\n", nodes = "nodes: [";
  if (executors == 1) {
    std::string ts;
    for (int t = 0; t < threads; ++t)
      ts += (t ? ", " : "") + std::string("{name: t") + std::to_string(t) + ", cores: [" + std::to_string(t) + "]}";
    platform += "  - {name: e, host: h, policy: " + policy + ", threads: [" + ts + "]}\n";
    nodes += threads > 1 ? "{name: n0, executor: e}, {name: n1, executor: e}, {name: n2, executor: e}"
                         : "{name: n, executor: e}";
  }
  const bool normal_last = shared && rng(0, 1) == 1;  // drawn only then: the other kinds keep their systems
  for (int e = 0; executors > 1 && e < executors; ++e) {
    const std::string i = std::to_string(e);
    const std::string pin = unpinned > 0 ? "" : ", cores: [0]";
    const std::string sched = !shared ? ", cores: [" + i + "]"
                              : e + 1 == executors && normal_last ? pin
                                                                  : pin + ", priority: " + std::to_string(30 - 10 * e);
    platform += "  - {name: e" + i + ", host: h, process: p, policy: " + policy + ", threads: [{name: t" + i + sched +
                "}]}\n";
    nodes += (e ? ", " : "") + std::string("{name: n") + i + ", executor: e" + i + "}";
  }
  return platform + nodes + "]\n" + (topics.empty() ? "" : "topics:\n" + topics) + "callbacks:\n" + cbs + "chains:\n" +
         chains;
}

// The largest response time of each chain over the simulator's runs.
// `global`: unpinned threads scheduled globally (SimOptions::global_threads).
std::vector<Duration> simulated_worst(const Model& m, bool fixed, bool global = false) {
  std::vector<Duration> worst(m.chains.size(), 0);
  auto run = [&](sim::ExecTime e, std::uint64_t seed, bool random_jitter) {
    sim::SimOptions o;
    o.global_threads = global;
    o.exec = e;
    o.seed = seed;
    o.random_jitter = random_jitter;
    o.duration = 400'000'000;  // ten hyperperiods of 40 ms
    const sim::SimResult r = sim::simulate(m, o);
    for (std::size_t i = 0; i < m.chains.size(); ++i) worst[i] = std::max(worst[i], r.chains[i].wcrt);
  };
  run(sim::ExecTime::Wcet, 1, false);
  if (fixed) return worst;
  run(sim::ExecTime::Bcet, 1, false);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    run(sim::ExecTime::Uniform, seed, true);
    run(sim::ExecTime::Mix, seed, seed % 2 == 0);
  }
  return worst;
}

// Systems per test and kind: the given count, or CHAINRT_SAG_SYSTEMS for a campaign (the
// command in docs/analysis.md).
int systems(int n) {
  const char* env = std::getenv("CHAINRT_SAG_SYSTEMS");
  return env && std::atoi(env) > 0 ? std::atoi(env) : n;
}

struct Tally {
  int systems = 0, bounded = 0, counterexamples = 0, exact = 0, chains = 0;
  double ratio_sum = 0, ratio_max = 0;
  std::vector<double> ratios;  // per chain: bound / simulated worst
  double quantile(double q) {
    if (ratios.empty()) return 0;
    std::sort(ratios.begin(), ratios.end());
    return ratios[static_cast<std::size_t>(q * static_cast<double>(ratios.size() - 1))];
  }
};

// `depth` > 1: every subscription queues that many messages (a backlog may then wait in it).
// `unpinned` > 0: shared executors unpinned on that many cores, each system simulated with the
// simulator's placement and with global scheduling (both must stay within the bound).
Tally check(const std::string& policy, bool fixed, int systems, std::uint64_t seed, int executors = 1,
            int threads = 1, int depth = 1, bool shared = false, int unpinned = 0) {
  Lcg rng{seed};
  Tally t;
  const ResponseTimeAnalysis* sag = find_analysis("sag");
  EXPECT_NE(sag, nullptr);
  for (int s = 0; s < systems; ++s) {
    std::string yaml = random_system(rng, policy, fixed, executors, threads, shared, unpinned);
    const std::string field = "queue_depth: " + std::to_string(depth) + ", ";
    for (std::size_t at = 0; depth > 1 && (at = yaml.find("kind: subscription", at)) != std::string::npos;
         at += field.size() + 1)
      yaml.insert(at, field);
    const Model m = load_model_from_string(yaml, "random.yaml");
    ++t.systems;
    const AnalysisResult r = sag->analyze(m);
    if (r.chains.empty() || !r.chains[0].bounded) continue;
    ++t.bounded;
    std::vector<Duration> worst = simulated_worst(m, fixed), placed = worst;
    if (unpinned > 0) {
      const std::vector<Duration> global = simulated_worst(m, fixed, true);
      for (std::size_t i = 0; i < worst.size(); ++i) worst[i] = std::max(worst[i], global[i]);
    }
    for (std::size_t i = 0; i < m.chains.size(); ++i) {
      const ChainBound& b = r.chains[i];
      ++t.chains;
      if (!b.bounded || b.wcrt_bound < worst[i]) {
        ++t.counterexamples;
        ADD_FAILURE() << "chain " << b.chain << ": bound " << b.wcrt_bound << " < simulated " << worst[i]
                      << (unpinned > 0 ? (worst[i] > placed[i] ? " (global scheduling)" : " (the simulator's placement)") : "")
                      << "\n"
                      << yaml;
        continue;
      }
      if (b.wcrt_bound == worst[i]) ++t.exact;
      const double ratio = worst[i] > 0 ? static_cast<double>(b.wcrt_bound) / static_cast<double>(worst[i]) : 1.0;
      t.ratio_sum += ratio;
      t.ratios.push_back(ratio);
      t.ratio_max = std::max(t.ratio_max, ratio);
    }
  }
  std::printf("%s %s, %d executor(s)%s x %d thread(s): %d systems, %d analysed, %d chains, %d exact, bound/simulated mean %.3f median "
              "%.3f p90 %.3f max %.3f\n", policy.c_str(), fixed ? "fixed" : "varying", executors,
              unpinned > 0 ? (" unpinned on " + std::to_string(unpinned) + " cores").c_str() : shared ? " on one core" : "", threads, t.systems, t.bounded,
              t.chains, t.exact, t.chains ? t.ratio_sum / t.chains : 0.0, t.quantile(0.5), t.quantile(0.9), t.ratio_max);
  return t;
}

}  // namespace

TEST(SagSoundness, NeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf", "picas"}) {
    const Tally t = check(policy, false, systems(300), 7);
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, 150) << policy << ": too few systems inside the analysis' model to mean anything";
  }
}

// Subscriptions that queue three messages: a backlog behind a long callback is kept, not
// dropped (the analysis counts every queued message's job).
TEST(SagSoundness, QueuedMessagesNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"}) {
    const Tally t = check(policy, false, systems(300), 73, 1, 1, 3);
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, 150) << policy;
  }
}

// Fixed execution times, no jitter: one schedule, the bound is it.
TEST(SagSoundness, ExactWhenTheScheduleIsFixed) {
  for (const char* policy : {"fp", "edf"}) {
    const Tally t = check(policy, true, 200, 11);
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, 100) << policy;
    EXPECT_EQ(t.exact, t.chains) << policy;
  }
}

// Two executors pinned to cores of their own, chains crossing them: the partitions' graphs
// to a fixed point never below the simulator.
TEST(SagSoundness, PartitionsNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"}) {
    const Tally t = check(policy, false, systems(300), 41, 2);
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, 150) << policy;
    const Tally fixed = check(policy, true, 200, 43, 2);
    EXPECT_EQ(fixed.counterexamples, 0) << policy;
  }
}

// Two and three single-threaded executors on one core at different SCHED_FIFO priorities (the
// lowest, in half of the systems, without one), chains crossing them: each graph with the jobs
// of the threads above as preemption, never below the simulator.
TEST(SagSoundness, SharedCoreByPriorityNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"})
    for (int executors : {2, 3}) {
      const Tally t = check(policy, false, systems(300), 91 + executors, executors, 1, 1, true);
      EXPECT_EQ(t.counterexamples, 0) << policy << " " << executors;
      EXPECT_GE(t.bounded, 100) << policy << " " << executors;
      const Tally fixed = check(policy, true, 200, 95 + executors, executors, 1, 1, true);
      EXPECT_EQ(fixed.counterexamples, 0) << policy << " " << executors;
    }
}

// Two and three single-threaded executors unpinned on two cores at different SCHED_FIFO
// priorities (the lowest, in half of the systems, without one), chains crossing them: a thread
// with two threads above waits only while both run. Each system simulated with the simulator's
// placement (round robin over the cores) and with the kernel's global scheduling.
TEST(SagSoundness, UnpinnedByPriorityNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"})
    for (int executors : {2, 3}) {
      const Tally t = check(policy, false, systems(300), 131 + executors, executors, 1, 1, true, 2);
      EXPECT_EQ(t.counterexamples, 0) << policy << " " << executors;
      EXPECT_GE(t.bounded, 100) << policy << " " << executors;
      const Tally fixed = check(policy, true, 200, 135 + executors, executors, 1, 1, true, 2);
      EXPECT_EQ(fixed.counterexamples, 0) << policy << " " << executors;
    }
}

// One executor with two and three threads pinned to cores of their own (global scheduling,
// callbacks of a node mutually exclusive): never below the simulator.
TEST(SagSoundness, SeveralThreadsNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"})
    for (int threads : {2, 3}) {
      const Tally t = check(policy, false, systems(300), 53 + threads, 1, threads);
      EXPECT_EQ(t.counterexamples, 0) << policy << " " << threads;
      EXPECT_GE(t.bounded, 100) << policy << " " << threads;
      const Tally fixed = check(policy, true, 200, 57 + threads, 1, threads);
      EXPECT_EQ(fixed.counterexamples, 0) << policy << " " << threads;
    }
}

namespace {

// The run of a witness (chainrt::sag_witnesses) in the simulator: its chain's worst response.
Duration replayed(const Model& m, const ScheduleWitness& w) {
  sim::SimOptions o;
  o.exec = sim::ExecTime::Wcet;
  o.random_jitter = false;
  o.exec_script = w.exec;
  o.release_script = w.release_delay;
  o.duration = std::max<Duration>(w.until, 400'000'000);
  return sim::simulate(m, o).chain(w.chain)->wcrt;
}

}  // namespace

// sag's worst-case schedules replayed in the simulator (one thread, varying execution times and
// jitter): never above the bound, at the bound on most chains, and above every run of the
// random search on some (the simulated worst case the tightness figures divide by).
TEST(SagSoundness, WitnessesReplayedReachTheBound) {
  for (const char* policy : {"fp", "edf"}) {
    Lcg rng{policy[0] == 'f' ? 83u : 89u};
    int chains = 0, exact = 0, above_search = 0;
    for (int s = 0; s < systems(200); ++s) {
      const std::string yaml = random_system(rng, policy, false);
      const Model m = load_model_from_string(yaml, "random.yaml");
      const std::vector<ScheduleWitness> ws = sag_witnesses(m);
      if (ws.empty()) continue;
      const std::vector<Duration> search = simulated_worst(m, false);
      for (const ScheduleWitness& w : ws) {
        const Duration run = replayed(m, w);
        ++chains;
        EXPECT_LE(run, w.latency) << w.chain << "\n" << yaml;
        exact += run == w.latency;
        std::size_t i = 0;
        while (m.chains[i].name != w.chain) ++i;
        above_search += run > search[i];
      }
    }
    std::printf("%s: %d witnesses, %d replayed at the bound, %d above the random search\n", policy, chains, exact,
                above_search);
    EXPECT_GE(chains, 200) << policy;
    EXPECT_GE(exact, chains * 9 / 10) << policy;
    EXPECT_GT(above_search, 0) << policy;
  }
}

namespace {

// A fusion system on one thread: two timers of one period (10, 20 or 40 ms) at random offsets
// on the grid, each with 0-1 subscriptions, into a fusion node F (two subscriptions publishing
// one topic: an implicit fusion set), then 1-2 subscriptions; a chain from each timer through F;
// a third, independent timer chain. WCETs in 100 µs steps, BCET below (the cache-only run),
// jitter up to 0.5 ms, random priorities.
// `unpaired`: the second timer's period 1.5 times the first's (the set's rounds do not pair), and
// each source's chain ends at its fusion input or goes on through the join (drawn; a chain through
// it is declined, every other one is bounded with the fused jobs as interference).
std::string fusion_system(Lcg& rng, const std::string& policy, bool unpaired = false) {
  const int periods[] = {10, 20, 40};
  const int T = periods[rng(0, 2)];
  auto w = [&](int hi) { return std::to_string(rng(3, hi) * 100) + "us"; };
  auto pr = [&] { return std::to_string(rng(1, 40)); };
  std::string cbs, topics = "  - {name: f}\n  - {name: o0}\n", chains, tail;
  const int outs = rng(1, 2);
  std::string after;
  for (int k = 0; k < outs; ++k) {
    cbs += "  - {name: out" + std::to_string(k) + ", kind: subscription, node: n, topic: " + (k ? "o0" : "f") +
           ", wcet: " + w(T * 2) + ", priority: " + pr() + (k + 1 < outs ? ", publishes: [o0]" : "") + "}\n";
    after += ", out" + std::to_string(k);
  }
  for (int i = 0; i < 2; ++i) {
    const std::string s = "s" + std::to_string(i);
    std::string path = s;
    const int P = unpaired && i == 1 ? T * 3 / 2 : T;
    cbs += "  - {name: " + s + ", kind: timer, node: n, period: " + std::to_string(P) + "ms, phase: guaranteed, offset: " +
           std::to_string(rng(0, T * 2 - 1) * 500) + "us, jitter: " + std::to_string(rng(0, 5) * 100) + "us, wcet: " +
           w(T * 2) + ", priority: " + pr() + ", publishes: [" + s + "t]}\n";
    topics += "  - {name: " + s + "t}\n";
    std::string into = s + "t";
    if (rng(0, 1)) {
      cbs += "  - {name: " + s + "x, kind: subscription, node: n, topic: " + into + ", wcet: " + w(T * 2) +
             ", priority: " + pr() + ", publishes: [" + s + "x]}\n";
      topics += "  - {name: " + s + "x}\n";
      into = s + "x";
      path += ", " + s + "x";
    }
    const int wc = rng(3, T * 2);
    cbs += "  - {name: F" + std::to_string(i) + ", kind: subscription, node: fuse, topic: " + into + ", wcet: " +
           std::to_string(wc * 100) + "us, bcet: " + std::to_string(std::max(1, wc / 4) * 100) + "us, priority: " + pr() +
           ", publishes: [f]}\n";
    const bool through = !unpaired || rng(0, 1);
    chains += "  - {name: c" + std::to_string(i) + ", callbacks: [" + path + ", F" + std::to_string(i) +
              (through ? after : std::string()) + "], deadline: " + std::to_string(T) + "ms}\n";
  }
  const int U = periods[rng(0, 2)];
  cbs += "  - {name: u, kind: timer, node: n, period: " + std::to_string(U) + "ms, phase: guaranteed, offset: " +
         std::to_string(rng(0, U - 1)) + "ms, wcet: " + w(U * 2) + ", priority: " + pr() + "}\n";
  chains += "  - {name: cu, callbacks: [u], deadline: " + std::to_string(U) + "ms}\n";
  return "chainrt: 1\nname: f\nhosts: [{name: h, cores: 1}]\nexecutors:\n  - {name: e, host: h, policy: " + policy +
         ", threads: [{name: t0, cores: [0]}]}\nnodes: [{name: n, executor: e}, {name: fuse, executor: e}]\ntopics:\n" +
         topics + "callbacks:\n" + cbs + "chains:\n" + chains;
}

}  // namespace

// Implicit fusion sets (rounds of one period's messages): never below the simulator (its random
// runs and sag's witnesses replayed), and the tightness of the bounds of the chains through the
// join (the offsets/fusion shape, one thread).
TEST(SagSoundness, FusionRoundsNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"}) {
    Lcg rng{policy[0] == 'f' ? 61u : 67u};
    Tally t;
    const int count = systems(300);
    for (int s = 0; s < count; ++s) {
      const std::string yaml = fusion_system(rng, policy);
      const Model m = load_model_from_string(yaml, "fusion.yaml");
      ++t.systems;
      const AnalysisResult r = find_analysis("sag")->analyze(m);
      if (!r.chains[0].bounded || !r.chains[1].bounded) continue;
      ++t.bounded;
      std::vector<Duration> worst = simulated_worst(m, false);
      for (const ScheduleWitness& w : sag_witnesses(m))  // sag's worst-case schedules replayed
        for (std::size_t i = 0; i < m.chains.size(); ++i)
          if (m.chains[i].name == w.chain) worst[i] = std::max(worst[i], replayed(m, w));
      for (std::size_t i = 0; i < m.chains.size(); ++i) {
        const ChainBound& b = r.chains[i];
        if (!b.bounded) continue;
        ++t.chains;
        if (b.wcrt_bound < worst[i]) {
          ++t.counterexamples;
          ADD_FAILURE() << "chain " << b.chain << ": bound " << b.wcrt_bound << " < simulated " << worst[i] << "\n" << yaml;
        } else if (i < 2 && worst[i] > 0) {
          t.ratios.push_back(static_cast<double>(b.wcrt_bound) / static_cast<double>(worst[i]));
        }
      }
    }
    std::printf("fusion %s: %d systems, %d analysed, %d chains; through the join: bound/simulated median %.3f p90 %.3f\n",
                policy, t.systems, t.bounded, t.chains, t.quantile(0.5), t.quantile(0.9));
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, count / 3) << policy;
  }
}

// A fusion set of sources of different periods: which message completes it depends on the
// arrival order, so a chain through it is declined (and says why); every other chain is bounded
// with every member job possibly fusing (the fused message's jobs as jobs that may not exist):
// never below the simulator (its random runs and sag's witnesses replayed).
TEST(SagSoundness, UnpairedFusionNeverBelowTheSimulator) {
  for (const char* policy : {"fp", "edf"}) {
    Lcg rng{policy[0] == 'f' ? 71u : 73u};
    Tally t;
    int declined_through = 0, bounded_other = 0;
    const int count = systems(150);
    for (int s = 0; s < count; ++s) {
      const std::string yaml = fusion_system(rng, policy, true);
      const Model m = load_model_from_string(yaml, "unpaired.yaml");
      ++t.systems;
      const AnalysisResult r = find_analysis("sag")->analyze(m);
      // a chain through the join: declined with the set named (under edf the whole system, the
      // fused jobs' deadline keys being unknown)
      for (std::size_t i = 0; i < 2; ++i)
        if (m.chains[i].callbacks.back() != "F" + std::to_string(i)) {
          EXPECT_FALSE(r.chains[i].bounded) << yaml;
          const std::string& why = r.chains[i].reason;
          if (why.find("passes fusion set 'F0'") != std::string::npos ||
              why.find("depend on the arrival order") != std::string::npos)
            ++declined_through;
        }
      if (!r.chains[2].bounded) continue;
      ++t.bounded;
      std::vector<Duration> worst = simulated_worst(m, false);
      for (const ScheduleWitness& w : sag_witnesses(m))
        for (std::size_t i = 0; i < m.chains.size(); ++i)
          if (m.chains[i].name == w.chain) worst[i] = std::max(worst[i], replayed(m, w));
      for (std::size_t i = 0; i < m.chains.size(); ++i) {
        const ChainBound& b = r.chains[i];
        if (!b.bounded) continue;
        ++t.chains;
        if (i < 2) ++bounded_other;
        if (b.wcrt_bound < worst[i]) {
          ++t.counterexamples;
          ADD_FAILURE() << "chain " << b.chain << ": bound " << b.wcrt_bound << " < simulated " << worst[i] << "\n" << yaml;
        } else if (worst[i] > 0) {
          t.ratios.push_back(static_cast<double>(b.wcrt_bound) / static_cast<double>(worst[i]));
        }
      }
    }
    std::printf("unpaired fusion %s: %d systems, %d analysed, %d chains bounded (%d ending at a fusion input), %d "
                "declined through the join, %d counterexamples; bound/simulated median %.3f p90 %.3f max %.3f\n",
                policy, t.systems, t.bounded, t.chains, bounded_other, declined_through, t.counterexamples,
                t.quantile(0.5), t.quantile(0.9), t.ratios.empty() ? 0.0 : t.quantile(1.0));
    EXPECT_EQ(t.counterexamples, 0) << policy;
    EXPECT_GE(t.bounded, count / (policy[0] == 'f' ? 3 : 10)) << policy;
    EXPECT_GT(declined_through, 0) << policy;
    EXPECT_GT(bounded_other, 0) << policy;
  }
}

// The Autoware reference system on one picas or edf thread (its timers on the grid, all in
// phase): four fusion sets, three of them joining timers of different periods (NDTLocalizer,
// Lanelet2GlobalPlanner, Lanelet2MapLoader). The hot paths do not pass them and are bounded with
// every input of those sets possibly fusing; never below the simulator's runs nor sag's own
// worst-case schedules replayed, and within 5 % of the worst of them.
TEST(SagSoundness, ReferenceSystemHotPathsBesideFusionSetsOfDifferentPeriods) {
  for (const Policy policy : {Policy::Picas, Policy::Edf}) {
    Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
    m.executors[0].policy = policy;
    const AnalysisResult r = find_analysis("sag")->analyze(m);
    // the model's dispatch_overhead in the bound and in every simulated job (facts.hpp)
    ASSERT_GT(m.executors[0].dispatch_overhead, 0);
    std::vector<Duration> worst = simulated_worst(m, false);
    for (const ScheduleWitness& w : sag_witnesses(m))
      for (std::size_t i = 0; i < m.chains.size(); ++i)
        if (m.chains[i].name == w.chain) worst[i] = std::max(worst[i], replayed(m, w));
    for (std::size_t i = 0; i < m.chains.size(); ++i) {
      const ChainBound& b = r.chains[i];
      ASSERT_TRUE(b.bounded) << b.chain << ": " << b.reason;
      EXPECT_GE(b.wcrt_bound, worst[i]) << b.chain;
      if (b.chain.rfind("hot_path", 0) == 0)
        EXPECT_LE(static_cast<double>(b.wcrt_bound), 1.05 * static_cast<double>(worst[i])) << b.chain;
      std::printf("reference system, %s: %s bound %lld, simulated worst %lld (%.4f)\n", to_string(policy),
                  b.chain.c_str(), static_cast<long long>(b.wcrt_bound), static_cast<long long>(worst[i]),
                  static_cast<double>(b.wcrt_bound) / static_cast<double>(worst[i]));
    }
  }
}

TEST(SagSoundness, AlignedRobotAtItsWorstCase) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/robot_aligned.yaml");
  const AnalysisResult r = find_analysis("sag")->analyze(m);
  const ChainBound* b = r.find("perception");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->bounded) << b->reason;
  EXPECT_TRUE(b->schedulable);
  const std::vector<Duration> worst = simulated_worst(m, false);
  EXPECT_GE(b->wcrt_bound, worst[0]);
  EXPECT_LE(static_cast<double>(b->wcrt_bound), 1.05 * 21'750'667.0);
  EXPECT_EQ(worst[0], 21'750'667);  // the uploader holding the thread when the second frame arrives
}

namespace {

// The largest response time of each chain over WCET/BCET/mixed runs with `timer`'s offset set
// to each of `offsets` (a drifting timer's relative phase, swept).
std::vector<Duration> worst_over_phases(Model m, const std::string& timer, const std::vector<Duration>& offsets,
                                        Duration duration) {
  std::vector<Duration> worst(m.chains.size(), 0);
  Callback* cb = nullptr;
  for (Callback& c : m.callbacks)
    if (c.name == timer) cb = &c;
  EXPECT_NE(cb, nullptr);
  for (Duration off : offsets) {
    cb->offset = off;
    for (auto e : {sim::ExecTime::Wcet, sim::ExecTime::Bcet, sim::ExecTime::Mix}) {
      sim::SimOptions o;
      o.exec = e;
      o.seed = static_cast<std::uint64_t>(off) + 1;
      o.duration = duration;
      const sim::SimResult r = sim::simulate(m, o);
      for (std::size_t i = 0; i < m.chains.size(); ++i) worst[i] = std::max(worst[i], r.chains[i].wcrt);
    }
  }
  return worst;
}

}  // namespace

// Drifting periods (33,333,333 ns and 200 ms): a finite worst case over every relative phase,
// the verdict "misses", the blocking logger and when the drift reaches it; the simulator, run
// at the phase of the bad alignment, reaches it, and no phase goes above the bound.
TEST(SagSoundness, DriftingRobotMissesWithAFiniteWorstCase) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/robot_drifting.yaml");
  const AnalysisResult r = find_analysis("sag")->analyze(m);
  const ChainBound* b = r.find("perception");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->bounded) << b->reason;
  EXPECT_FALSE(b->schedulable);
  EXPECT_GE(b->wcrt_bound, 36'660'000);
  EXPECT_LE(static_cast<double>(b->wcrt_bound), 1.1 * 36'660'000.0);
  EXPECT_NE(b->reason.find("'logger/log' may hold the thread"), std::string::npos) << b->reason;
  EXPECT_NE(b->reason.find("'logger/log' drifts by 2 ns every"), std::string::npos) << b->reason;
  EXPECT_NE(b->reason.find("first reaching it after"), std::string::npos) << b->reason;
  EXPECT_NE(b->reason.find("with period 199999998 ns"), std::string::npos) << b->reason;
  // the logger released up to 3 ms before the second frame (33,333,333 ns), in 100 µs steps
  std::vector<Duration> offsets;
  for (Duration d = 1; d <= 3'000'001; d += 100'000) offsets.push_back(33'333'333 - d);
  const std::vector<Duration> worst = worst_over_phases(m, "logger/log", offsets, 400'000'000);
  EXPECT_GE(worst[0], 36'600'000);  // the miss is real
  EXPECT_GE(b->wcrt_bound, worst[0]);
  const ChainBound* logging = r.find("logging");
  ASSERT_TRUE(logging && logging->bounded) << (logging ? logging->reason : "");  // from the drifting timer
  EXPECT_GE(logging->wcrt_bound, worst[1]);
  EXPECT_TRUE(logging->schedulable);
}

// Random systems of a reference timer (10 or 20 ms) with a successor and a drifting timer (2-5
// of its periods, a few µs off), fp or edf: the bound over every phase against the simulator
// run with the drifting timer's offset swept over 40 phases (WCET, BCET, mixed): 0 counterexamples.
TEST(SagSoundness, DriftingPhasesNeverBelowTheSimulator) {
  Lcg rng{29};
  int analysed = 0;
  std::vector<double> ratios;
  const int count = systems(300);
  for (int s = 0; s < count; ++s) {
    const int T = rng(0, 1) ? 10 : 20;
    const int k = rng(2, 5);
    const int off = rng(-5, 5) == 0 ? 1 : rng(1, 9);
    const int w1 = rng(5, T * 3), w2 = rng(5, T * 3), w3 = rng(3, T * 2);  // x100 µs
    const std::string policy = rng(0, 1) ? "edf" : "fp";
    const Duration drifting = static_cast<Duration>(k) * T * 1'000'000 + off * 1'000;
    const std::string yaml =
        "chainrt: 1\nname: d\nhosts: [{name: h, cores: 1}]\nexecutors:\n  - {name: e, host: h, policy: " + policy +
        ", threads: [{name: t0, cores: [0]}]}\nnodes: [{name: n, executor: e}]\ntopics: [{name: x}]\ncallbacks:\n"
        "  - {name: a, kind: timer, node: n, period: " + std::to_string(T) + "ms, phase: guaranteed, wcet: " +
        std::to_string(w1 * 100) + "us, bcet: " + std::to_string(w1 * 50) + "us, priority: " + std::to_string(rng(1, 9)) +
        ", publishes: [x]}\n  - {name: a2, kind: subscription, topic: x, node: n, wcet: " + std::to_string(w3 * 100) +
        "us, priority: " + std::to_string(rng(1, 9)) + "}\n  - {name: b, kind: timer, node: n, period: " +
        std::to_string(drifting) + "ns, phase: guaranteed, wcet: " + std::to_string(w2 * 100) + "us, bcet: " +
        std::to_string(w2 * 60) + "us, priority: " + std::to_string(rng(1, 9)) + "}\nchains:\n"
        "  - {name: A, callbacks: [a, a2], deadline: " + std::to_string(T) + "ms}\n  - {name: B, callbacks: [b], "
        "deadline: " + std::to_string(drifting) + "ns}\n";
    const Model m = load_model_from_string(yaml, "drift.yaml");
    const AnalysisResult r = find_analysis("sag")->analyze(m);
    // b drifts when the common hyperperiod is too long for the job limit; otherwise its declared
    // offset is analysed and sweeping it leaves the analysis' model
    const Duration H = std::lcm(static_cast<Duration>(T) * 1'000'000, drifting);
    if (H / (static_cast<Duration>(T) * 1'000'000) * 2 * 2 <= 20'000) continue;
    if (!r.chains[0].bounded || !r.chains[1].bounded) continue;
    ++analysed;
    std::vector<Duration> offsets;
    for (int p = 0; p < 40; ++p) offsets.push_back(static_cast<Duration>(T) * 1'000'000 * p / 40 + rng(0, 999) * 25);
    const std::vector<Duration> worst = worst_over_phases(m, "b", offsets, static_cast<Duration>(4) * drifting);
    for (std::size_t i = 0; i < 2; ++i) {
      if (!r.chains[i].bounded) continue;
      EXPECT_GE(r.chains[i].wcrt_bound, worst[i]) << "chain " << r.chains[i].chain << "\n" << yaml;
      if (worst[i] > 0) ratios.push_back(static_cast<double>(r.chains[i].wcrt_bound) / static_cast<double>(worst[i]));
    }
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("drifting: %d of %d systems analysed; bound / simulated worst over the phases swept: median %.3f, "
              "p90 %.3f\n", analysed, count, ratios.empty() ? 0.0 : ratios[ratios.size() / 2],
              ratios.empty() ? 0.0 : ratios[ratios.size() * 9 / 10]);
  EXPECT_GE(analysed, count / 3);
}

// The simulator releases a timer given as a rate on the release grid (round(k·P), never
// accumulated): 30 Hz beside 5 Hz coincide at every 6th frame for 10 minutes, and the robot with
// its rates aligned this way is bounded by sag at its simulated worst case (above), while the
// same rates in whole ns drift (robot_drifting.yaml) and miss.
TEST(SagSoundness, RatesAreReleasedOnTheExactGrid) {
  const Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/robot_aligned.yaml");
  ASSERT_TRUE(m.callback("camera/capture").exact_period);
  sim::SimOptions o;
  o.exec = sim::ExecTime::Wcet;
  o.duration = 600'000'000'000;  // 10 min
  o.trace = true;
  o.trace_limit = 200'000;
  const sim::SimResult r = sim::simulate(m, o);
  ASSERT_FALSE(r.trace_truncated);
  const auto cam = static_cast<std::uint32_t>(m.callback_index("camera/capture"));
  const auto log = static_cast<std::uint32_t>(m.callback_index("logger/log"));
  std::vector<Duration> frames, records;
  for (const sim::TraceEntry& e : r.trace) {
    if (e.callback == cam) frames.push_back(e.release);
    if (e.callback == log) records.push_back(e.release);
  }
  ASSERT_GE(frames.size(), 17'999u);
  ASSERT_GE(records.size(), 2'999u);
  for (std::size_t k = 0; k < frames.size(); ++k)
    ASSERT_EQ(frames[k], (static_cast<Duration>(k) * 200'000'000 + 3) / 6) << "frame " << k;  // round(k·10^8/3)
  for (std::size_t i = 0; i < records.size() && 6 * i < frames.size(); ++i)
    ASSERT_EQ(records[i], frames[6 * i]) << "record " << i;
}
