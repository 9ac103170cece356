// chainrt sched: chain-instance completion's set-up and join (chain_completion.hpp).
#include "chainrt/sched/chain_completion.hpp"

#include <algorithm>
#include <utility>

namespace chainrt::sched {

namespace {

// The bit of leaf number i in a join (a chain of more than 64 leaves shares the last bit among
// the rest: its instance ends once 64 distinct bits are set).
std::uint64_t leaf_bit(std::size_t i) noexcept { return std::uint64_t{1} << (i < 63 ? i : 63); }

std::uint64_t all_leaves(std::size_t n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

}  // namespace

ChainCompletion::ChainCompletion(std::vector<Chain> chains) : chains_(std::move(chains)) {
  CallbackId callbacks = 0;
  for (auto& ch : chains_) {
    std::vector<CallbackId> unique;  // a leaf named twice is one leaf
    for (CallbackId cb : ch.leaves)
      if (std::find(unique.begin(), unique.end(), cb) == unique.end()) unique.push_back(cb);
    ch.leaves = std::move(unique);
    for (CallbackId cb : ch.leaves) callbacks = std::max(callbacks, cb + 1);
  }
  leaf_begin_.assign(callbacks + 1, 0);
  for (const auto& ch : chains_)
    for (CallbackId cb : ch.leaves) ++leaf_begin_[cb + 1];
  for (CallbackId cb = 0; cb < callbacks; ++cb) leaf_begin_[cb + 1] += leaf_begin_[cb];
  leaf_chains_.resize(leaf_begin_.back());
  std::vector<std::uint32_t> fill(leaf_begin_.begin(), leaf_begin_.end() - 1);
  join_at_.assign(chains_.size(), 0);
  for (std::uint32_t c = 0; c < chains_.size(); ++c) {
    for (CallbackId cb : chains_[c].leaves) leaf_chains_[fill[cb]++] = c;
    if (chains_[c].leaves.size() > 1) {
      join_at_[c] = static_cast<std::uint32_t>(joins_.size());
      joins_.resize(joins_.size() + kJoinRing);
    }
  }
}

bool ChainCompletion::is_leaf(std::uint32_t c, CallbackId cb) const noexcept {
  const auto& l = chains_[c].leaves;
  return std::find(l.begin(), l.end(), cb) != l.end();
}

bool ChainCompletion::leaf_done(std::uint32_t c, CallbackId leaf, std::uint64_t instance) noexcept {
  const auto& leaves = chains_[c].leaves;
  if (leaves.size() <= 1) return leaves.size() == 1 && leaves[0] == leaf;
  std::uint64_t bit = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i] == leaf) bit = leaf_bit(i);
  if (bit == 0) return false;
  Pending& p = joins_[join_at_[c] + instance % kJoinRing];
  if (p.instance != instance) p = Pending{instance, 0};
  const std::uint64_t before = p.done;
  p.done |= bit;
  return p.done != before && p.done == all_leaves(leaves.size());
}

}  // namespace chainrt::sched
