// chainrt_rclcpp_nodes: a chainrt model's nodes as plain rclcpp nodes, run under one of rclcpp's
// own executors or under chainrt's ChainExecutor, with the same chain measurement in every case.
//
//   chainrt_rclcpp_nodes --model FILE --executor {single,multi,static,events,chainrt}
//                        [--threads N] [--duration S] [--policy P] [--drain S] [--no-thread-params]
//                        [--process NAME] [--trace FILE] [--run-id ID] [--scale-wcet T_NS:FACTOR]
//                        [--lame-controller PERIOD_NS]
//
// From the model (chainrt's model parser, model/yaml_io.hpp): one rclcpp::Node per model node,
// one callback group per model group, and per model callback a timer (create_wall_timer at its
// period), a subscription (its topic, keep-last at its queue_depth, reliable), a service or a
// client's response callback. Each callback burns its WCET of the thread's CPU time (preemption
// does not count), then publishes on its topics and sends one request to each service it calls.
// LaME's fusion callbacks as chainrt's runtime and simulator run them: an input callback
// (fusion_input) caches its message; a trigger (fusion_trigger) burns its WCET and publishes only
// once every input it fuses has cached at least once. --scale-wcet T_NS:FACTOR burns FACTOR x
// every WCET from T_NS after spinning starts (a frequency drop, emulated).
//
// Chain instances are stamped in the messages: a chain's source timer writes (chain, release,
// seq) — release is the timer's expected call time (rclcpp's TimerInfo), the same under every
// executor — and every callback forwards a chain's stamps only on that chain's hops (a topic it
// publishes to the next callback of the chain, a request, a response). A chain's leaf callback
// ends the instance for its path; an instance completes when every leaf of the chain has ended it
// (branching chains), and its latency is from the release to the last leaf's end. Topic messages
// are std_msgs/Int64MultiArray padded to the model topic's size; requests and responses are
// rcl_interfaces/GetParameters (the stamps in the request's names, the response's integers).
//
// One executor per model executor, with that executor's nodes, each spun in a thread of its own.
// chainrt: ChainExecutor with the model (its policy, or --policy; its threads, or --threads),
// binding every model callback to its generated entity (an entity that does not bind stops the
// run). Stock executors: single (SingleThreaded), multi (MultiThreaded, --threads, default the
// model executor's thread count), static (StaticSingleThreaded), events (EventsExecutor). The
// stock executors' threads get the model executor's pinning (the union of its threads' cores)
// and its highest SCHED_FIFO priority, set on the spinning thread before spin() (a
// MultiThreadedExecutor's threads inherit them); a SCHED_DEADLINE reservation of the model
// executor's threads (the same for all of them) each executor thread sets on itself when it
// first runs a callback (a MultiThreadedExecutor starts its threads itself, and a thread that is
// SCHED_DEADLINE may not create threads); --no-thread-params leaves every thread as is.
// --lame-controller runs LaME's online controller in the ChainExecutor (chainrt only).
//
// The timers run --duration seconds from the start of spinning; then they are cancelled and the
// instances still under way get --drain seconds (default: twice the longest deadline, at least
// 0.5 s) to complete. Prints "ready" when spinning starts and at the end one JSON line: per chain
// the instances released, completed and lost (released, not completed), their latency (mean,
// p99, max, min in ns) and deadline misses; per callback its runs; under chainrt the executor's
// own report (and with --lame-controller the controller's activations, as chainrt-run's), and
// per executor the class of the executor object that spun it (executor_class); the warnings of
// the threads (pinning, priority, a reservation not taken).
// Bad arguments or a model that cannot be generated: one line on stderr, exit 2. SIGINT ends
// the run early (rclcpp's handler): the timers stop and the result is printed as at the end.
//
// --process NAME: only the nodes of the model executors in process NAME (an executor's process,
// else its name), as chainrt-run --process does, so that a model's processes run as separate
// programs (on different hosts). A chain whose source timer and leaves are all here is measured
// as above; a chain with a part elsewhere is measured from the traces of the processes together
// ("releases" counts the source timers' releases made here). --trace FILE: every callback
// execution, under every executor alike, as one JSON line {executor, callback, thread, release,
// start, finish, cpu, deadline} (times in ns relative to the program's start, written to
// FILE.start on CLOCK_MONOTONIC; release: the chain release its input carried, -1 none, and an
// execution serving instances of several releases one line per release; cpu: the thread's CPU
// time of the execution; deadline always -1), the format of chainrt-run --trace, so that
// chainrt's accounting reads both. --run-id ID: a tag on the command line (what tells a run's
// processes apart), echoed in the result.
#include <cxxabi.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <rcl_interfaces/srv/get_parameters.hpp>
#include <rclcpp/executors/multi_threaded_executor.hpp>
#include <rclcpp/executors/single_threaded_executor.hpp>
#include <rclcpp/executors/static_single_threaded_executor.hpp>
#include <rclcpp/experimental/executors/events_executor/events_executor.hpp>
#include <rclcpp/rclcpp.hpp>
#include <std_msgs/msg/int64_multi_array.hpp>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "chainrt/runtime/node.hpp"  // burn_cpu: a callback's WCET of the thread's CPU time
#include "chainrt/runtime/supervised.hpp"
#include "chainrt/runtime/threads.hpp"

