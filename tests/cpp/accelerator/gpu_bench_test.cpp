// The GPU benchmark's logic (bench/gpu) on the emulated device, the dry run of what
// bench/gpu/device_check.sh runs on a GPU: every row measured per run with its sample count
// (the shm-server row with its low client in another process), each run's bound the analysis'
// for that run's calibration, the GPU-only rows skipped with their reason, both tables
// written; and each row's bound from given durations. No wall-clock figure is asserted.
#include <gtest/gtest.h>

#include <string>

#include "gpu_bench.hpp"

namespace chainrt::bench_gpu {
namespace {

constexpr Duration us = 1'000, ms = 1'000'000;

TEST(GpuBench, DryRunOnTheEmulatedDeviceFillsEveryRowWithItsBound) {
  Options o;
  o.device = "emulated";
  o.runs = 3;
  o.samples = 4;
  o.warmup = 1;
  o.scale = 0.02;
  o.self = CHAINRT_GPU_BENCH_PROGRAM;  // the shm-server row's low client runs it
  const Result r = run(o);
  ASSERT_EQ(r.rows.size(), row_names().size());
  ASSERT_EQ(r.calibration.size(), 3u);
  for (const Row& row : r.rows) {
    if (row.name == "short-other-process") {
      EXPECT_NE(row.skipped.find("another CUDA context"), std::string::npos);
      EXPECT_TRUE(row.runs.empty());
      continue;
    }
    if (row.name.rfind("packed-", 0) == 0) {
      EXPECT_NE(row.skipped.find("beside others on a multiprocessor"), std::string::npos) << row.name;
      EXPECT_TRUE(row.runs.empty());
      continue;
    }
    EXPECT_TRUE(row.skipped.empty()) << row.name;
    ASSERT_EQ(row.runs.size(), 3u) << row.name;
    for (std::size_t k = 0; k < row.runs.size(); ++k) {
      EXPECT_EQ(row.runs[k].n, 4u) << row.name;
      std::string terms;
      EXPECT_DOUBLE_EQ(row.runs[k].bound_ms, row_bound(row.name, r.calibration[k], o.low_threads, &terms) / 1e6)
          << row.name;
      EXPECT_EQ(terms, row.bound_terms);
      EXPECT_LE(row.runs[k].mean_ms, row.runs[k].max_ms);
      if (row.name == "alone") EXPECT_DOUBLE_EQ(row.runs[k].max_ms, r.calibration[k].high / 1e6);  // G_h
    }
  }
  const std::string md = markdown(r);
  EXPECT_NE(md.find("device emulated"), std::string::npos);
  EXPECT_NE(md.find("| short-block-server |"), std::string::npos);
  EXPECT_NE(md.find("| shm-server |"), std::string::npos);
  EXPECT_NE(md.find("not run: needs a GPU"), std::string::npos);
  EXPECT_NE(json(r).find("\"name\": \"short-greatest\""), std::string::npos);
}

TEST(GpuBench, BoundsAreTheAnalysisTermsOfEachRowsModel) {
  Calibration c;
  c.high = 2 * ms;
  c.low_long = 10 * ms;
  c.low_short = 10'500 * us;
  c.block_short = 300 * us;
  c.server_extra = 50 * us;
  c.block_server_extra = 40 * us;
  c.shm_server_extra = 70 * us;
  c.low_packed = 10'200 * us;
  c.block_packed = 380 * us;
  std::string t;
  EXPECT_EQ(row_bound("alone", c, 3, &t), 2 * ms);
  EXPECT_EQ(row_bound("long-same", c, 3, &t), 32 * ms);           // first come, first served: 3 G_l + G_h
  EXPECT_EQ(row_bound("short-same", c, 3, &t), 33'500 * us);
  EXPECT_EQ(row_bound("long-greatest", c, 3, &t), 12 * ms);       // one wave of long blocks
  EXPECT_EQ(row_bound("short-greatest", c, 3, &t), 2'300 * us);   // one wave of short blocks
  EXPECT_EQ(row_bound("short-other-process", c, 3, &t), 0);  // time-sliced contexts: outside the model
  EXPECT_NE(t.find("none"), std::string::npos);
  EXPECT_EQ(row_bound("server", c, 3, &t), 12'100 * us);          // ε + G_l, then ε + G_h
  EXPECT_EQ(row_bound("shm-server", c, 3, &t), 12'140 * us);      // the same with the shared-memory ε
  EXPECT_EQ(row_bound("short-block-server", c, 3, &t), 2'380 * us);  // ε + one wave, then ε + G_h
  EXPECT_EQ(row_bound("packed-same", c, 3, &t), 32'600 * us);
  EXPECT_EQ(row_bound("packed-greatest", c, 3, &t), 2'380 * us);  // the packed wave's longest blocks
  EXPECT_THROW(row_bound("nope", c, 3, &t), std::invalid_argument);
  Options o;
  o.rows = {"nope"};
  EXPECT_THROW(run(o), std::runtime_error);
}

}  // namespace
}  // namespace chainrt::bench_gpu
