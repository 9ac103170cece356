// An exhaustive brute force over a set of non-preemptive jobs (analysis/src/sag.hpp's Job) for
// the tests of the sag analysis: every integer release in each job's window, every integer
// execution time in [C^min, C^max], every integer delay on each precedence edge, each scenario
// scheduled as the executor does on one thread (at each instant the processor is free, the
// highest-priority job ready by then; a job released at the very instant of a completion is
// seen). Exponential: for a handful of jobs with narrow windows only.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "sag.hpp"

namespace chainrt::test {

using detail::sag::Job;

inline constexpr Duration kNone = std::numeric_limits<Duration>::min();

// Worst and best finish of each job over every scenario and every scheduler choice.
struct Truth {
  std::vector<Duration> worst, best;
};

// One scenario (fixed releases, costs, delays): every schedule the scheduler may choose, on
// `cores` processors (a core that frees takes the highest-priority job ready by then; a job of
// a group waits for the group's running job).
inline void schedules(const std::vector<Job>& jobs, const std::vector<Duration>& rel, const std::vector<Duration>& cost,
               const std::vector<std::vector<Duration>>& delay, Truth& t, std::size_t cores = 1) {
  const std::size_t n = jobs.size();
  std::vector<Duration> fin(n, kNone), free(cores, 0);
  std::vector<Duration> group_free;
  for (const Job& j : jobs)
    if (j.group >= 0) group_free.resize(std::max(group_free.size(), static_cast<std::size_t>(j.group) + 1), 0);
  std::function<void(std::size_t)> step = [&](std::size_t left) {
    if (left == 0) {
      for (std::size_t j = 0; j < n; ++j) {
        t.worst[j] = std::max(t.worst[j], fin[j]);
        t.best[j] = std::min(t.best[j], fin[j]);
      }
      return;
    }
    std::vector<Duration> ready(n, kNone);
    Duration first = std::numeric_limits<Duration>::max();
    for (std::size_t j = 0; j < n; ++j) {
      if (fin[j] != kNone) continue;
      Duration r = rel[j];
      bool ok = true;
      for (std::size_t e = 0; e < jobs[j].preds.size(); ++e) {
        const std::size_t p = jobs[j].preds[e].job;
        if (fin[p] == kNone) ok = false;
        else r = std::max(r, fin[p] + delay[j][e]);
      }
      if (!ok) continue;
      if (jobs[j].group >= 0) r = std::max(r, group_free[static_cast<std::size_t>(jobs[j].group)]);
      ready[j] = r;
      first = std::min(first, r);
    }
    const std::size_t core = static_cast<std::size_t>(std::min_element(free.begin(), free.end()) - free.begin());
    const Duration now = std::max(free[core], first);
    for (std::size_t j = 0; j < n; ++j) {
      if (ready[j] == kNone || ready[j] > now) continue;
      // a higher-priority job ready by now is taken first (a release at the instant of a
      // completion is seen by the selection that follows it)
      bool blocked = false;
      for (std::size_t x = 0; x < n; ++x)
        blocked |= ready[x] != kNone && ready[x] <= now && jobs[x].priority < jobs[j].priority;
      if (blocked) continue;
      fin[j] = now + cost[j];
      const Duration was = free[core];
      free[core] = fin[j];
      Duration group_was = 0;
      if (jobs[j].group >= 0) std::swap(group_was, group_free[static_cast<std::size_t>(jobs[j].group)]);
      if (jobs[j].group >= 0) group_free[static_cast<std::size_t>(jobs[j].group)] = fin[j];
      step(left - 1);
      if (jobs[j].group >= 0) group_free[static_cast<std::size_t>(jobs[j].group)] = group_was;
      free[core] = was;
      fin[j] = kNone;
    }
  };
  step(n);
}

// Every scenario: releases, then costs, then delays, one job at a time.
inline Truth brute_force(const std::vector<Job>& jobs, std::size_t cores = 1) {
  const std::size_t n = jobs.size();
  Truth t{std::vector<Duration>(n, kNone), std::vector<Duration>(n, std::numeric_limits<Duration>::max())};
  std::vector<Duration> rel(n), cost(n);
  std::vector<std::vector<Duration>> delay(n);
  for (std::size_t j = 0; j < n; ++j) delay[j].assign(jobs[j].preds.size(), 0);
  std::function<void(std::size_t)> pick = [&](std::size_t k) {
    if (k == n) return schedules(jobs, rel, cost, delay, t, cores);
    std::function<void(std::size_t)> edge = [&](std::size_t e) {
      if (e == jobs[k].preds.size()) {
        for (rel[k] = jobs[k].release.lo; rel[k] <= jobs[k].release.hi; ++rel[k])
          for (cost[k] = jobs[k].cost.lo; cost[k] <= jobs[k].cost.hi; ++cost[k]) pick(k + 1);
        return;
      }
      for (delay[k][e] = jobs[k].preds[e].delay.lo; delay[k][e] <= jobs[k].preds[e].delay.hi; ++delay[k][e]) edge(e + 1);
    };
    edge(0);
  };
  pick(0);
  return t;
}

}  // namespace chainrt::test
