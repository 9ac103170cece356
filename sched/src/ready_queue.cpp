// chainrt sched: readyQueue Ω and Algorithm 1 of the EDF ready-queue paper (Sec. IV-A), with
// the pluggable orderings of footnote 2 and LaME's affinity masks (Sec. 4.1). See
// ready_queue.hpp for the data-structure argument (lanes per group and affinity, heaps of
// active lanes per affinity class).
#include "chainrt/sched/ready_queue.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace chainrt::sched {

int ros_default_rank(CallbackKind k) noexcept {
  switch (k) {
    case CallbackKind::Timer: return 0;
    case CallbackKind::Subscription:
    case CallbackKind::FusionInput:
    case CallbackKind::FusionTrigger: return 1;
    case CallbackKind::Service: return 2;
    case CallbackKind::Client: return 3;
  }
  return 4;
}

Key key_of(Policy policy, const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept {
  Key k;
  k.id = id;
  const bool has_deadline = abs_deadline != kNoDeadline;
  switch (policy) {
    case Policy::RosDefault:
      k.value = ros_default_rank(cb.kind);
      break;
    case Policy::FixedPriority:
    case Policy::Picas:
      if (cb.priority) k.value = -static_cast<std::int64_t>(*cb.priority);
      else k.tier = 1;  // no scheduling parameter: last (footnote 3)
      break;
    case Policy::Edf:  // d_i^k = a_i^k + D_i (Sec. IV-B)
      if (has_deadline) k.value = abs_deadline;
      else k.tier = 1;
      break;
    case Policy::Mixed:  // deadline callbacks always take precedence (Sec. VI-A)
      if (has_deadline) {
        k.value = abs_deadline;
      } else if (cb.priority) {
        k.tier = 1;
        k.value = -static_cast<std::int64_t>(*cb.priority);
      } else {
        k.tier = 2;
        k.value = ros_default_rank(cb.kind);
      }
      break;
    case Policy::Lame:  // RT: highest priority; BE (priority 0): first in default order
      k.value = -static_cast<std::int64_t>(cb.priority.value_or(0));
      k.rank = ros_default_rank(cb.kind);
      break;
  }
  return k;
}

ReadyQueue::ReadyQueue(Policy policy, std::vector<CallbackSpec> callbacks,
                       std::vector<GroupSpec> groups, std::size_t threads)
    : policy_(policy), threads_(threads), specs_(std::move(callbacks)), groups_(std::move(groups)) {
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

// ---- lane heaps (callbacks of one lane, by key) ----------------------------------------

void ReadyQueue::cb_sift_up(LaneId l, std::uint32_t i) noexcept {
  CallbackId* h = lane_heap_.data() + lane_begin_[l];
  const CallbackId x = h[i];
  while (i > 0) {
    std::uint32_t p = (i - 1) / 2;
    if (!(key_[x] < key_[h[p]])) break;
    h[i] = h[p];
    lane_pos_[h[i]] = i;
    i = p;
  }
  h[i] = x;
  lane_pos_[x] = i;
}

void ReadyQueue::cb_sift_down(LaneId l, std::uint32_t i) noexcept {
  CallbackId* h = lane_heap_.data() + lane_begin_[l];
  const std::uint32_t n = lane_size_[l];
  const CallbackId x = h[i];
  for (;;) {
    std::uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && key_[h[c + 1]] < key_[h[c]]) ++c;
    if (!(key_[h[c]] < key_[x])) break;
    h[i] = h[c];
    lane_pos_[h[i]] = i;
    i = c;
  }
  h[i] = x;
  lane_pos_[x] = i;
}

void ReadyQueue::cb_erase(LaneId l, std::uint32_t i) noexcept {
  CallbackId* h = lane_heap_.data() + lane_begin_[l];
  const CallbackId gone = h[i];
  const std::uint32_t last = --lane_size_[l];
  lane_pos_[gone] = kAbsent;
  if (i != last) {
    const CallbackId moved = h[last];
    h[i] = moved;
    lane_pos_[moved] = i;
    cb_sift_up(l, i);
    if (lane_pos_[moved] == i) cb_sift_down(l, i);
  }
}

// ---- class heaps (active lanes of one affinity class, by head key) ----------------------

bool ReadyQueue::lane_less(LaneId a, LaneId b) const noexcept {
  return key_[lane_heap_[lane_begin_[a]]] < key_[lane_heap_[lane_begin_[b]]];
}

void ReadyQueue::class_sift_up(std::uint32_t c, std::uint32_t i) noexcept {
  LaneId* h = class_heap_.data() + class_begin_[c];
  const LaneId x = h[i];
  while (i > 0) {
    std::uint32_t p = (i - 1) / 2;
    if (!lane_less(x, h[p])) break;
    h[i] = h[p];
    class_pos_[h[i]] = i;
    i = p;
  }
  h[i] = x;
  class_pos_[x] = i;
}

void ReadyQueue::class_sift_down(std::uint32_t c, std::uint32_t i) noexcept {
  LaneId* h = class_heap_.data() + class_begin_[c];
  const std::uint32_t n = class_size_[c];
  const LaneId x = h[i];
  for (;;) {
    std::uint32_t k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && lane_less(h[k + 1], h[k])) ++k;
    if (!lane_less(h[k], x)) break;
    h[i] = h[k];
    class_pos_[h[i]] = i;
    i = k;
  }
  h[i] = x;
  class_pos_[x] = i;
}

