// chainrt model files: the limits the parser and the validation enforce (docs/model.md,
// "Limits"). A model file is untrusted input: its size, nesting and alias expansion are bounded
// before a tree is built, and every value is checked against what the analyses, the simulator
// and the runtime can actually do, so that `chainrt check` rejects what would break later.
#pragma once

#include <cstdint>

namespace chainrt::limits {

// Input: the file as a whole.
inline constexpr std::int64_t kMaxModelBytes = 16 << 20;  // 16 MiB of YAML
inline constexpr int kMaxDepth = 32;                      // nested mappings/sequences
inline constexpr std::int64_t kMaxNodes = 200'000;        // YAML nodes, aliases expanded
inline constexpr std::int64_t kMaxNameBytes = 256;        // a name (callback, node, topic, ...)
// No value is longer (a name's limit is above, a number has a few digits); text without a space,
// line break or flow separator ([]{},) longer than this holds such a value: refused before the
// YAML parser spends its per-character work on it, and any longer value in the parser's first pass.
inline constexpr std::int64_t kMaxUnbrokenBytes = 64 << 10;  // 64 KiB

// Values.
inline constexpr std::int64_t kMinPeriod = 10'000;                 // 10 us: timers, chains, reservations
inline constexpr std::int64_t kMaxDuration = 3'600'000'000'000;    // 1 h: any duration in the file
inline constexpr std::int64_t kMaxMessageBytes = 1LL << 30;        // 1 GiB: a topic's message size
inline constexpr int kMaxQueueDepth = 1000;                        // a subscription's queue
inline constexpr int kMaxThreads = 64;                             // threads of one executor (= sched::kMaxThreads)
inline constexpr int kMaxCores = 1024;                             // cores of a host, core numbers
inline constexpr int kMaxPriority = 1'000'000;                     // |callback or chain priority|
inline constexpr int kMaxCriticality = 1000;                       // a chain's criticality level

}  // namespace chainrt::limits
