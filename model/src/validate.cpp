// Validation of a typed model: cross-references, value ranges, defaults and derived data.
// Defaults (documented in docs/model.md): one host and one single-threaded ros-default
// executor when none are given; nodes and topics implied by callbacks when their sections are
// absent; every node's default callback group "<node>/default" is mutually exclusive (as in
// ROS 2); a chain's period is its timer's; its deadline its period. Derived: the hops Λ_i of
// each chain with their topic, message size and communication kind (CROS-RT categories).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/limits.hpp"
#include "chainrt/model/units.hpp"
#include "source_map.hpp"
#include "text.hpp"

namespace chainrt::detail {
namespace {

std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }
std::string quote(const std::string& s) { return "'" + s + "'"; }

// The limits of limits.hpp on typed values, so that models built in code (generators, the
// Python API) meet them as loaded files do; the parser reports them first, with the text. The
// minimum period (kMinPeriod) is a limit of files only: analysis tests and generators build
// models in abstract time units where a period of a few nanoseconds is normal.
void check_duration(Duration v, const std::string& field, const char* what, Diagnostics& d) {
  if (v > limits::kMaxDuration)
    d.error(field, std::string(what) + " " + format_duration(v) + " is longer than chainrt's limit of 1 h");
}
void check_period(Duration v, const std::string& field, const char* what, Diagnostics& d) {
  check_duration(v, field, what, d);
}
void check_range(long long v, long long lo, long long hi, const std::string& field, const char* what,
                 Diagnostics& d) {
  if (v < lo || v > hi)
    d.error(field, std::string(what) + " must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                       std::to_string(v));
}

template <class T>
void check_unique(const std::vector<T>& items, const std::string& section, const char* what, Diagnostics& d) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name.empty()) continue;
    auto [it, fresh] = first.emplace(items[i].name, i);
    if (!fresh)
      d.error(at(section, i) + ".name", std::string("duplicate ") + what + " name " + quote(items[i].name) +
                                            " (first defined as " + at(section, it->second) + ")");
  }
}

template <class T>
bool contains(const std::vector<T>& items, const std::string& name) {
  return std::any_of(items.begin(), items.end(), [&](const T& x) { return x.name == name; });
}

void fill_infrastructure(Model& m, Diagnostics& d) {
  if (m.hosts.empty()) m.hosts.push_back(Host{"localhost", 1});
  check_unique(m.hosts, "hosts", "host", d);
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    check_range(m.hosts[i].cores, 1, limits::kMaxCores, at("hosts", i) + ".cores", "cores", d);
    // A blackout curve: windows strictly increasing, maxima non-decreasing and within their window.
    const auto& bl = m.hosts[i].blackout;
    for (std::size_t k = 0; k < bl.size(); ++k) {
      const std::string q = at(at("hosts", i) + ".blackout", k);
      if (bl[k].max > bl[k].window)
        d.error(q + ".max", "max " + format_duration(bl[k].max) + " exceeds its window " + format_duration(bl[k].window));
      if (k > 0 && bl[k].window <= bl[k - 1].window)
        d.error(q + ".window", "blackout windows must increase (" + format_duration(bl[k].window) + " after " +
                                   format_duration(bl[k - 1].window) + ")");
      else if (k > 0 && bl[k].max < bl[k - 1].max)
        d.error(q + ".max", "the blackout in a longer window cannot be smaller (" + format_duration(bl[k].max) +
                                " after " + format_duration(bl[k - 1].max) + ")");
    }
  }
  if (m.executors.empty()) m.executors.push_back(Executor{"executor"});
  check_unique(m.executors, "executors", "executor", d);
  for (std::size_t i = 0; i < m.executors.size(); ++i) {
    Executor& e = m.executors[i];
    std::string p = at("executors", i);
    if (e.host.empty()) e.host = m.hosts.front().name;
    if (e.process.empty()) e.process = e.name;
    const Host* host = nullptr;
    for (const auto& h : m.hosts)
      if (h.name == e.host) host = &h;
    if (!host) d.error(p + ".host", "unknown host " + quote(e.host));
    // Thread classes expand to one thread per core (LaME Sec. 4.1); drop earlier expansions so
    // that validating twice is idempotent.
    e.threads.erase(std::remove_if(e.threads.begin(), e.threads.end(),
                                   [](const Thread& t) { return !t.thread_class.empty(); }),
                    e.threads.end());
    for (const auto& tc : e.thread_classes) {
      if (tc.cores.empty()) {
        e.threads.push_back(Thread{tc.name, {}, tc.fifo_priority, tc.reservation, tc.name});
      } else {
        for (int c : tc.cores)
          e.threads.push_back(Thread{tc.name + "/" + std::to_string(c), {c}, tc.fifo_priority, tc.reservation, tc.name});
      }
    }
    if (e.threads.empty()) e.threads.push_back(Thread{"t0"});
    std::set<std::string> names;
    for (const auto& tc : e.thread_classes) names.insert(tc.name);
    auto check_sched = [&](const std::string& q, const std::vector<int>& cores, const std::optional<int>& prio,
                           const std::optional<Reservation>& res) {
      for (std::size_t k = 0; k < cores.size(); ++k)
        if (host && cores[k] >= host->cores)
          d.error(at(q + ".cores", k), "core " + std::to_string(cores[k]) + " does not exist on host " +
                                           quote(host->name) + " (" + std::to_string(host->cores) + " cores)");
      if (prio && (*prio < 1 || *prio > 99)) d.error(q + ".priority", "SCHED_FIFO priority must be 1..99");
      if (prio && res) d.error(q, "a thread has either a SCHED_FIFO priority or a SCHED_DEADLINE reservation, not both");
      if (res) check_period(res->period, q + ".reservation.period", "a reservation period", d);
      if (res && res->budget > res->period)
        d.error(q + ".reservation.budget", "budget " + format_duration(res->budget) + " exceeds the period " +
                                               format_duration(res->period));
    };
    for (std::size_t t = 0; t < e.threads.size(); ++t) {
      const Thread& th = e.threads[t];
      if (!th.thread_class.empty()) continue;
      std::string q = at(p + ".threads", t);
      if (!names.insert(th.name).second) d.error(q + ".name", "duplicate thread name " + quote(th.name));
      check_sched(q, th.cores, th.fifo_priority, th.reservation);
    }
    for (std::size_t t = 0; t < e.thread_classes.size(); ++t) {
      const ThreadClass& tc = e.thread_classes[t];
      std::string q = at(p + ".thread_classes", t);
      if (std::count_if(e.thread_classes.begin(), e.thread_classes.end(),
                        [&](const ThreadClass& o) { return o.name == tc.name; }) > 1)
        d.error(q + ".name", "duplicate thread class name " + quote(tc.name));
      check_sched(q, tc.cores, tc.fifo_priority, tc.reservation);
    }
    if (e.priority && (*e.priority < 0 || *e.priority > 99)) d.error(p + ".priority", "executor priority must be 0..99");
    if (e.dispatch_overhead < 0)
      d.error(p + ".dispatch_overhead", "dispatch_overhead must be zero or positive, got " +
                                            format_duration(e.dispatch_overhead));
    check_duration(e.dispatch_overhead, p + ".dispatch_overhead", "dispatch_overhead", d);
    if (e.threads.size() > static_cast<std::size_t>(limits::kMaxThreads))
      d.error(p + ".threads", "executor " + quote(e.name) + " has " + std::to_string(e.threads.size()) +
                                  " threads; chainrt's limit is " + std::to_string(limits::kMaxThreads));
  }
}

