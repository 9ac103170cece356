// Model semantics: defaults filled by validation, derived chain hops and communication kinds
// (CROS-RT categories), branching chains, lookups and utilisation.
#include <gtest/gtest.h>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {
const char* kMinimal = R"(
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, publishes: [t1]}
  - {name: b, kind: subscription, node: n, topic: t1, wcet: 2ms}
chains:
  - {name: c, callbacks: [a, b]}
)";
}

TEST(Model, MinimalFileGetsDocumentedDefaults) {
  Model m = load_model_from_string(kMinimal, "minimal.yaml");
  ASSERT_EQ(m.hosts.size(), 1u);
  ASSERT_EQ(m.executors.size(), 1u);
  EXPECT_EQ(m.executors[0].policy, Policy::RosDefault);
  ASSERT_EQ(m.executors[0].threads.size(), 1u);
  EXPECT_EQ(m.executors[0].process, m.executors[0].name);
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].executor, m.executors[0].name);
  // ROS 2: a node's default callback group is mutually exclusive.
  EXPECT_EQ(m.callback("a").group, "n/default");
  EXPECT_EQ(m.group("n/default").type, GroupType::MutuallyExclusive);
  const Chain& c = m.chain("c");
  EXPECT_EQ(c.period, 10'000'000);
  EXPECT_EQ(c.deadline, 10'000'000);  // implicit deadline
  ASSERT_EQ(c.hops.size(), 1u);
  EXPECT_EQ(c.hops[0].topic, "t1");
  EXPECT_EQ(c.hops[0].comm, CommKind::IntraProcess);
  EXPECT_EQ(c.hops[0].message_size, 64);
  EXPECT_TRUE(c.is_linear());
  EXPECT_EQ(m.chain_wcet(c), 3'000'000);
  EXPECT_DOUBLE_EQ(m.chain_utilisation(c), 0.3);
}

TEST(Model, CommunicationKindFollowsPlacement) {
  Model m = load_model_from_string(R"(
hosts: [{name: h0, cores: 2}, {name: h1, cores: 1}]
executors:
  - {name: e0, host: h0, process: p}
  - {name: e1, host: h0, process: p}
  - {name: e2, host: h0}
  - {name: e3, host: h1}
nodes: [{name: n0, executor: e0}, {name: n1, executor: e1}, {name: n2, executor: e2}, {name: n3, executor: e3}]
topics: [{name: t0, size: 4KiB}, {name: t1}, {name: t2, size: 64KB}]
callbacks:
  - {name: a, kind: timer, node: n0, period: 10ms, wcet: 1ms, publishes: [t0]}
  - {name: b, kind: subscription, node: n1, topic: t0, wcet: 1ms, publishes: [t1]}
  - {name: c, kind: subscription, node: n2, topic: t1, wcet: 1ms, publishes: [t2]}
  - {name: d, kind: subscription, node: n3, topic: t2, wcet: 1ms}
chains:
  - {name: x, callbacks: [a, b, c, d]}
)");
  const Chain& x = m.chain("x");
  ASSERT_EQ(x.hops.size(), 3u);
  EXPECT_EQ(x.hops[0].comm, CommKind::IntraProcess);  // different executors, same process
  EXPECT_EQ(x.hops[1].comm, CommKind::SameHost);
  EXPECT_EQ(x.hops[2].comm, CommKind::Remote);
  EXPECT_EQ(x.hops[0].message_size, 4096);
  EXPECT_EQ(x.hops[2].message_size, 64000);
}

TEST(Model, BranchingChainKeepsItsPaths) {
  Model m = load_model_from_string(R"(
callbacks:
  - {name: src, kind: timer, node: n, period: 50ms, wcet: 1ms, publishes: [t]}
  - {name: left, kind: subscription, node: n, topic: t, wcet: 1ms, publishes: [u]}
  - {name: right, kind: subscription, node: n, topic: t, wcet: 1ms}
  - {name: end, kind: subscription, node: n, topic: u, wcet: 1ms}
chains:
  - name: fork
    paths:
      - [src, left, end]
      - [src, right]
)");
  const Chain& f = m.chain("fork");
  EXPECT_FALSE(f.is_linear());
  EXPECT_EQ(f.callbacks.front(), "src");
  EXPECT_EQ(f.hops.size(), 3u);
  auto paths = f.paths();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], (std::vector<std::string>{"src", "left", "end"}));
  EXPECT_EQ(paths[1], (std::vector<std::string>{"src", "right"}));
}

