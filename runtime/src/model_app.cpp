// chainrt runtime: a chainrt model as real ROS 2 nodes (see model_app.hpp).
#include "chainrt/runtime/model_app.hpp"
#include "chainrt/runtime/names.hpp"
#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/accelerator_shm.hpp"

#include <rcl_interfaces/msg/parameter_type.hpp>
#include <rcl_interfaces/srv/get_parameters.hpp>
#include <std_msgs/msg/u_int8_multi_array.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/services.hpp"
#include "chainrt/sched/setup.hpp"
#include "chainrt/sched/timer.hpp"

namespace chainrt::runtime {

using Msg = std_msgs::msg::UInt8MultiArray;

std::string process_of(const chainrt::Executor& e) { return e.process.empty() ? e.name : e.process; }

std::vector<std::string> model_processes(const Model& m) {
  std::vector<std::string> out;
  for (const auto& e : m.executors) {
    std::string p = process_of(e);
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

namespace {


ChainHeader header_of(const Stamp& s) {
  ChainHeader h;
  h.chain = s.chain;
  h.instance = s.instance;
  h.release = s.release;
  h.deadline = s.deadline;
  return h;
}

// The stamp a header carries (none when it is not chainrt's).
Stamp stamp_of(const ChainHeader& h) {
  Stamp s;
  if (h.magic != ChainHeader{}.magic) return s;
  s.chain = h.chain;
  s.instance = h.instance;
  s.release = h.release;
  s.deadline = h.deadline;
  return s;
}

void write_header(Msg& m, const Stamp& s) {
  const ChainHeader h = header_of(s);
  std::memcpy(m.data.data(), &h, sizeof h);
}

Stamp read_header(const Msg& m) {
  if (m.data.size() < sizeof(ChainHeader)) return Stamp{};
  ChainHeader h;
  std::memcpy(&h, m.data.data(), sizeof h);
  return stamp_of(h);
}

// One publishing end of a callback: a publisher and its preallocated message.
struct Output {
  std::shared_ptr<Publisher<Msg>> pub;
  Msg msg;
  std::size_t expected_subscribers = 0;
};

// A model service runs as a real ROS 2 service of a standard type that can carry a payload of
// the model's sizes (rcl_interfaces/srv/GetParameters): the request's names[0] is the chain
// header in hex (the server's chain instance), names[1] pads it to request_size; the response's
// values[0].byte_array_value is response_size bytes. The client's response takes the instance
// of the callback that sent the request (services.hpp).
using Srv = rcl_interfaces::srv::GetParameters;

std::string hex_header(const Stamp& s) {
  const ChainHeader h = header_of(s);
  const auto* b = reinterpret_cast<const unsigned char*>(&h);
  static const char* digits = "0123456789abcdef";
  std::string out(2 * sizeof h, '0');
  for (std::size_t i = 0; i < sizeof h; ++i) {
    out[2 * i] = digits[b[i] >> 4];
    out[2 * i + 1] = digits[b[i] & 15];
  }
  return out;
}

Stamp header_of_request(const Srv::Request& r) {
  if (r.names.empty() || r.names[0].size() != 2 * sizeof(ChainHeader)) return Stamp{};
  ChainHeader h;
  auto* b = reinterpret_cast<unsigned char*>(&h);
  auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (std::size_t i = 0; i < sizeof h; ++i)
    b[i] = static_cast<unsigned char>(nib(r.names[0][2 * i]) << 4 | nib(r.names[0][2 * i + 1]));
  return stamp_of(h);
}

// The client end of one (node, service): filled when the node's client is created; a request
// prepared once (its header is rewritten per call).
struct Caller {
  std::shared_ptr<Client<Srv>> client;
  Srv::Request request;
  std::mutex m;  // the request is shared by the node's callers (reentrant groups)
};

// A direct-mode device call inside a piece: after `at` of the piece's CPU time, the calling
// thread blocks until the device has run `work` (model/accelerator.hpp, DeviceCall).
struct DirectCall {
  SharedAccelerator* acc = nullptr;
  std::uint32_t segment = 0;
  Duration at = 0;
  DeviceWork work;
};

// A server-mode request when a piece's CPU part is done. The requesting instance's stamp waits
// in a ring slot (the token) until the server's completion publishes it on the continuation's
// topic, on the accelerator's one thread (so `out` is written by that thread only). The ring
// has the accelerator's capacity: one site's requests share one priority and so complete first
// in, first out, and at most `capacity` of them are queued at once, so a slot is free again
// before it is reused.
struct ServerRequest {
  SharedAccelerator* acc = nullptr;
  std::optional<int> priority;  // the piece's effective priority (facts.hpp)
  std::uint32_t site = 0, segment = 0;
  DeviceWork work;
  std::shared_ptr<Output> out;
  std::vector<Stamp> stamps;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> refused{0};  // a full queue: the instance ends here
  std::atomic<std::uint64_t> unsent{0};   // the continuation could not be published

  void submit(const Stamp& st) noexcept {
    const std::uint64_t slot = next.fetch_add(1, std::memory_order_relaxed) % stamps.size();
    stamps[slot] = st;
    if (!acc->submit(priority, site, segment, work, &ServerRequest::done, this, slot))
      refused.fetch_add(1, std::memory_order_relaxed);
  }
  static void done(void* self, std::uint64_t slot) noexcept {
    auto* r = static_cast<ServerRequest*>(self);
    write_header(r->out->msg, r->stamps[slot]);
    if (!r->out->pub->publish(r->out->msg)) r->unsent.fetch_add(1, std::memory_order_relaxed);
  }
};

// SCHED_FIFO priority of a direct-mode accelerator's thread (the emulated device alone).
constexpr int kDeviceFifo = 98;

// The device work of one segment.
DeviceWork device_work(const AcceleratorSegment& s) {
  return DeviceWork{s.copy_in, s.kernel, s.copy_out, s.block.value_or(0)};
}

}  // namespace

RunReport merge_reports(const std::vector<RunReport>& parts) {
  RunReport out;
  if (parts.empty()) return out;
  out.policy = parts.front().policy;
  for (const auto& p : parts) {
    out.threads += p.threads;
    out.duration_ns = std::max(out.duration_ns, p.duration_ns);
    out.dispatches += p.dispatches;
    out.callbacks.insert(out.callbacks.end(), p.callbacks.begin(), p.callbacks.end());
    out.warnings.insert(out.warnings.end(), p.warnings.begin(), p.warnings.end());
    if (p.policy != out.policy) out.policy = "mixed-executors";
  }
  for (std::size_t c = 0; c < parts.front().chains.size(); ++c) {
    ChainStats m = parts.front().chains[c];
    m.samples.clear();
    m.instances = m.deadline_misses = m.drops = 0;
    m.wcrt_ns = m.bcrt_ns = 0;
    double sum = 0;
    for (const auto& p : parts) {
      if (c >= p.chains.size()) continue;
      const ChainStats& s = p.chains[c];
      m.drops += s.drops;
      if (s.instances == 0) continue;
      m.wcrt_ns = m.instances ? std::max(m.wcrt_ns, s.wcrt_ns) : s.wcrt_ns;
      m.bcrt_ns = m.instances ? std::min(m.bcrt_ns, s.bcrt_ns) : s.bcrt_ns;
      m.instances += s.instances;
      m.deadline_misses += s.deadline_misses;
      sum += s.mean_ns * static_cast<double>(s.instances);
      m.samples.insert(m.samples.end(), s.samples.begin(), s.samples.end());
    }
    m.mean_ns = m.instances ? sum / static_cast<double>(m.instances) : 0.0;
    m.p99_ns = quantile(m.samples, 0.99);
    out.chains.push_back(std::move(m));
  }
  return out;
}

namespace {

// The dispatch trace's files, opened before the run: a trace that cannot be written is refused
// before the run, not lost after it.
struct TraceFiles {
  std::ofstream trace, start;
};

void open_trace(TraceFiles& t, const std::string& path) {
  if (path.empty()) return;
  t.trace.open(path);
  if (t.trace) t.start.open(path + ".start");
  if (!t.trace || !t.start)
    throw std::runtime_error("cannot write the trace " + path + (t.trace ? ".start" : "") + ": " + std::strerror(errno));
}

// An accelerator is one device. Used by callbacks of several processes, it is shared through a
// shared-memory segment (accelerator_shm.hpp) named after the run and the accelerator, and served
// by the process of the first executor (in the model's order) whose callbacks use it.
struct Sharing {
  std::set<std::string> processes;
  std::string server;
};

// Per accelerator (flat accelerator_index) that a piece uses: its processes and its server.
std::map<std::size_t, Sharing> accelerator_sharing(const Model& model, const AcceleratedModel& am) {
  const Model& xm = am.model;
  std::map<std::size_t, Sharing> sharing;
  for (std::size_t c = 0; c < xm.callbacks.size(); ++c) {
    const Piece& pc = am.pieces[c];
    std::vector<AcceleratorRef> used;
    if (pc.request) used.push_back(pc.request->accelerator);
    for (const DeviceCall& d : pc.direct) used.push_back(d.accelerator);
    const chainrt::Executor& e = xm.executor_of(xm.callbacks[c]);
    for (const AcceleratorRef& ref : used) sharing[accelerator_index(model, ref)].processes.insert(process_of(e));
  }
  for (const chainrt::Executor& e : model.executors)
    for (auto& [ix, sh] : sharing)
      if (sh.server.empty() && sh.processes.count(process_of(e))) sh.server = process_of(e);
  return sharing;
}

// The run of one process of a model, in the stages run_model takes in order: expand the model
// and create the process's context (the constructor), build the executors with their nodes,
// callbacks, services and accelerators (build_executors), wait for discovery, start, run, stop,
// and report (warnings, trace, merged report). Members are destroyed in reverse order: the
// accelerators (stopped first) before the executors, these before the nodes, the context last.
class ProcessRun {
 public:
  ProcessRun(const Model& model, const ModelRunOptions& opt)
      : model_(model), opt_(opt), am_(expand_accelerators(model)), xm_(am_.model),
        sharing_(accelerator_sharing(model, am_)),
        cpu_work_(opt.work ? opt.work : std::function<void(Duration)>(burn_cpu)) {
    for (std::size_t e = 0; e < model.executors.size(); ++e)
      if (opt.process.empty() || process_of(model.executors[e]) == opt.process) exec_ix_.push_back(e);
    if (exec_ix_.empty()) throw std::invalid_argument("no executor runs in process '" + opt.process + "'");
  }

  void build_executors() {
    for (std::size_t e : exec_ix_) build_executor(e);
  }
  void await_discovery();
  Duration start();
  void run_until(Duration start);
  std::vector<RunReport> stop();
  void collect_warnings();
  void write_trace(TraceFiles& files, Duration start);
  RunReport report(const std::vector<RunReport>& parts) const {
    RunReport r = merge_reports(parts);
    r.warnings.insert(r.warnings.begin(), warnings_.begin(), warnings_.end());
    return r;
  }

 private:
  Duration clk() const { return opt_.clock ? opt_.clock() : now_ns(); }
  void build_executor(std::size_t e);
  ExecutorOptions executor_options(const chainrt::Executor& me, const sched::ExecutorSetup& setup) const;
  void add_callback(Executor& ex, const sched::ExecutorSetup& setup, sched::CallbackId id);
  Node& node_of(Executor& ex, const Callback& cb);
  CallbackGroup* group_of(Node& node, const Callback& cb);
  std::vector<std::shared_ptr<Output>> outputs_of(Node& node, const Callback& cb);
  std::shared_ptr<ServerRequest> server_request(std::size_t ci, std::vector<std::shared_ptr<Output>>& outs);
  std::function<void()> work_of(std::size_t ci, std::vector<std::shared_ptr<Output>> outs,
                                std::shared_ptr<ServerRequest> request);
  void install(Node& node, const Callback& cb, const CallbackOptions& co, std::function<void()> work);
  void add_unanswered_clients();
  SharedAccelerator* accelerator_for(const AcceleratorRef& ref);
  std::shared_ptr<Caller> caller_of(const std::string& node, const std::string& service);
  bool derived(const std::string& topic) const {  // a service's request or response topic
    const Topic* t = xm_.topic(topic);
    return t != nullptr && !t->service.empty();
  }
  std::shared_ptr<std::atomic<bool>>& fusion_flag(const std::string& input) {
    auto& flag = fusion_cached_[input];
    if (!flag) flag = std::make_shared<std::atomic<bool>>(false);
    return flag;
  }

  const Model& model_;
  const ModelRunOptions& opt_;
  // The model as its pieces (model/accelerator.hpp): every callback with server-mode segments
  // runs as a piece and its continuations; without accelerators, the model itself.
  const AcceleratedModel am_;
  const Model& xm_;
  const std::map<std::size_t, Sharing> sharing_;
  const std::function<void(Duration)> cpu_work_;
  Context context_;
  std::vector<std::size_t> exec_ix_;  // the executors of this process (model order)
  std::vector<std::string> warnings_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;
  std::map<std::string, CallbackGroup*> groups_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Output>> outputs_;  // (node, topic)
  std::vector<std::unique_ptr<Executor>> executors_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> fusion_cached_;  // input callback -> cached
  // WCET scale in parts per million (ModelRunOptions::wcet_steps), read by every callback.
  std::shared_ptr<std::atomic<std::int64_t>> scale_ = std::make_shared<std::atomic<std::int64_t>>(1'000'000);
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Caller>> callers_;  // (node, service)
  std::vector<std::shared_ptr<Service<Srv>>> servers_;
  // This process's accelerators (flat accelerator_index), created when a piece first uses one;
  // they stop after the executors, so no request is left in flight behind a running callback.
  std::map<std::size_t, std::unique_ptr<SharedAccelerator>> accelerators_;
  std::vector<std::string> accelerator_warnings_;
  std::vector<std::shared_ptr<ServerRequest>> requests_;
};

SharedAccelerator* ProcessRun::accelerator_for(const AcceleratorRef& ref) {
  auto& acc = accelerators_[accelerator_index(model_, ref)];
  if (acc) return acc.get();
  const Accelerator& a = accelerator_of(model_, ref);
  AcceleratorOptions ao;
  ao.name = model_.hosts[ref.host].name + "/" + a.name;
  ao.access = a.access;
  ao.overhead = a.server_overhead;
  ao.block_preemption = a.block_preemption;
  if (opt_.thread_params) {
    // Direct access has no server: the accelerator's thread is only the emulated device,
    // which stands for hardware that needs no CPU, so it runs above every model thread
    // (a normal-priority thread would add the machine's scheduling delays to each segment).
    ao.fifo_priority = a.access == AcceleratorAccess::Server ? a.server_priority : std::optional<int>(kDeviceFifo);
    ao.cores = a.server_cores;
  }
  ao.warnings = &accelerator_warnings_;
  ao.clock = opt_.clock;
  ao.spend = opt_.server_overhead;
  ao.trace_capacity = opt_.trace_path.empty() ? 0 : std::size_t{1} << 16;
  if (const Sharing& sh = sharing_.at(accelerator_index(model_, ref)); sh.processes.size() > 1 && !opt_.process.empty()) {
    ao.shared_memory = AcceleratorShm::segment_name(opt_.run_id + "-" + ao.name);
    ao.serve = sh.server == opt_.process;
  }
  // `device: cuda`: the CUDA backend (its stream-priority mapping from the model), else the
  // emulated device
  acc = std::make_unique<SharedAccelerator>(
      std::move(ao), a.device == AcceleratorDevice::Cuda
                         ? make_cuda_backend(a.cuda_device, cuda_stream_thresholds(model_, ref))
                         : std::make_unique<EmulatedDevice>(opt_.device_wait));
  return acc.get();
}

std::shared_ptr<Caller> ProcessRun::caller_of(const std::string& node, const std::string& service) {
  auto& c = callers_[{node, service}];
  if (!c) {
    c = std::make_shared<Caller>();
    const chainrt::Service* sv = xm_.service(service);
    c->request.names.assign(2, std::string());
    const std::size_t size = sv ? static_cast<std::size_t>(sv->request_size) : 0;
    c->request.names[1].assign(size > 2 * sizeof(ChainHeader) ? size - 2 * sizeof(ChainHeader) : 0, 'x');
  }
  return c;
}

ExecutorOptions ProcessRun::executor_options(const chainrt::Executor& me, const sched::ExecutorSetup& setup) const {
  ExecutorOptions eo;
  eo.policy = setup.policy;
  eo.threads = setup.threads;
  if (!opt_.thread_params)
    for (auto& t : eo.threads) {
      t.cores.clear();
      t.fifo_priority.reset();
      t.reservation.reset();
    }
  if (opt_.fifo)
    for (auto& t : eo.threads)
      if (!t.fifo_priority && !t.reservation) t.fifo_priority = opt_.fifo;
  eo.name = me.name;
  eo.stats_period = opt_.stats_period;
  eo.stats_topic = ros_topic_name(opt_.topic_prefix, "chainrt/chain_stats");
  eo.run_id = opt_.run_id;
  eo.clock = opt_.clock;
  return eo;
}

void ProcessRun::build_executor(std::size_t e) {
  const chainrt::Executor& me = model_.executors[e];
  const sched::ExecutorSetup setup = sched::make_setup(xm_, e, opt_.policy, opt_.threads);
  ExecutorOptions eo = executor_options(me, setup);
  if (opt_.observer) opt_.observer->configure(me, eo);
  auto ex = std::make_unique<Executor>(context_, eo);
  for (sched::CallbackId id = 0; id < setup.callbacks.size(); ++id) add_callback(*ex, setup, id);
  add_unanswered_clients();
  // every chain of the model, in model order (the stamp's chain index is the model's)
  for (const auto& c : xm_.chains) ex->add_chain(ChainSpec::of(c));
  executors_.push_back(std::move(ex));
}

Node& ProcessRun::node_of(Executor& ex, const Callback& cb) {
  auto& node = nodes_[cb.node];
  if (!node) {
    // the model's own node name (under the run's namespace when one is given)
    node = std::make_unique<Node>(context_, ros_name(cb.node), opt_.ns);
    ex.add_node(*node);
  }
  return *node;
}

CallbackGroup* ProcessRun::group_of(Node& node, const Callback& cb) {
  CallbackGroup*& grp = groups_[cb.group];
  if (!grp) {
    GroupType type = GroupType::MutuallyExclusive;
    for (const auto& g : xm_.groups)
      if (g.name == cb.group) type = g.type;
    grp = node.create_callback_group(type, cb.group);
  }
  return grp;
}

// What a callback publishes (a piece with a server-mode request publishes only its
// continuation's topic, through the server's completion: server_request).
std::vector<std::shared_ptr<Output>> ProcessRun::outputs_of(Node& node, const Callback& cb) {
  std::vector<std::shared_ptr<Output>> outs;
  for (const auto& tname : cb.publishes) {
    if (derived(tname)) continue;  // a service's request or response: sent as one (caller_of)
    auto& out = outputs_[{cb.node, tname}];
    if (!out) {
      out = std::make_shared<Output>();
      const Topic* t = xm_.topic(tname);
      std::size_t depth = 1;
      for (std::size_t s : xm_.subscribers(tname)) {
        depth = std::max<std::size_t>(depth, static_cast<std::size_t>(xm_.callbacks[s].queue_depth));
        ++out->expected_subscribers;
      }
      out->pub = node.create_publisher<Msg>(ros_topic_name(opt_.topic_prefix, tname), depth);
      const std::size_t size = std::max<std::size_t>(sizeof(ChainHeader), t ? static_cast<std::size_t>(t->size) : 0);
      out->msg.data.assign(size, 0);
    }
    outs.push_back(out);
  }
  return outs;
}

// The server-mode request of piece `ci` (none without one); it takes over the piece's one
// output, its continuation's topic.
std::shared_ptr<ServerRequest> ProcessRun::server_request(std::size_t ci, std::vector<std::shared_ptr<Output>>& outs) {
  const Piece& piece = am_.pieces[ci];
  if (!piece.request) return nullptr;
  SharedAccelerator* acc = accelerator_for(piece.request->accelerator);
  auto request = std::make_shared<ServerRequest>();
  request->acc = acc;
  if (auto p = effective_priority(xm_, ci)) request->priority = static_cast<int>(*p);
  request->site = static_cast<std::uint32_t>(ci);
  request->segment = static_cast<std::uint32_t>(piece.request->segment);
  request->work = device_work(am_.segment(model_, *piece.request, ci));
  request->stamps.assign(acc->options().capacity, Stamp{});
  if (outs.size() != 1)
    throw std::logic_error("callback '" + xm_.callbacks[ci].name +
                           "': a piece with a server request must publish its continuation only");
  request->out = outs.front();
  outs.clear();
  requests_.push_back(request);
  return request;
}

// What callback `ci` does when dispatched: its CPU part (cut by its direct-mode device calls),
// then, unless a fused input is missing, its request, its messages and its service calls.
std::function<void()> ProcessRun::work_of(std::size_t ci, std::vector<std::shared_ptr<Output>> outs,
                                          std::shared_ptr<ServerRequest> request) {
  const Callback& cb = xm_.callbacks[ci];
  const auto site = static_cast<std::uint32_t>(ci);
  std::vector<DirectCall> direct;
  for (const DeviceCall& d : am_.pieces[ci].direct)
    direct.push_back(DirectCall{accelerator_for(d.accelerator), static_cast<std::uint32_t>(d.segment), d.at,
                                device_work(am_.segment(model_, d, ci))});
  // LaME fusion (as the simulator): an input callback caches its message; the trigger
  // publishes only once every input it fuses has cached at least once.
  std::shared_ptr<std::atomic<bool>> cached;
  std::vector<std::shared_ptr<std::atomic<bool>>> needs;
  if (cb.kind == CallbackKind::FusionInput) cached = fusion_flag(cb.name);
  if (cb.kind == CallbackKind::FusionTrigger)
    for (const auto& in : cb.fuses) needs.push_back(fusion_flag(in));
  // service calls go out with what the callback publishes: from its last piece
  std::vector<std::shared_ptr<Caller>> calls;
  if (!request)
    for (const auto& sname : cb.calls) calls.push_back(caller_of(cb.node, sname));
  return [wcet = cb.wcet, outs, cached, needs, scale = scale_, calls, direct, request, cpu_work = cpu_work_, site]() {
    auto cpu = [&](Duration d) {
      if (d > 0) cpu_work(static_cast<Duration>(static_cast<__int128>(d) * scale->load(std::memory_order_relaxed) / 1'000'000));
    };
    // the CPU part, cut by the direct-mode calls (the thread blocks in each)
    Duration done = 0;
    for (const DirectCall& d : direct) {
      cpu(d.at - done);
      done = d.at;
      d.acc->call(site, d.segment, d.work);
    }
    cpu(wcet - done);
    if (cached) cached->store(true);
    for (const auto& n : needs)
      if (!n->load()) return;  // a fused input was never cached: nothing to publish yet
    const Stamp& st = current_stamp();
    if (request) request->submit(st);  // the continuation follows when the device is done
    for (const auto& o : outs) {
      write_header(o->msg, st);
      o->pub->publish(o->msg);
    }
    for (const auto& c : calls) {
      std::lock_guard<std::mutex> lk(c->m);
      if (!c->client) continue;
      c->request.names[0] = hex_header(st);
      c->client->async_send_request(c->request);
    }
  };
}

// The callback's ROS 2 entity (timer, subscription, service server or client) running `work`.
void ProcessRun::install(Node& node, const Callback& cb, const CallbackOptions& co, std::function<void()> work) {
  switch (cb.kind) {
    case CallbackKind::Timer:
      node.create_timer(cb.period, work, co, cb.offset)->set_grid_period(cb.grid_period());
      break;
    case CallbackKind::Subscription:
    case CallbackKind::FusionInput:
    case CallbackKind::FusionTrigger:
      node.create_subscription<Msg>(ros_topic_name(opt_.topic_prefix, cb.topic),
                                    static_cast<std::size_t>(std::max(1, cb.queue_depth)),
                                    [work](const Msg&) { work(); }, co, &read_header);
      break;
    case CallbackKind::Service: {
      const chainrt::Service* sv = xm_.service(cb.service);
      const std::size_t bytes = sv ? static_cast<std::size_t>(sv->response_size) : 0;
      servers_.push_back(node.create_service<Srv>(
          ros_topic_name(opt_.topic_prefix, cb.service),
          [work, bytes](const Srv::Request&, Srv::Response& res) {
            work();
            res.values.resize(1);
            res.values[0].type = rcl_interfaces::msg::ParameterType::PARAMETER_BYTE_ARRAY;
            res.values[0].byte_array_value.assign(bytes, 0);
          },
          co, &header_of_request, static_cast<std::size_t>(std::max(1, cb.queue_depth))));
      break;
    }
    case CallbackKind::Client: {
      auto c = caller_of(cb.node, cb.service);
      std::lock_guard<std::mutex> lk(c->m);
      c->client = node.create_client<Srv>(ros_topic_name(opt_.topic_prefix, cb.service),
                                          [work](const Srv::Response&, std::int64_t) { work(); }, co);
      break;
    }
    default:
      warnings_.push_back("callback '" + cb.name + "': " + to_string(cb.kind) +
                          " callbacks are not run by chainrt-run (skipped)");
      // keep the numbering of the setup: a timer that never fires would change it, so
      // the callback is simply absent (the sched ids of later callbacks shift).
      break;
  }
}

void ProcessRun::add_callback(Executor& ex, const sched::ExecutorSetup& setup, sched::CallbackId id) {
  const std::size_t ci = setup.callbacks[id];  // the piece, a callback of xm
  const Callback& cb = xm_.callbacks[ci];
  Node& node = node_of(ex, cb);
  CallbackOptions co;
  co.name = cb.name;
  co.group = group_of(node, cb);
  co.priority = setup.specs[id].priority;
  co.affinity = opt_.threads ? sched::kAnyThread : setup.specs[id].affinity;
  std::vector<std::shared_ptr<Output>> outs = outputs_of(node, cb);
  std::shared_ptr<ServerRequest> request = server_request(ci, outs);
  install(node, cb, co, work_of(ci, std::move(outs), std::move(request)));
}

// A caller whose node has no client callback of the service: a client whose response does
// nothing (the model leaves the response out).
void ProcessRun::add_unanswered_clients() {
  for (auto& [key, c] : callers_) {
    std::lock_guard<std::mutex> lk(c->m);
    auto n = nodes_.find(key.first);
    if (c->client || n == nodes_.end()) continue;
    CallbackOptions co;
    co.name = key.first + "/" + key.second + "/client";
    c->client = n->second->create_client<Srv>(ros_topic_name(opt_.topic_prefix, key.second),
                                              [](const Srv::Response&, std::int64_t) {}, co);
  }
}

// Discovery: wait until every publisher has matched the subscriptions the model gives it, and
// every client a server.
void ProcessRun::await_discovery() {
  const Duration give_up = now_ns() + opt_.discovery_timeout;
  for (auto& [key, out] : outputs_) {
    while (out->pub->subscription_count() < out->expected_subscribers && now_ns() < give_up && !signal_received())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (out->pub->subscription_count() < out->expected_subscribers)
      warnings_.push_back("topic '" + key.second + "' of node '" + key.first + "': " +
                          std::to_string(out->pub->subscription_count()) + " of " +
                          std::to_string(out->expected_subscribers) +
                          " subscriptions matched before the start (is every process running?)");
  }
  for (auto& [key, c] : callers_) {
    if (!c->client) continue;
    while (!c->client->service_is_ready() && now_ns() < give_up && !signal_received())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!c->client->service_is_ready())
      warnings_.push_back("service '" + key.second + "' called by node '" + key.first +
                          "': no server matched before the start (is every process running?)");
  }
}

// Starts all executors of the process together; measured after the warm-up. The timers are
// released from the run's release epoch (sched/timer.hpp): a launcher of several processes
// sets it ahead of their start, so the warm-up and the duration count from it, not from now.
// Returns the run's start.
Duration ProcessRun::start() {
  const Duration started = clk();
  // (an injected clock is its own epoch: the executors release their timers from its time at
  // prepare(), which is `started` while nothing moves it)
  const Duration start = opt_.clock ? started : std::max(started, sched::release_epoch(started));
  for (std::size_t i = 0; i < executors_.size(); ++i) {
    executors_[i]->measure_from(start + opt_.warmup);
    executors_[i]->prepare();
    if (opt_.observer) opt_.observer->prepared(model_.executors[exec_ix_[i]], *executors_[i]);
  }
  for (auto& ex : executors_) ex->start();
  if (opt_.observer) opt_.observer->started(start);
  return start;
}

// Until the end of the run (or a signal), applying the WCET steps as their times come.
void ProcessRun::run_until(Duration start) {
  const Duration end = start + opt_.warmup + opt_.duration;
  std::size_t step = 0;
  while (clk() < end && !signal_received()) {
    for (; step < opt_.wcet_steps.size() && clk() >= start + opt_.wcet_steps[step].at; ++step)
      scale_->store(static_cast<std::int64_t>(opt_.wcet_steps[step].factor * 1e6), std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Stops the executors, then the accelerators (what is left queued at a device has no
// continuation to run); the executors' reports.
std::vector<RunReport> ProcessRun::stop() {
  if (opt_.observer) opt_.observer->stopping();
  for (auto& ex : executors_) ex->request_stop();
  std::vector<RunReport> parts;
  for (auto& ex : executors_) {
    ex->join();
    parts.push_back(ex->report());
  }
  for (auto& [ix, acc] : accelerators_) acc->stop();
  return parts;
}

void ProcessRun::collect_warnings() {
  for (const auto& w : accelerator_warnings_) warnings_.push_back(w);
  for (auto& [ix, acc] : accelerators_)
    if (acc->lost())
      warnings_.push_back("accelerator '" + acc->options().name + "': " + std::to_string(acc->lost()) +
                          " requests not served (its server process ended first)");
  for (const auto& rq : requests_) {
    const std::string who = xm_.callbacks[rq->site].name;
    if (rq->refused)
      warnings_.push_back("callback '" + who + "': " + std::to_string(rq->refused.load()) +
                          " accelerator requests refused (the device's queue was full, or its server process had ended)");
    if (rq->unsent)
      warnings_.push_back("callback '" + who + "': " + std::to_string(rq->unsent.load()) +
                          " continuations could not be published");
  }
}

// One JSON object per dispatch, then one per device request served (in completion order); times
// in ns relative to the run's start, which goes beside the trace (FILE.start, CLOCK_MONOTONIC) so
// that they can be aligned with other measurements of the same run (the CROS-RT experiment's
// platform probe).
void ProcessRun::write_trace(TraceFiles& files, Duration start) {
  files.start << start << "\n";
  files.start.close();
  std::ofstream& f = files.trace;
  auto rel = [&](Duration t) { return t - start; };
  for (std::size_t e = 0; e < executors_.size(); ++e)
    for (const DispatchRecord& d : executors_[e]->trace()) {
      f << "{\"executor\": \"" << json_escape(model_.executors[exec_ix_[e]].name)
        << "\", \"callback\": \"" << json_escape(executors_[e]->name_of(d.callback))
        << "\", \"thread\": " << d.thread << ", \"release\": "
        << (d.release ? rel(d.release) : -1) << ", \"start\": " << rel(d.start)
        << ", \"finish\": " << rel(d.finish) << ", \"cpu\": " << d.cpu
        << ", \"deadline\": " << (d.deadline == sched::kNoDeadline ? -1 : rel(d.deadline));
      if (d.woke > d.slept_until)  // the thread's late wake-up before this dispatch
        f << ", \"slept_until\": " << rel(d.slept_until) << ", \"woke\": " << rel(d.woke);
      f << "}\n";
    }
  for (auto& [ix, acc] : accelerators_) {
    if (acc->trace_truncated()) warnings_.push_back("accelerator '" + acc->options().name + "': device trace truncated");
    for (const DeviceRecord& d : acc->trace())
      f << "{\"device\": \"" << json_escape(acc->options().name) << "\", \"callback\": \""
        << json_escape(xm_.callbacks[d.site].name) << "\", \"segment\": " << d.segment
        << ", \"issued\": " << d.issued - start << ", \"start\": " << d.start - start
        << ", \"finish\": " << d.finish - start << "}\n";
  }
  f.close();
  if (!f || !files.start)  // (a full disk): an error, not a silently truncated trace
    throw std::runtime_error("writing the trace " + opt_.trace_path + " failed: " + std::strerror(errno));
}

}  // namespace

RunReport run_model(const Model& model, const ModelRunOptions& opt) {
  TraceFiles trace;
  open_trace(trace, opt.trace_path);
  install_signal_handlers();
  ProcessRun run(model, opt);
  run.build_executors();
  run.await_discovery();
  const Duration start = run.start();
  run.run_until(start);
  const std::vector<RunReport> parts = run.stop();
  run.collect_warnings();
  if (!opt.trace_path.empty()) run.write_trace(trace, start);
  return run.report(parts);
}

}  // namespace chainrt::runtime
