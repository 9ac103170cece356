// The `sag` analysis: chain latencies of a single-threaded ready-queue executor with
// guaranteed timer phases from the schedule-abstraction graph of its jobs (sag.hpp,
// sag_model.hpp). Per chain instance: the latest finish of its leaf jobs over every schedule,
// minus its release; per chain: the largest over the instances of the two analysed
// hyperperiods, which hold every instance of the run (sag_model.hpp, the steady state).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/witness.hpp"
#include "chainrt/model/facts.hpp"
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
  if (!mj.chain_declined[chain].empty()) {
    b.reason = "analysis not applicable to this chain: " + mj.chain_declined[chain];
    return b;
  }
  Duration worst = -1, best = std::numeric_limits<Duration>::max();
  for (const ChainInstance& in : mj.instances) {
    if (in.chain != chain || in.cut) continue;
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

// Partitions (several executors of one thread each: placement, sag_model.cpp): the graph of each
// executor's jobs alone, a job fed from another executor released within its predecessor's
// finish interval plus the edge's delay (the holistic scheme of Tindell & Clark applied to the
// graph; the ECRTS 2019 edges stay within an executor); on cores shared by SCHED_FIFO
// priority, the jobs of the threads above (placement's list) as preemption (sag.hpp, Preemption) with their
// start and finish intervals of the last round. First estimate: no interference; each round
// explores every executor (those above first) with the intervals of the last and keeps the
// hull of old and new, so the intervals only grow; at the fixed point every release window
// holds the releases of every run, every preemption window the runs of the jobs above, and
// the graphs hold every schedule. One executor: one exploration.
constexpr int kMaxRounds = 64;

// The graph's limits: the defaults, or smaller where jobs follow a fusion set of different
// periods (sag_model.hpp): every input job's possible fusion widens the intervals, and where
// many such jobs meet the graph may grow past any useful size (the reference system's sets on
// partitioned executors, every timer released at once); it then declines within a fraction of
// a second instead of ten, and the other analyses answer. The reference system on one thread
// takes about 153,000 states; the state count decides, the time is a safety net. Several
// threads of one executor branch on every pairing of such jobs on the cores: the reference
// system's two-thread executor outgrows any limit within the first jobs, so there the limit is
// 100,000 states (0.4 s here instead of 1 s).
Limits limits_for(const ModelJobs& mj) {
  Limits l;
  if (std::find(mj.maybe.begin(), mj.maybe.end(), true) != mj.maybe.end()) {
    l.max_states = mj.cores > 1 ? 100'000 : 250'000;
    l.max_seconds = 5.0;
  }
  return l;
}

// One thread's graph (explore); where it outgrows the limits on one core that no other thread
// preempts, with its background jobs out of it (sag.hpp, explore_background). `background`: a
// round before took that form, which every later round keeps; set when it is taken.
Result explore_thread(const std::vector<Job>& jobs, const Limits& limits, std::size_t cores, const Preemption* above,
                      bool& background) {
  Result r;
  if (!background) r = explore(jobs, limits, cores, above);
  if (cores == 1 && (above == nullptr || above->empty()) && (background || !r.complete)) {
    std::size_t n = 0;
    Result b = explore_background(jobs, limits, &n);
    if (n > 0) {
      background = true;
      return b;
    }
  }
  return r;
}

// The names of the fusion sets of different periods, for a reason ("" when none).
std::string loose_sets(const Model& m, const ModelJobs& mj) {
  std::set<std::string> names;
  for (std::size_t j = 0; j < mj.jobs.size(); ++j)
    if (mj.maybe[j])
      for (const Pred& p : mj.jobs[j].preds)
        if (!mj.maybe[p.job]) names.insert(m.callbacks[mj.callback[p.job]].name);
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

// The holistic iteration over several executors (the comment above), one executor per step.
// On a shared core, the jobs of a thread above executor k released over an edge without delay
// by one job of k's thread or of a thread below it are counted as a group (sag.hpp,
// Preemption::Above::group): released only when that job finishes, never while k has a job
// pending or running, and one group at a time (checked by SagSoundness.SharedCoreByPriority...).
// (Folding such jobs into their predecessor's cost in k's graph is not sound: k's thread may
// select its next job at the predecessor's finish, before they run, and they then preempt it.)
class Holistic {
 public:
  explicit Holistic(const ModelJobs& mj) : mj_(mj), members_(mj.partitions.size()) {
    const std::size_t n = mj.jobs.size();
    all_.complete = true;
    all_.start.resize(n);
    all_.finish.resize(n);
    for (std::size_t j = 0; j < n; ++j) {  // first estimate: no interference (predecessors come first)
      Interval ready = mj.jobs[j].release;
      for (const Pred& p : mj.jobs[j].preds) {
        ready.lo = std::max(ready.lo, all_.finish[p.job].lo + p.delay.lo);
        ready.hi = std::max(ready.hi, all_.finish[p.job].hi + p.delay.hi);
      }
      all_.start[j] = ready;
      all_.finish[j] = {ready.lo + mj.jobs[j].cost.lo, ready.hi + mj.jobs[j].cost.hi};
      members_[position(j)].push_back(j);
    }
  }

  // `m`: when given, a round whose intervals already leave the job model (outside_job_model)
  // ends the iteration: the intervals only grow, so the fixed point would leave it too.
  Result run(const Limits& limits, const Model* m) {
    std::vector<std::size_t> order(mj_.partitions.size());  // fewer threads above first
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return mj_.above[a].size() < mj_.above[b].size(); });
    for (int round = 0; round < kMaxRounds; ++round) {
      bool moved = false;
      for (std::size_t k : order)
        if (Result r = step(k, limits, moved); !r.complete) return r;
      if (!moved || (m && !outside_job_model(*m, mj_, all_).empty())) return all_;
    }
    all_.complete = false;
    all_.why = "the executors' intervals did not settle in " + std::to_string(kMaxRounds) + " rounds";
    return all_;
  }

 private:
  std::size_t position(std::size_t job) const { return partition_position(mj_, job); }
  // The predecessor of job g when it is its only one, over an edge without delay (else kNoJob).
  std::size_t only_pred(std::size_t g) const {
    const auto& ps = mj_.jobs[g].preds;
    return ps.size() == 1 && ps[0].delay.hi == 0 ? ps[0].job : kNoJob;
  }
  // The window of job g of a thread above k, seen from k's thread.
  Preemption::Above window(std::size_t k, std::size_t g) const {
    const std::size_t p = only_pred(g);
    // released by a job of k's thread or of one below it, all on one core (on several, a thread
    // below may run beside a busy thread above, whose group then waits)
    std::size_t group = Preemption::kNoGroup;
    if (p != kNoJob && mj_.one_core[k] && mj_.one_core[position(p)]) {
      const auto& over = mj_.above[position(p)];
      if (position(p) == k || std::find(over.begin(), over.end(), k) != over.end()) group = p;
    }
    return {all_.start[g], all_.finish[g], mj_.jobs[g].cost.hi, group};
  }
  // The windows of the jobs of the threads above k.
  std::vector<Preemption::Above> above_windows(std::size_t k) const {
    std::vector<Preemption::Above> w;
    for (std::size_t a : mj_.above[k])
      for (std::size_t g : members_[a]) w.push_back(window(k, g));
    return w;
  }
  void widen(std::size_t g, Interval start, Interval finish, bool& moved) {  // the hull: intervals only grow
    const Interval s{std::min(all_.start[g].lo, start.lo), std::max(all_.start[g].hi, start.hi)};
    const Interval f{std::min(all_.finish[g].lo, finish.lo), std::max(all_.finish[g].hi, finish.hi)};
    moved = moved || s.lo != all_.start[g].lo || s.hi != all_.start[g].hi || f.lo != all_.finish[g].lo ||
            f.hi != all_.finish[g].hi;
    all_.start[g] = s;
    all_.finish[g] = f;
  }
  // Executor k explored with the intervals of the others as they stand.
  Result step(std::size_t k, const Limits& limits, bool& moved) {
    const auto& of = members_[k];
    std::unordered_map<std::size_t, std::size_t> local;
    for (std::size_t i = 0; i < of.size(); ++i) local[of[i]] = i;
    std::vector<Job> jobs;
    for (std::size_t g : of) {
      Job job = mj_.jobs[g];
      job.preds.clear();
      for (const Pred& p : mj_.jobs[g].preds) {
        if (mj_.partition[p.job] == mj_.partition[g]) {
          job.preds.push_back(Pred{local.at(p.job), p.delay});
        } else {
          job.seen_late = true;
          job.release.lo = std::max(job.release.lo, all_.finish[p.job].lo + p.delay.lo);
          job.release.hi = std::max(job.release.hi, all_.finish[p.job].hi + p.delay.hi);
        }
      }
      jobs.push_back(std::move(job));
    }
    const Preemption above(above_windows(k));
    bool background = background_[k];
    const Result r = explore_thread(jobs, limits, 1, &above, background);
    background_[k] = background;
    all_.states += r.states;
    all_.edges += r.edges;
    if (!r.complete) return r;
    for (std::size_t i = 0; i < of.size(); ++i) widen(of[i], r.start[i], r.finish[i], moved);
    return r;
  }

  const ModelJobs& mj_;
  Result all_;
  std::vector<std::vector<std::size_t>> members_;  // per executor position: its jobs
  std::vector<bool> background_ = std::vector<bool>(members_.size(), false);  // explored with its background jobs out
};

