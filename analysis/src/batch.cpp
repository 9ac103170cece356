// Batch schedulability counting over generated systems (batch.hpp), split over std::threads;
// each thread takes systems i, i + threads, ... and counts into its own slot (no sharing).
#include "chainrt/analysis/batch.hpp"

#include <stdexcept>
#include <thread>

#include "chainrt/analysis/analysis.hpp"
#include "chainrt/analysis/reference.hpp"

namespace chainrt {

namespace {
// The reference curves are not in the registry; jiang22 analyses the m-thread executor.
bool single_threaded(const std::string& name) {
  const auto* a = find_analysis(name);
  return a != nullptr && a->single_threaded();
}
}  // namespace

std::vector<std::int64_t> schedulable_counts(const gen::EdfPaperParams& params, std::uint64_t seed, std::int64_t first,
                                             std::int64_t count, const std::vector<std::string>& names, int threads) {
  std::vector<const ResponseTimeAnalysis*> as;
  bool need_partition = false;
  for (const auto& n : names) {
    if (n == "jiang22") {  // reference curve, not a registry analysis (reference.hpp)
      as.push_back(nullptr);
      continue;
    }
    const auto* a = find_analysis(n);
    if (!a) throw std::invalid_argument("unknown analysis '" + n + "'");
    as.push_back(a);
    need_partition |= single_threaded(n);
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(1, count)));
  std::vector<std::vector<std::int64_t>> local(threads, std::vector<std::int64_t>(as.size(), 0));
  std::vector<std::string> errors(threads);
  auto work = [&](int t) {
    try {
      for (std::int64_t i = first + t; i < first + count; i += threads) {
        Model multi = gen::edf_paper_system(params, gen::Rng::stream_seed(seed, static_cast<std::uint64_t>(i)));
        Model part;
        if (need_partition) part = gen::partition_single_threaded(multi, Policy::Picas);
        for (std::size_t k = 0; k < as.size(); ++k) {
          const Model& m = single_threaded(names[k]) ? part : multi;
          const bool ok = as[k] ? as[k]->schedulable(m) : reference::jiang22(multi).schedulable;
          if (ok) local[t][k]++;
        }
      }
    } catch (const std::exception& e) {
      errors[t] = e.what();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);
  std::vector<std::int64_t> out(as.size(), 0);
  for (const auto& l : local)
    for (std::size_t k = 0; k < l.size(); ++k) out[k] += l[k];
  return out;
}

}  // namespace chainrt
