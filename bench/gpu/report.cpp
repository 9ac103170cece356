// bench/gpu: the tables (gpu_bench.hpp): per row the mean, p99 and worst of the high chain's
// GPU response over the runs (the mean over runs, then the spread min..max), the bound and
// whether every run's worst stayed within its run's bound; p99 against the alone row's.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "gpu_bench.hpp"

namespace chainrt::bench_gpu {

namespace {

std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

template <class F>
std::string spread(const Row& r, F f) {
  double lo = 1e300, hi = -1e300, sum = 0;
  for (const RunStats& s : r.runs) {
    lo = std::min(lo, f(s));
    hi = std::max(hi, f(s));
    sum += f(s);
  }
  return num(sum / static_cast<double>(r.runs.size())) + " (" + num(lo) + "–" + num(hi) + ")";
}

double max_p99(const Row& r) {
  double m = 0;
  for (const RunStats& s : r.runs) m = std::max(m, s.p99_ms);
  return m;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

// The calibration's durations, in the order both tables give them: the JSON key, the markdown label.
struct CalibrationField {
  const char* key;
  const char* label;
  Duration Calibration::*value;
};
constexpr CalibrationField kCalibration[] = {
    {"high", "G_h", &Calibration::high},
    {"low_long", "G_l long", &Calibration::low_long},
    {"low_short", "G_l short", &Calibration::low_short},
    {"block_short", "one wave of short blocks", &Calibration::block_short},
    {"server_extra", "ε server", &Calibration::server_extra},
    {"block_server_extra", "ε block server", &Calibration::block_server_extra},
    {"shm_server_extra", "ε shm server", &Calibration::shm_server_extra},
    {"low_packed", "G_l packed", &Calibration::low_packed},
    {"block_packed", "one wave of packed blocks", &Calibration::block_packed},
};

}  // namespace

std::string markdown(const Result& r) {
  std::ostringstream os;
  const Options& o = r.options;
  os << "GPU benchmark (bench/gpu), device " << r.device_name << ", " << r.date << "; " << o.runs << " runs of "
     << o.samples << " high-chain requests per row; high kernel " << num(o.high_kernel * o.scale / 1e6)
     << " ms every " << num(o.period * o.scale / 1e6) << " ms; " << o.low_threads << " low threads, kernels of "
     << num(o.low_kernel * o.scale / 1e6) << " ms (short blocks " << num(o.low_block * o.scale / 1e6)
     << " ms). High-chain GPU response in ms: mean over the runs (min–max).\n\n";
  os << "| row | how | mean | p99 | worst | bound | worst ≤ bound (runs) | p99 / alone p99 |\n";
  os << "|---|---|---|---|---|---|---|---|\n";
  const Row* alone = nullptr;
  for (const Row& row : r.rows)
    if (row.name == "alone" && !row.runs.empty()) alone = &row;
  for (const Row& row : r.rows) {
    if (!row.skipped.empty() || row.runs.empty()) {
      os << "| " << row.name << " | " << row.how << " | not run: " << row.skipped << " | | | | | |\n";
      continue;
    }
    int within = 0;
    const bool bounded = row.runs.front().bound_ms > 0;  // a row outside the model has none
    for (const RunStats& s : row.runs) within += s.max_ms <= s.bound_ms;
    os << "| " << row.name << " | " << row.how << " | " << spread(row, [](const RunStats& s) { return s.mean_ms; })
       << " | " << spread(row, [](const RunStats& s) { return s.p99_ms; }) << " | "
       << spread(row, [](const RunStats& s) { return s.max_ms; }) << " | "
       << (bounded ? spread(row, [](const RunStats& s) { return s.bound_ms; }) : std::string("none"))
       << " | " << (bounded ? std::to_string(within) + " / " + std::to_string(row.runs.size()) : std::string("–"))
       << " | " << (alone ? num(max_p99(row) / std::max(max_p99(*alone), 1e-9), 2) : std::string("–")) << " |\n";
  }
  os << "\nBounds (chainrt's accelerator analysis, analysis/src/accelerator.hpp, with each run's calibration):\n\n";
  for (const Row& row : r.rows)
    if (!row.bound_terms.empty()) os << "- " << row.name << ": " << row.bound_terms << "\n";
  os << "\nCalibration per run (ms):";
  for (const CalibrationField& f : kCalibration) os << (&f == kCalibration ? " " : ", ") << f.label;
  os << "\n\n";
  for (const Calibration& c : r.calibration) {
    for (const CalibrationField& f : kCalibration) os << (&f == kCalibration ? "- " : ", ") << num((c.*f.value) / 1e6);
    os << "\n";
  }
  return os.str();
}

std::string json(const Result& r) {
  std::ostringstream os;
  const Options& o = r.options;
  os << "{\"device\": \"" << escape(r.device_name) << "\", \"date\": \"" << r.date << "\", \"runs\": " << o.runs
     << ", \"samples\": " << o.samples << ", \"scale\": " << o.scale << ", \"calibration_ns\": [";
  for (std::size_t i = 0; i < r.calibration.size(); ++i) {
    const Calibration& c = r.calibration[i];
    os << (i ? ", " : "") << "{";
    for (const CalibrationField& f : kCalibration)
      os << (&f == kCalibration ? "" : ", ") << "\"" << f.key << "\": " << c.*f.value;
    os << "}";
  }
  os << "], \"rows\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Row& row = r.rows[i];
    os << (i ? ", " : "") << "{\"name\": \"" << row.name << "\", \"how\": \"" << escape(row.how) << "\", \"bound\": \""
       << escape(row.bound_terms) << "\", \"skipped\": \"" << escape(row.skipped) << "\", \"runs\": [";
    for (std::size_t k = 0; k < row.runs.size(); ++k) {
      const RunStats& s = row.runs[k];
      os << (k ? ", " : "") << "{\"n\": " << s.n << ", \"mean_ms\": " << s.mean_ms << ", \"p99_ms\": " << s.p99_ms
         << ", \"max_ms\": " << s.max_ms << ", \"bound_ms\": " << s.bound_ms << "}";
    }
    os << "]}";
  }
  os << "]}\n";
  return os.str();
}

}  // namespace chainrt::bench_gpu
