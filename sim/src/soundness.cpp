// chainrt sim: the soundness harness (see soundness.hpp): generated systems x adversarial
// simulations under each analysis's policy, compared against its bounds. Built only when the
// chainrt_analysis target exists (sim/CMakeLists.txt).
#include "chainrt/sim/soundness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/generator.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/sim/simulator.hpp"
#include "soundness_fusion.hpp"

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
// single-threaded partition, then CROS-RT's multi-host chains (harsh: in a random order, and a
// fifth of the systems overloaded).
bool generate(const ResponseTimeAnalysis& a, const SoundnessOptions& o, std::uint64_t seed, Model& out,
              bool* overloaded) {
  if (o.fusion) {  // joins of several timers at implicit fusion nodes (soundness_fusion.hpp)
    *overloaded = false;
    return generate_fusion_system(a, seed, out);
  }
  gen::Rng rng(seed ^ 0x5eedULL);
  gen::EdfPaperParams p;
  p.m = o.m;
  p.n = o.n;
  p.b = o.b;
  p.g = o.g;
  p.alpha = o.alpha * rng.uniform01();  // fraction of callbacks in mutually exclusive groups
  p.u_norm = o.u_min + (o.u_max - o.u_min) * rng.uniform01();
  p.policy = a.policy();
  int first = 0;
  if (o.harsh) {
    gen::Rng h(seed ^ 0x4a125bULL);
    if (h.uniform01() < 0.2) p.u_norm = 1.0 + 0.3 * h.uniform01();
    first = static_cast<int>(h.uniform_int(0, 2));
  }
  *overloaded = p.u_norm > 1.0;
  std::string why;
  Model multi = gen::edf_paper_system(p, seed);
  for (int i = 0; i < 3; ++i) {
    Model m;
    switch ((first + i) % 3) {
      case 0: m = multi; break;
      case 1: m = gen::partition_single_threaded(multi, a.policy()); break;
      default: {
        gen::UUniFastChainsParams q;
        q.total_u = p.u_norm;
        m = gen::uunifast_chains_system(q, seed);
        for (auto& e : m.executors) e.policy = a.policy();
      }
    }
    if (a.applicable(m, &why)) {
      out = std::move(m);
      return true;
    }
  }
  return false;
}

struct SetResult {
  bool generated = false, applicable = false, schedulable = false;
  std::int64_t chains_checked = 0, simulations = 0, fusion_chains_checked = 0;
  std::uint64_t executions = 0;
  double max_ratio = 0;
  int shuffled = 0, below_wcet = 0, constrained = 0, jitter = 0, overloaded = 0, tight = 0, shared_cores = 0;
  std::int64_t climb_simulations = 0;
  int climb_raised = 0;
  std::vector<Counterexample> cx;
};

// The harsh perturbations of a generated system (soundness.hpp); counts what it applied.
void perturb(Model& model, gen::Rng& rng, SetResult& sr) {
  if (rng.uniform01() < 0.5) {  // priorities that contradict each other, with ties
    sr.shuffled = 1;
    for (auto& cb : model.callbacks) cb.priority = static_cast<int>(rng.uniform_int(1, 8));
    for (auto& c : model.chains) c.priority = static_cast<int>(rng.uniform_int(1, 4));
  }
  if (rng.uniform01() < 0.5) {  // execution below WCET anywhere down to 1 ns
    sr.below_wcet = 1;
    for (auto& cb : model.callbacks) cb.bcet = rng.uniform_int(1, std::max<Duration>(1, cb.wcet));
  }
  if (rng.uniform01() < 0.3) {  // constrained deadlines
    sr.constrained = 1;
    for (auto& c : model.chains) c.deadline = rng.uniform_int(std::max<Duration>(1, c.deadline / 2), c.deadline);
  }
  if (rng.uniform01() < 0.4) {  // executors sharing cores, ordered by SCHED_FIFO priorities (PiCAS)
    bool single = !model.executors.empty();
    for (const auto& e : model.executors) single &= e.threads.size() == 1 && !e.threads[0].reservation;
    if (single) {
      sr.shared_cores = 1;
      for (auto& h : model.hosts) h.cores = static_cast<int>(rng.uniform_int(1, std::max(1, h.cores / 2)));
      for (auto& e : model.executors) {
        int cores = 1;
        for (const auto& h : model.hosts)
          if (h.name == e.host) cores = h.cores;
        Thread& t = e.threads[0];
        const double r = rng.uniform01();
        if (r < 0.2) t.cores.clear();  // unpinned
        else t.cores = {static_cast<int>(rng.uniform_int(0, cores - 1))};
        const auto p = rng.uniform_int(0, 3);
        if (p == 0) t.fifo_priority.reset();
        else t.fifo_priority = static_cast<int>(p);
      }
    }
  }
  if (rng.uniform01() < 0.2) {  // timer release jitter
    sr.jitter = 1;
    for (auto& cb : model.callbacks)
      if (cb.is_timer()) cb.jitter = rng.uniform_int(0, cb.period / 20);
  }
}