namespace {

using namespace std::chrono_literals;
using Msg = std_msgs::msg::Int64MultiArray;
using Srv = rcl_interfaces::srv::GetParameters;
using chainrt::Duration;

using chainrt::runtime::now_ns;
using chainrt::runtime::thread_cpu_ns;

struct Args {
  std::string model, executor, policy, process, trace, run_id;
  std::int64_t started = 0;  // the program's start on CLOCK_MONOTONIC (the trace's origin)
  int threads = 0;  // 0: the model's (chainrt, multi)
  double duration = 10, drain = -1;
  bool thread_params = true;
  std::int64_t scale_at = -1;  // ns after spinning starts; < 0: never
  double scale = 1;
  std::int64_t lame_controller = 0;  // ns; 0: none
};

const char* kUsage =
    "usage: chainrt_rclcpp_nodes --model FILE --executor {single,multi,static,events,chainrt} [--threads N] "
    "[--duration S] [--policy P] [--drain S] [--no-thread-params] [--process NAME] [--trace FILE] [--run-id ID] "
    "[--scale-wcet T_NS:FACTOR] [--lame-controller PERIOD_NS]";

// The command line, or a one-line reason.
Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-thread-params") {
      a.thread_params = false;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    const std::string v = argv[++i];
    if (arg == "--model") a.model = v;
    else if (arg == "--executor") a.executor = v;
    else if (arg == "--policy") a.policy = v;
    else if (arg == "--threads") a.threads = std::atoi(v.c_str());
    else if (arg == "--duration") a.duration = std::atof(v.c_str());
    else if (arg == "--drain") a.drain = std::atof(v.c_str());
    else if (arg == "--process") a.process = v;
    else if (arg == "--trace") a.trace = v;
    else if (arg == "--run-id") a.run_id = v;
    else if (arg == "--lame-controller") a.lame_controller = std::atoll(v.c_str());
    else if (arg == "--scale-wcet") {
      const auto colon = v.find(':');
      if (colon == std::string::npos) throw std::invalid_argument("--scale-wcet takes T_NS:FACTOR");
      a.scale_at = std::atoll(v.substr(0, colon).c_str());
      a.scale = std::atof(v.substr(colon + 1).c_str());
      if (a.scale_at < 0 || !(a.scale > 0)) throw std::invalid_argument("bad --scale-wcet " + v);
    }
    else throw std::invalid_argument("unknown argument " + arg);
  }
  static const std::set<std::string> kinds{"single", "multi", "static", "events", "chainrt"};
  if (a.model.empty() || !kinds.count(a.executor)) throw std::invalid_argument("--model and --executor are needed");
  if (!(a.duration > 0) || a.threads < 0 || a.threads > 64) throw std::invalid_argument("bad --duration or --threads");
  if (!a.policy.empty() && a.executor != "chainrt") throw std::invalid_argument("--policy is chainrt's only");
  if (a.lame_controller < 0 || (a.lame_controller > 0 && a.executor != "chainrt"))
    throw std::invalid_argument("--lame-controller is chainrt's only, a period in ns");
  return a;
}

struct Stamp {
  std::int64_t chain = 0, release = 0, seq = 0;
};

// One chain instance at its leaves: which leaves ended it (one flag per leaf, any number of
// leaves: the EDF paper's fan-out has N of them) and when the last did.
struct Instance {
  std::int64_t release = 0, end = 0;
  std::vector<bool> leaves_done;
  std::size_t leaves_left = 0;
  bool complete = false;
};

