// The platform term: a host's blackout curve (model Host::blackout) as S(Δ) and the stretch of
// a callback (analysis/supply.hpp), charged by edf-mt, fp-mt, picas-st and cros-rt; a bound that
// holds with the platform simulated as a SCHED_FIFO 99 thread, and is beaten without the curve.
#include <gtest/gtest.h>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/supply.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {
constexpr Duration ms = 1'000'000;

const char* kChain = R"(
hosts:
  - name: pc
    cores: 1
%BLACKOUT%
executors:
  - {name: app, policy: picas, priority: 50, threads: [{name: t0, cores: [0], priority: 50}]}
%PLATFORM%
nodes:
  - {name: n, executor: app}
%PNODE%
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 3ms, priority: 1}
%PCB%
chains:
  - {name: c, callbacks: [a]}
)";

std::string fill(const std::string& what, const std::string& key, const std::string& text) {
  std::string s = what;
  s.replace(s.find(key), key.size(), text);
  return s;
}

// The model analysed (with or without the curve of a platform taking 2 ms every 5 ms) or the
// one simulated (the platform as a FIFO 99 timer with the given phase, no curve).
Model chain_model(bool curve, std::optional<Duration> platform_phase) {
  std::string s = fill(kChain, "%BLACKOUT%",
                       curve ? "    blackout: [{window: 0.5ms, max: 0.5ms}, {window: 1ms, max: 1ms}, {window: 2ms, max: 2ms},"
                               " {window: 5ms, max: 2ms}, {window: 7ms, max: 4ms}, {window: 10ms, max: 4ms},"
                               " {window: 12ms, max: 6ms}]"
                             : "");
  s = fill(s, "%PLATFORM%",
           platform_phase ? "  - {name: platform, policy: picas, priority: 99, threads: [{name: t0, cores: [0], priority: 99}]}"
                          : "");
  s = fill(s, "%PNODE%", platform_phase ? "  - {name: p, executor: platform}" : "");
  s = fill(s, "%PCB%", platform_phase ? "  - {name: blackout, kind: timer, node: p, period: 5ms, wcet: 2ms, priority: 1, offset: " +
                                            std::to_string(*platform_phase) + "ns}"
                                      : "");
  return load_model_from_string(s, "platform.yaml");
}
}  // namespace

TEST(Platform, BlackoutCurveIsSteppedAndSubadditive) {
  const std::vector<BlackoutPoint> c{{1 * ms, 1 * ms}, {10 * ms, 2 * ms}};
  EXPECT_EQ(platform_blackout(c, 0), 0);
  EXPECT_EQ(platform_blackout(c, ms / 2), ms / 2);   // never more than the window
  EXPECT_EQ(platform_blackout(c, 1 * ms), 1 * ms);
  EXPECT_EQ(platform_blackout(c, 5 * ms), 2 * ms);   // the next longer window's maximum
  EXPECT_EQ(platform_blackout(c, 10 * ms), 2 * ms);
  EXPECT_EQ(platform_blackout(c, 20 * ms), 4 * ms);  // 2 × S(10 ms)
  EXPECT_EQ(platform_blackout(c, 25 * ms), 6 * ms);  // 2 × S(10 ms) + S(5 ms)
  EXPECT_EQ(platform_blackout({}, 25 * ms), 0);
  // 3 ms of execution: 3 + S(3) = 5, 3 + S(5) = 5.
  EXPECT_EQ(platform_stretch(c, 3 * ms, 100 * ms), 5 * ms);
  EXPECT_EQ(platform_stretch({}, 3 * ms, 100 * ms), 3 * ms);
  // A platform that never leaves the CPU: no end.
  EXPECT_FALSE(platform_stretch({{1 * ms, 1 * ms}}, 3 * ms, 100 * ms).has_value());
}

