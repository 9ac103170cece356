// A controller beside the executors (sim::Control, SimOptions::control) and the execution-time
// step (SimOptions::scale_at): activations at the times it asks for and at once after a watched
// chain's miss, the monitoring's samples it reads, reconfigurations applied to the running
// executor (new reservations, a ready-queue swap with queued and running work carried over).
#include <gtest/gtest.h>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sim/simulator.hpp"

using namespace chainrt;

namespace {

constexpr Duration ms = 1'000'000;

// Two thread classes on one core; `w` runs on the RT class until a reconfiguration moves it to
// the BE class, whose reservation the same reconfiguration shrinks.
const char* kModel = R"(
name: control
hosts: [{name: h, cores: 1}]
executors:
  - {name: e, host: h, policy: lame, thread_classes: [
      {name: rt, kind: rt, cores: [0], reservation: {budget: 8ms, period: 10ms}},
      {name: be, kind: be, cores: [0], reservation: {budget: 2ms, period: 10ms}}]}
nodes: [{name: n, executor: e}]
callbacks:
  - {name: w, kind: timer, node: n, period: 20ms, wcet: 3ms, affinity: [rt]}
chains:
  - {name: W, callbacks: [w], deadline: 4ms, class: rt, criticality: 1}
)";

struct Recorder : sim::Control {
  Duration period = 100 * ms;
  Duration move_at = -1;        // reconfigure at the first activation at or after this
  std::vector<Duration> at;     // activations
  std::vector<bool> missed;
  std::vector<sim::ExecSamples> last;
  std::uint64_t samples = 0;
  const Model* model = nullptr;
  Duration next_activation(Duration now, bool miss) const override {
    if (miss) return now;
    return (now / period + (now % period ? 1 : 0)) * period;
  }
  bool watches(std::size_t chain) const override { return chain == 0; }
  std::vector<sim::Reconfiguration> activate(Duration now, bool miss, const std::vector<sim::ExecSamples>& s) override {
    at.push_back(now);
    missed.push_back(miss);
    last = s;
    samples += s.empty() ? 0 : s[0].count;
    if (move_at < 0 || now < move_at) return {};
    move_at = -1;
    sim::Reconfiguration r;
    r.executor = 0;
    const sched::ExecutorSetup setup = sched::make_setup(*model, 0);
    r.specs = setup.specs;
    r.groups = setup.groups;
    r.specs[0].affinity = sched::AffinityMask{1} << 1;  // onto the BE thread
    r.reservations = {Reservation{8 * ms, 10 * ms}, Reservation{1 * ms, 10 * ms}};
    return {r};
  }
};

}  // namespace

TEST(SimControl, ActivatesOnItsScheduleAndReadsTheMonitoringSamples) {
  const Model m = load_model_from_string(kModel);
  Recorder c;
  c.model = &m;
  sim::SimOptions o;
  o.duration = 1000 * ms;
  o.control = &c;
  const auto r = sim::simulate(m, o);
  ASSERT_GE(c.at.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) EXPECT_EQ(c.at[k], static_cast<Duration>(k) * 100 * ms);
  // Every execution was sampled once, with its execution time.
  EXPECT_EQ(c.samples, static_cast<std::uint64_t>(r.callbacks[0].executions));
  EXPECT_EQ(c.last[0].largest[0], 3 * ms);
  EXPECT_EQ(r.chain("W")->deadline_misses, 0);
}

TEST(SimControl, AReconfigurationMovesWorkAndReservationsAndAMissWakesTheControl) {
  const Model m = load_model_from_string(kModel);
  Recorder c;
  c.model = &m;
  c.move_at = 200 * ms;
  sim::SimOptions o;
  o.duration = 1000 * ms;
  o.control = &c;
  o.trace = true;
  const auto r = sim::simulate(m, o);
  // Before 200 ms on the RT thread (3 ms), after on the BE thread at 1 ms per 10 ms: late.
  for (const auto& e : r.trace) EXPECT_EQ(e.thread, e.start < 200 * ms ? 0u : 1u) << e.start;
  EXPECT_GT(r.chain("W")->deadline_misses, 0);
  EXPECT_GE(r.chain("W")->wcrt, 20 * ms);
  // The first late completion woke the control at once, off its 100 ms schedule.
  bool off_schedule = false;
  for (std::size_t k = 0; k < c.at.size(); ++k) off_schedule |= c.missed[k] && c.at[k] % (100 * ms) != 0;
  EXPECT_TRUE(off_schedule);
}

TEST(SimControl, ExecutionTimesGrowFromTheStep) {
  const Model m = load_model_from_string(kModel);
  sim::SimOptions o;
  o.duration = 200 * ms;
  o.scale_at = 100 * ms;
  o.scale_num = 5;
  o.scale_den = 3;
  o.keep_samples = true;
  const auto r = sim::simulate(m, o);
  const auto* w = r.chain("W");
  ASSERT_EQ(w->samples.size(), w->releases.size());
  for (std::size_t i = 0; i < w->samples.size(); ++i)
    EXPECT_EQ(w->samples[i], w->releases[i] < 100 * ms ? 3 * ms : 5 * ms) << w->releases[i];
}