// The chains' instances: released at the source, completed at the leaves. Thread-safe.
// `here`: the callbacks of this process; only a chain whose source and leaves are all here is
// measured (instances kept), the others' releases are only counted.
class Recorder {
 public:
  Recorder(const chainrt::Model& m, const std::set<std::string>& here) : model_(m), chains_(m.chains.size()) {
    for (std::size_t c = 0; c < m.chains.size(); ++c) {
      const auto& ch = m.chains[c];
      for (const auto& cb : ch.callbacks) {
        const bool has_out = std::any_of(ch.hops.begin(), ch.hops.end(), [&](const auto& h) { return h.from == cb; });
        if (!has_out) chains_[c].leaves.push_back(cb);
      }
      chains_[c].source_here = !ch.callbacks.empty() && here.count(ch.callbacks.front());
      chains_[c].local = chains_[c].source_here && std::all_of(chains_[c].leaves.begin(), chains_[c].leaves.end(),
                                                               [&](const auto& l) { return here.count(l) > 0; });
    }
  }
  Stamp release(std::size_t chain, std::int64_t release_ns) {
    std::lock_guard<std::mutex> lk(m_);
    auto& c = chains_[chain];
    const auto seq = static_cast<std::int64_t>(c.released++);
    if (c.local) c.instances.push_back(Instance{release_ns, 0, std::vector<bool>(c.leaves.size()), c.leaves.size()});
    return Stamp{static_cast<std::int64_t>(chain), release_ns, seq};
  }
  // Leaf `callback` ended the instance of `s` at `end_ns`.
  void end(const std::string& callback, const Stamp& s, std::int64_t end_ns) {
    std::lock_guard<std::mutex> lk(m_);
    if (s.chain < 0 || static_cast<std::size_t>(s.chain) >= chains_.size()) return;
    auto& c = chains_[static_cast<std::size_t>(s.chain)];
    if (!c.local || s.seq < 0 || static_cast<std::size_t>(s.seq) >= c.instances.size()) return;
    const auto leaf = std::find(c.leaves.begin(), c.leaves.end(), callback);
    if (leaf == c.leaves.end()) return;
    auto& in = c.instances[static_cast<std::size_t>(s.seq)];
    const auto k = static_cast<std::size_t>(leaf - c.leaves.begin());
    if (!in.leaves_done[k]) {  // a leaf that ends one instance twice counts once
      in.leaves_done[k] = true;
      --in.leaves_left;
    }
    in.end = std::max(in.end, end_ns);
    in.complete = in.leaves_left == 0;
  }
  bool leaf_of(std::size_t chain, const std::string& callback) const {
    const auto& l = chains_[chain].leaves;
    return std::find(l.begin(), l.end(), callback) != l.end();
  }
  std::size_t pending() const {
    std::lock_guard<std::mutex> lk(m_);
    std::size_t n = 0;
    for (const auto& c : chains_)
      n += static_cast<std::size_t>(std::count_if(c.instances.begin(), c.instances.end(), [](const auto& i) { return !i.complete; }));
    return n;
  }
  std::string json() const;           // per local chain its figures
  std::string releases_json() const;  // per chain whose source is here its releases

 private:
  struct PerChain {
    std::vector<std::string> leaves;
    std::vector<Instance> instances;  // by seq (a local chain's)
    std::size_t released = 0;
    bool source_here = false, local = false;
  };
  const chainrt::Model& model_;
  std::vector<PerChain> chains_;
  mutable std::mutex m_;
};

std::string Recorder::releases_json() const {
  std::lock_guard<std::mutex> lk(m_);
  std::ostringstream o;
  o << "{";
  bool first = true;
  for (std::size_t c = 0; c < chains_.size(); ++c)
    if (chains_[c].source_here) {
      o << (first ? "" : ", ") << "\"" << model_.chains[c].name << "\": " << chains_[c].released;
      first = false;
    }
  o << "}";
  return o.str();
}

std::string Recorder::json() const {
  std::lock_guard<std::mutex> lk(m_);
  std::ostringstream o;
  o << "{";
  bool first = true;
  for (std::size_t c = 0; c < chains_.size(); ++c) {
    if (!chains_[c].local) continue;
    const auto& ch = model_.chains[c];
    std::vector<std::int64_t> lat;
    for (const auto& i : chains_[c].instances)
      if (i.complete) lat.push_back(i.end - i.release);
    std::sort(lat.begin(), lat.end());
    std::int64_t sum = 0, misses = 0;
    for (auto v : lat) {
      sum += v;
      misses += ch.deadline > 0 && v > ch.deadline;
    }
    const std::size_t n = lat.size();
    auto at = [&](double p) { return n ? lat[std::min(n - 1, static_cast<std::size_t>(p * static_cast<double>(n)))] : 0; };
    o << (first ? "" : ", ") << "\"" << ch.name << "\": {\"released\": " << chains_[c].instances.size()
      << ", \"instances\": " << n << ", \"lost\": " << chains_[c].instances.size() - n
      << ", \"period_ns\": " << ch.period << ", \"deadline_ns\": " << ch.deadline
      << ", \"mean_ns\": " << (n ? sum / static_cast<std::int64_t>(n) : 0) << ", \"p99_ns\": " << at(0.99)
      << ", \"max_ns\": " << (n ? lat.back() : 0) << ", \"min_ns\": " << (n ? lat.front() : 0)
      << ", \"deadline_misses\": " << misses << "}";
    first = false;
  }
  o << "}";
  return o.str();
}

// Which chains' stamps a callback forwards on each of its outputs (topic, request or response
// hops of those chains that leave it), and which chains it starts.
struct Routes {
  std::map<std::string, std::vector<std::size_t>> topic, request;  // by topic / service name
  std::vector<std::size_t> response, sources;
};

Routes routes_of(const chainrt::Model& m, const chainrt::Callback& cb) {
  Routes r;
  for (std::size_t c = 0; c < m.chains.size(); ++c) {
    const auto& ch = m.chains[c];
    if (!ch.callbacks.empty() && ch.callbacks.front() == cb.name && cb.is_timer()) r.sources.push_back(c);
    for (const auto& h : ch.hops) {
      if (h.from != cb.name) continue;
      // A service's request and response are messages on topics the loader derives for it
      // (Topic::service); here they travel as the request and the service's reply.
      const chainrt::Topic* t = m.topic(h.topic);
      const std::string service = t && !t->service.empty() ? t->service : h.topic;
      const auto to = m.callback(h.to).kind;
      auto& dst = to == chainrt::CallbackKind::Service  ? r.request[service]
                  : to == chainrt::CallbackKind::Client ? r.response
                                                        : r.topic[h.topic];
      if (std::find(dst.begin(), dst.end(), c) == dst.end()) dst.push_back(c);
    }
  }
  return r;
}

