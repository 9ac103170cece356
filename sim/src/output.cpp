// chainrt sim: JSON renderings of a simulation — the per-chain summary whose keys are the
// same everywhere in chainrt (simulate, run, bench) and the dispatch trace drawn by
// python/chainrt/gantt.py.
#include <cmath>
#include <sstream>

#include "chainrt/sim/simulator.hpp"

namespace chainrt::sim {
namespace {
std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
      continue;
    }
    o += ch;
  }
  return o + "\"";
}
}  // namespace

std::string result_to_json(const SimResult& r) {
  std::ostringstream os;
  os << "{\"chains\": {";
  bool first = true;
  for (const ChainStats& c : r.chains) {
    if (!first) os << ", ";
    first = false;
    os << quote(c.name) << ": {\"period_ns\": " << c.period << ", \"deadline_ns\": " << c.deadline
       << ", \"wcrt_ns\": " << c.wcrt << ", \"bcrt_ns\": " << c.bcrt
       << ", \"mean_ns\": " << static_cast<long long>(std::llround(c.mean)) << ", \"p99_ns\": " << c.p99
       << ", \"instances\": " << c.instances << ", \"deadline_misses\": " << c.deadline_misses
       << ", \"drops\": " << c.drops << "}";
  }
  os << "}, \"callbacks\": {";
  for (std::size_t i = 0; i < r.callbacks.size(); ++i) {
    const CallbackStats& c = r.callbacks[i];
    os << (i ? ", " : "") << quote(c.name) << ": {\"executions\": " << c.executions << ", \"drops\": " << c.drops
       << ", \"max_latency_ns\": " << c.max_latency << "}";
  }
  os << "}, \"executions\": " << r.executions << ", \"duration_ns\": " << r.duration << "}";
  return os.str();
}

std::string trace_to_json(const Model& model, const SimResult& r) {
  std::ostringstream os;
  os << "{\"threads\": [";
  for (std::size_t i = 0; i < r.threads.size(); ++i) {
    const ThreadInfo& t = r.threads[i];
    os << (i ? ", " : "") << "{\"executor\": " << quote(t.executor) << ", \"name\": " << quote(t.name)
       << ", \"host\": " << quote(t.host) << ", \"core\": " << t.core << "}";
  }
  os << "], \"callbacks\": [";
  if (r.trace_callbacks.empty())
    for (std::size_t i = 0; i < model.callbacks.size(); ++i) os << (i ? ", " : "") << quote(model.callbacks[i].name);
  for (std::size_t i = 0; i < r.trace_callbacks.size(); ++i) os << (i ? ", " : "") << quote(r.trace_callbacks[i]);
  os << "], \"events\": [";
  for (std::size_t i = 0; i < r.trace.size(); ++i) {
    const TraceEntry& e = r.trace[i];
    os << (i ? ", " : "") << "[" << e.thread << ", " << e.callback << ", " << e.release << ", " << e.start << ", "
       << e.finish << "]";
  }
  os << "], \"accelerators\": [";
  for (std::size_t i = 0; i < r.accelerators.size(); ++i) os << (i ? ", " : "") << quote(r.accelerators[i]);
  os << "], \"device\": [";
  for (std::size_t i = 0; i < r.device_trace.size(); ++i) {
    const DeviceTraceEntry& e = r.device_trace[i];
    os << (i ? ", " : "") << "[" << e.accelerator << ", " << e.callback << ", " << e.segment << ", " << e.issued << ", "
       << e.start << ", " << e.finish << "]";
  }
  os << "], \"truncated\": " << (r.trace_truncated ? "true" : "false") << ", \"duration_ns\": " << r.duration << "}";
  return os.str();
}

}  // namespace chainrt::sim
