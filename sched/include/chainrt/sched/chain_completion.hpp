// chainrt sched: chain-instance completion, the one rule of every chainrt backend (the simulator,
// the C++ runtime on rcl, the rclcpp ChainExecutor, the rclpy ChainExecutor). Instance k of
// chain i is released with its first callback at a_i^k (a Stamp, dispatcher.hpp) and completes
// when its last callback — every leaf of a branching chain, each counted once — has finished
// it; its end-to-end response time is that finish minus a_i^k (EDF ready-queue paper Sec. IV-B;
// the chain latency of Sec. III).
//
// The callbacks are the backend's own dense numbering of the callbacks that end chains (an
// executor's CallbackIds, the model's callback indices, ...); a callback outside it ends no
// chain. A chain's instances are told apart by their instance number k; a timer that starts
// several chains stamps ONE instance with one of them (sched::ChainSource), so the instance of
// chain c is one stamped by c or by a chain with the same first callback (`source`).
//
// Contract: the constructor allocates every storage (a ring of pending branch joins per
// branching chain); leaf_done(), complete() and every query never allocate, never throw and
// never block. Not thread-safe: the owner's lock (the executor's ready-queue lock).
#pragma once

#include <cstdint>
#include <vector>

#include "chainrt/sched/dispatcher.hpp"

namespace chainrt::sched {

class ChainCompletion {
 public:
  struct Chain {
    std::uint32_t source = 0;           // the same number for chains with the same first callback
    Duration deadline = 0;              // D_i (0: none)
    std::vector<CallbackId> leaves;     // its last callbacks (more than one: a branching chain)
  };
  // A branching chain's instances waiting for their other leaves: the last kJoinRing instances
  // (an older one whose other branch never finished is given up).
  static constexpr std::size_t kJoinRing = 256;

  ChainCompletion() = default;
  // Chain i of the backend is chains[i]. Allocates.
  explicit ChainCompletion(std::vector<Chain> chains);

  std::size_t chain_count() const noexcept { return chains_.size(); }
  const Chain& chain(std::uint32_t c) const noexcept { return chains_[c]; }
  // Whether `cb` is a leaf of chain `c`. O(leaves).
  bool is_leaf(std::uint32_t c, CallbackId cb) const noexcept;

  // Leaf `leaf` of chain `c` finished instance `instance`: true when that completes the
  // instance (a chain of one leaf: every time; a branching chain: once each of its leaves has
  // finished that instance, a leaf finishing it twice counting once). O(leaves).
  bool leaf_done(std::uint32_t c, CallbackId leaf, std::uint64_t instance) noexcept;

  // Callback `leaf` finished the chain instance `stamp` at `finish`: for every chain that ends
  // at `leaf` and whose instance this is (stamped by it or by a chain with the same source),
  // and that this completes, calls done(c, response, missed) with response = finish - release
  // and missed = (D_c > 0 and response > D_c). Instances released before `record_from` are
  // not followed. O(chains ending at leaf × leaves).
  template <class Done>
  void complete(CallbackId leaf, const Stamp& stamp, Duration finish, Duration record_from, Done&& done) noexcept {
    if (stamp.chain >= chains_.size() || leaf >= leaf_begin_.size() - 1 || stamp.release < record_from) return;
    const std::uint32_t src = chains_[stamp.chain].source;
    for (std::uint32_t i = leaf_begin_[leaf]; i < leaf_begin_[leaf + 1]; ++i) {
      const std::uint32_t c = leaf_chains_[i];
      if (c != stamp.chain && chains_[c].source != src) continue;
      if (!leaf_done(c, leaf, stamp.instance)) continue;
      const Duration response = finish - stamp.release;
      const Duration D = chains_[c].deadline;
      done(c, response, D > 0 && response > D);
    }
  }

 private:
  struct Pending {
    std::uint64_t instance = ~std::uint64_t{0};
    std::uint64_t done = 0;  // one bit per leaf (a chain of more than 64 shares the last bit)
  };
  std::vector<Chain> chains_;
  std::vector<std::uint32_t> leaf_begin_{0};  // chains ending at callback cb: leaf_chains_[begin[cb]..begin[cb+1])
  std::vector<std::uint32_t> leaf_chains_;
  std::vector<std::uint32_t> join_at_;        // per chain: its ring in joins_ (branching chains)
  std::vector<Pending> joins_;
};

}  // namespace chainrt::sched
