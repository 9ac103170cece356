// Shared accelerators in the analyses (private to analysis/): the device side of a callback's
// accelerator segments (PiCAS Sec. IV; Kim et al., "A server-based approach for predictable GPU
// access with improved analysis", JSA 2018) and the hook that hands the CPU side to the chain
// engine (chain_rta.cpp) as a model it already analyses.
//
// How a callback's segments run is model/accelerator.hpp. The bounds:
//  - server access (Kim et al.'s server, request-driven): a request waits for at most ONE
//    request of lower priority in progress (the device is never preempted) and for the requests
//    of higher priority that are queued or arrive before it starts, and those of equal
//    priority queued before it (arrival order); each request served costs the server's
//    overhead ε plus its segment. A chain τ_Y with R_Y <= T_Y has at most ⌈w/T_Y⌉ + 1
//    instances, hence requests of one site, in a window w (released in (t − T_Y, t + w]). The
//    least w with  w = B_lp + Σ_hp n(w)·(ε + G)  bounds the wait (requests_in_window gives n);
//    the request's response is w + ε + G.
//  - direct access (first come, first served; a thread blocks on its request): when a request
//    is queued, every other thread has at most one request ahead of it, so it waits for at most
//    Σ over the other threads of their largest segment (FIFO blocking).
// The CPU side, self-suspension aware (Chen et al., "Many suspensions, many problems", RTS 2019):
//  - a direct call blocks its thread: its response is charged as the callback's execution
//    (suspension-oblivious, sound for the thread and for every thread it shares a core with);
//  - a server call ends the callback's piece; its continuation is released after the request's
//    response bound — to the engine a hop with that delay inside the chain (self-suspension S of
//    the segment, and a "full" eligibility event after it), while every other chain's work is
//    counted in its whole response window [r, r + R] (carry-in workload: the jitter-based
//    treatment with jitter R − C, not the unsound "jitter = suspension").
//  - the server thread's overhead on its core: per requesting chain and site, one ε per
//    instance, at any time of the period — a top-priority thread's work on that core, charged
//    by the engine's foreign-work term like PiCAS's executors sharing a core.
// The device bounds assume every chain that uses a server-mode accelerator finishes within its
// period (R < T: at most one instance of it in flight); finish_accelerators() checks that on
// the result and withdraws every bound when it does not hold.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/analysis/analysis.hpp"
#include "workload.hpp"

