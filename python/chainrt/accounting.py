"""The accounting of a real run: every chain instance above its bound, with its cause.

A bound holds under the model's assumptions: every callback runs at most its WCET, and the CPU
is there for the highest-priority ready thread except for what the model's platform term
charges. An instance whose response time exceeds its chain's bound therefore has one of three
causes (docs/analysis.md, "Accounting for every instance above its bound"):

* ``platform`` — the platform probe (chainrt.crosslayer.platform) saw a blackout attributed to
  the platform, not to the model's own threads, overlap the instance's **busy window**;
* ``overrun`` — a callback that executed in that window used more CPU time than its WCET in the
  model (by more than ``OVERRUN_RATIO``; smaller excesses are the runtime's own cost of
  a dispatch, which the model must contain);
* ``unexplained`` — neither: a defect of the model, the analysis, the executor or the
  measurement.

Against the *simulated* worst case (one trajectory of the model, every callback at its WCET,
messages and dispatches free) a fourth cause applies before ``unexplained``:

* ``runtime`` — the instance's response less the runtime's own time in it is within the
  simulated worst case. The runtime's own time (:func:`runtime_time`) is what the recorded run
  shows outside the model: the part of [release, finish] in which no callback of the executors
  that may delay the instance ran (dispatches, message deliveries, wake-ups), and the time
  callbacks took beyond min(their CPU time, their WCET) (CPU over the WCET below the overrun
  tolerance; the CPU lost while running to what is below the platform probe's threshold). The
  analyses' bounds must contain these costs (they are no cause against a bound); the simulation
  has none of them. Beside it, the time a **cache-only run** of a fused callback took beyond
  what the simulation charges it (:func:`cache_only_runs`: a member of an implicit fusion set
  whose input does not complete the set is charged its BCET, not its WCET — the simulator's
  rule, from ``_core.cache_only_charges``): the simulated worst case never contains it.
  On several CPUs (:class:`Waits`) a hop's wait is the runtime's while a thread of its
  executor ran no callback and fewer callbacks ran than there are CPUs (a thread and a CPU
  were there: a wake-up, a delivery), from when the hop became ready (a fusion's trigger).

The busy window of an instance J of chain i released at r and finished at f is [t0, f], t0 the
earliest of, for every hop h of J (the executions of J's callbacks), the start of the busy
period of h's executor that contains the instant h became ready (r for the first hop, the
previous hop's finish for the others). An executor's busy periods are the union of
[ready, finish] of its executions — ready being the release of a chain's first callback, the
previous hop's finish for a later one, the start otherwise — with gaps shorter than
``gap_ns`` (a dispatch's own latency) closed. At an instant outside them no work was pending on
the executor, so nothing that happened before could reach J through backlog; the level-i busy
period of J (pending work of J's priority or higher) lies inside it.

Everything here is a function of the recorded run — executions, instances, bounds, WCETs and
blackouts — and testable without one (tests/python/test_accounting.py).
"""

from __future__ import annotations

import bisect
import copy
import functools
import gzip
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import _core, output
from .crosslayer import platform as plat
from .crosslayer.platform import PlatformProbe
from .runtime import quantile

PLATFORM, OVERRUN, RUNTIME, BOUNDED, UNEXPLAINED = "platform", "overrun", "runtime", "bounded", "unexplained"
OVERRUN_RATIO = 1.10  # CPU time per instance > 1.1 x the model's WCET: the model understates it
# (runtime, bounded: against a simulated worst case only)
CAUSES = (PLATFORM, OVERRUN, RUNTIME, BOUNDED, UNEXPLAINED)
ACCOUNTED = "accounted: "  # how a verdict's cause from the accounting begins (cause_text)
# gaps between an executor's executions shorter than this are its own dispatch latency, not
# idle time (the probe's threshold: shorter blackouts are not seen either)
GAP_NS = plat.PROBE_THRESHOLD_US * 1000


@dataclass(frozen=True)
class Execution:
    """One callback execution as the executor recorded it (CLOCK_MONOTONIC ns)."""
    callback: str
    executor: str
    thread: int
    start: int
    finish: int
    cpu: int
    release: int | None = None  # the release of the chain instance it served (None: none)
    # the dispatching real-time thread's late wake-up just before it: it slept until slept[0]
    # and ran again only at slept[1] (None: it woke in time, or was not asleep)
    slept: tuple[int, int] | None = None


@dataclass(frozen=True)
class Instance:
    """One chain instance: its release, the finish of its last callback, its hops."""
    chain: str
    release: int
    finish: int
    hops: tuple[Execution, ...] = ()

    @property
    def response(self) -> int:
        return self.finish - self.release


@dataclass
class Case:
    """One instance above its bound, classified."""
    chain: str
    release: int
    response_ns: int
    bound_ns: int
    window: tuple[int, int]
    cause: str
    platform_ns: int = 0                                # platform blackout inside the window
    overruns: list[dict] = field(default_factory=list)  # {"callback", "cpu_ns", "wcet_ns", "start_ns"}
    simulated: bool = False  # the bound is a simulated worst case (the runtime's own time measured)
    idle_ns: int = 0     # (simulated) no callback of its executors ran: dispatches, deliveries
    excess_ns: int = 0   # (simulated) callbacks' time beyond min(CPU time, WCET) (runtime_time)
    cache_only_ns: int = 0  # (simulated) of excess_ns: cache-only runs beyond the BCET charged them
    # the chain's bound with the platform measured beside the run (the hosts' blackout curve), which
    # an instance the platform alone delayed stays within (0: not known)
    platform_bound_ns: int = 0
    analysis_bound_ns: int = 0  # (simulated) the chain's analysis bound, when it has one
    # (against a bound, no callback over OVERRUN_RATIO x its WCET) the CPU time callbacks in its
    # window used beyond their WCETs, when that covers its excess over the bound (0: not the cause)
    beyond_wcet_ns: int = 0

    def text(self) -> str:
        what = f"chain '{self.chain}': an instance responded in {self.response_ns / 1e6:.2f} ms > bound " \
               f"{self.bound_ns / 1e6:.2f} ms (busy window {(self.window[1] - self.window[0]) / 1e6:.2f} ms)"
        if self.cause == PLATFORM:
            return what + f": platform ({self.platform_ns / 1e6:.2f} ms of platform blackout in its busy window" + (
                f"; within the bound with the measured platform, {self.platform_bound_ns / 1e6:.2f} ms)"
                if self.platform_bound_ns else ")")
        if self.cause == OVERRUN:
            o = max(self.overruns, key=lambda x: x["cpu_ns"] - x["wcet_ns"])
            return what + (f": overrun ({o['callback']} ran {o['cpu_ns'] / 1e6:.2f} ms of CPU, its WCET is "
                           f"{o['wcet_ns'] / 1e6:.2f} ms" + (
                               f"; the callbacks in its window used {self.beyond_wcet_ns / 1e6:.2f} ms of CPU beyond "
                               f"their WCETs, it is {(self.response_ns - self.bound_ns) / 1e6:.2f} ms above the bound"
                               if self.beyond_wcet_ns else "") + ")")
        if self.cause == RUNTIME:
            return what + (f": runtime ({self.idle_ns / 1e6:.2f} ms of it with no callback running — dispatches and "
                           f"message deliveries — and {self.excess_ns / 1e6:.2f} ms callbacks took beyond their WCET or "
                           f"CPU time — over the WCET within the tolerance, or the CPU lost while running"
                           f"{self._cache_only()}; without them "
                           f"{(self.response_ns - self.idle_ns - self.excess_ns) / 1e6:.2f} ms)")
        if self.platform_ns and self.platform_bound_ns:
            return what + (f": unexplained ({self.platform_ns / 1e6:.2f} ms of platform blackout in its busy window, but "
                           f"above even the bound with the measured platform, {self.platform_bound_ns / 1e6:.2f} ms, and no "
                           "callback over its WCET there)")
        if self.cause == BOUNDED:
            return what + (f": within the analysis bound, {self.analysis_bound_ns / 1e6:.2f} ms (less the runtime's own "
                           f"time, {(self.idle_ns + self.excess_ns) / 1e6:.2f} ms, still above the simulated worst case: a "
                           "schedule the simulated run did not reach, which the analysis covers)")
        return what + ": unexplained (no platform blackout, no callback over its WCET in its busy window" + (
            f"; less the runtime's own time, {(self.idle_ns + self.excess_ns) / 1e6:.2f} ms{self._cache_only()}, it "
            "still exceeds the simulated worst case)" if self.simulated else ")")

    def _cache_only(self) -> str:
        return "" if not self.cache_only_ns else (
            f" ({self.cache_only_ns / 1e6:.2f} ms of it cache-only runs of fused callbacks beyond the BCET the "
            "simulation charges them)")