TEST(Model, ThreadClassesExpandToOneThreadPerCore) {
  Model m = load_model_from_string(R"(
hosts: [{name: h, cores: 2}]
executors:
  - name: e
    policy: lame
    thread_classes:
      - {name: rt, kind: rt, cores: [0, 1], reservation: {budget: 6ms, period: 10ms}}
      - {name: be, kind: be, cores: [1]}
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, affinity: [rt]}
chains:
  - {name: c, callbacks: [a]}
)");
  const Executor& e = m.executor("e");
  ASSERT_EQ(e.threads.size(), 3u);
  EXPECT_EQ(e.threads[0].name, "rt/0");
  EXPECT_EQ(e.threads[0].thread_class, "rt");
  ASSERT_TRUE(e.threads[1].reservation.has_value());
  EXPECT_EQ(e.threads[1].reservation->budget, 6'000'000);
  EXPECT_EQ(e.threads[2].cores, std::vector<int>{1});
}

TEST(Model, ArbitraryDeadlinesAllowDeadlineBeyondPeriod) {
  std::string text = std::string("deadlines: arbitrary\n") + kMinimal;
  text.replace(text.find("callbacks: [a, b]}"), 18, "callbacks: [a, b], deadline: 25ms}");
  Model m = load_model_from_string(text);
  EXPECT_EQ(m.chain("c").deadline, 25'000'000);
  // Best-effort chains may always have D > T.
  std::string be = kMinimal;
  be.replace(be.find("callbacks: [a, b]}"), 18, "callbacks: [a, b], deadline: 25ms, class: be}");
  EXPECT_NO_THROW(load_model_from_string(be));
}

TEST(Model, ReportsEveryProblemNotJustTheFirst) {
  try {
    load_model_from_string(R"(
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 0ms}
  - {name: b, kind: subscription, node: n, topic: t1, wcet: 5}
chains:
  - {name: c, callbacks: [a, b]}
)",
                           "many.yaml");
    FAIL() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_GE(e.diagnostics().size(), 2u);
    EXPECT_NE(std::string(e.what()).find("many.yaml:3:"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("many.yaml:4:"), std::string::npos);
  }
}

// One timer callback 'x' of node 'n' (WCET 1 ns, the given period) and a chain 'c' of it, built in code.
static Model one_timer_model(Duration period) {
  Model m;
  Callback cb;
  cb.name = "x";
  cb.kind = CallbackKind::Timer;
  cb.node = "n";
  cb.wcet = 1;
  cb.period = period;
  m.callbacks.push_back(cb);
  m.chains.push_back(Chain{"c", {"x"}});
  return m;
}

TEST(Model, ValidateReportsModelsBuiltInCode) {
  Model m = one_timer_model(0);  // no period
  EXPECT_THROW(validate(m, "generated"), ModelError);
  m.callbacks[0].period = 100;
  EXPECT_NO_THROW(validate(m, "generated"));
  EXPECT_EQ(m.chain("c").period, 100);
}

TEST(Model, MissingFileIsAClearError) {
  try {
    load_model("/nonexistent/model.yaml");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.yaml: cannot open"), std::string::npos);
  }
}

