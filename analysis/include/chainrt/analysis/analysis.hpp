// chainrt analysis interface: one `analyze(model) -> result` shape for every response-time
// analysis, and a registry of analyses by name (`edf-mt`, `fp-mt`, `picas-st`, `cros-rt`,
// `ros-default-st`). Results never modify the model; all times are integer nanoseconds and no
// verdict depends on floating point.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

struct ChainBound {
  std::string chain;
  bool bounded = false;                  // false: no finite bound; `reason` says why
  Duration wcrt_bound = 0;               // valid when bounded
  std::optional<Duration> bcrt_bound;    // where the analysis gives a best case
  Duration deadline = 0;
  Duration slack = 0;                    // deadline - wcrt_bound (negative when late)
  bool schedulable = false;              // bounded && wcrt_bound <= deadline
  std::string reason;                    // empty when schedulable
};

struct AnalysisResult {
  std::string analysis;
  bool schedulable = false;              // every analysed chain schedulable
  std::vector<ChainBound> chains;        // in model order
  const ChainBound* find(const std::string& chain) const {
    for (const auto& c : chains)
      if (c.chain == chain) return &c;
    return nullptr;
  }
};

// For which executors of a policy an analysis is the one chosen by default.
enum class DefaultFor : unsigned char { None = 0, SingleThreaded = 1, MultiThreaded = 2, Any = 3 };

class ResponseTimeAnalysis {
 public:
  virtual ~ResponseTimeAnalysis() = default;
  virtual std::string name() const = 0;         // registry key, e.g. "edf-mt"
  virtual std::string summary() const = 0;      // one line: paper, section, theorem
  // The executor policy whose behaviour this analysis bounds (what the simulator must run to
  // check it for soundness).
  virtual Policy policy() const = 0;
  // Whether its bounds hold for executors running `p`: policy() alone by default; an analysis
  // whose model covers several policies (its applicable() checks which) says so.
  virtual bool bounds_policy(Policy p) const { return p == policy(); }
  // For which executors of policy `p` this is the analysis chosen by default (`chainrt analyze`
  // without --analysis, default_analysis()): the one place that says which analysis goes with
  // which policy; at most one analysis per policy and thread count (a test checks it).
  virtual DefaultFor default_for(Policy) const { return DefaultFor::None; }
  // Whether it bounds single-threaded executors only (the schedulability experiments give it
  // the chains partitioned onto single-threaded executors, batch.hpp).
  virtual bool single_threaded() const { return false; }
  // Whether the analysis applies to this model's configuration; `why` says what does not fit.
  virtual bool applicable(const Model& model, std::string* why) const = 0;
  virtual AnalysisResult analyze(const Model& model) const = 0;
  // The verdict alone (schedulability experiments): the same answer as analyze(model).schedulable,
  // possibly faster (bounds searched only up to the deadlines, the first chain without one
  // ends the analysis). The default runs analyze().
  virtual bool schedulable(const Model& model) const { return analyze(model).schedulable; }
};

// Registry of the shipped analyses.
std::vector<const ResponseTimeAnalysis*> analyses();
const ResponseTimeAnalysis* find_analysis(const std::string& name);  // nullptr when unknown

// The analysis chosen by default for executors of `policy` (multi-threaded ones when `multi`):
// the registry analysis whose default_for() says so; nullptr with `why` when there is none.
const ResponseTimeAnalysis* default_analysis(Policy policy, bool multi, std::string* why = nullptr);
// The default analysis of the model's executors' policy (multi-threaded when any executor has
// several threads); nullptr with `why` when the executors mix policies or the policy has none.
const ResponseTimeAnalysis* default_analysis(const Model& model, std::string* why = nullptr);

}  // namespace chainrt