void fill_nodes_groups_topics(Model& m, Diagnostics& d) {
  const bool nodes_implied = m.nodes.empty();
  std::vector<std::size_t> implied_by;  // per implied node: the first callback that names it
  if (nodes_implied) {
    for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
      const Callback& cb = m.callbacks[i];
      if (!cb.node.empty() && !contains(m.nodes, cb.node)) {
        m.nodes.push_back(Node{cb.node, ""});
        implied_by.push_back(i);
      }
    }
  }
  check_unique(m.nodes, "nodes", "node", d);
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    Node& n = m.nodes[i];
    if (n.executor.empty()) {
      if (m.executors.size() == 1) n.executor = m.executors.front().name;
      else  // an implied node is reported where a callback names it (the section is absent)
        d.error(nodes_implied ? at("callbacks", implied_by[i]) + ".node" : at("nodes", i),
                "node " + quote(n.name) + " needs an 'executor' (the model has several executors)" +
                    (nodes_implied ? "; declare it in a 'nodes' section" : ""));
    } else if (!contains(m.executors, n.executor)) {
      d.error(at("nodes", i) + ".executor", "unknown executor " + quote(n.executor));
    }
  }
  // Groups declared in the file, then each node's default group where a callback needs it.
  check_unique(m.groups, "callback_groups", "callback group", d);
  for (std::size_t i = 0; i < m.groups.size(); ++i)
    if (!contains(m.nodes, m.groups[i].node))
      d.error(at("callback_groups", i) + ".node", "unknown node " + quote(m.groups[i].node));
  for (auto& cb : m.callbacks) {
    if (!cb.group.empty() || cb.node.empty()) continue;
    cb.group = cb.node + "/default";
    if (!contains(m.groups, cb.group)) m.groups.push_back(CallbackGroup{cb.group, GroupType::MutuallyExclusive, cb.node});
  }
  // A section that is absent is implied by what the callbacks name (default sizes).
  auto imply = [&m](auto& section, auto names_of) {
    if (!section.empty()) return;
    for (const auto& cb : m.callbacks)
      for (const auto& name : names_of(cb))
        if (!contains(section, name)) section.push_back({name});
  };
  imply(m.topics, [](const Callback& cb) {
    std::vector<std::string> used = cb.publishes;
    if (!cb.topic.empty()) used.push_back(cb.topic);
    return used;
  });
  check_unique(m.topics, "topics", "topic", d);
  imply(m.services, [](const Callback& cb) {
    std::vector<std::string> used = cb.calls;
    if (!cb.service.empty()) used.push_back(cb.service);
    return used;
  });
  check_unique(m.services, "services", "service", d);
  for (std::size_t i = 0; i < m.services.size(); ++i) {
    const std::string q = at("services", i);
    if (m.services[i].request_size <= 0 || m.services[i].request_size > limits::kMaxMessageBytes)
      d.error(q + ".request_size", "request_size must be 1 B .. 1 GiB");
    if (m.services[i].response_size <= 0 || m.services[i].response_size > limits::kMaxMessageBytes)
      d.error(q + ".response_size", "response_size must be 1 B .. 1 GiB");
  }
}