TEST(Model, HostBlackoutCurveParsesRoundTripsAndIsChecked) {
  Model m = load_model_from_string(R"(
hosts:
  - name: pc
    cores: 2
    blackout: [{window: 1ms, max: 0.4ms}, {window: 100ms, max: 12ms}]
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}
chains:
  - {name: c, callbacks: [a]}
)",
                                   "bl.yaml");
  ASSERT_EQ(m.hosts[0].blackout.size(), 2u);
  EXPECT_EQ(m.hosts[0].blackout[0].window, 1'000'000);
  EXPECT_EQ(m.hosts[0].blackout[0].max, 400'000);
  EXPECT_EQ(m.hosts[0].blackout[1].max, 12'000'000);
  EXPECT_EQ(load_model_from_string(save_model_to_string(m), "again.yaml"), m);
  for (const char* bad : {"[{window: 1ms, max: 2ms}]", "[{window: 2ms, max: 1ms}, {window: 1ms, max: 1ms}]",
                          "[{window: 1ms, max: 1ms}, {window: 2ms, max: 0.5ms}]", "[{window: 1ms}]", "{window: 1ms}",
                          "[{window: 1ms, max: 1ms, extra: 1}]"}) {
    const std::string text = std::string("hosts:\n  - {name: pc, blackout: ") + bad +
                             "}\ncallbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\n";
    try {
      load_model_from_string(text, "bad.yaml");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.yaml:2:"), std::string::npos) << e.what();
    }
  }
}

// A callback without 'node' in a model that declares its nodes and has two executors: a located
// ModelError (it was a std::out_of_range from deriving the hops' placement).
TEST(Model, CallbackWithoutNodeIsALocatedModelError) {
  const char* text = R"(chainrt: 1
executors:
  - {name: a, process: pa}
  - {name: b, process: pb}
nodes:
  - {name: n1, executor: a}
  - {name: n2, executor: b}
callbacks:
  - {name: t, kind: timer, node: n1, period: 10ms, wcet: 1ms, publishes: [x]}
  - {name: s, kind: subscription, topic: x, wcet: 1ms}
chains:
  - {name: c, callbacks: [t, s]}
)";
  try {
    load_model_from_string(text, "m.yaml");
    FAIL() << "accepted";
  } catch (const ModelError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, 10);
    EXPECT_NE(e.diagnostics()[0].message.find("missing required field 'node'"), std::string::npos);
  }
}

// The name limits hold for models built in code too, and for references as for definitions.
TEST(Model, NameLimitsApplyToEveryNameOfACodeBuiltModel) {
  auto base = [] { return one_timer_model(100); };
  auto error_of = [](Model m) -> std::string {  // validate's message on a copy, "" when it passes
    try {
      validate(m, "generated");
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  Model ok = base();
  EXPECT_NO_THROW(validate(ok, "generated"));
  Model bidi = base();
  bidi.callbacks[0].node = "n\u202Eevil";
  EXPECT_THROW(validate(bidi, "generated"), ModelError);
  // the message names the offending code point
  EXPECT_NE(error_of(bidi).find("a bidirectional control character (U+202E)"), std::string::npos) << error_of(bidi);
  Model lng = base();
  lng.callbacks[0].publishes = {std::string(300, 't')};
  EXPECT_THROW(validate(lng, "generated"), ModelError);
  Model newline = base();
  newline.chains[0].name = "two\nlines";
  EXPECT_THROW(validate(newline, "generated"), ModelError);
  EXPECT_NE(error_of(newline).find("a control character (U+000A)"), std::string::npos) << error_of(newline);
  for (const char* filler : {"safety\u3164", "safety\u115F", "safety\u034F"}) {
    Model invisible = base();
    invisible.chains[0].name = filler;
    EXPECT_NE(error_of(invisible).find("invisible character"), std::string::npos) << error_of(invisible);
  }
}

// Characters that print as nothing (Unicode default-ignorable code points: fillers, joiners,
// variation selectors) would make three chains all print as "safety": each is refused at its
// file:line:column, the message naming the code point.
TEST(Model, NamesThatPrintAsAnotherNameAreRefusedAtTheirPlace) {
  struct Case {
    const char* escaped;  // as written in the YAML file
    const char* code_point;
  };
  const Case cases[] = {{"\\u3164", "U+3164"},  {"\\u115F", "U+115F"},     {"\\u034F", "U+034F"},
                        {"\\uFFA0", "U+FFA0"},  {"\\uFE0F", "U+FE0F"},     {"\\u180B", "U+180B"},
                        {"\\u2065", "U+2065"},  {"\\U000E0100", "U+E0100"}, {"\\u00AD", "U+00AD"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.code_point);
    const std::string text = std::string(R"(chainrt: 1
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, publishes: [t1]}
  - {name: b, kind: subscription, node: n, topic: t1, wcet: 2ms}
chains:
  - {name: safety, callbacks: [a, b]}
  - {name: "safety)") + c.escaped + R"(", callbacks: [a, b]}
)";
    try {
      load_model_from_string(text, "m.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      const Diagnostic& d = e.diagnostics()[0];
      EXPECT_EQ(d.line, 7);
      EXPECT_EQ(d.column, 12);
      EXPECT_EQ(d.field, "chains[1].name");
      EXPECT_NE(d.message.find(std::string("(") + c.code_point + ")"), std::string::npos) << d.message;
      EXPECT_EQ(d.str().rfind("m.yaml:7:12:", 0), 0u) << d.str();
    }
  }
  // Visible text beside them stays a name: a letter with a combining accent, Hangul, CJK.
  Model ok = load_model_from_string(R"(chainrt: 1
callbacks:
  - {name: "caf\u0065\u0301", kind: timer, node: "노드", period: 10ms, wcet: 1ms, publishes: ["話題"]}
  - {name: b, kind: subscription, node: "노드", topic: "話題", wcet: 2ms}
chains:
  - {name: safety, callbacks: ["caf\u0065\u0301", b]}
)",
                                    "ok.yaml");
  EXPECT_EQ(ok.chains.size(), 1u);
}

