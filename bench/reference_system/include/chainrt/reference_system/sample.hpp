// chainrt reference system: the 4096-byte sample of the Autoware reference system
// (shared/reference/autoware-reference-system.md, "Message") and the stats bookkeeping every
// node type does on it: append its own entry, merge input histories (first input wins), count
// dropped samples from sequence-number gaps. No ROS here: the sample travels as the bytes of a
// std_msgs/msg/UInt8MultiArray (no message types can be generated in this project); the
// layout is documented in docs/reference_system.md and mirrored by
// python/chainrt/reference_system/message.py.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace chainrt::reference_system {

inline constexpr std::size_t kStatsCapacity = 63;
inline constexpr std::size_t kNodeNameLength = 48;
inline constexpr std::size_t kDataLength = 7;
inline constexpr std::size_t kMessageSize = 4096;

struct StatsEntry {
  std::uint64_t timestamp;        // ns, CLOCK_MONOTONIC at the start of the node's callback
  std::uint32_t sequence_number;  // per publishing node (per connection for Intersection)
  std::uint32_t dropped_samples;  // input samples the node missed before this one
  char node_name[kNodeNameLength];
};
static_assert(sizeof(StatsEntry) == 64);

// data[0]: the workload's result; data[1..4]: chainrt's chain-instance stamp (chain index,
// instance, release, absolute deadline) so that EDF deadlines travel with the sample.
inline constexpr std::size_t kStampChain = 1, kStampInstance = 2, kStampRelease = 3, kStampDeadline = 4;

struct Sample {
  std::uint64_t size;                 // filled entries of `stats`
  StatsEntry stats[kStatsCapacity];
  std::int64_t data[kDataLength];
};
static_assert(sizeof(Sample) == kMessageSize, "the upstream message is 4096 bytes");

inline std::string_view name_of(const StatsEntry& e) noexcept {
  return std::string_view(e.node_name, strnlen(e.node_name, kNodeNameLength));
}

inline std::size_t filled(const Sample& s) noexcept {
  return s.size < kStatsCapacity ? static_cast<std::size_t>(s.size) : kStatsCapacity;
}

inline bool contains(const Sample& s, std::string_view node) noexcept {
  for (std::size_t i = 0; i < filled(s); ++i)
    if (name_of(s.stats[i]) == node) return true;
  return false;
}

inline const StatsEntry* find(const Sample& s, std::string_view node) noexcept {
  for (std::size_t i = 0; i < filled(s); ++i)
    if (name_of(s.stats[i]) == node) return &s.stats[i];
  return nullptr;
}

// The node's own entry, appended last; once 63 entries exist nothing is appended.
inline bool append_entry(Sample& s, std::string_view node, std::uint64_t timestamp,
                         std::uint32_t sequence, std::uint32_t dropped) noexcept {
  const std::size_t n = filled(s);
  if (n >= kStatsCapacity) return false;
  StatsEntry& e = s.stats[n];
  e.timestamp = timestamp;
  e.sequence_number = sequence;
  e.dropped_samples = dropped;
  std::memset(e.node_name, 0, kNodeNameLength);
  std::memcpy(e.node_name, node.data(), node.size() < kNodeNameLength - 1 ? node.size() : kNodeNameLength - 1);
  s.size = n + 1;
  return true;
}

// Copy the entries of `input` whose node is not in `out` yet (first input wins).
inline void merge_history(Sample& out, const Sample& input) noexcept {
  for (std::size_t i = 0; i < filled(input) && filled(out) < kStatsCapacity; ++i) {
    if (contains(out, name_of(input.stats[i]))) continue;
    out.stats[filled(out)] = input.stats[i];
    out.size = filled(out) + 1;
  }
}

// The direct publisher of a sample: its last entry.
inline const StatsEntry* last_entry(const Sample& s) noexcept {
  return filled(s) ? &s.stats[filled(s) - 1] : nullptr;
}

// Dropped samples seen by one input: missed = new - prev - 1 when new > prev (upstream rule).
class SequenceTracker {
 public:
  std::uint32_t update(std::uint32_t sequence) noexcept {
    std::uint32_t missed = 0;
    if (seen_ && sequence > last_) missed = sequence - last_ - 1;
    if (!seen_ || sequence > last_) last_ = sequence;
    seen_ = true;
    return missed;
  }
  std::optional<std::uint32_t> last() const noexcept {
    return seen_ ? std::optional<std::uint32_t>(last_) : std::nullopt;
  }

 private:
  bool seen_ = false;
  std::uint32_t last_ = 0;
};

// Upstream's "number cruncher": count the primes below `limit` by trial division by every
// smaller number (no square-root cut-off, so that limit 4096 costs what upstream's does, about
// 2 ms here). The prime-count workload option.
inline std::int64_t count_primes(std::int64_t limit) noexcept {
  std::int64_t count = 0;
  for (std::int64_t n = 2; n < limit; ++n) {
    bool prime = true;
    for (std::int64_t d = 2; d < n; ++d)
      if (n % d == 0) {
        prime = false;
        break;
      }
    count += prime ? 1 : 0;
  }
  return count;
}

}  // namespace chainrt::reference_system