def ready_times(executions: list[Execution], chains: dict[str, list[str]]) -> dict[int, int]:
    """{id(execution): when it became ready}: the release for a chain's first callback, the
    finish of the same instance's previous hop for a later one (when recorded), else its start."""
    first = {cbs[0] for cbs in chains.values() if cbs}
    prev_of: dict[str, set[str]] = {}
    for cbs in chains.values():
        for a, b in zip(cbs, cbs[1:]):
            prev_of.setdefault(b, set()).add(a)
    by_release = {(x.callback, x.release): x for x in executions if x.release is not None}
    out = {}
    for x in executions:
        ready = x.start
        if x.release is not None:
            if x.callback in first:
                ready = min(ready, x.release)
            for p in prev_of.get(x.callback, ()):
                px = by_release.get((p, x.release))
                if px is not None and px.finish <= x.start:
                    ready = min(ready, px.finish)
        out[id(x)] = ready
    return out


def dispatch_gaps(executions: list[Execution], chains: dict[str, list[str]],
                  blackouts: list[tuple[int, int]] | None = None) -> dict[str, list[int]]:
    """Per executor, its own time per dispatch as the run shows it: on each of its threads, for
    two consecutive executions x then y, the gap ``y.start - x.finish`` when y was ready
    (:func:`ready_times`) at or before x finished. The thread was then backlogged, so the gap
    is the executor's own work between the callbacks (returning from x, selecting, taking y's
    message, handing over), not idle time; a gap before an execution that became ready after
    x finished is idle time and left out. An execution whose readiness the records do not show
    (no chain release) counts as ready at its start, so never as backlogged. A gap that overlaps
    one of ``blackouts`` (merged platform blackouts, :func:`platform_blackouts`; None: not
    measured) is the platform's, left out too. This is what the model's ``dispatch_overhead``
    of an executor must cover (docs/model.md)."""
    ready = ready_times(executions, chains)
    per_thread: dict[tuple[str, int], list[Execution]] = {}
    for x in executions:
        per_thread.setdefault((x.executor, x.thread), []).append(x)
    out: dict[str, list[int]] = {}
    for (executor, _), xs in sorted(per_thread.items()):
        xs.sort(key=lambda x: x.start)
        for x, y in zip(xs, xs[1:]):
            if ready[id(y)] <= x.finish <= y.start and not (blackouts and plat.overlap(blackouts, x.finish, y.start)):
                out.setdefault(executor, []).append(y.start - x.finish)
    return out


def busy_periods(executions: list[Execution], ready: dict[int, int],
                 gap_ns: int = GAP_NS) -> dict[str, list[tuple[int, int]]]:
    """Per executor, its busy periods: the union of [ready, finish] of its executions, gaps
    shorter than ``gap_ns`` closed (sorted, disjoint)."""
    per: dict[str, list[tuple[int, int]]] = {}
    for x in executions:
        per.setdefault(x.executor, []).append((ready.get(id(x), x.start), x.finish + gap_ns))
    return {e: [(b, end - gap_ns) for b, end in plat.merge(iv)] for e, iv in per.items()}


def busy_start(periods: list[tuple[int, int]], t: int) -> int:
    """The start of the busy period containing ``t`` (``t`` itself when the executor was idle)."""
    i = bisect.bisect_right(periods, (t, float("inf"))) - 1
    if i >= 0 and periods[i][0] <= t <= periods[i][1]:
        return periods[i][0]
    return t


def window(inst: Instance, busy: dict[str, list[tuple[int, int]]]) -> tuple[int, int]:
    """The busy window [t0, finish] of an instance (the module's definition)."""
    begin = ready = inst.release
    for h in sorted(inst.hops, key=lambda x: x.start):
        begin = min(begin, busy_start(busy.get(h.executor, []), ready))
        ready = h.finish
    return begin, inst.finish


def instances(executions: list[Execution], chains: dict[str, list[str]]) -> dict[str, list[Instance]]:
    """Per chain, its instances in the executions: one per execution of the chain's last callback
    that carries a release made by the chain's first callback, with the chain's executions of
    that release as its hops."""
    by_release: dict[int, list[Execution]] = {}
    for x in executions:
        if x.release is not None:
            by_release.setdefault(x.release, []).append(x)
    out: dict[str, list[Instance]] = {}
    for name, cbs in chains.items():
        members = set(cbs)
        # (a last callback shared by chains — a fusion — serves the chain whose first callback
        # made the release it carries)
        own = {x.release for x in executions if cbs and x.callback == cbs[0]}
        got = []
        for x in executions:
            if cbs and x.callback == cbs[-1] and x.release in own:
                hops = tuple(h for h in by_release[x.release] if h.callback in members and h.start <= x.start)
                got.append(Instance(name, x.release, x.finish, hops))
        out[name] = sorted(got, key=lambda i: i.release)
    return out


def stats(samples: list[int]) -> dict:
    """{"instances", "mean_ns", "p99_ns" (nearest rank), "max_ns", "min_ns"} of response times
    (the min gives the WCRT − BCRT that CROS-RT's predictability measures)."""
    n = len(samples)
    return {"instances": n, "mean_ns": sum(samples) / n if n else None,
            "p99_ns": quantile(samples, 0.99) if n else None, "max_ns": max(samples) if n else None,
            "min_ns": min(samples) if n else None}


