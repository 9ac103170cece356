// The run specification and chainrt-run's command line read the one table of run options
// (runtime/run_options.def): the same keys, kinds and checks; one line on a bad value.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "chainrt/runtime/run_spec.hpp"

using namespace chainrt;
using namespace chainrt::runtime;

namespace {

const char* kModel = R"(chainrt: 1
name: spec
hosts:
  - {name: host0, cores: 1}
executors:
  - {name: main, host: host0, policy: fp}
nodes:
  - {name: n, executor: main}
topics:
  - {name: out, size: 64B}
callbacks:
  - {name: n_t, kind: timer, node: n, period: 10ms, wcet: 1ms, publishes: [out]}
chains:
  - {name: c, callbacks: [n_t], deadline: 10ms}
)";

// A specification as `chainrt run` writes it (JSON).
std::string spec_json(const std::string& options) {
  std::string model;
  for (char c : std::string(kModel)) model += c == '\n' ? std::string("\\n") : std::string(1, c);
  return "{\"model_file\": \"m.yaml\", \"model\": \"" + model + "\", \"options\": {" + options + "}}";
}

RunSpec command_line(std::vector<const char*> args) {
  args.insert(args.begin(), "chainrt-run");
  return parse_run_command_line(static_cast<int>(args.size()), args.data());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RunSpec, ReadsTheModelAndEveryKindOfOption) {
  const RunSpec s = read_run_spec(spec_json(
      "\"duration\": \"2s\", \"warmup\": \"0ns\", \"policy\": \"edf\", \"threads\": \"3\", \"fifo\": \"10\", "
      "\"no_thread_params\": true, \"namespace\": \"/ns\", \"lame_controller\": \"5s\", "
      "\"scale_wcet\": [\"3s:2.0\", \"1s:1.5\"], \"run_id\": \"r1\""));
  ASSERT_TRUE(s.model_text.has_value());
  EXPECT_EQ(s.model_file, "m.yaml");
  EXPECT_EQ(s.run.duration, 2'000'000'000);
  EXPECT_EQ(s.run.warmup, 0);
  EXPECT_EQ(s.run.policy, Policy::Edf);
  EXPECT_EQ(s.run.threads, 3);
  EXPECT_EQ(s.run.fifo, 10);
  EXPECT_FALSE(s.run.thread_params);
  EXPECT_EQ(s.run.ns, "/ns");
  EXPECT_EQ(s.run.topic_prefix, "/ns");  // the topics under the namespace unless a prefix is given
  EXPECT_EQ(s.lame_period, 5'000'000'000);
  ASSERT_EQ(s.run.wcet_steps.size(), 2u);  // in order of time
  EXPECT_EQ(s.run.wcet_steps[0].at, 1'000'000'000);
  EXPECT_EQ(s.run.wcet_steps[1].factor, 2.0);
  EXPECT_EQ(s.run.run_id, "r1");
  const Model m = load_run_model(s);
  ASSERT_EQ(m.callbacks.size(), 1u);
  EXPECT_EQ(m.callbacks[0].name, "n_t");
}

TEST(RunSpec, DefaultsComeFromTheTable) {
  const RunSpec s = read_run_spec(spec_json(""));
  EXPECT_EQ(s.run.duration, 30'000'000'000);
  EXPECT_EQ(s.run.warmup, 500'000'000);
  EXPECT_EQ(s.lame_reservation_period, 10'000'000);
  EXPECT_EQ(s.lame_period, 0);  // an optional period's default is its value when given bare
  EXPECT_TRUE(s.run.thread_params);
  EXPECT_FALSE(s.run.policy.has_value());
}

TEST(RunSpec, TheCommandLineReadsTheSameTableOverTheSpecification) {
  const std::string path = ::testing::TempDir() + "chainrt_run_spec_test.json";
  {
    std::ofstream f(path);
    f << spec_json("\"duration\": \"2s\", \"policy\": \"fp\"");
  }
  const RunSpec s = command_line({"--process", "p1", "--spec", path.c_str(), "--duration", "1s",
                                  "--lame-controller", "--no-thread-params", "--json", "-"});
  std::remove(path.c_str());
  EXPECT_EQ(s.run.duration, 1'000'000'000);  // the command line over the specification
  EXPECT_EQ(s.run.policy, Policy::FixedPriority);
  EXPECT_EQ(s.run.process, "p1");
  EXPECT_EQ(s.lame_period, 10'000'000'000);  // given bare: the table's default
  EXPECT_FALSE(s.run.thread_params);
  EXPECT_EQ(s.json_out, "-");
  const RunSpec file = command_line({"model.yaml", "--list-processes"});
  EXPECT_EQ(file.model_file, "model.yaml");
  EXPECT_FALSE(file.model_text.has_value());
  EXPECT_TRUE(file.list);
}

TEST(RunSpec, BadValuesAreOneLineNamingTheFlag) {
  EXPECT_EQ(error_of([] { read_run_spec(spec_json("\"threads\": \"0\"")); }),
            "--threads: '0' is not a thread count (1..64)");
  EXPECT_EQ(error_of([] { read_run_spec(spec_json("\"duration\": \"0s\"")); }), "--duration: '0s' must be positive");
  EXPECT_NE(error_of([] { read_run_spec(spec_json("\"policy\": \"fifo\"")); }).find("--policy: unknown policy 'fifo'"),
            std::string::npos);
  EXPECT_EQ(error_of([] { read_run_spec(spec_json("\"scale_wcet\": [\"2s:-1\"]")); }),
            "--scale-wcet: the factor must be a number in (0, 1000]");
  EXPECT_EQ(error_of([] { read_run_spec(spec_json("\"speed\": \"1\"")); }), "unknown option --speed");
  EXPECT_EQ(error_of([] { read_run_spec(spec_json("\"duration\": [\"1s\"]")); }), "--duration: want a single value");
  EXPECT_EQ(error_of([] { read_run_spec("[1, 2]"); }), "the run specification is not a mapping");
  EXPECT_EQ(error_of([] { command_line({"m.yaml", "--fifo", "100"}); }),
            "--fifo: '100' is not a SCHED_FIFO priority (1..99)");
  EXPECT_EQ(error_of([] { command_line({"m.yaml", "--warmup"}); }), "--warmup needs a value");
  EXPECT_EQ(error_of([] { command_line({"m.yaml", "--frobnicate"}); }), "unknown option --frobnicate");
}

TEST(RunSpec, TheUsageListsEveryOptionOfTheTable) {
  const std::string usage = run_usage();
  for (const auto& o : kRunOptions) EXPECT_NE(usage.find(run_option_flag(o.key)), std::string::npos) << o.key;
}