// Callback i's own fields: times, queue depth, priority, node and group.
void check_callback_fields(const Model& m, std::size_t i, const std::string& p, const std::string& who, Diagnostics& d) {
  const Callback& cb = m.callbacks[i];
  if (cb.wcet <= 0) d.error(p + ".wcet", "wcet must be positive");
  check_duration(cb.wcet, p + ".wcet", "wcet", d);
  check_period(cb.period, p + ".period", "the period", d);
  check_duration(cb.offset, p + ".offset", "offset", d);
  check_duration(cb.jitter, p + ".jitter", "jitter", d);
  check_range(cb.queue_depth, 1, limits::kMaxQueueDepth, p + ".queue_depth", "queue_depth", d);
  if (cb.priority) check_range(*cb.priority, -limits::kMaxPriority, limits::kMaxPriority, p + ".priority", "priority", d);
  if (cb.bcet && *cb.bcet <= 0) d.error(p + ".bcet", "bcet must be positive");
  if (cb.bcet && *cb.bcet > cb.wcet)
    d.error(p + ".bcet", "bcet " + format_duration(*cb.bcet) + " exceeds wcet " + format_duration(cb.wcet));
  if (cb.node.empty()) d.error(p, "missing required field 'node' of a callback");
  else if (!contains(m.nodes, cb.node)) d.error(p + ".node", "unknown node " + quote(cb.node));
  if (!cb.group.empty()) {
    auto g = std::find_if(m.groups.begin(), m.groups.end(), [&](const CallbackGroup& x) { return x.name == cb.group; });
    if (g == m.groups.end()) d.error(p + ".group", "unknown callback group " + quote(cb.group));
    else if (g->node != cb.node)
      d.error(p + ".group", "callback group " + quote(cb.group) + " belongs to node " + quote(g->node) + ", not to " +
                                quote(cb.node) + " (ROS 2 groups are per node)");
  }
}

// What callback i's kind needs: a timer its period, a subscription its topic, a service or
// client its service.
void check_callback_kind(const Model& m, std::size_t i, const std::string& p, const std::string& who, Diagnostics& d) {
  const Callback& cb = m.callbacks[i];
  const bool timer = cb.kind == CallbackKind::Timer;
  if (timer) {
    if (cb.period <= 0) d.error(p + ".period", who + " is a timer and needs a positive 'period'");
    if (!cb.topic.empty()) d.error(p + ".topic", "a timer takes no topic");
    if (cb.period > 0 && cb.jitter >= cb.period) d.error(p + ".jitter", "jitter must be smaller than the period");
    if (cb.period > 0 && cb.offset >= cb.period) d.error(p + ".offset", "offset must be smaller than the period");
    if (cb.exact_period && (cb.exact_period->den < 1 || cb.exact_period->whole() != cb.period))
      d.error(p + ".period", "the exact period " + std::to_string(cb.exact_period->num) + "/" +
                                 std::to_string(cb.exact_period->den) + " ns does not round down to the period " +
                                 std::to_string(cb.period) + " ns");
  } else {
    if (cb.period != 0 || cb.offset != 0 || cb.jitter != 0 || cb.phase != TimerPhase::Free)
      d.error(p + (cb.period ? ".period" : cb.offset ? ".offset" : cb.jitter ? ".jitter" : ".phase"),
              "only timers have period, offset, jitter and phase (" + who + " is a " + to_string(cb.kind) + ")");
    if (cb.period_tolerance)
      d.error(p + ".period_tolerance", "only timers have a period_tolerance (" + who + " is a " +
                                           to_string(cb.kind) + ")");
    const bool service_kind = cb.kind == CallbackKind::Service || cb.kind == CallbackKind::Client;
    if (service_kind) {
      if (!cb.topic.empty())
        d.error(p + ".topic", "a " + std::string(to_string(cb.kind)) + " callback names its service with "
                              "'service:', not 'topic:'");
      if (cb.service.empty())
        d.error(p, who + " is a " + std::string(to_string(cb.kind)) + " and needs a 'service'");
      else if (!contains(m.services, cb.service))
        d.error(p + ".service", "unknown service " + quote(cb.service));
    } else if (cb.topic.empty()) {
      d.error(p, who + " is a " + std::string(to_string(cb.kind)) + " and needs a 'topic'");
    } else if (!contains(m.topics, cb.topic)) {
      d.error(p + ".topic", "unknown topic " + quote(cb.topic));
    }
  }
  if (timer && cb.period_tolerance && cb.period > 0 && *cb.period_tolerance >= cb.period)
    d.error(p + ".period_tolerance", "period_tolerance must be smaller than the period");
}