// `m`: the model, to end a holistic iteration early that leaves the job model (Holistic::run).
Result explore_partitions(const ModelJobs& mj, const Model* m = nullptr) {
  const Limits limits = limits_for(mj);
  bool background = false;
  if (mj.partitions.size() <= 1) return explore_thread(mj.jobs, limits, mj.cores, nullptr, background);
  return Holistic(mj).run(limits, m);
}

// A span of time for a user: ns up to days.
std::string human(Duration ns) {
  char buf[64];
  const double v = static_cast<double>(ns);
  if (v >= 86'400e9) std::snprintf(buf, sizeof buf, "%.1f days", v / 86'400e9);
  else if (v >= 3'600e9) std::snprintf(buf, sizeof buf, "%.1f h", v / 3'600e9);
  else if (v >= 60e9) std::snprintf(buf, sizeof buf, "%.1f min", v / 60e9);
  else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.1f s", v / 1e9);
  else std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
  return buf;
}

// The timer job a job descends from (follows its one predecessor up).
std::size_t root_job(const ModelJobs& mj, std::size_t j) {
  while (!mj.jobs[j].preds.empty()) j = mj.jobs[j].preds.front().job;
  return j;
}

// Where a chain misses on a system with drifting timers: the graph again with the drifting
// timers' phase narrowed to each of kWindows windows of [0, H_ref); the windows in which the
// chain's worst case exceeds its deadline (a window the graph cannot settle counts as one), the
// drifting callbacks that may hold the thread when its worst instance there is released, and
// when the phase, drifting from the model's offsets, first enters such a window.
constexpr int kWindows = 32;