std::vector<Stamp> only(const std::vector<Stamp>& in, const std::vector<std::size_t>& chains) {
  std::vector<Stamp> out;
  for (const auto& s : in)
    if (std::find(chains.begin(), chains.end(), static_cast<std::size_t>(s.chain)) != chains.end()) out.push_back(s);
  return out;
}

std::vector<Stamp> from_array(const std::vector<std::int64_t>& d) {
  std::vector<Stamp> out;
  const std::size_t n = d.empty() ? 0 : static_cast<std::size_t>(std::max<std::int64_t>(0, d[0]));
  for (std::size_t i = 0; i < n && 3 * i + 3 < d.size(); ++i) out.push_back({d[3 * i + 1], d[3 * i + 2], d[3 * i + 3]});
  return out;
}

std::vector<std::int64_t> to_array(const std::vector<Stamp>& s, std::size_t words) {
  std::vector<std::int64_t> d{static_cast<std::int64_t>(s.size())};
  for (const auto& x : s) d.insert(d.end(), {x.chain, x.release, x.seq});
  if (d.size() < words) d.resize(words, 0);
  return d;
}

std::vector<std::string> to_names(const std::vector<Stamp>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(std::to_string(x.chain) + " " + std::to_string(x.release) + " " + std::to_string(x.seq));
  return out;
}

std::vector<Stamp> from_names(const std::vector<std::string>& names) {
  std::vector<Stamp> out;
  for (const auto& n : names) {
    Stamp s;
    std::istringstream in(n);
    if (in >> s.chain >> s.release >> s.seq) out.push_back(s);
  }
  return out;
}

// Every callback execution of the run (--trace), kept in memory and written at the end.
class Tracer {
 public:
  struct Rec {
    std::size_t callback;
    long thread;
    std::int64_t release, start, finish, cpu;  // release -1: none
  };
  explicit Tracer(bool on) : on_(on) {
    if (on) recs_.reserve(1 << 16);
  }
  bool on() const { return on_; }
  void add(const Rec& r) {
    std::lock_guard<std::mutex> lk(m_);
    recs_.push_back(r);
  }
  // FILE (one JSON line per execution, times relative to `start`) and FILE.start; throws when
  // either cannot be written.
  void write(const std::string& path, std::int64_t start, const chainrt::Model& m) const;

 private:
  bool on_;
  std::vector<Rec> recs_;
  mutable std::mutex m_;
};

void Tracer::write(const std::string& path, std::int64_t start, const chainrt::Model& m) const {
  std::map<std::string, std::string> executor_of;  // node -> model executor
  for (const auto& n : m.nodes) executor_of[n.name] = n.executor;
  std::lock_guard<std::mutex> lk(m_);
  std::ofstream f(path), st(path + ".start");
  st << start << "\n";
  for (const auto& r : recs_) {
    const auto& cb = m.callbacks[r.callback];
    f << "{\"executor\": \"" << executor_of[cb.node] << "\", \"callback\": \"" << cb.name << "\", \"thread\": " << r.thread
      << ", \"release\": " << (r.release < 0 ? -1 : r.release - start) << ", \"start\": " << r.start - start
      << ", \"finish\": " << r.finish - start << ", \"cpu\": " << r.cpu << ", \"deadline\": -1}\n";
  }
  f.close();
  st.close();
  if (!f || !st) throw std::runtime_error("writing the trace " + path + " failed");
}

// The generated system: nodes, entities, and what each callback does. `here`: the nodes of this
// process (every node when empty); only they are created.
class System {
 public:
  System(const chainrt::Model& m, const Args& a, Recorder& rec, Tracer& trace, std::set<std::string> here)
      : m_(m), a_(a), rec_(rec), trace_(trace), here_(std::move(here)), runs_(m.callbacks.size()),
        cached_(m.callbacks.size()), fuses_(m.callbacks.size()) {
    for (const auto& cb : m.callbacks) routes_.push_back(routes_of(m, cb));
    for (std::size_t i = 0; i < m.callbacks.size(); ++i)
      for (const auto& in : m.callbacks[i].fuses) fuses_[i].push_back(m.callback_index(in));
    if (a.executor != "chainrt" && a.thread_params)
      for (const auto& ex : m.executors)
        if (!ex.threads.empty() && ex.threads.front().reservation) reservations_[ex.name] = *ex.threads.front().reservation;
  }
  // Spinning starts now: the origin of --scale-wcet.
  void started(std::int64_t t0) {
    if (a_.scale_at >= 0) scale_from_.store(t0 + a_.scale_at);
  }
  std::vector<std::string> thread_warnings() const {
    std::lock_guard<std::mutex> lk(tm_);
    return {warnings_.begin(), warnings_.end()};
  }
  void create_nodes();
  void create_messaging();  // publishers, subscriptions, services, clients
  bool wait_for_discovery(std::chrono::seconds limit) const;
  void create_timers();
  void cancel_timers() {
    for (auto& t : timers_) t->cancel();
  }
  // Waits (at most `limit` per publisher) until the subscribers acknowledged every message
  // published (reliable QoS): a program that ends right after its last publish would otherwise
  // take that message with it when its subscribers are in another program.
  void wait_for_acks(std::chrono::milliseconds limit) const {
    for (const auto& [key, p] : pubs_) p->wait_for_all_acked(limit);
  }
  std::vector<rclcpp::Node::SharedPtr> nodes_of(const std::string& executor) const {
    std::vector<rclcpp::Node::SharedPtr> out;
    for (const auto& n : m_.nodes)
      if (n.executor == executor && nodes_.count(n.name)) out.push_back(nodes_.at(n.name));
    return out;
  }
  std::string runs_json() const {
    std::ostringstream o;
    o << "{";
    bool first = true;
    for (std::size_t i = 0; i < m_.callbacks.size(); ++i) {
      if (!here(m_.callbacks[i].node)) continue;
      o << (first ? "" : ", ") << "\"" << m_.callbacks[i].name << "\": " << runs_[i].load();
      first = false;
    }
    o << "}";
    return o.str();
  }

