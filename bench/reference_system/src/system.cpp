// chainrt reference system: the workload on the chainrt runtime (see system.hpp).
#include "chainrt/reference_system/system.hpp"
#include "chainrt/runtime/names.hpp"

#include <rcl/graph.h>
#include <sys/resource.h>
#include <unistd.h>

#include <std_msgs/msg/u_int8_multi_array.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/runtime/node.hpp"
#include "chainrt/sched/setup.hpp"

namespace chainrt::reference_system {

using Msg = std_msgs::msg::UInt8MultiArray;
using runtime::now_ns;

namespace {


// The sample inside a message (copied: the vector's storage has no alignment guarantee).
void read_sample(const Msg& m, Sample& s) noexcept {
  const std::size_t n = std::min(m.data.size(), sizeof(Sample));
  std::memcpy(&s, m.data.data(), n);
  if (n < sizeof(Sample)) std::memset(reinterpret_cast<char*>(&s) + n, 0, sizeof(Sample) - n);
}

runtime::Stamp stamp_in(const Msg& m) noexcept {
  runtime::Stamp st;
  if (m.data.size() < sizeof(Sample)) return st;
  std::int64_t d[kDataLength];
  std::memcpy(d, m.data.data() + offsetof(Sample, data), sizeof d);
  st.chain = static_cast<std::uint32_t>(d[kStampChain]);
  st.instance = static_cast<std::uint64_t>(d[kStampInstance]);
  st.release = d[kStampRelease];
  st.deadline = d[kStampDeadline];
  return st;
}

// Process CPU time (user + system) and resident set size.
UsageSample usage_now(Duration since) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const Duration cpu = (static_cast<Duration>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
                       (static_cast<Duration>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000;
  std::int64_t rss = 0;
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (statm >> size >> resident) rss = resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
  return UsageSample{now_ns() - since, cpu, rss};
}

// What a working callback spends: thread CPU time, or upstream's prime count.
struct Work {
  Workload kind = Workload::CpuTime;
  std::map<Duration, std::int64_t> limits;
  std::int64_t run(Duration wcet) const noexcept {
    if (wcet <= 0) return 0;
    if (kind == Workload::CpuTime) {
      runtime::burn_cpu(wcet);
      return wcet;
    }
    auto it = limits.find(wcet);
    return count_primes(it == limits.end() ? 4096 : it->second);
  }
};

// Sink records, preallocated (pages are touched only when written).
class Recorder {
 public:
  explicit Recorder(std::size_t capacity) : buf_(new SinkRecord[capacity == 0 ? 1 : capacity]), cap_(capacity) {}
  void record(std::uint32_t sink, std::int64_t received, const Msg& m) noexcept {
    const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= cap_) {
      lost_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    SinkRecord& r = buf_[i];
    r.sink = sink;
    r.reserved = 0;
    r.received = received;
    read_sample(m, r.sample);
  }
  std::size_t count() const noexcept { return std::min(next_.load(), cap_); }
  std::uint64_t lost() const noexcept { return lost_.load(); }
  void write(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + path);
    f.write(reinterpret_cast<const char*>(buf_.get()), static_cast<std::streamsize>(count() * sizeof(SinkRecord)));
  }

 private:
  std::unique_ptr<SinkRecord[]> buf_;
  std::size_t cap_;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::uint64_t> lost_{0};
};

struct Output {
  std::string topic;
  std::shared_ptr<runtime::Publisher<Msg>> pub;
  Msg msg;
  std::uint32_t sequence = 0;
  std::size_t expected_subscribers = 0;
};

// The state of one reference-system node. Its callbacks are in the node's mutually exclusive
// default group, so they never run concurrently and need no lock.
struct RefNode {
  NodeShape shape;
  std::unique_ptr<runtime::Node> node;
  std::map<std::string, std::shared_ptr<Output>> outputs;  // by topic
  std::vector<SequenceTracker> trackers;                   // per input
  std::vector<Sample> cache;                               // per input
  std::vector<bool> cached;
  std::uint32_t pending_dropped = 0;
  Sample in{}, out{};
  std::uint32_t sink = 0;
};

void publish(Output& o, Sample& s) noexcept {
  const runtime::Stamp& st = runtime::current_stamp();
  s.data[kStampChain] = static_cast<std::int64_t>(st.chain);
  s.data[kStampInstance] = static_cast<std::int64_t>(st.instance);
  s.data[kStampRelease] = st.release;
  s.data[kStampDeadline] = st.deadline;
  std::memcpy(o.msg.data.data(), &s, sizeof(Sample));
  o.pub->publish(o.msg);
}

std::uint32_t direct_sequence(const Sample& s) noexcept {
  const StatsEntry* e = last_entry(s);
  return e ? e->sequence_number : 0;
}

}  // namespace

std::int64_t calibrate_prime_limit(Duration work) {
  auto cost = [](std::int64_t limit) {
    Duration best = INT64_MAX;
    for (int i = 0; i < 3; ++i) {
      const Duration t0 = runtime::thread_cpu_ns();
      volatile std::int64_t r = count_primes(limit);
      (void)r;
      best = std::min(best, runtime::thread_cpu_ns() - t0);
    }
    return best;
  };
  std::int64_t lo = 16, hi = 32;
  while (cost(hi) < work && hi < (std::int64_t{1} << 30)) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 20 && hi - lo > 1; ++i) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (cost(mid) < work ? lo : hi) = mid;
  }
  return hi;
}

