// chainrt sched: the Dispatcher's set-up and reconfiguration (dispatcher.hpp); its dispatch path
// is inline there.
#include "chainrt/sched/dispatcher.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "chainrt/sched/setup.hpp"

namespace chainrt::sched {

namespace {

std::vector<CallbackSpec> ordered_specs(Policy policy, std::vector<CallbackSpec> specs,
                                        std::optional<std::uint64_t> seed) {
  if (seed && policy == Policy::RosDefault) wait_set_order(specs, *seed);
  return specs;
}

std::size_t thread_count_of(const std::vector<bool>& rt_thread) {
  if (rt_thread.empty() || rt_thread.size() > kMaxThreads)
    throw std::invalid_argument("an executor has 1..64 threads");
  return rt_thread.size();
}

}  // namespace

Dispatcher::Dispatcher(Policy policy, std::vector<CallbackSpec> specs, std::vector<GroupSpec> groups,
                       std::vector<bool> rt_thread, std::optional<std::uint64_t> wait_set_seed)
    : q_(policy, ordered_specs(policy, std::move(specs), wait_set_seed), std::move(groups),
         thread_count_of(rt_thread)),
      adm_(q_, admission_rule(policy, rt_thread), rt_thread),
      running_(rt_thread.size(), kNoCallback) {
  kinds_.reserve(q_.callback_count());
  wait_set_.reserve(q_.callback_count());
  for (CallbackId cb = 0; cb < q_.callback_count(); ++cb) {
    kinds_.push_back(q_.spec(cb).kind);
    wait_set_.push_back(q_.spec(cb).wait_set_position);
  }
}

Dispatcher::Dispatcher(const ExecutorSetup& setup, std::optional<std::uint64_t> wait_set_seed)
    : Dispatcher(setup.policy, setup.specs, setup.groups, setup.rt_threads(), wait_set_seed) {}

ReadyQueue Dispatcher::rebuilt(std::vector<CallbackSpec> specs, std::vector<GroupSpec> groups) const {
  if (specs.size() != kinds_.size())
    throw std::invalid_argument("reconfigure: " + std::to_string(specs.size()) + " callback specs for " +
                                std::to_string(kinds_.size()) + " callbacks");
  for (std::size_t cb = 0; cb < specs.size(); ++cb) {
    if (specs[cb].group >= groups.size()) throw std::invalid_argument("reconfigure: a callback names no group");
    specs[cb].kind = kinds_[cb];
    specs[cb].wait_set_position = wait_set_[cb];
  }
  return ReadyQueue(q_.policy(), std::move(specs), std::move(groups), running_.size());
}

void Dispatcher::install(ReadyQueue& fresh) noexcept {
  for (CallbackId cb : running_)  // running instances keep their group busy
    if (cb != kNoCallback) fresh.start(cb);
  for (CallbackId cb = 0; cb < q_.callback_count(); ++cb)
    if (q_.queued(cb)) fresh.push(cb, q_.deadline(cb));
  std::swap(q_, fresh);  // the admission rule keeps pointing at q_ (its waiting work stays)
}

}  // namespace chainrt::sched
