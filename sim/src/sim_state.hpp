// chainrt sim: the simulator's state and its class, shared by its sources (simulator.cpp: events,
// dispatch, callbacks, cores; sim_build.cpp: set-up from the model; sim_devices.cpp: shared
// accelerators). Private to sim/.
#pragma once

#include "chainrt/sim/simulator.hpp"
#include "chainrt/sim/cache_only.hpp"

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "chainrt/sched/chain_completion.hpp"
#include "chainrt/sched/dispatcher.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::sim::detail {

using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

constexpr int kMaxStamps = 8;  // chain instances one message can carry
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Stamp {
  std::uint32_t chain;
  Duration release;         // a_i^k of the chain instance
  std::uint64_t instance;   // k (numbered by the chain's first callback)
};
struct Message {
  Duration arrival = 0;
  std::uint32_t n = 0;
  Stamp s[kMaxStamps];
};
// Copies only the stamps in use (messages are copied on every hop).
inline void copy_message(Message& dst, const Message& src) noexcept {
  dst.arrival = src.arrival;
  dst.n = src.n;
  for (std::uint32_t k = 0; k < src.n; ++k) dst.s[k] = src.s[k];
}

// xoshiro256** seeded by splitmix64: fast and reproducible bit for bit.
struct Rng {
  std::uint64_t s[4];
  explicit Rng(std::uint64_t seed) {
    for (auto& x : s) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      x = z ^ (z >> 31);
    }
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
  }
  Duration uniform(Duration lo, Duration hi) {  // inclusive
    if (hi <= lo) return lo;
    return lo + static_cast<Duration>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

enum class Ev : std::uint8_t { TimerFire, Deliver, CoreDone, Replenish, Control, DeviceDone };
struct Event {
  Duration t;
  std::uint64_t seq;
  std::uint32_t a, b;
  Ev kind;
};
struct EventLater {
  bool operator()(const Event& x, const Event& y) const noexcept {
    return x.t != y.t ? x.t > y.t : x.seq > y.seq;
  }
};

struct ChainRef {
  std::uint32_t chain;
  bool source;
  bool last;  // a leaf of the chain (its instance ends when all leaves have run)
};

struct Out {  // one (publisher, subscriber) pair
  std::uint32_t sub;
  CommKind comm;
  Bytes size;
  Duration fixed_delay;
  std::vector<std::uint32_t> chains;  // chains whose hop goes publisher -> sub
  Duration last_arrival = -1;         // of the latest message on this pair (in-order delivery)
  bool device = false;                // a server-mode request: the device delivers it (accelerators)
};

struct CbState {
  std::uint32_t exec = 0;
  CallbackId local = 0;
  CallbackKind kind{};
  Duration wcet = 0, bcet = 0;
  Duration cache_only = 0;  // a cache-only run's charge (cache_only_charges; fusion members only)
  // timer
  sched::TimerClock clock;    // armed by its executor's Dispatcher (the release grid)
  Duration offset = 0;        // the model's, or SimOptions::offsets'
  Duration jitter = 0, cur_jitter = 0;
  Duration fixed_delay = -1;  // SimOptions::release_delays: every release this late (else jitter draws)
  // SimOptions::exec_script / release_script: this callback's (null: none) and how many of each were used
  const std::vector<Duration>* exec_script = nullptr;
  const std::vector<Duration>* release_script = nullptr;
  std::size_t exec_k = 0, release_k = 0;
  bool timer_ready = false;
  std::uint64_t started = 0;  // instances started: the number of the next chain instance it starts
  // message queue (ring in the shared pool)
  std::uint32_t q_begin = 0, q_cap = 0, q_head = 0, q_count = 0;
  // fusion
  bool cached = false;
  std::vector<std::uint32_t> fuses, fused_by;
  std::vector<ChainRef> chains;
  Duration source_rel_deadline = kNoDeadline;  // min D of the chains it starts
  std::vector<Out> outs;
  std::uint32_t fset = kNone;                  // implicit fusion set (see build())
  bool fresh = false;                          // fusion member: input cached since last publish
  Message cache;                               // fusion member: stamps of that input
  const Piece* piece = nullptr;                // its device calls (model/accelerator.hpp)
};

struct ThreadState {
  std::uint32_t exec = 0;
  sched::ThreadId local = 0;
  std::uint32_t core = 0;
  bool busy = false;
  std::uint32_t cb = kNone;
  Duration remaining = 0, start = 0, release = 0;
  Message input;
  std::uint64_t chain_instance = 0;  // k of the chains this instance starts
  Duration chain_release = 0;  // a_i^k of the chains this instance starts: a timer's NOMINAL
                               // release (jitter counts in the response time), else the arrival
  bool completes_pair = true;  // fusion member: the others were fresh when it started
  // CPU scheduling class: 0 reservation (rank = server deadline), 1 FIFO (rank = -prio),
  // 2 other (rank = thread index)
  int cls = 2;
  std::int64_t rank = 0;
  bool has_res = false;
  bool pinned = false;         // its model thread (or accelerator server) names cores
  Duration Q = 0, P = 0, budget = 0;
  // Accelerators: the instance's CPU time is cut at the piece's direct-mode calls, during which
  // the thread is blocked (busy, but it takes no CPU).
  bool suspended = false;
  Duration exec_total = 0;     // the instance's CPU time
  Duration exec_done = 0;      // CPU time of its finished chunks
  std::uint32_t next_call = 0; // the piece's next direct call
  std::uint32_t device = kNone;  // an accelerator's server thread (no executor): its device
  std::uint32_t res_gen = 0;   // replenishment chain (a reservation set by a Control starts a new one)
  Duration drawn = 0;          // execution time drawn for the running instance (monitoring sample)
  // Whether it wants a core now: an instance to run, not blocked on a device, budget left.
  bool runnable() const { return busy && !suspended && !(has_res && budget <= 0); }
};

// ---- shared accelerators (PiCAS Sec. IV; model/accelerator.hpp) ------------------------------
// A device runs one request at a time, never preempted. Direct access: requests in arrival
// order, the calling thread blocked. Server access: the server thread takes the most urgent
// request (effective priority, then arrival), spends the server overhead on its core, then the
// device runs the segment; the continuation is delivered when it is done.
struct Request {
  std::uint32_t piece = kNone;   // the piece that issued it (a callback of the expanded model)
  std::uint32_t call = 0;        // direct: index in the piece's direct calls
  std::uint32_t thread = kNone;  // direct: the blocked thread
  std::uint32_t target = kNone;  // server: the continuation to deliver to
  std::uint32_t slot = kNone;    // server: the chain stamps (a flight_ slot)
  std::uint32_t segment = 0;     // index in the origin callback's accelerator_segments
  std::int64_t key = 0;          // server: -priority (none: last)
  Duration issued = 0;
  std::uint64_t seq = 0;
  // block preemption: whether the device began it (its overhead is spent, its parts drawn),
  // when, and the work left of each part, the kernel's block
  bool started = false;
  Duration first_start = 0, left_in = 0, left_kernel = 0, left_out = 0, block = 0;
};
struct DeviceState {
  AcceleratorAccess access = AcceleratorAccess::Direct;
  Duration overhead = 0;
  std::uint32_t server = kNone;  // server thread (server access)
  bool block = false;            // block preemption (Accelerator::block_preemption)
  std::vector<Request> queue;    // waiting
  bool busy = false;             // a request is in service (server overhead or device)
  Request current;
  Duration started = 0;
  bool dirty = false;
};

struct Core {
  std::vector<std::uint32_t> threads;
  std::uint32_t running = kNone;
  Duration since = 0;
  std::uint32_t version = 0;
  bool dirty = false;
};

// SimOptions::global_threads: the cores of one host and the threads that may run on any of them.
struct CoreGroup {
  std::vector<std::uint32_t> cores, threads;
};

struct ExecState {
  sched::ExecutorSetup setup;
  // The ready queue, admission (polling points for ros-default, LaME's best-effort refresh, at
  // once otherwise), running threads and release grid every executor shares
  // (sched/dispatcher.hpp). ExecStates live in a deque and never move.
  sched::Dispatcher d;
  std::vector<std::uint32_t> threads;  // global thread ids, local order
  bool marked = false;                 // a dispatch is due at the end of this instant
  std::uint32_t first = kNone;         // the thread that just completed (it polls first)
  ExecState(sched::ExecutorSetup s, std::optional<std::uint64_t> wait_set_seed)
      : setup(std::move(s)), d(setup, wait_set_seed) {}
  ExecState(const ExecState&) = delete;
  ExecState& operator=(const ExecState&) = delete;
};

class Simulator {
 public:
  // `am`: the model's pieces (model/accelerator.hpp) when it uses accelerators; `m` is then
  // am->model and `user` the model as loaded.
  Simulator(const Model& m, const SimOptions& o, const AcceleratedModel* am = nullptr, const Model* user = nullptr)
      : m_(m), o_(o), rng_(o.seed), am_(am), user_(user) {
    build();
  }
  SimResult run();

 private:
  void build();
  void build_chains();
  void build_callbacks();
  void build_outputs();
  void build_executors();
  void start();
  void handle(const Event& ev);
  void count_unfinished(Duration end);
  void push_event(Duration t, Ev k, std::uint32_t a, std::uint32_t b = 0) {
    heap_.push_back(Event{t, seq_++, a, b, k});
    std::push_heap(heap_.begin(), heap_.end(), EventLater{});
  }
  bool pending(std::uint32_t c) const {
    const CbState& s = cb_[c];
    if (s.kind == CallbackKind::Timer) return s.timer_ready;
    if (s.q_count == 0) return false;
    if (s.kind == CallbackKind::FusionTrigger)
      for (std::uint32_t in : s.fuses)
        if (!cb_[in].cached) return false;
    return true;
  }
  Duration pending_deadline(std::uint32_t c) const;
  // The dispatcher's view of an executor's callbacks (sched::Dispatcher's Src).
  struct Src {
    const Simulator* sim;
    const ExecState* e;
    bool ready(CallbackId lc) const { return sim->pending(static_cast<std::uint32_t>(e->setup.callbacks[lc])); }
    Duration deadline(CallbackId lc) const {
      return sim->pending_deadline(static_cast<std::uint32_t>(e->setup.callbacks[lc]));
    }
  };
  void admit(ExecState& e, std::uint32_t c) { e.d.released(cb_[c].local, Src{this, &e}); }
  void on_release(std::uint32_t c);
  void dispatch(ExecState& e, std::uint32_t first);
  void mark_dispatch(std::uint32_t x, std::uint32_t first = kNone) {
    ExecState& e = ex_[x];
    if (first != kNone && e.first == kNone) e.first = first;
    if (!e.marked) {
      e.marked = true;
      to_dispatch_.push_back(x);
    }
  }
  void flush_dispatch() {
    for (std::size_t i = 0; i < to_dispatch_.size(); ++i) {
      ExecState& e = ex_[to_dispatch_[i]];
      const std::uint32_t first = e.first;
      e.marked = false;
      e.first = kNone;
      dispatch(e, first);
    }
    to_dispatch_.clear();
  }
  bool try_take(ExecState& e, std::uint32_t t);
  // Whether thread t of e cannot run now, so does not take work: a SCHED_FIFO thread whose one
  // core a busy thread of the same executor at the same or a higher FIFO priority holds (the
  // kernel never preempts for an equal priority; the runtime's thread takes its next callback
  // itself, on its CPU). Not for threads the kernel places (SimOptions::global_threads).
  bool kept_off_core(const ExecState& e, std::uint32_t t) const;
  void start_exec(std::uint32_t t, std::uint32_t c);
  void complete_exec(std::uint32_t t);
  void deliver(std::uint32_t sub, const Message& msg);
  // accelerators
  void build_devices();
  Duration chunk_end(const ThreadState& th) const;
  void chunk_done(std::uint32_t t);
  void issue(std::uint32_t device, Request rq);
  void flush_devices();
  void start_device(std::uint32_t device);
  void device_done(std::uint32_t device);
  Duration device_time(const AcceleratorSegment& s);
  Duration device_part(Duration worst, const std::optional<Duration>& best);
  const AcceleratorSegment& segment_of(const Request& rq) const {
    return user_->callbacks[am_->pieces[rq.piece].origin].accelerator_segments[rq.segment];
  }
  void charge(Core& k);
  // Whether runnable thread a gets a core before b: class, then rank; between equals the one
  // running keeps its core (no preemption for an equal priority or deadline), else the lower
  // index. Both resched and resched_group order by it.
  bool runs_before(std::uint32_t a, std::uint32_t b, bool a_runs, bool b_runs) const {
    const ThreadState &x = th_[a], &y = th_[b];
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.rank != y.rank) return x.rank < y.rank;
    if (a_runs != b_runs) return a_runs;
    return a < b;
  }
  void resched(std::uint32_t core);
  void build_groups();
  void resched_group(CoreGroup& g);
  void mark(std::uint32_t core) {
    if (!cores_[core].dirty) {
      cores_[core].dirty = true;
      dirty_.push_back(core);
    }
  }
  Duration exec_time(const CbState& s) {
    switch (o_.exec) {
      case ExecTime::Wcet: return scaled(s.wcet);
      case ExecTime::Bcet: return scaled(s.bcet);
      case ExecTime::Uniform: return scaled(rng_.uniform(s.bcet, s.wcet));
      case ExecTime::Mix: return scaled((rng_.next() >> 11) & 1 ? s.wcet : s.bcet);
    }
    return scaled(s.wcet);
  }
  // SimOptions::scale_at: execution times drawn from then on grow by scale_num / scale_den.
  Duration scaled(Duration d) const {
    if (o_.scale_at < 0 || now_ < o_.scale_at || o_.scale_den <= 0) return d;
    return static_cast<Duration>(static_cast<__int128>(d) * o_.scale_num / o_.scale_den);
  }
  Duration jitter_sample(CbState& s) {
    if (s.release_script && s.release_k < s.release_script->size())  // SimOptions::release_script
      return std::clamp<Duration>((*s.release_script)[s.release_k++], 0, s.jitter);
    if (s.fixed_delay >= 0) return s.fixed_delay;  // SimOptions::release_delays
    if (s.jitter <= 0) return 0;
    return o_.random_jitter ? rng_.uniform(0, s.jitter) : s.jitter;
  }
  Duration comm_delay(const Out& out);
  void record(std::uint32_t chain, Duration release);
  // SimOptions::control: its activations, the monitoring samples it reads, what it changes.
  void schedule_control(Duration at);
  void control_activation();
  void reconfigure(const Reconfiguration& r);
  void set_reservation(std::uint32_t t, const std::optional<Reservation>& r);

  const Model& m_;
  const SimOptions& o_;
  Rng rng_;
  Duration now_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<Event> heap_;
  std::vector<CbState> cb_;
  std::vector<Message> pool_;                 // subscription queues
  std::vector<Message> flight_;               // messages in transit (slab)
  std::vector<std::uint32_t> flight_free_;
  std::vector<ThreadState> th_;
  std::vector<Core> cores_;
  std::vector<CoreGroup> groups_;               // SimOptions::global_threads
  std::vector<std::uint32_t> group_of_core_;    // per core: its group, kNone (empty: none)
  std::vector<std::uint32_t> ready_scratch_;    // resched_group's candidates (no allocation per call)
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> to_dispatch_;
  std::deque<ExecState> ex_;  // never moves: each Dispatcher's admission points at its queue
  std::vector<std::vector<std::uint32_t>> fsets_;  // implicit fusion sets (member callbacks)
  std::vector<Duration> chain_deadline_;
  // EDF key of a chain instance's messages: release + the smallest deadline of the chains that
  // start at its first callback — what the runtime's one stamp per message carries from the
  // timer (runtime/src/executor.cpp, timer_rel_deadline), so both key a fork's branches alike.
  std::vector<Duration> chain_key_;
  const AcceleratedModel* am_;
  const Model* user_;
  std::vector<DeviceState> dev_;
  std::vector<std::uint32_t> dev_dirty_;
  std::uint64_t req_seq_ = 0;
  // When a chain instance ends (every leaf of a branching chain done): on model callback indices.
  sched::ChainCompletion completion_;
  std::vector<ExecSamples> samples_;     // per callback since the control's last activation
  bool missed_ = false;                  // a watched chain missed since then
  Duration control_at_ = -1;             // the scheduled activation
  std::uint32_t control_version_ = 0;    // ... (an earlier one replaces it)
  SimResult r_;
};

}  // namespace chainrt::sim::detail
