// chainrt sched: the readyQueue Ω and the dispatch decision, shared by the simulator (sim/)
// and the real executor (runtime/). It DECIDES, it never acts: no clocks, no threads, no
// locks, no callbacks are run here.
//
// Implements (EDF ready-queue paper, Sec. IV-A):
//  - Definition 1, the readyQueue: one queued instance per callback (footnote 4), ordered by a
//    pluggable ordering (footnote 2): EDF by the chain instance's absolute deadline
//    d_i^k = a_i^k + D_i (Sec. IV-B), fixed callback priority (PiCAS), mixed (callbacks with a
//    deadline first, Sec. VI-A Case Study 1), the ROS default order timer ≻ subscription ≻
//    service ≻ client (Sec. II) and LaME's priority-then-default order (LaME Sec. 4.1);
//    remaining ties are always broken by registration order (the CallbackId).
//  - Algorithm 1, callback selection with the skippedGroups rule: a thread takes the most
//    urgent queued callback whose mutually exclusive group is not running and whose affinity
//    mask (LaME Sec. 4.1, callback affinity) contains the thread. Callbacks of running groups
//    stay queued (they are R-blocked, not dropped, unlike the default readySet).
//
// Threading contract: not thread-safe by itself. All calls of one ReadyQueue happen under ONE
// lock held by the caller (the executor's readyQueue mutex). Group state changes (start via
// select(), complete()) happen under that same lock, so the set of running groups is frozen
// for the whole selection: this is exactly the skippedGroups rule of Algorithm 1 (a group seen
// running at any point of the search is skipped), without the Table II race.
//
// Cost: every storage is allocated in the constructor (sized by the callback count); push,
// remove, select and complete never allocate and never throw. push/remove are O(log n);
// select is O(k + log n) where k is the number of distinct affinity masks visible to the
// thread (1 without affinity): running groups are taken out of the selection structure when
// they start and put back when they complete, so selection never rescans blocked callbacks.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::sched {

using CallbackId = std::uint32_t;  // dense, in registration order (0 = registered first)
using GroupId = std::uint32_t;
using ThreadId = std::uint32_t;    // 0 .. threads-1 within one executor
using AffinityMask = std::uint64_t;  // bit t set: thread t may run the callback

inline constexpr CallbackId kNoCallback = std::numeric_limits<CallbackId>::max();
inline constexpr Duration kNoDeadline = std::numeric_limits<Duration>::max();
inline constexpr AffinityMask kAnyThread = ~AffinityMask{0};
inline constexpr std::size_t kMaxThreads = 64;

// What the ordering needs to know about one callback; fixed at registration.
struct CallbackSpec {
  CallbackKind kind = CallbackKind::Subscription;
  GroupId group = 0;
  std::optional<int> priority;       // fixed priority, larger = more important
  AffinityMask affinity = kAnyThread;
  // ros-default only: position among the callbacks of its kind in the executor's wait set, the
  // tie-break before registration order. 0 for all (the default) = registration order, as the
  // published models of the default executor assume (Casini et al. ECRTS 2019, Blass et al.
  // RTSS 2021, Teper et al. RTAS 2022); wait_set_order() draws rclcpp >= 28's order instead.
  std::uint32_t wait_set_position = 0;
};

struct GroupSpec {
  GroupType type = GroupType::MutuallyExclusive;
};

// Rank of a callback kind in the ROS default order (EDF ready-queue paper Sec. II):
// timer 0 ≻ subscription 1 (fusion callbacks are subscriptions) ≻ service 2 ≻ client 3.
inline int ros_default_rank(CallbackKind k) noexcept;

// The sort key of one queued instance; smaller is more urgent. Lexicographic on
// (tier, value, rank, id). See key_of() for what each policy puts in it.
struct Key {
  std::int64_t tier = 0;
  std::int64_t value = 0;
  std::int64_t rank = 0;
  CallbackId id = 0;
  friend bool operator<(const Key& a, const Key& b) noexcept {
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.value != b.value) return a.value < b.value;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.id < b.id;
  }
};