std::string drift_scenario(const Model& m, std::size_t chain, const ModelJobs& full) {
  const Duration H = full.reference_hyperperiod;
  const Duration deadline = m.chains[chain].deadline;
  std::vector<bool> bad(kWindows, false);
  std::set<std::string> blockers;
  Duration worst = -1;
  for (int w = 0; w < kWindows; ++w) {
    const PhaseWindow pw{H * w / kWindows, H * (w + 1) / kWindows, false};
    std::string why;
    const auto mj = build_jobs(m, 2, &why, pw);
    if (!mj) return {};
    const Result r = explore_partitions(*mj, &m);
    if (!r.complete || !outside_job_model(m, *mj, r).empty()) {
      bad[w] = true;
      continue;
    }
    const ChainBound b = chain_bound(m, chain, *mj, r);
    bad[w] = !b.bounded || b.wcrt_bound > deadline;
    if (!b.bounded || b.wcrt_bound <= worst) continue;
    worst = b.wcrt_bound;
    blockers.clear();
    for (const ChainInstance& in : mj->instances) {  // the worst instance: who may hold the thread at its release
      if (in.chain != chain) continue;
      Duration hi = 0;
      for (std::size_t j : in.leaves) hi = std::max(hi, r.finish[j].hi - in.release);
      if (hi != worst) continue;
      for (std::size_t j = 0; j < mj->jobs.size(); ++j)
        if (mj->drifting[mj->callback[root_job(*mj, j)]] && r.start[j].lo <= in.release && r.finish[j].hi > in.release)
          blockers.insert(m.callbacks[mj->callback[j]].name);
      break;
    }
  }
  std::string names;
  for (const std::string& b : blockers) names += (names.empty() ? "'" : ", '") + b + "'";
  std::string drifting, reference;
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    if (!m.callbacks[c].is_timer()) continue;
    std::string& list = full.drifting[c] ? drifting : reference;
    list += (list.empty() ? "'" : ", '") + m.callbacks[c].name + "'";
  }
  std::string out = "misses when " + drifting + " is released at a phase in the " + human(H) + " release pattern of " +
                    reference + " in";
  for (int w = 0; w < kWindows;) {
    if (!bad[w]) { ++w; continue; }
    int e = w;
    while (e < kWindows && bad[e]) ++e;
    out += " [" + human(H * w / kWindows) + ", " + human(H * e / kWindows) + ")";
    w = e;
  }
  if (!names.empty()) out += "; there " + names + " may hold the thread (non-preemptive) when an instance is released";
  // when the phase of each drifting timer first reaches a bad window, and its cycle
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    if (!full.drifting[c]) continue;
    const Callback& cb = m.callbacks[c];
    const Duration rounded = (cb.period + H / 2) / H * H, step = cb.period - rounded;
    const Duration psi0 = ((cb.offset % H) + H) % H;
    std::optional<Duration> first;
    for (int w = 0; w < kWindows; ++w) {
      if (!bad[w]) continue;
      const Duration lo = H * w / kWindows, hi = H * (w + 1) / kWindows - 1;
      Duration periods = 0;
      if (psi0 >= lo && psi0 <= hi) periods = 0;
      else if (step > 0) periods = (((lo - psi0) % H + H) % H + step - 1) / step;
      else periods = (((psi0 - hi) % H + H) % H - step - 1) / -step;
      if (!first || periods < *first) first = periods;
    }
    const Duration cycle = H / std::gcd(std::abs(step), H);
    out += "; '" + cb.name + "' drifts by " + std::to_string(step) + " ns every " + human(cb.period) +
           (first ? ", first reaching it after " + human(*first * cb.period) : std::string()) +
           " (phase cycle " + human(cycle * cb.period) + "; with period " + std::to_string(rounded) +
           " ns, a multiple of " + std::to_string(H) + " ns, its phase would hold)";
  }
  return out + "; other remedies: periods meant to be commensurate given exactly as rates or fractions (period: 30 Hz, "
               "1/30 s: the release grid keeps them aligned), a shorter blocking callback, or the drifting callbacks on "
               "another thread";
}

