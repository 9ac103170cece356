// chainrt runtime: summaries and JSON of the run-time monitor (see monitor.hpp).
#include "chainrt/runtime/monitor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace chainrt::runtime {

Duration quantile(std::vector<Duration> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // nearest rank: the ceil(p*n)-th smallest
  std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (rank == 0) rank = 1;
  return v[std::min(rank, v.size()) - 1];
}

void LatencyRecorder::summarize(ChainStats& out, std::size_t max_samples) const {
  out.instances = count_;
  out.deadline_misses = misses_;
  out.wcrt_ns = count_ ? max_ : 0;
  out.bcrt_ns = count_ ? min_ : 0;
  out.mean_ns = count_ ? sum_ / static_cast<double>(count_) : 0.0;
  // the most recent min(count, ring size, max_samples) samples
  const std::size_t kept =
      std::min<std::uint64_t>(std::min<std::uint64_t>(count_, ring_.size()), max_samples);
  out.samples.resize(kept);
  for (std::size_t i = 0; i < kept; ++i)
    out.samples[i] = ring_[(count_ - kept + i) % ring_.size()];
  out.p99_ns = quantile(out.samples, 0.99);
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o;
}

std::string to_json(const RunReport& r, bool with_samples) {
  std::string o = "{";
  if (!r.run_id.empty()) o += "\"run_id\": \"" + json_escape(r.run_id) + "\", ";
  if (!r.executor.empty()) o += "\"executor\": \"" + json_escape(r.executor) + "\", ";
  o += "\"policy\": \"" + json_escape(r.policy) + "\", \"threads\": " +
                  std::to_string(r.threads) + ", \"duration_ns\": " +
                  std::to_string(r.duration_ns) + ", \"dispatches\": " +
                  std::to_string(r.dispatches) + ", \"chains\": {";
  bool first = true;
  for (const auto& c : r.chains) {
    if (!first) o += ", ";
    first = false;
    char mean[64];
    std::snprintf(mean, sizeof mean, "%.1f", c.mean_ns);
    o += "\"" + json_escape(c.name) + "\": {\"period_ns\": " + std::to_string(c.period_ns) +
         ", \"deadline_ns\": " + std::to_string(c.deadline_ns) +
         ", \"wcrt_ns\": " + std::to_string(c.wcrt_ns) + ", \"bcrt_ns\": " +
         std::to_string(c.bcrt_ns) + ", \"mean_ns\": " + mean + ", \"p99_ns\": " +
         std::to_string(c.p99_ns) + ", \"instances\": " + std::to_string(c.instances) +
         ", \"deadline_misses\": " + std::to_string(c.deadline_misses) +
         ", \"drops\": " + std::to_string(c.drops);
    if (with_samples) {
      o += ", \"samples_ns\": [";
      for (std::size_t i = 0; i < c.samples.size(); ++i) {
        if (i) o += ",";
        o += std::to_string(c.samples[i]);
      }
      o += "]";
    }
    o += "}";
  }
  o += "}, \"callbacks\": {";
  first = true;
  for (const auto& c : r.callbacks) {
    if (!first) o += ", ";
    first = false;
    o += "\"" + json_escape(c.name) + "\": {";
    if (!c.node.empty()) o += "\"node\": \"" + json_escape(c.node) + "\", ";
    if (!c.kind.empty()) o += "\"kind\": \"" + json_escape(c.kind) + "\", ";
    if (!c.topic.empty()) o += "\"topic\": \"" + json_escape(c.topic) + "\", ";
    o += "\"instances\": " + std::to_string(c.instances) +
         ", \"cpu_total_ns\": " + std::to_string(c.cpu_total) +
         ", \"cpu_max_ns\": " + std::to_string(c.cpu_max) +
         ", \"cpu_min_ns\": " + std::to_string(c.cpu_min) +
         ", \"wall_total_ns\": " + std::to_string(c.wall_total) +
         ", \"wall_max_ns\": " + std::to_string(c.wall_max) +
         ", \"wall_min_ns\": " + std::to_string(c.wall_min) +
         ", \"exceptions\": " + std::to_string(c.exceptions) +
         ", \"drops\": " + std::to_string(c.drops);
    if (c.grid_start_index >= 0)
      o += ", \"release_jitter_max_ns\": " + std::to_string(c.release_jitter.max) +
           ", \"release_jitter_mean_ns\": " +
           std::to_string(c.release_jitter.releases ? c.release_jitter.sum / c.release_jitter.releases : 0) +
           ", \"release_jitter_samples\": " + std::to_string(c.release_jitter.releases) +
           ", \"grid_start_index\": " + std::to_string(c.grid_start_index);
    o += "}";
  }
  o += "}, \"warnings\": [";
  for (std::size_t i = 0; i < r.warnings.size(); ++i) {
    if (i) o += ", ";
    o += "\"" + json_escape(r.warnings[i]) + "\"";
  }
  o += "]}";
  return o;
}

std::vector<DispatchRecord> TraceRing::snapshot() const {
  std::vector<DispatchRecord> out;
  const std::uint64_t cap = ring_.size();
  const std::uint64_t n = std::min<std::uint64_t>(count_, cap);
  for (std::uint64_t i = count_ - n; i < count_; ++i) out.push_back(ring_[i % cap]);
  return out;
}

std::uint64_t TraceRing::take_since(std::uint64_t& published, Duration from, std::vector<DispatchRecord>& out) const {
  const std::uint64_t cap = ring_.size();
  const std::uint64_t first = std::max<std::uint64_t>(published, count_ > cap ? count_ - cap : 0);
  const std::uint64_t lost = first - published;
  for (std::uint64_t i = first; i < count_; ++i)
    if (ring_[i % cap].start >= from) out.push_back(ring_[i % cap]);
  published = count_;
  return lost;
}

}  // namespace chainrt::runtime