TEST(Platform, BoundCoversTheSimulatedPlatformAndIsBeatenWithoutTheCurve) {
  const Model with_curve = chain_model(true, std::nullopt);
  const Model without = chain_model(false, std::nullopt);
  Duration worst = 0;
  for (Duration phase = 0; phase < 5 * ms; phase += ms / 4) {
    sim::SimOptions so;
    so.duration = 200 * ms;
    so.policy = Policy::Picas;
    so.keep_samples = false;
    const sim::SimResult r = sim::simulate(chain_model(false, phase), so);
    ASSERT_NE(r.chain("c"), nullptr);
    worst = std::max(worst, r.chain("c")->wcrt);
  }
  EXPECT_GE(worst, 5 * ms);  // the platform really delays the chain
  for (const char* a : {"picas-st", "fp-mt", "edf-mt"}) {
    const ChainBound* b = find_analysis(a)->analyze(with_curve).find("c");
    ASSERT_TRUE(b && b->bounded) << a << ": " << (b ? b->reason : "");
    EXPECT_GE(b->wcrt_bound, worst) << a;
    // By hand (start form): the last callback starts by x − 1 = 2 ms (S(x) + 1 <= x first at
    // x = 2 ms + 1) and then takes platform_stretch(3 ms) = 5 ms.
    if (std::string(a) == "picas-st") EXPECT_EQ(b->wcrt_bound, 7 * ms);
    const ChainBound* nb = find_analysis(a)->analyze(without).find("c");
    ASSERT_TRUE(nb && nb->bounded) << a;
    EXPECT_LT(nb->wcrt_bound, worst) << a;  // the papers' model does not hold on this platform
  }
}

namespace {
// cros-rt across two hosts: the chain's publisher on host A, its subscriber on host B (one core
// each), a remote hop of 1 ms between them; each host's platform takes 1 ms every 10 ms.
const char* kTwoHosts = R"(
hosts:
  - name: A
    cores: 1
%CURVE%
  - name: B
    cores: 1
%CURVE%
executors:
  - {name: pub_x, host: A, process: pub, policy: picas, priority: 50, threads: [{name: t0, cores: [0], priority: 50}]}
  - {name: sub_x, host: B, process: sub, policy: picas, priority: 50, threads: [{name: t0, cores: [0], priority: 50}]}
%PLATFORM%
nodes:
  - {name: pn, executor: pub_x}
  - {name: sn, executor: sub_x}
%PNODE%
topics:
  - {name: data, size: 64B}
callbacks:
  - {name: pub, kind: timer, node: pn, period: 50ms, wcet: 2ms, priority: 1, publishes: [data]}
  - {name: sub, kind: subscription, node: sn, topic: data, wcet: 2ms, priority: 2}
%PCB%
chains:
  - {name: c, callbacks: [pub, sub], priority: 1}
communication:
  remote: {fixed: 1ms}
)";

// The analysed model (with or without both hosts' curve of 1 ms every 10 ms, at any phase) or
// the simulated one (a FIFO 99 timer of 1 ms every 10 ms per host, phases pa on A and pb on B).
Model two_host_model(bool curve, std::optional<std::pair<Duration, Duration>> phases) {
  std::string s = kTwoHosts;
  for (int k = 0; k < 2; ++k)
    s = fill(s, "%CURVE%",
             curve ? "    blackout: [{window: 1ms, max: 1ms}, {window: 10ms, max: 1ms}, {window: 11ms, max: 2ms},"
                     " {window: 20ms, max: 2ms}, {window: 21ms, max: 3ms}]"
                   : "");
  std::string px, pn, pc;
  if (phases) {
    for (const auto& [h, ph] : {std::pair<std::string, Duration>{"A", phases->first}, {"B", phases->second}}) {
      px += "  - {name: plat_" + h + ", host: " + h + ", process: plat_" + h +
            ", policy: picas, priority: 99, threads: [{name: t0, cores: [0], priority: 99}]}\n";
      pn += "  - {name: plat_n_" + h + ", executor: plat_" + h + "}\n";
      pc += "  - {name: plat_cb_" + h + ", kind: timer, node: plat_n_" + h +
            ", period: 10ms, wcet: 1ms, priority: 1, offset: " + std::to_string(ph) + "ns}\n";
    }
  }
  s = fill(s, "%PLATFORM%", px);
  s = fill(s, "%PNODE%", pn);
  s = fill(s, "%PCB%", pc);
  return load_model_from_string(s, "two_hosts.yaml");
}
}  // namespace

