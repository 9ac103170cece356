// chainrt runtime: chain instances inside one executor (EDF ready-queue paper Sec. IV-B), shared
// by the runtime's executor (executor.hpp) and the rclcpp executor (chainrt/rclcpp). Instance k
// of chain i is released with its first callback at a_i^k, carries the absolute deadline
// d_i^k = a_i^k + D_i from callback to callback, and completes when its last callback (every
// leaf of a branching chain) completes; its response time is that finish minus a_i^k.
//  - ChainTrack: what the monitor keeps per chain; complete_chains(): the completion rule
//    (which chain a timer starting several stamps its instances with: sched::ChainSource).
//  - StampRing: chain instances waiting at a callback whose input comes from a chain
//    predecessor in the same executor (unmodified nodes' messages carry no stamp; the executor
//    hands the instance over itself when the predecessor starts, see ChainExecutor).
// Contract: storage is sized by init()/reserve() (allocate); complete_chains(), StampRing::push,
// pop and cap never allocate and never throw; not thread-safe (the executor's ready-queue lock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chainrt/runtime/monitor.hpp"
#include "chainrt/runtime/node.hpp"

namespace chainrt::runtime {

struct ChainTrack {
  std::string name;
  Duration period = 0;
  Duration deadline = 0;                         // D_i (0: none)
  sched::CallbackId source = sched::kNoCallback; // the source timer here (kNoCallback: elsewhere)
  std::string source_name;
  std::vector<sched::CallbackId> members;        // its callbacks in this executor
  std::vector<sched::CallbackId> leaves;         // its leaves in this executor
  LatencyRecorder latency;
  // A branching chain's instance ends when every leaf has completed: the leaves completed so far
  // per instance (one bit per leaf, so a leaf that completes twice with one instance's stamp
  // counts once), in a ring indexed by the instance number.
  struct Pending {
    std::uint64_t instance = ~std::uint64_t{0};
    std::uint64_t done = 0;
  };
  std::vector<Pending> pending;

  // Size the storage once the leaves are known.
  void reserve(std::size_t samples) {
    latency.reserve(samples);
    pending.assign(leaves.size() > 1 ? 256 : 0, Pending{});
  }
  // The bit of leaf `id` in Pending::done (a chain of more than 64 leaves shares the last bit
  // among the rest: it ends once 64 distinct bits are set).
  std::uint64_t leaf_bit(sched::CallbackId id) const noexcept {
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (leaves[i] == id) return std::uint64_t{1} << (i < 63 ? i : 63);
    return 0;
  }
  // Pending::done once every leaf has completed the instance.
  std::uint64_t all_leaves() const noexcept {
    return leaves.size() >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << leaves.size()) - 1;
  }
};

// Callback `leaf` finished instance `stamp` at `finish`; it is a leaf of the chains `leaf_of`
// (indices into `chains`). An instance of chain c is one stamped by c itself or by a chain with
// the same source. For every chain instance this completes (each of its leaves done once),
// records finish - release (when release >= record_from) and calls done(c, response).
template <class Done>
void complete_chains(std::vector<ChainTrack>& chains, const std::vector<std::uint32_t>& leaf_of,
                     sched::CallbackId leaf, const Stamp& stamp, Duration finish, Duration record_from,
                     Done&& done) noexcept {
  if (stamp.chain == kNoChain || stamp.chain >= chains.size() || stamp.release < record_from) return;
  const sched::CallbackId src = chains[stamp.chain].source;
  const std::string& src_name = chains[stamp.chain].source_name;
  for (std::uint32_t c : leaf_of) {
    ChainTrack& ch = chains[c];
    if (!(c == stamp.chain || (src != sched::kNoCallback && ch.source == src) ||
          (src == sched::kNoCallback && ch.source_name == src_name)))
      continue;
    if (ch.leaves.size() > 1) {  // branching: wait for the other leaves of this instance
      ChainTrack::Pending& p = ch.pending[stamp.instance % ch.pending.size()];
      if (p.instance != stamp.instance) p = ChainTrack::Pending{stamp.instance, 0};
      const std::uint64_t before = p.done;
      p.done |= ch.leaf_bit(leaf);
      if (p.done == before || p.done != ch.all_leaves()) continue;
    }
    ch.latency.record(finish - stamp.release, ch.deadline);
    done(c, finish - stamp.release);
  }
}

// Fixed-capacity FIFO of chain instances waiting at one callback (the oldest is lost when full).
class StampRing {
 public:
  void reserve(std::size_t n) {
    ring_.assign(n == 0 ? 1 : n, Stamp{});
    cap_ = ring_.size();
  }
  // At most `n` (1 .. the reserved size) kept from now on, the oldest dropped: the callback's
  // keep-last queue holds no more messages, so older instances are of messages it lost.
  void cap(std::size_t n) noexcept {
    cap_ = n == 0 ? 1 : n < ring_.size() ? n : ring_.size();
    while (size_ > cap_) pop();
  }
  void push(const Stamp& s) noexcept {
    if (size_ == cap_) pop();
    ring_[(head_ + size_) % ring_.size()] = s;
    ++size_;
  }
  bool empty() const noexcept { return size_ == 0; }
  const Stamp& front() const noexcept { return ring_[head_]; }
  void pop() noexcept {
    if (size_) {
      head_ = (head_ + 1) % ring_.size();
      --size_;
    }
  }
  void clear() noexcept { head_ = size_ = 0; }

 private:
  std::vector<Stamp> ring_{Stamp{}};
  std::size_t head_ = 0, size_ = 0, cap_ = 1;
};

}  // namespace chainrt::runtime