class Nearby:
    """Executions sorted by start (the overruns of a run: few), to find those that overlap a
    window quickly."""

    def __init__(self, executions: list[Execution]):
        self.executions = sorted(executions, key=lambda x: x.start)
        self.starts = [x.start for x in self.executions]
        self.longest = max((x.finish - x.start for x in self.executions), default=0)

    def overlapping(self, begin: int, end: int) -> list[Execution]:
        lo = bisect.bisect_left(self.starts, begin - self.longest)
        return [x for x in self.executions[lo:bisect.bisect_left(self.starts, end)] if x.finish > begin]


class Waits:
    """What a hop's wait was, on several CPUs, from the run's ``executions``: ``threads``
    {executor: its threads in the run}, ``ncpu`` the CPUs the chain's executors may use (1 where
    that is not known), ``publishers`` {callback: the callbacks that publish what it takes}."""

    def __init__(self, executions: list[Execution], ncpu: int, publishers: dict[str, set[str]] | None):
        self.threads: dict[str, set[int]] = {}
        for x in executions:
            self.threads.setdefault(x.executor, set()).add(x.thread)
        self.ncpu, self.publishers = max(1, ncpu), publishers or {}
        self.finishes: dict[str, list[int]] = {}
        for x in executions:
            self.finishes.setdefault(x.callback, []).append(x.finish)
        for v in self.finishes.values():
            v.sort()

    def on(self, ncpu: int) -> "Waits":
        """The same run with ``ncpu`` CPUs."""
        other = copy.copy(self)
        other.ncpu = max(1, ncpu)
        return other

    def ready(self, h: Execution, after: int) -> int:
        """When hop ``h`` became ready: the latest finish (by its start) of a callback that
        publishes what it takes — a fusion's trigger, not its other input — else ``after`` (the
        release, or the previous hop's finish)."""
        best = after
        for p in self.publishers.get(h.callback, ()):
            f = self.finishes.get(p, [])
            i = bisect.bisect_right(f, h.start) - 1
            if i >= 0:
                best = max(best, f[i])
        return min(best, h.start)

    @staticmethod
    def _pieces(b: int, e: int, execs: list[Execution]):
        """[lo, hi) pieces of [b, e] with the executions running all through each."""
        inside = [x for x in execs if x.finish > b and x.start < e]
        cuts = sorted({b, e, *(min(e, max(b, t)) for x in inside for t in (x.start, x.finish))})
        for lo, hi in zip(cuts, cuts[1:]):
            yield lo, hi, [x for x in inside if x.start <= lo and x.finish >= hi]

    def crowded(self, b: int, e: int, others: list[Execution]) -> int:
        """The time in [b, e] in which ``ncpu`` or more other callbacks ran: only then one of
        them can have held the CPU of a callback running in [b, e]."""
        return sum(hi - lo for lo, hi, on in self._pieces(b, e, others) if len(on) >= self.ncpu)

    def free(self, h: Execution, b: int, e: int, running: list[Execution]) -> int:
        """The time in [b, e] in which a thread of ``h``'s executor ran no callback while fewer
        than ``ncpu`` callbacks ran (``running``: the executions that may share its CPUs): a
        thread and a CPU were there for ``h``, so it waited for a dispatch, a delivery or a
        wake-up."""
        mine = self.threads.get(h.executor, {h.thread})
        return sum(hi - lo for lo, hi, on in self._pieces(b, e, running)
                   if len(on) < self.ncpu and mine - {x.thread for x in on if x.executor == h.executor})


def cache_only_runs(executions: list[Execution], charges: list[dict[str, int]] | None) -> dict[int, int]:
    """{id(execution): what the simulation charges it} for the executions the simulator would
    run as cache-only runs: ``charges`` per implicit fusion set {member: its cache-only charge}
    (``_core.cache_only_charges``, the simulator's rule). A member's run is cache-only when some
    other member of its set has not finished since the set last published; a member's finish
    publishes when every member then has (sim/src/simulator.cpp: a run's charge is fixed when it
    starts, the set's freshness when it finishes)."""
    out: dict[int, int] = {}
    for members in charges or ():
        # finishes before starts at the same instant (a run sees what finished as it started)
        events = sorted(((t, kind, x) for x in executions if x.callback in members
                         for t, kind in ((x.finish, 0), (x.start, 1))), key=lambda e: (e[0], e[1]))
        fresh: set[str] = set()
        for _, kind, x in events:
            if kind == 1:
                if any(o not in fresh for o in members if o != x.callback):
                    out[id(x)] = members[x.callback]
                continue
            fresh.add(x.callback)
            if fresh.issuperset(members):
                fresh.clear()
    return out


def runtime_time(inst: Instance, near_of, wcets: dict[str, int], one_cpu: bool,
                 waits: Waits | None = None, charged: dict[int, int] | None = None) -> tuple[int, int]:
    """(idle, overtime): the runtime's own time in the instance's response [release, finish].
    ``near_of(executor)``: the executions of the executors that may delay a callback of that
    executor (those that may share one of its CPUs; every one where that is not known).

    ``idle``: the time in which a hop of the instance waited — from the release, or the previous
    hop's finish, to its start — while none of those ran a callback: the instance was pending, so
    the time went to dispatches, message deliveries and wake-ups; a callback on a CPU the hop may
    not use never shortens a wait. With ``waits`` (several CPUs): a hop waits from when it became
    ready (Waits.ready: a fusion's trigger, not its other input) and the idle part of the wait is
    Waits.free — a thread of its executor and a CPU there, yet the hop not started (a thread
    being woken while the other runs a callback is the runtime's time too); a hop's time past
    its model time is hidden only by as many other callbacks as there are CPUs (Waits.crowded).
    ``overtime``: the time callbacks that held up the instance took beyond their model time,
    min(CPU time, WCET) (a callback the model does not have: none; a cache-only run, ``charged``
    from :func:`cache_only_runs`: min(CPU time, what the simulation charges it)) — CPU time over the WCET within the tolerance, and time a callback lost the CPU while running to
    something no recorded callback was (the kernel, interrupts: below the platform probe's
    threshold). On one CPU every execution inside the response counts (pro rata where it
    straddles an end), all of it sequential; on several, the instance's own hops (less what
    other executions that may share their CPUs covered of them) and what ran on a hop's thread
    while the hop waited."""
    r, f = inst.release, inst.finish
    hops = sorted(inst.hops, key=lambda x: x.start)
    charged = charged or {}

    def model_time(x: Execution) -> int:
        return min(x.cpu, charged.get(id(x), wcets.get(x.callback, 0)))

    def beyond(x: Execution, b: int, e: int) -> float:
        wall = x.finish - x.start
        part = max(0, min(e, x.finish) - max(b, x.start))
        model = model_time(x)
        return max(0.0, part - model * (part / wall if wall > 0 else 1.0))

    def covered(execs, b: int, e: int) -> int:
        iv = plat.merge([(max(b, x.start), min(e, x.finish)) for x in execs if min(e, x.finish) > max(b, x.start)])
        return sum(y - x for x, y in iv)
    idle, over, seen, ready = 0, 0.0, set(), r
    for h in hops:
        near = near_of(h.executor)
        if h.start > ready:
            waiting = near.overlapping(ready, h.start)
            if waits is None:
                idle += (h.start - ready) - covered(waiting, ready, h.start)
            else:  # (before a fusion's trigger the instance waits for its other input: model work)
                since = waits.ready(h, ready)
                idle += waits.free(h, since, h.start, [x for x in waiting if x.finish > since])
            if not one_cpu:
                for x in waiting:
                    if x.thread == h.thread and x.executor == h.executor and id(x) not in seen:
                        seen.add(id(x))
                        over += beyond(x, ready, h.start)
        if not one_cpu and id(h) not in seen:
            seen.add(id(h))
            others = [x for x in near.overlapping(h.start, h.finish) if x is not h]
            over += max(0.0, beyond(h, h.start, h.finish) - (covered(others, h.start, h.finish) if waits is None
                                                             else waits.crowded(h.start, h.finish, others)))
        ready = max(ready, h.finish)
    if one_cpu and hops:
        inside = near_of(hops[0].executor).overlapping(r, f)
        busy = covered(inside, r, f)
        over = busy - sum(model_time(x) * (
            max(0, min(f, x.finish) - max(r, x.start)) / (x.finish - x.start) if x.finish > x.start else 1.0)
            for x in inside)
    return max(0, idle), max(0, int(over))


