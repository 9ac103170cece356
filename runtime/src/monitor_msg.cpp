// chainrt runtime: the typed monitoring message of a run report (see monitor_msg.hpp).
#include "chainrt/runtime/monitor_msg.hpp"

#include <time.h>

#include <unordered_map>

namespace chainrt::runtime {

std::string events_topic(const std::string& stats_topic) {
  static const std::string kStats = "chain_stats";
  if (stats_topic.size() >= kStats.size() &&
      stats_topic.compare(stats_topic.size() - kStats.size(), kStats.size(), kStats) == 0)
    return stats_topic.substr(0, stats_topic.size() - kStats.size()) + "events";
  return stats_topic + "/events";
}

std::uint8_t chain_verdict(const ChainStats& c) noexcept {
  using M = chainrt_msgs::msg::ChainStatistics;
  if (c.instances == 0) return M::VERDICT_NO_INSTANCES;
  return c.deadline_misses > 0 ? M::VERDICT_MISSED : M::VERDICT_MET;
}

namespace {

chainrt_msgs::msg::CallbackStatistics callback_message(const CallbackStats& c) {
  chainrt_msgs::msg::CallbackStatistics m;
  m.name = c.name;
  m.node = c.node;
  m.kind = c.kind;
  m.topic = c.topic;
  m.instances = c.instances;
  m.exceptions = c.exceptions;
  m.drops = c.drops;
  m.cpu_total_ns = c.cpu_total;
  m.cpu_max_ns = c.cpu_max;
  m.cpu_min_ns = c.cpu_min;
  m.wall_total_ns = c.wall_total;
  m.wall_max_ns = c.wall_max;
  m.wall_min_ns = c.wall_min;
  m.grid_start_index = c.grid_start_index;
  if (c.grid_start_index >= 0) {
    m.release_jitter_max_ns = c.release_jitter.max;
    m.release_jitter_mean_ns = c.release_jitter.releases ? c.release_jitter.sum / c.release_jitter.releases : 0;
    m.release_jitter_samples = static_cast<std::uint64_t>(c.release_jitter.releases);
  }
  return m;
}

}  // namespace

void to_message(const RunReport& r, std::uint64_t seq, std::uint64_t lost,
                const std::vector<DispatchRecord>& recent, const std::vector<std::string>& names,
                chainrt_msgs::msg::ChainStats& out) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  out.stamp.sec = static_cast<std::int32_t>(now.tv_sec);
  out.stamp.nanosec = static_cast<std::uint32_t>(now.tv_nsec);
  out.run.run_id = r.run_id;
  out.run.executor = r.executor;
  out.run.policy = r.policy;
  out.run.threads = static_cast<std::uint32_t>(r.threads);
  out.seq = seq;
  out.duration_ns = r.duration_ns;
  out.dispatches = r.dispatches;
  out.samples_lost = lost;
  out.chains.clear();
  for (const ChainStats& c : r.chains) {
    chainrt_msgs::msg::ChainStatistics m;
    m.name = c.name;
    m.period_ns = c.period_ns;
    m.deadline_ns = c.deadline_ns;
    m.wcrt_ns = c.wcrt_ns;
    m.bcrt_ns = c.bcrt_ns;
    m.mean_ns = c.mean_ns;
    m.p99_ns = c.p99_ns;
    m.instances = c.instances;
    m.deadline_misses = c.deadline_misses;
    m.drops = c.drops;
    m.verdict = chain_verdict(c);
    m.samples_ns.assign(c.samples.begin(), c.samples.end());
    out.chains.push_back(std::move(m));
  }
  out.callbacks.clear();
  std::unordered_map<std::string, std::size_t> at;  // callback name -> its entry
  for (const CallbackStats& c : r.callbacks) {
    at.emplace(c.name, out.callbacks.size());
    out.callbacks.push_back(callback_message(c));
  }
  for (const DispatchRecord& d : recent) {
    if (d.callback >= names.size()) continue;
    auto it = at.find(names[d.callback]);
    if (it == at.end()) {  // dispatched, but not in the report: its instances only
      it = at.emplace(names[d.callback], out.callbacks.size()).first;
      out.callbacks.emplace_back().name = names[d.callback];
    }
    auto& m = out.callbacks[it->second];
    m.start_ns.push_back(d.start);
    m.wall_ns.push_back(d.finish - d.start);
    m.cpu_ns.push_back(d.cpu);
    m.release_ns.push_back(d.release);
    m.thread.push_back(static_cast<std::uint32_t>(d.thread));
  }
  out.warnings = r.warnings;
}

}  // namespace chainrt::runtime