 private:
  bool here(const std::string& node) const { return here_.empty() || here_.count(node) > 0; }
  bool derived(const std::string& topic) const {
    const chainrt::Topic* t = m_.topic(topic);
    return t && !t->service.empty();
  }
  rclcpp::CallbackGroup::SharedPtr group_of(const chainrt::Callback& cb) const {
    auto it = groups_.find(cb.group);
    return it == groups_.end() ? nullptr : it->second;
  }
  // The callback's end: its outputs carry `in`'s stamps of their chains; the leaves' instances end.
  void finish(std::size_t ix, const std::vector<Stamp>& in);
  void on_input(std::size_t ix, const std::vector<Stamp>& in) {
    execute(ix, in, [&] {
      burn(ix);
      const auto kind = m_.callbacks[ix].kind;
      if (kind == chainrt::CallbackKind::FusionInput) cached_[ix] = true;
      if (kind == chainrt::CallbackKind::FusionTrigger &&
          !std::all_of(fuses_[ix].begin(), fuses_[ix].end(), [&](std::size_t f) { return cached_[f].load(); }))
        return;  // nothing to fuse yet: no output
      finish(ix, in);
    });
  }
  // One execution of callback `ix` serving `in`: counted, its thread's reservation claimed, and
  // with --trace traced once per chain release its input carried (-1: none).
  template <class Body>
  void execute(std::size_t ix, const std::vector<Stamp>& in, Body&& body) {
    runs_[ix]++;
    claim_thread(ix);
    const std::int64_t t0 = now_ns(), c0 = thread_cpu_ns();
    body();
    if (trace_.on()) trace(ix, in, t0, c0);
  }
  void burn(std::size_t ix) const {
    const Duration w = m_.callbacks[ix].wcet;
    chainrt::runtime::burn_cpu(now_ns() >= scale_from_.load() ? static_cast<Duration>(static_cast<double>(w) * a_.scale) : w);
  }
  void claim_thread(std::size_t ix);
  void trace(std::size_t ix, const std::vector<Stamp>& in, std::int64_t start, std::int64_t cpu0);

  const chainrt::Model& m_;
  const Args& a_;
  Recorder& rec_;
  Tracer& trace_;
  std::set<std::string> here_;
  std::vector<std::atomic<std::uint64_t>> runs_;
  std::vector<std::atomic<bool>> cached_;          // fusion inputs that cached a message, by callback index
  std::vector<std::vector<std::size_t>> fuses_;    // a trigger's fused inputs, by callback index
  std::map<std::string, chainrt::Reservation> reservations_;  // stock executors' threads, by model executor
  std::atomic<std::int64_t> scale_from_{INT64_MAX};
  mutable std::mutex tm_;  // warnings_
  std::set<std::string> warnings_;
  std::vector<Routes> routes_;  // by callback index
  std::map<std::string, rclcpp::Node::SharedPtr> nodes_;
  std::map<std::string, rclcpp::CallbackGroup::SharedPtr> groups_;
  std::map<std::string, rclcpp::Publisher<Msg>::SharedPtr> pubs_;
  std::map<std::pair<std::string, std::string>, rclcpp::Client<Srv>::SharedPtr> clients_;  // (node, service)
  std::vector<rclcpp::SubscriptionBase::SharedPtr> subs_;
  std::vector<rclcpp::ServiceBase::SharedPtr> services_;
  std::vector<rclcpp::TimerBase::SharedPtr> timers_;
};

void System::create_nodes() {
  for (const auto& n : m_.nodes)
    if (here(n.name)) nodes_[n.name] = std::make_shared<rclcpp::Node>(n.name);
  for (const auto& g : m_.groups) {
    if (g.name == g.node + "/default" || !here(g.node)) continue;  // the node's own default group
    groups_[g.name] = nodes_.at(g.node)->create_callback_group(
        g.type == chainrt::GroupType::Reentrant ? rclcpp::CallbackGroupType::Reentrant
                                                 : rclcpp::CallbackGroupType::MutuallyExclusive,
        true);  // served with its node by whichever executor the node is added to
  }
}

