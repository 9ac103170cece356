// The chain response-time engine behind edf-mt, fp-mt and picas-st.
//
// Source: EDF ready-queue paper (Al Arafat et al., TCAD 2024), Sec. V: Theorem 1 (Eq. 8-9,
// after Zhou et al. TECS 2019, GEDF with fixed preemption points) and Theorem 2 (Eq. 10-12,
// mutually exclusive group blocking, Lemma 5); for the supply side LaME Sec. 4.2 Theorem 1
// (Sobhani et al. RTAS 2023: dbf(Δ) < sbf_Π(Δ), R = Δ + sbf⁻¹(e_last − 1)).
//
// Why not the published formulas verbatim: the extracted Lemma 2 (carry-in interference,
// terms D and E) is garbled, the range of A_k in Eq. 8 is not given, and two steps do not
// hold for the executor we simulate: (1) Theorem 2 adds one group blocking per callback
// (Eq. 10), but a callback can wait for SEVERAL earlier-deadline callbacks of its group while
// m−1 threads idle (three chains of one group released together on m = 4 threads: the last
// one waits for the other two, which Eq. 11 counts only as ⌊Ψ/m⌋); (2) lower-priority
// callbacks that start while the chain's previous callback runs can block it again at every
// callback boundary, not only once. So we re-derive the bound with the same structure (the
// "problem window" from the chain's release, the time the last callback needs to START,
// Eq. 9's R = t' + e_last − 1) and safe interference terms, and we say so here.
//
// Derivation (integer time, chain instance J of task k, segment released at a):
// every instant of [a, s_last) (s_last: start of the segment's last callback) is one of
//   (1) J executing one of its earlier callbacks        — at most E' = Σ_{j<q} e_j in total
//   (2) J suspended in an intra-executor hop             — at most S = Σ hop costs
//   (3) J's ready callback c blocked by its mutually exclusive group g (readyQueue Case B; the
//       group is handed over only at a completion, to the most urgent queued member): at most
//       one member of any rank is running when c becomes ready (B_g, its largest WCET — the
//       refined Lemma 5), after that only members that outrank c (FP: priority >= c's; EDF:
//       deadline <= d_k) run first — their full workload, NOT divided by m (see (1) above)
//   (4) J's callback eligible but not running: then every thread that may run it is busy
//       (the readyQueue is refreshed before every selection, so an idle thread would take it).
// During (4) the threads run (a) work that outranks J (EDF: jobs with deadline <= d_k, at most
// min(W_i(x), I^EDF_i) per chain; FP: callbacks with priority >= J's lowest; W_i is the
// carry-in workload N·C + min(C, x + R_i − C − N·T) of a chain whose instance work lies in
// [r, r + R_i]) or (b) lower-ranked callbacks that started before the current "eligibility
// event" of J. Events are J's release and the end of each hop delay ("full": up to m
// lower-ranked callbacks may be running), and each callback boundary without delay and each
// group hand-over ("charged": the thread that just finished is free, so J waits only if that
// thread starts an outranking callback at that instant — so there are at most as many as
// outranking executions in the window — and at most m − 1 lower-ranked callbacks are running).
// A chain runs one callback at a time (w_i at most), and never more than its workload W_i(x):
// its share e_i of (4) obeys e_i <= min(I_i + L_i, W_i(x), w_i·|(4)|), with L_i its blocking
// (one blocker per event, at most the lower-ranked jobs it can have in the window); the
// blocking of all chains together is at most the `slots` largest blocker executions.
// With Bertogna & Cirinei's lemma (if Σ I^i >= m·X and every I^i <= X then Σ min(I^i, y) >= m·y
// for y <= X) the last callback has started before a + x whenever
//     E' + S + G(x) + ⌊Ψ(x) / m⌋ + 1 <= x                                               (cf. Eq. 8/11)
//     Ψ(x) = Σ_i min(I_i, M_i) + min(LP_cross, Σ_i min(L_i, M_i − min(I_i, M_i))),  M_i = min(W_i(x), w_i·(x − E' − S))
// and R_seg = x − 1 + e_last                                                          (Eq. 9/12).
// On reserved threads (SCHED_DEADLINE) the per-chain caps are dropped and the supply form is
// used: m·(E'_w + S + G(x)) + Ψ_∞(x) < sbf_Π(x), R_seg = x − 1 + sbf⁻¹(e_last),
// with E'_w = Σ sbf⁻¹(e_j): any window of x time units carries >= sbf_Π(x) supply; supply
// outside (4) is at most m per instant, inside (4) it is all spent on other work.
// A branching chain on one executor is analysed to its completion (E' = all its work,
// e_last = 0); one that spans executors path by path (Task::paths: each path piece in the start
// form, the chain's other branches as parallel own work; the holistic driver takes the largest
// path bound). Other chains' work that may run on p > 1 threads at once (fan-out, branches)
// uses the parallel carry-in form (carry_in_workload, workload.hpp). The bound assumes R_k <= T_k (no two instances of a chain overlap), which the
// holistic driver checks.
#include "chain_rta.hpp"
#include "fixed_point.hpp"
#include "join_wait.hpp"
#include "rta_terms.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <set>

namespace chainrt::detail {

namespace {

// What a segment bound sees of another chain i (time (4) of the derivation): its work on the
// segment's threads, which part of it can interfere after an eligibility event, and which can
// only block.
struct Other {
  Duration C_all = 0;         // all its work that may run on the segment's threads
  Duration C_hp = 0;          // work that may interfere after an eligibility event
  Duration n_hp = 0;          // number of those callbacks
  bool edf_limited = false;   // EDF: interference also limited by I^EDF
  std::vector<Duration> blockers;  // callbacks that can only block (sorted, largest first)
  Duration R = 0, T = 1, D = 0;  // D: the earliest relative key of its work (Task::key_lo)
  Duration D_blk = 0;             // the latest (Task::key_hi): how late a blocker job can be keyed
  int width = 1;
  Duration par = 1;               // threads its work may occupy at once: min(width, m)
  bool bounded = true;
  std::vector<Duration> deltas;   // its releases relative to J's (relative_phases); empty: any phase
};

// Group work of one chain in one of J's mutually exclusive groups (time (3)).
struct GroupWork {
  Duration C = 0, cnt = 0, R = 0, T = 1, D = 0;
  bool edf_limited = false;
  std::vector<Duration> deltas;   // as Other::deltas
};

// Work of other executors' threads on the segment's cores (time (5)): a chain's callbacks
// there, inside [r, r + R] of each instance.
struct ForeignWork {
  Duration C = 0, R = 0, T = 1;
  std::vector<Duration> deltas;   // as Other::deltas
};

// One segment's bound (global_segment_bound): the state the terms share, set up once by the
// classification steps and read by the demand functions f1 (Eq. 8/11) and f2 (the phase
// argument) at every point x of the fixed-point search. Not thread-safe; allocates in setup.
class SegmentRta {
 public:
  // low_fan_out_blocks: J's own fan-out ranked below the segment is charged as blocking
  // (classify_others) rather than as J's own work; either is sound (global_segment_bound).
  SegmentRta(const View& v, Order order, int k, const Segment& seg, const Windows& W, Duration arrival,
             Duration limit, bool low_fan_out_blocks = true)
      : v_(v), order_(order), k_(k), seg_(seg), W_(W), arrival_(arrival), limit_(limit), tk_(v.tasks[k]),
        Dk_(tk_.key_hi), X_(seg.executor), low_fan_out_blocks_(low_fan_out_blocks) {}

  // Whether classify_others charged some of J's own fan-out as blocking.
  bool fan_out_blocked() const { return fan_out_blocked_; }

  std::optional<Duration> bound() {
    if (!select_threads()) return std::nullopt;
    own_groups();
    if (!classify_others()) return std::nullopt;
    if (!collect_foreign()) return std::nullopt;
    setup_platform();
    if (!own_lengths()) return std::nullopt;
    prepare_blockers();
    return dedicated_ ? dedicated_bound() : reserved_bound();
  }

 private:
  struct Eval {
    Duration f1, f2, G;
  };
  struct Terms {
    Duration I = 0, L = 0, W = 0;
  };
  struct Frozen {  // one chain's terms on the envelope (jump)
    EnvelopePiece I, W;
    bool W_unbounded = false;
    Duration L = 0, w = 1;
  };

  bool select_threads();
  void own_groups();
  int group_index(int g) const;
  bool on_foreign(int c) const;
  bool on_segment_threads(int c) const;
  bool own_fan_out_below(const CbInfo& cb) const;
  bool skip_shadow(std::size_t i) const { return v_.tasks[i].shadow_of == k_ && !seg_.after_join; }
  bool group_outranks(const Task& ti, const CbInfo& cb, int gi) const;
  bool counts(const Task& ti, int c) const;
  void block_only(int c, std::vector<Duration>& tail);
  void add_tail(const Task& ti, const std::vector<Duration>& tail);
  bool classify_others();
  bool classify_own_earlier(std::size_t i);
  bool classify_task(std::size_t i);
  bool collect_foreign();
  void setup_platform();
  bool own_lengths();
  void prepare_blockers();
  Duration platform_at(Duration x) const;
  Duration foreign_at(Duration x) const;
  Duration workload(Duration x, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited,
                    Duration p = 1, const std::vector<Duration>* deltas = nullptr) const;
  EnvelopePiece piece(Duration x0, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited, Duration p,
                      const std::vector<Duration>& deltas) const;
  Duration carry_in(Duration x, Duration C, Duration Ri, Duration Ti, Duration p,
                    const std::vector<Duration>& deltas) const;
  std::vector<Duration> phases_of(std::size_t i) const;
  Duration group_terms(Duration x);
  Duration hp_jobs(const Other& o, Duration x) const;
  void evaluate(Duration x);
  Duration lp_cross_upto(Duration enough) { return largest_blockers_sum(seqs_, slots_now_, enough, heads_); }
  template <class RoomOf>
  Duration combine(RoomOf room_of);
  Eval eval(Duration x);
  Duration jump(Duration x0, const Eval& e0);
  std::optional<Duration> dedicated_bound();
  std::optional<Duration> reserved_bound();

