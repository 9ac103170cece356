// The schedule-abstraction graph exploration (analysis/src/sag.hpp) against an exhaustive brute
// force: for small random job sets, every integer release in each job's window, every integer
// execution time in [BCET, WCET], every integer delay on each precedence edge, and at every
// instant the job the non-preemptive JLFP scheduler takes: the highest-priority job ready by
// then (a job released at the very instant a completion frees the processor is seen). The analysis
// must bound every job's finish (0 counterexamples) and, without precedence constraints, equal
// the brute force's worst finish (exact, RTSS 2017) — the test fails when a rule is too
// optimistic (e.g. a job counted as certainly ready before its predecessors finished) and when
// it is pessimistic where the paper says it is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <vector>

#include "sag.hpp"
#include "sag_brute_force.hpp"

using namespace chainrt;
using namespace chainrt::detail::sag;
using chainrt::test::brute_force;
using chainrt::test::Truth;

namespace {

struct Lcg {
  std::uint64_t s;
  Duration operator()(Duration lo, Duration hi) {  // inclusive
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<Duration>((s >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

// A random job set: n jobs, releases in [0, 12] with a window of up to 2, costs 1..6 with a
// spread of up to 2, distinct priorities; with `chains`, each job after the first gets an edge
// from an earlier job with probability 1/2 (delay window 0..1).
// `groups` > 0: each job in one of that many mutually exclusive groups (several cores).
std::vector<Job> random_jobs(Lcg& rng, std::size_t n, bool chains, int groups = 0) {
  std::vector<Job> jobs(n);
  std::vector<std::int64_t> prio(n);
  for (std::size_t j = 0; j < n; ++j) prio[j] = static_cast<std::int64_t>(j);
  for (std::size_t j = n; j > 1; --j) std::swap(prio[j - 1], prio[static_cast<std::size_t>(rng(0, static_cast<Duration>(j) - 1))]);
  for (std::size_t j = 0; j < n; ++j) {
    Job& job = jobs[j];
    job.release.lo = rng(0, 12);
    job.release.hi = job.release.lo + rng(0, 2);
    job.cost.hi = rng(1, 6);
    job.cost.lo = std::max<Duration>(1, job.cost.hi - rng(0, 2));
    job.priority.value = prio[j];
    if (chains && j > 0 && rng(0, 1) == 1) {
      const std::size_t p = static_cast<std::size_t>(rng(0, static_cast<Duration>(j) - 1));
      const Duration d = rng(0, 1);
      job.preds.push_back(Pred{p, {0, d}});
      if (rng(0, 3) == 0) job.release = {0, 0};  // released by its predecessor alone
    }
    if (groups > 0) job.group = static_cast<int>(rng(0, groups));  // == groups: in none
    if (job.group == groups) job.group = -1;
  }
  return jobs;
}

// A random job set with joins (a fusion round's subscribers): each job after the first waits for
// 0-2 earlier jobs, over edges with delay windows [0, 0..2], released by them alone in half of the
// cases; releases in [0, 10] with windows of up to 2, costs 1..5 with a spread of up to 2.
std::vector<Job> random_joins(Lcg& rng, std::size_t n) {
  std::vector<Job> jobs = random_jobs(rng, n, false);
  for (std::size_t j = 1; j < n; ++j) {
    Job& job = jobs[j];
    job.release.lo = rng(0, 10);
    job.release.hi = job.release.lo + rng(0, 2);
    job.cost.hi = rng(1, 5);
    job.cost.lo = std::max<Duration>(1, job.cost.hi - rng(0, 2));
    const Duration preds = rng(0, 2);
    for (Duration k = 0; k < preds; ++k) {
      const std::size_t p = static_cast<std::size_t>(rng(0, static_cast<Duration>(j) - 1));
      if (std::none_of(job.preds.begin(), job.preds.end(), [&](const Pred& e) { return e.job == p; }))
        job.preds.push_back(Pred{p, {0, rng(0, 2)}});
    }
    if (!job.preds.empty() && rng(0, 1) == 1) job.release = {0, 0};
  }
  return jobs;
}

// Runs `sets` random job sets; returns the counterexamples (analysis below the truth) and
// counts the jobs whose worst finish the analysis matches exactly.
struct Tally {
  int counterexamples = 0, exact = 0, jobs = 0, best_counterexamples = 0;
};
Tally compare(std::uint64_t seed, int sets, std::size_t n, bool chains, std::size_t cores = 1, int groups = 0,
              bool joins = false) {
  Lcg rng{seed};
  Tally t;
  for (int s = 0; s < sets; ++s) {
    const std::vector<Job> jobs = joins ? random_joins(rng, n) : random_jobs(rng, n, chains, groups);
    const Truth truth = brute_force(jobs, cores);
    const Result r = explore(jobs, {}, cores);
    EXPECT_TRUE(r.complete) << r.why;
    for (std::size_t j = 0; j < n; ++j) {
      ++t.jobs;
      if (r.finish[j].hi < truth.worst[j]) {
        ++t.counterexamples;
        ADD_FAILURE() << "set " << s << " job " << j << ": analysis " << r.finish[j].hi << " < brute force "
                      << truth.worst[j];
      }
      if (r.finish[j].lo > truth.best[j]) ++t.best_counterexamples;
      if (r.finish[j].hi == truth.worst[j]) ++t.exact;
    }
  }
  return t;
}

}  // namespace

TEST(Sag, IndependentJobsExactAgainstBruteForce) {
  const Tally t = compare(11, 400, 6, false);
  EXPECT_EQ(t.counterexamples, 0);
  EXPECT_EQ(t.best_counterexamples, 0);
  EXPECT_EQ(t.exact, t.jobs) << "RTSS 2017: exact without precedence constraints";
}

TEST(Sag, PrecedenceSoundAgainstBruteForce) {
  const Tally t = compare(23, 400, 6, true);
  EXPECT_EQ(t.counterexamples, 0);
  EXPECT_EQ(t.best_counterexamples, 0);
  RecordProperty("exact_jobs", t.exact);
  RecordProperty("jobs", t.jobs);
  // Not asserted equal: merged finish intervals may pair predecessors' finishes that do not
  // occur together (sag.hpp). Measured: see the report of the run.
  std::printf("precedence: %d of %d job worst finishes exact\n", t.exact, t.jobs);
}

// Joins of several predecessors with delays, 6 jobs on one core: 0 counterexamples (400 job
// sets, or CHAINRT_SAG_SYSTEMS for a campaign).
TEST(Sag, JoinsSoundAgainstBruteForce) {
  const char* env = std::getenv("CHAINRT_SAG_SYSTEMS");
  const Tally t = compare(41, env && std::atoi(env) > 0 ? std::atoi(env) : 400, 6, true, 1, 0, true);
  EXPECT_EQ(t.counterexamples, 0);
  EXPECT_EQ(t.best_counterexamples, 0);
  std::printf("joins: %d of %d job worst finishes exact\n", t.exact, t.jobs);
}

// Several cores (global scheduling, ECRTS 2018), with and without precedence and mutually
// exclusive groups: 0 counterexamples against the brute force on 2 and 3 cores.
TEST(Sag, SeveralCoresSoundAgainstBruteForce) {
  for (std::size_t cores : {2, 3}) {
    for (bool chains : {false, true}) {
      const Tally t = compare(31 + cores + (chains ? 100 : 0), 300, 6, chains, cores, 2);
      EXPECT_EQ(t.counterexamples, 0) << cores << " cores, chains " << chains;
      EXPECT_EQ(t.best_counterexamples, 0) << cores << " cores, chains " << chains;
      std::printf("%zu cores, %s: %d of %d job worst finishes exact\n", cores, chains ? "precedence" : "independent",
                  t.exact, t.jobs);
    }
  }
}

// Background jobs out of the graph (explore_background): random sets of 7 jobs with precedence
// whose sinks are, half of them, moved behind every other job (some with C^min = 0, as jobs that
// may not exist): every job's finish interval holds the brute force's best and worst finish.
TEST(Sag, BackgroundJobsSoundAgainstBruteForce) {
  const char* env = std::getenv("CHAINRT_SAG_SYSTEMS");
  const int sets = env && std::atoi(env) > 0 ? std::atoi(env) : 400;
  Lcg rng{97};
  int counterexamples = 0, with_background = 0, background = 0, jobs_checked = 0;
  for (int s = 0; s < sets; ++s) {
    std::vector<Job> jobs = random_jobs(rng, 7, true);
    std::vector<bool> sink(jobs.size(), true);
    for (const Job& j : jobs)
      for (const Pred& e : j.preds) sink[e.job] = false;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (sink[j] && rng(0, 1) == 1) {
        jobs[j].priority.value += 100;
        if (rng(0, 2) == 0) jobs[j].cost.lo = 0;
      }
    std::size_t n_bg = 0;
    const Result r = explore_background(jobs, {}, &n_bg);
    ASSERT_TRUE(r.complete) << r.why;
    with_background += n_bg > 0;
    background += static_cast<int>(n_bg);
    const Truth truth = brute_force(jobs, 1);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      ++jobs_checked;
      if (r.finish[j].hi < truth.worst[j] || r.finish[j].lo > truth.best[j]) {
        ++counterexamples;
        ADD_FAILURE() << "set " << s << " job " << j << ": [" << r.finish[j].lo << ", " << r.finish[j].hi
                      << "] against the brute force's [" << truth.best[j] << ", " << truth.worst[j] << "]";
      }
      EXPECT_LE(r.start[j].lo, r.start[j].hi);
    }
  }
  EXPECT_EQ(counterexamples, 0);
  EXPECT_GE(with_background, sets / 2) << "too few sets with background jobs: the check would say little";
  std::printf("background: %d of %d sets with background jobs (%d jobs), %d job finishes checked\n", with_background,
              sets, background, jobs_checked);
}

// Background: the sinks at the tail of the priority order only (a sink ahead of a job with a
// successor stays in the graph).
TEST(Sag, BackgroundIsTheTailOfSinksInPriorityOrder) {
  std::vector<Job> jobs(3);
  for (Job& j : jobs) j.cost = {1, 1};
  jobs[0].priority.value = 1;
  jobs[1].priority.value = 2;
  jobs[1].preds.push_back(Pred{0, {0, 0}});
  jobs[2].priority.value = 0;  // a sink ahead of the others: not background
  std::size_t n_bg = 9;
  EXPECT_TRUE(explore_background(jobs, {}, &n_bg).complete);
  EXPECT_EQ(n_bg, 1u);  // job 1 (a sink, the lowest) only
  jobs[1].priority.value = 1;
  jobs[0].priority.value = 2;  // now the lowest job has a successor
  EXPECT_TRUE(explore_background(jobs, {}, &n_bg).complete);
  EXPECT_EQ(n_bg, 0u);
}

// The shape of a case the shipped uniprocessor analysis got wrong (np-schedulability-analysis): a low-priority job released first, a high-priority job whose
// predecessor has not finished when its own release passes. Counting the successor as certainly
// released at its release (without its predecessor) cuts the low-priority job's latest start
// and gives a bound below the truth.
TEST(Sag, SuccessorIsNotCertainlyReadyBeforeItsPredecessor) {
  std::vector<Job> jobs(3);
  jobs[0] = Job{{0, 0}, {5, 5}, {0, 0}, {}};          // predecessor, highest priority
  jobs[1] = Job{{0, 0}, {3, 3}, {0, 1}, {{0, {0, 1}}}};  // released at 0 but needs job 0 (+0..1)
  jobs[2] = Job{{1, 1}, {4, 4}, {0, 2}, {}};          // low priority, ready at 1
  const Truth truth = brute_force(jobs);
  const Result r = explore(jobs);
  ASSERT_TRUE(r.complete);
  for (std::size_t j = 0; j < jobs.size(); ++j) EXPECT_GE(r.finish[j].hi, truth.worst[j]) << j;
  // Job 0 runs [0, 5); job 1 is ready at 5 or 6, job 2 since 1: when the delay is 1, job 2 goes
  // first at 5 and job 1 finishes at 5 + 4 + 3 = 12. Counted as certainly released at 0, job 1 would
  // forbid job 2 from starting before it and be bounded by 8.
  EXPECT_EQ(truth.worst[1], 12);
  EXPECT_EQ(r.finish[1].hi, 12);
}

// A successor whose predecessor finished before the last dispatched job started is ready when
// the processor frees, whenever in A(v) that is: job 0 runs first and releases job 1 at its
// finish (in [1, 3]), job 2 (released at 1, above job 1) goes next, then job 1, before the
// low-priority job 3 waiting since 0. Job 0's finish interval alone ([1, 3] against A(v) = [2, 4]
// after job 2) would let job 3 start at 2 and push job 1 to 8.
TEST(Sag, PredecessorDoneBeforeTheLastJobStartedIsReadyWhenTheProcessorFrees) {
  std::vector<Job> jobs(4);
  jobs[0] = Job{{0, 0}, {1, 3}, {0, 0}, {}};
  jobs[1] = Job{{0, 0}, {1, 1}, {0, 2}, {{0, {0, 0}}}};
  jobs[2] = Job{{1, 1}, {1, 1}, {0, 1}, {}};
  jobs[3] = Job{{0, 0}, {5, 5}, {0, 3}, {}};
  const Truth truth = brute_force(jobs);
  const Result r = explore(jobs);
  ASSERT_TRUE(r.complete);
  for (std::size_t j = 0; j < jobs.size(); ++j) EXPECT_GE(r.finish[j].hi, truth.worst[j]) << j;
  EXPECT_EQ(truth.worst[1], 5);
  EXPECT_EQ(r.finish[1].hi, 5);
}

// States with the same jobs dispatched but different last jobs merge only where no job is ready
// when the processor frees: merged, the state forgets which job frees it, and with it that job
// 3 (released by job 1) is ready then; job 0 or 2 could then start before it in the merged
// interval. A random set of the precedence test above; the brute force's worst finish of job 3
// is 20 (the merged states gave 23).
TEST(Sag, StatesMergeOnlyWithTheSameLastJobWhereAJobIsReadyWhenTheProcessorFrees) {
  std::vector<Job> jobs(6);
  jobs[0] = Job{{7, 9}, {3, 4}, {0, 4}, {}};
  jobs[1] = Job{{5, 7}, {1, 1}, {0, 0}, {}};
  jobs[2] = Job{{6, 8}, {1, 1}, {0, 5}, {}};
  jobs[3] = Job{{0, 0}, {4, 5}, {0, 3}, {{1, {0, 1}}}};
  jobs[4] = Job{{0, 0}, {1, 2}, {0, 1}, {{2, {0, 1}}}};
  jobs[5] = Job{{0, 0}, {3, 4}, {0, 2}, {{4, {0, 0}}}};
  const Truth truth = brute_force(jobs);
  const Result r = explore(jobs);
  ASSERT_TRUE(r.complete);
  for (std::size_t j = 0; j < jobs.size(); ++j) EXPECT_EQ(r.finish[j].hi, truth.worst[j]) << j;
  EXPECT_EQ(r.finish[3].hi, 20);
}

// A thread above: a job of it may run in [start.lo, finish.hi] for at most its cost, and at most
// finish.hi - t after t. A job of the thread below started at 0 needing 3 finishes by 3 + 2
// (the first job above, window [0, 4]) = 5, then the second (start window [4, 6], cost 2) may
// start before 5: 7. Started at 3 (the first job above can do at most 4 - 3 = 1 after it): 3 + 3
// + 1 + 2 = 9. The threads above are idle at some instant in [0, 2] (the first runs 2 of [0, 4],
// the second starts at 4 at the earliest), in [5, 7] (the second may run there at most 2) and at
// 12; and where a job may start at that very instant, not before its work is done.
TEST(Sag, PreemptionAboveCountsTheWorkThatMayRunInTheWindow) {
  const Preemption above({{{0, 2}, {2, 4}, 2}, {{4, 6}, {6, 8}, 2}});
  EXPECT_EQ(above.finish_by(0, 3), 7);
  EXPECT_EQ(above.finish_by(3, 3), 9);
  EXPECT_EQ(above.work(0, 4), 2);  // the second starts at 4 at the earliest: nothing of it before 4
  EXPECT_EQ(above.work(0, 5), 4);
  EXPECT_EQ(above.idle_by(0), 2);
  EXPECT_EQ(above.idle_by(5), 7);
  EXPECT_EQ(above.idle_by(4), 6);  // the second may start at 4
  EXPECT_EQ(above.idle_by(12), 12);
  EXPECT_EQ(Preemption({}).finish_by(5, 3), 8);
}

// Jobs above released, without delay, by jobs of the analysed thread (or of one below it) come
// one group at a time and never while the analysed thread has a job: of groups 7 and 9 (windows
// overlapping [5, 20)) the larger counts, and a group job that may be released only after the
// window's start not at all; a job without a group counts in full.
TEST(Sag, PreemptionCountsOneGroupReleasedBeforeTheWindow) {
  const Preemption above({{{0, 10}, {2, 12}, 2, 7}, {{1, 10}, {2, 12}, 1, 7}, {{3, 9}, {4, 12}, 2, 9},
                          {{6, 8}, {7, 12}, 4, 9}, {{4, 6}, {5, 12}, 1}});
  EXPECT_EQ(above.work(5, 20), 3 + 1);  // group 7 (2 + 1), not 9's 2 (its 4 starts after 5); the ungrouped 1
  const Preemption ungrouped({{{0, 10}, {2, 12}, 2}, {{1, 10}, {2, 12}, 1}, {{3, 9}, {4, 12}, 2},
                              {{6, 8}, {7, 12}, 4}, {{4, 6}, {5, 12}, 1}});
  EXPECT_EQ(ungrouped.work(5, 20), 10);
}

// Two jobs below a thread above that may run [0, 4] (cost 3): the high-priority one released at
// 1, the low one at 2. The selection due at 1 may wait until the thread above is idle (by 4), and
// whenever it happens it sees the high one (released at 1): high by 4 + 1 = 5, low after it by 7
// — never the low one first (it is released after the high one).
TEST(Sag, SelectionWaitsWhileAThreadAboveRunsAndSeesWhatIsReleased) {
  const Preemption above({{{0, 0}, {3, 4}, 3}});
  std::vector<Job> jobs(2);
  jobs[0] = Job{{1, 1}, {1, 1}, {0, 0}, {}};  // high priority, released at 1
  jobs[1] = Job{{2, 2}, {2, 2}, {0, 1}, {}};  // low priority, released at 2
  const Result r = explore(jobs, {}, 1, &above);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.start[0].hi, 4);
  EXPECT_EQ(r.finish[0].hi, 5);
  EXPECT_EQ(r.finish[1].hi, 7);
  EXPECT_GE(r.start[1].lo, 2);
  const Result alone = explore(jobs);  // without the thread above the high one runs at 1, the low one after it
  EXPECT_EQ(alone.finish[0].hi, 2);
  EXPECT_EQ(alone.finish[1].hi, 4);
}

TEST(Sag, CycleRefused) {
  std::vector<Job> jobs(2);
  jobs[0].preds.push_back({1, {0, 0}});
  jobs[1].preds.push_back({0, {0, 0}});
  EXPECT_THROW(explore(jobs), std::invalid_argument);
}

TEST(Sag, StateLimitReported) {
  Lcg rng{5};
  const std::vector<Job> jobs = random_jobs(rng, 8, false);
  Limits lim;
  lim.max_states = 3;
  const Result r = explore(jobs, lim);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.why.find("limits"), std::string::npos);
}

namespace {

// The witness of each job's latest finish replayed as one scenario (its releases and costs, every
// delay at its largest, as the simulator's hops): how many reach the bound exactly; every
// release and cost within its window.
int replayed_exact(std::uint64_t seed, int sets, bool chains, int* jobs_out) {
  Lcg rng{seed};
  int exact = 0;
  for (int s = 0; s < sets; ++s) {
    const std::vector<Job> jobs = random_jobs(rng, 6, chains);
    const Result r = explore(jobs);
    for (std::size_t target = 0; target < jobs.size(); ++target) {
      const auto w = witness(jobs, target);
      EXPECT_TRUE(w.has_value()) << "set " << s << " job " << target;
      if (!w) continue;
      ++*jobs_out;
      EXPECT_EQ(w->finish, r.finish[target].hi);
      std::vector<std::vector<Duration>> delay(jobs.size());
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        EXPECT_GE(w->release[j], jobs[j].release.lo);
        EXPECT_LE(w->release[j], jobs[j].release.hi);
        EXPECT_GE(w->cost[j], jobs[j].cost.lo);
        EXPECT_LE(w->cost[j], jobs[j].cost.hi);
        for (const Pred& p : jobs[j].preds) delay[j].push_back(p.delay.hi);
      }
      Truth one{std::vector<Duration>(jobs.size(), chainrt::test::kNone),
                std::vector<Duration>(jobs.size(), std::numeric_limits<Duration>::max())};
      chainrt::test::schedules(jobs, w->release, w->cost, delay, one);
      EXPECT_LE(one.worst[target], r.finish[target].hi);
      exact += one.worst[target] == r.finish[target].hi;
    }
  }
  return exact;
}

}  // namespace

// Without precedence the graph is exact (RTSS 2017), and the path walked back from the latest
// dispatch of a job is one schedule that reaches its latest finish: replayed, every job's witness
// finishes exactly at the bound.
TEST(Sag, WitnessReachesEveryLatestFinishWithoutPrecedence) {
  int jobs = 0;
  const int exact = replayed_exact(11, 400, false, &jobs);
  EXPECT_EQ(jobs, 2400);
  EXPECT_EQ(exact, jobs);
}

// With precedence the witness is still a valid scenario (within every window, never above the
// bound); how many reach the bound is measured (merged hulls, sag.hpp).
TEST(Sag, WitnessWithPrecedenceIsAValidScenario) {
  int jobs = 0;
  const int exact = replayed_exact(23, 400, true, &jobs);
  std::printf("precedence: the witness reaches %d of %d job worst finishes\n", exact, jobs);
  EXPECT_GT(exact, jobs / 2);
}
