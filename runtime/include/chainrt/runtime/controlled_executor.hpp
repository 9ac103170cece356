// chainrt runtime: what LaME's online controller (lame_controller.hpp, LaME Sec. 4.3) needs of a
// running executor — its callbacks by name with their scheduling parameters, its threads'
// reservations, the CPU times it measured, its monitoring topic. The runtime's Executor
// (executor.hpp) and the rclcpp ChainExecutor (chainrt/rclcpp/chain_executor.hpp) implement it,
// so that both run the one controller. Every call comes from the controller's thread (never an
// executor thread); each may take the executor's ready-queue lock briefly and allocate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"
#include "chainrt/runtime/monitor.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::runtime {

class ControlledExecutor {
 public:
  virtual ~ControlledExecutor() = default;
  // The callbacks (CallbackId 0 .. callback_count()-1) and their names.
  virtual std::size_t callback_count() const = 0;
  virtual sched::CallbackId callback_id(const std::string& name) const = 0;  // kNoCallback: none
  virtual std::string callback_name(sched::CallbackId id) const = 0;
  // A callback's scheduling parameters now (a copy).
  virtual sched::CallbackSpec spec_of(sched::CallbackId id) const = 0;
  // SCHED_DEADLINE runtime/period of running executor thread t (nullopt: normal scheduling);
  // "" on success, else the kernel's refusal (the thread keeps its parameters).
  virtual std::string set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) = 0;
  // New priorities and affinities (by CallbackId) and groups: no queued or running instance is
  // lost. An executor whose groups are its user's (rclcpp's, rclpy's callback groups) keeps them
  // and takes priority and affinity only. Throws std::invalid_argument on a size mismatch.
  virtual void reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec> groups) = 0;
  // Per callback, the largest thread-CPU times since the previous call and their count
  // (restarts the window); `out` is resized to callback_count().
  virtual void take_cpu_window(std::vector<CpuWindow>& out) = 0;
  // One JSON event on the monitoring topic; false when there is no monitoring publisher.
  virtual bool publish_event(const std::string& json) = 0;
};

}  // namespace chainrt::runtime