// Callback i's services: the one it serves or takes responses of, and the ones it calls.
void check_callback_services(const Model& m, std::size_t i, const std::string& p, const std::string& who, Diagnostics& d) {
  const Callback& cb = m.callbacks[i];
  if (!cb.service.empty() && cb.kind != CallbackKind::Service && cb.kind != CallbackKind::Client)
    d.error(p + ".service", "only service and client callbacks name a service (" + who + " is a " +
                                to_string(cb.kind) + "; a callback that sends requests lists them in 'calls')");
  for (std::size_t k = 0; k < cb.calls.size(); ++k) {
    const std::string& s = cb.calls[k];
    if (!contains(m.services, s)) {
      d.error(at(p + ".calls", k), "unknown service " + quote(s));
    } else if (std::none_of(m.callbacks.begin(), m.callbacks.end(), [&](const Callback& x) {
                 return x.kind == CallbackKind::Service && x.service == s;
               })) {
      d.error(at(p + ".calls", k), who + " calls service " + quote(s) +
                                       " but no callback serves it (add a callback of kind 'service' with "
                                       "'service: " + s + "')");
    }
  }
  if (cb.kind == CallbackKind::Service && !cb.service.empty()) {
    for (std::size_t j = 0; j < i; ++j)
      if (m.callbacks[j].kind == CallbackKind::Service && m.callbacks[j].service == cb.service) {
        d.error(p + ".service", "service " + quote(cb.service) + " is already served by " +
                                    quote(m.callbacks[j].name) + " (a service has one server)");
        break;
      }
  }
  if (cb.kind == CallbackKind::Client && !cb.service.empty()) {
    for (std::size_t j = 0; j < i; ++j)
      if (m.callbacks[j].kind == CallbackKind::Client && m.callbacks[j].service == cb.service &&
          m.callbacks[j].node == cb.node) {
        d.error(p + ".service", "node " + quote(cb.node) + " already has the client callback " +
                                    quote(m.callbacks[j].name) + " of service " + quote(cb.service) +
                                    " (the responses to a node's requests go to one client callback)");
        break;
      }
    if (std::none_of(m.callbacks.begin(), m.callbacks.end(), [&](const Callback& x) {
          return x.node == cb.node && std::find(x.calls.begin(), x.calls.end(), cb.service) != x.calls.end();
        }))
      d.error(p + ".service", who + " takes the responses of " + quote(cb.service) + ", but no callback of node " +
                                  quote(cb.node) + " calls it (add 'calls: [" + cb.service +
                                  "]' to the callback that sends the request)");
  }
}

// Callback i's links: the topics it publishes, the inputs it fuses, its thread affinity.
void check_callback_links(const Model& m, std::size_t i, const std::string& p, const std::string& who, Diagnostics& d) {
  const Callback& cb = m.callbacks[i];
  for (std::size_t k = 0; k < cb.publishes.size(); ++k)
    if (!contains(m.topics, cb.publishes[k]))
      d.error(at(p + ".publishes", k), "unknown topic " + quote(cb.publishes[k]));
  if (!cb.fuses.empty() && cb.kind != CallbackKind::FusionTrigger)
    d.error(p + ".fuses", "only a fusion_trigger callback fuses inputs");
  for (std::size_t k = 0; k < cb.fuses.size(); ++k) {
    auto in = std::find_if(m.callbacks.begin(), m.callbacks.end(), [&](const Callback& x) { return x.name == cb.fuses[k]; });
    if (in == m.callbacks.end()) d.error(at(p + ".fuses", k), "unknown callback " + quote(cb.fuses[k]));
    else if (in->kind != CallbackKind::FusionInput)
      d.error(at(p + ".fuses", k), quote(cb.fuses[k]) + " is not a fusion_input callback");
    else if (in->node != cb.node)
      d.error(at(p + ".fuses", k), "fusion input " + quote(cb.fuses[k]) + " is in another node");
  }
  if (!cb.affinity.empty() && contains(m.nodes, cb.node)) {
    const Node& node = *std::find_if(m.nodes.begin(), m.nodes.end(), [&](const Node& n) { return n.name == cb.node; });
    auto e = std::find_if(m.executors.begin(), m.executors.end(), [&](const Executor& x) { return x.name == node.executor; });
    for (std::size_t k = 0; e != m.executors.end() && k < cb.affinity.size(); ++k) {
      const auto& a = cb.affinity[k];
      if (!contains(e->threads, a) && !contains(e->thread_classes, a))
        d.error(at(p + ".affinity", k), "no thread or thread class " + quote(a) + " in executor " + quote(e->name));
    }
  }
}

void check_callbacks(Model& m, Diagnostics& d) {
  check_unique(m.callbacks, "callbacks", "callback", d);
  for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
    const std::string p = at("callbacks", i);
    const std::string who = "callback " + quote(m.callbacks[i].name);
    check_callback_fields(m, i, p, who, d);
    check_callback_kind(m, i, p, who, d);
    check_callback_services(m, i, p, who, d);
    check_callback_links(m, i, p, who, d);
  }
}