class Sag : public ResponseTimeAnalysis {
 public:
  std::string name() const override { return "sag"; }
  std::string summary() const override {
    return "schedule-abstraction graph (Nasri & Brandenburg RTSS 2017; precedence: Nasri, Nelissen & Brandenburg "
           "ECRTS 2019): exact non-preemptive job-level fixed priority, one thread per executor (executors on their own cores, "
           "or on cores shared by SCHED_FIFO priority), guaranteed timer phases or one drifting timer";
  }
  Policy policy() const override { return Policy::Edf; }
  bool bounds_policy(Policy p) const override { return job_level_fixed_priority(p); }
  bool single_threaded() const override { return true; }
  bool applicable(const Model& m, std::string* why) const override { return sag_covers(m, why); }
  AnalysisResult analyze(const Model& m) const override {
    std::string why;
    const auto mj = build_jobs(m, 2, &why);  // the start and the steady state (idle_cut)
    if (!mj) return declined(m, why);
    const Result r = explore_partitions(*mj, &m);
    if (!r.complete) {
      const std::string sets = loose_sets(m, *mj);
      return declined(m, sets.empty() ? r.why : r.why + " with every input of a fusion set of different periods possibly "
                                                        "completing it (the inputs " + sets + ")");
    }
    why = outside_job_model(m, *mj, r);
    if (!why.empty()) return declined(m, why);
    AnalysisResult out;
    out.analysis = name();
    out.schedulable = !m.chains.empty();
    for (std::size_t i = 0; i < m.chains.size(); ++i) {
      out.chains.push_back(chain_bound(m, i, *mj, r));
      ChainBound& b = out.chains.back();
      if (b.bounded && !b.schedulable && !mj->drifting.empty())
        if (std::string sc = drift_scenario(m, i, *mj); !sc.empty()) b.reason += "; " + sc;
      out.schedulable = out.schedulable && b.schedulable;
    }
    return out;
  }
};

}  // namespace

}  // namespace chainrt::detail