void System::create_messaging() {
  for (const auto& cb : m_.callbacks) {
    if (!here(cb.node)) continue;
    auto& node = nodes_.at(cb.node);
    for (const auto& t : cb.publishes) {
      if (pubs_.count(cb.node + "\n" + t) || derived(t)) continue;
      int depth = 1;
      for (auto s : m_.subscribers(t)) depth = std::max(depth, m_.callbacks[s].queue_depth);
      pubs_[cb.node + "\n" + t] = node->create_publisher<Msg>(t, rclcpp::QoS(rclcpp::KeepLast(depth)).reliable());
    }
    for (const auto& s : cb.calls) {
      const auto key = std::make_pair(cb.node, s);
      if (!clients_.count(key)) clients_[key] = node->create_client<Srv>(s, rclcpp::ServicesQoS(), group_of(m_.callbacks[*m_.client_of(cb.node, s)]));
    }
  }
  for (std::size_t i = 0; i < m_.callbacks.size(); ++i) {
    const auto& cb = m_.callbacks[i];
    if (!here(cb.node)) continue;
    auto& node = nodes_.at(cb.node);
    rclcpp::SubscriptionOptions so;
    so.callback_group = group_of(cb);
    if (cb.kind == chainrt::CallbackKind::Subscription || cb.kind == chainrt::CallbackKind::FusionInput ||
        cb.kind == chainrt::CallbackKind::FusionTrigger) {
      subs_.push_back(node->create_subscription<Msg>(
          cb.topic, rclcpp::QoS(rclcpp::KeepLast(std::max(1, cb.queue_depth))).reliable(),
          [this, i](const Msg& msg) { on_input(i, from_array(msg.data)); }, so));
    } else if (cb.kind == chainrt::CallbackKind::Service) {
      services_.push_back(node->create_service<Srv>(
          cb.service,
          [this, i](const std::shared_ptr<Srv::Request> req, std::shared_ptr<Srv::Response> res) {
            const auto in = from_names(req->names);
            execute(i, in, [&] {
              burn(i);
              rcl_interfaces::msg::ParameterValue v;
              v.integer_array_value = to_array(only(in, routes_[i].response), 1);
              res->values.push_back(v);
              finish(i, in);
            });
          },
          rclcpp::ServicesQoS(), group_of(cb)));
    }
  }
}