// ---- shared accelerators (PiCAS Sec. IV; model/accelerator.hpp) ------------------------------
// A host's accelerators: unique names; the server thread (priority, cores, overhead) only in
// server mode, where it needs a SCHED_FIFO priority. A callback's segments: an accelerator of
// its executor's host, `after` within its WCET and non-decreasing, a kernel, best cases within
// the worst; timers and plain subscriptions only (a fusion callback's caching and a split
// callback's pieces do not mix), and no callback named like a piece of a split one.
void check_accelerators(const Model& m, Diagnostics& d) {
  for (std::size_t h = 0; h < m.hosts.size(); ++h) {
    const Host& host = m.hosts[h];
    const std::string hp = at("hosts", h) + ".accelerators";
    check_unique(host.accelerators, hp, "accelerator", d);
    for (std::size_t i = 0; i < host.accelerators.size(); ++i) {
      const Accelerator& a = host.accelerators[i];
      const std::string q = at(hp, i);
      check_duration(a.server_overhead, q + ".overhead", "overhead", d);
      if (a.device != AcceleratorDevice::Cuda && (a.cuda_device != 0 || !a.stream_priorities.empty()))
        d.error(q + (a.cuda_device != 0 ? ".cuda_device" : ".stream_priorities"),
                "only a 'device: cuda' accelerator has a CUDA device and stream priorities; " + quote(a.name) +
                    " is emulated");
      for (std::size_t k = 1; k < a.stream_priorities.size(); ++k)
        if (a.stream_priorities[k] >= a.stream_priorities[k - 1])
          d.error(at(q + ".stream_priorities", k), "stream_priorities must be strictly descending (the most important "
                                                   "chains' threshold first)");
      if (a.access == AcceleratorAccess::Direct) {
        if (a.block_preemption)
          d.error(q + ".preemption", "only a server-mode accelerator is preempted by priority; " + quote(a.name) +
                                         " has access: direct (first come, first served)");
        if (a.server_priority || !a.server_cores.empty() || a.server_overhead)
          d.error(q + (a.server_priority ? ".priority" : !a.server_cores.empty() ? ".cores" : ".overhead"),
                  "only a server-mode accelerator has a server thread (priority, cores, overhead); " + quote(a.name) +
                      " has access: direct");
        continue;
      }
      if (!a.server_priority) d.error(q, "accelerator " + quote(a.name) + " has access: server and needs the server thread's SCHED_FIFO 'priority' (1..99)");
      else if (*a.server_priority < 1 || *a.server_priority > 99) d.error(q + ".priority", "SCHED_FIFO priority must be 1..99");
      for (std::size_t k = 0; k < a.server_cores.size(); ++k)
        if (a.server_cores[k] >= host.cores)
          d.error(at(q + ".cores", k), "core " + std::to_string(a.server_cores[k]) + " does not exist on host " +
                                           quote(host.name) + " (" + std::to_string(host.cores) + " cores)");
    }
  }
  std::set<std::string> names;
  for (const auto& cb : m.callbacks) names.insert(cb.name);
  for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
    const Callback& cb = m.callbacks[i];
    if (cb.accelerator_segments.empty()) continue;
    const std::string p = at("callbacks", i) + ".accelerator_segments";
    if (cb.kind != CallbackKind::Timer && cb.kind != CallbackKind::Subscription)
      d.error(p, "only timers and subscriptions may use an accelerator (callback " + quote(cb.name) + " is a " +
                     to_string(cb.kind) + ")");
    const Host* host = nullptr;
    auto node = std::find_if(m.nodes.begin(), m.nodes.end(), [&](const Node& n) { return n.name == cb.node; });
    if (node != m.nodes.end()) {
      auto e = std::find_if(m.executors.begin(), m.executors.end(), [&](const Executor& x) { return x.name == node->executor; });
      if (e != m.executors.end())
        for (const auto& h : m.hosts)
          if (h.name == e->host) host = &h;
    }
    Duration prev = 0;
    int server_segments = 0;
    for (std::size_t k = 0; k < cb.accelerator_segments.size(); ++k) {
      const AcceleratorSegment& s = cb.accelerator_segments[k];
      const std::string q = at(p, k);
      const Accelerator* a = host ? host->accelerator(s.accelerator) : nullptr;
      if (host && !a)
        d.error(q + ".accelerator", "no accelerator " + quote(s.accelerator) + " on host " + quote(host->name) +
                                        " (where callback " + quote(cb.name) + " runs)");
      if (a && a->access == AcceleratorAccess::Server) ++server_segments;
      if (s.kernel <= 0) d.error(q + ".kernel", "kernel must be positive");
      for (auto [v, f] : {std::pair{s.after, "after"}, {s.copy_in, "copy_in"}, {s.kernel, "kernel"}, {s.copy_out, "copy_out"}})
        check_duration(v, q + "." + f, f, d);
      if (s.after > cb.wcet)
        d.error(q + ".after", "after " + format_duration(s.after) + " exceeds the callback's wcet " + format_duration(cb.wcet));
      if (s.after < prev)
        d.error(q + ".after", "segments must be listed in the order of 'after' (" + format_duration(s.after) +
                                  " after " + format_duration(prev) + ")");
      prev = std::max(prev, s.after);
      auto best = [&](const std::optional<Duration>& b, Duration w, const char* f) {
        if (b && *b > w) d.error(q + "." + f, std::string(f) + " " + format_duration(*b) + " exceeds its worst case " + format_duration(w));
      };
      best(s.copy_in_bcet, s.copy_in, "copy_in_bcet");
      best(s.kernel_bcet, s.kernel, "kernel_bcet");
      best(s.copy_out_bcet, s.copy_out, "copy_out_bcet");
      if (s.kernel_bcet && *s.kernel_bcet <= 0) d.error(q + ".kernel_bcet", "kernel_bcet must be positive");
      if (s.block && (*s.block <= 0 || *s.block > s.kernel))
        d.error(q + ".block", "block must be positive and at most the kernel (" + format_duration(s.kernel) + ")");
      else if (s.block && a && !a->block_preemption)
        d.error(q + ".block", "a block duration needs an accelerator with preemption: block (" + quote(a->name) +
                                  " has preemption: request)");
    }
    // A callback with server-mode segments runs as pieces "<name>#1".. (model/accelerator.hpp).
    for (int k = 1; k <= server_segments; ++k)
      if (names.count(cb.name + "#" + std::to_string(k)))
        d.error(p, "callback " + quote(cb.name + "#" + std::to_string(k)) + " has the name of the continuation of " +
                       quote(cb.name) + " after its server-mode segment " + std::to_string(k) + "; rename it");
  }
  for (const auto& set : implicit_fusion_sets(m))
    for (std::size_t c : set)
      if (!m.callbacks[c].accelerator_segments.empty())
        d.error(at("callbacks", c) + ".accelerator_segments",
                "callback " + quote(m.callbacks[c].name) + " is a member of an implicit fusion set (subscriptions of one node "
                "that publish the same topics); such a callback may not use an accelerator");
}

