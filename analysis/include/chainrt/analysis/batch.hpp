// chainrt batch schedulability: run analyses over many generated systems in C++ threads, for
// the EDF ready-queue paper's Fig. 7 experiment (Sec. VI-C) and the benchmark. System i of a
// point is edf_paper_system(params, Rng::stream_seed(seed, i)), so a point's result does not
// depend on how the systems are split over threads or calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chainrt/analysis/generator.hpp"

namespace chainrt {

// For systems [first, first + count) of a point: how many each analysis calls schedulable.
// Multi-threaded analyses (edf-mt, fp-mt) see the generated m-thread executor; single-threaded
// ones (picas-st, ros-default-st, cros-rt) see the same chains partitioned over m
// single-threaded executors (gen::partition_single_threaded). `threads` <= 0: hardware threads.
// The name "jiang22" is also accepted: the refuted reference curve of reference.hpp (on the
// m-thread executor), which is not a registry analysis.
std::vector<std::int64_t> schedulable_counts(const gen::EdfPaperParams& params, std::uint64_t seed,
                                             std::int64_t first, std::int64_t count,
                                             const std::vector<std::string>& analyses, int threads);

}  // namespace chainrt
