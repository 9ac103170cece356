// chainrt model facts (facts.hpp).
#include "chainrt/model/facts.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

namespace chainrt {

std::optional<int> effective_priority(const Model& model, std::size_t callback) {
  const Callback& cb = model.callbacks[callback];
  if (cb.priority) return cb.priority;
  std::optional<int> best;
  for (const Chain& ch : model.chains) {
    if (!ch.priority) continue;
    for (std::size_t pos = 0; pos < ch.callbacks.size(); ++pos) {
      if (ch.callbacks[pos] != cb.name) continue;
      const int p = *ch.priority * 1024 + static_cast<int>(pos);
      if (!best || p > *best) best = p;
    }
  }
  return best;
}

std::optional<int> thread_fifo_priority(const Executor& executor, const Thread& thread) {
  if (thread.reservation) return std::nullopt;
  if (thread.fifo_priority) return thread.fifo_priority;
  if (executor.priority && *executor.priority > 0) return executor.priority;
  return std::nullopt;
}

std::uint64_t thread_mask(const Executor& executor, const Callback& callback) {
  const std::size_t n = std::min<std::size_t>(executor.threads.size(), 64);
  const std::uint64_t all = n >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1);
  if (callback.affinity.empty()) return all;
  std::uint64_t mask = 0;
  for (std::size_t t = 0; t < n; ++t)
    for (const auto& a : callback.affinity)
      if (executor.threads[t].name == a || executor.threads[t].thread_class == a) mask |= std::uint64_t{1} << t;
  return mask;
}

int simulated_core(const Model& model, std::size_t executor, std::size_t thread) {
  const Executor& mine = model.executors[executor];
  int cores = 1;
  for (const auto& h : model.hosts)
    if (h.name == mine.host) cores = std::max(1, h.cores);
  const Thread& t = mine.threads[thread];
  if (!t.cores.empty()) return t.cores.front() % cores;
  int rr = 0;
  for (std::size_t x = 0; x < model.executors.size(); ++x) {
    if (model.executors[x].host != mine.host) continue;
    for (std::size_t u = 0; u < model.executors[x].threads.size(); ++u) {
      if (x == executor && u == thread) return rr % cores;
      if (model.executors[x].threads[u].cores.empty()) ++rr;
    }
  }
  return 0;
}

bool unpinned_threads_share_cores(const Model& model) {
  for (const Host& h : model.hosts) {
    std::size_t threads = 0;
    bool pinned = false;
    for (const Executor& e : model.executors)
      if (e.host == h.name)
        for (const Thread& t : e.threads) {
          ++threads;
          pinned = pinned || !t.cores.empty();
        }
    if (h.cores > 1 && threads > static_cast<std::size_t>(h.cores) && !pinned) return true;
  }
  return false;
}

std::vector<std::vector<std::size_t>> implicit_fusion_sets(const Model& model) {
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::size_t>> by_output;
  for (std::size_t c = 0; c < model.callbacks.size(); ++c) {
    const Callback& cb = model.callbacks[c];
    if (cb.kind != CallbackKind::Subscription) continue;
    // a service request (a derived topic) is not an output that fuses inputs
    std::vector<std::string> outputs;
    for (const auto& t : cb.publishes)
      if (const Topic* tp = model.topic(t); tp == nullptr || tp->service.empty()) outputs.push_back(t);
    if (!outputs.empty()) by_output[{cb.node, outputs}].push_back(c);
  }
  std::vector<std::vector<std::size_t>> sets;
  for (auto& [key, members] : by_output)
    if (members.size() >= 2) sets.push_back(std::move(members));
  return sets;
}

namespace {

// Each node's executor's dispatch_overhead (nodes without a known executor: none).
std::unordered_map<std::string, Duration> overhead_by_node(const Model& model) {
  std::unordered_map<std::string, Duration> by_executor, out;
  for (const Executor& e : model.executors) by_executor.emplace(e.name, e.dispatch_overhead);
  for (const Node& n : model.nodes)
    if (auto it = by_executor.find(n.executor); it != by_executor.end()) out.emplace(n.name, it->second);
  return out;
}

// The rule of charged_wcet.
Duration charged(const Callback& callback, const std::unordered_map<std::string, Duration>& by_node) {
  const auto it = by_node.find(callback.node);
  return callback.wcet + (it == by_node.end() ? 0 : it->second);
}

}  // namespace

Duration charged_wcet(const Model& model, const Callback& callback) {
  return charged(callback, overhead_by_node(model));
}

const Model& charge_dispatch_overhead(const Model& model, Model& storage) {
  if (std::none_of(model.executors.begin(), model.executors.end(),
                   [](const Executor& e) { return e.dispatch_overhead != 0; }))
    return model;
  const auto by_node = overhead_by_node(model);
  storage = model;
  for (Callback& cb : storage.callbacks) {
    cb.bcet = cb.best_case();
    cb.wcet = charged(cb, by_node);
  }
  for (Executor& e : storage.executors) e.dispatch_overhead = 0;
  return storage;
}

}  // namespace chainrt
