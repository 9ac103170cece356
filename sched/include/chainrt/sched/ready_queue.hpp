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
//    ties are always broken by registration order (the CallbackId).
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
};

struct GroupSpec {
  GroupType type = GroupType::MutuallyExclusive;
};

// Rank of a callback kind in the ROS default order (EDF ready-queue paper Sec. II):
// timer 0 ≻ subscription 1 (fusion callbacks are subscriptions) ≻ service 2 ≻ client 3.
int ros_default_rank(CallbackKind k) noexcept;

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

// The orderings (one function, no class per paper):
//  ros-default: (0, kind rank, 0, id)
//  fp, picas:   (0, -priority, 0, id); callbacks without a priority last (tier 1)
//  edf:         (0, absolute deadline, 0, id); callbacks without a deadline last (tier 1)
//  mixed:       deadline callbacks first by deadline (tier 0), then fixed-priority ones by
//               priority (tier 1), then the rest in ROS default order (tier 2)
//  lame:        (0, -priority (missing = 0, as LaME's BE callbacks), kind rank, id): RT
//               threads get the highest priority; among the equal-priority BE callbacks this
//               is the ROS default order, so a BE thread takes the "first eligible" one.
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

}  // namespace chainrt::sched