bool System::wait_for_discovery(std::chrono::seconds limit) const {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  auto matched = [&] {
    for (const auto& [key, p] : pubs_)
      if (!m_.subscribers(key.substr(key.find('\n') + 1)).empty() && p->get_subscription_count() < 1) return false;
    for (const auto& [key, c] : clients_)
      if (!c->service_is_ready()) return false;
    return true;
  };
  while (!matched()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

void System::create_timers() {
  for (std::size_t i = 0; i < m_.callbacks.size(); ++i) {
    const auto& cb = m_.callbacks[i];
    if (!cb.is_timer() || !here(cb.node)) continue;
    const auto sources = routes_[i].sources;
    timers_.push_back(nodes_.at(cb.node)->create_wall_timer(
        std::chrono::nanoseconds(cb.period),
        [this, i, sources](const rclcpp::TimerInfo& info) {
          std::vector<Stamp> out;
          for (auto c : sources) out.push_back(rec_.release(c, info.expected_call_time.nanoseconds()));
          execute(i, out, [&] {
            burn(i);
            finish(i, out);
          });
        },
        group_of(cb)));
  }
}

void System::finish(std::size_t ix, const std::vector<Stamp>& in) {
  const auto& cb = m_.callbacks[ix];
  const Routes& r = routes_[ix];
  for (const auto& t : cb.publishes) {
    if (derived(t)) continue;  // a request (below) or a service's reply
    auto it = r.topic.find(t);
    const auto words = static_cast<std::size_t>(std::max<chainrt::Bytes>(1, (m_.topic(t) ? m_.topic(t)->size : 8) / 8));
    Msg msg;
    msg.data = to_array(it == r.topic.end() ? std::vector<Stamp>{} : only(in, it->second), words);
    pubs_.at(cb.node + "\n" + t)->publish(msg);
  }
  for (const auto& s : cb.calls) {
    auto it = r.request.find(s);
    auto req = std::make_shared<Srv::Request>();
    req->names = to_names(it == r.request.end() ? std::vector<Stamp>{} : only(in, it->second));
    const std::size_t client = *m_.client_of(cb.node, s);
    clients_.at({cb.node, s})->async_send_request(req, [this, client](rclcpp::Client<Srv>::SharedFuture f) {
      const auto res = f.get();
      on_input(client, res->values.empty() ? std::vector<Stamp>{} : from_array(res->values[0].integer_array_value));
    });
  }
  const std::int64_t end = now_ns();
  for (const auto& s : in)
    if (rec_.leaf_of(static_cast<std::size_t>(s.chain), cb.name)) rec_.end(cb.name, s, end);
}

void System::claim_thread(std::size_t ix) {
  thread_local bool claimed = false;
  if (claimed || reservations_.empty()) return;
  claimed = true;
  const auto it = reservations_.find(m_.node(m_.callbacks[ix].node).executor);
  if (it == reservations_.end()) return;
  const std::string why = chainrt::runtime::set_thread_reservation(static_cast<int>(gettid()), it->second);
  if (!why.empty()) {
    std::lock_guard<std::mutex> lk(tm_);
    warnings_.insert("an executor thread runs without its SCHED_DEADLINE reservation: " + why);
  }
}

void System::trace(std::size_t ix, const std::vector<Stamp>& in, std::int64_t start, std::int64_t cpu0) {
  const std::int64_t cpu = thread_cpu_ns() - cpu0, end = now_ns();
  const long tid = static_cast<long>(gettid());
  std::set<std::int64_t> releases;
  for (const auto& s : in) releases.insert(s.release);
  if (releases.empty()) releases.insert(-1);
  for (auto r : releases) trace_.add({ix, tid, r, start, end, cpu});
}

// What the generator cannot express, as one line (nullopt: none).
std::optional<std::string> unsupported(const chainrt::Model& m) {
  for (const auto& cb : m.callbacks) {
    if (!cb.accelerator_segments.empty()) return "callback " + cb.name + ": accelerator segments are not generated";
    for (const auto& s : cb.calls)
      if (!m.client_of(cb.node, s)) return "callback " + cb.name + " calls " + s + " without a client callback in its node";
  }
  return std::nullopt;
}

std::shared_ptr<rclcpp::Executor> make_executor(const Args& a, const chainrt::Executor& ex) {
  if (a.executor == "chainrt") {
    chainrt::rclcpp::ChainExecutorOptions o;
    o.model_file = a.model;
    o.executor = ex.name;
    o.thread_params = a.thread_params;
    if (a.threads > 0) o.threads = a.threads;
    o.lame_controller = a.lame_controller;
    if (!a.policy.empty()) {
      o.policy = chainrt::policy_from(a.policy);
      if (!o.policy) throw std::invalid_argument("unknown policy " + a.policy);
    }
    return std::make_shared<chainrt::rclcpp::ChainExecutor>(o);
  }
  if (a.executor == "single") return std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  if (a.executor == "static") {  // deprecated in rclcpp 29 (now SingleThreaded's twin), still what some pick
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_shared<rclcpp::executors::StaticSingleThreadedExecutor>();
#pragma GCC diagnostic pop
  }
  if (a.executor == "events") return std::make_shared<rclcpp::experimental::executors::EventsExecutor>();
  const int n = a.threads > 0 ? a.threads : std::max<int>(1, static_cast<int>(ex.threads.size()));
  return std::make_shared<rclcpp::executors::MultiThreadedExecutor>(rclcpp::ExecutorOptions(), n);
}

// A stock executor's spinning thread: the model executor's cores (all its threads') and highest
// SCHED_FIFO priority; the MultiThreadedExecutor's threads, started by it, inherit them.
std::vector<std::string> stock_thread_params(const chainrt::Executor& ex) {
  chainrt::sched::ThreadSpec spec;
  for (const auto& t : ex.threads) {
    for (int c : t.cores)
      if (std::find(spec.cores.begin(), spec.cores.end(), c) == spec.cores.end()) spec.cores.push_back(c);
    if (t.fifo_priority) spec.fifo_priority = std::max(spec.fifo_priority.value_or(0), *t.fifo_priority);
    if (t.cores.empty()) {  // a thread on any core: no pinning for the executor
      spec.cores.clear();
      break;
    }
  }
  return chainrt::runtime::apply_thread_spec(spec).warnings;
}

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') o += "\\n";
    else o += c;
  }
  return o + "\"";
}

// The class of an executor object, demangled (what the result says spun each model executor).
std::string class_name(const rclcpp::Executor& e) {
  int status = 0;
  char* d = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : typeid(e).name();
  std::free(d);
  return out;
}

// The nodes of --process (every node without it); invalid_argument when it has none.
std::set<std::string> nodes_here(const Args& a, const chainrt::Model& m) {
  std::set<std::string> out;
  if (a.process.empty()) return out;
  std::set<std::string> processes;
  for (const auto& ex : m.executors) {
    const std::string p = ex.process.empty() ? ex.name : ex.process;
    processes.insert(p);
    if (p != a.process) continue;
    for (const auto& n : m.nodes)
      if (n.executor == ex.name) out.insert(n.name);
  }
  if (out.empty()) {
    std::string known;
    for (const auto& p : processes) known += (known.empty() ? "" : ", ") + p;
    throw std::invalid_argument("--process " + a.process + ": no node of the model runs in it (processes: " + known + ")");
  }
  return out;
}

std::set<std::string> callbacks_of(const chainrt::Model& m, const std::set<std::string>& nodes) {
  std::set<std::string> out;
  for (const auto& cb : m.callbacks)
    if (nodes.empty() || nodes.count(cb.node)) out.insert(cb.name);
  return out;
}

struct Spun {
  std::string executor;
  std::shared_ptr<rclcpp::Executor> exec;
  std::thread thread;
  std::string failed;
  std::vector<std::string> warnings;
};