  const View& v_;
  const Order order_;
  const int k_;
  const Segment& seg_;
  const Windows& W_;
  const Duration arrival_;  // the segment's latest arrival after J's release (offset-based interference)
  const Duration limit_;
  const Task& tk_;
  const Duration Dk_;  // EDF: J's pending work is keyed at most a + Dk (Task::key_hi)
  const int X_;
  const bool low_fan_out_blocks_;
  bool fan_out_blocked_ = false;

  // threads
  std::uint64_t mask_ = ~std::uint64_t{0};
  std::vector<const Supply*> threads_;
  Duration m_ = 0;
  bool dedicated_ = true;
  std::vector<View::ThreadRef> foreign_;
  // J's mutually exclusive groups
  int minprio_ = INT_MAX;
  std::vector<int> groups_;
  std::vector<Duration> qg_;
  std::vector<int> gminprio_;
  int g0_ = -1;
  std::size_t ng_ = 0;
  std::vector<Duration> Bg_;
  std::vector<bool> fallback_;
  std::vector<std::vector<GroupWork>> ghp_, gall_;
  std::vector<Duration> own_group_C_;
  // other chains
  std::vector<Other> others_;
  std::vector<std::vector<std::vector<Duration>>> gblockers_;  // [other][group] sorted
  Duration own_extra_ = 0, own_extra_n_ = 0;
  std::vector<int> own_side_;
  std::vector<Duration> Rwin_;
  std::vector<int> tail_foreign_;
  // foreign work and the platform
  std::vector<ForeignWork> fwork_;
  std::vector<std::pair<int, Duration>> frate_;  // callbacks of chains without a bound: (callback, WCET)
  Duration own_foreign_ = 0;
  const std::vector<BlackoutPoint>* curve_ = nullptr;
  Duration platform_cores_ = 0;
  // J's own work
  std::size_t q_ = 0;
  bool completion_mode_ = false;
  Duration E1_ = 0, elast_ = 0, S_ = 0, elast_span_ = 0;
  // eligibility events and blockers
  Duration full_events_ = 0, quiet_boundaries_ = 0;
  std::vector<Duration> hprel_;
  Duration hprel_total_ = 0, hprel_fallback_ = 0;
  std::vector<Terms> terms_;
  std::vector<std::vector<Duration>> pre_free_;
  std::vector<std::vector<std::vector<Duration>>> pre_group_;
  std::vector<BlockerRun> seqs_;
  std::vector<Duration> heads_, firsts_;
  Duration ev_full_ = 0, ev_charged_ = 0, slots_now_ = 0, rho_full_ = 0, rho_charged_ = 0;
  // envelope scratch
  std::vector<Frozen> fz_;
  std::vector<EnvelopePiece> gz_;
};

// The threads that may run every callback of the segment (their mask), whether they are
// dedicated (no reservation below a full budget), and the threads of other executors that share
// their cores and may preempt or run ahead of them (PiCAS: executors sharing a core, ordered by
// SCHED_FIFO priority). False: no supply bound.
bool SegmentRta::select_threads() {
  for (int c : seg_.cbs) mask_ &= v_.cbs[c].threads;
  for (std::size_t t = 0; t < v_.supply[X_].size() && t < 64; ++t)
    if (mask_ & (std::uint64_t{1} << t)) threads_.push_back(&v_.supply[X_][t]);
  m_ = static_cast<Duration>(threads_.size());
  if (m_ == 0) return false;
  for (std::size_t t = 0; t < v_.supply[X_].size() && t < 64; ++t)
    if ((mask_ >> t & 1) && v_.thread_shared[X_][t]) {
      if (!v_.foreign_ok[X_][t]) return false;  // no supply bound
      for (const auto& f : v_.foreign[X_][t])
        if (std::none_of(foreign_.begin(), foreign_.end(),
                         [&](const View::ThreadRef& g) { return g.executor == f.executor && g.thread == f.thread; }))
          foreign_.push_back(f);
    }
  for (auto* s : threads_)
    if (s->reservation && s->reservation->budget < s->reservation->period) dedicated_ = false;
  return true;
}

// J's lowest priority, its mutually exclusive groups, how many of its callbacks are in each and
// the lowest priority among them; g0: all of the segment in one group (then group-mates delay J
// only through the group, time (3), never while J's callback is eligible, time (4)).
//
// Deviation from Eq. 10-11 (Thm 2), on an executor with one thread: all members of a group run
// on that thread (a group belongs to a node, a node to one executor), so the group is busy only
// while the thread runs one of them, and the schedule is the one the same executor gives without
// groups. Time (3) is then empty — a member that delays J's ready callback occupies J's only
// thread, time (4), where it is charged as interference (outranking J's lowest callback) or as
// blocking like any other callback — and the groups are left out. Eq. 10's B_g on top of that
// charged the largest member once more per callback of J in the group, and its rule of which
// members count (priority >= J's callbacks *in the group*) hid members that outrank J's earlier
// callbacks in the ready queue (tests/python/data/picas_st_counterexample.yaml: a single-threaded
// PiCAS executor ran another chain's group-mates of priorities 4 and 7 ahead of J's first
// callback, priority 4, whose group-mate had priority 8).
// A callback waiting on a shared accelerator keeps this rule true (model/accelerator.hpp): in
// direct mode its thread stays blocked inside the member, and the wait is charged here as the
// member's execution (suspension-oblivious, accelerator.cpp), so the group is held exactly while
// the thread "runs" the member; in server mode the member's piece ends at the request — the
// simulator frees the thread and the group then (complete_exec issues the request as the piece's
// output) — and the rest is a continuation piece of its own, released after the request's
// response bound (a delayed hop), which takes the group again like any other member.
void SegmentRta::own_groups() {
  for (int c : seg_.cbs) minprio_ = std::min(minprio_, v_.cbs[c].prio);
  const bool one_thread = v_.supply[X_].size() == 1;
  for (int c : seg_.cbs) {
    const int g = v_.cbs[c].mutex_group;
    if (g < 0 || one_thread) continue;
    auto it = std::find(groups_.begin(), groups_.end(), g);
    if (it == groups_.end()) {
      groups_.push_back(g);
      qg_.push_back(1);
      gminprio_.push_back(v_.cbs[c].prio);
    } else {
      qg_[it - groups_.begin()]++;
      gminprio_[it - groups_.begin()] = std::min(gminprio_[it - groups_.begin()], v_.cbs[c].prio);
    }
  }
  g0_ = (groups_.size() == 1 && qg_[0] == static_cast<Duration>(seg_.cbs.size())) ? groups_[0] : -1;
  ng_ = groups_.size();
  Bg_.assign(ng_, 0);
  fallback_.assign(ng_, false);
  ghp_.assign(ng_, {});
  gall_.assign(ng_, {});
  own_group_C_.assign(ng_, 0);
}

int SegmentRta::group_index(int g) const {
  if (g < 0) return -1;
  auto it = std::find(groups_.begin(), groups_.end(), g);
  return it == groups_.end() ? -1 : static_cast<int>(it - groups_.begin());
}

bool SegmentRta::on_foreign(int c) const {
  for (const auto& f : foreign_)
    if (v_.cbs[c].executor == f.executor && (v_.cbs[c].threads >> f.thread & 1)) return true;
  return false;
}

// A callback of J's own fan-out that never outranks J's segment: FP — a priority below all of
// the segment's; EDF — J's callbacks all keyed with the instance's deadline (key_lo = key_hi:
// no merge) and the fan-out, stamped with the same one in the runtime (none in the simulator:
// last), below all of them in priority, which breaks equal deadlines (sched key_of).
bool SegmentRta::own_fan_out_below(const CbInfo& cb) const {
  if (cb.prio == kNoPriority || minprio_ == kNoPriority || cb.prio >= minprio_) return false;
  return order_ == Order::FixedPriority || (tk_.has_deadline && tk_.key_lo == tk_.key_hi);
}

bool SegmentRta::on_segment_threads(int c) const { return v_.cbs[c].executor == X_ && (v_.cbs[c].threads & mask_); }

// A group-mate of task i that outranks J's callbacks of group gi (FP: priority >= their
// lowest; EDF: keyed with a deadline).
bool SegmentRta::group_outranks(const Task& ti, const CbInfo& cb, int gi) const {
  return order_ == Order::FixedPriority ? cb.prio >= gminprio_[gi] : (!tk_.has_deadline || ti.has_deadline);
}

// R_work, priority-aware (Windows): the callbacks of task i that can delay J other than by
// blocking — on the segment's threads and outranking J (FP: priority >= J's lowest; EDF: any
// with a deadline, keyed at most as late as J's) or in one of J's groups. Those must lie in a
// bounded window of i's instance; the rest of i's work without an end bound (a fan-out at the
// lowest priorities, say) can only block J, at most once per eligibility event and thread,
// however many instances of it are pending — or, on a foreign thread of the segment's cores,
// preempt it as often as its releases allow (executions_in_window, collect_foreign).
// A member of one of J's groups counts through its group (time (3)) AND, like any callback on
// the segment's threads, through the ready queue (time (4)): a group-mate ranked below J's
// callbacks of that group (FP: priority < theirs) may still outrank J's lowest callback and
// run ahead of J's earlier callbacks, as classify_task charges it (counted_work, rta_terms.hpp).
bool SegmentRta::counts(const Task& ti, int c) const {
  const CbInfo& cb = v_.cbs[c];
  const int gi = group_index(cb.mutex_group);
  const bool queue_outranks =
      order_ == Order::FixedPriority ? cb.prio >= minprio_ : (!tk_.has_deadline || ti.has_deadline);
  return counted_work(gi >= 0 && (fallback_[gi] || group_outranks(ti, cb, gi)),
                      g0_ >= 0 && cb.mutex_group == g0_, on_segment_threads(c), queue_outranks);
}

// Callback c of some task's work as a tail: a group-mate of J blocks it once (time (3), B_g);
// on the segment's threads it is a blocker (not one of J's own group g0: only time (3)).
void SegmentRta::block_only(int c, std::vector<Duration>& tail) {
  if (const int gi = group_index(v_.cbs[c].mutex_group); gi >= 0) Bg_[gi] = std::max(Bg_[gi], v_.cbs[c].wcet);
  if (on_segment_threads(c) && !(g0_ >= 0 && v_.cbs[c].mutex_group == g0_)) tail.push_back(v_.cbs[c].wcet);
}

// Work of task i that may run at any time (no end bound), on the segment's threads and never
// outranking J: blocking only, as a chain without a bound (m parallel blockers, any number).
void SegmentRta::add_tail(const Task& ti, const std::vector<Duration>& tail) {
  if (tail.empty()) return;
  Other o;
  for (Duration e : tail) o.C_all += e;
  o.blockers = tail;
  std::sort(o.blockers.begin(), o.blockers.end(), std::greater<>());
  o.R = kUnbounded;
  o.T = ti.T;
  o.D = ti.key_lo;
  o.D_blk = ti.key_hi;
  o.width = static_cast<int>(m_);
  o.par = m_;
  o.bounded = false;
  others_.push_back(std::move(o));
  gblockers_.emplace_back(ng_);
}

// Every other task's work as interference, blocking, group work or tail (Other, GroupWork).
// A group-mate that may run on other threads than J's callbacks: all of the group's work
// counts, without the refinement of Lemma 5 (`fallback`). False: no bound (interference from
// work without an end bound).
bool SegmentRta::classify_others() {
  // The instance's own work off the segment's path: its extras and, on a path piece of a chain
  // branching across executors, the chain's other branches.
  own_side_ = tk_.extras;
  own_side_.insert(own_side_.end(), seg_.side.begin(), seg_.side.end());
  std::vector<Duration> own_low;  // J's fan-out that never outranks it: blocking only (below)
  for (std::size_t j = 0; j < own_side_.size(); ++j) {
    const int c = own_side_[j];
    const CbInfo& cb = v_.cbs[c];
    const int gi = group_index(cb.mutex_group);
    if (gi >= 0) own_group_C_[gi] += cb.wcet;
    if (cb.executor != X_ || !(cb.threads & mask_)) continue;
    if (low_fan_out_blocks_ && j < tk_.extras.size() && gi < 0 && own_fan_out_below(cb)) {
      own_low.push_back(cb.wcet);
      fan_out_blocked_ = true;
      continue;
    }
    own_extra_ += cb.wcet;
    own_extra_n_++;
  }
  // Fan-out of J's own instance ranked below all of J's segment (own_fan_out_below): it starts
  // only when a thread finds none of J's callbacks eligible, so while J waits it is a
  // lower-ranked callback that started before the current eligibility event — blocking, as
  // another chain's (one per event and thread; any number of its executions: as a tail).
  add_tail(tk_, own_low);
  for (std::size_t i = 0; i < v_.tasks.size() && ng_ > 0; ++i)
    if (static_cast<int>(i) != k_ && !skip_shadow(i))
      for (int c : v_.tasks[i].work) {
        const int gi = group_index(v_.cbs[c].mutex_group);
        if (gi >= 0 && v_.cbs[c].threads != mask_) fallback_[gi] = true;
      }
  others_.reserve(v_.tasks.size());
  gblockers_.reserve(v_.tasks.size());
  Rwin_.assign(v_.tasks.size(), kUnbounded);  // the window of each task's counted work
  for (std::size_t i = 0; i < v_.tasks.size(); ++i)
    Rwin_[i] = W_.window(v_.tasks[i].work, i, [&](int c) { return counts(v_.tasks[i], c); });
  for (std::size_t i = 0; i < v_.tasks.size(); ++i) {
    if ((static_cast<int>(i) == k_ && !tk_.join) || skip_shadow(i)) {
      if (!classify_own_earlier(i)) return false;
      continue;
    }
    if (static_cast<int>(i) == k_) continue;
    // a task with no callback on J's executor has nothing on its threads or in its groups (a
    // group is a node's, a node runs on one executor): classify_task would find nothing
    if (std::none_of(v_.tasks[i].work.begin(), v_.tasks[i].work.end(), [&](int c) { return v_.cbs[c].executor == X_; }))
      continue;
    if (!classify_task(i)) return false;
  }
  for (std::size_t g = 0; g < ng_; ++g)
    if (fallback_[g]) {
      Bg_[g] = 0;
      ghp_[g] = gall_[g];
      // (a group-mate's chain without a bound has no workload bound)
      for (const auto& w : ghp_[g])
        if (w.R == kUnbounded) return false;
    }
  return true;
}

// Earlier instances of J's own chain (of its prefix, for a chain that waits at a fusion node):
// their work that may still run at J's release (end > T, or none) must not be counted work for
// this segment; on its threads it blocks. (The rest of a joining chain's earlier instances is
// counted through the other members' chains: join_wait.cpp.)
bool SegmentRta::classify_own_earlier(std::size_t i) {
  const Task& ti = v_.tasks[i];
  std::vector<Duration> tail;
  for (int c : static_cast<int>(i) == k_ ? tk_.extras : ti.work) {
    const Duration e = W_.end_of(i, c);
    if (e != kUnbounded && e <= tk_.T) continue;
    if (counts(ti, c)) return false;
    if (on_foreign(c)) tail_foreign_.push_back(c);
    block_only(c, tail);
  }
  add_tail(ti, tail);
  return true;
}

// Task i's work on the segment's threads (interference C_hp, blockers), in J's groups (group
// work), or as a tail (work without an end bound that only blocks).
bool SegmentRta::classify_task(std::size_t i) {
  const Task& ti = v_.tasks[i];
  std::vector<Duration> tail;
  Other o;
  bool relevant = false;
  std::vector<GroupWork> hpw(ng_), allw(ng_);
  std::vector<std::vector<Duration>> gb(ng_);
  bool in_group = false;
  const bool edf_pair = order_ == Order::Edf && tk_.has_deadline && ti.has_deadline;
  o.deltas = phases_of(i);
  for (int c : ti.work) {
    const CbInfo& cb = v_.cbs[c];
    if (Rwin_[i] != kUnbounded && W_.any_unbounded(i) && W_.end_of(i, c) == kUnbounded) {  // (counts(ti, c) is false)
      block_only(c, tail);
      continue;
    }
    const int gi = group_index(cb.mutex_group);
    if (gi >= 0) {
      in_group = true;
      Bg_[gi] = std::max(Bg_[gi], cb.wcet);
      allw[gi].C += cb.wcet;
      allw[gi].cnt++;
      if (group_outranks(ti, cb, gi)) {
        hpw[gi].C += cb.wcet;
        hpw[gi].cnt++;
      }
    }
    if (cb.executor != X_ || !(cb.threads & mask_)) continue;
    if (g0_ >= 0 && cb.mutex_group == g0_) continue;  // only ever time (3)
    relevant = true;
    o.C_all += cb.wcet;
    bool hp;
    if (order_ == Order::FixedPriority) {
      hp = cb.prio >= minprio_;
    } else {
      // EDF: chains without a deadline (pseudo-tasks) are queued last (sched tier 1).
      hp = !tk_.has_deadline || ti.has_deadline;
      if (edf_pair) o.edf_limited = true;
    }
    if (hp) {
      o.C_hp += cb.wcet;
      o.n_hp++;
    }
    if (!hp || o.edf_limited) {
      if (gi >= 0) gb[gi].push_back(cb.wcet);
      else o.blockers.push_back(cb.wcet);
    }
  }
  add_tail(ti, tail);
  if (!relevant && !in_group) return true;
  // A chain without a bound (its instances may overlap) can still block: its callbacks count as
  // up to m parallel blockers; its interference or group work cannot be bounded.
  const bool unbounded = Rwin_[i] == kUnbounded;
  if (unbounded) {
    if (o.C_hp > 0) return false;
    for (std::size_t g = 0; g < ng_; ++g)
      if (hpw[g].C > 0 || (fallback_[g] && allw[g].C > 0)) return false;
  }
  for (std::size_t g = 0; g < ng_; ++g) {
    for (auto* w : {&hpw[g], &allw[g]}) {
      w->R = Rwin_[i];
      w->T = ti.T;
      w->D = ti.key_lo;
      w->edf_limited = edf_pair;
      w->deltas = o.deltas;
    }
    allw[g].edf_limited = false;
    if (hpw[g].C > 0) ghp_[g].push_back(hpw[g]);
    if (allw[g].C > 0) gall_[g].push_back(allw[g]);
  }
  if (relevant) {
    o.R = Rwin_[i];
    o.T = ti.T;
    o.D = ti.key_lo;
    o.D_blk = ti.key_hi;
    o.width = unbounded ? static_cast<int>(m_) : ti.width;
    o.par = std::min<Duration>(o.width, m_);
    o.bounded = !unbounded;
    std::sort(o.blockers.begin(), o.blockers.end(), std::greater<>());
    for (auto& b : gb) std::sort(b.begin(), b.end(), std::greater<>());
    others_.push_back(std::move(o));
    gblockers_.push_back(std::move(gb));
  }
  return true;
}

// Foreign work (5): every instant a foreign thread runs on one of the segment's cores, at most
// Σ_i W_i(x) over the chains' callbacks on those threads (carry-in workload with R_i; the
// chain's own instance only with its extra work — its path runs one callback at a time, here).
// It can preempt J's running callback too, so with foreign work the bound is taken to the
// segment's COMPLETION (its last callback counted in E', R = x − 1). Work without an end bound
// (of a chain without a bound, or a fan-out tail) is bounded by its release rate and the
// messages that can be queued (executions_in_window). False: no such bound.
bool SegmentRta::collect_foreign() {
  if (foreign_.empty()) return true;
  if (!dedicated_) return false;
  auto by_rate = [&](int c) {
    if (!executions_in_window(*v_.model, static_cast<std::size_t>(c), 1)) return false;
    frate_.emplace_back(c, v_.cbs[c].wcet);
    return true;
  };
  for (int c : tail_foreign_)
    if (!by_rate(c)) return false;
  for (std::size_t i = 0; i < v_.tasks.size(); ++i) {
    if (skip_shadow(i)) continue;
    Duration C = 0;
    for (int c : static_cast<int>(i) == k_ ? own_side_ : v_.tasks[i].work) {
      if (!on_foreign(c)) continue;
      if (static_cast<int>(i) != k_ && W_.end_of(i, c) == kUnbounded) {
        if (!by_rate(c)) return false;
      } else {
        C += v_.cbs[c].wcet;
      }
    }
    if (C == 0) continue;
    if (static_cast<int>(i) == k_) {
      own_foreign_ = C;
      continue;
    }
    fwork_.push_back({C, W_.inside(i), v_.tasks[i].T, phases_of(i)});
  }
  return true;
}

// The platform (model Host::blackout, supply.hpp): a top-priority interferer on every core.
// Any instant of the window at which a core of the segment is taken by it is either one at
// which J's running callback is stopped or one at which J waits with some thread's core gone;
// together they number at most the blackout on those cores, n_cores·S(x), charged in full like
// foreign work. (Deviation: the papers assume a CPU that is always there; this VM's is not.
// Checked by the soundness harness's `platform` feature.)
void SegmentRta::setup_platform() {
  static const std::vector<BlackoutPoint> no_blackout;
  curve_ = v_.model->hosts.empty() ? &no_blackout : &v_.model->hosts[v_.host_of[X_]].blackout;
  if (curve_->empty()) return;
  const int host_cores = v_.model->hosts[v_.host_of[X_]].cores;
  std::set<int> cores;
  const auto& ths = v_.model->executors[X_].threads;
  for (std::size_t t = 0; t < ths.size() && t < 64; ++t) {
    if (!(mask_ >> t & 1)) continue;
    if (ths[t].cores.empty())
      for (int c = 0; c < host_cores; ++c) cores.insert(c);
    for (int c : ths[t].cores) cores.insert(c);
  }
  platform_cores_ = static_cast<Duration>(cores.size());
}

Duration SegmentRta::platform_at(Duration x) const { return platform_cores_ * platform_blackout(*curve_, x); }

// F(x) of Eq. 8/11: foreign work (5) and the platform, charged in full.
Duration SegmentRta::foreign_at(Duration x) const {
  Duration F = own_foreign_ + platform_at(x);
  for (const auto& w : fwork_) F += carry_in(x, w.C, w.R, w.T, 1, w.deltas);
  for (const auto& [c, e] : frate_) F += e * *executions_in_window(*v_.model, static_cast<std::size_t>(c), x);
  return F;
}

// J's own work: E' (before its last callback; all of it in the completion form: branching
// chains, and segments next to foreign threads), e_last, the hop suspension S, and the span of
// the last callback once started (only the platform can stop it on its dedicated core:
// platform_stretch, = e_last without a curve). False: the stretch exceeds the limit.
bool SegmentRta::own_lengths() {
  q_ = seg_.cbs.size();
  completion_mode_ = !tk_.linear && !seg_.path_piece;
  const bool finish_form = completion_mode_ || !foreign_.empty();
  for (std::size_t j = 0; j < q_; ++j) {
    if (!finish_form && j + 1 == q_) elast_ = v_.cbs[seg_.cbs[j]].wcet;
    else E1_ += v_.cbs[seg_.cbs[j]].wcet;
  }
  S_ = seg_.intra_comm;
  elast_span_ = elast_;
  if (!curve_->empty() && elast_ > 0) {
    auto st = platform_stretch(*curve_, elast_, limit_);
    if (!st) return false;
    elast_span_ = *st;
  }
  return true;
}

// The eligibility events (rta_terms.hpp) and the prefix sums of every chain's blockers.
void SegmentRta::prepare_blockers() {
  full_events_ = full_eligibility_events(static_cast<Duration>(q_), seg_.delayed_hops, completion_mode_, m_);
  quiet_boundaries_ = quiet_boundaries(static_cast<Duration>(q_), seg_.delayed_hops, completion_mode_, m_);
  hprel_.assign(ng_, 0);
  terms_.assign(others_.size(), Terms{});
  pre_free_.assign(others_.size(), {});
  pre_group_.assign(others_.size(), {});
  for (std::size_t j = 0; j < others_.size(); ++j) {
    pre_free_[j] = prefix_sums(others_[j].blockers);
    for (const auto& gbl : gblockers_[j]) pre_group_[j].push_back(prefix_sums(gbl));
  }
}

// Task i's releases relative to J's where both are on the host's release grid (guaranteed
// phases: relative_phases), else empty (any phase).
std::vector<Duration> SegmentRta::phases_of(std::size_t i) const {
  const Task& ti = v_.tasks[i];
  if (tk_.grid_host < 0 || ti.grid_host != tk_.grid_host || Rwin_[i] == kUnbounded) return {};
  return relative_phases(ti.grid_offset, ti.T, tk_.grid_offset, tk_.T);
}

// A chain's workload in the window: the carry-in workload (Bertogna & Cirinei; Melani et al.
// for p > 1), or, with guaranteed phases, the offset-based one where smaller (phased_workload:
// its instances' windows against J's window [r, r + arrival + x)).
Duration SegmentRta::carry_in(Duration x, Duration C, Duration Ri, Duration Ti, Duration p,
                              const std::vector<Duration>& deltas) const {
  const Duration w = carry_in_workload(x, C, Ri, Ti, p);
  return deltas.empty() || x <= 0 ? w : std::min(w, phased_workload(arrival_ + x, C, Ri, Ti, p, deltas));
}

// ... capped by I^EDF where EDF limits it. (Group work runs one member at a time: p = 1.)
Duration SegmentRta::workload(Duration x, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited,
                              Duration p, const std::vector<Duration>* deltas) const {
  Duration w = deltas ? carry_in(x, C, Ri, Ti, p, *deltas) : carry_in_workload(x, C, Ri, Ti, p);
  if (edf_limited) w = std::min(w, edf_interference(C, Dk_, Ti, Di, Ri, p));
  return w;
}

// The lower envelope of workload(x0 + d, ...) for the jump: the carry-in piece, with guaranteed
// phases the smaller of it and the offset-based piece (phased_piece, min_piece), capped by
// I^EDF where EDF limits it. Its value at d = 0 is workload(x0, ...) itself.
EnvelopePiece SegmentRta::piece(Duration x0, Duration C, Duration Ri, Duration Ti, Duration Di, bool edf_limited,
                                Duration p, const std::vector<Duration>& deltas) const {
  if (deltas.empty()) return envelope_piece(x0, C, Ri, Ti, Di, edf_limited, Dk_, p);
  EnvelopePiece e = min_piece(envelope_piece(x0, C, Ri, Ti, Di, false, Dk_, p),
                              phased_piece(arrival_ + x0, C, Ri, Ti, p, deltas));
  if (edf_limited) e = min_piece(e, EnvelopePiece{edf_interference(C, Dk_, Ti, Di, Ri, p), 0, e.par});
  return e;
}

// G(x): group time (3) — Eq. 10's blocking, J's own work in its groups and the outranking
// members' workloads; hprel_[g]: hand-overs of group g to members that outrank J's callback
// (those of groups without the refinement are full events).
Duration SegmentRta::group_terms(Duration x) {
  Duration G = rta_eq10_group_blocking(qg_, Bg_);
  hprel_total_ = 0;
  hprel_fallback_ = 0;
  for (std::size_t g = 0; g < ng_; ++g) {
    G += own_group_C_[g];
    hprel_[g] = 0;
    for (const auto& w : ghp_[g]) {
      G += workload(x, w.C, w.R, w.T, w.D, w.edf_limited, 1, &w.deltas);
      Duration n = overlapping_instances(x, w.R, w.T);
      if (w.edf_limited) n = std::min(n, edf_jobs(Dk_, w.T, w.D, w.R));
      hprel_[g] += n * w.cnt;
    }
    if (fallback_[g]) hprel_fallback_ += hprel_[g];
    else hprel_total_ += hprel_[g];
  }
  return G;
}

// Jobs of chain j whose outranking callbacks can run in the window.
Duration SegmentRta::hp_jobs(const Other& o, Duration x) const {
  if (o.edf_limited) return edf_jobs(Dk_, o.T, o.D, o.R);
  return o.bounded ? overlapping_instances(x, o.R, o.T) : x;  // (unbounded chains have no HP work)
}

// Per chain at window x: interference I (outranking carry-in workload), workload W and blocking
// L — its lower-ranked callbacks, largest first, each repeated once per lower-ranked job it can
// have in the window (EDF: jobs with deadline > d_k released before a + x <= d_k, at most
// ⌈D_j/T_j⌉; FP: the instances overlapping the window; a chain without a bound: any number), at
// most one per event and thread it may occupy — and the blocker runs LP_cross merges (m per full
// event, m − 1 per charged one); ρ for the phase argument.
void SegmentRta::evaluate(Duration x) {
  Duration hp_exec = own_extra_n_;
  for (std::size_t j = 0; j < others_.size(); ++j) hp_exec += hp_jobs(others_[j], x) * others_[j].n_hp;
  const Duration full = full_events_ + hprel_fallback_;
  const Duration charged = charged_eligibility_events(quiet_boundaries_, hprel_total_, hp_exec);
  const Duration events = full + charged;
  const Duration events_raw = full + quiet_boundaries_ + hprel_total_;
  ev_full_ = full;
  ev_charged_ = charged;
  seqs_.clear();
  firsts_.clear();
  for (std::size_t j = 0; j < others_.size(); ++j) {
    const Other& o = others_[j];
    Terms& t = terms_[j];
    t.I = workload(x, o.C_hp, o.R, o.T, o.D, o.edf_limited, o.par, &o.deltas);
    t.W = o.bounded ? carry_in(x, o.C_all, o.R, o.T, o.par, o.deltas) : kUnbounded;
    const Duration par = std::min<Duration>(o.width, m_);
    // Lower-ranked jobs of j that can start before J's last event: EDF — deadline > d_k, so
    // released in (a + D_k − D_j, a + x): ⌈(x + D_j − D_k)/T_j⌉ (none when x <= D_k − D_j);
    // FP — the instances overlapping the window; a chain without a bound — any number.
    const bool unlimited = !o.edf_limited && !o.bounded;
    const Duration mult = o.edf_limited ? ceil_div(x + o.D_blk - tk_.key_lo, o.T)
                                        : o.bounded ? overlapping_instances(x, o.R, o.T) : 0;
    Duration L = 0;
    auto add = [&](const std::vector<Duration>& b, const std::vector<Duration>& pre, Duration n) {
      if (b.empty() || n <= 0 || (!unlimited && mult <= 0)) return;
      BlockerRun run;
      run.b = &b;
      run.pre = &pre;
      run.mult = unlimited ? n : mult;  // unbounded: the largest, again and again
      run.n = std::min(n, run.mult * static_cast<Duration>(b.size()));
      L += run.sum();
      seqs_.push_back(run);
      for (Duration w = 0; w < par; ++w) firsts_.push_back(b[0]);
    };
    add(o.blockers, pre_free_[j], events * par);
    // Blockers of J's own groups cannot block at the events of J's callbacks in that group or
    // at that group's hand-overs.
    for (std::size_t g = 0; g < ng_; ++g)
      add(gblockers_[j][g], pre_group_[j][g],
          std::min(events, std::max<Duration>(0, events_raw - qg_[g] - hprel_[g])) * par);
    t.L = L;
  }
  // The m-th largest first blocker (the phase argument); a chain's free and group blockers both
  // counted is a safe over-approximation. At a charged event the freed thread has just started
  // an outranking callback, so the callback that ends first there is bounded by outranking work
  // already counted: no ρ.
  rho_full_ = mth_largest_blocker(firsts_, m_);
  rho_charged_ = 0;
  slots_now_ = blocker_slots(full, charged, m_);
}

// Eq. 6: Σ_j min(e_j, cap_j) is at most Σ_j min(I_j, M_j) + min(LP_cross, Σ_j min(L_j, M_j − min(I_j, M_j)))
// with M_j = room_of(chain, W_j): the interference fills each chain's room first, the blocking
// (bounded per chain and across chains) the rest.
template <class RoomOf>
Duration SegmentRta::combine(RoomOf room_of) {
  Duration hp = 0, room = 0;
  for (std::size_t j = 0; j < others_.size(); ++j) {
    const Terms& t = terms_[j];
    const PsiShare s = rta_eq6_share(t.I, t.L, room_of(others_[j], t.W));
    hp += s.hp;
    room += s.room;
  }
  return rta_eq6_psi(hp, lp_cross_upto(room), room);
}

// f1 (Eq. 8/11) and f2 (the phase argument) at x. Phase argument (a second, independent
// sufficient condition): split (4) into maximal "phases", each starting at an eligibility
// event. During a phase all threads are busy; the thread θ whose running callback ends first
// must, if the phase goes on, start an outranking callback, and runs only such callbacks until
// the phase ends. So a phase lasts at most r_min + (outranking work on θ in the phase), where
// r_min is at most the outranking work another thread does in the phase when an outranking
// callback was running at the phase start (always the case at a charged event), else — all m
// running callbacks lower-ranked — at most the m-th largest blocker: |(4)| <= full·ρ + Σ_i
// min(I_i, W_i). Not divided by m, so it helps where little work outranks J.
SegmentRta::Eval SegmentRta::eval(Duration x) {
  const Duration cap = x - E1_ - S_;
  const Duration G = group_terms(x);
  evaluate(x);
  const Duration psi = combine([&](const Other& o, Duration W) { return rta_eq4_5_room(W, o.width, cap); }) +
                       std::min(own_extra_, own_extra_n_ * cap);
  const Duration F = foreign_at(x);
  const Duration f1 = rta_eq11_start_demand(E1_, S_, G, F, psi, m_);
  Duration hp = own_extra_;
  for (std::size_t j = 0; j < others_.size(); ++j)
    hp += terms_[j].W == kUnbounded ? terms_[j].I : std::min(terms_[j].I, terms_[j].W);
  const Duration f2 = rta_phase_start_demand(E1_, S_, G, F, ev_full_ * rho_full_ + ev_charged_ * rho_charged_, hp);
  return {f1, f2, G};
}

// Exact acceleration. Where the caps w_j·(x − E' − S) bind, or carry-in workloads grow with
// slope 1, f(x) − x can stay small for millions of nanoseconds and the iteration creeps. At an
// iterate x0 (f(x0) > x0) we build a lower envelope of f on [x0, ∞): the step terms (events,
// blockers L_j, LP_cross, ρ, hand-overs) frozen at their x0 values, the carry-in workloads
// (interference I_j, workload W_j, group work) as v0 + min(room, x − x0) (exact up to the next
// release, below it afterwards), the caps linear. Ψ is min(Σ min(I_j, M_j) + LP_cross,
// Σ min(I_j + L_j, M_j)), non-decreasing in every term, so the envelope is below f; it is
// concave in x, so the set where it is <= x is an up-set of [x0, ∞) and its least element z is
// found by bisection. No x in [x0, z) satisfies f(x) <= x, so jumping to z keeps the iteration
// below the least fixed point — the result is the same as plain Kleene iteration (checked by
// the brute-force cross-check of fixed_point.hpp).
Duration SegmentRta::jump(Duration x0, const Eval& e0) {
  const Duration xmax = limit_ + 1 - elast_span_;
  gz_.clear();
  Duration G_const = rta_eq10_group_blocking(qg_, Bg_);
  for (std::size_t g = 0; g < ng_; ++g) {
    G_const += own_group_C_[g];
    for (const auto& w : ghp_[g])
      gz_.push_back(piece(x0, w.C, w.R, w.T, w.D, w.edf_limited, 1, w.deltas));
  }
  Duration hp_lp_room_max = 0;
  fz_.assign(others_.size(), Frozen{});
  for (std::size_t j = 0; j < others_.size(); ++j) {
    const Other& o = others_[j];
    Frozen& z = fz_[j];
    z.W_unbounded = !o.bounded;
    z.I = piece(x0, o.C_hp, o.R, o.T, o.D, o.edf_limited, o.par, o.deltas);
    if (o.bounded) z.W = piece(x0, o.C_all, o.R, o.T, o.D, false, o.par, o.deltas);
    z.L = terms_[j].L;
    z.w = o.width;
    hp_lp_room_max += z.L;
  }
  // LP_cross at x0 (only its value up to the largest room it can ever fill matters).
  const Duration lpx = lp_cross_upto(hp_lp_room_max);
  const Duration rho = ev_full_ * rho_full_ + ev_charged_ * rho_charged_;
  // Foreign work is added to the group term: both conditions charge it in full.
  for (const auto& w : fwork_)
    gz_.push_back(piece(x0, w.C, w.R, w.T, 0, false, 1, w.deltas));
  G_const += own_foreign_ + platform_at(x0);  // (S is non-decreasing: S(x0) is below it on [x0, ∞))
  for (const auto& [c, e] : frate_) G_const += e * *executions_in_window(*v_.model, static_cast<std::size_t>(c), x0);
  auto G_at = [&](Duration d) {
    Duration G = G_const;
    for (const auto& p : gz_) G += p.at(d);
    return G;
  };
  // Envelope of f1 <= x and of f2 <= x at x = x0 + d.
  auto ok1 = [&](Duration x) {
    const Duration d = x - x0, cap = x - E1_ - S_;
    Duration h = 0, room = 0;
    for (const auto& z : fz_) {
      const PsiShare s =
          rta_eq6_share(z.I.at(d), z.L, rta_eq4_5_room(z.W_unbounded ? kUnbounded : z.W.at(d), z.w, cap));
      h += s.hp;
      room += s.room;
    }
    const Duration psi = rta_eq6_psi(h, lpx, room) + std::min(own_extra_, own_extra_n_ * cap);
    return rta_eq11_start_demand(E1_, S_, G_at(d), 0, psi, m_) <= x;
  };
  auto ok2 = [&](Duration x) {
    const Duration d = x - x0;
    Duration hp = own_extra_;
    for (const auto& z : fz_) hp += z.W_unbounded ? z.I.at(d) : std::min(z.I.at(d), z.W.at(d));
    return rta_phase_start_demand(E1_, S_, G_at(d), 0, rho, hp) <= x;
  };
  // Below f1(x0) (resp. f2(x0)) neither envelope can hold (each is >= its value at x0).
  return std::min(least_in_upset(ok1, e0.f1, xmax, (e0.f1 - E1_ - S_) / 8),
                  least_in_upset(ok2, e0.f2, xmax, (e0.f2 - E1_ - S_) / 8));
}

// Dedicated cores: f(x) = min(f1(x), f2(x)) (two sufficient conditions); every x with
// f(x) <= x is a valid bound (the contrapositive of the derivation holds for each x on its own)
// and the bound is the LEAST such x. Every term is non-decreasing in x, so Kleene iteration from
// below reaches exactly that x, and it is non-decreasing in every WCET, in 1/period and in R of
// the other chains (each term is); that is what makes the analysis sustainable. A search that
// stops at "some" x with f(x) <= x is safe but not monotone: it returned 1 ns more for a system
// than for the same system with a larger WCET (tests/cpp/analysis/test_sustainability.cpp).
std::optional<Duration> SegmentRta::dedicated_bound() {
  const Duration xmax = limit_ + 1 - elast_span_;  // largest x whose bound stays within the limit
  const Duration x0 = E1_ + S_ + 1;
  if (x0 > xmax) {  // (already beyond the limit: the bound of x0 itself)
    const Eval e = eval(x0);
    if (std::min(e.f1, e.f2) <= x0) return rta_eq9_response(x0, elast_span_);
    return std::nullopt;
  }
  Eval last{};
  int steps = 0;
  const auto found = least_fixed_point(
      x0, xmax,
      [&](Duration x) {
        last = eval(x);
        return std::min(last.f1, last.f2);
      },
      [&](Duration x, Duration fx) { return steps++ >= 3 ? jump(x, last) : fx; });
  if (!found) return std::nullopt;
  return rta_eq9_response(*found.value, elast_span_);
}

// Reserved threads: the supply form (LaME Sec. 4.2 Thm 1), the least x with dbf(x) < sbf_Π(x),
// i.e. the least fixed point of x ↦ (first point where the supply exceeds the demand at x).
// (No platform curve: the analyses refuse that combination, refuse_platform in analyses.cpp.)
std::optional<Duration> SegmentRta::reserved_bound() {
  if (!curve_->empty()) return std::nullopt;
  SupplySet pi;
  for (auto* s : threads_) pi.threads.push_back(*s);
  auto wall = [&](Duration e) {
    Duration w = 0;
    for (auto* s : threads_) {
      const Duration inv = s->sbf_inverse(e);
      if (inv < 0) return kUnbounded;
      w = std::max(w, inv);
    }
    return w;
  };
  Duration E1w = 0;
  for (std::size_t j = 0; j < q_; ++j) {
    if (!completion_mode_ && j + 1 == q_) continue;
    const Duration w = wall(v_.cbs[seg_.cbs[j]].wcet);
    if (w == kUnbounded) return std::nullopt;
    E1w += w;
  }
  const Duration elastw = elast_ > 0 ? wall(elast_) : 0;
  if (elastw == kUnbounded) return std::nullopt;
  const auto found = least_fixed_point(1, limit_ + 1, [&](Duration x) {
    const Duration G = group_terms(x);
    evaluate(x);
    const Duration demand =
        lame_thm1_demand(m_, E1w, S_, G, own_extra_, combine([](const Other&, Duration W) {
                           return W == kUnbounded ? std::numeric_limits<Duration>::max() / 4
                                                  : std::min(std::numeric_limits<Duration>::max() / 4, W);
                         }));
    return pi.first_at_least(demand + 1, x, limit_ + 1).value_or(limit_ + 2);
  });
  if (!found) return std::nullopt;
  const Duration r = rta_eq9_response(*found.value, elastw);
  if (r > limit_) return std::nullopt;
  return r;
}

}  // namespace

std::optional<Duration> global_segment_bound(const View& v, Order order, int k, const Segment& seg,
                                             const Windows& W, Duration arrival, Duration limit) {
  // J's own low-ranked fan-out as blocking (one execution per eligibility event and thread) or
  // as J's own work (each of its WCETs once): both bounds hold, neither dominates (blocking is
  // smaller with few eligibility events, own work with many) — the smaller is the bound.
  SegmentRta blocking(v, order, k, seg, W, arrival, limit);
  std::optional<Duration> r = blocking.bound();
  if (!blocking.fan_out_blocked()) return r;
  const std::optional<Duration> own = SegmentRta(v, order, k, seg, W, arrival, limit, false).bound();
  if (!r || (own && *own < *r)) return own;
  return r;
}

std::optional<Duration> segments_end(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                                     const std::vector<Segment>& segs, std::size_t from, std::size_t to,
                                     Duration start, const std::function<Duration(Duration)>& limit,
                                     Duration* seg_ends, std::size_t* failed) {
  Duration total = start;
  for (std::size_t i = from; i < to; ++i) {
    total += segs[i].comm_before;
    const Duration l = limit(total);
    auto b = l > 0 ? segfn(v, k, segs[i], W, total, l) : std::nullopt;
    if (!b) {
      if (failed) *failed = i;
      return std::nullopt;
    }
    total += *b;
    if (seg_ends) seg_ends[i - from] = total;
  }
  if (failed) *failed = to;
  return total;
}

namespace {

constexpr Duration kUnset = -2;

// The end of every callback of `segs` (those with a bound up to segment `failed`, kUnbounded
// from there on), raised into `cb_end` (kUnbounded stays).
void record_ends(const std::vector<Segment>& segs, const std::vector<Duration>& seg_ends, std::size_t failed,
                 std::vector<Duration>& cb_end) {
  for (std::size_t i = 0; i < segs.size(); ++i)
    for (int c : segs[i].cbs) {
      Duration& e = cb_end[static_cast<std::size_t>(c)];
      if (e == kUnbounded) continue;
      e = i >= failed ? kUnbounded : std::max(e, seg_ends[i]);
    }
}

}  // namespace

void work_path_ends(const View& v, int k, const SegmentBound& segfn, const Windows& W,
                    const std::vector<std::vector<Segment>>& paths, Duration start,
                    const std::function<Duration(Duration)>& limit, const std::function<bool(const Segment&)>& refuse,
                    std::vector<Duration>& cb_end) {
  std::vector<Duration> seg_ends;
  for (const auto& p : paths) {
    seg_ends.assign(p.size(), 0);
    std::size_t failed = p.size();
    for (std::size_t i = 0; i < p.size() && failed == p.size(); ++i)
      if (refuse(p[i])) failed = i;
    const std::size_t refused = failed;
    const auto end = segments_end(v, k, segfn, W, p, 0, failed, start, limit, seg_ends.data(), &failed);
    record_ends(p, seg_ends, failed, cb_end);
    if (end || failed >= refused) continue;
    // The segment without a bound: its leading callbacks may still have one (a fan-out that
    // runs a high-priority callback, then a lowest-priority one on the same executor). A
    // segment's prefix bounds the completion of its last callback (the callbacks after it are
    // released later), so the longest prefix with a bound gives those callbacks an end.
    const Segment& seg = p[failed];
    const Duration arrival = (failed == 0 ? start : seg_ends[failed - 1]) + seg.comm_before;
    const Duration l = limit(arrival);
    // (A longer prefix's bound is at least a shorter one's: from the first callback on, up to
    // the first prefix without a bound.)
    for (std::size_t len = 1; len < seg.cbs.size() && l > 0; ++len) {
      Segment pre = seg;
      pre.cbs.resize(len);
      pre.hop_into.resize(len);
      recompute_hops(pre);
      const auto b = segfn(v, k, pre, W, arrival, l);
      if (!b) break;
      cb_end[static_cast<std::size_t>(pre.cbs.back())] = arrival + *b;  // (it was set kUnbounded)
    }
  }
}

namespace {

// The holistic driver's state (holistic): every task's bound R (Windows), the end of each
// segment (`ends`, which the join term of other chains reads) and why a task has no bound.
class Holistic {
 public:
  Holistic(const View& v_in, const SegmentBound& segfn, const HolisticOptions& opt,
           const std::function<bool(int, std::string*)>& skip)
      : v_in_(v_in), v_(with_join_shadows(v_in)), segfn_(segfn), opt_(opt), skip_(skip), n_(v_.tasks.size()) {}