// Simulated worst case against the bounds.
struct Check {
  double worst = 0;  // max observed / bound over bounded chains
  double sum = 0;    // Σ observed / bound (tie-break of the climb)
  std::int64_t chains = 0, fusion_chains = 0;
  struct Violation {
    std::string chain, kind;
    Duration bound, observed;
  };
  std::vector<Violation> violations;
};

Check compare(const AnalysisResult& res, const SimResult& r) {
  Check c;
  for (const ChainBound& b : res.chains) {
    const ChainStats* st = r.chain(b.chain);
    if (!st || !b.bounded) continue;
    ++c.chains;
    if (b.chain.rfind("c_F", 0) == 0) ++c.fusion_chains;  // (fusion systems: a chain through a join)
    if (b.wcrt_bound > 0 && st->instances > 0) {
      const double ratio = static_cast<double>(st->wcrt) / static_cast<double>(b.wcrt_bound);
      c.worst = std::max(c.worst, ratio);
      c.sum += ratio;
    }
    if (st->instances > 0 && st->wcrt > b.wcrt_bound) c.violations.push_back({b.chain, "wcrt", b.wcrt_bound, st->wcrt});
    else if (b.bcrt_bound && st->instances > 0 && st->bcrt < *b.bcrt_bound)
      c.violations.push_back({b.chain, "bcrt", *b.bcrt_bound, st->bcrt});
    else if (b.schedulable && st->deadline_misses > 0) c.violations.push_back({b.chain, "deadline", b.deadline, st->wcrt});
  }
  return c;
}

// One simulation setting: timer offsets and either an ExecTime rule or, for the climb, a fixed
// execution time per callback (exec[c] in [BCET, WCET]).
struct Setting {
  std::string name;
  ExecTime exec = ExecTime::Wcet;
  std::map<std::string, Duration> offsets;
  std::vector<Duration> fixed;  // empty, or one execution time per callback
};

