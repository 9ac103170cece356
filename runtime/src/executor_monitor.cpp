// chainrt runtime: what the executor reports — standard tracing of its registration, the
// statistics messages, the run report, and what LaME's controller reads (CPU windows, events).
#include <algorithm>

#include <unistd.h>

#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/monitor_msg.hpp"
#include "chainrt/runtime/tracing.hpp"
#include "executor_state.hpp"

namespace chainrt::runtime {

using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

// Standard tracing (tracing.hpp): every callback tied to its rcl handle, as rclcpp reports it,
// and the chains (provider `chainrt`). The callback pointer is the callback's Slot.
void Executor::trace_registration() {
  const tracing::Hooks& tr = tracing::hooks();
  if (!tr.any) return;
  for (auto& sp : slots_) {
    const Slot& s = *sp;
    const std::string symbol = "chainrt:" + s.stats.name;
    if (s.timer) {
      if (tr.rcl_timer_init) tr.rcl_timer_init(s.timer, s.timer->period());
      if (tr.timer_link_node) tr.timer_link_node(s.timer, s.timer->node().get());
      if (tr.timer_callback_added) tr.timer_callback_added(s.timer, &s);
    } else if (s.sub) {
      if (tr.subscription_init) tr.subscription_init(s.sub->get(), s.sub);
      if (tr.subscription_callback_added) tr.subscription_callback_added(s.sub, &s);
    }
    if (tr.callback_register) tr.callback_register(&s, symbol.c_str());
  }
  if (tr.executor_init)
    tr.executor_init(this, options_.name.c_str(), to_string(options_.policy),
                     static_cast<std::uint32_t>(threads_spec_.size()));
  for (std::size_t c = 0; c < chain_specs_.size(); ++c) {
    const ChainSpec& cs = chain_specs_[c];
    if (tr.chain_init)
      tr.chain_init(this, static_cast<std::uint32_t>(c), cs.name.c_str(), cs.period, cs.deadline);
    if (!tr.chain_callback) continue;
    std::uint32_t pos = 0;
    for (const auto& n : cs.callbacks) {
      const CallbackId id = id_of(n);
      if (id == kNoCallback) continue;
      const bool leaf = monitor_.completion().is_leaf(static_cast<std::uint32_t>(c), id);
      tr.chain_callback(this, static_cast<std::uint32_t>(c), pos++, slots_[id].get(), n.c_str(),
                        leaf ? 1 : 0);
    }
  }
}

void Executor::stats_main() {
  // Publishes the chain statistics (chainrt_msgs/msg/ChainStats, documented in docs/runtime.md);
  // off the dispatch path, so it may allocate.
  auto* pub = static_cast<Publisher<chainrt_msgs::msg::ChainStats>*>(stats_pub_.get());
  Duration next = now_ns() + options_.stats_period;
  chainrt_msgs::msg::ChainStats msg;
  // Each message also carries the dispatches since the previous one (measured ones only:
  // started after the warm-up), for `chainrt profile`; "samples_lost" counts those the trace
  // ring overwrote before they could be published.
  std::uint64_t published = 0, seq = 0;
  std::vector<std::string> names;
  for (;;) {
    bool stopping = stop_requested();
    if (!stopping) {
      Duration left = next - now_ns();
      if (left > 0) {
        futex_wait(&stop_, 0, std::min<Duration>(left, 100000000));
        continue;
      }
      next += options_.stats_period;
    } else {
      // the last message: only after every worker has ended, or an instance still running at
      // the stop would be in the run report but in no message
      while (workers_joined_.load(std::memory_order_acquire) == 0) futex_wait(&workers_joined_, 0, 100000000);
    }
    stats_message(report(2048), options_.run_id, options_.name, seq++, monitor_, published, mutex_, names,
                  [&](std::vector<std::string>& to) {  // the slots are fixed once the executor runs
                    if (to.size() == slots_.size()) return;
                    to.clear();
                    for (std::size_t i = 0; i < slots_.size(); ++i) to.push_back(name_of(static_cast<CallbackId>(i)));
                  }, msg);
    pub->publish(msg);
    if (stopping) return;
  }
}

RunReport Executor::report(std::size_t max_samples) const {
  RunReport r;
  r.policy = to_string(options_.policy);
  r.threads = threads_spec_.size();
  std::unique_lock<PiMutex> lk(mutex_);
  r.duration_ns = started_at_ == 0 ? 0 : (stopped_at_ ? stopped_at_ : now_ns()) - started_at_;
  r.dispatches = monitor_.dispatches();
  r.warnings = warnings_;
  for (auto& s : slots_) {
    CallbackStats cs = s->stats;
    if (s->sub) cs.drops += s->sub->drops();
    r.callbacks.push_back(std::move(cs));
  }
  monitor_.report(r.chains, max_samples, [&](CallbackId id) { return r.callbacks[id].drops; });
  return r;
}

void Executor::take_cpu_max(std::vector<Duration>& out) {
  std::unique_lock<PiMutex> lk(mutex_);
  out.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    out[i] = slots_[i]->window_cpu.largest[0];
    slots_[i]->window_cpu = CpuWindow{};
  }
}

bool Executor::publish_event(const std::string& json) {
  auto* pub = static_cast<Publisher<std_msgs::msg::String>*>(events_pub_.get());
  if (!pub || !started_) return false;
  std_msgs::msg::String msg;
  msg.data = json;
  pub->publish(msg);
  return true;
}

void Executor::take_cpu_window(std::vector<CpuWindow>& out) {
  std::unique_lock<PiMutex> lk(mutex_);
  out.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    out[i] = slots_[i]->window_cpu;
    slots_[i]->window_cpu = CpuWindow{};
  }
}

std::vector<DispatchRecord> Executor::trace() const {
  std::unique_lock<PiMutex> lk(mutex_);
  return monitor_.trace().snapshot();
}

std::vector<std::string> Executor::warnings() const {
  std::unique_lock<PiMutex> lk(mutex_);
  return warnings_;
}

std::uint64_t Executor::exceptions() const {
  std::unique_lock<PiMutex> lk(mutex_);
  std::uint64_t n = 0;
  for (auto& s : slots_) n += s->stats.exceptions;
  return n;
}

ChainSpec ChainSpec::of(const Chain& c) {
  ChainSpec cs;
  cs.name = c.name;
  cs.callbacks = c.callbacks;
  cs.period = c.period;
  cs.deadline = c.deadline;
  for (const auto& path : c.paths())
    if (!path.empty() && std::find(cs.leaves.begin(), cs.leaves.end(), path.back()) == cs.leaves.end())
      cs.leaves.push_back(path.back());
  return cs;
}

}  // namespace chainrt::runtime