TEST(Platform, CrosRtChargesTheCurveOfTheHostsTheChainRunsOn) {
  // By hand: C = 2 + 1 (hop) + 2 = 5 ms, no other chain (I = B = 0). The chain runs on core 0
  // of A and of B and its hop (with a cost) on every core of both: n_A = n_B = 1, so
  // P(w) = S_A(w) + S_B(w) = 2 S(w).
  //   w = 5 ms:  S(5 ms) = 1 ms (the 10 ms window's maximum)  -> w = 5 + 2 = 7 ms
  //   w = 7 ms:  S(7 ms) = 1 ms                              -> w = 7 ms, the fixed point
  // 7 ms <= T = 50 ms: R = 7 ms. The worst simulated: each callback losing a whole blackout of
  // its host, 2 + 1 + 1 + 2 + 1 = 7 ms (tight). Without the curve: 5 ms, beaten.
  Duration worst = 0;
  for (Duration pa = 0; pa < 10 * ms; pa += ms / 2)
    for (Duration pb = 0; pb < 10 * ms; pb += ms / 2) {
      sim::SimOptions so;
      so.duration = 200 * ms;
      so.policy = Policy::Picas;
      so.keep_samples = false;
      const sim::SimResult r = sim::simulate(two_host_model(false, std::pair{pa, pb}), so);
      ASSERT_NE(r.chain("c"), nullptr);
      worst = std::max(worst, r.chain("c")->wcrt);
    }
  const ResponseTimeAnalysis* cros = find_analysis("cros-rt");
  const ChainBound* b = cros->analyze(two_host_model(true, std::nullopt)).find("c");
  ASSERT_TRUE(b && b->bounded) << (b ? b->reason : "");
  EXPECT_EQ(b->wcrt_bound, 7 * ms);
  EXPECT_EQ(worst, 7 * ms);  // (the phases where both blackouts hit the chain)
  EXPECT_GE(b->wcrt_bound, worst);
  const ChainBound* nb = cros->analyze(two_host_model(false, std::nullopt)).find("c");
  ASSERT_TRUE(nb && nb->bounded);
  EXPECT_EQ(nb->wcrt_bound, 5 * ms);
  EXPECT_LT(nb->wcrt_bound, worst);  // the papers' model does not hold on this platform
  // The one-core chain of the test above: w = 3 + S(w), S(3 ms) = 2 ms (the 5 ms window) ->
  // 5 ms, S(5 ms) = 2 ms: R = 5 ms, the simulated worst (3 ms of work around one 2 ms blackout).
  const ChainBound* one = cros->analyze(chain_model(true, std::nullopt)).find("c");
  ASSERT_TRUE(one && one->bounded) << (one ? one->reason : "");
  EXPECT_EQ(one->wcrt_bound, 5 * ms);
}

TEST(Platform, AnalysesThatDoNotChargeItSaySo) {
  const Model m = chain_model(true, std::nullopt);
  for (const char* a : {"ros-default-st"}) {
    std::string why;
    EXPECT_FALSE(find_analysis(a)->applicable(m, &why)) << a;
    EXPECT_NE(why.find("blackout"), std::string::npos) << why;
    const ChainBound* b = find_analysis(a)->analyze(m).find("c");
    ASSERT_NE(b, nullptr);
    EXPECT_FALSE(b->bounded);
  }
  Model res = m;
  res.executors[0].threads[0].fifo_priority.reset();
  res.executors[0].threads[0].reservation = Reservation{5 * ms, 10 * ms};
  res.executors[0].priority.reset();
  validate(res, "reserved");
  for (const char* a : {"fp-mt", "cros-rt"}) {
    std::string why;
    EXPECT_FALSE(find_analysis(a)->applicable(res, &why)) << a;
    EXPECT_NE(why.find("reservation"), std::string::npos) << why;
  }
}