// An ordering: the key of one queued instance of `cb` (registration id `id`) whose chain
// instance has absolute deadline `abs_deadline` (kNoDeadline: none). Each policy's ordering is
// its descriptor's (sched/policy.hpp, sched/src/policies.cpp). Pure, never allocates.
using KeyFn = Key (*)(const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept;

// The ordering of `policy` (its descriptor's key), for callers outside a ReadyQueue.
Key key_of(Policy policy, const CallbackSpec& cb, CallbackId id, Duration abs_deadline) noexcept;

class ReadyQueue {
 public:
  // `threads` (<= 64) is the number of executor threads selecting from this queue.
  ReadyQueue(Policy policy, std::vector<CallbackSpec> callbacks, std::vector<GroupSpec> groups,
             std::size_t threads);

  Policy policy() const noexcept { return policy_; }
  std::size_t callback_count() const noexcept { return specs_.size(); }
  std::size_t thread_count() const noexcept { return threads_; }
  const CallbackSpec& spec(CallbackId cb) const noexcept { return specs_[cb]; }

  // Release: queue one instance of `cb` with the absolute deadline of its chain instance
  // (kNoDeadline when it has none). One queued instance per callback: when `cb` is already
  // queued nothing changes and false is returned (the queued instance is the older one).
  bool push(CallbackId cb, Duration abs_deadline = kNoDeadline) noexcept;
  // Withdraw a queued instance (the default executor's clearing). False when not queued.
  bool remove(CallbackId cb) noexcept;
  void clear() noexcept;

  bool queued(CallbackId cb) const noexcept { return lane_pos_[cb] != kAbsent; }
  Duration deadline(CallbackId cb) const noexcept { return deadline_[cb]; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // Algorithm 1: the most urgent queued callback that thread `t` may run now (group not
  // running, affinity contains t); it leaves the queue and its group becomes running.
  // kNoCallback when no queued callback is eligible for `t`.
  CallbackId select(ThreadId t) noexcept;
  // The same decision without taking it.
  CallbackId peek(ThreadId t) const noexcept;
  // Mark `cb` started without select() (an executor that picked it by its own rule, e.g. the
  // default executor's readySet scan). `cb` must not be queued.
  void start(CallbackId cb) noexcept;
  // The instance of `cb` finished: its mutually exclusive group becomes free again.
  void complete(CallbackId cb) noexcept;

  // Whether cb's group lets it start now (reentrant: always; mutually exclusive: no member
  // running). This is the "can_be_run()" of Algorithm 1, line 11.
  bool group_free(CallbackId cb) const noexcept;
  bool group_running(GroupId g) const noexcept { return running_[g] != 0; }

  // Queued callbacks in queue order (most urgent first), appended to `out` (which the caller
  // may reserve once). O(q log q); meant for tests, traces and the default executor's scans.
  void ordered(std::vector<CallbackId>& out) const;

 private:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();
  using LaneId = std::uint32_t;

  bool lane_less(LaneId a, LaneId b) const noexcept;
  // binary heaps with position indices
  void cb_sift_up(LaneId l, std::uint32_t i) noexcept;
  void cb_sift_down(LaneId l, std::uint32_t i) noexcept;
  void cb_erase(LaneId l, std::uint32_t i) noexcept;
  void class_insert(LaneId l) noexcept;
  void class_erase(LaneId l) noexcept;
  void class_update(LaneId l) noexcept;  // head of l changed
  void class_sift_up(std::uint32_t c, std::uint32_t i) noexcept;
  void class_sift_down(std::uint32_t c, std::uint32_t i) noexcept;
  bool lane_active(LaneId l) const noexcept;
  void lane_changed(LaneId l) noexcept;  // after an insert/erase in lane l
  CallbackId best_for(ThreadId t, LaneId* lane) const noexcept;

  Policy policy_;
  KeyFn key_fn_;  // the policy's ordering (its descriptor's key)
  std::size_t threads_;
  std::vector<CallbackSpec> specs_;
  std::vector<GroupSpec> groups_;
  std::size_t size_ = 0;

  // per callback
  std::vector<Key> key_;
  std::vector<Duration> deadline_;
  std::vector<LaneId> lane_of_;
  std::vector<std::uint32_t> lane_pos_;  // index in its lane heap, kAbsent when not queued

  // Lanes: one per (mutually exclusive group, affinity mask), one per reentrant callback.
  // Each lane is a heap of its queued callbacks; a lane is "active" when non-empty and its
  // group is not running; active lanes sit in their affinity class's heap keyed by head.
  std::vector<std::uint32_t> lane_begin_;    // slice of lane_heap_ storage
  std::vector<std::uint32_t> lane_size_;
  std::vector<CallbackId> lane_heap_;
  std::vector<GroupId> lane_group_;
  std::vector<std::uint32_t> lane_class_;
  std::vector<std::uint32_t> class_pos_;     // index of the lane in its class heap or kAbsent

  // Affinity classes: distinct masks; each a heap of active lanes.
  std::vector<AffinityMask> class_mask_;
  std::vector<std::uint32_t> class_begin_;
  std::vector<std::uint32_t> class_size_;
  std::vector<LaneId> class_heap_;
  std::vector<std::uint32_t> thread_classes_begin_;  // classes visible to thread t (CSR)
  std::vector<std::uint32_t> thread_classes_;

  // per group
  std::vector<std::uint32_t> running_;          // running instances of the group
  std::vector<std::uint32_t> group_lanes_begin_;  // lanes of the group (CSR)
  std::vector<LaneId> group_lanes_;
};


// ---- inline definitions: the dispatch path is hot in the simulator and the runtime ----------

inline int ros_default_rank(CallbackKind k) noexcept {
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

// ---- lane heaps (callbacks of one lane, by key) ----------------------------------------

inline void ReadyQueue::cb_sift_up(LaneId l, std::uint32_t i) noexcept {
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

inline void ReadyQueue::cb_sift_down(LaneId l, std::uint32_t i) noexcept {
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

inline void ReadyQueue::cb_erase(LaneId l, std::uint32_t i) noexcept {
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

inline bool ReadyQueue::lane_less(LaneId a, LaneId b) const noexcept {
  return key_[lane_heap_[lane_begin_[a]]] < key_[lane_heap_[lane_begin_[b]]];
}

inline void ReadyQueue::class_sift_up(std::uint32_t c, std::uint32_t i) noexcept {
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

inline void ReadyQueue::class_sift_down(std::uint32_t c, std::uint32_t i) noexcept {
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

inline void ReadyQueue::class_insert(LaneId l) noexcept {
  const std::uint32_t c = lane_class_[l];
  const std::uint32_t i = class_size_[c]++;
  class_heap_[class_begin_[c] + i] = l;
  class_pos_[l] = i;
  class_sift_up(c, i);
}

inline void ReadyQueue::class_erase(LaneId l) noexcept {
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

inline void ReadyQueue::class_update(LaneId l) noexcept {
  const std::uint32_t c = lane_class_[l];
  class_sift_up(c, class_pos_[l]);
  class_sift_down(c, class_pos_[l]);
}

inline bool ReadyQueue::lane_active(LaneId l) const noexcept {
  if (lane_size_[l] == 0) return false;
  const GroupId g = lane_group_[l];
  return groups_[g].type == GroupType::Reentrant || running_[g] == 0;
}

inline void ReadyQueue::lane_changed(LaneId l) noexcept {
  const bool active = lane_active(l);
  const bool present = class_pos_[l] != kAbsent;
  if (active && present) class_update(l);
  else if (active) class_insert(l);
  else if (present) class_erase(l);
}

// ---- the interface ---------------------------------------------------------------------

inline bool ReadyQueue::push(CallbackId cb, Duration abs_deadline) noexcept {
  if (lane_pos_[cb] != kAbsent) return false;  // one queued instance per callback
  deadline_[cb] = abs_deadline;
  key_[cb] = key_fn_(specs_[cb], cb, abs_deadline);
  const LaneId l = lane_of_[cb];
  const std::uint32_t i = lane_size_[l]++;
  lane_heap_[lane_begin_[l] + i] = cb;
  cb_sift_up(l, i);
  ++size_;
  lane_changed(l);
  return true;
}

inline bool ReadyQueue::remove(CallbackId cb) noexcept {
  if (lane_pos_[cb] == kAbsent) return false;
  const LaneId l = lane_of_[cb];
  cb_erase(l, lane_pos_[cb]);
  --size_;
  lane_changed(l);
  return true;
}

inline void ReadyQueue::clear() noexcept {
  // O(queued + lanes): only the lanes that hold callbacks are touched.
  for (LaneId l = 0; l < lane_size_.size(); ++l) {
    const CallbackId* h = lane_heap_.data() + lane_begin_[l];
    for (std::uint32_t i = 0; i < lane_size_[l]; ++i) lane_pos_[h[i]] = kAbsent;
    lane_size_[l] = 0;
    class_pos_[l] = kAbsent;
  }
  for (auto& n : class_size_) n = 0;
  size_ = 0;
}

inline CallbackId ReadyQueue::best_for(ThreadId t, LaneId* lane) const noexcept {
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

inline CallbackId ReadyQueue::peek(ThreadId t) const noexcept {
  if (t >= threads_) return kNoCallback;
  return best_for(t, nullptr);
}

inline CallbackId ReadyQueue::select(ThreadId t) noexcept {
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

inline void ReadyQueue::start(CallbackId cb) noexcept {
  const GroupId g = specs_[cb].group;
  if (running_[g]++ != 0 || groups_[g].type != GroupType::MutuallyExclusive) return;
  for (std::uint32_t k = group_lanes_begin_[g]; k < group_lanes_begin_[g + 1]; ++k) {
    const LaneId l = group_lanes_[k];
    if (class_pos_[l] != kAbsent) class_erase(l);
  }
}

inline void ReadyQueue::complete(CallbackId cb) noexcept {
  const GroupId g = specs_[cb].group;
  if (running_[g] == 0) return;
  if (--running_[g] != 0 || groups_[g].type != GroupType::MutuallyExclusive) return;
  for (std::uint32_t k = group_lanes_begin_[g]; k < group_lanes_begin_[g + 1]; ++k) lane_changed(group_lanes_[k]);
}

inline bool ReadyQueue::group_free(CallbackId cb) const noexcept {
  const GroupId g = specs_[cb].group;
  return groups_[g].type == GroupType::Reentrant || running_[g] == 0;
}

}  // namespace chainrt::sched
