// The `sag` analysis: chain latencies of a single-threaded ready-queue executor with
// guaranteed timer phases from the schedule-abstraction graph of its jobs (sag.hpp,
// sag_model.hpp). Per chain instance: the latest finish of its leaf jobs over every schedule,
// minus its release; per chain: the largest over the instances of the two analysed
// hyperperiods, which hold every instance of the run (sag_model.hpp, the steady state).
#include <algorithm>
#include <limits>

#include "chainrt/analysis/analysis.hpp"
#include "sag_model.hpp"

namespace chainrt::detail {

namespace {

using namespace sag;

AnalysisResult declined(const Model& m, const std::string& why) {
  AnalysisResult r;
  r.analysis = "sag";
  for (const Chain& c : m.chains) {
    ChainBound b;
    b.chain = c.name;
    b.deadline = c.deadline;
    b.reason = "analysis not applicable: " + why;
    r.chains.push_back(std::move(b));
  }
  return r;
}

// The chain's bounds from its instances: worst = max over instances of (latest finish of its
// last leaf − release); best = min over instances of (latest of the leaves' earliest finishes −
// release), which no schedule beats.
ChainBound chain_bound(const Model& m, std::size_t chain, const ModelJobs& mj, const Result& r) {
  const Chain& c = m.chains[chain];
  ChainBound b;
  b.chain = c.name;
  b.deadline = c.deadline;
  Duration worst = -1, best = std::numeric_limits<Duration>::max();
  for (const ChainInstance& in : mj.instances) {
    if (in.chain != chain) continue;
    if (in.leaves.empty()) {
      b.reason = "an instance of the chain reaches none of its last callbacks (a hop the model does not publish)";
      return b;
    }
    Duration hi = 0, lo = 0;
    for (std::size_t j : in.leaves) {
      hi = std::max(hi, r.finish[j].hi - in.release);
      lo = std::max(lo, r.finish[j].lo - in.release);
    }
    worst = std::max(worst, hi);
    best = std::min(best, lo);
  }
  if (worst < 0) {
    b.reason = "the chain has no instance in the analysed hyperperiod";
    return b;
  }
  b.bounded = true;
  b.wcrt_bound = worst;
  b.bcrt_bound = best;
  b.slack = c.deadline - worst;
  b.schedulable = c.deadline <= 0 || worst <= c.deadline;
  if (!b.schedulable) b.reason = "worst-case latency " + std::to_string(worst) + " ns exceeds the deadline";
  return b;
}

class Sag : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "sag"; }
  std::string summary() const override {
    return "schedule-abstraction graph (Nasri & Brandenburg RTSS 2017; precedence: Nasri, Nelissen & Brandenburg "
           "ECRTS 2019): exact non-preemptive job-level fixed priority, one thread, guaranteed timer phases";
  }
  Policy policy() const override { return Policy::Edf; }
  bool single_threaded() const override { return true; }
  bool applicable(const Model& m, std::string* why) const override { return sag_covers(m, why); }
  AnalysisResult analyze(const Model& m) const override {
    std::string why;
    const auto mj = build_jobs(m, 2, &why);  // the start and the steady state (idle_cut)
    if (!mj) return declined(m, why);
    const Result r = explore(mj->jobs);
    if (!r.complete) return declined(m, r.why);
    why = outside_job_model(m, *mj, r);
    if (!why.empty()) return declined(m, why);
    AnalysisResult out;
    out.analysis = name();
    out.schedulable = !m.chains.empty();
    for (std::size_t i = 0; i < m.chains.size(); ++i) {
      out.chains.push_back(chain_bound(m, i, *mj, r));
      out.schedulable = out.schedulable && out.chains.back().schedulable;
    }
    return out;
  }
};

}  // namespace

const ResponseTimeAnalysis& sag_analysis() {
  static const Sag instance;
  return instance;
}

}  // namespace chainrt::detail