  AnalysisResult run();

 private:
  void init();
  Duration lower_bound(const Task& t) const;
  bool raise_ends(std::size_t x, const std::vector<Duration>& cb_end);
  void set_unbounded(std::size_t x) {
    W_.R[x] = kUnbounded;
    raise_ends(x, unbounded_ends_);
  }
  bool share(std::size_t a, std::size_t b) const;
  std::uint64_t round_pairs(std::string& busiest, std::size_t& on_busiest) const;
  void give_up(const std::string& why);
  std::string failing_neighbour(std::size_t k) const;
  bool round_join_task(std::size_t k, bool& changed);
  bool round_task(std::size_t k, bool& changed);
  bool fusion_round_task(std::size_t k, bool& changed);
  bool fusion_round_failed(std::size_t k, const std::string& why);
  void require_deadlines();
  AnalysisResult quick_fail() const {
    AnalysisResult quick;
    quick.analysis = opt_.analysis;
    quick.schedulable = false;
    return quick;
  }

  const View& v_in_;
  const View v_;  // with one pseudo-task per joining chain (join_wait.hpp)
  const SegmentBound& segfn_;
  const HolisticOptions& opt_;
  const std::function<bool(int, std::string*)>& skip_;
  const std::size_t n_;
  Windows W_;
  std::vector<std::string> failed_;
  std::vector<std::vector<Duration>> ends_;  // bound at the end of each segment (join_wait.hpp)
  std::vector<std::set<int>> execs_;         // executors each task touches
  std::vector<Duration> unbounded_ends_, cb_end_;
  bool verdict_failed_ = false;              // verdict_only: a reported chain has no bound
};

// The lower bound every task starts from: its jitter, WCETs and hop costs (the longest path of a
// chain branching across executors); tasks the analysis leaves out get their reason.
Duration Holistic::lower_bound(const Task& t) const {
  Duration lower = t.src_jitter + t.path_wcet;
  for (const auto& s : t.segments) lower += s.comm_before + s.intra_comm;
  if (!t.paths.empty()) {  // the longest path
    lower = t.src_jitter;
    for (const auto& p : t.paths) {
      Duration l = t.src_jitter;
      for (const auto& s : p) {
        l += s.comm_before + s.intra_comm;
        for (int c : s.cbs) l += v_.cbs[c].wcet;
      }
      lower = std::max(lower, l);
    }
  }
  return lower;
}

void Holistic::init() {
  W_.R.assign(n_, 0);
  if (opt_.work_windows) {
    W_.end.assign(n_, {});
    for (std::size_t k = 0; k < n_; ++k) {
      auto& row = W_.end[k];
      for (int c : v_.tasks[k].work) row.emplace_back(c, 0);
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    W_.unbounded.assign(n_, 0);
    W_.finite.assign(n_, 0);
  }
  failed_.assign(n_, "");
  ends_.resize(n_);
  for (std::size_t k = 0; k < n_; ++k) ends_[k].assign(v_.tasks[k].segments.size(), 0);
  for (std::size_t k = 0; k < n_; ++k) {
    const Task& t = v_.tasks[k];
    std::string why;
    if (t.absorbed_by >= 0) continue;  // its bound comes from its fusion round
    if (!t.join_wait.empty() && !t.join) failed_[k] = t.join_refused.empty() ? t.join_wait : t.join_refused;
    else if (skip_ && k < v_in_.tasks.size() && skip_(static_cast<int>(k), &why)) failed_[k] = why.empty() ? "not analysed" : why;
    else if (t.segments.empty() && t.paths.empty()) failed_[k] = "a branching chain that spans several executors is not supported";
    const Duration lower = lower_bound(t);
    W_.R[k] = failed_[k].empty() ? lower : kUnbounded;
    if (opt_.work_windows && failed_[k].empty()) W_.finite[k] = lower;
  }
  unbounded_ends_.assign(v_.cbs.size(), kUnbounded);
  cb_end_.assign(v_.cbs.size(), kUnset);
  execs_.resize(n_);
  for (std::size_t k = 0; k < n_; ++k)
    for (int c : v_.tasks[k].work) execs_[k].insert(v_.cbs[c].executor);
}

// Windows::end of task x from one instance's callback ends (kUnset: on no path that was bounded
// — the largest end of the instance then, as a window for all of its work); true when something
// grew. Ends only grow, and an unbounded one stays so: the iteration is monotone.
bool Holistic::raise_ends(std::size_t x, const std::vector<Duration>& cb_end) {
  if (!opt_.work_windows) return false;
  Duration all = 0;
  for (Duration e : cb_end)
    if (e == kUnbounded || all == kUnbounded) all = kUnbounded;
    else all = std::max(all, e);
  bool grew = false;
  for (int c : v_.tasks[x].work) {
    Duration e = cb_end[static_cast<std::size_t>(c)];
    if (e == kUnset) e = all;
    Duration& old = *W_.slot(x, c);
    if (old == kUnbounded || (e != kUnbounded && e <= old)) continue;
    old = e;
    if (e == kUnbounded) ++W_.unbounded[x];
    grew = true;
  }
  for (const auto& [c, e] : W_.end[x]) {
    if (e != kUnbounded && e > W_.finite[x]) {
      W_.finite[x] = e;
      grew = true;
    }
  }
  return grew;
}

bool Holistic::share(std::size_t a, std::size_t b) const {
  for (int x : execs_[a])
    if (execs_[b].count(x)) return true;
  return false;
}

// A task without a bound that shares an executor with task k (the likely cause of k's).
std::string Holistic::failing_neighbour(std::size_t k) const {
  for (std::size_t i = 0; i < n_; ++i)
    if (i != k && W_.R[i] == kUnbounded && share(i, k) && v_.tasks[i].shadow_of < 0) return v_.tasks[i].name;
  return "";
}

// One round for a chain that waits at a fusion node (join_wait.hpp): its bound, its prefix
// pseudo-task's (the prefix bound, or none) and its work's ends. False: verdict_only and failed.
bool Holistic::round_join_task(std::size_t k, bool& changed) {
  const Task& t = v_.tasks[k];
  std::string why;
  const Duration cap = (opt_.require_deadlines_met || opt_.verdict_only) && t.has_deadline ? t.D : 0;
  Duration join_at = 0;
  auto b = join_chain_bound(v_, static_cast<int>(k), segfn_, W_, ends_, cap, &why, &join_at);
  const auto first_after = static_cast<std::size_t>(t.join->first_after);
  if (b && opt_.work_windows) {
    record_ends(t.segments, ends_[k], t.segments.size(), cb_end_);
    join_work_ends(v_, static_cast<int>(k), segfn_, W_, join_at, cb_end_);
  }
  for (std::size_t s = k + 1; s < n_; ++s)  // its shadow: the prefix bound, or none
    if (v_.tasks[s].shadow_of == static_cast<int>(k) && failed_[s].empty()) {
      const Duration pre = b ? ends_[k][first_after - 1] : kUnbounded;
      if (pre != W_.R[s]) changed = true;
      W_.R[s] = pre;
      if (b) changed |= raise_ends(s, cb_end_);
      else set_unbounded(s), failed_[s] = why;
    }
  if (!b) {
    if (opt_.verdict_only && t.reported) return false;
    const std::string dep = failing_neighbour(k);
    failed_[k] = dep.empty() || why.rfind("no bound within", 0) != 0
                     ? why
                     : why + ": '" + dep + "', which shares its executor, has no bound itself";
    set_unbounded(k);
    changed = true;
    return true;
  }
  if (*b > W_.R[k]) {
    W_.R[k] = *b;
    changed = true;
  }
  changed |= raise_ends(k, cb_end_);
  return true;
}

// One round for any other task: R_k = src_jitter + Σ_segments (comm_before + segment bound); of
// a chain branching across executors the largest over its paths (Task::paths). `ends` (linear
// chains): the bound at the end of each segment, which the join term of other chains reads.
// EDF bounds are only used when every deadline is met: stop at the deadline (at the earliest
// its callbacks are keyed with, key_lo: a shared timer's shortest). Then when each callback of
// the instance's work (its fan-out) is done: each work path within the period (EDF: its
// deadline, the key its callbacks run with); a fan-out without such a bound is a tail that only
// blocks others (global_segment_bound). False: verdict_only and failed.
bool Holistic::round_task(std::size_t k, bool& changed) {
  const Task& t = v_.tasks[k];
  const Duration dl = opt_.require_deadlines_met ? t.key_lo : t.D;
  const Duration cap = (opt_.require_deadlines_met || opt_.verdict_only) && t.has_deadline ? std::min(t.T, dl) : t.T;
  const std::function<Duration(Duration)> within_cap = [cap](Duration total) { return cap - total; };
  Duration total = 0;
  bool ok = true;
  if (t.paths.empty()) {
    const auto e = segments_end(v_, static_cast<int>(k), segfn_, W_, t.segments, 0, t.segments.size(), t.src_jitter,
                                within_cap, ends_[k].data());
    ok = e.has_value();
    if (ok) {
      total = *e;
      record_ends(t.segments, ends_[k], t.segments.size(), cb_end_);
    }
  } else {
    for (const auto& p : t.paths) {
      const auto e = segments_end(v_, static_cast<int>(k), segfn_, W_, p, 0, p.size(), t.src_jitter, within_cap);
      if (!(ok = e.has_value())) break;
      total = std::max(total, *e);
    }
    if (ok)
      for (int c : t.path) cb_end_[static_cast<std::size_t>(c)] = total;
  }
  if (!ok || total > t.T) {
    if (opt_.verdict_only && t.reported) return false;
    const std::string dep = failing_neighbour(k);
    failed_[k] = dep.empty() ? "no bound within the period " + std::to_string(t.T) +
                                   " ns (the analysis needs every instance to finish before the next is released)"
                             : "no bound within the period: '" + dep + "', which shares its executor, has no bound itself";
    set_unbounded(k);
    changed = true;
    return true;
  }
  if (opt_.work_windows) {
    const Duration wcap = opt_.require_deadlines_met && t.has_deadline ? std::min(t.T, t.key_lo) : t.T;
    work_path_ends(v_, static_cast<int>(k), segfn_, W_, t.work_paths, t.src_jitter,
                   [wcap](Duration tot) { return wcap - tot; }, [](const Segment&) { return false; }, cb_end_);
  }
  if (total > W_.R[k]) {
    W_.R[k] = total;
    changed = true;
  }
  changed |= raise_ends(k, cb_end_);
  return true;
}

// A fusion round without a bound, or whose pairing condition (P) fails (join_wait.cpp): it and
// its chains lose their bounds and the set is reported in failed_rounds (the analysis is run
// again without it). False: verdict_only (the rerun decides).
bool Holistic::fusion_round_failed(std::size_t k, const std::string& why) {
  const Task::Round& rd = *v_.tasks[k].round;
  if (opt_.failed_rounds) opt_.failed_rounds->push_back(rd.set);
  failed_[k] = why;
  set_unbounded(k);
  for (int c : rd.chains) {
    failed_[static_cast<std::size_t>(c)] = why;
    W_.R[static_cast<std::size_t>(c)] = kUnbounded;
  }
  return !opt_.verdict_only;
}

// One round for a fusion round task (Task::Round, join_wait.cpp "fusion rounds"): its paths'
// (or its one segment's) bounds from the round's origin ρ, each within the period; the pairing
// condition (P) max_c R_c − min_c B_c < T over its members; its chains' bounds (the largest of
// their paths less their release delay); its work's ends. False: verdict_only and failed.
bool Holistic::fusion_round_task(std::size_t k, bool& changed) {
  const Task& t = v_.tasks[k];
  const Task::Round& rd = *t.round;
  const Duration cap = opt_.require_deadlines_met ? std::min(t.T, t.key_lo) : t.T;
  const std::function<Duration(Duration)> within_cap = [cap](Duration total) { return cap - total; };
  const std::string at = "its fusion round at '" + rd.node + "' (inputs with guaranteed phases)";
  std::vector<Duration> path_end(t.paths.size(), 0);
  std::vector<std::vector<Duration>> seg_end(t.paths.size());
  Duration total = 0;
  if (rd.one_segment) {
    const auto e = segments_end(v_, static_cast<int>(k), segfn_, W_, t.segments, 0, 1, 0, within_cap, ends_[k].data());
    if (!e) return fusion_round_failed(k, "no bound within the period for " + at);
    total = *e;
    record_ends(t.segments, ends_[k], 1, cb_end_);
  } else {
    for (std::size_t p = 0; p < t.paths.size(); ++p) {
      seg_end[p].assign(t.paths[p].size(), 0);
      const auto e = segments_end(v_, static_cast<int>(k), segfn_, W_, t.paths[p], 0, t.paths[p].size(), 0,
                                  within_cap, seg_end[p].data());
      if (!e) return fusion_round_failed(k, "no bound within the period for " + at);
      path_end[p] = *e;
      total = std::max(total, *e);
    }
    for (int c : t.path) cb_end_[static_cast<std::size_t>(c)] = total;
  }
  Duration arrive = 0, lower = std::numeric_limits<Duration>::max();
  for (const auto& mem : rd.members) {
    lower = std::min(lower, mem.lower);
    if (rd.one_segment) arrive = total;
    for (const auto& [p, s] : mem.ends)
      if (!rd.one_segment) arrive = std::max(arrive, seg_end[static_cast<std::size_t>(p)][static_cast<std::size_t>(s)]);
  }
  if (!rounds_pair(arrive, lower, t.T))
    return fusion_round_failed(k, "its inputs' arrivals at fusion node '" + rd.node + "' may span " +
                                      std::to_string(arrive - lower) + " ns, not less than the period: rounds may pair "
                                      "across periods, so the guaranteed phases do not bound the wait");
  if (opt_.work_windows) {
    const Duration wcap = cap;
    work_path_ends(v_, static_cast<int>(k), segfn_, W_, t.work_paths, 0, [wcap](Duration tot) { return wcap - tot; },
                   [](const Segment&) { return false; }, cb_end_);
  }
  if (total > W_.R[k]) {
    W_.R[k] = total;
    changed = true;
  }
  changed |= raise_ends(k, cb_end_);
  for (std::size_t j = 0; j < rd.chains.size(); ++j) {
    Duration b = 0;
    if (rd.one_segment) b = total;
    for (int p : rd.paths_of[j])
      if (!rd.one_segment) b = std::max(b, path_end[static_cast<std::size_t>(p)]);
    b = round_chain_bound(b, rd.delay[j]);
    Duration& R = W_.R[static_cast<std::size_t>(rd.chains[j])];
    if (b > R) {
      R = b;
      changed = true;
    }
  }
  return true;
}

// EDF: a bound is valid only if every chain on its executors meets its deadline (the carry-in of
// a job is limited by its deadline); every chain sharing an executor with a late one loses its.
void Holistic::require_deadlines() {
  std::vector<std::size_t> late;
  for (std::size_t k = 0; k < n_; ++k)
    if (failed_[k].empty() && v_.tasks[k].has_deadline && W_.R[k] > v_.tasks[k].key_lo) late.push_back(k);
  for (std::size_t k : late) {
    const std::string who = v_.tasks[k].name;
    const std::string fixed_point = std::to_string(W_.R[k]);
    for (std::size_t b = 0; b < n_; ++b)
      if (failed_[b].empty() && (b == k || share(k, b)))
        failed_[b] = b == k ? "may miss its deadline (fixed point " + fixed_point +
                                  " ns > deadline); the bounds assume every chain on the executor meets its deadline"
                            : "chain '" + who + "' may miss its deadline, and this bound assumes every chain on the executor meets it";
  }
}

// The work of one round (HolisticOptions::max_pairs): for every task, the tasks on each
// executor it touches; and the executor most shared, with its number of tasks.
std::uint64_t Holistic::round_pairs(std::string& busiest, std::size_t& on_busiest) const {
  std::vector<std::size_t> on(v_.model->executors.size(), 0);
  for (const auto& e : execs_)
    for (int x : e) ++on[static_cast<std::size_t>(x)];
  std::uint64_t pairs = 0;
  for (const auto& e : execs_)
    for (int x : e) pairs += on[static_cast<std::size_t>(x)];
  const auto top = std::max_element(on.begin(), on.end());
  on_busiest = top == on.end() ? 0 : *top;
  busiest = top == on.end() ? "" : v_.model->executors[static_cast<std::size_t>(top - on.begin())].name;
  return pairs;
}

// Every task left without a bound, for `why` (the run stops).
void Holistic::give_up(const std::string& why) {
  for (std::size_t k = 0; k < n_; ++k)
    if (failed_[k].empty()) {
      failed_[k] = why;
      set_unbounded(k);
    }
}

AnalysisResult Holistic::run() {
  init();
  std::string busiest;
  std::size_t on_busiest = 0;
  const std::uint64_t per_round = round_pairs(busiest, on_busiest);
  const std::string limit = "; the analysis compares the chains that share an executor pairwise in every round and "
                            "stops beyond " + std::to_string(opt_.max_pairs) + " comparisons (spread the chains over "
                            "more executors)";
  // A fixed point takes three rounds in the common case (one from the lower bounds, one with the
  // others' bounds raised, one that finds them unchanged): refused at once when those do not fit.
  if (per_round > opt_.max_pairs / 3) {
    give_up("not analysed: " + std::to_string(on_busiest) + " chains share executor '" + busiest + "'" + limit);
    return collect_result(opt_.analysis, v_.tasks, W_.R, failed_);
  }
  std::uint64_t used = 0;
  for (int round = 0; round < opt_.max_rounds; ++round) {
    if (used + per_round > opt_.max_pairs) {
      give_up("the fixed point did not converge within the analysis's work limit: " + std::to_string(on_busiest) +
              " chains share executor '" + busiest + "'" + limit);
      break;
    }
    used += per_round;
    bool changed = false;
    for (std::size_t k = 0; k < n_; ++k) {
      if (!failed_[k].empty()) continue;
      const Task& t = v_.tasks[k];
      if (t.shadow_of >= 0) continue;  // its bound is its owner's prefix bound (round_join_task)
      if (t.absorbed_by >= 0) continue;  // its bound is its fusion round's (fusion_round_task)
      std::fill(cb_end_.begin(), cb_end_.end(), kUnset);
      // Work off the path: with no work paths (a topic cycle, too many paths), no end bound.
      if (!t.work_paths_why.empty())
        for (int c : t.extras) cb_end_[static_cast<std::size_t>(c)] = kUnbounded;
      const bool ok = t.round  ? fusion_round_task(k, changed)
                      : t.join ? round_join_task(k, changed)
                               : round_task(k, changed);
      if (!ok) return quick_fail();
    }
    if (!changed) break;
    if (round + 1 == opt_.max_rounds)
      for (std::size_t k = 0; k < n_; ++k)
        if (failed_[k].empty()) {
          failed_[k] = "the fixed point did not converge";
          set_unbounded(k);
        }
  }
  if (opt_.require_deadlines_met) require_deadlines();
  return collect_result(opt_.analysis, v_.tasks, W_.R, failed_);
}

}  // namespace

AnalysisResult holistic(const View& v_in, const SegmentBound& segfn, const HolisticOptions& opt,
                        const std::function<bool(int, std::string*)>& skip) {
  return Holistic(v_in, segfn, opt, skip).run();
}

}  // namespace chainrt::detail
