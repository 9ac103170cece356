// chainrt model: how callbacks with accelerator segments run (PiCAS Sec. IV: shared
// accelerators; the server after Kim et al., "A server-based approach for predictable GPU
// access with improved analysis", JSA 2018). The one reading of a model's accelerator segments
// that the simulator, the runtime and the analyses share, so that all three run a callback's
// device work the same way.
//
// A callback's CPU time is cut by its segments (model.hpp, AcceleratorSegment: after `after`
// of its CPU time it hands the device a segment and self-suspends until the segment is done):
//  - direct access: the callback calls the device itself. The request joins the device's
//    first-come-first-served queue and the callback's THREAD is blocked (no CPU, no other
//    callback) until its segment is done; then its CPU part goes on. Nothing changes in the
//    executor: the callback is one piece that blocks inside.
//  - server access: the request goes to the accelerator's server, which runs the requests one
//    at a time in the order of their priority (the requesting callback's effective priority,
//    facts.hpp; ties and requests without one first come, first served, the latter last), a
//    running segment never preempted. The thread is FREE meanwhile: the callback's part before
//    the request returns, and the rest runs as a continuation — a callback of its own, released
//    when the segment is done, with the chain instance of the request (ROS 2's asynchronous
//    client: the response callback continues the work). So a callback with K server-mode
//    segments runs as K + 1 pieces: itself, then "<name>#1" .. "<name>#K".
//
// expand_accelerators() makes those pieces callbacks of a model: piece 0 keeps the callback
// (name, kind, topic, period, ...) with the CPU time before its first server segment; piece k
// is a subscription "<name>#k" of the same node, group, priority and affinity, released by
// the topic "<name>#k" (never a real topic: the device delivers it, as an asynchronous client's
// response), with the CPU time between
// segments k and k+1; the last piece publishes what the callback publishes. Chains list the
// pieces in order. A piece's best-case CPU time is min(a_{k+1}, bcet) − min(a_k, bcet) of the
// callback's (a_k: the `after` of server segment k), so the pieces' best cases sum to the
// callback's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

// An accelerator of the model: a host and one of its accelerators.
struct AcceleratorRef {
  std::size_t host = 0;
  std::size_t index = 0;  // in model.hosts[host].accelerators
  bool operator==(const AcceleratorRef&) const = default;
};

// One device call of a piece.
struct DeviceCall {
  AcceleratorRef accelerator;
  std::size_t segment = 0;  // index in the origin callback's accelerator_segments
  Duration at = 0;          // direct calls: CPU time of the piece before the call
};

struct Piece {
  std::size_t origin = 0;             // the callback in the user's model
  int index = 0;                      // 0: the callback as released; k: its continuation #k
  std::vector<DeviceCall> direct;     // direct-mode calls inside the piece (its thread blocks)
  std::optional<DeviceCall> request;  // server-mode call when the piece's CPU part is done
};

struct AcceleratedModel {
  Model model;                     // the pieces as callbacks; no accelerator_segments left
  std::vector<Piece> pieces;       // per callback of `model`
  std::vector<std::size_t> first;  // per callback of the user's model: its piece 0 in `model`
  std::vector<std::size_t> last;   // ... and its last piece
  const AcceleratorSegment& segment(const Model& user, const DeviceCall& call, std::size_t piece) const {
    return user.callbacks[pieces[piece].origin].accelerator_segments[call.segment];
  }
};

// Whether any callback of the model has accelerator segments.
bool uses_accelerators(const Model& model);

// The model with every callback as its pieces (above). `model` must be validated; a model
// without accelerator segments comes back unchanged, each callback its own piece 0.
AcceleratedModel expand_accelerators(const Model& model);

// "<callback>#<index>" (index > 0), the callback itself for index 0.
std::string piece_name(const std::string& callback, int index);

// The accelerators of the model, host by host: the flat index of `ref` and the reverse.
std::size_t accelerator_index(const Model& model, const AcceleratorRef& ref);
std::vector<AcceleratorRef> accelerator_refs(const Model& model);
const Accelerator& accelerator_of(const Model& model, const AcceleratorRef& ref);

// A CUDA accelerator's stream-priority mapping (Accelerator::stream_priorities): the level of
// a request of effective chain priority `priority` among `levels` stream priorities — 0 the
// greatest CUDA stream priority, levels − 1 the least: k for a priority that reaches threshold
// k first (capped at levels − 1: more thresholds than the GPU has priorities share its least
// one), levels − 1 for a request below every threshold or without a priority.
int cuda_stream_level(const std::vector<int>& thresholds, std::optional<int> priority, int levels);

// The thresholds in force for accelerator `ref`: its stream_priorities, else the distinct
// effective priorities (facts.hpp) of the callbacks that use it, descending — each chain
// priority class its own level, the most important the greatest.
std::vector<int> cuda_stream_thresholds(const Model& model, const AcceleratorRef& ref);

// The host index of the executor that runs callback `callback`.
std::size_t host_of_callback(const Model& model, std::size_t callback);

}  // namespace chainrt