// A name of 10 MB is refused from the raw text, before the YAML parser scans it character by
// character (seconds): one located error, not the name-length one the parsed model would give.
TEST(Model, HugeUnbrokenTextIsRefusedBeforeParsing) {
  const std::string text = "chainrt: 1\ncallbacks:\n  - {name: " + std::string(10'000'000, 'a') +
                           ", kind: timer, node: n, period: 10ms, wcet: 1ms}\nchains:\n  - {name: c, callbacks: [a]}\n";
  try {
    load_model_from_string(text, "big.yaml");
    FAIL() << "accepted";
  } catch (const ModelError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, 3);
    EXPECT_EQ(e.diagnostics()[0].column, 12);
    EXPECT_NE(e.diagnostics()[0].message.find("without a space or separator"), std::string::npos) << e.what();
  }
  // with spaces, in quotes: refused by the first pass over the YAML events, before a tree is built
  std::string spaced(6'000'000, ' ');
  for (std::size_t i = 0; i < spaced.size(); i += 3) spaced[i] = 'a';
  try {
    load_model_from_string("chainrt: 1\ncallbacks:\n  - {name: \"" + spaced + "\", kind: timer}\n", "spaced.yaml");
    FAIL() << "accepted";
  } catch (const ModelError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, 3);
    EXPECT_NE(e.diagnostics()[0].message.find("a value of more than 64 KiB"), std::string::npos) << e.what();
  }
  // a long flow list of short names is no unbroken text
  std::string many = "chainrt: 1\ncallbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\nchains:\n";
  many += "  - {name: c, callbacks: [a]}\ntopics: [";
  for (int i = 0; i < 20000; ++i) many += (i ? ", " : "") + std::string("{name: t") + std::to_string(i) + "}";
  many += "]\n";
  EXPECT_NO_THROW(load_model_from_string(many, "many.yaml"));
}

// A timer period given as a rate or a fraction: the exact period recorded (the release grid's),
// its floor as `period`, the chain's period the same floor; written back in a form that reads
// back the same model.
TEST(Model, PeriodsAsRatesAndFractionsAreExact) {
  const char* text = R"(
callbacks:
  - {name: cam, kind: timer, node: n, period: 1/30 s, wcet: 1ms, phase: guaranteed, publishes: [t1]}
  - {name: log, kind: timer, node: n, period: 5 Hz, wcet: 1ms, phase: guaranteed}
  - {name: b, kind: subscription, node: n, topic: t1, wcet: 2ms}
chains:
  - {name: c, callbacks: [cam, b], period: 30 Hz}
)";
  const Model m = load_model_from_string(text, "rates.yaml");
  EXPECT_EQ(m.callback("cam").period, 33'333'333);
  ASSERT_TRUE(m.callback("cam").exact_period);
  EXPECT_EQ(*m.callback("cam").exact_period, (ExactPeriod{100'000'000, 3}));
  EXPECT_EQ(m.callback("log").period, 200'000'000);
  EXPECT_FALSE(m.callback("log").exact_period);  // 1/5 s is a whole number of ns
  EXPECT_EQ(m.chain("c").period, 33'333'333);
  EXPECT_EQ(m.chain("c").deadline, 33'333'333);
  const std::string saved = save_model_to_string(m);
  EXPECT_NE(saved.find("1/30 s"), std::string::npos) << saved;
  EXPECT_TRUE(load_model_from_string(saved, "saved.yaml") == m) << saved;
}