class Neighbours:
    """``near_of(executor)``: the executions of the executors that may share a CPU with it (all
    of them where either's CPUs are not known), made once per executor."""

    def __init__(self, executions: list[Execution], executor_cpus: dict[str, set[int] | None] | None):
        self.executions, self.cpus, self.made = executions, executor_cpus or {}, {}

    def __call__(self, executor: str) -> Nearby:
        if executor not in self.made:
            mine = self.cpus.get(executor)
            self.made[executor] = Nearby([x for x in self.executions if mine is None or self.cpus.get(x.executor) is None
                                          or self.cpus[x.executor] & mine])
        return self.made[executor]


def classify(inst: Instance, bound_ns: int, win: tuple[int, int], blackouts: list[tuple[int, int]],
             overruns: Nearby, wcets: dict[str, int], runtime: tuple | None = None,
             charged: dict[int, int] | None = None, platform_bound_ns: int | None = None,
             analysis_bound_ns: int | None = None, above_wcet: Nearby | None = None) -> Case:
    """The cause of one instance above its bound: ``blackouts`` the platform's (sorted,
    disjoint, on the CPUs the instance may run on), ``overruns`` the executions over their WCET
    (:func:`overran`) that may have delayed it; ``runtime`` (the bound is a simulated worst case):
    (near_of, one_cpu[, waits]) for the runtime's own time (:func:`runtime_time`), ``charged``
    the run's cache-only runs (:func:`cache_only_runs`); ``platform_bound_ns``: the same bound with
    the platform measured beside the run — a blackout is then a sufficient cause only for an
    instance within it (the measured curve covers every blackout of the run, so the platform alone
    cannot take an instance beyond it); ``analysis_bound_ns`` (against a simulated worst case): the
    chain's analysis bound — the simulation is one run of the model, its worst case a lower bound
    of the model's, so an instance above it and within the analysis bound is a schedule the run did
    not reach (``bounded``), not a defect; ``above_wcet`` (against a bound): the executions over
    their WCET by less than the overrun ratio that may have delayed it — together they are an
    overrun when the CPU time they used beyond their WCETs covers the instance's excess over the
    bound (each such microsecond can delay it by at most as much: the bound assumed the WCET)."""
    b, e = win
    case = Case(inst.chain, inst.release, inst.response, bound_ns, win, UNEXPLAINED,
                platform_ns=plat.overlap(blackouts, b, e), platform_bound_ns=platform_bound_ns or 0)
    for x in overruns.overlapping(b, e):
        case.overruns.append({"callback": x.callback, "cpu_ns": x.cpu, "wcet_ns": wcets[x.callback], "start_ns": x.start})
    if case.platform_ns > 0 and (not platform_bound_ns or inst.response <= platform_bound_ns):
        case.cause = PLATFORM
    elif case.overruns:
        case.cause = OVERRUN
    elif runtime is None and above_wcet is not None:
        small = above_wcet.overlapping(b, e)
        beyond = sum(x.cpu - wcets[x.callback] for x in small)
        if small and inst.response - bound_ns <= beyond:
            case.cause, case.beyond_wcet_ns = OVERRUN, beyond
            case.overruns = [{"callback": x.callback, "cpu_ns": x.cpu, "wcet_ns": wcets[x.callback], "start_ns": x.start}
                             for x in small]
    elif runtime is not None:
        case.simulated = True
        case.idle_ns, case.excess_ns = runtime_time(inst, runtime[0], wcets, runtime[1], *runtime[2:], charged=charged)
        if charged:
            case.cache_only_ns = max(0, case.excess_ns - runtime_time(inst, runtime[0], wcets, runtime[1],
                                                                      *runtime[2:])[1])
        if inst.response - case.idle_ns - case.excess_ns <= bound_ns:
            case.cause = RUNTIME
        elif analysis_bound_ns and inst.response <= analysis_bound_ns:
            case.cause, case.analysis_bound_ns = BOUNDED, analysis_bound_ns
    return case


def overran(executions: list[Execution], wcets: dict[str, int], ratio: float = OVERRUN_RATIO) -> list[Execution]:
    """The executions that used more CPU time than ``ratio`` x their callback's WCET."""
    return [x for x in executions if x.callback in wcets and x.cpu > ratio * wcets[x.callback]]