// Kahn's topological order of a chain graph, ties by first appearance; false on a cycle.
bool topological(const std::vector<std::string>& order, const std::vector<Hop>& hops, std::vector<std::string>& out) {
  std::map<std::string, int> indeg;
  for (const auto& n : order) indeg[n] = 0;
  for (const auto& h : hops) indeg[h.to]++;
  std::vector<std::string> ready;
  out.clear();
  std::set<std::string> done;
  while (out.size() < order.size()) {
    bool progressed = false;
    for (const auto& n : order) {
      if (done.count(n) || indeg[n] != 0) continue;
      out.push_back(n);
      done.insert(n);
      for (const auto& h : hops)
        if (h.from == n) indeg[h.to]--;
      progressed = true;
      break;
    }
    if (!progressed) return false;
  }
  return true;
}

// A hop into a service callback is a request: the caller `a` calls b's service. A hop into a
// client callback is a response: `a` serves b's service and the callback before `a` on the
// same path is in b's node and calls the service (the response goes back to the caller's
// node). Fills the hop's kind, service name and size; returns why it does not connect.
std::optional<std::string> service_hop(const Model& m, const Chain& c, Hop& h, const Callback& a, const Callback& b,
                                       std::map<std::string, const Callback*>& by_name) {
  auto svc = std::find_if(m.services.begin(), m.services.end(), [&](const Service& s) { return s.name == b.service; });
  if (b.kind == CallbackKind::Service) {
    if (std::find(a.calls.begin(), a.calls.end(), b.service) == a.calls.end())
      return quote(h.to) + " serves " + quote(b.service) + " but " + quote(h.from) + " does not call it (add 'calls: [" +
             b.service + "]' to " + quote(h.from) + ")";
    h.kind = HopKind::Request;
    h.topic = b.service;
    h.message_size = svc != m.services.end() ? svc->request_size : 0;
    return std::nullopt;
  }
  if (a.kind != CallbackKind::Service || a.service != b.service)
    return quote(h.to) + " takes the responses of " + quote(b.service) + ", which " + quote(h.from) +
           " does not serve (a client callback follows the service's server in a chain)";
  bool from_caller = false;
  for (const Hop& in : c.hops) {
    if (in.to != h.from || !by_name.count(in.from)) continue;
    const Callback& caller = *by_name[in.from];
    if (caller.node == b.node && std::find(caller.calls.begin(), caller.calls.end(), b.service) != caller.calls.end())
      from_caller = true;
  }
  if (!from_caller)
    return "the response of " + quote(b.service) + " goes back to the node that sent the request, and no callback "
           "before " + quote(h.from) + " in this chain is a caller in node " + quote(b.node);
  h.kind = HopKind::Response;
  h.topic = b.service;
  h.message_size = svc != m.services.end() ? svc->response_size : 0;
  return std::nullopt;
}

void check_chains(Model& m, Diagnostics& d) {
  check_unique(m.chains, "chains", "chain", d);
  std::map<std::string, const Callback*> by_name;
  for (const auto& cb : m.callbacks) by_name.emplace(cb.name, &cb);
  for (std::size_t i = 0; i < m.chains.size(); ++i) {
    Chain& c = m.chains[i];
    std::string p = at("chains", i);
    std::string who = "chain " + quote(c.name);
    const bool linear_form = c.hops.empty();
    std::string list = p + (linear_form ? ".callbacks" : ".paths");
    bool known = !c.callbacks.empty();
    for (std::size_t k = 0; k < c.callbacks.size(); ++k) {
      if (!by_name.count(c.callbacks[k])) {
        d.error(linear_form ? at(list, k) : list, "unknown callback " + quote(c.callbacks[k]) + " in " + who);
        known = false;
      }
    }
    if (linear_form) {
      std::set<std::string> seen;
      for (std::size_t k = 0; k < c.callbacks.size(); ++k) {
        if (!seen.insert(c.callbacks[k]).second) {
          d.error(at(list, k), who + " has a cycle: " + quote(c.callbacks[k]) + " appears twice");
          known = false;
        }
      }
      if (known)
        for (std::size_t k = 1; k < c.callbacks.size(); ++k) c.hops.push_back(Hop{c.callbacks[k - 1], c.callbacks[k]});
    } else if (known) {
      std::vector<std::string> order;
      if (!topological(c.callbacks, c.hops, order)) {
        d.error(list, who + " has a cycle in its paths");
        known = false;
      } else {
        std::set<std::string> sources;
        for (const auto& n : order)
          if (std::none_of(c.hops.begin(), c.hops.end(), [&](const Hop& h) { return h.to == n; })) sources.insert(n);
        if (sources.size() != 1) {
          d.error(list, who + " must have one first callback; its paths start at " + std::to_string(sources.size()) +
                            " different callbacks");
          known = false;
        }
        c.callbacks = order;
      }
    }
    // Derive each hop's topic, size and communication kind; report hops that do not connect.
    for (std::size_t k = 0; known && k < c.hops.size(); ++k) {
      Hop& h = c.hops[k];
      const Callback& a = *by_name[h.from];
      const Callback& b = *by_name[h.to];
      std::string where = linear_form ? at(list, k + 1) : list;
      if (b.kind == CallbackKind::Service || b.kind == CallbackKind::Client) {
        if (auto why = service_hop(m, c, h, a, b, by_name)) {
          d.error(where, who + ": hop " + quote(h.from) + " -> " + quote(h.to) + " does not connect: " + *why);
          continue;
        }
        continue;
      }
      auto t = std::find(a.publishes.begin(), a.publishes.end(), b.topic);
      if (b.topic.empty() || t == a.publishes.end()) {
        std::string pubs;
        for (const auto& x : a.publishes) pubs += (pubs.empty() ? "" : ", ") + x;
        d.error(where, who + ": hop " + quote(h.from) + " -> " + quote(h.to) + " does not connect: " + quote(h.from) +
                           " publishes [" + pubs + "] but " + quote(h.to) +
                           (b.topic.empty() ? std::string(" takes no topic") : " takes " + quote(b.topic)));
        continue;
      }
      h.topic = b.topic;
      auto topic = std::find_if(m.topics.begin(), m.topics.end(), [&](const Topic& x) { return x.name == h.topic; });
      h.message_size = topic != m.topics.end() ? topic->size : 0;
    }
    if (!known) continue;
    const Callback& first = *by_name[c.callbacks.front()];
    if (first.kind == CallbackKind::Timer) {
      if (c.period == 0) c.period = first.period;
      else if (first.period > 0 && c.period != first.period)
        d.error(p + ".period", who + " has period " + format_duration(c.period) + " but its timer " + quote(first.name) +
                                   " fires every " + format_duration(first.period));
    } else if (c.period == 0) {
      d.error(p, who + " starts with the " + std::string(to_string(first.kind)) + " " + quote(first.name) +
                     " and needs a 'period' (minimum inter-arrival time)");
    }
    if (c.deadline == 0) c.deadline = c.period;
    check_period(c.period, p + ".period", "the period", d);
    check_duration(c.deadline, p + ".deadline", "the deadline", d);
    if (c.priority) check_range(*c.priority, -limits::kMaxPriority, limits::kMaxPriority, p + ".priority", "priority", d);
    check_range(c.criticality, 0, limits::kMaxCriticality, p + ".criticality", "criticality", d);
    if (m.constrained_deadlines && c.criticality_class == CriticalityClass::RealTime && c.period > 0 &&
        c.deadline > c.period)
      d.error(p + ".deadline", who + " has deadline " + format_duration(c.deadline) + " > period " +
                                   format_duration(c.period) +
                                   " but the model requires constrained deadlines (set 'deadlines: arbitrary' to allow)");
  }
}

