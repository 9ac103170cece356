// Every fixed-point search of the analyses cross-checked against a brute-force scan
// (fixed_point.hpp): this executable links chainrt_analysis_checked, the analysis library
// compiled with CHAINRT_CHECK_FIXED_POINT, and runs every analysis on generated systems and on
// the reference system with guaranteed phases, scaled down so that the scans are exhaustive
// (a search whose result disagrees with the scan aborts the test). As the response-time-analysis
// crate's fixed_point_search checks itself with debug_assert_eq! in debug builds.
#include <gtest/gtest.h>

#include <string>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

// Every duration of the model divided by `by` (at least 1 ns where it was positive); the
// validation limits (periods >= 10 us) are kept by the callers' choice of `by`.
Model scaled(Model m, Duration by) {
  auto s = [by](Duration d) { return d > 0 ? std::max<Duration>(1, d / by) : d; };
  for (auto& cb : m.callbacks) {
    cb.wcet = s(cb.wcet);
    if (cb.bcet) cb.bcet = std::min(cb.wcet, s(*cb.bcet));
    cb.period = s(cb.period);
    cb.offset = cb.period > 0 ? s(cb.offset) % cb.period : 0;
    cb.jitter = cb.period > 0 ? std::min(cb.period - 1, s(cb.jitter)) : 0;
  }
  for (auto& e : m.executors) e.dispatch_overhead = s(e.dispatch_overhead);
  for (auto& c : m.chains) {
    c.period = s(c.period);
    c.deadline = s(c.deadline);
  }
  validate(m, m.name);
  return m;
}

void analyse_all(const Model& m, const std::string& what) {
  for (const auto* a : analyses()) {
    std::string why;
    if (!a->applicable(m, &why)) continue;
    const AnalysisResult r = a->analyze(m);  // aborts on a search that disagrees with its scan
    EXPECT_EQ(r.schedulable, a->schedulable(m)) << a->name() << " " << what;
  }
}

}  // namespace

TEST(CheckedFixedPoints, GeneratedSystems) {
  gen::EdfPaperParams p;
  p.n = 4;
  p.b = 3;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    p.u_norm = 0.2 + 0.1 * static_cast<double>(seed % 4);
    // periods 50-200 ms become 10-40 us: every search range fits the exhaustive scan
    const Model multi = scaled(gen::edf_paper_system(p, seed), 5'000);
    analyse_all(multi, "edf-paper seed " + std::to_string(seed));
    analyse_all(scaled(gen::partition_single_threaded(gen::edf_paper_system(p, seed), Policy::Picas), 5'000),
                "partitioned seed " + std::to_string(seed));
  }
}

TEST(CheckedFixedPoints, ReferenceSystemWithGuaranteedPhases) {
  Model m = load_model(std::string(CHAINRT_SOURCE_DIR) + "/examples/autoware_reference.yaml");
  for (auto& e : m.executors) e.policy = Policy::Picas;
  for (auto& cb : m.callbacks)
    if (cb.is_timer()) cb.phase = TimerPhase::Guaranteed;
  // periods 25-120 ms become 12.5-60 us
  analyse_all(scaled(m, 2'000), "reference system (picas)");
  for (auto& e : m.executors) e.policy = Policy::Edf;
  analyse_all(scaled(m, 2'000), "reference system (edf)");
}