namespace {

// What the stages of one reference-system run share: the model and options, the node shapes,
// the result being filled, the workload, the sinks' recorder, the context and the nodes built.
struct SystemBuild {
  const Model& model;
  const SystemOptions& opt;
  const std::vector<NodeShape>& shapes;
  SystemResult& result;
  Work& work;
  Recorder& recorder;
  runtime::Context& context;
  std::map<std::string, std::unique_ptr<RefNode>> nodes{};
};

// The workload: with PrimeCount, each working callback's WCET calibrated to a prime limit.
Work calibrated_work(const Model& model, const std::vector<NodeShape>& shapes, const SystemOptions& opt,
                     SystemResult& result) {
  Work work;
  work.kind = opt.workload;
  if (opt.workload == Workload::PrimeCount)
    for (const auto& s : shapes)
      for (std::size_t cb : s.subscriptions)
        if (is_working(model, s, cb) && !work.limits.count(model.callbacks[cb].wcet))
          work.limits[model.callbacks[cb].wcet] = calibrate_prime_limit(model.callbacks[cb].wcet);
  for (const auto& s : shapes)
    if (s.timer && is_working(model, s, *s.timer) && !work.limits.count(model.callbacks[*s.timer].wcet) &&
        opt.workload == Workload::PrimeCount)
      work.limits[model.callbacks[*s.timer].wcet] = calibrate_prime_limit(model.callbacks[*s.timer].wcet);
  for (const auto& [w, l] : work.limits) result.prime_limits[std::to_string(w)] = l;
  return work;
}

// The node of callback cb, created (with its publishers) on executor ex at its first callback.
RefNode* ref_node(SystemBuild& b, runtime::Executor& ex, const Callback& cb) {
  auto& rn = b.nodes[cb.node];
  if (rn) return rn.get();
  rn = std::make_unique<RefNode>();
  rn->shape = *std::find_if(b.shapes.begin(), b.shapes.end(), [&](const NodeShape& s) { return s.name == cb.node; });
  rn->node = std::make_unique<runtime::Node>(b.context, runtime::ros_name(cb.node));
  ex.add_node(*rn->node);
  const std::size_t inputs = rn->shape.subscriptions.size();
  rn->trackers.resize(inputs);
  rn->cache.resize(inputs);
  rn->cached.assign(inputs, false);
  for (const auto& t : rn->shape.outputs) {
    auto o = std::make_shared<Output>();
    o->topic = t;
    o->expected_subscribers = b.model.subscribers(t).size();
    o->pub = rn->node->create_publisher<Msg>(runtime::ros_topic_name(b.opt.topic_prefix, t), 1);
    o->msg.data.assign(kMessageSize, 0);
    rn->outputs[t] = o;
  }
  if (rn->shape.type == NodeType::Command)
    rn->sink = static_cast<std::uint32_t>(std::find(b.result.sinks.begin(), b.result.sinks.end(), cb.node) -
                                          b.result.sinks.begin());
  return rn.get();
}

// A timer of node n: a sensor publishes a fresh sample; a cyclic node works, merges every
// non-empty cache in input order and resets.
void add_timer(SystemBuild& b, RefNode* n, Output* out, const Callback& cb, Duration wcet,
               const runtime::CallbackOptions& co) {
  const std::string& me = n->shape.name;
  Work& work = b.work;
  if (n->shape.type == NodeType::Sensor) {
    n->node->create_timer(cb.period, [n, out, &me] {
      const Duration t0 = now_ns();
      n->out.size = 0;
      std::memset(n->out.data, 0, sizeof n->out.data);
      append_entry(n->out, me, static_cast<std::uint64_t>(t0), out->sequence++, 0);
      publish(*out, n->out);
    }, co, cb.offset);
    return;
  }
  n->node->create_timer(cb.period, [n, out, &me, wcet, &work] {
    const Duration t0 = now_ns();
    const std::int64_t r = work.run(wcet);
    n->out.size = 0;
    std::memset(n->out.data, 0, sizeof n->out.data);
    for (std::size_t i = 0; i < n->cache.size(); ++i)
      if (n->cached[i]) merge_history(n->out, n->cache[i]);
    append_entry(n->out, me, static_cast<std::uint64_t>(t0), out->sequence++, n->pending_dropped);
    n->out.data[0] = r;
    n->pending_dropped = 0;
    std::fill(n->cached.begin(), n->cached.end(), false);
    publish(*out, n->out);
  }, co, cb.offset);
}

// The body of a subscription of node n on its input `input`, by the node's type (empty for a
// sensor, which has none).
std::function<void(const Msg&)> subscription_body(SystemBuild& b, RefNode* n, Output* out, std::size_t input,
                                                  CallbackKind kind, Duration wcet) {
  const std::string& me = n->shape.name;
  Work& work = b.work;
  Recorder& recorder = b.recorder;
  switch (n->shape.type) {
    case NodeType::Transform:
    case NodeType::Intersection:  // per connection: own output and sequence counter
      return [n, out, &me, wcet, &work, input](const Msg& m) {
        const Duration t0 = now_ns();
        read_sample(m, n->in);
        const std::uint32_t dropped = n->trackers[input].update(direct_sequence(n->in));
        const std::int64_t r = work.run(wcet);
        n->out = n->in;
        append_entry(n->out, me, static_cast<std::uint64_t>(t0), out->sequence++, dropped);
        n->out.data[0] = r;
        publish(*out, n->out);
      };
    case NodeType::Fusion:
      return [n, out, &me, wcet, &work, input, kind](const Msg& m) {
        const Duration t0 = now_ns();
        read_sample(m, n->cache[input]);
        n->cached[input] = true;
        n->pending_dropped += n->trackers[input].update(direct_sequence(n->cache[input]));
        if (kind == CallbackKind::FusionInput) return;
        if (std::find(n->cached.begin(), n->cached.end(), false) != n->cached.end()) return;
        const std::int64_t r = work.run(wcet);
        n->out.size = 0;
        std::memset(n->out.data, 0, sizeof n->out.data);
        for (const Sample& c : n->cache) merge_history(n->out, c);
        append_entry(n->out, me, static_cast<std::uint64_t>(t0), out->sequence++, n->pending_dropped);
        n->out.data[0] = r;
        n->pending_dropped = 0;
        std::fill(n->cached.begin(), n->cached.end(), false);
        publish(*out, n->out);
      };
    case NodeType::Cyclic:
      return [n, input](const Msg& m) {
        read_sample(m, n->cache[input]);
        n->cached[input] = true;
        n->pending_dropped += n->trackers[input].update(direct_sequence(n->cache[input]));
      };
    case NodeType::Command:
      return [n, input, &recorder](const Msg& m) {
        const Duration t0 = now_ns();
        recorder.record(n->sink, t0, m);
        read_sample(m, n->in);
        n->trackers[input].update(direct_sequence(n->in));
      };
    case NodeType::Sensor:
      break;
  }
  return {};
}

// Callback id of executor ex (setup: its scheduling set-up) created on its node.
void add_callback(SystemBuild& b, runtime::Executor& ex, const sched::ExecutorSetup& setup, sched::CallbackId id) {
  const Model& model = b.model;
  const std::size_t ci = setup.callbacks[id];
  const Callback& cb = model.callbacks[ci];
  RefNode* n = ref_node(b, ex, cb);
  runtime::CallbackOptions co;
  co.name = cb.name;
  co.priority = setup.specs[id].priority;
  co.affinity = setup.specs[id].affinity;
  const bool works = is_working(model, n->shape, ci);
  const Duration wcet = works ? cb.wcet : 0;
  Output* out = cb.publishes.empty() ? nullptr : n->outputs.at(cb.publishes.front()).get();
  if (cb.kind == CallbackKind::Timer) {
    add_timer(b, n, out, cb, wcet, co);
    return;
  }
  const std::size_t input = static_cast<std::size_t>(
      std::find(n->shape.subscriptions.begin(), n->shape.subscriptions.end(), ci) - n->shape.subscriptions.begin());
  std::vector<std::uint32_t> member;
  for (std::size_t c = 0; c < model.chains.size(); ++c)
    if (std::find(model.chains[c].callbacks.begin(), model.chains[c].callbacks.end(), cb.name) !=
        model.chains[c].callbacks.end())
      member.push_back(static_cast<std::uint32_t>(c));
  // A sample's chain stamp applies only to callbacks of that chain (others: no deadline).
  auto stamp_of = [member](const Msg& m) {
    runtime::Stamp st = stamp_in(m);
    if (std::find(member.begin(), member.end(), st.chain) == member.end()) return runtime::Stamp{};
    return st;
  };
  n->node->create_subscription<Msg>(runtime::ros_topic_name(b.opt.topic_prefix, cb.topic),
                                    static_cast<std::size_t>(std::max(1, cb.queue_depth)),
                                    subscription_body(b, n, out, input, cb.kind, wcet), co, stamp_of);
}

// Executor e of the model with its nodes, callbacks and chains.
std::unique_ptr<runtime::Executor> build_executor(SystemBuild& b, std::size_t e) {
  sched::ExecutorSetup setup = sched::make_setup(b.model, e);
  runtime::ExecutorOptions eo;
  eo.policy = setup.policy;
  eo.threads = setup.threads;
  eo.name = b.model.executors[e].name;
  if (!b.opt.thread_params)
    for (auto& t : eo.threads) {
      t.cores.clear();
      t.fifo_priority.reset();
      t.reservation.reset();
    }
  auto ex = std::make_unique<runtime::Executor>(b.context, eo);
  for (sched::CallbackId id = 0; id < setup.callbacks.size(); ++id) add_callback(b, *ex, setup, id);
  for (const auto& c : b.model.chains) {
    ex->add_chain(runtime::ChainSpec::of(c));
  }
  return ex;
}

// Discovery: every publisher matched the subscriptions the model gives it (a warning where not).
void await_discovery(SystemBuild& b) {
  const Duration give_up = now_ns() + b.opt.discovery_timeout;
  for (auto& [name, rn] : b.nodes)
    for (auto& [topic, o] : rn->outputs) {
      while (o->pub->subscription_count() < o->expected_subscribers && now_ns() < give_up &&
             !runtime::signal_received())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (o->pub->subscription_count() < o->expected_subscribers)
        b.result.warnings.push_back("topic '" + topic + "': " + std::to_string(o->pub->subscription_count()) +
                                    " of " + std::to_string(o->expected_subscribers) + " subscriptions matched");
    }
}

// The topology as the ROS graph sees it: publishers and subscribers per topic.
void count_topology(SystemBuild& b) {
  if (b.nodes.empty()) return;
  rcl_node_t* probe = b.nodes.begin()->second->node->get();
  for (const auto& t : b.model.topics) {
    TopicCount tc;
    tc.topic = t.name;
    for (const auto& s : b.shapes)
      if (std::find(s.outputs.begin(), s.outputs.end(), t.name) != s.outputs.end()) ++tc.expected_publishers;
    tc.expected_subscribers = b.model.subscribers(t.name).size();
    const std::string full = runtime::ros_topic_name(b.opt.topic_prefix, t.name);
    for (int tries = 0; tries < 200; ++tries) {
      if (rcl_count_publishers(probe, full.c_str(), &tc.publishers) != RCL_RET_OK) tc.publishers = 0;
      if (rcl_count_subscribers(probe, full.c_str(), &tc.subscribers) != RCL_RET_OK) tc.subscribers = 0;
      if (tc.publishers >= tc.expected_publishers && tc.subscribers >= tc.expected_subscribers) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    b.result.topics.push_back(tc);
  }
}

// Run the executors for warm-up + duration (sampling the usage), stop them and collect their
// reports, traces and the sinks' records.
void run_executors(SystemBuild& b, std::vector<std::unique_ptr<runtime::Executor>>& executors) {
  const SystemOptions& opt = b.opt;
  SystemResult& result = b.result;
  const Duration start = now_ns();
  for (auto& ex : executors) {
    ex->measure_from(start + opt.warmup);
    ex->prepare();
  }
  for (auto& ex : executors) ex->start();
  result.started = start;
  const Duration end = start + opt.warmup + opt.duration;
  result.usage.push_back(usage_now(start));
  Duration next_sample = start + opt.usage_period;
  while (now_ns() < end && !runtime::signal_received()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (now_ns() >= next_sample) {
      result.usage.push_back(usage_now(start));
      next_sample += opt.usage_period;
    }
  }
  for (auto& ex : executors) ex->request_stop();
  std::vector<runtime::RunReport> parts;
  for (std::size_t e = 0; e < executors.size(); ++e) {
    auto& ex = executors[e];
    ex->join();
    parts.push_back(ex->report());
    if (opt.trace)
      for (const auto& d : ex->trace())
        result.trace.push_back(TraceRecord{b.model.executors[e].name, ex->name_of(d.callback), d.thread, d.start,
                                           d.finish, d.deadline, d.release, d.cpu, d.slept_until, d.woke});
  }
  result.stopped = now_ns();
  result.runtime = runtime::merge_reports(parts);
  result.records = b.recorder.count();
  result.records_lost = b.recorder.lost();
  if (!opt.dump_path.empty()) b.recorder.write(opt.dump_path);
}

}  // namespace

SystemResult run_reference_system(const Model& model, const SystemOptions& opt) {
  runtime::install_signal_handlers();
  SystemResult result;
  const std::vector<NodeShape> shapes = node_shapes(model);
  for (const auto& s : shapes) {
    result.nodes.emplace_back(s.name, to_string(s.type));
    if (s.type == NodeType::Command) result.sinks.push_back(s.name);
  }
  Work work = calibrated_work(model, shapes, opt, result);

  // Sinks: at most one sample per 5 ms each over the whole run.
  const std::size_t per_sink = static_cast<std::size_t>((opt.duration + opt.warmup + 5'000'000'000) / 5'000'000) + 64;
  Recorder recorder(opt.topology_only ? 1 : per_sink * std::max<std::size_t>(1, result.sinks.size()));

  runtime::Context context;
  SystemBuild b{model, opt, shapes, result, work, recorder, context};
  std::vector<std::unique_ptr<runtime::Executor>> executors;
  for (std::size_t e = 0; e < model.executors.size(); ++e) executors.push_back(build_executor(b, e));
  await_discovery(b);
  count_topology(b);
  if (opt.topology_only) return result;
  run_executors(b, executors);
  return result;
}

std::string to_json(const SystemResult& r) {
  using runtime::json_escape;
  std::ostringstream o;
  o << "{\"nodes\": {";
  for (std::size_t i = 0; i < r.nodes.size(); ++i)
    o << (i ? ", " : "") << '"' << json_escape(r.nodes[i].first) << "\": \"" << r.nodes[i].second << '"';
  o << "}, \"sinks\": [";
  for (std::size_t i = 0; i < r.sinks.size(); ++i) o << (i ? ", " : "") << '"' << json_escape(r.sinks[i]) << '"';
  o << "], \"topics\": {";
  for (std::size_t i = 0; i < r.topics.size(); ++i) {
    const auto& t = r.topics[i];
    o << (i ? ", " : "") << '"' << json_escape(t.topic) << "\": {\"expected_publishers\": " << t.expected_publishers
      << ", \"expected_subscribers\": " << t.expected_subscribers << ", \"publishers\": " << t.publishers
      << ", \"subscribers\": " << t.subscribers << "}";
  }
  o << "}, \"usage\": [";
  for (std::size_t i = 0; i < r.usage.size(); ++i)
    o << (i ? ", " : "") << "[" << r.usage[i].time << ", " << r.usage[i].cpu << ", " << r.usage[i].rss << "]";
  o << "], \"prime_limits\": {";
  std::size_t k = 0;
  for (const auto& [w, l] : r.prime_limits) o << (k++ ? ", " : "") << '"' << w << "\": " << l;
  o << "}, \"records\": " << r.records << ", \"records_lost\": " << r.records_lost << ", \"started_ns\": " << r.started
    << ", \"stopped_ns\": " << r.stopped << ", \"warnings\": [";
  std::vector<std::string> w = r.warnings;
  w.insert(w.end(), r.runtime.warnings.begin(), r.runtime.warnings.end());
  for (std::size_t i = 0; i < w.size(); ++i) o << (i ? ", " : "") << '"' << json_escape(w[i]) << '"';
  o << "], \"trace\": [";
  for (std::size_t i = 0; i < r.trace.size(); ++i) {
    const auto& t = r.trace[i];
    o << (i ? ", " : "") << "[\"" << json_escape(t.executor) << "\", \"" << json_escape(t.callback) << "\", "
      << t.thread << ", " << t.start << ", " << t.finish << ", " << t.deadline << ", " << t.release << ", "
      << t.cpu << ", " << t.slept_until << ", " << t.woke << "]";
  }
  o << "], \"runtime\": " << runtime::to_json(r.runtime, false) << "}";
  return o.str();
}

}  // namespace chainrt::reference_system

