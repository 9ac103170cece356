// The runtime's threads as the model gives them (run_model through sched::make_setup): a thread
// without a priority of its own runs SCHED_FIFO at its executor's `priority` — the rule the
// simulator and the analyses read (model/facts.hpp, thread_fifo_priority). Read back from the
// kernel while the run goes on.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/executor.hpp"
#include "chainrt/runtime/model_app.hpp"

namespace chainrt::runtime {
namespace {

bool can_use_fifo() {
  // SCHED_FIFO needs privilege; a helper thread is asked (the test's own thread keeps its own).
  bool ok = false;
  std::thread th([&] {
    sched_param p{};
    p.sched_priority = 1;
    ok = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
  });
  th.join();
  return ok;
}

struct Seen {
  int policy = -1;
  int priority = -1;
};

// Before the run stops, reads every executor thread's policy and priority from the kernel.
struct Probe : RunObserver {
  std::vector<Executor*> executors;
  std::vector<std::vector<Seen>> seen;
  void prepared(const chainrt::Executor&, Executor& x) override { executors.push_back(&x); }
  void stopping() override {
    for (Executor* x : executors) {
      std::vector<Seen> s;
      for (sched::ThreadId t = 0; t < x->thread_count(); ++t) {
        Seen one;
        const int tid = x->thread_tid(t);
        sched_param p{};
        if (tid != 0 && sched_getparam(tid, &p) == 0) {
          one.policy = sched_getscheduler(tid);
          one.priority = p.sched_priority;
        }
        s.push_back(one);
      }
      seen.push_back(std::move(s));
    }
  }
};

TEST(ModelThreads, ExecutorPriorityIsItsThreadsFifoPriority) {
  if (!can_use_fifo()) GTEST_SKIP() << "SCHED_FIFO needs privilege";
  // `fallback`: two threads without a priority under executor priority 7, one with its own 9.
  // `other`: executor priority 0 (no SCHED_FIFO priority) and a thread without one.
  const Model m = load_model_from_string(R"(
chainrt: 1
hosts: [{name: h, cores: 2}]
executors:
  - {name: fallback, host: h, policy: fp, priority: 7, threads: [{name: a}, {name: b}, {name: own, priority: 9}]}
  - {name: other, host: h, policy: fp, priority: 0, threads: [{name: t0}]}
nodes: [{name: n, executor: fallback}, {name: o, executor: other}]
callbacks:
  - {name: tick, kind: timer, node: n, period: 10ms, wcet: 100us, priority: 1}
  - {name: tock, kind: timer, node: o, period: 10ms, wcet: 100us, priority: 1}
chains: [{name: c, callbacks: [tick], deadline: 10ms}, {name: d, callbacks: [tock], deadline: 10ms}]
)",
                                          "<model_threads>");
  Probe probe;
  ModelRunOptions o;
  o.duration = 400'000'000;
  o.warmup = 0;
  o.observer = &probe;
  o.topic_prefix = "/crt_threads_" + std::to_string(getpid());
  const RunReport r = run_model(m, o);
  (void)r;
  ASSERT_EQ(probe.seen.size(), 2u);
  for (std::size_t x = 0; x < 2; ++x) {
    const chainrt::Executor& e = m.executors[x];
    ASSERT_EQ(probe.seen[x].size(), e.threads.size()) << e.name;
    for (std::size_t t = 0; t < e.threads.size(); ++t) {
      const Seen& s = probe.seen[x][t];
      const std::optional<int> want = thread_fifo_priority(e, e.threads[t]);  // the one rule
      EXPECT_EQ(s.policy, want ? SCHED_FIFO : SCHED_OTHER) << e.name << "/" << e.threads[t].name;
      EXPECT_EQ(s.priority, want.value_or(0)) << e.name << "/" << e.threads[t].name;
    }
  }
  // and what that rule says here
  EXPECT_EQ(probe.seen[0][0].priority, 7);
  EXPECT_EQ(probe.seen[0][1].priority, 7);
  EXPECT_EQ(probe.seen[0][2].priority, 9);
  EXPECT_EQ(probe.seen[1][0].policy, SCHED_OTHER);
}

}  // namespace
}  // namespace chainrt::runtime
