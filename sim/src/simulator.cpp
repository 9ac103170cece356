// chainrt sim: the discrete-event core (see simulator.hpp for the semantics it models and the
// paper sections behind them). One event heap; per executor a sched::ReadyQueue used either as
// the readyQueue (every other policy) or as the default executor's readySet (ros-default);
// per core a preemptive thread scheduler with SCHED_DEADLINE-like reservations.
#include "chainrt/sim/simulator.hpp"

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/ready_queue.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::sim {
namespace {

using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

constexpr int kMaxStamps = 8;  // chain instances one message can carry
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Stamp {
  std::uint32_t chain;
  Duration release;  // a_i^k of the chain instance
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
  // timer
  sched::TimerClock clock;
  Duration jitter = 0, cur_jitter = 0;
  Duration fixed_delay = -1;  // SimOptions::release_delays: every release this late (else jitter draws)
  bool timer_ready = false;
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
  Duration chain_release = 0;  // a_i^k of the chains this instance starts: a timer's NOMINAL
                               // release (jitter counts in the response time), else the arrival
  bool completes_pair = true;  // fusion member: the others were fresh when it started
  // CPU scheduling class: 0 reservation (rank = server deadline), 1 FIFO (rank = -prio),
  // 2 other (rank = thread index)
  int cls = 2;
  std::int64_t rank = 0;
  bool has_res = false;
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

struct ExecState {
  sched::ExecutorSetup setup;
  sched::ReadyQueue q;
  bool default_mode;
  std::vector<std::uint32_t> threads;  // global thread ids, local order
  // When released work enters q: the admission rule the runtime uses too (sched/admission.hpp:
  // polling points for ros-default, LaME's best-effort refresh, at once otherwise). It points
  // at q: ExecStates live in a deque and never move.
  sched::Admission adm;
  bool marked = false;                 // a dispatch is due at the end of this instant
  std::uint32_t first = kNone;         // the thread that just completed (it polls first)
  ExecState(sched::ExecutorSetup s)
      : setup(std::move(s)),
        q(setup.make_queue()),
        default_mode(setup.policy == Policy::RosDefault),
        adm(setup.make_admission(q)) {}
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
  // The admission rule's view of an executor's callbacks (sched::Admission's Src).
  struct Src {
    const Simulator* sim;
    const ExecState* e;
    bool ready(CallbackId lc) const { return sim->pending(static_cast<std::uint32_t>(e->setup.callbacks[lc])); }
    Duration deadline(CallbackId lc) const {
      return sim->pending_deadline(static_cast<std::uint32_t>(e->setup.callbacks[lc]));
    }
  };
  void admit(ExecState& e, std::uint32_t c) { e.adm.released(cb_[c].local, Src{this, &e}); }
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
  void resched(std::uint32_t core);
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
  Duration jitter_sample(const CbState& s) {
    if (s.fixed_delay >= 0) return s.fixed_delay;  // SimOptions::release_delays
    if (s.jitter <= 0) return 0;
    return o_.random_jitter ? rng_.uniform(0, s.jitter) : s.jitter;
  }
  Duration comm_delay(const Out& out);
  void record(std::uint32_t chain, Duration release);
  void leaf_done(std::uint32_t chain, Duration release);
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
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> to_dispatch_;
  std::deque<ExecState> ex_;  // never moves: each Admission points at its queue
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
  // Branching chains: leaves per chain, and per instance (its release) the leaves done so far.
  std::vector<std::uint32_t> leaf_count_;
  std::vector<std::map<Duration, std::uint32_t>> joins_;
  std::vector<ExecSamples> samples_;     // per callback since the control's last activation
  bool missed_ = false;                  // a watched chain missed since then
  Duration control_at_ = -1;             // the scheduled activation
  std::uint32_t control_version_ = 0;    // ... (an earlier one replaces it)
  SimResult r_;
};

void Simulator::build() {
  const std::size_t n = m_.callbacks.size();
  cb_.resize(n);
  r_.callbacks.resize(n);
  for (std::size_t c = 0; c < n; ++c) r_.callbacks[c].name = m_.callbacks[c].name;

  // chains
  r_.chains.resize(m_.chains.size());
  chain_deadline_.resize(m_.chains.size());
  joins_.resize(m_.chains.size());
  for (std::uint32_t i = 0; i < m_.chains.size(); ++i) {
    const Chain& ch = m_.chains[i];
    ChainStats& st = r_.chains[i];
    st.name = ch.name;
    st.deadline = ch.deadline;
    chain_deadline_[i] = ch.deadline;
    st.period = ch.period;
    if (ch.callbacks.empty()) continue;
    const std::size_t src = m_.callback_index(ch.callbacks.front());
    if (st.period == 0 && m_.callbacks[src].is_timer()) st.period = m_.callbacks[src].period;
    // The instance ends when every leaf (the last callback of each root-to-leaf path) has run for
    // it: a branching chain's fork-join end, as the runtime's monitor has it (ChainSpec::leaves).
    std::vector<std::string> leaves;
    for (const auto& path : ch.paths())
      if (!path.empty() && std::find(leaves.begin(), leaves.end(), path.back()) == leaves.end())
        leaves.push_back(path.back());
    if (leaves.empty()) leaves.push_back(ch.callbacks.back());
    leaf_count_.push_back(static_cast<std::uint32_t>(leaves.size()));
    for (std::size_t p = 0; p < ch.callbacks.size(); ++p) {
      const std::size_t c = m_.callback_index(ch.callbacks[p]);
      const bool leaf = std::find(leaves.begin(), leaves.end(), ch.callbacks[p]) != leaves.end();
      cb_[c].chains.push_back(ChainRef{i, p == 0, leaf});
      if (cb_[c].chains.size() > kMaxStamps)
        throw std::invalid_argument("simulator: callback " + m_.callbacks[c].name + " is on more than 8 chains");
    }
    if (ch.deadline > 0)
      cb_[src].source_rel_deadline = std::min(cb_[src].source_rel_deadline, ch.deadline);
  }
  chain_key_.assign(m_.chains.size(), 0);
  for (std::uint32_t i = 0; i < m_.chains.size(); ++i) {
    const Chain& ch = m_.chains[i];
    if (ch.callbacks.empty() || ch.deadline <= 0) continue;
    const Duration src_d = cb_[m_.callback_index(ch.callbacks.front())].source_rel_deadline;
    chain_key_[i] = src_d != kNoDeadline ? std::min(ch.deadline, src_d) : ch.deadline;
  }

  // callbacks
  std::uint32_t pool_size = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const Callback& cb = m_.callbacks[c];
    CbState& s = cb_[c];
    s.kind = cb.kind;
    s.wcet = cb.wcet;
    s.bcet = std::min(cb.best_case(), cb.wcet);
    if (cb.is_timer()) {
      auto it = o_.offsets.find(cb.name);
      const Duration off = it != o_.offsets.end() ? it->second : cb.offset;
      s.clock = sched::TimerClock{cb.period, off, o_.timer_rule};
      s.jitter = cb.jitter;
      if (auto d = o_.release_delays.find(cb.name); d != o_.release_delays.end())
        s.fixed_delay = std::clamp<Duration>(d->second, 0, cb.jitter);
      if (cb.period <= 0) throw std::invalid_argument("simulator: timer " + cb.name + " has no period");
    } else {
      s.q_begin = pool_size;
      s.q_cap = static_cast<std::uint32_t>(std::max(1, cb.queue_depth));
      pool_size += s.q_cap;
    }
    for (const std::string& f : cb.fuses) {
      const std::size_t in = m_.callback_index(f);
      s.fuses.push_back(static_cast<std::uint32_t>(in));
      cb_[in].fused_by.push_back(static_cast<std::uint32_t>(c));
    }
  }
  pool_.resize(pool_size);

  // publish -> subscribers, with the chains each hop belongs to
  for (std::size_t c = 0; c < n; ++c) {
    const Callback& cb = m_.callbacks[c];
    for (const std::string& topic : cb.publishes) {
      const Topic* tp = m_.topic(topic);
      for (std::size_t sub : m_.subscribers(topic)) {
        Out o;
        o.sub = static_cast<std::uint32_t>(sub);
        o.comm = m_.placement_comm(cb, m_.callbacks[sub]);
        o.size = tp ? tp->size : 0;
        for (std::uint32_t i = 0; i < m_.chains.size(); ++i)
          for (const Hop& h : m_.chains[i].hops)
            if (h.from == cb.name && h.to == m_.callbacks[sub].name) {
              o.chains.push_back(i);
              o.comm = h.comm;
              if (h.message_size > 0) o.size = h.message_size;
            }
        o.fixed_delay = m_.communication.cost_of(o.comm).cost(o.size);
        cb_[c].outs.push_back(std::move(o));
      }
    }
  }

  // Implicit fusion sets (the reference system's Fusion node): two or more plain subscriptions
  // of one node that publish the same topics. Each caches its input; the one that completes
  // the set (every other member fresh) works and publishes one message carrying the chain
  // instances of all cached inputs; the others only cache and run their BCET.
  for (const auto& set : implicit_fusion_sets(m_)) {  // model/facts.hpp, shared with the analyses
    std::vector<std::uint32_t> members(set.begin(), set.end());
    {
      for (std::uint32_t c : members) cb_[c].fset = static_cast<std::uint32_t>(fsets_.size());
      // whichever member publishes forwards the chain instances of every member's hops
      for (std::uint32_t c : members)
        for (Out& out : cb_[c].outs)
          for (std::uint32_t o : members)
            for (const Out& other : cb_[o].outs)
              if (other.sub == out.sub)
                for (std::uint32_t ch : other.chains)
                  if (std::find(out.chains.begin(), out.chains.end(), ch) == out.chains.end()) out.chains.push_back(ch);
      fsets_.push_back(members);
    }
  }

  // executors, threads, cores
  std::vector<std::uint32_t> host_core_base(m_.hosts.size() + 1, 0), host_rr(m_.hosts.size(), 0);
  for (std::size_t h = 0; h < m_.hosts.size(); ++h)
    host_core_base[h + 1] = host_core_base[h] + static_cast<std::uint32_t>(std::max(1, m_.hosts[h].cores));
  cores_.resize(std::max<std::uint32_t>(1, host_core_base.back()));
  for (std::size_t x = 0; x < m_.executors.size(); ++x) {
    const Executor& exd = m_.executors[x];
    sched::ExecutorSetup setup = sched::make_setup(m_, x, o_.policy, o_.threads);
    if (o_.wait_set_seed && setup.policy == Policy::RosDefault)
      sched::wait_set_order(setup.specs, *o_.wait_set_seed + x);
    ex_.emplace_back(std::move(setup));
    ExecState& e = ex_.back();
    std::size_t h = 0;
    for (; h < m_.hosts.size(); ++h)
      if (m_.hosts[h].name == exd.host) break;
    const std::uint32_t host_cores = h < m_.hosts.size() ? host_core_base[h + 1] - host_core_base[h] : 1;
    const std::uint32_t base = h < m_.hosts.size() ? host_core_base[h] : 0;
    for (std::size_t t = 0; t < e.setup.threads.size(); ++t) {
      const sched::ThreadSpec& ts = e.setup.threads[t];
      ThreadState st;
      st.exec = static_cast<std::uint32_t>(x);
      st.local = static_cast<sched::ThreadId>(t);
      std::uint32_t core;
      if (!o_.threads && t < exd.threads.size())  // the model's threads: its placement rule (facts.hpp)
        core = static_cast<std::uint32_t>(simulated_core(m_, x, t)) % host_cores;
      else if (!ts.cores.empty()) core = static_cast<std::uint32_t>(ts.cores.front()) % host_cores;
      else core = h < m_.hosts.size() ? host_rr[h]++ % host_cores : 0;
      st.core = base + core;
      const auto gid = static_cast<std::uint32_t>(th_.size());
      if (ts.reservation && ts.reservation->budget > 0 && ts.reservation->period > 0) {
        st.has_res = true;
        st.cls = 0;
        st.Q = ts.reservation->budget;
        st.P = ts.reservation->period;
      } else if (ts.fifo_priority) {  // thread_fifo_priority (model/facts.hpp), via make_setup
        st.cls = 1;
        st.rank = -static_cast<std::int64_t>(*ts.fifo_priority);
      } else {
        st.rank = gid;
      }
      th_.push_back(st);
      cores_[st.core].threads.push_back(gid);
      e.threads.push_back(gid);
      r_.threads.push_back(ThreadInfo{exd.name, ts.name, exd.host, static_cast<int>(core)});
    }
    for (std::size_t lc = 0; lc < e.setup.callbacks.size(); ++lc) {
      cb_[e.setup.callbacks[lc]].exec = static_cast<std::uint32_t>(x);
      cb_[e.setup.callbacks[lc]].local = static_cast<CallbackId>(lc);
    }
  }
  if (am_) build_devices();
  heap_.reserve(1024 + 4 * n + th_.size());
}

Duration Simulator::pending_deadline(std::uint32_t c) const {
  const CbState& s = cb_[c];
  Duration d = kNoDeadline;
  if (s.kind == CallbackKind::Timer) {
    if (s.source_rel_deadline != kNoDeadline) d = s.clock.next + s.source_rel_deadline;  // d = a + D
    return d;
  }
  if (s.q_count == 0) return d;
  const Message& msg = pool_[s.q_begin + s.q_head];
  for (std::uint32_t k = 0; k < msg.n; ++k)
    if (chain_key_[msg.s[k].chain] > 0) d = std::min(d, msg.s[k].release + chain_key_[msg.s[k].chain]);
  if (s.source_rel_deadline != kNoDeadline) d = std::min(d, msg.arrival + s.source_rel_deadline);
  return d;
}

void Simulator::on_release(std::uint32_t c) {
  ExecState& e = ex_[cb_[c].exec];
  if (!pending(c)) return;
  admit(e, c);
  mark_dispatch(cb_[c].exec);
}

void Simulator::dispatch(ExecState& e, std::uint32_t first) {
  bool idle_before = false;  // an idle thread found nothing earlier in this pass
  if (first != kNone && !th_[first].busy) {
    if (!try_take(e, first)) {
      if (e.default_mode) return;
      idle_before = true;
    }
  }
  // LaME's best-effort refresh can admit work in the middle of a pass: the idle threads tried
  // before it look again, as the runtime wakes them (Executor::wake_others on admitted()).
  for (bool again = true; again;) {
    again = false;
    for (std::uint32_t t : e.threads) {
      if (th_[t].busy || t == first) continue;
      const bool took = try_take(e, t);
      if (e.adm.admitted() && idle_before) again = true;
      if (!took) {
        idle_before = true;
        if (e.default_mode || (e.q.empty() && e.adm.waiting() == 0)) return;
      }
    }
    first = kNone;
  }
}

// Selection under the executor's admission rule (sched::Admission: a polling point of the
// default executors, LaME's best-effort refresh) and Algorithm 1 (sched::ReadyQueue).
bool Simulator::try_take(ExecState& e, std::uint32_t t) {
  const CallbackId lc = e.adm.next(th_[t].local, Src{this, &e});
  if (lc == kNoCallback) return false;
  start_exec(t, static_cast<std::uint32_t>(e.setup.callbacks[lc]));
  return true;
}

void Simulator::start_exec(std::uint32_t t, std::uint32_t c) {
  ThreadState& th = th_[t];
  CbState& s = cb_[c];
  th.busy = true;
  th.cb = c;
  th.start = now_;
  if (s.kind == CallbackKind::Timer) {
    const auto tk = s.clock.take(now_);
    th.release = tk.released + s.cur_jitter;
    th.chain_release = tk.released;
    th.input.n = 0;
    th.input.arrival = th.release;
    s.timer_ready = false;
    if (tk.skipped > 0) {
      r_.callbacks[c].drops += tk.skipped;
      for (const ChainRef& r : s.chains)
        if (r.source) r_.chains[r.chain].drops += tk.skipped, r_.chains[r.chain].released += tk.skipped;
    }
    s.cur_jitter = jitter_sample(s);
    push_event(s.clock.next + s.cur_jitter, Ev::TimerFire, c);
  } else {
    copy_message(th.input, pool_[s.q_begin + s.q_head]);
    s.q_head = (s.q_head + 1) % s.q_cap;
    --s.q_count;
    th.release = th.input.arrival;
    th.chain_release = th.release;
    if (pending(c)) admit(ex_[s.exec], c);  // the next input: one instance at a time
  }
  for (const ChainRef& r : s.chains)
    if (r.source) ++r_.chains[r.chain].released;
  th.completes_pair = true;
  if (s.fset != kNone)
    for (std::uint32_t o : fsets_[s.fset])
      if (o != c && !cb_[o].fresh) th.completes_pair = false;
  th.exec_total = th.completes_pair ? exec_time(s) : scaled(s.bcet);  // a cache-only run
  th.drawn = th.exec_total;
  th.exec_done = 0;
  th.next_call = 0;
  th.remaining = chunk_end(th);
  mark(th.core);
}

void Simulator::record(std::uint32_t chain, Duration release) {
  ChainStats& st = r_.chains[chain];
  const Duration rt = now_ - release;
  if (st.instances == 0 || rt > st.wcrt) st.wcrt = rt;
  if (st.instances == 0 || rt < st.bcrt) st.bcrt = rt;
  st.mean += static_cast<double>(rt);  // sum until finalised
  ++st.instances;
  if (st.deadline > 0 && rt > st.deadline) {
    ++st.deadline_misses;
    if (o_.control && o_.control->watches(chain) && !missed_) {
      missed_ = true;
      const Duration at = o_.control->next_activation(now_, true);
      if (at >= 0 && (control_at_ < 0 || at < control_at_)) schedule_control(at);
    }
  }
  if (o_.keep_samples) {
    st.samples.push_back(rt);
    st.releases.push_back(release);
  }
}

void Simulator::leaf_done(std::uint32_t chain, Duration release) {
  if (leaf_count_[chain] <= 1) return record(chain, release);
  auto& j = joins_[chain];
  if (++j[release] < leaf_count_[chain]) {
    if (j.size() > 4096) j.erase(j.begin());  // (an instance whose other branch was dropped)
    return;
  }
  j.erase(release);
  record(chain, release);
}

void Simulator::schedule_control(Duration at) {
  control_at_ = std::max(at, now_);
  push_event(control_at_, Ev::Control, ++control_version_);
}

void Simulator::control_activation() {
  std::vector<ExecSamples> taken(samples_.size());
  std::swap(taken, samples_);
  const bool missed = missed_;
  missed_ = false;
  for (const Reconfiguration& r : o_.control->activate(now_, missed, taken)) reconfigure(r);
  const Duration at = o_.control->next_activation(now_ + 1, missed_);
  control_at_ = -1;
  if (at >= 0) schedule_control(at);
}

// As the runtime's Executor::reconfigure (a new ready queue; queued and running instances carry
// over; kind and wait-set order stay) and sched_setattr on the executor's threads.
void Simulator::reconfigure(const Reconfiguration& r) {
  if (r.executor >= ex_.size()) throw std::invalid_argument("simulator: a reconfiguration names no executor");
  ExecState& e = ex_[r.executor];
  if (r.reservations.size() > e.threads.size())
    throw std::invalid_argument("simulator: a reconfiguration names more threads than the executor has");
  for (std::size_t t = 0; t < r.reservations.size(); ++t) set_reservation(e.threads[t], r.reservations[t]);
  if (!r.specs.empty()) {
    if (r.specs.size() != e.setup.specs.size())
      throw std::invalid_argument("simulator: a reconfiguration's callbacks do not match the executor's");
    std::vector<sched::CallbackSpec> specs = r.specs;
    for (std::size_t id = 0; id < specs.size(); ++id) {
      if (specs[id].group >= r.groups.size()) throw std::invalid_argument("simulator: a reconfiguration names no group");
      specs[id].kind = e.setup.specs[id].kind;
      specs[id].wait_set_position = e.setup.specs[id].wait_set_position;
    }
    sched::ReadyQueue fresh(e.setup.policy, specs, r.groups, e.threads.size());
    for (std::uint32_t t : e.threads)
      if (th_[t].busy) fresh.start(cb_[th_[t].cb].local);
    for (CallbackId id = 0; id < specs.size(); ++id)
      if (e.q.queued(id)) fresh.push(id, e.q.deadline(id));
    std::swap(e.q, fresh);  // the admission rule keeps pointing at e.q (its waiting work stays)
    e.setup.specs = std::move(specs);
    e.setup.groups = r.groups;
  }
  mark_dispatch(static_cast<std::uint32_t>(r.executor));
}

// A reservation set on a running thread. With the same period as before, the replenishment grid
// stays and this period's remaining budget moves by the change (the core's reservations stay
// in phase, as the supply bound function of the analyses assumes); otherwise a new server
// starts now with a full budget.
void Simulator::set_reservation(std::uint32_t t, const std::optional<Reservation>& r) {
  ThreadState& th = th_[t];
  charge(cores_[th.core]);
  const bool on = r && r->budget > 0 && r->period > 0;
  if (on && th.has_res && th.P == r->period) {
    th.budget = std::max<Duration>(0, th.budget + r->budget - th.Q);
    th.Q = r->budget;
  } else if (on) {
    th.has_res = true;
    th.cls = 0;
    th.Q = r->budget;
    th.P = r->period;
    th.budget = th.Q;
    th.rank = now_ + th.P;
    push_event(now_ + th.P, Ev::Replenish, t, ++th.res_gen);
  } else if (th.has_res) {
    th.has_res = false;
    ++th.res_gen;
    th.cls = 2;
    th.rank = t;
  }
  mark(th.core);
}

Duration Simulator::comm_delay(const Out& out) {
  if (o_.comm == CommDelay::Sampled) {
    const auto& ms = m_.communication.measurements;
    Bytes best = -1;
    for (const auto& mm : ms)
      if (mm.kind == out.comm && (best < 0 || std::llabs(mm.size - out.size) < std::llabs(best - out.size))) best = mm.size;
    if (best >= 0) {
      std::uint32_t count = 0;
      for (const auto& mm : ms)
        if (mm.kind == out.comm && mm.size == best) ++count;
      std::uint32_t pick = static_cast<std::uint32_t>(rng_.next() % count);
      for (const auto& mm : ms)
        if (mm.kind == out.comm && mm.size == best && pick-- == 0) return mm.latency;
    }
  }
  return out.fixed_delay;
}

void Simulator::complete_exec(std::uint32_t t) {
  ThreadState& th = th_[t];
  const std::uint32_t c = th.cb;
  CbState& s = cb_[c];
  ExecState& e = ex_[s.exec];
  CallbackStats& cs = r_.callbacks[c];
  ++cs.executions;
  ++r_.executions;
  cs.max_latency = std::max(cs.max_latency, now_ - th.release);
  if (o_.trace) {
    if (r_.trace.size() < o_.trace_limit) r_.trace.push_back(TraceEntry{t, c, th.release, th.start, now_});
    else r_.trace_truncated = true;
  }
  if (o_.control) {  // the monitoring's sample: this instance's execution time
    ExecSamples& x = samples_[c];
    ++x.count;
    Duration v = th.drawn;
    for (Duration& slot : x.largest)
      if (v > slot) std::swap(v, slot);
  }
  // chain instances: start, forward, or finish (Sec. III: R = finish of the last - release of the first)
  Message out;
  out.n = 0;
  bool publish = true;
  if (s.kind == CallbackKind::FusionTrigger)
    for (std::uint32_t in : s.fuses) publish = publish && cb_[in].cached;
  for (const ChainRef& r : s.chains) {
    Duration rel = -1;
    if (r.source) {
      rel = th.chain_release;
    } else {
      for (std::uint32_t k = 0; k < th.input.n; ++k)
        if (th.input.s[k].chain == r.chain) rel = th.input.s[k].release;
    }
    if (rel < 0) continue;
    if (r.last) leaf_done(r.chain, rel);
    else if (out.n < kMaxStamps) out.s[out.n++] = Stamp{r.chain, rel};
  }
  if (s.fset != kNone) {  // implicit fusion: cache, and publish once the set is complete
    copy_message(s.cache, out);
    s.fresh = true;
    for (std::uint32_t o : fsets_[s.fset]) publish = publish && cb_[o].fresh;
    if (publish) {
      out.n = 0;
      for (std::uint32_t o : fsets_[s.fset]) {
        CbState& mem = cb_[o];
        for (std::uint32_t k = 0; k < mem.cache.n && out.n < kMaxStamps; ++k) out.s[out.n++] = mem.cache.s[k];
        mem.fresh = false;
      }
    }
  }
  if (s.kind == CallbackKind::FusionInput && !s.cached) {
    s.cached = true;
    for (std::uint32_t trig : s.fused_by)
      if (pending(trig)) on_release(trig);
  }
  if (publish) {
    for (Out& o : s.outs) {
      Message msg;
      msg.n = 0;
      for (std::uint32_t k = 0; k < out.n; ++k)
        for (std::uint32_t ch : o.chains)
          if (out.s[k].chain == ch) msg.s[msg.n++] = out.s[k];
      if (o.device) {  // a server-mode request: its continuation is delivered by the device
        const DeviceCall& call = *s.piece->request;
        Request rq;
        rq.piece = c;
        rq.target = o.sub;
        rq.segment = static_cast<std::uint32_t>(call.segment);
        const auto prio = effective_priority(m_, c);
        rq.key = prio ? -static_cast<std::int64_t>(*prio) : std::numeric_limits<std::int64_t>::max();
        msg.arrival = now_;
        if (flight_free_.empty()) {
          rq.slot = static_cast<std::uint32_t>(flight_.size());
          flight_.emplace_back();
        } else {
          rq.slot = flight_free_.back();
          flight_free_.pop_back();
        }
        copy_message(flight_[rq.slot], msg);
        issue(static_cast<std::uint32_t>(accelerator_index(*user_, call.accelerator)), rq);
        continue;
      }
      // DDS delivers one writer's samples to a reader in the order they were written (a
      // reliable reader waits for a gap to be filled, a best-effort one discards an older
      // sample): a message never overtakes an earlier one on the same pair, however the
      // latencies are drawn (CommDelay::Sampled draws each message's independently).
      const Duration d = comm_delay(o);
      const bool in_flight = o.last_arrival >= now_;  // an earlier message arrives now or later
      msg.arrival = std::max(now_ + d, o.last_arrival);
      o.last_arrival = msg.arrival;
      if (d == 0 && !in_flight) {
        deliver(o.sub, msg);
      } else {
        std::uint32_t slot;
        if (flight_free_.empty()) {
          slot = static_cast<std::uint32_t>(flight_.size());
          flight_.emplace_back();
          copy_message(flight_.back(), msg);
        } else {
          slot = flight_free_.back();
          flight_free_.pop_back();
          copy_message(flight_[slot], msg);
        }
        push_event(msg.arrival, Ev::Deliver, o.sub, slot);
      }
    }
  }
  // Publishing happens inside the callback: idle threads react to the new messages while its
  // group is still taken; only then does the callback return and free its group.
  flush_dispatch();
  e.q.complete(s.local);
  th.busy = false;
  th.cb = kNone;
  mark_dispatch(s.exec, t);
}

void Simulator::deliver(std::uint32_t sub, const Message& msg) {
  CbState& s = cb_[sub];
  if (s.q_cap == 0) return;  // a timer subscribed to nothing
  if (s.q_count == s.q_cap) {  // queue full: the oldest message is overwritten (a drop)
    const Message& old = pool_[s.q_begin + s.q_head];
    ++r_.callbacks[sub].drops;
    for (std::uint32_t k = 0; k < old.n; ++k) ++r_.chains[old.s[k].chain].drops;
    s.q_head = (s.q_head + 1) % s.q_cap;
    --s.q_count;
    ExecState& e = ex_[s.exec];
    if (!e.default_mode && e.q.queued(s.local)) {  // still visible, re-keyed by its new oldest message
      e.q.remove(s.local);
      copy_message(pool_[s.q_begin + (s.q_head + s.q_count) % s.q_cap], msg);
      ++s.q_count;
      e.q.push(s.local, pending_deadline(sub));
      on_release(sub);
      return;
    }
  }
  copy_message(pool_[s.q_begin + (s.q_head + s.q_count) % s.q_cap], msg);
  ++s.q_count;
  on_release(sub);
}

// ---- shared accelerators (PiCAS Sec. IV; model/accelerator.hpp) ------------------------------

// Devices of every host (flat, accelerator_index order); server threads after the executors'
// threads, pinned to their first core (unpinned: round robin after the executors' threads) at
// their SCHED_FIFO priority; every piece's calls; the Outs that are server-mode requests.
void Simulator::build_devices() {
  const auto refs = accelerator_refs(*user_);
  dev_.resize(refs.size());
  std::vector<std::uint32_t> base(m_.hosts.size() + 1, 0), rr(m_.hosts.size(), 0);
  for (std::size_t h = 0; h < m_.hosts.size(); ++h) base[h + 1] = base[h] + static_cast<std::uint32_t>(std::max(1, m_.hosts[h].cores));
  for (const ThreadInfo& ti : r_.threads)  // continue the executors' round robin
    for (std::size_t h = 0; h < m_.hosts.size(); ++h)
      if (m_.hosts[h].name == ti.host) ++rr[h];
  // (the executors' round robin counted only unpinned threads; counting all is a placement too)
  for (std::size_t d = 0; d < refs.size(); ++d) {
    const Accelerator& a = accelerator_of(*user_, refs[d]);
    DeviceState& dv = dev_[d];
    dv.access = a.access;
    dv.overhead = a.server_overhead;
    dv.block = a.block_preemption;
    r_.accelerators.push_back(m_.hosts[refs[d].host].name + "/" + a.name);
    if (a.access != AcceleratorAccess::Server) continue;
    const std::uint32_t host_cores = base[refs[d].host + 1] - base[refs[d].host];
    ThreadState st;
    st.exec = kNone;
    st.device = static_cast<std::uint32_t>(d);
    const std::uint32_t core = a.server_cores.empty() ? rr[refs[d].host]++ % host_cores
                                                      : static_cast<std::uint32_t>(a.server_cores.front()) % host_cores;
    st.core = base[refs[d].host] + core;
    st.cls = 1;
    st.rank = -static_cast<std::int64_t>(a.server_priority.value_or(0));
    dv.server = static_cast<std::uint32_t>(th_.size());
    th_.push_back(st);
    cores_[st.core].threads.push_back(dv.server);
    r_.threads.push_back(ThreadInfo{"", a.name + " server", m_.hosts[refs[d].host].name, static_cast<int>(core)});
  }
  for (std::size_t c = 0; c < cb_.size(); ++c) {
    CbState& s = cb_[c];
    s.piece = &am_->pieces[c];
    if (!s.piece->request) continue;
    const std::string& next = m_.callbacks[c + 1].name;  // the continuation follows its piece
    for (Out& o : s.outs)
      if (m_.callbacks[o.sub].name == next) o.device = true;
  }
}

// Where the thread's current CPU chunk ends (CPU time of the instance): at the next direct call,
// or at the end of the instance's CPU time (a call beyond it is made when the CPU part is over).
Duration Simulator::chunk_end(const ThreadState& th) const {
  const Piece* p = cb_[th.cb].piece;
  if (p && th.next_call < p->direct.size()) return std::min(p->direct[th.next_call].at, th.exec_total);
  return th.exec_total;
}

// The thread ran its chunk: a direct call (the thread blocks) or the end of the instance.
void Simulator::chunk_done(std::uint32_t t) {
  ThreadState& th = th_[t];
  th.exec_done = chunk_end(th);
  const Piece* p = cb_[th.cb].piece;
  if (p && th.next_call < p->direct.size()) {
    const DeviceCall& call = p->direct[th.next_call];
    Request rq;
    rq.piece = th.cb;
    rq.call = th.next_call;
    rq.thread = t;
    rq.segment = static_cast<std::uint32_t>(call.segment);
    th.suspended = true;
    issue(static_cast<std::uint32_t>(accelerator_index(*user_, call.accelerator)), rq);
    return;
  }
  complete_exec(t);
}

void Simulator::issue(std::uint32_t device, Request rq) {
  rq.issued = now_;
  rq.seq = req_seq_++;
  DeviceState& d = dev_[device];
  d.queue.push_back(rq);
  if (!d.dirty) {
    d.dirty = true;
    dev_dirty_.push_back(device);
  }
}

// After every event of an instant: an idle device takes its next request (direct: the oldest;
// server: the most urgent, then the oldest), the server first spending its overhead.
void Simulator::flush_devices() {
  for (std::size_t i = 0; i < dev_dirty_.size(); ++i) {
    const std::uint32_t x = dev_dirty_[i];
    DeviceState& d = dev_[x];
    d.dirty = false;
    if (d.busy || d.queue.empty()) continue;
    auto best = d.queue.begin();
    for (auto it = d.queue.begin(); it != d.queue.end(); ++it)
      if (d.access == AcceleratorAccess::Server ? std::pair(it->key, it->seq) < std::pair(best->key, best->seq)
                                                 : it->seq < best->seq)
        best = it;
    d.current = *best;
    d.queue.erase(best);
    d.busy = true;
    if (d.access == AcceleratorAccess::Server && d.overhead > 0 && !d.current.started) {
      ThreadState& srv = th_[d.server];
      srv.busy = true;
      srv.remaining = d.overhead;
      mark(srv.core);
    } else {
      start_device(x);
    }
  }
  dev_dirty_.clear();
}

// One part of a segment (copy-in, kernel or copy-out) as the execution-time mode draws it.
Duration Simulator::device_part(Duration w, const std::optional<Duration>& b) {
  const Duration lo = std::min(b.value_or(w), w);
  switch (o_.exec) {
    case ExecTime::Wcet: return w;
    case ExecTime::Bcet: return lo;
    case ExecTime::Uniform: return rng_.uniform(lo, w);
    case ExecTime::Mix: return (rng_.next() >> 11) & 1 ? w : lo;
  }
  return w;
}

Duration Simulator::device_time(const AcceleratorSegment& s) {
  return device_part(s.copy_in, s.copy_in_bcet) + device_part(s.kernel, s.kernel_bcet) +
         device_part(s.copy_out, s.copy_out_bcet);
}

// Request-level: the whole segment is one event. Block preemption: the next non-preemptive
// chunk (copy-in, one block of the kernel, copy-out); the parts are drawn at the first start.
void Simulator::start_device(std::uint32_t x) {
  DeviceState& d = dev_[x];
  if (!d.block) {
    d.started = now_;
    push_event(now_ + device_time(segment_of(d.current)), Ev::DeviceDone, x);
    return;
  }
  Request& rq = d.current;
  if (!rq.started) {
    const AcceleratorSegment& s = segment_of(rq);
    rq.started = true;
    rq.first_start = now_;
    rq.left_in = device_part(s.copy_in, s.copy_in_bcet);
    rq.left_kernel = device_part(s.kernel, s.kernel_bcet);
    rq.left_out = device_part(s.copy_out, s.copy_out_bcet);
    rq.block = std::max<Duration>(1, s.block.value_or(s.kernel));
  }
  d.started = rq.first_start;
  Duration chunk = 0;
  if (rq.left_in > 0) std::swap(chunk, rq.left_in);
  else if (rq.left_kernel > 0) rq.left_kernel -= (chunk = std::min(rq.block, rq.left_kernel));
  else std::swap(chunk, rq.left_out);
  push_event(now_ + chunk, Ev::DeviceDone, x);
}

void Simulator::device_done(std::uint32_t x) {
  DeviceState& d = dev_[x];
  if (d.block && d.current.left_in + d.current.left_kernel + d.current.left_out > 0) {
    // between two chunks: a strictly more urgent queued request takes the device
    const bool urgent = std::any_of(d.queue.begin(), d.queue.end(), [&](const Request& q) { return q.key < d.current.key; });
    if (!urgent) {
      start_device(x);
      return;
    }
    d.queue.push_back(d.current);  // resumes later where it stopped (same key and arrival)
    d.busy = false;
    if (!d.dirty) {
      d.dirty = true;
      dev_dirty_.push_back(x);
    }
    return;
  }
  const Request rq = d.current;
  d.busy = false;
  if (o_.trace) {
    if (r_.device_trace.size() < o_.trace_limit)
      r_.device_trace.push_back(DeviceTraceEntry{x, rq.piece, rq.segment, rq.issued, d.started, now_});
    else
      r_.trace_truncated = true;
  }
  if (rq.thread != kNone) {  // direct: the thread goes on with its CPU part
    ThreadState& th = th_[rq.thread];
    th.suspended = false;
    ++th.next_call;
    th.remaining = chunk_end(th) - th.exec_done;
    if (th.remaining <= 0) chunk_done(rq.thread);
    else mark(th.core);
  } else {  // server: the continuation is released with the request's chain instances
    flight_[rq.slot].arrival = now_;
    flight_free_.push_back(rq.slot);
    deliver(rq.target, flight_[rq.slot]);
  }
  if (!d.dirty) {
    d.dirty = true;
    dev_dirty_.push_back(x);
  }
}

void Simulator::charge(Core& k) {
  if (k.running != kNone) {
    ThreadState& th = th_[k.running];
    const Duration el = now_ - k.since;
    th.remaining -= el;
    if (th.has_res) th.budget -= el;
  }
  k.since = now_;
}

void Simulator::resched(std::uint32_t core) {
  Core& k = cores_[core];
  k.dirty = false;
  charge(k);
  std::uint32_t best = kNone;
  for (std::uint32_t t : k.threads) {
    const ThreadState& th = th_[t];
    if (!th.busy || th.suspended || (th.has_res && th.budget <= 0)) continue;
    if (best == kNone || th.cls < th_[best].cls || (th.cls == th_[best].cls && th.rank < th_[best].rank)) best = t;
  }
  if (best == k.running && best == kNone) return;
  k.running = best;
  ++k.version;
  if (best != kNone) {
    const ThreadState& th = th_[best];
    Duration dt = th.remaining;
    if (th.has_res) dt = std::min(dt, th.budget);
    push_event(now_ + dt, Ev::CoreDone, core, k.version);
  }
}

SimResult Simulator::run() {
  for (std::uint32_t c = 0; c < cb_.size(); ++c) {
    CbState& s = cb_[c];
    if (s.kind != CallbackKind::Timer) continue;
    s.cur_jitter = jitter_sample(s);
    push_event(s.clock.next + s.cur_jitter, Ev::TimerFire, c);
  }
  for (std::uint32_t t = 0; t < th_.size(); ++t)
    if (th_[t].has_res) push_event(0, Ev::Replenish, t, th_[t].res_gen);
  if (o_.control) {
    samples_.assign(cb_.size(), ExecSamples{});
    const Duration at = o_.control->next_activation(0, false);
    if (at >= 0) schedule_control(at);
  }

  const Duration end = o_.duration;
  while (!heap_.empty() && heap_.front().t <= end) {
    now_ = heap_.front().t;
    // every event of this instant first (simultaneous releases are seen together), then the
    // dispatch decisions, then the cores. A completion is the exception: it runs its own
    // dispatch pass at once (complete_exec), so completions of one instant are applied one at
    // a time (docs/simulator.md, "Instants").
    while (!heap_.empty() && heap_.front().t == now_) {
    const Event ev = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), EventLater{});
    heap_.pop_back();
    ++r_.events;
    switch (ev.kind) {
      case Ev::TimerFire:
        cb_[ev.a].timer_ready = true;
        on_release(ev.a);
        break;
      case Ev::Deliver: {
        flight_free_.push_back(ev.b);
        deliver(ev.a, flight_[ev.b]);  // the slot is reused only by a later publish
        break;
      }
      case Ev::CoreDone: {
        Core& k = cores_[ev.a];
        if (ev.b != k.version || k.running == kNone) break;
        charge(k);
        const std::uint32_t t = k.running;
        if (th_[t].remaining <= 0) {
          k.running = kNone;
          if (th_[t].device != kNone) {  // an accelerator's server thread: its overhead is spent
            th_[t].busy = false;
            start_device(th_[t].device);
          } else {
            chunk_done(t);
          }
        }
        mark(ev.a);
        break;
      }
      case Ev::DeviceDone:
        device_done(ev.a);
        break;
      case Ev::Replenish: {
        ThreadState& th = th_[ev.a];
        if (ev.b != th.res_gen || !th.has_res) break;  // replaced by a Control's reservation
        charge(cores_[th.core]);
        th.budget = th.Q;
        th.rank = now_ + th.P;  // server deadline
        push_event(now_ + th.P, Ev::Replenish, ev.a, th.res_gen);
        mark(th.core);
        break;
      }
      case Ev::Control:
        if (ev.a == control_version_) control_activation();
        break;
    }
    }
    flush_devices();
    flush_dispatch();
    while (!dirty_.empty()) {
      const std::uint32_t core = dirty_.back();
      dirty_.pop_back();
      resched(core);
    }
  }
  now_ = end;

  // Unfinished instances older than their deadline at the end count as misses (a starved
  // chain must not look fine because it never completes).
  auto late = [&](const Message& msg) {
    for (std::uint32_t k = 0; k < msg.n; ++k) {
      const Duration D = chain_deadline_[msg.s[k].chain];
      if (D > 0 && end - msg.s[k].release > D) ++r_.chains[msg.s[k].chain].deadline_misses;
    }
  };
  for (std::uint32_t c = 0; c < cb_.size(); ++c) {
    const CbState& s = cb_[c];
    for (std::uint32_t i = 0; i < s.q_count; ++i) late(pool_[s.q_begin + (s.q_head + i) % s.q_cap]);
    if (s.kind == CallbackKind::Timer && s.timer_ready)
      for (const ChainRef& r : s.chains)
        if (r.source && chain_deadline_[r.chain] > 0 && end - s.clock.next > chain_deadline_[r.chain])
          ++r_.chains[r.chain].deadline_misses;
  }
  for (const Event& ev : heap_)
    if (ev.kind == Ev::Deliver) late(flight_[ev.b]);
  for (const DeviceState& d : dev_) {  // server-mode requests waiting or in service
    for (const Request& rq : d.queue)
      if (rq.slot != kNone) late(flight_[rq.slot]);
    if (d.busy && d.current.slot != kNone) late(flight_[d.current.slot]);
  }
  for (const ThreadState& th : th_)
    if (th.busy && th.cb != kNone) {
      Message in = th.input;
      for (const ChainRef& r : cb_[th.cb].chains)
        if (r.source && in.n < kMaxStamps) in.s[in.n++] = Stamp{r.chain, th.chain_release};
      late(in);
    }

  for (ChainStats& st : r_.chains) {
    if (st.instances > 0) st.mean /= static_cast<double>(st.instances);
    if (!st.samples.empty()) {
      std::vector<Duration> v = st.samples;
      const std::size_t k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      st.p99 = v[k];
    }
  }
  r_.duration = end;
  return std::move(r_);
}

}  // namespace

SimResult simulate(const Model& model, const SimOptions& options) {
  if (!uses_accelerators(model)) {
    Simulator s(model, options);
    return s.run();
  }
  // Callbacks with server-mode segments run as pieces (model/accelerator.hpp); the result is
  // reported per callback of the model: its executions are its last piece's, its drops and
  // largest latency those of any piece.
  const AcceleratedModel am = expand_accelerators(model);
  Simulator s(am.model, options, &am, &model);
  SimResult r = s.run();
  for (const auto& c : am.model.callbacks) r.trace_callbacks.push_back(c.name);
  std::vector<CallbackStats> per(model.callbacks.size());
  r.executions = 0;
  for (std::size_t u = 0; u < model.callbacks.size(); ++u) {
    per[u].name = model.callbacks[u].name;
    per[u].executions = r.callbacks[am.last[u]].executions;
    for (std::size_t p = am.first[u]; p <= am.last[u]; ++p) {
      per[u].drops += r.callbacks[p].drops;
      per[u].max_latency = std::max(per[u].max_latency, r.callbacks[p].max_latency);
    }
    r.executions += static_cast<std::uint64_t>(per[u].executions);
  }
  r.callbacks = std::move(per);
  return r;
}

}  // namespace chainrt::sim
