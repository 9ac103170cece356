// The platform term: a host's blackout curve (model Host::blackout) as S(Δ) and the stretch of
// a callback (analysis/supply.hpp), charged by edf-mt, fp-mt and picas-st; a bound that holds
// with the platform simulated as a SCHED_FIFO 99 thread, and is beaten without the curve.
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

TEST(Platform, AnalysesThatDoNotChargeItSaySo) {
  const Model m = chain_model(true, std::nullopt);
  for (const char* a : {"cros-rt", "ros-default-st"}) {
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
  std::string why;
  EXPECT_FALSE(find_analysis("fp-mt")->applicable(res, &why));
  EXPECT_NE(why.find("reservation"), std::string::npos) << why;
}