def account(executions: list[Execution], chains: dict[str, list[str]], bounds: dict[str, int | None],
            wcets: dict[str, int], blackouts: dict[int, list[tuple[int, int]]] | None,
            chain_cpus: dict[str, set[int] | None] | None = None,
            chain_executors: dict[str, set[str] | None] | None = None,
            since_ns: int | None = None, gap_ns: int = GAP_NS, simulated: bool = False,
            executor_cpus: dict[str, set[int] | None] | None = None,
            chain_ncpu: dict[str, int] | None = None, publishers: dict[str, set[str]] | None = None,
            cache_only: list[dict[str, int]] | None = None,
            platform_bounds: dict[str, int | None] | None = None,
            analysis_bounds: dict[str, int | None] | None = None) -> dict:
    """The accounting of one run.

    ``executions``: every recorded callback execution; ``chains``: {chain: its callbacks in
    order}; ``bounds``: {chain: bound ns (None: none)}; ``wcets``: {callback: the model's WCET};
    ``blackouts``: {cpu: the platform's blackouts} (platform_blackouts), None when the platform
    was not measured; ``chain_cpus``: {chain: the CPUs its threads may run on (None: all)};
    ``chain_executors``: {chain: the executors whose callbacks may delay it (None: all)};
    ``since_ns``: instances released before are left out (the warm-up); ``simulated``: the
    bounds are simulated worst cases (the ``runtime`` cause applies); ``executor_cpus``: {executor:
    the CPUs its threads may run on (None: any)}, for the executions that may delay a hop;
    ``chain_ncpu``: {chain: how many CPUs its executors may use (absent: 1, not known)} and
    ``publishers``: {callback: the callbacks publishing what it takes}, for a hop's wait on
    several CPUs (:class:`Waits`); ``cache_only``: per implicit fusion set {member: the charge of
    its cache-only run} (:func:`cache_only_runs`), for what the simulation charges each run;
    ``platform_bounds``: {chain: its bound with the platform measured beside the run}, above
    which a platform blackout no longer explains an instance (:func:`classify`);
    ``analysis_bounds`` (``simulated``): {chain: its analysis bound}, within which an instance above
    the simulated worst case is ``bounded``.

    Returns {"measured": bool, "chains": {chain: {"bound_ns", "above", "platform", "overrun",
    "unexplained", "raw": stats, "platform_free": stats (None when not measured),
    "cases": [Case, ...]}}}; platform-free instances are those with no platform blackout in their
    busy window."""
    ready = ready_times(executions, chains)
    busy = busy_periods(executions, ready, gap_ns)
    over = overran(executions, wcets)
    everything = Nearby(over)
    # (against a bound) every execution over its WCET at all: the small excesses add up
    small = [x for x in overran(executions, wcets, 1.0) if x.cpu <= OVERRUN_RATIO * wcets[x.callback]]
    near_of = Neighbours(executions, executor_cpus)
    waits = Waits(executions, 1, publishers) if simulated else None
    charged = cache_only_runs(executions, cache_only) if simulated else None
    out: dict = {"measured": blackouts is not None, "chains": {}}
    for name, insts in instances(executions, chains).items():
        insts = [i for i in insts if since_ns is None or i.release >= since_ns]
        cpus = (chain_cpus or {}).get(name)
        iv = plat.merge([x for c, v in (blackouts or {}).items() if cpus is None or c in cpus for x in v])
        execs = (chain_executors or {}).get(name)
        near = everything if execs is None else Nearby([x for x in over if x.executor in execs])
        above_wcet = None if simulated else Nearby([x for x in small if execs is None or x.executor in execs])
        one_cpu = cpus is not None and len(cpus) == 1
        around = None if not simulated else (near_of, True) if one_cpu else \
            (near_of, False, waits.on((chain_ncpu or {}).get(name, 1)))
        bound = bounds.get(name)
        row = {"bound_ns": bound, "above": 0, **{c: 0 for c in CAUSES}, "cases": []}
        free = []
        for inst in insts:
            win = window(inst, busy)
            touched = plat.overlap(iv, *win) > 0
            if not touched:
                free.append(inst.response)
            if bound is not None and inst.response > bound:
                case = classify(inst, bound, win, iv, near, wcets, around, charged,
                                (platform_bounds or {}).get(name), (analysis_bounds or {}).get(name), above_wcet)
                row["above"] += 1
                row[case.cause] += 1
                row["cases"].append(case)
        row["raw"] = stats([i.response for i in insts])
        row["platform_free"] = stats(free) if blackouts is not None else None
        out["chains"][name] = row
    return out


def platform_blackouts(blackouts: dict[int, list[tuple[int, int]]], holds: dict[int, list[tuple]],
                       model_tids: set[int], wakeups: dict[int, list[tuple[int, int]]] | None = None
                       ) -> dict[int, list[tuple[int, int]]]:
    """{cpu: the platform's part of the probe's blackouts and of the executors' late wake-ups
    (:func:`late_wakeups`)} (platform.split: a blackout's part that one of ``model_tids`` held is
    the model's own work, not the platform's)."""
    wakeups = wakeups or {}
    return {c: plat.split(plat.merge(list(blackouts.get(c, [])) + list(wakeups.get(c, []))), holds.get(c, []),
                          model_tids)[0] for c in set(blackouts) | set(wakeups)}


def run_blackouts(probe, executions: list[Execution], executor_cpus: dict[str, set[int] | None] | None,
                  model_tids: set[int], attributed: bool) -> tuple[dict[int, list[tuple[int, int]]],
                                                                  dict[int, list[tuple[int, int]]]]:
    """({cpu: the platform's blackouts}, {cpu: the executors' late wake-ups among them}) of a run
    beside ``probe``: its blackouts and the late wake-ups (:func:`late_wakeups`; a run on the
    probe's one CPU charges them there), less what ``model_tids`` held where the attribution is
    taken (``attributed``; else every one is the platform's)."""
    wakeups = late_wakeups(executions, executor_cpus, set(probe.blackouts) if len(probe.blackouts) == 1 else None)
    if not attributed:
        return platform_blackouts(probe.blackouts, {}, set(), wakeups), wakeups
    return platform_blackouts(probe.blackouts, probe.holds, model_tids, wakeups), wakeups


def wakeups_note(wakeups: dict[int, list[tuple[int, int]]]) -> str | None:
    """The line saying how many late wake-ups of the executors' threads count as the platform's."""
    every = [e - b for iv in wakeups.values() for b, e in iv]
    if not every:
        return None
    return (f"{len(every)} late wake-up(s) of the executors' real-time threads (≥ {GAP_NS // 1000} µs after the "
            f"timer release they slept until, no model thread running meanwhile; longest {max(every) / 1e6:.2f} ms) "
            "count as platform blackouts")


def late_wakeups(executions: list[Execution], executor_cpus: dict[str, set[int] | None] | None,
                 run_cpus: set[int] | None = None, threshold_ns: int = GAP_NS) -> dict[int, list[tuple[int, int]]]:
    """{cpu: the late wake-ups of the executors' real-time threads that the run itself does not
    explain}, as blackouts of that CPU.

    A thread of a real-time class that slept until a timer's release s and ran again only at w
    (Execution.slept, recorded by the executor) was kept from its CPU during [s, w] by the
    hypervisor, the kernel, or a thread of higher priority. The probe would call the same a
    blackout had its own timer fallen in it (its threshold applies here too: shorter delays are
    every wake-up's latency); its period (PROBE_PERIOD_US) leaves most such wake-ups between its
    own. Not counted: a wake-up during which any execution of the model that may share the CPU
    ran (a thread of higher priority: the model's work); one whose CPU is not known (the
    executor's threads not pinned to one core and ``run_cpus`` not one core). A model thread
    holding the CPU in the kernel meanwhile is told apart afterwards, where the probe's
    attribution saw it (platform.split)."""
    cpus_of = executor_cpus or {}

    def may_use(executor: str) -> set[int] | None:  # the CPUs its threads may run on (None: any)
        return cpus_of.get(executor) or run_cpus

    def cpu_of(executor: str) -> int | None:
        mine = may_use(executor)
        return next(iter(mine)) if mine and len(mine) == 1 else None
    late = [(cpu_of(x.executor), x) for x in executions if x.slept and x.slept[1] - x.slept[0] >= threshold_ns]
    late = [(c, x) for c, x in late if c is not None]
    if not late:
        return {}
    # per CPU: the executions that may run there, by start, with the running maximum of finishes
    runs: dict[int, tuple[list[int], list[int]]] = {}
    for c in {c for c, _ in late}:
        mine = sorted((x.start, x.finish) for x in executions if may_use(x.executor) is None or c in may_use(x.executor))
        starts, reach, top = [], [], 0
        for s, f in mine:
            top = max(top, f)
            starts.append(s)
            reach.append(top)
        runs[c] = (starts, reach)
    out: dict[int, list[tuple[int, int]]] = {}
    for c, x in late:
        s, w = x.slept
        starts, reach = runs[c]
        i = bisect.bisect_left(starts, w)  # the executions started before w: did one run after s?
        if i and reach[i - 1] > s:
            continue
        out.setdefault(c, []).append((s, w))
    return {c: plat.merge(iv) for c, iv in out.items()}