namespace chainrt {

std::vector<ScheduleWitness> sag_witnesses(const Model& model) {
  using namespace detail::sag;
  Model storage;  // the schedules of the charged model, as the analysis bounds it (facts.hpp)
  const Model& m = charge_dispatch_overhead(model, storage);
  std::string why;
  const auto mj = build_jobs(m, 2, &why);
  if (!mj || mj->partitions.size() != 1 || mj->cores != 1 || !mj->drifting.empty()) return {};
  std::vector<ScheduleWitness> out;
  // per chain sag bounds within its model: the leaf job whose latest finish is the bound
  auto targets = [&](const Result& r) {
    std::vector<std::size_t> ts;
    if (!outside_job_model(m, *mj, r).empty()) return ts;
    for (std::size_t i = 0; i < m.chains.size(); ++i) {
      const ChainBound b = detail::chain_bound(m, i, *mj, r);
      if (!b.bounded) continue;
      std::size_t target = kNoJob;
      for (const ChainInstance& in : mj->instances)
        if (in.chain == i && !in.cut)
          for (std::size_t j : in.leaves)
            if (target == kNoJob && r.finish[j].hi - in.release == b.wcrt_bound) target = j;
      if (target == kNoJob) continue;
      out.push_back(ScheduleWitness{b.chain, b.wcrt_bound, 0, {}, {}});
      ts.push_back(target);
    }
    return ts;
  };
  const auto ws = witnesses(mj->jobs, targets, detail::limits_for(*mj));
  if (ws.size() != out.size()) return {};
  std::vector<ScheduleWitness> done;
  for (std::size_t k = 0; k < ws.size(); ++k) {
    if (!ws[k]) continue;
    ScheduleWitness& sw = out[k];
    sw.until = ws[k]->finish + 1;
    for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
      const auto& js = mj->of_callback[c];
      // a callback after a loose fusion set: its k-th execution is not its k-th job (left to the run)
      if (js.empty() || std::any_of(js.begin(), js.end(), [&](std::size_t j) { return mj->maybe[j]; })) continue;
      auto& exec = sw.exec[m.callbacks[c].name];
      for (std::size_t j : js) exec.push_back(ws[k]->cost[j]);
      if (!m.callbacks[c].is_timer()) continue;
      auto& delay = sw.release_delay[m.callbacks[c].name];
      for (std::size_t j : js) delay.push_back(ws[k]->release[j] - mj->root_release[j]);
    }
    done.push_back(std::move(sw));
  }
  return done;
}

}  // namespace chainrt

namespace chainrt::detail {

const ResponseTimeAnalysis& sag_analysis() {
  static const Sag instance;
  return instance;
}

}  // namespace chainrt::detail