// Malformed periods are located errors (file, line, column, field) with the reason.
TEST(Model, MalformedPeriodsAreLocatedErrors) {
  const std::pair<const char*, const char*> bad[] = {
      {"1/0 s", "divides by zero"}, {"0 Hz", "not a positive period"}, {"1/30", "no unit"},
      {"30 hz", "unknown unit"},    {"200 kHz", "shorter than chainrt's limit"},
      {"1/200000 s", "shorter than chainrt's limit of 10us"}, {"1/4000 Hz", "longer than chainrt's limit"}};
  for (const auto& [period, reason] : bad) {
    const std::string text = std::string("callbacks:\n  - {name: a, kind: timer, node: n, wcet: 1us, period: ") +
                             period + "}\nchains:\n  - {name: c, callbacks: [a]}\n";
    try {
      load_model_from_string(text, "bad.yaml");
      ADD_FAILURE() << period << ": accepted";
    } catch (const ModelError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      const Diagnostic& d = e.diagnostics()[0];
      EXPECT_EQ(d.line, 2) << period;
      EXPECT_GT(d.column, 1) << period;
      EXPECT_NE(std::string(e.what()).find("bad.yaml:2:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("period"), std::string::npos) << e.what();
      EXPECT_NE(d.message.find(reason), std::string::npos) << period << ": " << d.message;
    }
  }
}

// An executor's dispatch_overhead: parsed as a duration, written back, located errors for bad
// values; the charged cost interval (facts.hpp) is [BCET, WCET + overhead], charged once.
TEST(Model, ExecutorDispatchOverheadParsesRoundTripsAndIsChecked) {
  Model m = load_model_from_string(R"(
executors:
  - {name: ex, dispatch_overhead: 20us}
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, bcet: 0.5ms}
  - {name: b, kind: subscription, node: n, topic: t, wcet: 2ms}
chains:
  - {name: c, callbacks: [a]}
)",
                                   "ov.yaml");
  EXPECT_EQ(m.executors[0].dispatch_overhead, 20'000);
  EXPECT_NE(save_model_to_string(m).find("dispatch_overhead: 20us"), std::string::npos) << save_model_to_string(m);
  EXPECT_EQ(load_model_from_string(save_model_to_string(m), "again.yaml"), m);
  EXPECT_EQ(charged_wcet(m, m.callbacks[0]), 1'020'000);
  Model storage;
  const Model& c = charge_dispatch_overhead(m, storage);
  EXPECT_EQ(&c, &storage);
  EXPECT_EQ(c.callbacks[0].wcet, 1'020'000);
  EXPECT_EQ(c.callbacks[0].best_case(), 500'000);  // the lower end stays the BCET
  EXPECT_EQ(c.callbacks[1].wcet, 2'020'000);
  EXPECT_EQ(c.callbacks[1].best_case(), 2'000'000);
  Model again;
  EXPECT_EQ(&charge_dispatch_overhead(c, again), &c);  // charged once
  for (const char* bad : {"-5us", "fast", "2h", "[1us]"}) {
    const std::string text = std::string("executors:\n  - {name: ex, dispatch_overhead: ") + bad +
                             "}\ncallbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\n"
                             "chains:\n  - {name: c, callbacks: [a]}\n";
    try {
      load_model_from_string(text, "bad.yaml");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.yaml:2:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("dispatch_overhead"), std::string::npos) << e.what();
    }
  }
  Model code = m;  // a model built in code: the validator refuses a negative overhead
  code.executors[0].dispatch_overhead = -1;
  EXPECT_THROW(validate(code, "generated"), ModelError);
}