def read_traces(trace_dir: str | Path) -> list[Execution]:
    """The executions of every ``<process>.jsonl`` dispatch trace in ``trace_dir``
    (chainrt-run ``--trace``), on CLOCK_MONOTONIC through each trace's ``.start``."""
    out = []
    for path in sorted(Path(trace_dir).glob("*.jsonl")):
        start_file = path.with_name(path.name + ".start")
        try:
            start = int(start_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a process that failed before writing its trace: nothing to align
        for line in path.read_text().splitlines():
            try:
                d = json.loads(line)
                if "executor" not in d:
                    continue  # a device request (accelerators), not a callback execution
                rel = int(d["release"])
                slept = (start + int(d["slept_until"]), start + int(d["woke"])) if "woke" in d else None
                out.append(Execution(str(d["callback"]), str(d["executor"]), int(d["thread"]),
                                     start + int(d["start"]), start + int(d["finish"]), int(d["cpu"]),
                                     start + rel if rel >= 0 else None, slept))
            except (ValueError, KeyError, TypeError):
                continue
    return out


def to_json(acc: dict) -> dict:
    """The accounting as JSON: counts, statistics and the cases (worst first, at most 20)."""
    chains = {}
    for name, r in acc["chains"].items():
        cases = sorted(r["cases"], key=lambda c: -c.response_ns)[:20]
        chains[name] = {k: r[k] for k in ("bound_ns", "above", *CAUSES, "raw", "platform_free")}
        chains[name]["cases"] = [dict(c.__dict__, window=list(c.window), text=c.text()) for c in cases]
    return {"measured": acc["measured"], "chains": chains, **{k: acc[k] for k in ("notes",) if k in acc}}


# --------------------------------------------------------------------------- after a real run

RT_RUNTIME = Path("/proc/sys/kernel/sched_rt_runtime_us")
RT_PERIOD = Path("/proc/sys/kernel/sched_rt_period_us")
# a blackout matches the throttling when it lasts this share of the throttled part of a period
# or more, and no more than the upper share: the throttled class waits at most that part (to the
# period's end), plus the probe's own period and wake-up (a longer stall is something else)
RT_THROTTLE_MATCH = 0.8
RT_THROTTLE_UPPER = 1.1


def model_inputs(model, thread_params: bool = True) -> dict:
    """The model's part of the accounting: {"chains", "wcets", "chain_cpus", "chain_executors",
    "executor_cpus", "chain_ncpu" (how many CPUs a chain's executors may use: its pinned cores,
    else its host's), "publishers" ({callback: the callbacks publishing its topic}), "cache_only"
    (per implicit fusion set, {member: what the simulator charges its cache-only run})}.
    A chain's CPUs are its executors' threads' cores when every one of them is pinned (and
    ``thread_params``), else every CPU; the executors that may delay it are those whose threads
    may share one of those CPUs (every executor when a chain's threads are not pinned).
    The model is taken as it runs (``_core._expand_accelerators``): a callback with server-mode
    accelerator segments is its pieces, "<name>" up to its device request and "<name>#k" after
    the k-th, each with its own WCET, and a chain ends at its last callback's last piece — the
    dispatch traces name the pieces, so the user's model would end an instance at its device
    request."""
    model = _core._expand_accelerators(model)
    node_exec = {n.name: n.executor for n in model.nodes}
    cb_exec = {c.name: node_exec.get(c.node) for c in model.callbacks}

    def cores(ex_name):
        ex = next((e for e in model.executors if e.name == ex_name), None)
        if ex is None or not thread_params or not ex.threads or any(not t.cores for t in ex.threads):
            return None
        return {int(c) for t in ex.threads for c in t.cores}

    ex_cores = {e.name: cores(e.name) for e in model.executors}
    chains, cpus, execs = {}, {}, {}
    for ch in model.chains:
        chains[ch.name] = list(ch.callbacks)
        mine = [ex_cores.get(cb_exec.get(cb)) for cb in ch.callbacks]
        cpus[ch.name] = None if any(c is None for c in mine) else set().union(*mine)
        execs[ch.name] = None if cpus[ch.name] is None else \
            {e for e, c in ex_cores.items() if c is None or c & cpus[ch.name]}
    host_cores = {h.name: int(h.cores) for h in model.hosts}
    ex_host = {e.name: host_cores.get(e.host, 0) for e in model.executors}
    ncpu = {n: len(cpus[n]) if cpus[n] is not None else
            max((ex_host.get(cb_exec.get(cb), 0) for cb in chains[n]), default=0) for n in chains}
    topics: dict[str, set[str]] = {}
    for c in model.callbacks:
        for t in c.publishes:
            topics.setdefault(t, set()).add(c.name)
    return {"chains": chains, "wcets": {c.name: int(c.wcet) for c in model.callbacks},
            "chain_cpus": cpus, "chain_executors": execs, "executor_cpus": ex_cores,
            "chain_ncpu": {n: k for n, k in ncpu.items() if k}, "publishers":
                {c.name: topics[c.topic] for c in model.callbacks if c.topic and c.topic in topics},
            "cache_only": _core.cache_only_charges(model)}


def rt_throttling() -> tuple[int, int] | None:
    """(runtime µs, period µs) of the kernel's real-time throttling when it is on, else None."""
    try:
        runtime, period = int(RT_RUNTIME.read_text()), int(RT_PERIOD.read_text())
    except (OSError, ValueError):
        return None
    return (runtime, period) if 0 <= runtime < period else None


# Where the kernel's build configuration may be read: the running kernel's own, then its file.
KERNEL_CONFIGS = (Path("/proc/config.gz"), Path(f"/boot/config-{os.uname().release}"))


@functools.lru_cache(maxsize=None)
def irq_time_accounting(paths: tuple[Path, ...] = KERNEL_CONFIGS) -> bool | None:
    """Does the kernel leave interrupt time out of threads' CPU time (CONFIG_IRQ_TIME_ACCOUNTING)?
    None: its configuration cannot be read."""
    for path in paths:
        try:
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "replace")
        except (OSError, EOFError, zlib.error):
            continue
        return "CONFIG_IRQ_TIME_ACCOUNTING=y" in text.splitlines()
    return None


def irq_note_for(*tables: dict) -> str | None:
    """irq_note for an accounting's chain tables, one per comparison (the bounds, the simulated
    worst cases): its overruns counted in the comparison with the most (an instance above both
    is counted once)."""
    overruns = max((sum(r.get(OVERRUN, 0) for r in t.values()) for t in tables), default=0)
    return irq_note(overruns, irq_time_accounting())


