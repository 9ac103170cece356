// chainrt sim: the soundness harness (see soundness.hpp): generated systems x adversarial
// simulations under each analysis's policy, compared against its bounds. Built only when the
// chainrt_analysis target exists (sim/CMakeLists.txt).
#include "chainrt/sim/soundness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"

namespace chainrt::sim {
namespace {

struct Variant {
  const char* name;
  ExecTime exec;
  bool random_offsets;
};
constexpr Variant kVariants[] = {
    {"synchronous-wcet", ExecTime::Wcet, false},
    {"offsets-wcet", ExecTime::Wcet, true},
    {"synchronous-mix", ExecTime::Mix, false},
    {"offsets-uniform", ExecTime::Uniform, true},
};

const char* exec_name(ExecTime e) {
  switch (e) {
    case ExecTime::Wcet: return "wcet";
    case ExecTime::Bcet: return "bcet";
    case ExecTime::Uniform: return "uniform";
    case ExecTime::Mix: return "mix";
  }
  return "wcet";
}

// A system the analysis applies to, or false: the EDF-paper system (multi-threaded), its
// single-threaded partition, then CROS-RT's multi-host chains.
bool generate(const ResponseTimeAnalysis& a, const SoundnessOptions& o, std::uint64_t seed, Model& out) {
  gen::Rng rng(seed ^ 0x5eedULL);
  gen::EdfPaperParams p;
  p.m = o.m;
  p.n = o.n;
  p.b = o.b;
  p.g = o.g;
  p.alpha = o.alpha * rng.uniform01();  // fraction of callbacks in mutually exclusive groups
  p.u_norm = o.u_min + (o.u_max - o.u_min) * rng.uniform01();
  p.policy = a.policy();
  std::string why;
  Model multi = gen::edf_paper_system(p, seed);
  if (a.applicable(multi, &why)) {
    out = std::move(multi);
    return true;
  }
  Model single = gen::partition_single_threaded(multi, a.policy());
  if (a.applicable(single, &why)) {
    out = std::move(single);
    return true;
  }
  gen::UUniFastChainsParams q;
  q.total_u = p.u_norm;
  Model chains = gen::uunifast_chains_system(q, seed);
  for (auto& e : chains.executors) e.policy = a.policy();
  if (a.applicable(chains, &why)) {
    out = std::move(chains);
    return true;
  }
  return false;
}

struct SetResult {
  bool generated = false, applicable = false, schedulable = false;
  std::int64_t chains_checked = 0, simulations = 0;
  std::uint64_t executions = 0;
  double max_ratio = 0;
  std::vector<Counterexample> cx;
};

SetResult check_set(const ResponseTimeAnalysis& a, const SoundnessOptions& o, int set) {
  SetResult sr;
  const std::uint64_t seed = gen::Rng::stream_seed(o.seed, static_cast<std::uint64_t>(set));
  Model model;
  if (!generate(a, o, seed, model)) return sr;
  sr.generated = true;
  // BCET mixes need a best case: give callbacks without one a quarter of their WCET.
  for (auto& cb : model.callbacks)
    if (!cb.bcet) cb.bcet = std::max<Duration>(1, cb.wcet / 4);
  std::string why;
  if (!a.applicable(model, &why)) return sr;
  sr.applicable = true;
  const AnalysisResult res = a.analyze(model);
  sr.schedulable = res.schedulable;

  Duration longest = 0;
  for (const auto& c : model.chains) longest = std::max(longest, c.period);
  for (const auto& cb : model.callbacks)
    if (cb.is_timer()) longest = std::max(longest, cb.period);
  const Duration horizon = std::max<Duration>(1'000'000'000, longest * o.horizon_periods);

  gen::Rng rng(seed ^ 0x0ff5e75ULL);
  const int variants = std::clamp(o.variants, 1, 4);
  for (int v = 0; v < variants; ++v) {
    const Variant& var = kVariants[v];
    SimOptions so;
    so.duration = horizon;
    so.seed = seed + static_cast<std::uint64_t>(v);
    so.policy = a.policy();
    so.exec = var.exec;
    so.keep_samples = false;
    for (const auto& cb : model.callbacks)
      if (cb.is_timer()) so.offsets[cb.name] = var.random_offsets ? rng.uniform_int(0, cb.period - 1) : 0;
    const SimResult r = simulate(model, so);
    ++sr.simulations;
    sr.executions += r.executions;
    for (const ChainBound& b : res.chains) {
      const ChainStats* st = r.chain(b.chain);
      if (!st || !b.bounded) continue;
      ++sr.chains_checked;
      if (b.wcrt_bound > 0) sr.max_ratio = std::max(sr.max_ratio, static_cast<double>(st->wcrt) / static_cast<double>(b.wcrt_bound));
      auto found = [&](const char* kind, Duration bound, Duration observed) {
        Counterexample c{set, seed, var.name, b.chain, kind, bound, observed, ""};
        if (!o.counterexample_dir.empty()) {
          Model saved = model;
          for (auto& cb : saved.callbacks)
            if (cb.is_timer()) cb.offset = so.offsets[cb.name];
          for (auto& e : saved.executors) e.policy = a.policy();
          std::filesystem::create_directories(o.counterexample_dir);
          c.file = o.counterexample_dir + "/" + a.name() + "-set" + std::to_string(set) + "-" + var.name + ".yaml";
          std::ofstream f(c.file);
          f << "# soundness counterexample: analysis " << a.name() << " bounds chain " << b.chain << " (" << kind
            << ") by " << bound << " ns; simulated " << observed << " ns\n"
            << "# reproduce: chainrt simulate " << c.file << " --policy " << to_string(a.policy()) << " --exec "
            << exec_name(var.exec) << " --seed " << so.seed << " --duration " << horizon << "ns --json\n"
            << save_model_to_string(saved);
        }
        sr.cx.push_back(std::move(c));
      };
      if (st->instances > 0 && st->wcrt > b.wcrt_bound) found("wcrt", b.wcrt_bound, st->wcrt);
      else if (b.bcrt_bound && st->instances > 0 && st->bcrt < *b.bcrt_bound) found("bcrt", *b.bcrt_bound, st->bcrt);
      else if (b.schedulable && st->deadline_misses > 0) found("deadline", b.deadline, st->wcrt);
    }
  }
  return sr;
}

}  // namespace

SoundnessReport run_soundness(const SoundnessOptions& o) {
  const ResponseTimeAnalysis* a = find_analysis(o.analysis);
  if (!a) throw std::invalid_argument("unknown analysis '" + o.analysis + "'");
  return run_soundness(*a, o);
}

SoundnessReport run_soundness(const ResponseTimeAnalysis& analysis, const SoundnessOptions& o) {
  const ResponseTimeAnalysis* a = &analysis;
  SoundnessReport rep;
  rep.analysis = a->name();
  std::vector<SetResult> results(static_cast<std::size_t>(std::max(0, o.sets)));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int s; (s = next.fetch_add(1)) < o.sets;) results[static_cast<std::size_t>(s)] = check_set(*a, o, s);
  };
  const int jobs = std::max(1, std::min(o.jobs, 64));
  std::vector<std::thread> pool;
  for (int j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& r : results) {
    rep.systems += r.generated;
    rep.applicable += r.applicable;
    rep.schedulable += r.schedulable;
    rep.chains_checked += r.chains_checked;
    rep.simulations += r.simulations;
    rep.executions += r.executions;
    rep.max_ratio = std::max(rep.max_ratio, r.max_ratio);
    for (auto& c : r.cx) rep.counterexamples.push_back(std::move(c));
  }
  return rep;
}

std::string report_to_json(const SoundnessReport& r) {
  auto q = [](const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o + "\"";
  };
  std::ostringstream os;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.6f", r.max_ratio);
  os << "{\"analysis\": " << q(r.analysis) << ", \"systems\": " << r.systems << ", \"applicable\": " << r.applicable
     << ", \"schedulable\": " << r.schedulable << ", \"chains_checked\": " << r.chains_checked
     << ", \"simulations\": " << r.simulations << ", \"executions\": " << r.executions << ", \"max_ratio\": " << ratio
     << ", \"counterexamples\": [";
  for (std::size_t i = 0; i < r.counterexamples.size(); ++i) {
    const auto& c = r.counterexamples[i];
    os << (i ? ", " : "") << "{\"set\": " << c.set << ", \"seed\": " << c.seed << ", \"variant\": " << q(c.variant)
       << ", \"chain\": " << q(c.chain) << ", \"kind\": " << q(c.kind) << ", \"bound_ns\": " << c.bound
       << ", \"observed_ns\": " << c.observed << ", \"file\": " << q(c.file) << "}";
  }
  os << "]}";
  return os.str();
}

}  // namespace chainrt::sim