int run(const Args& a, const chainrt::Model& m) {
  const auto here = nodes_here(a, m);
  Recorder rec(m, callbacks_of(m, here));
  Tracer tracer(!a.trace.empty());
  System sys(m, a, rec, tracer, here);
  sys.create_nodes();
  sys.create_messaging();
  if (!sys.wait_for_discovery(30s)) throw std::runtime_error("the generated nodes did not discover each other within 30 s");
  std::vector<std::unique_ptr<Spun>> spun;
  for (const auto& ex : m.executors) {
    auto nodes = sys.nodes_of(ex.name);
    if (nodes.empty()) continue;
    auto s = std::make_unique<Spun>();
    s->executor = ex.name;
    s->exec = make_executor(a, ex);
    for (auto& n : nodes) s->exec->add_node(n);
    spun.push_back(std::move(s));
  }
  sys.started(now_ns());
  sys.create_timers();
  for (auto& s : spun) {
    const auto& ex = m.executor(s->executor);
    s->thread = std::thread([&a, &ex, sp = s.get()] {
      if (a.executor != "chainrt" && a.thread_params) sp->warnings = stock_thread_params(ex);
      try {
        sp->exec->spin();
      } catch (const std::exception& e) {
        sp->failed = e.what();
      }
    });
  }
  std::printf("ready\n");
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(a.duration);
  while (rclcpp::ok() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(20ms);
  sys.cancel_timers();
  Duration longest = 0;
  for (const auto& c : m.chains) longest = std::max(longest, c.deadline);
  const double drain = a.drain >= 0 ? a.drain : std::max(0.5, 2.0 * static_cast<double>(longest) / 1e9);
  const auto drained = std::chrono::steady_clock::now() + std::chrono::duration<double>(drain);
  while (rclcpp::ok() && rec.pending() > 0 && std::chrono::steady_clock::now() < drained) std::this_thread::sleep_for(10ms);
  for (auto& s : spun) s->exec->cancel();
  for (auto& s : spun) s->thread.join();  // (a callback under way publishes before its spin ends)
  if (rclcpp::ok()) sys.wait_for_acks(std::chrono::milliseconds(static_cast<std::int64_t>(drain * 1000)));
  std::ostringstream reports, classes, warnings;
  std::string failed, lame_log = "[]";
  for (std::size_t i = 0; i < spun.size(); ++i) {
    auto* chain = dynamic_cast<chainrt::rclcpp::ChainExecutor*>(spun[i]->exec.get());
    reports << (i ? ", " : "") << quoted(spun[i]->executor) << ": " << (chain ? chain->report_json() : "null");
    classes << (i ? ", " : "") << quoted(spun[i]->executor) << ": " << quoted(class_name(*spun[i]->exec));
    if (chain && a.lame_controller > 0) lame_log = chain->lame_log_json();
    for (const auto& w : spun[i]->warnings) warnings << (warnings.tellp() > 0 ? ", " : "") << quoted(w);
    if (!spun[i]->failed.empty()) failed = spun[i]->failed;
  }
  if (!failed.empty()) throw std::runtime_error(failed);
  for (const auto& w : sys.thread_warnings()) warnings << (warnings.tellp() > 0 ? ", " : "") << quoted(w);
  if (tracer.on()) tracer.write(a.trace, a.started, m);
  std::printf("{\"model\": %s, \"executor\": %s, \"process\": %s, \"run_id\": %s, \"threads\": %d, "
              "\"duration_s\": %.3f, \"drain_s\": %.3f, \"chains\": %s, \"releases\": %s, \"callbacks\": %s, "
              "\"warnings\": [%s], \"executor_class\": {%s}, \"reports\": {%s}, \"lame_controller\": %s}\n",
              quoted(m.name).c_str(), quoted(a.executor).c_str(), quoted(a.process).c_str(), quoted(a.run_id).c_str(),
              a.threads, a.duration, drain, rec.json().c_str(), rec.releases_json().c_str(), sys.runs_json().c_str(),
              warnings.str().c_str(), classes.str().c_str(), reports.str().c_str(), lame_log.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!chainrt::runtime::tie_to_parent_from_env()) return 1;  // the chainrt that started it is gone
  const std::int64_t started = now_ns();
  Args args;
  chainrt::Model model;
  try {
    args = parse(argc, argv);
    args.started = started;
  } catch (const std::exception& e) {  // the command line: with how to write it
    std::fprintf(stderr, "chainrt_rclcpp_nodes: %s\n%s\n", e.what(), kUsage);
    return 2;
  }
  try {
    model = chainrt::load_model(args.model);
    if (auto why = unsupported(model)) throw std::invalid_argument(*why);
    if (!args.trace.empty() && !std::ofstream(args.trace))  // refused before the run, not lost after it
      throw std::invalid_argument("cannot write the trace " + args.trace);
  } catch (const std::exception& e) {  // the model or the trace file: one line
    std::fprintf(stderr, "chainrt_rclcpp_nodes: %s\n", e.what());
    return 2;
  }
  rclcpp::init(1, argv);
  int rc = 0;
  try {
    rc = run(args, model);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt_rclcpp_nodes: %s\n", e.what());
    rc = 2;
  }
  rclcpp::shutdown();
  return rc;
}