def irq_note(overruns: int, accounted: bool | None) -> str | None:
    """A line saying that the overruns' CPU times include interrupts, on a kernel that counts them
    in the interrupted thread's CPU time (no IRQ time accounting)."""
    if overruns == 0 or accounted is not False:
        return None
    return (f"{overruns} instance(s) had a callback over its WCET by its CPU time, which on this kernel (no "
            "CONFIG_IRQ_TIME_ACCOUNTING) includes the interrupts and softirqs that arrived while it ran -- the "
            "network's among them: an overrun may be the interrupt load's as well as the callback's")


def swapped_by_probe(model) -> str | None:
    """The line naming the unpinned threads of different executors that share one SCHED_FIFO
    priority on a host of several CPUs. Beside the platform probe the kernel swaps them between
    CPUs: each wake-up of the probe preempts one of them and real-time balancing moves it, so a
    thread that ran may wait while an equal one runs, a schedule no model of the layout has; the
    accounting does not count that as the platform's. None where there is no such group."""
    cores = {h.name: h.cores for h in model.hosts}
    groups: dict[tuple, list[tuple[str, str]]] = {}
    for e in model.executors:
        if cores.get(e.host, 1) < 2:
            continue
        for t in e.threads:
            prio = e.thread_fifo_priority(t)
            if prio is not None and not t.cores:
                groups.setdefault((e.host, prio), []).append((e.name, t.name))
    swapped = [f"{e}/{t}" for g in groups.values() if len({e for e, _ in g}) > 1 for e, t in g]
    if not swapped:
        return None
    return (f"threads {', '.join(swapped)} run unpinned at one real-time priority on several CPUs: the platform "
            "probe's wake-ups make the kernel swap them between CPUs, a delay the accounting does not count as the "
            "platform's (pin them, e.g. --pin-core, for tails the probe does not reorder)")


def throttling_note(blackouts: dict[int, list[tuple[int, int]]], throttle: tuple[int, int] | None) -> str | None:
    """A line naming the kernel's real-time throttling when a blackout the probe saw matches it
    (about as long as the part of a period it withholds from real-time threads, the probe's
    SCHED_FIFO 99 thread among them), with the remedy."""
    if throttle is None:
        return None
    runtime, period = throttle
    cut_ns = (period - runtime) * 1000
    hits = [(c, e - b) for c, iv in blackouts.items() for b, e in iv
            if RT_THROTTLE_MATCH * cut_ns <= e - b <= RT_THROTTLE_UPPER * cut_ns]
    if not hits:
        return None
    return (f"real-time throttling cut the run: {len(hits)} blackout(s) of {cut_ns / 1e6 * RT_THROTTLE_MATCH:.0f}–"
            f"{cut_ns / 1e6 * RT_THROTTLE_UPPER:.0f} ms (longest "
            f"{max(x for _, x in hits) / 1e6:.1f} ms) match the kernel's real-time throttling "
            f"(kernel.sched_rt_runtime_us = {runtime} of {period}: real-time threads that run that long in a period "
            f"lose the CPU for the rest of it); remedy: give executors that need no deadline normal priority, or "
            f"sysctl -w kernel.sched_rt_runtime_us=-1 on a machine reserved for the run")


def bounds_of(model, bound: dict | None, simulated: dict | None) -> tuple[dict, dict]:
    """({chain: bound ns}, {chain: "analysis" | "simulated"}): the analysis bound, else the
    simulated worst case (a real run above it spent time the model does not contain)."""
    out, kind = {}, {}
    for ch in model.chains:
        b = ((bound or {}).get("chains", {}).get(ch.name) or {}).get("wcrt_bound_ns")
        s = ((simulated or {}).get(ch.name) or {}).get("wcrt_ns") if isinstance(simulated, dict) else None
        if b:
            out[ch.name], kind[ch.name] = int(b), "analysis"
        elif s:
            out[ch.name], kind[ch.name] = int(s), "simulated"
        else:
            out[ch.name] = None
    return out, kind



