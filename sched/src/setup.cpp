// chainrt sched: model -> ReadyQueue inputs for one executor (registration order = file order
// of the executor's callbacks; LaME thread classes and affinity, Sec. 4.1; PiCAS/LaME callback
// priority rule for callbacks without an explicit priority).
#include "chainrt/sched/setup.hpp"

#include "chainrt/model/facts.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace chainrt::sched {

CallbackId ExecutorSetup::id_of(std::size_t model_callback) const noexcept {
  for (std::size_t i = 0; i < callbacks.size(); ++i)
    if (callbacks[i] == model_callback) return static_cast<CallbackId>(i);
  return kNoCallback;
}

std::vector<bool> ExecutorSetup::rt_threads() const {
  std::vector<bool> rt;
  rt.reserve(threads.size());
  for (const ThreadSpec& t : threads) rt.push_back(t.role == CriticalityClass::RealTime);
  return rt;
}

void wait_set_order(std::vector<CallbackSpec>& specs, std::uint64_t seed) {
  // A seeded Fisher-Yates shuffle (splitmix64): the same seed gives the same order everywhere.
  std::vector<std::uint32_t> pos(specs.size());
  for (std::uint32_t i = 0; i < pos.size(); ++i) pos[i] = i;
  std::uint64_t x = seed;
  auto next = [&x] {
    x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (std::size_t i = pos.size(); i > 1; --i) std::swap(pos[i - 1], pos[next() % i]);
  for (std::size_t i = 0; i < specs.size(); ++i) specs[i].wait_set_position = pos[i] + 1;
}

std::optional<int> effective_priority(const Model& model, std::size_t callback) {
  return chainrt::effective_priority(model, callback);  // one rule: chainrt/model/facts.hpp
}

ExecutorSetup make_setup(const Model& model, std::size_t executor, std::optional<Policy> policy,
                         std::optional<int> threads) {
  const Executor& ex = model.executors.at(executor);
  ExecutorSetup s;
  s.executor = executor;
  s.policy = policy.value_or(ex.policy);

  if (threads) {
    if (*threads < 1 || *threads > static_cast<int>(kMaxThreads))
      throw std::invalid_argument("threads must be 1..64");
    for (int t = 0; t < *threads; ++t) {
      ThreadSpec ts;
      ts.name = ex.name + "/t" + std::to_string(t);
      ts.fifo_priority = thread_fifo_priority(ex, Thread{});  // the executor's default
      s.threads.push_back(std::move(ts));
    }
  } else {
    for (const Thread& th : ex.threads) {
      ThreadSpec ts{th.name, CriticalityClass::RealTime, th.cores, thread_fifo_priority(ex, th), th.reservation,
                    th.thread_class};
      for (const ThreadClass& tc : ex.thread_classes)
        if (tc.name == th.thread_class) ts.role = tc.kind;
      s.threads.push_back(std::move(ts));
    }
    if (s.threads.empty()) {
      ThreadSpec ts;
      ts.name = ex.name + "/t0";
      ts.fifo_priority = thread_fifo_priority(ex, Thread{});
      s.threads.push_back(std::move(ts));
    }
    if (s.threads.size() > kMaxThreads) throw std::invalid_argument("executor " + ex.name + ": more than 64 threads");
  }

  std::unordered_map<std::string, GroupId> gid;
  for (std::size_t c = 0; c < model.callbacks.size(); ++c) {
    const Callback& cb = model.callbacks[c];
    if (model.node(cb.node).executor != ex.name) continue;
    auto [it, fresh] = gid.try_emplace(cb.group, static_cast<GroupId>(s.groups.size()));
    if (fresh) {
      s.group_names.push_back(cb.group);
      s.groups.push_back(GroupSpec{model.group(cb.group).type});
    }
    CallbackSpec spec;
    spec.kind = cb.kind;
    spec.group = it->second;
    spec.priority = chainrt::effective_priority(model, c);
    if (!threads && !cb.affinity.empty()) {
      const AffinityMask mask = thread_mask(ex, cb);  // chainrt/model/facts.hpp
      if (mask == 0)
        throw std::invalid_argument("callback " + cb.name + ": affinity names no thread of executor " + ex.name);
      spec.affinity = mask;
    }
    s.callbacks.push_back(c);
    s.specs.push_back(spec);
  }
  return s;
}

}  // namespace chainrt::sched
