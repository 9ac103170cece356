// chainrt sched: readyQueue Ω and Algorithm 1 of the EDF ready-queue paper (Sec. IV-A), with
// the pluggable orderings of footnote 2 and LaME's affinity masks (Sec. 4.1). See
// ready_queue.hpp for the data-structure argument (lanes per group and affinity, heaps of
// active lanes per affinity class).
#include "chainrt/sched/ready_queue.hpp"

#include "chainrt/sched/policy.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace chainrt::sched {

ReadyQueue::ReadyQueue(Policy policy, std::vector<CallbackSpec> callbacks,
                       std::vector<GroupSpec> groups, std::size_t threads)
    : policy_(policy), key_fn_(descriptor(policy).key), threads_(threads), specs_(std::move(callbacks)), groups_(std::move(groups)) {
  if (threads_ == 0 || threads_ > kMaxThreads)
    throw std::invalid_argument("ReadyQueue: thread count must be 1..64");
  const std::size_t n = specs_.size();
  const AffinityMask all = threads_ == 64 ? kAnyThread : ((AffinityMask{1} << threads_) - 1);
  key_.resize(n);
  deadline_.assign(n, kNoDeadline);
  lane_of_.resize(n);
  lane_pos_.assign(n, kAbsent);

  // Lanes: (mutually exclusive group, mask) or one per reentrant callback.
  std::map<std::pair<GroupId, AffinityMask>, LaneId> mx_lane;
  std::vector<AffinityMask> lane_mask;
  std::vector<std::uint32_t> lane_count;
  for (CallbackId c = 0; c < n; ++c) {
    auto& s = specs_[c];
    if (s.group >= groups_.size()) throw std::invalid_argument("ReadyQueue: callback group out of range");
    s.affinity &= all;
    LaneId l;
    if (groups_[s.group].type == GroupType::MutuallyExclusive) {
      auto [it, fresh] = mx_lane.try_emplace({s.group, s.affinity}, static_cast<LaneId>(lane_mask.size()));
      l = it->second;
      if (fresh) {
        lane_mask.push_back(s.affinity);
        lane_group_.push_back(s.group);
        lane_count.push_back(0);
      }
    } else {
      l = static_cast<LaneId>(lane_mask.size());
      lane_mask.push_back(s.affinity);
      lane_group_.push_back(s.group);
      lane_count.push_back(0);
    }
    lane_of_[c] = l;
    ++lane_count[l];
  }
  const std::size_t lanes = lane_mask.size();
  lane_begin_.resize(lanes + 1, 0);
  for (std::size_t l = 0; l < lanes; ++l) lane_begin_[l + 1] = lane_begin_[l] + lane_count[l];
  lane_size_.assign(lanes, 0);
  lane_heap_.assign(n, kNoCallback);
  class_pos_.assign(lanes, kAbsent);

  // Affinity classes.
  std::map<AffinityMask, std::uint32_t> class_ix;
  std::vector<std::uint32_t> class_count;
  lane_class_.resize(lanes);
  for (std::size_t l = 0; l < lanes; ++l) {
    auto [it, fresh] = class_ix.try_emplace(lane_mask[l], static_cast<std::uint32_t>(class_mask_.size()));
    if (fresh) {
      class_mask_.push_back(lane_mask[l]);
      class_count.push_back(0);
    }
    lane_class_[l] = it->second;
    ++class_count[it->second];
  }
  const std::size_t classes = class_mask_.size();
  class_begin_.resize(classes + 1, 0);
  for (std::size_t c = 0; c < classes; ++c) class_begin_[c + 1] = class_begin_[c] + class_count[c];
  class_size_.assign(classes, 0);
  class_heap_.assign(lanes, 0);
  thread_classes_begin_.resize(threads_ + 1, 0);
  for (std::size_t t = 0; t < threads_; ++t) {
    for (std::uint32_t c = 0; c < classes; ++c)
      if (class_mask_[c] >> t & 1) thread_classes_.push_back(c);
    thread_classes_begin_[t + 1] = static_cast<std::uint32_t>(thread_classes_.size());
  }

  // Groups -> lanes.
  running_.assign(groups_.size(), 0);
  std::vector<std::uint32_t> gcount(groups_.size(), 0);
  for (std::size_t l = 0; l < lanes; ++l) ++gcount[lane_group_[l]];
  group_lanes_begin_.resize(groups_.size() + 1, 0);
  for (std::size_t g = 0; g < groups_.size(); ++g) group_lanes_begin_[g + 1] = group_lanes_begin_[g] + gcount[g];
  group_lanes_.resize(lanes);
  std::vector<std::uint32_t> fill(group_lanes_begin_.begin(), group_lanes_begin_.end() - 1);
  for (std::size_t l = 0; l < lanes; ++l) group_lanes_[fill[lane_group_[l]]++] = static_cast<LaneId>(l);
}

void ReadyQueue::ordered(std::vector<CallbackId>& out) const {
  const std::size_t first = out.size();
  for (CallbackId c = 0; c < lane_pos_.size(); ++c)
    if (lane_pos_[c] != kAbsent) out.push_back(c);
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [this](CallbackId a, CallbackId b) { return key_[a] < key_[b]; });
}

}  // namespace chainrt::sched