def trace_zero(trace_dir: str | os.PathLike) -> int | None:
    """The earliest start (CLOCK_MONOTONIC ns) of the traces in ``trace_dir``: the run's zero."""
    starts = []
    for f in Path(trace_dir).glob("*.jsonl.start"):
        try:
            starts.append(int(f.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return min(starts) if starts else None

def after_run(model, trace_dir, probe, probe_note: str | None, bounds: dict, bound_kind: dict,
              model_tids: set[int], warmup_ns: int = 0, thread_params: bool = True, rt: bool = True,
              simulated: dict | None = None, executions: list[Execution] | None = None) -> dict:
    """The accounting of a finished run (JSON form, :func:`to_json`) from its traces in
    ``trace_dir``, the PlatformProbe that ran beside it (None: not measured, ``probe_note`` says
    why) and its bounds; instances released in the first ``warmup_ns`` of the run are left out
    (as the executors' monitor does); ``rt``: the executors' threads had real-time priority
    (without, other processes take the CPU from them below the probe, which sees none of it);
    ``simulated``: the simulator's per-chain result, to account against its worst cases too
    ("simulated"); ``executions``: the run's executions when the caller read them from the traces
    itself (read_traces); "notes" says what limits it."""
    notes = [probe_note] if probe_note else []
    mi = model_inputs(model, thread_params)
    executions = read_traces(trace_dir) if executions is None else executions
    blackouts = None
    if probe is not None:
        tids = set(model_tids) | probe.pids
        blackouts, wakeups = run_blackouts(probe, executions, mi["executor_cpus"], tids,
                                           bool(probe.holds) or not probe.attribution_error)
        if (note := wakeups_note(wakeups)):
            notes.append(note)
        if probe.attribution_error:
            notes.append(f"the platform attribution did not run ({probe.attribution_error}): every blackout the "
                         "probe saw counts as the platform's")
        if probe.dropped:
            notes.append(f"the platform probe dropped {probe.dropped} blackout record(s)")
        note = throttling_note(probe.blackouts, rt_throttling())
        if note:
            notes.append(note)
    zero = trace_zero(trace_dir)
    since_ns = zero + warmup_ns if zero is not None else None
    if not executions:
        notes.append("no dispatch trace was written: no instance could be accounted")
    out = to_json(account(executions, mi["chains"], bounds, mi["wcets"], blackouts, mi["chain_cpus"],
                          mi["chain_executors"], since_ns))
    if isinstance(simulated, dict) and simulated:  # the same against the simulated worst cases (what the verdict also compares with)
        sim_bounds = {n: (simulated.get(n) or {}).get("wcrt_ns") or None for n in mi["chains"]}
        out["simulated"] = to_json(account(executions, mi["chains"], sim_bounds, mi["wcets"], blackouts,
                                           mi["chain_cpus"], mi["chain_executors"], since_ns,
                                           simulated=True, executor_cpus=mi["executor_cpus"],
                                           chain_ncpu=mi["chain_ncpu"], publishers=mi["publishers"],
                                           cache_only=mi["cache_only"], analysis_bounds=bounds))["chains"]
    for name, row in out["chains"].items():
        row["bound_kind"] = bound_kind.get(name)
    if (note := irq_note_for(out["chains"], out.get("simulated") or {})):
        notes.append(note)
    every = plat.merge([x for iv in (blackouts or {}).values() for x in iv])
    out["dispatch_overhead"] = dispatch_overhead_json(model, dispatch_gaps(executions, mi["chains"], every), notes)
    if not rt and any(r["unexplained"] for r in out["chains"].values()):
        notes.append("the executor threads had no real-time priority: other processes took the CPU from them, which "
                     "the platform probe (above every thread) does not see and the bounds do not allow for; "
                     "--fifo PRIO runs them above other processes")
    out["notes"] = notes
    return out


def dispatch_overhead_json(model, gaps: dict[str, list[int]], notes: list[str]) -> dict:
    """{executor: {"dispatches", "max_ns", "p99_ns" (nearest rank), "model_ns"}}: the executors'
    own time per dispatch measured in a run (``gaps``: :func:`dispatch_gaps`, of one run or
    pooled over several) beside the model's ``dispatch_overhead``; a note in ``notes`` for each
    executor whose measured maximum exceeds it (the bounds then do not contain all of the
    executor's own time)."""
    declared = {e.name: int(e.dispatch_overhead) for e in model.executors}
    out = {}
    for name, g in sorted(gaps.items()):
        if not g:
            continue
        row = out[name] = {"dispatches": len(g), "max_ns": max(g), "p99_ns": quantile(g, 0.99),
                           "model_ns": declared.get(name, 0)}
        if row["max_ns"] > row["model_ns"]:
            notes.append(f"executor {name}: its own time per dispatch reached {row['max_ns'] / 1e3:.1f} us "
                         f"(p99 {row['p99_ns'] / 1e3:.1f} us over {row['dispatches']} backlogged dispatches), above "
                         f"the model's dispatch_overhead of {row['model_ns'] / 1e3:.1f} us, which the bounds "
                         "charge (chainrt profile writes the measured value into the model)")
    return out


def coverage_notes(acc_json: dict, measured: dict) -> list[str]:
    """A note per chain whose traced instances are fewer than the executors' monitor counted
    (``measured``: the run's per-chain figures): the trace's ring kept only the latest."""
    out = []
    for name, row in acc_json["chains"].items():
        got, n = row["raw"]["instances"], (measured.get(name) or {}).get("instances", 0)
        if got < n:
            out.append(f"chain {name}: {got} of its {n} instances were accounted (the dispatch trace keeps the latest "
                       f"65,536 executions per executor)")
    return out


def cause_text(row: dict | None, against: str = "the bound") -> str | None:
    """One chain's accounting as a verdict's cause (None when nothing was above)."""
    if not row or not row.get("above"):
        return None
    parts = []
    if row[PLATFORM]:
        parts.append(f"{row[PLATFORM]} had a platform blackout in their busy window")
    if row[OVERRUN]:
        o = max((x for c in row.get("cases", []) if c["cause"] == OVERRUN for x in c["overruns"]),
                key=lambda x: x["cpu_ns"] - x["wcet_ns"], default=None)
        parts.append(f"{row[OVERRUN]} a callback over its WCET" + (
            f" ({o['callback']} up to {o['cpu_ns'] / 1e6:.2f} ms of CPU, WCET {o['wcet_ns'] / 1e6:.2f} ms)" if o else ""))
    if row.get(RUNTIME):
        parts.append(f"{row[RUNTIME]} within the runtime's own time (measured in each response: dispatches and "
                     "message deliveries, callbacks' time beyond their CPU time or WCET within the tolerance, "
                     "cache-only runs of fused callbacks beyond the BCET the simulation charges them; the simulated "
                     "model has none of it)")
    if row.get(BOUNDED):
        parts.append(f"{row[BOUNDED]} within the analysis bound (schedules the simulated run did not reach, which the "
                     "analysis covers)")
    if row[UNEXPLAINED]:
        parts.append(f"{row[UNEXPLAINED]} unexplained" + (
            "" if against == "the bound" else " (the model's own work in their response exceeds the simulated worst "
                                              "case: a scenario the simulation did not reach, or a defect)"))
    return f"{ACCOUNTED}of the {row['above']} instances above {against}, " + ", ".join(parts)


def attribute(findings, acc_json: dict) -> None:
    """Adds to each verdict finding (verdict.Finding) the accounting of its chain: against the
    analysis bound when it exceeds it, else against the simulated worst case."""
    for f in findings:
        if f.exceeds_bound:
            text = cause_text(acc_json["chains"].get(f.chain), "the bound")
        elif f.exceeds_simulation:
            text = cause_text((acc_json.get("simulated") or {}).get(f.chain), "the simulated worst case")
        else:
            text = None
        if text:
            f.causes.insert(0, text)


def probe_beside(seconds: float):
    """(PlatformProbe not yet entered, None) to run beside a run, or (None, why it cannot)."""
    if os.geteuid() != 0:
        return None, "platform not measured: its probe needs root (SCHED_FIFO 99); run as root to tell " \
                     "platform blackouts from other causes"
    return PlatformProbe(seconds), None


def report_lines(acc_json: dict, color: bool = False) -> list[str]:
    """The accounting in the run report: per chain the counts of instances above the bound by
    cause, and raw against platform-free mean / p99 / max (ms); unexplained in red."""
    rows = [["chain", "bound", "above", "platform", "overrun", "unexplained", "|", "mean", "p99", "max", "|",
             "free", "mean", "p99", "max"]]
    red = [False]
    for name, r in acc_json["chains"].items():
        raw, free = r["raw"], r["platform_free"] or {}
        rows.append([name, output.ms(r["bound_ns"]) + ("*" if r.get("bound_kind") == "simulated" else ""),
                     r["above"], r["platform"], r["overrun"], r["unexplained"], "|",
                     *(output.ms(raw[k]) for k in ("mean_ns", "p99_ns", "max_ns")), "|",
                     free.get("instances", "-"), *(output.ms(free.get(k)) for k in ("mean_ns", "p99_ns", "max_ns"))])
        red.append(r["unexplained"] > 0)
    lines = ["accounting: instances above the bound by cause; raw and platform-free (no platform blackout in "
             "the busy window) response times (ms)"]
    # a chain with unexplained instances: its whole row in red (a colored cell would shift the columns)
    lines += ["  " + output.red(ln, color and bad) for ln, bad in zip(output.table(rows, sep=" "), red)]
    if any(r.get("bound_kind") == "simulated" for r in acc_json["chains"].values()):
        lines.append("  * no analysis bound: the simulated worst case")
    for name, d in (acc_json.get("dispatch_overhead") or {}).items():
        lines.append(f"  executor {name}: own time per dispatch (backlogged) max {d['max_ns'] / 1e3:.1f} us, p99 "
                     f"{d['p99_ns'] / 1e3:.1f} us over {d['dispatches']} dispatches; model's dispatch_overhead "
                     f"{d['model_ns'] / 1e3:.1f} us")
    for name, r in acc_json["chains"].items():
        shown = [c for c in r["cases"] if c["cause"] == UNEXPLAINED][:3] + \
                [c for c in r["cases"] if c["cause"] == OVERRUN][:1]
        for c in shown:
            lines.append("  " + (output.red(c["text"], color) if c["cause"] == UNEXPLAINED else c["text"]))
    return lines