void ReadyQueue::class_insert(LaneId l) noexcept {
  const std::uint32_t c = lane_class_[l];
  const std::uint32_t i = class_size_[c]++;
  class_heap_[class_begin_[c] + i] = l;
  class_pos_[l] = i;
  class_sift_up(c, i);
}

void ReadyQueue::class_erase(LaneId l) noexcept {
  const std::uint32_t c = lane_class_[l];
  LaneId* h = class_heap_.data() + class_begin_[c];
  const std::uint32_t i = class_pos_[l];
  const std::uint32_t last = --class_size_[c];
  class_pos_[l] = kAbsent;
  if (i != last) {
    const LaneId moved = h[last];
    h[i] = moved;
    class_pos_[moved] = i;
    class_sift_up(c, i);
    if (class_pos_[moved] == i) class_sift_down(c, i);
  }
}

void ReadyQueue::class_update(LaneId l) noexcept {
  const std::uint32_t c = lane_class_[l];
  class_sift_up(c, class_pos_[l]);
  class_sift_down(c, class_pos_[l]);
}

bool ReadyQueue::lane_active(LaneId l) const noexcept {
  if (lane_size_[l] == 0) return false;
  const GroupId g = lane_group_[l];
  return groups_[g].type == GroupType::Reentrant || running_[g] == 0;
}

void ReadyQueue::lane_changed(LaneId l) noexcept {
  const bool active = lane_active(l);
  const bool present = class_pos_[l] != kAbsent;
  if (active && present) class_update(l);
  else if (active) class_insert(l);
  else if (present) class_erase(l);
}

// ---- the interface ---------------------------------------------------------------------

bool ReadyQueue::push(CallbackId cb, Duration abs_deadline) noexcept {
  if (lane_pos_[cb] != kAbsent) return false;  // one queued instance per callback
  deadline_[cb] = abs_deadline;
  key_[cb] = key_of(policy_, specs_[cb], cb, abs_deadline);
  const LaneId l = lane_of_[cb];
  const std::uint32_t i = lane_size_[l]++;
  lane_heap_[lane_begin_[l] + i] = cb;
  cb_sift_up(l, i);
  ++size_;
  lane_changed(l);
  return true;
}

bool ReadyQueue::remove(CallbackId cb) noexcept {
  if (lane_pos_[cb] == kAbsent) return false;
  const LaneId l = lane_of_[cb];
  cb_erase(l, lane_pos_[cb]);
  --size_;
  lane_changed(l);
  return true;
}

void ReadyQueue::clear() noexcept {
  for (CallbackId c = 0; c < lane_pos_.size(); ++c) lane_pos_[c] = kAbsent;
  std::fill(lane_size_.begin(), lane_size_.end(), 0);
  std::fill(class_size_.begin(), class_size_.end(), 0);
  std::fill(class_pos_.begin(), class_pos_.end(), kAbsent);
  size_ = 0;
}

CallbackId ReadyQueue::best_for(ThreadId t, LaneId* lane) const noexcept {
  CallbackId best = kNoCallback;
  LaneId best_lane = 0;
  for (std::uint32_t k = thread_classes_begin_[t]; k < thread_classes_begin_[t + 1]; ++k) {
    const std::uint32_t c = thread_classes_[k];
    if (class_size_[c] == 0) continue;
    const LaneId l = class_heap_[class_begin_[c]];
    const CallbackId head = lane_heap_[lane_begin_[l]];
    if (best == kNoCallback || key_[head] < key_[best]) {
      best = head;
      best_lane = l;
    }
  }
  if (lane) *lane = best_lane;
  return best;
}

CallbackId ReadyQueue::peek(ThreadId t) const noexcept {
  if (t >= threads_) return kNoCallback;
  return best_for(t, nullptr);
}

CallbackId ReadyQueue::select(ThreadId t) noexcept {
  if (t >= threads_) return kNoCallback;
  LaneId l;
  const CallbackId cb = best_for(t, &l);
  if (cb == kNoCallback) return kNoCallback;
  cb_erase(l, 0);
  --size_;
  lane_changed(l);
  start(cb);
  return cb;
}

void ReadyQueue::start(CallbackId cb) noexcept {
  const GroupId g = specs_[cb].group;
  if (running_[g]++ != 0 || groups_[g].type != GroupType::MutuallyExclusive) return;
  for (std::uint32_t k = group_lanes_begin_[g]; k < group_lanes_begin_[g + 1]; ++k) {
    const LaneId l = group_lanes_[k];
    if (class_pos_[l] != kAbsent) class_erase(l);
  }
}

void ReadyQueue::complete(CallbackId cb) noexcept {
  const GroupId g = specs_[cb].group;
  if (running_[g] == 0) return;
  if (--running_[g] != 0 || groups_[g].type != GroupType::MutuallyExclusive) return;
  for (std::uint32_t k = group_lanes_begin_[g]; k < group_lanes_begin_[g + 1]; ++k) lane_changed(group_lanes_[k]);
}

bool ReadyQueue::group_free(CallbackId cb) const noexcept {
  const GroupId g = specs_[cb].group;
  return groups_[g].type == GroupType::Reentrant || running_[g] == 0;
}

void ReadyQueue::ordered(std::vector<CallbackId>& out) const {
  const std::size_t first = out.size();
  for (CallbackId c = 0; c < lane_pos_.size(); ++c)
    if (lane_pos_[c] != kAbsent) out.push_back(c);
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [this](CallbackId a, CallbackId b) { return key_[a] < key_[b]; });
}

}  // namespace chainrt::sched