// Communication kinds need the placement, which needs a clean node/executor map: derived only
// when validation found nothing, and then every lookup succeeds. A model built in code that
// still lacks a piece is reported, never an exception other than ModelError.
void derive_comm(Model& m, Diagnostics& d) {
  m.reindex();
  auto placed = [&](const std::string& cb) {
    auto c = std::find_if(m.callbacks.begin(), m.callbacks.end(), [&](const Callback& x) { return x.name == cb; });
    if (c == m.callbacks.end()) return false;
    auto n = std::find_if(m.nodes.begin(), m.nodes.end(), [&](const Node& x) { return x.name == c->node; });
    return n != m.nodes.end() && contains(m.executors, n->executor);
  };
  for (std::size_t i = 0; i < m.chains.size(); ++i)
    for (auto& h : m.chains[i].hops) {
      if (!placed(h.from) || !placed(h.to)) {
        d.error(at("chains", i), "hop " + quote(h.from) + " -> " + quote(h.to) + " has a callback without a node on an executor");
        continue;
      }
      h.comm = m.placement_comm(m.callback(h.from), m.callback(h.to));
    }
}

// The name limits (text.hpp) on every name of a model built in code; a loaded file met them in
// the parser already, which reported them with their place.
void check_names(const Model& m, Diagnostics& d) {
  auto one = [&](const std::string& name, const std::string& field, bool may_be_empty = false) {
    if (may_be_empty && name.empty()) return;
    if (auto why = name_problem(name)) d.error(field, *why);
  };
  auto list = [&](const std::vector<std::string>& names, const std::string& field) {
    for (std::size_t k = 0; k < names.size(); ++k) one(names[k], at(field, k));
  };
  one(m.name, "name", true);
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    one(m.hosts[i].name, at("hosts", i) + ".name");
    for (std::size_t a = 0; a < m.hosts[i].accelerators.size(); ++a)
      one(m.hosts[i].accelerators[a].name, at(at("hosts", i) + ".accelerators", a) + ".name");
  }
  for (std::size_t i = 0; i < m.executors.size(); ++i) {
    const Executor& e = m.executors[i];
    const std::string p = at("executors", i);
    one(e.name, p + ".name");
    one(e.host, p + ".host", true);
    one(e.process, p + ".process", true);
    for (std::size_t t = 0; t < e.threads.size(); ++t)
      if (e.threads[t].thread_class.empty()) one(e.threads[t].name, at(p + ".threads", t) + ".name");
    for (std::size_t t = 0; t < e.thread_classes.size(); ++t)
      one(e.thread_classes[t].name, at(p + ".thread_classes", t) + ".name");
  }
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    one(m.nodes[i].name, at("nodes", i) + ".name");
    one(m.nodes[i].executor, at("nodes", i) + ".executor", true);
  }
  for (std::size_t i = 0; i < m.groups.size(); ++i) {
    one(m.groups[i].name, at("callback_groups", i) + ".name");
    one(m.groups[i].node, at("callback_groups", i) + ".node", true);
  }
  for (std::size_t i = 0; i < m.topics.size(); ++i) one(m.topics[i].name, at("topics", i) + ".name");
  for (std::size_t i = 0; i < m.services.size(); ++i) one(m.services[i].name, at("services", i) + ".name");
  for (std::size_t i = 0; i < m.callbacks.size(); ++i) {
    const Callback& cb = m.callbacks[i];
    const std::string p = at("callbacks", i);
    one(cb.name, p + ".name");
    one(cb.node, p + ".node", true);
    one(cb.group, p + ".group", true);
    one(cb.topic, p + ".topic", true);
    one(cb.service, p + ".service", true);
    list(cb.calls, p + ".calls");
    list(cb.affinity, p + ".affinity");
    list(cb.fuses, p + ".fuses");
    list(cb.publishes, p + ".publishes");
    for (std::size_t k = 0; k < cb.accelerator_segments.size(); ++k)
      one(cb.accelerator_segments[k].accelerator, at(p + ".accelerator_segments", k) + ".accelerator");
  }
  for (std::size_t i = 0; i < m.chains.size(); ++i) {
    one(m.chains[i].name, at("chains", i) + ".name");
    list(m.chains[i].callbacks, at("chains", i) + ".callbacks");
  }
}