SetResult check_set(const ResponseTimeAnalysis& a, const SoundnessOptions& o, int set) {
  SetResult sr;
  const std::uint64_t seed = gen::Rng::stream_seed(o.seed, static_cast<std::uint64_t>(set));
  Model model;
  bool overloaded = false;
  if (!generate(a, o, seed, model, &overloaded)) return sr;
  sr.generated = true;
  gen::Rng hr(seed ^ 0x6a125bULL);
  if (o.harsh) perturb(model, hr, sr);
  // BCET mixes need a best case: give callbacks without one a quarter of their WCET.
  for (auto& cb : model.callbacks)
    if (!cb.bcet) cb.bcet = std::max<Duration>(1, cb.wcet / 4);
  std::string why;
  if (!a.applicable(model, &why)) return sr;
  sr.applicable = true;
  sr.overloaded = overloaded;
  AnalysisResult res = a.analyze(model);
  if (o.harsh && hr.uniform01() < 0.4) {
    // Deadlines equal to the bounds (an EDF analysis sees new deadlines: analysed again).
    bool any = false;
    for (const ChainBound& b : res.chains)
      if (b.bounded)
        for (auto& c : model.chains)
          if (c.name == b.chain && b.wcrt_bound > 0) {
            c.deadline = b.wcrt_bound;
            any = true;
          }
    if (any) {
      sr.tight = 1;
      res = a.analyze(model);
    }
  }
  sr.schedulable = res.schedulable;

  Duration longest = 0;
  for (const auto& c : model.chains) longest = std::max(longest, c.period);
  for (const auto& cb : model.callbacks)
    if (cb.is_timer()) longest = std::max(longest, cb.period);
  const Duration horizon = std::max<Duration>(1'000'000'000, longest * o.horizon_periods);

  gen::Rng rng(seed ^ 0x0ff5e75ULL);
  std::vector<int> timers;
  for (std::size_t c = 0; c < model.callbacks.size(); ++c)
    if (model.callbacks[c].is_timer()) timers.push_back(static_cast<int>(c));

  Model fixed_model;  // the model with the climb's execution times as WCET (= BCET)
  auto simulate_setting = [&](const Setting& st, std::uint64_t sim_seed, Check& out) {
    SimOptions so;
    so.duration = horizon;
    so.seed = sim_seed;
    so.policy = a.policy();
    so.exec = st.exec;
    so.keep_samples = false;
    so.offsets = st.offsets;
    const Model* run = &model;
    if (!st.fixed.empty()) {
      fixed_model = model;
      for (std::size_t c = 0; c < fixed_model.callbacks.size(); ++c)
      {
        fixed_model.callbacks[c].wcet = st.fixed[c];
        fixed_model.callbacks[c].bcet = st.fixed[c];
      }
      run = &fixed_model;
      so.exec = ExecTime::Wcet;
    }
    const SimResult r = simulate(*run, so);
    ++sr.simulations;
    sr.executions += r.executions;
    out = compare(res, r);
    sr.chains_checked += out.chains;
    if (o.fusion) sr.fusion_chains_checked += out.fusion_chains;
    sr.max_ratio = std::max(sr.max_ratio, out.worst);
    for (const auto& v : out.violations) {
      Counterexample c{set, seed, st.name, v.chain, v.kind, v.bound, v.observed, ""};
      if (!o.counterexample_dir.empty()) {
        Model saved = model;
        for (auto& cb : saved.callbacks)
          if (cb.is_timer() && st.offsets.count(cb.name)) cb.offset = st.offsets.at(cb.name);
        // The climb's execution times are the saved model's BCETs, replayed with --exec bcet
        // (the WCETs, and so the analysis' WCRT bounds, are unchanged).
        if (!st.fixed.empty())
          for (std::size_t i = 0; i < saved.callbacks.size(); ++i) saved.callbacks[i].bcet = st.fixed[i];
        for (auto& e : saved.executors) e.policy = a.policy();
        std::filesystem::create_directories(o.counterexample_dir);
        c.file = o.counterexample_dir + "/" + a.name() + "-set" + std::to_string(set) + "-" + st.name + ".yaml";
        std::ofstream f(c.file);
        f << "# soundness counterexample: analysis " << a.name() << " bounds chain " << v.chain << " (" << v.kind
          << ") by " << v.bound << " ns; simulated " << v.observed << " ns\n"
          << "# reproduce: chainrt simulate " << c.file << " --policy " << to_string(a.policy()) << " --exec "
          << (st.fixed.empty() ? exec_name(st.exec) : "bcet") << " --seed " << so.seed << " --duration " << horizon
          << "ns --json\n"
          << save_model_to_string(saved);
      }
      sr.cx.push_back(std::move(c));
    }
    return out.violations.empty();
  };

  const int variants = std::clamp(o.variants, 1, 4);
  Setting best;
  Check best_check;
  bool have_best = false;
  auto consider = [&](const Setting& st, const Check& c) {
    if (st.exec != ExecTime::Wcet && st.exec != ExecTime::Bcet) return;  // the climb needs fixed times
    if (!have_best || c.worst > best_check.worst || (c.worst == best_check.worst && c.sum > best_check.sum)) {
      best = st;
      best_check = c;
      have_best = true;
    }
  };
  for (int v = 0; v < variants; ++v) {
    const Variant& var = kVariants[v];
    Setting st;
    st.name = var.name;
    st.exec = var.exec;
    for (int c : timers) {
      const auto& cb = model.callbacks[static_cast<std::size_t>(c)];
      st.offsets[cb.name] = var.random_offsets ? rng.uniform_int(0, cb.period - 1) : 0;
    }
    Check c;
    if (!simulate_setting(st, seed + static_cast<std::uint64_t>(v), c)) return sr;
    consider(st, c);
  }
  if (o.harsh) {
    // Offsets clustered within 3 ns of two instants: the releases' order is all that differs.
    for (int v = 0; v < 2; ++v) {
      Setting st;
      st.name = v == 0 ? "clustered-wcet" : "clustered-mix";
      st.exec = v == 0 ? ExecTime::Wcet : ExecTime::Mix;
      Duration base[2] = {0, 0};
      for (int c : timers) {
        const auto& cb = model.callbacks[static_cast<std::size_t>(c)];
        if (base[1] == 0) base[1] = rng.uniform_int(0, cb.period - 1);
        st.offsets[cb.name] = std::min(cb.period - 1, base[rng.uniform_int(0, 1)] + rng.uniform_int(0, 3));
      }
      Check c;
      if (!simulate_setting(st, seed + 10 + static_cast<std::uint64_t>(v), c)) return sr;
      consider(st, c);
    }
  }
  if (o.climb > 0 && have_best && best_check.chains > 0) {
    // Hill climbing over offsets and per-callback execution times from the worst simulation.
    Setting cur = best;
    if (cur.fixed.empty()) {
      cur.fixed.resize(model.callbacks.size());
      for (std::size_t c = 0; c < model.callbacks.size(); ++c)
        cur.fixed[c] = cur.exec == ExecTime::Bcet ? model.callbacks[c].best_case() : model.callbacks[c].wcet;
    }
    Check cur_check = best_check;
    const double start = best_check.worst;
    for (int step = 0; step < o.climb; ++step) {
      Setting next = cur;
      next.name = "climb" + std::to_string(step);
      const int moves = static_cast<int>(rng.uniform_int(1, 2));
      for (int mv = 0; mv < moves; ++mv) {
        if (!timers.empty() && rng.uniform01() < 0.5) {
          const auto& cb = model.callbacks[static_cast<std::size_t>(timers[rng.uniform_int(0, timers.size() - 1)])];
          Duration& off = next.offsets[cb.name];
          const double r = rng.uniform01();
          if (r < 0.3) {
            off = rng.uniform_int(0, cb.period - 1);
          } else if (r < 0.7) {
            Duration d = 1;
            for (int k = static_cast<int>(rng.uniform_int(0, 7)); k > 0; --k) d *= 10;
            off += rng.uniform01() < 0.5 ? d : -d;
          } else {
            const auto& other = model.callbacks[static_cast<std::size_t>(timers[rng.uniform_int(0, timers.size() - 1)])];
            off = next.offsets[other.name] + rng.uniform_int(-2, 2);
          }
          off = std::clamp<Duration>(off, 0, cb.period - 1);
        } else {
          const std::size_t c = static_cast<std::size_t>(rng.uniform_int(0, model.callbacks.size() - 1));
          const Duration lo = model.callbacks[c].best_case(), hi = model.callbacks[c].wcet;
          const double r = rng.uniform01();
          next.fixed[c] = r < 0.4 ? lo : r < 0.7 ? hi : rng.uniform_int(lo, hi);
        }
      }
      Check c;
      ++sr.climb_simulations;
      if (!simulate_setting(next, seed + 100 + static_cast<std::uint64_t>(step), c)) return sr;
      if (c.worst > cur_check.worst || (c.worst == cur_check.worst && c.sum >= cur_check.sum)) {
        cur = std::move(next);
        cur_check = c;
      }
    }
    sr.climb_raised = cur_check.worst > start ? 1 : 0;
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
    rep.fusion_chains_checked += r.fusion_chains_checked;
    rep.simulations += r.simulations;
    rep.executions += r.executions;
    rep.max_ratio = std::max(rep.max_ratio, r.max_ratio);
    rep.shuffled_priorities += r.shuffled;
    rep.below_wcet += r.below_wcet;
    rep.constrained_deadlines += r.constrained;
    rep.jitter += r.jitter;
    rep.overloaded += r.overloaded;
    rep.tight_deadlines += r.tight;
    rep.shared_cores += r.shared_cores;
    rep.climb_simulations += r.climb_simulations;
    rep.climb_raised += r.climb_raised;
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
     << ", \"fusion_chains_checked\": " << r.fusion_chains_checked << ", \"simulations\": " << r.simulations << ", \"executions\": " << r.executions << ", \"max_ratio\": " << ratio
     << ", \"harsh\": {\"shuffled_priorities\": " << r.shuffled_priorities << ", \"below_wcet\": " << r.below_wcet
     << ", \"constrained_deadlines\": " << r.constrained_deadlines << ", \"jitter\": " << r.jitter
     << ", \"overloaded\": " << r.overloaded << ", \"tight_deadlines\": " << r.tight_deadlines
     << ", \"shared_cores\": " << r.shared_cores
     << ", \"climb_simulations\": " << r.climb_simulations << ", \"climb_raised\": " << r.climb_raised << "}"
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
