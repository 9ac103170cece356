// chainrt sched: from the model to the inputs of one executor's ReadyQueue — the callbacks in
// registration order with their kind, group, effective priority and affinity mask, the groups,
// and the executor's threads (explicit threads and LaME thread-class threads, LaME Sec. 4.1).
// Shared by the simulator and the runtime so that both number and order callbacks the same.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/sched/admission.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::sched {

struct ThreadSpec {
  std::string name;
  CriticalityClass role = CriticalityClass::RealTime;  // LaME: RT or BE thread
  std::vector<int> cores;                              // pinning; empty = any core of the host
  std::optional<int> fifo_priority;                    // make_setup: thread_fifo_priority (model/facts.hpp)
  std::optional<Reservation> reservation;              // SCHED_DEADLINE budget/period
  std::string thread_class;
};

struct ExecutorSetup {
  std::size_t executor = 0;                // index in model.executors
  Policy policy = Policy::RosDefault;
  std::vector<std::size_t> callbacks;      // CallbackId -> index in model.callbacks (file order)
  std::vector<std::string> group_names;    // GroupId -> group name
  std::vector<CallbackSpec> specs;         // CallbackId -> spec
  std::vector<GroupSpec> groups;           // GroupId -> spec
  std::vector<ThreadSpec> threads;         // ThreadId -> thread (at least one)

  // ThreadId -> a real-time thread (LaME thread classes; every plain thread is real-time).
  std::vector<bool> rt_threads() const;
  // CallbackId of a model callback index, or kNoCallback when it is not on this executor.
  CallbackId id_of(std::size_t model_callback) const noexcept;
};

// The default executor's order among ready callbacks of one kind as rclcpp >= 28 (Jazzy,
// Kilted: rclcpp 29) has it: the executor's wait set is filled from hash maps keyed by the
// entities' handle addresses (executor_entities_collection.hpp), so among ready timers (and
// among ready subscriptions, ...) the order is a fixed but unspecified permutation of the
// registration order, different from process to process (rclcpp#2532, open). This draws one
// such permutation from `seed` into every spec's wait_set_position (the kinds keep their order:
// timers, subscriptions, services, clients). Without it chainrt's ros-default keeps the
// registration order of the published models. Only the ros-default ordering reads it.
void wait_set_order(std::vector<CallbackSpec>& specs, std::uint64_t seed);

// Effective fixed priority of a callback (larger = more important): its own `priority` when
// set; otherwise, when a chain through it has a priority, the PiCAS/LaME rule (LaME Sec. 4.1):
// chain priority first, and within a chain increasing along the path from first to last
// callback: chain_priority * 1024 + position (the highest such value over its chains).
// nullopt when neither is given.
std::optional<int> effective_priority(const Model& model, std::size_t callback);

// The setup of executor `executor`. `policy` overrides the executor's policy; `threads`
// replaces its threads by N plain RT threads (affinity is then ignored: every callback may run
// on every thread). Every thread's SCHED_FIFO priority is thread_fifo_priority's
// (model/facts.hpp: its own, else the executor's), plain threads take the executor's.
ExecutorSetup make_setup(const Model& model, std::size_t executor,
                         std::optional<Policy> policy = std::nullopt,
                         std::optional<int> threads = std::nullopt);

}  // namespace chainrt::sched
