// chainrt runtime: the typed monitoring message (chainrt_msgs/msg/ChainStats) that every chainrt
// executor publishes on <namespace>/chainrt/chain_stats (docs/runtime.md, "Monitoring"): the one
// conversion of a run report into it (the runtime on rcl and the rclcpp ChainExecutor use it; the
// rclpy executor fills the same message from the same report in python/chainrt/monitor_msg.py).
// Off the dispatch path: it allocates.
#pragma once

#include <chainrt_msgs/msg/chain_stats.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/monitor.hpp"

namespace chainrt::runtime {

// The topic of the executors' events (LaME's controller decisions: std_msgs/String JSON, docs/lame.md)
// next to the monitoring topic `stats_topic` (<ns>/chainrt/chain_stats -> <ns>/chainrt/events).
std::string events_topic(const std::string& stats_topic);

// A chain's verdict (chainrt_msgs/msg/ChainStatistics VERDICT_*): no instance yet, every
// instance within the deadline (or no deadline), or at least one miss.
std::uint8_t chain_verdict(const ChainStats& c) noexcept;

// One monitoring message into `out`: the report `r` (its chains with their retained samples), the
// message's sequence number `seq`, `lost` dispatches the trace ring overwrote before they could be
// published, and `recent` (the dispatches since the previous message, oldest first) in the
// per-instance arrays of the callback `names[record.callback]`. stamp: the system clock now.
void to_message(const RunReport& r, std::uint64_t seq, std::uint64_t lost,
                const std::vector<DispatchRecord>& recent, const std::vector<std::string>& names,
                chainrt_msgs::msg::ChainStats& out);

// One statistics message of an executor into `out`, as every chainrt executor builds it: its
// report `r` stamped with `run_id` and `executor`, and the dispatches `monitor` recorded since
// `published` (advanced past them), taken while `lock` (the executor's lock over its monitor) is
// held; under the same lock `names_of(names)` brings the callbacks' names up to date (`names` is
// the caller's, kept from one message to the next, so that an unchanged list costs no allocation
// while the lock is held). Allocates; off the dispatch path; thread-safe as far as `lock` guards
// `monitor` and what `names_of` reads.
template <class Mutex, class Names>
void stats_message(RunReport r, const std::string& run_id, const std::string& executor, std::uint64_t seq,
                   const ChainMonitor& monitor, std::uint64_t& published, Mutex& lock,
                   std::vector<std::string>& names, Names&& names_of, chainrt_msgs::msg::ChainStats& out) {
  r.run_id = run_id;
  r.executor = executor;
  std::vector<DispatchRecord> recent;
  std::uint64_t lost = 0;
  {
    std::unique_lock<Mutex> lk(lock);
    lost = monitor.trace().take_since(published, monitor.record_from(), recent);
    names_of(names);
  }
  to_message(r, seq, lost, recent, names, out);
}

}  // namespace chainrt::runtime
