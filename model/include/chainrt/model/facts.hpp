// chainrt model facts: the scheduling-relevant facts derived from a model that the analyses,
// the ready-queue setup (sched/) and the simulator must read the same way — computed here
// once. Pure functions of the model; no allocation beyond the return values; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

// A callback's effective fixed priority (larger = more important): its own `priority`, else
// the PiCAS/LaME rule chain priority * 1024 + position along the chain (the highest over the
// chains that list it); nullopt when neither exists (the ready queue puts it last).
std::optional<int> effective_priority(const Model& model, std::size_t callback);

// A thread's SCHED_FIFO priority, the one rule the analyses, the simulator and every executor
// (through sched::make_setup) read: its own `priority`, else its executor's `priority` when that
// is 1..99 (an executor's priority is its threads' default; 0, the lowest PiCAS executor
// priority, is no SCHED_FIFO priority); nullopt for a thread without one (SCHED_OTHER, below
// every FIFO thread) and for a thread with a SCHED_DEADLINE reservation (never SCHED_FIFO).
std::optional<int> thread_fifo_priority(const Executor& executor, const Thread& thread);

// The executor's threads (bit t = executor.threads[t], first 64) that may run the callback: all
// of them without affinity, else those named by the affinity or whose thread class it names
// (0 when it names none).
std::uint64_t thread_mask(const Executor& executor, const Callback& callback);

// The core (0-based, on its host) the simulator runs thread `thread` of executor `executor` on:
// its first listed core when pinned, else the next core in a round robin over the host's cores
// of the host's unpinned threads in model order (executors, then their threads). The
// analyses cover this placement besides the kernel's global scheduling of unpinned threads.
int simulated_core(const Model& model, std::size_t executor, std::size_t thread);

// Whether a host of several cores runs more threads than cores, none of them pinned: the
// simulated_core placement then shares a core between threads that the kernel's global
// scheduling would run side by side (with fewer, each has a core of its own either way). What
// checks a model against the simulator simulates such a model both ways
// (sim::SimOptions::global_threads).
bool unpinned_threads_share_cores(const Model& model);

// Implicit fusion sets (the reference system's Fusion node): two or more plain subscriptions of
// one node that publish the same (non-empty) topics. Each member caches its input; the member
// that completes the set works and publishes one message carrying every cached input's chain
// instances — so a chain's data can wait at the set for the other inputs (the simulator's
// rule; callback indices, sets in a deterministic order).
std::vector<std::vector<std::size_t>> implicit_fusion_sets(const Model& model);

// The upper end of a callback's cost interval: its WCET plus its executor's dispatch_overhead
// (the executor thread's own time per dispatch, Executor::dispatch_overhead); its WCET alone
// when its node or executor is unknown. The lower end stays its BCET (Callback::best_case()).
//
// Why charging the overhead this way keeps the non-preemptive analyses sound: the overhead is
// lumped before the callback, so a job's modelled finish is the instant its thread selects
// again; the callback really ends earlier, by the part of the overhead spent after it, so a
// chain latency measured at a callback's end is bounded by the modelled one. The lower end
// stays the BCET, so a successor on another thread, released at the callback's real end, is
// released inside the window the analysis gives it ([BCET-based earliest, WCET+overhead-based
// latest finish]).
Duration charged_wcet(const Model& model, const Callback& callback);

// The model every analysis (the registry, analysis.hpp) and the simulator run: each callback's
// WCET replaced by charged_wcet, its BCET kept (written out where it defaulted to the WCET),
// every executor's dispatch_overhead then 0 — so charging a charged model again changes
// nothing. Returns `model` itself when no executor has an overhead (no copy), else `storage`
// filled with the charged copy.
const Model& charge_dispatch_overhead(const Model& model, Model& storage);

}  // namespace chainrt