namespace chainrt::detail {

// ---- the terms (one function each, unit-tested in tests/cpp/analysis/test_accelerator.cpp) ----

// Kim et al. 2018, the server's priority-ordered queue: the request in service when a request
// arrives cannot be preempted — at most one lower-priority request, its overhead and segment:
// B_lp = max_l (ε + G_l) (0 without lower-priority requests).
Duration server_lp_blocking(const std::vector<Duration>& lp_service);

// How the requests of one site (a callback piece that issues them) of chain τ_Y relate to a
// request of chain τ_X that waits w at the server.
enum class Urgency {
  Higher,     // higher priority, another chain (or another branch of τ_X's own instance)
  HigherOwn,  // higher priority, τ_X's later instances (its own instance is the request's)
  Equal,      // equal priority, another chain: ahead only if queued before (arrival order)
  EqualOwn,   // equal priority, τ_X itself: its later instances queue behind
};

// Requests of one site that are served before the request starts, in a wait of w, for a chain
// of period T whose releases may each come up to J late (its first callback's jitter). With
// R_Y < T_Y (checked on the result: finish_accelerators) a request of τ_Y served in the wait
// comes from an instance released in (t − R_Y, t + w], at most ⌈(w + R_Y + J)/T_Y⌉ <=
// ⌈(w + J)/T_Y⌉ + 1 of them:
//   Higher ⌈(w + J)/T_Y⌉ + 1;
//   HigherOwn ⌈(w + J)/T_X⌉ (τ_X's later instances, released in [r + T_X − J, t + w] with
//     t − r <= R_X < T_X: an interval shorter than w + J);
//   Equal 1 (the one queued at t; later ones queue behind);  EqualOwn 0.
Duration requests_in_window(Duration w, Duration T, Duration J, Urgency u);

// One site of higher or equal priority: its service time ε + G, its chain's period, and how it
// relates to the waiting request.
struct HpSite {
  Duration service = 0;  // ε + G
  Duration period = 0;   // T_Y
  Duration jitter = 0;   // J_Y
  Urgency urgency = Urgency::Higher;
};
// Kim et al. 2018: Σ_hp n_h(w)·(ε + G_h), the higher-priority requests served before it starts.
Duration server_hp_requests(Duration w, const std::vector<HpSite>& hp);

// Kim et al. 2018, the waiting time of a request: the least w >= 0 with
// w = B_lp + Σ_hp n_h(w)·(ε + G_h); nullopt when it exceeds `limit` (fixed_point.hpp).
std::optional<Duration> server_waiting_time(Duration lp_blocking, const std::vector<HpSite>& hp, Duration limit);

// The response of a server request: its wait, the server's overhead and its own segment.
Duration server_request_response(Duration wait, Duration overhead, Duration segment);

// Block-level preemption (`preemption: block`; GPU streams of the requests' priorities, as
// GCAPS, Wang et al., ECRTS 2024, makes GPU work preemptible by priority — its text is not in
// this repository, so the bound is re-derived from the model's semantics, model.hpp
// Accelerator::block_preemption). A request waits for at most one non-preemptive chunk of one
// lower-priority request, with that request's overhead (the server spends it before the first
// chunk): B_lp = max_l (ε + C_l), C_l the longest chunk of l (AcceleratorSegment::longest_chunk);
// every higher-priority request issued before it finishes is served first, preempting it
// between its chunks: the response is the least R with R = B_lp + ε + G + Σ_hp n_h(R)·(ε + G_h)
// (n_h as requests_in_window, over the whole response rather than the wait); nullopt when it
// exceeds `limit`.
std::optional<Duration> block_preemptive_response(Duration lp_blocking, Duration overhead, Duration segment,
                                                  const std::vector<HpSite>& hp, Duration limit);

// Direct access, first come first served: Σ over the other threads of their largest segment on
// the device — `per_thread` every thread's largest, `own` the smallest among the threads that
// may issue the request (the one it comes from is left out).
Duration fifo_blocking(const std::vector<Duration>& per_thread, Duration own);

// The response of a direct call: FIFO blocking and its own segment.
Duration direct_request_response(Duration blocking, Duration segment);

// Chen et al. 2019, suspension-oblivious: a callback blocked on its direct calls occupies its
// thread for its CPU time plus the calls' responses.
Duration suspension_oblivious_wcet(Duration cpu, const std::vector<Duration>& call_responses);

// ---- the hook -----------------------------------------------------------------------------------

// The model as the chain engine analyses it: the pieces of model/accelerator.hpp with direct
// calls charged as execution, continuations released after their server request's response
// (`cost` of the hop into them), and the server threads' overhead as work on their cores.
struct AcceleratorPlan {
  Model model;
  HopCost cost;
  std::string refused;  // non-empty: why the model cannot be analysed
  // Chains whose bounds the server bounds assume within their period (they request a server).
  std::vector<std::string> requesters;
  // Chains through a request whose waiting time has no bound: the reason.
  std::map<std::string, std::string> unbounded;
};

AcceleratorPlan plan_accelerators(const Model& model);

// The CPU analysis' result of plan.model, checked: the reasons of requests without a bound,
// and every bound withdrawn when a requesting chain has none (the server bounds assumed it).
AnalysisResult finish_accelerators(const AcceleratorPlan& plan, AnalysisResult result);

// True (with the reason) for analyses that do not analyse accelerator segments.
bool refuse_accelerators(const Model& model, const std::string& analysis, std::string* why);

}  // namespace chainrt::detail
