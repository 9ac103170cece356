// Round-tripping: load -> save -> load gives the same model, for the example models and for
// randomly generated valid models (property test over many seeds).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>

#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;
namespace fs = std::filesystem;

namespace {

struct SplitMix64 {  // tiny seeded PRNG, identical on every platform
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
  bool coin() { return next() & 1; }
};

Duration random_duration(SplitMix64& r, Duration lo, Duration hi) {
  // Mix round and odd values so every unit of the writer is exercised.
  Duration d = lo + static_cast<Duration>(r.next() % static_cast<std::uint64_t>(hi - lo + 1));
  switch (r.uniform(0, 3)) {
    case 0: return std::max<Duration>(1'000'000, d / 1'000'000 * 1'000'000);
    case 1: return std::max<Duration>(1'000, d / 1'000 * 1'000);
    default: return d;
  }
}

Model random_model(std::uint64_t seed) {
  SplitMix64 r{seed};
  Model m;
  m.name = "random_" + std::to_string(seed);
  m.constrained_deadlines = r.coin();
  int hosts = r.uniform(1, 2);
  for (int h = 0; h < hosts; ++h) m.hosts.push_back(Host{"h" + std::to_string(h), r.uniform(1, 4)});
  int executors = r.uniform(1, 3);
  for (int e = 0; e < executors; ++e) {
    Executor ex;
    ex.name = "e" + std::to_string(e);
    ex.host = m.hosts[r.uniform(0, hosts - 1)].name;
    ex.process = r.coin() ? ex.name : "p0";
    ex.policy = static_cast<Policy>(r.uniform(0, 5));
    if (r.coin()) ex.priority = r.uniform(0, 99);
    int cores = m.host(ex.host) ? m.host(ex.host)->cores : 1;
    m.reindex();
    cores = 1;
    for (const auto& h : m.hosts)
      if (h.name == ex.host) cores = h.cores;
    int threads = r.uniform(1, 3);
    for (int t = 0; t < threads; ++t) {
      Thread th{"t" + std::to_string(t)};
      if (r.coin()) th.cores = {r.uniform(0, cores - 1)};
      int sched = r.uniform(0, 2);
      if (sched == 1) th.fifo_priority = r.uniform(1, 99);
      if (sched == 2) {
        Duration period = random_duration(r, 1'000'000, 20'000'000);
        th.reservation = Reservation{std::max<Duration>(1, period / r.uniform(1, 4)), period};
      }
      ex.threads.push_back(th);
    }
    if (r.coin()) {
      ThreadClass tc{"rt", CriticalityClass::RealTime, {0}, r.uniform(1, 99), std::nullopt};
      ex.thread_classes.push_back(tc);
      ex.thread_classes.push_back(ThreadClass{"be", CriticalityClass::BestEffort, {}, std::nullopt,
                                              Reservation{2'000'000, 10'000'000}});
    }
    m.executors.push_back(ex);
  }
  int nodes = r.uniform(1, 4);
  for (int n = 0; n < nodes; ++n) {
    m.nodes.push_back(Node{"n" + std::to_string(n), m.executors[r.uniform(0, executors - 1)].name});
    if (r.coin())
      m.groups.push_back(CallbackGroup{"g" + std::to_string(n), r.coin() ? GroupType::Reentrant : GroupType::MutuallyExclusive,
                                       m.nodes.back().name});
  }
  // Chains are built as timer -> subscription -> ... with one topic per hop; some branch.
  int chains = r.uniform(1, 4);
  int topic_id = 0;
  for (int c = 0; c < chains; ++c) {
    Chain ch;
    ch.name = "chain" + std::to_string(c);
    int len = r.uniform(1, 4);
    std::string prev;
    Duration period = random_duration(r, 5'000'000, 500'000'000);
    std::string service, caller_node;  // the previous callback served `service` for caller_node
    for (int k = 0; k < len; ++k) {
      Callback cb;
      cb.name = ch.name + "_cb" + std::to_string(k);
      // after a server: the response hop to the caller node's client callback, now and then
      const bool client = !service.empty() && r.coin();
      const Node& node = client ? *std::find_if(m.nodes.begin(), m.nodes.end(),
                                               [&](const Node& n) { return n.name == caller_node; })
                                : m.nodes[r.uniform(0, nodes - 1)];
      cb.node = node.name;
      for (const auto& g : m.groups)
        if (g.node == node.name && r.coin()) cb.group = g.name;
      cb.wcet = random_duration(r, 1'000, period / 8);
      if (r.coin()) cb.bcet = std::max<Duration>(1, cb.wcet / r.uniform(1, 5));
      if (r.coin()) cb.priority = r.uniform(-5, 50);
      if (k == 0) {
        cb.kind = CallbackKind::Timer;
        cb.period = period;
        if (r.coin()) cb.offset = period / r.uniform(2, 9);
        if (r.coin()) cb.jitter = period / r.uniform(10, 20);
      } else if (client) {
        cb.kind = CallbackKind::Client;
        cb.service = service;
      } else if (r.uniform(0, 4) == 0) {  // a request hop: the previous callback calls it
        cb.kind = CallbackKind::Service;
        cb.service = "service" + std::to_string(topic_id);
        m.callbacks.back().calls.push_back(cb.service);
        m.services.push_back(Service{cb.service, static_cast<Bytes>(r.uniform(1, 4096)),
                                     static_cast<Bytes>(r.uniform(1, 1 << 20))});
        caller_node = m.callbacks.back().node;
      } else {
        cb.kind = CallbackKind::Subscription;
        cb.topic = prev;
        if (r.coin()) cb.queue_depth = r.uniform(1, 10);
      }
      service = cb.kind == CallbackKind::Service ? cb.service : "";
      std::string topic = "topic" + std::to_string(topic_id++);
      cb.publishes.push_back(topic);
      m.topics.push_back(Topic{topic, static_cast<Bytes>(r.uniform(1, 1 << 20))});
      const Executor* ex = nullptr;
      for (const auto& e : m.executors)
        if (e.name == node.executor) ex = &e;
      if (ex && !ex->threads.empty() && r.uniform(0, 3) == 0) cb.affinity = {ex->threads.front().name};
      m.callbacks.push_back(cb);
      ch.callbacks.push_back(cb.name);
      prev = topic;
    }
    if (len >= 2 && r.coin()) {  // a branch off the first callback: a non-linear chain
      Callback extra;
      extra.name = ch.name + "_branch";
      extra.kind = CallbackKind::Subscription;
      extra.node = m.nodes.front().name;
      extra.topic = m.callbacks[m.callbacks.size() - len].publishes.front();
      extra.wcet = 1'000'000;
      m.callbacks.push_back(extra);
      ch.callbacks.push_back(extra.name);
      for (int k = 1; k < len; ++k) ch.hops.push_back(Hop{ch.callbacks[k - 1], ch.callbacks[k]});
      ch.hops.push_back(Hop{ch.callbacks.front(), extra.name});
    }
    ch.deadline = r.coin() ? period : period / 2;
    ch.criticality_class = r.coin() ? CriticalityClass::RealTime : CriticalityClass::BestEffort;
    if (ch.criticality_class == CriticalityClass::RealTime) ch.criticality = r.uniform(0, 3);
    if (r.coin()) ch.priority = r.uniform(1, 20);
    m.chains.push_back(ch);
  }
  if (r.coin()) {
    m.communication.remote = CommCost{random_duration(r, 1'000, 1'000'000), random_duration(r, 1, 100'000)};
    m.communication.measurements.push_back(CommMeasurement{CommKind::Remote, 4096, 250'000});
  }
  validate(m, "random");
  return m;
}

}  // namespace

TEST(RoundTrip, ExampleModels) {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CHAINRT_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    Model a = load_model(entry.path().string());
    std::string text = save_model_to_string(a);
    Model b = load_model_from_string(text, "saved");
    EXPECT_TRUE(a == b) << text;
    EXPECT_EQ(text, save_model_to_string(b));
    ++seen;
  }
  EXPECT_GE(seen, 4);
}

TEST(RoundTrip, RandomModelsProperty) {
  int branching = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(seed);
    Model a;
    ASSERT_NO_THROW(a = random_model(seed));
    std::string text = save_model_to_string(a);
    Model b;
    ASSERT_NO_THROW(b = load_model_from_string(text, "saved")) << text;
    ASSERT_TRUE(a == b) << text;
    EXPECT_EQ(text, save_model_to_string(b));
    Model c = b;
    validate(c);  // validating again changes nothing
    EXPECT_TRUE(b == c);
    for (const auto& ch : a.chains) branching += !ch.is_linear();
  }
  EXPECT_GT(branching, 20);  // the property really covers branching chains
}