// Services in the message abstraction that every analysis and the simulator read: a request is
// a message on a derived topic "<service>#request" that the caller publishes when it completes
// and the server takes; the response is a message on "<service>#response@<node>" that the
// server publishes and the client callback of the caller's node takes (the kinds stay service
// and client, so the default executor's order is kept). Exact when every caller of a service is
// in one node; with callers in several nodes the server publishes every caller node's response
// topic, so each caller's client is released by every request (docs/model.md: an
// over-approximation). The derived topics carry `Topic::service`; the writer leaves them out.
void lower_services(Model& m) {
  std::set<std::string> names;
  for (const auto& t : m.topics) names.insert(t.name);
  auto fresh = [&](std::string base) {
    while (names.count(base)) base += "#";
    names.insert(base);
    return base;
  };
  for (const Service& s : m.services) {
    auto server = m.server_of(s.name);
    if (!server) continue;
    const std::string req = fresh(s.name + "#request");
    m.topics.push_back(Topic{req, s.request_size, s.name});
    m.callbacks[*server].topic = req;
    std::vector<std::string> caller_nodes;
    for (auto& cb : m.callbacks) {
      if (std::find(cb.calls.begin(), cb.calls.end(), s.name) == cb.calls.end()) continue;
      if (std::find(cb.publishes.begin(), cb.publishes.end(), req) == cb.publishes.end()) cb.publishes.push_back(req);
      if (std::find(caller_nodes.begin(), caller_nodes.end(), cb.node) == caller_nodes.end())
        caller_nodes.push_back(cb.node);
    }
    for (const auto& node : caller_nodes) {
      auto client = m.client_of(node, s.name);
      if (!client) continue;  // the response is not modelled: the node has no client callback
      const std::string resp = fresh(s.name + "#response@" + node);
      m.topics.push_back(Topic{resp, s.response_size, s.name});
      m.callbacks[*client].topic = resp;
      m.callbacks[*server].publishes.push_back(resp);
    }
  }
  m.reindex();
}

// Undo lower_services (a validated model validated again, e.g. after an edit).
void unlower_services(Model& m) {
  std::set<std::string> derived;
  for (const auto& t : m.topics)
    if (!t.service.empty()) derived.insert(t.name);
  if (derived.empty()) return;
  m.topics.erase(std::remove_if(m.topics.begin(), m.topics.end(), [](const Topic& t) { return !t.service.empty(); }),
                 m.topics.end());
  for (auto& cb : m.callbacks) {
    cb.publishes.erase(std::remove_if(cb.publishes.begin(), cb.publishes.end(),
                                      [&](const std::string& t) { return derived.count(t) > 0; }),
                       cb.publishes.end());
    if (derived.count(cb.topic)) cb.topic.clear();
  }
}

}  // namespace

void validate_model(Model& m, Diagnostics& d, bool derive) {
  // Validation may run on an already validated model (e.g. after an edit): derived hops are
  // recomputed from the chain's structure, so they are cleared for linear chains; the derived
  // topics of services are made again.
  unlower_services(m);
  for (auto& c : m.chains)
    if (c.is_linear()) c.hops.clear();
  check_names(m, d);
  fill_infrastructure(m, d);
  fill_nodes_groups_topics(m, d);
  check_callbacks(m, d);
  check_accelerators(m, d);
  check_chains(m, d);
  if (!m.communication.measurements.empty())
    for (std::size_t i = 0; i < m.communication.measurements.size(); ++i)
      if (m.communication.measurements[i].size <= 0 || m.communication.measurements[i].latency <= 0)
        d.error(at("communication.measurements", i), "a measurement needs a positive size and latency");
  if (derive && d.empty()) {
    derive_comm(m, d);
    if (d.empty()) lower_services(m);
  }
}

}  // namespace chainrt::detail

namespace chainrt {

// Diagnostics and validation of a model built in code: no YAML needed (a build without yaml-cpp,
// CHAINRT_ACCELERATOR_ONLY, has these and not the parser).
std::string Diagnostic::str() const {
  std::ostringstream os;
  os << file;
  if (line > 0) os << ':' << line << ':' << column;
  os << ": ";
  if (!field.empty()) os << field << ": ";
  os << message;
  return os.str();
}

namespace {
std::string join_diags(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += (s.empty() ? "" : "\n") + x.str();
  return s;
}
}  // namespace

ModelError::ModelError(std::vector<Diagnostic> diags)
    : std::runtime_error(join_diags(diags)), diags_(std::move(diags)) {}

void validate(Model& model, const std::string& file_name) {
  detail::Diagnostics diags(file_name, nullptr);
  detail::validate_model(model, diags);
  if (!diags.empty()) throw ModelError(diags.list());
}

}  // namespace chainrt
