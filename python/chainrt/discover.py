"""From a running ROS 2 graph to a chainrt model skeleton (``chainrt discover``).

Two halves, kept apart so the second is testable without ROS 2:

* :func:`observe` joins the graph (rclpy graph API, the caller's ``ROS_DOMAIN_ID`` and RMW) and
  records what a graph can tell: nodes (and whether they stayed while observing), topics with
  the type of every endpoint, publishers and subscriptions per node, the servers and clients of
  services per node, the process of each node (the DDS participant of its endpoints: nodes of
  one process share its GUID prefix), and, by subscribing to every topic for a while, the send
  times (the writer's source timestamp) of every message per publishing node and its serialized
  size.
* :func:`skeleton` turns that :class:`Graph` into a model in the documented format
  (docs/model.md) plus a note per entry saying what was inferred rather than observed. A graph
  does not show callbacks, so they are inferred: one subscription callback per (node,
  subscribed topic), one service callback per served service; a topic a node publishes is
  attributed to the subscription callback whose input has the same rate (data-driven, never the
  node's own input), else to a timer whose period is the one fitted to the send times (two
  topics of one period share a timer when their messages are sent together). A node that is a
  client of a service is inferred to call it from its data-driven callback, whose outputs its
  client callback (the continuation) then publishes. Candidate chains follow publish ->
  subscribe edges (between endpoints of the same type) and request -> server -> response hops.
  Execution times are not observable from the graph: they are left out, and ``chainrt profile
  MODEL --write`` fills them (``chainrt check`` reports them missing until then).

What the observation cannot determine is said in the file, never guessed silently: a topic with
endpoints of different types, nodes that came or left while observing, two nodes of one name,
a source that is not one periodic timer (then no period), a timer nobody's messages showed.
"""

from __future__ import annotations

import importlib
import math
import os
import time
from dataclasses import dataclass, field

from . import output
from .diagnose import CHAIN_AWARE, one_of
from .fastdds import loopback_participants
from .monitor_msg import EVENTS_SUFFIX, STATS_SUFFIX

# Graph entities that are ROS 2 infrastructure, not the application.
INFRA_TOPICS = {"/rosout", "/parameter_events"}
INFRA_SERVICE_SUFFIXES = ("describe_parameters", "get_parameters", "get_parameter_types", "list_parameters",
                          "set_parameters", "set_parameters_atomically", "get_type_description",
                          "get_logger_levels", "set_logger_levels")
MONITOR_SUFFIXES = (STATS_SUFFIX, EVENTS_SUFFIX)  # chainrt's own monitoring topics
RATE_MATCH = 0.15        # a published topic "follows" an input when the rates differ by < 15 %
MAX_CHAINS = 64          # candidate chains listed at most (paths can multiply in dense graphs)
WCET_MARK = "wcet: measure with `chainrt profile`"   # chainrt profile --write replaces it
MOVE_LATE_NEAR = 0.5     # _on_grid: late sends moved back with half the sends on one phase ...
FULL_GRID = 0.9          # ... when then at least this share of the periods has its own send
FLOOR_SEGMENTS = 8       # the observation is cut into at most this many segments ...
FLOOR_SENDS = 4          # ... of about this many sends each (at least 3 segments), for the floors of the delay
FLOOR_BAND = 4           # the periods consistent with the floors: their band at most this times the narrowest
ROUND_SHARE = 0.4        # a written period is rounded by at most this share of the fit's bound
MAX_RATE_HZ = 100_000    # whole rates up to this one (a 10 us period, a model's shortest) are tried
SAME_TIMER_NS = 1_000_000  # two topics of one period come from one timer when sent within this


@dataclass
class PeriodFit:
    """A fit of send times t_i = t_0 + k_i * P + d_i, k_i counting whole periods (a release a
    loaded system skipped adds one more), d_i >= 0 the send's delay."""
    period_ns: float      # P: the middle of the periods consistent with the sends' floor
    bound_ns: float       # the true period lies within period_ns +- bound_ns (see _floor_band)
    stderr_ns: float      # standard error of the least-squares period over the punctual sends
    jitter_ns: float      # standard deviation of the residuals (send-time jitter)
    t0_ns: float          # t_0: the fitted send time of the first period (where in the period sends fall)
    samples: int
    periods: int          # whole periods spanned
    skipped: int          # periods without a message
    periodic: bool        # one periodic source (residuals well inside a period)
    why: str = ""         # why not periodic


def _phases(rel, p: float):
    """Each send's place in a period of p, 0..1 (rel: send times after the first, numpy)."""
    import numpy as np
    return np.mod(rel / p, 1.0)


def _concentration(rel, p: float) -> float:
    """How well the sends line up on a grid of period p: |mean of exp(2 pi i phase)| (1: all on
    one phase; about 1/sqrt(n) for times unrelated to p)."""
    import numpy as np
    a = 2.0 * np.pi * _phases(rel, p)
    return float(np.hypot(np.cos(a).sum(), np.sin(a).sum()) / len(rel))


def _refine(rel, p: float, span: float) -> float:
    """The period near p on whose grid the sends line up best (the peak is about p/span wide)."""
    width = 0.02
    for _ in range(4):
        grid = [p * (1 + width * (i / 20.0 - 1)) for i in range(41)]
        p = max(grid, key=lambda c: _concentration(rel, c))
        width = max(2.0 / max(span / p, 1.0), width / 8)
    return p


def _slot_indices(x, move_late: bool = True):
    """The release index of each send, x: the sends' times in periods from the grid's phase, in
    time order. A send belongs to the last release at or before it (delays are late, never early;
    a quarter period of jitter before the grid allowed); one delayed by more than three quarters
    of a period (an executor busy with a long callback) lands, before its grid point, in the next
    release's slot: when that slot's own send follows and the slot before is empty, the delayed
    send is moved back."""
    import numpy as np
    s = np.floor(x + 0.25)
    for i in range(len(s) - 1 if move_late else 0):
        if s[i + 1] == s[i] and x[i] < s[i] and (i == 0 or s[i - 1] < s[i] - 1):
            s[i] -= 1
    return s


def _own_periods(n: int, used: int) -> bool:
    """Whether n sends over `used` distinct periods have a period each (5 % shared allowed)."""
    return n - used <= max(1, 0.05 * n)


def _grid_slots(x, near: float):
    """The release index of each send (x as for _slot_indices) given the share `near` of the
    sends on the grid's densest phase. Sends delayed into the next period are told from a second
    timer where the punctual sends dominate (three quarters on one phase): two interleaved timers
    spread their phases. A single thread busy with long callbacks (a 25 ms callback before a
    30 Hz timer) delays a third of the sends, some into the next period: with half the sends on
    one phase they are moved back when that gives every period its own send and leaves
    (almost) no period empty; interleaved timers leave periods empty or doubled either way."""
    n = len(x)
    slots = _slot_indices(x, move_late=near >= 0.75)
    if near >= MOVE_LATE_NEAR and not _own_periods(n, len(set(slots.tolist()))):
        moved = _slot_indices(x, move_late=True)
        used = len(set(moved.tolist()))
        if _own_periods(n, used) and used / float(moved.max() - moved.min() + 1) >= FULL_GRID:
            return moved
    return slots


def _on_grid(rel, p: float, n: int) -> tuple[float, float, bool]:
    """(share of the sends within an eighth of a period of the grid's densest phase, share of the
    grid's periods that have a send, whether every send has a period of its own)."""
    import numpy as np
    ph = _phases(rel, p)
    hist = np.histogram(ph, bins=20, range=(0.0, 1.0))[0]
    k = int(np.argmax(hist))
    near = sum(int(hist[(k + d) % 20]) for d in (-2, -1, 0, 1, 2)) / n
    slots = _grid_slots((rel - (k + 0.5) / 20.0 * p) / p, near)
    used = len(set(slots.tolist()))
    total = float(slots.max() - slots.min() + 1)
    return near, used / total, _own_periods(n, used)


def _segment_floors(ks, rel, p: float):
    """The floor of the delays in each segment of the observation: (period indices, residuals on
    the grid of period p, sharpness), numpy arrays with one entry per segment that has sends.

    The observation's period indices are cut into min(FLOOR_SEGMENTS, max(3, n / FLOOR_SENDS))
    equal segments; a segment's floor is its least-delayed send, its sharpness the gap to the
    next least-delayed one. A send earlier than the median by more than an eighth of a period
    lies on no release of this grid (a delayed send counted in the next period) and is left out:
    delays are late, never early."""
    import numpy as np
    r = rel - p * ks
    ok = r >= float(np.median(r)) - p / 8
    ks, r = ks[ok], r[ok]
    k0, span = float(ks.min()), float(ks.max() - ks.min())
    segs = min(FLOOR_SEGMENTS, max(3, len(ks) // FLOOR_SENDS))
    seg = np.minimum(((ks - k0) / max(span, 1.0) * segs).astype(int), segs - 1)
    fk, fr, sharp = [], [], []
    for j in range(segs):
        rj, kj = r[seg == j], ks[seg == j]
        if len(rj) == 0:
            continue
        o = np.argsort(rj, kind="stable")
        fk.append(float(kj[o[0]]))
        fr.append(float(rj[o[0]]))
        sharp.append(float(rj[o[1]] - rj[o[0]]) if len(rj) > 1 else 0.0)
    return np.array(fk), np.array(fr), np.array(sharp)


def _floor_width(fk, fr, d: float) -> float:
    """The height of the narrowest band of slope p + d (the grid's period changed by d) that holds
    every segment's floor (fk, fr as from _segment_floors for period p)."""
    v = fr - d * fk
    return float(v.max() - v.min())


def _floor_band(fk, fr, sharp) -> tuple[float, float]:
    """(middle, half-width) of the period corrections d for which every segment's floor lies in a
    band no higher than FLOOR_BAND times the narrowest one (and than the floors' median sharpness).

    A timer's sends are only ever late, and under load their delays are autocorrelated and drift
    (an executor starved more towards the end of the observation): a fit through every send, or
    through the punctual ones, tilts with the drift, and its standard error, which assumes
    independent residuals, hides it. The least-delayed send of each segment lies nearest the
    release grid; on the true period the floors lie in a band as high as the delays' floor
    varies. The narrowest band over all periods (its slope is one between two floors: the width
    is convex and piecewise linear in d) is widened FLOOR_BAND times, and the periods whose band
    fits are the ones the observation cannot tell from the true one. What no fit can tell: the
    floor itself ramping steadily over the whole observation (no send near its release late in
    it) looks like a longer period."""
    import numpy as np
    n = len(fk)
    if n < 2 or float(fk.max() - fk.min()) <= 0:
        return 0.0, 0.0
    slopes = [0.0] + [(fr[j] - fr[i]) / (fk[j] - fk[i]) for i in range(n) for j in range(i + 1, n) if fk[j] != fk[i]]
    d0 = min(slopes, key=lambda d: _floor_width(fk, fr, d))
    limit = FLOOR_BAND * max(_floor_width(fk, fr, d0), float(np.median(sharp)))
    step = 2.0 * limit / float(fk.max() - fk.min()) + 1.0

    def edge(sign: float) -> float:
        lo, hi = 0.0, step
        while _floor_width(fk, fr, d0 + sign * hi) <= limit:
            lo, hi = hi, 2 * hi
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _floor_width(fk, fr, d0 + sign * mid) <= limit else (lo, mid)
        return d0 + sign * lo

    a, b = edge(-1.0), edge(1.0)
    return (a + b) / 2, (b - a) / 2


def fit_period(times_ns: list[int]) -> PeriodFit | None:
    """The period of one periodic source from its send times (None: fewer than 3).

    A timer's sends lie on a grid t_0 + k P plus a delay (the executor's), and a loaded system
    skips releases, so gaps are multiples of P blurred by the delays. Candidates (gaps, their
    fractions, the mean gap allowing for skipped releases) are refined to the period on whose
    grid the sends line up best; the period is the LARGEST candidate on whose grid most sends
    (half) lie within an eighth of a period of one phase, one send per period, at least 30 % of
    the periods used (P/2 fits as well, but is smaller; 2P puts two sends in a period). Then
    each send gets its period index k_i and P is fitted by least squares over the punctual sends
    (those delayed far beyond the others -- an executor busy with a long callback -- left out),
    its standard error from their residuals. That fit follows the delays where they drift, so the
    period written is the middle of the periods consistent with the floor of the delays
    (_floor_band), and its bound covers those periods and the least-squares one. No candidate
    passing: not one periodic timer."""
    import numpy as np
    ts = sorted(times_ns)
    n = len(ts)
    if n < 3 or ts[-1] <= ts[0]:
        return None
    rel = np.array([t - ts[0] for t in ts], dtype=float)
    span = float(rel[-1])
    gaps = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
    if not gaps:
        return None
    cands = []
    for q in (0.05, 0.1, 0.25, 0.5):
        g = gaps[min(len(gaps) - 1, int(q * len(gaps)))]
        cands += [g / k for k in range(1, 5)]
    cands += [span / (n - 1)]
    cands = sorted({round(c, -3) for c in cands if c > 0}, reverse=True)
    seen: list[float] = []
    best, best_why, best_near = None, "", 0.0
    for c in cands:
        if any(abs(c - x) <= 0.01 * x for x in seen):
            continue
        seen.append(c)
        p = _refine(rel, c, span)
        near, used, own = _on_grid(rel, p, n)
        if near >= 0.5 and own and used >= 0.3:
            if best is None or p > best * 1.01:
                best, best_near = p, near
        elif not best_why:
            best_why = (f"on the best grid ({p / 1e6:.4g} ms) {100 * near:.0f} % of the sends line up, "
                        f"{100 * used:.0f} % of its periods have a send"
                        + ("" if own else ", several sends share a period"))
    periodic, why = best is not None, "" if best is not None else best_why
    p = best if best is not None else _refine(rel, cands[-1] if cands else gaps[len(gaps) // 2], span)
    # period indices, then least squares over the punctual sends
    a = 2.0 * np.pi * _phases(rel, p)
    ref = float(np.arctan2(np.sin(a).sum(), np.cos(a).sum()) / (2 * np.pi)) * p
    ks = _grid_slots((rel - ref) / p, best_near)
    keep = np.ones(n, dtype=bool)
    for rnd in range(2):
        kk, tt = ks[keep], rel[keep]
        if len(kk) < 3 or float(((kk - kk.mean()) ** 2).sum()) <= 0:
            return None
        km, tm = kk.mean(), tt.mean()
        sxx = float(((kk - km) ** 2).sum())
        p = float(((kk - km) * (tt - tm)).sum() / sxx)
        t0 = tm - p * km
        if rnd == 0:
            r = rel - (t0 + p * ks)
            med = float(np.median(r))
            mad = float(np.median(np.abs(r - med))) * 1.4826
            keep = np.abs(r - med) <= max(3 * mad, 1_000.0)
            if keep.sum() < max(3, n // 2):
                keep = np.ones(n, dtype=bool)
    res = tt - (t0 + p * kk)
    stderr = float(np.sqrt((res ** 2).sum() / max(1, len(tt) - 2)) / np.sqrt(sxx))
    jitter = float(np.sqrt(((rel - (t0 + p * ks)) ** 2).sum() / max(1, n - 2)))
    d, half = _floor_band(*_segment_floors(ks, rel, p))
    slots = int(ks.max() - ks.min() + 1)
    used = len(set(ks.tolist()))
    return PeriodFit(p + d, max(half, abs(d)), stderr, jitter, ts[0] + t0 + p * float(ks.min()), n, slots - 1,
                     slots - used, periodic, why)


def _rate_period(period_ns: float, bound_ns: float) -> int | None:
    """The period of a whole rate in hertz (1 Hz .. MAX_RATE_HZ) within `bound_ns` of
    `period_ns`, as ROS 2 clients make it (1/30 s: 33333333 ns, the nanoseconds truncated), the
    nearest when several are; None when none is."""
    r = round(1e9 / period_ns) if period_ns > 0 else 0
    fits = [(abs(1e9 / q - period_ns), 1_000_000_000 // q) for q in (r - 1, r, r + 1)
            if 1 <= q <= MAX_RATE_HZ and abs(1e9 / q - period_ns) <= bound_ns]
    return min(fits)[1] if fits else None


def exact_period(fit: PeriodFit) -> tuple[int, int]:
    """(period, tolerance) in ns to write: a whole millisecond within ROUND_SHARE of the fit's
    bound (``20ms`` for a 20 ms timer), else the period of a whole rate within the bound (a 30 Hz
    timer: ``33333333ns``, as rclpy and rclcpp make 1/30 s), else the fitted period rounded to the
    coarsest unit within ROUND_SHARE of the bound (``33360us``); and a binding tolerance of the
    bound plus that rounding (so it holds every period the observation allows), at least 1 us and
    100 ppm of the period."""
    p = fit.period_ns
    best = max(1, round(p))
    for unit in (1_000_000, 100_000, 10_000, 1_000, 100, 10, 1):
        v = round(p / unit) * unit
        if v > 0 and abs(v - p) <= max(ROUND_SHARE * fit.bound_ns, 0.5):
            best = v
            break
    if best % 1_000_000:  # not a whole millisecond: a whole rate the observation allows is the timer's
        best = _rate_period(p, fit.bound_ns) or best
    tol = max(fit.bound_ns + abs(best - p), 1e-4 * best)
    tol = max(1_000, int(math.ceil(tol / 1_000)) * 1_000)
    return int(best), min(tol, int(best) // 2)


@dataclass
class TopicStats:
    type: str = ""
    count: int = 0                 # messages received while observing
    rate_hz: float | None = None   # None: fewer than 3 messages seen
    median_gap_s: float | None = None  # median inter-arrival time (robust to skipped releases)
    size_max: int | None = None    # serialized (CDR) bytes
    size_mean: float | None = None
    note: str = ""                 # why rate/size are missing
    types: list[str] = field(default_factory=list)       # every type its endpoints use
    fits: dict[str, PeriodFit] = field(default_factory=dict)  # publishing node -> its send-time fit
    sends: dict[str, list[int]] = field(default_factory=dict)  # publishing node -> send times (ns)


@dataclass
class Graph:
    nodes: dict[str, str] = field(default_factory=dict)          # node -> process key
    topics: dict[str, TopicStats] = field(default_factory=dict)  # ROS topic name -> stats
    publishes: dict[str, list[str]] = field(default_factory=dict)   # node -> topics
    subscribes: dict[str, list[str]] = field(default_factory=dict)  # node -> topics
    services: dict[str, list[str]] = field(default_factory=dict)    # node -> services it serves
    clients: dict[str, list[str]] = field(default_factory=dict)     # node -> services it calls
    pub_types: dict[tuple[str, str], str] = field(default_factory=dict)  # (node, topic) -> type
    sub_types: dict[tuple[str, str], str] = field(default_factory=dict)
    presence: dict[str, tuple[float, float]] = field(default_factory=dict)  # node -> (first, last) seen, s
    duplicates: list[str] = field(default_factory=list)          # node names held by several nodes
    observed_s: float = 0.0
    domain: str = ""
    rmw: str = ""


# --------------------------------------------------------------------------- observing (rclpy)

def _fq(name: str, ns: str) -> str:
    return (ns.rstrip("/") + "/" + name) if ns not in ("", "/") else "/" + name


def _is_ignored_node(fq: str, own: str) -> bool:
    base = fq.rsplit("/", 1)[-1]
    return fq == own or base.startswith("_") or base.startswith("chainrt_monitor_")


def _is_ignored_topic(t: str) -> bool:
    return t in INFRA_TOPICS or t.endswith(MONITOR_SUFFIXES) or "/_" in t


def _is_ignored_service(s: str) -> bool:
    return s.rsplit("/", 1)[-1].endswith(INFRA_SERVICE_SUFFIXES) or "/_" in s


def _message_class(type_name: str):
    """``pkg/msg/Name`` -> the Python message class, or None when it is not importable here."""
    parts = type_name.split("/")
    if len(parts) != 3:
        return None
    try:
        return getattr(importlib.import_module(f"{parts[0]}.{parts[1]}"), parts[2])
    except (ImportError, AttributeError):
        return None


def observe(duration_s: float = 5.0, settle_s: float = 2.0, expect_nodes: int = 0) -> Graph:
    """Joins the graph for ``settle_s`` (discovery) plus ``duration_s`` (rates and sizes).
    ``expect_nodes``: stop waiting for discovery early once this many nodes are seen."""
    import rclpy
    with loopback_participants():  # nothing bound beyond loopback under localhost discovery
        return _observe(rclpy, duration_s, settle_s, expect_nodes)


def _observe(rclpy, duration_s: float, settle_s: float, expect_nodes: int) -> Graph:
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("_chainrt_discover", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        _settle(executor, node, settle_s, expect_nodes)
        obs = _Observer(node)
        obs.scan()
        end = time.monotonic() + duration_s
        next_scan = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() >= next_scan:
                obs.scan()
                next_scan = time.monotonic() + 0.5
        obs.scan()
        g = obs.finish(duration_s)
        executor.shutdown()
        node.destroy_node()
        return g
    finally:
        rclpy.shutdown(context=context)


def _settle(executor, node, settle_s: float, expect_nodes: int) -> None:
    """Discovery: waits until the graph has not grown for `settle_s` (or the expected number of
    nodes is there and quiet for 0.5 s); an empty graph is given up to 5 x settle_s (at least
    10 s: discovery on a loaded machine can take seconds)."""
    own = node.get_fully_qualified_name()
    start = time.monotonic()
    give_up = start + max(10.0, 5 * settle_s)
    last, stable_since = -1, start
    while True:
        executor.spin_once(timeout_sec=0.1)
        now = time.monotonic()
        names = [n for n in node.get_node_names_and_namespaces() if not _is_ignored_node(_fq(*n), own)]
        size = len(names) + len(node.get_topic_names_and_types())
        if size != last:
            last, stable_since = size, now
        quiet = now - stable_since
        if expect_nodes and len(names) >= expect_nodes and quiet > 0.5:
            break
        if names and not expect_nodes and quiet >= max(settle_s, 0.5):
            break
        if now >= give_up or (names and now - start >= max(10.0, 5 * settle_s)):
            break


class _Observer:
    """The graph as one node sees it over repeated looks (scan): nodes, endpoints, types, and on
    every topic a raw subscription that records each message's writer, time and size."""

    def __init__(self, node) -> None:
        from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

        self.node, self.own = node, node.get_fully_qualified_name()
        self.g = Graph(domain=os.environ.get("ROS_DOMAIN_ID", "0"),
                       rmw=os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp"))
        self.qos = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=100,
                              reliability=QoSReliabilityPolicy.BEST_EFFORT,
                              durability=QoSDurabilityPolicy.VOLATILE)
        self.writer_of: dict[bytes, str] = {}     # publisher endpoint gid -> node
        self.measured: set[str] = set()
        self.sizes: dict[str, list[int]] = {}
        self.t_obs = time.monotonic()

    def scan(self) -> None:
        """One look at the graph: nodes, endpoints, types; new topics get a subscription."""
        self._scan_nodes(time.monotonic() - self.t_obs)
        for t, types in self.node.get_topic_names_and_types():
            self._scan_topic(t, types)

    def _scan_nodes(self, now: float) -> None:
        g, node = self.g, self.node
        seen: dict[str, int] = {}
        for name, ns in node.get_node_names_and_namespaces():
            fq = _fq(name, ns)
            if _is_ignored_node(fq, self.own):
                continue
            seen[fq] = seen.get(fq, 0) + 1
            first = g.presence.get(fq, (now, now))[0]
            g.presence[fq] = (first, now)
            g.nodes.setdefault(fq, "")
            pubs = {t: ty for t, ty in node.get_publisher_names_and_types_by_node(name, ns)
                    if not _is_ignored_topic(t)}
            subs = {t: ty for t, ty in node.get_subscriber_names_and_types_by_node(name, ns)
                    if not _is_ignored_topic(t)}
            g.publishes[fq] = sorted(set(g.publishes.get(fq, [])) | set(pubs))
            g.subscribes[fq] = sorted(set(g.subscribes.get(fq, [])) | set(subs))
            for t, ty in pubs.items():
                g.pub_types.setdefault((fq, t), ty[0] if ty else "")
            for t, ty in subs.items():
                g.sub_types.setdefault((fq, t), ty[0] if ty else "")
            srv = {s for s, _ in node.get_service_names_and_types_by_node(name, ns) if not _is_ignored_service(s)}
            cli = {s for s, _ in node.get_client_names_and_types_by_node(name, ns) if not _is_ignored_service(s)}
            g.services[fq] = sorted(set(g.services.get(fq, [])) | srv)
            g.clients[fq] = sorted(set(g.clients.get(fq, [])) | cli)
        for fq, k in seen.items():
            if k > 1 and fq not in g.duplicates:
                g.duplicates.append(fq)

    def _scan_topic(self, t: str, types) -> None:
        g, node = self.g, self.node
        infos = list(node.get_publishers_info_by_topic(t)) + list(node.get_subscriptions_info_by_topic(t))
        for info in infos:
            fq = _fq(info.node_name, info.node_namespace)
            # processes: nodes whose endpoints share a DDS participant (GUID prefix)
            if fq in g.nodes and not g.nodes[fq]:
                g.nodes[fq] = bytes(info.endpoint_gid[:12]).hex()
        if _is_ignored_topic(t):
            return
        for info in node.get_publishers_info_by_topic(t):
            self.writer_of[bytes(info.endpoint_gid[:16])] = _fq(info.node_name, info.node_namespace)
        st = g.topics.setdefault(t, TopicStats())
        for ty in types:
            if ty not in st.types:
                st.types.append(ty)
        if t in self.measured or not any(t in v for v in list(g.publishes.values()) + list(g.subscribes.values())):
            return
        self.measured.add(t)
        st.type = st.types[0] if st.types else ""
        cls = _message_class(st.type)
        if cls is None:
            st.note = f"message type {st.type or '?'} is not importable here: rate and size not measured"
            return
        self.sizes[t] = []

        def on_msg(data, info, t=t):
            gid = (info.get("publisher_gid") or {}).get("data") or b""
            who = self.writer_of.get(bytes(gid[:16]), "?")
            g.topics[t].sends.setdefault(who, []).append(int(info["source_timestamp"]))
            self.sizes[t].append(len(data))

        node.create_subscription(cls, t, on_msg, self.qos, raw=True)

    def finish(self, duration_s: float) -> Graph:
        """The graph with what the subscriptions measured: per topic its count, sizes, rate and
        each writer's period fit."""
        g = self.g
        g.observed_s = duration_s
        for fq in g.nodes:
            g.nodes[fq] = g.nodes[fq] or fq  # no endpoint seen: a process of its own
        for t, st in g.topics.items():
            seen = self.sizes.get(t)
            if seen is None:
                continue
            st.count = len(seen)
            if seen:
                st.size_max, st.size_mean = max(seen), sum(seen) / len(seen)
            every = sorted(x for v in st.sends.values() for x in v)
            if len(every) >= 3 and every[-1] > every[0]:
                st.rate_hz = (len(every) - 1) / ((every[-1] - every[0]) / 1e9)
                gaps = sorted(b - a for a, b in zip(every, every[1:]))
                st.median_gap_s = gaps[len(gaps) // 2] / 1e9
            else:
                st.note = f"{len(every)} message(s) in {duration_s:g} s: rate not measured"
            for who, ts in st.sends.items():
                f = fit_period(ts)
                if f is not None:
                    st.fits[who] = f
        return g


# --------------------------------------------------------------------------- the skeleton (pure)

def model_name(ros_name: str) -> str:
    """A ROS name as a model name: without the leading slash (the runtime adds it back)."""
    return ros_name.lstrip("/")


def nice_period_ns(rate_hz: float) -> int:
    """The period of a rate known only as messages per second (no send times): rounded to a
    whole millisecond when within 2 %, else to 10 microseconds."""
    p = 1e9 / rate_hz
    ms = round(p / 1e6)
    if ms >= 1 and abs(p - ms * 1e6) <= 0.02 * p:
        return int(ms * 1_000_000)
    return max(10_000, int(round(p / 10_000)) * 10_000)


def _ident(name: str) -> str:
    return model_name(name).replace("/", "_")


@dataclass
class Entry:
    fields: dict            # ordered model fields (values already in model syntax)
    note: str = ""          # inferred / unknown, shown as a comment


@dataclass
class Skeleton:
    hosts: list[Entry] = field(default_factory=list)
    executors: list[Entry] = field(default_factory=list)
    nodes: list[Entry] = field(default_factory=list)
    topics: list[Entry] = field(default_factory=list)
    services: list[Entry] = field(default_factory=list)
    callbacks: list[Entry] = field(default_factory=list)
    chains: list[Entry] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # what the observation could not determine


def _rates_match(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= RATE_MATCH * max(a, b)


def _same_timer(a: PeriodFit, b: PeriodFit) -> bool:
    """Two send-time fits of one node come from one timer: the same period (within their
    precision) and messages sent together in every period."""
    tol = max(a.bound_ns + b.bound_ns, 1e-4 * a.period_ns)
    if abs(a.period_ns - b.period_ns) > tol:
        return False
    # the offset of b's sends in a's period (t_0 of both lie at the start of the observation, so
    # the period's error hardly moves it)
    d = (b.t0_ns - a.t0_ns) % a.period_ns
    d = min(d, a.period_ns - d)
    return d <= max(SAME_TIMER_NS, 3 * (a.jitter_ns + b.jitter_ns))


def skeleton(g: Graph, name: str = "discovered", cores: int | None = None) -> Skeleton:
    """The model skeleton of an observed graph: one executor per process, a node per node, the
    topics used, a callback per subscription, served service and (inferred) timer, and the
    candidate chains from timers to sinks; each entry with what was inferred or is unknown."""
    b = _SkeletonBuilder(g, cores or os.cpu_count() or 1)
    b.executors_and_nodes()
    b.topics()
    b.servers()
    for n in sorted(g.nodes):
        b.node_callbacks(n)
    b.finish_callbacks()
    b.chains()
    b.header(name)
    return b.sk


class _SkeletonBuilder:
    """skeleton()'s stages, each adding to ``sk`` (and its warnings, in the order they are found)."""

    def __init__(self, g: Graph, cores: int) -> None:
        self.g, self.sk = g, Skeleton()
        self.sk.hosts.append(Entry({"name": "localhost", "cores": cores},
                                   "this machine's core count (the graph does not show hosts)"))
        self.topics_used = sorted({t for ts in list(g.publishes.values()) + list(g.subscribes.values()) for t in ts})
        self.servers_of: dict[str, list[str]] = {}  # service -> the nodes that serve it
        self.cb_names: set[str] = set()
        self.publishes_of: dict[str, list[str]] = {}   # callback -> topics
        self.calls_of: dict[str, list[str]] = {}       # callback -> services
        self.node_of: dict[str, str] = {}              # callback -> ROS node
        self.sub_cb: dict[tuple[str, str], str] = {}   # (node, topic) -> callback
        self.server_cb: dict[str, str] = {}            # service -> callback
        self.client_cb: dict[tuple[str, str], str] = {}  # (node, service) -> callback
        self.timers: list[str] = []
        self.entries: dict[str, Entry] = {}
        self.called: list[str] = []
        self.rate = {t: self.topic_rate(t) for t in self.topics_used}

    # ---- executors, nodes, topics, servers
    def executors_and_nodes(self) -> None:
        """One executor per process, named after its first node; the nodes, with those that
        came, went or share a name said."""
        g, sk = self.g, self.sk
        procs: dict[str, list[str]] = {}
        for n in sorted(g.nodes):
            procs.setdefault(g.nodes[n], []).append(n)
        exec_of: dict[str, str] = {}
        used_exec: set[str] = set()
        for key, members in sorted(procs.items(), key=lambda kv: kv[1][0]):
            ename = model_name(members[0]).replace("/", "_") + "_exec"
            while ename in used_exec:
                ename += "_"
            used_exec.add(ename)
            for n in members:
                exec_of[n] = ename
            sk.executors.append(Entry(
                {"name": ename, "host": "localhost", "process": ename, "policy": "ros-default", "threads": 1},
                f"inferred: one process ({len(members)} node(s) share a DDS participant), "
                "run by a single-threaded ROS 2 default executor"))
        came_went = {}
        if g.presence:
            for n, (first, last) in g.presence.items():
                bits = []
                if first > 0.6:
                    bits.append(f"appeared {first:.1f} s into the observation")
                if last < g.observed_s - 0.6 and g.observed_s > 0:
                    bits.append(f"was gone {last:.1f} s into it")
                if bits:
                    came_went[n] = " and ".join(bits)
        for n in sorted(g.nodes):
            note = ""
            if n in came_went:
                note = (f"unknown: this node {came_went[n]}; its rates are over the time it was there, its "
                        "callbacks are those its endpoints showed")
                sk.warnings.append(f"node {n} {came_went[n]}: the graph changed while observing")
            if n in g.duplicates:
                note = (note + "; " if note else "") + ("unknown: several nodes have this name; their endpoints "
                                                        "are merged into one node here")
                sk.warnings.append(f"several nodes are named {n}: their endpoints are merged into one model node")
            sk.nodes.append(Entry({"name": model_name(n), "executor": exec_of[n]}, note))

    def topics(self) -> None:
        """The topics some node publishes or takes, with their types, sizes and rates."""
        for t in self.topics_used:
            st = self.g.topics.get(t, TopicStats())
            f = {"name": model_name(t)}
            types = st.types or ([st.type] if st.type else [])
            bits = [" or ".join(types) if types else "type unknown"]
            if len(types) > 1:
                bits.append(f"unknown: the topic has {len(types)} types; endpoints of different types never "
                            f"exchange a message, so only same-type publishers and subscriptions are connected; "
                            f"size measured for {st.type or types[0]} only")
                self.sk.warnings.append(f"topic {t} has {len(types)} types ({', '.join(types)}): publishers and "
                                        "subscriptions of different types are not connected in the model")
            if st.size_max is not None:
                f["size"] = f"{st.size_max}B"
                bits.append(f"size: largest of {st.count} messages (mean {st.size_mean:.0f}B)")
            else:
                bits.append("unknown: size (default 64B)")
            if st.rate_hz is not None:
                bits.append(f"{st.rate_hz:.1f} msg/s")
            if st.note:
                bits.append(st.note)
            self.sk.topics.append(Entry(f, "; ".join(bits)))

    def servers(self) -> None:
        """Who serves each service (the model keeps one server)."""
        for n in sorted(self.g.nodes):
            for s in self.g.services.get(n, []):
                self.servers_of.setdefault(s, []).append(n)
        for s, ns_ in self.servers_of.items():
            if len(ns_) > 1:
                self.sk.warnings.append(f"service {s} is served by {len(ns_)} nodes ({', '.join(ns_)}): the model "
                                        f"keeps {ns_[0]}'s server (a request goes to one of them)")

    # ---- rates
    def topic_rate(self, t: str) -> float | None:
        """A topic's rate: its publisher's fitted period when it has one periodic publisher (a
        message the observer lost does not change it), else messages per second."""
        st = self.g.topics.get(t)
        if st is None:
            return None
        fits = [f for f in st.fits.values() if f.periodic]
        if len(st.fits) == 1 and fits:
            return 1e9 / fits[0].period_ns
        return st.rate_hz

    def node_rate(self, n: str, t: str) -> float | None:
        """The rate at which node n sends topic t (its own messages), else the topic's."""
        st = self.g.topics.get(t)
        f = st.fits.get(n) if st else None
        if f is not None and f.periodic:
            return 1e9 / f.period_ns
        if st and n in st.sends and len(st.sends[n]) >= 3:
            ts = sorted(st.sends[n])
            return (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9) if ts[-1] > ts[0] else None
        return self.rate.get(t)

    def raw_rate(self, t: str, n: str | None = None) -> float | None:
        """Messages per second as received while observing (of node n's sends, or of all)."""
        st = self.g.topics.get(t)
        if st is None:
            return None
        ts = sorted(st.sends.get(n, [])) if n else sorted(x for v in st.sends.values() for x in v)
        if len(ts) >= 3 and ts[-1] > ts[0]:
            return (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9)
        return st.rate_hz

    def follows_input(self, s_in: str, n: str, t: str) -> bool:
        """Node n sends t because it takes s_in: the rates match, measured alike -- the
        messages received per second, or the fitted periods when both are periodic (an output
        that follows its input has the input's rate; its send times need not look periodic)."""
        a, b = self.g.topics.get(s_in), self.g.topics.get(t)
        fa = [f for f in a.fits.values() if f.periodic] if a else []
        fb = b.fits.get(n) if b else None
        if a is not None and len(a.fits) == 1 and fa and fb is not None and fb.periodic and \
                _rates_match(1e9 / fa[0].period_ns, 1e9 / fb.period_ns):
            return True
        ra, rb = self.raw_rate(s_in), self.raw_rate(t, n)
        if ra is None and rb is None:
            return _rates_match(self.rate.get(s_in), self.rate.get(t))
        return _rates_match(ra, rb)

    # ---- callbacks
    def unique(self, base: str) -> str:
        n, i = base, 2
        while n in self.cb_names:
            n, i = f"{base}_{i}", i + 1
        self.cb_names.add(n)
        return n

    def _callback(self, cb: str, n: str, publishes: list[str], entry: Entry) -> None:
        self.publishes_of[cb], self.calls_of[cb], self.node_of[cb] = publishes, [], n
        self.entries[cb] = entry

    def node_callbacks(self, n: str) -> None:
        """Node n's callbacks: one per subscription and served service, the timers its other
        outputs imply, and the continuations of its clients."""
        g = self.g
        subs = g.subscribes.get(n, [])
        mnode = model_name(n)
        for t in subs:
            cb = self.unique(f"{mnode}/on_{_ident(t)}")
            self.sub_cb[(n, t)] = cb
            self._callback(cb, n, [], Entry({"name": cb, "kind": "subscription", "node": mnode,
                                             "topic": model_name(t)}))
        for s in g.services.get(n, []):
            if self.servers_of.get(s, [n])[0] != n:
                continue
            cb = self.unique(f"{mnode}/on_{_ident(s)}_request")
            self.server_cb[s] = cb
            self._callback(cb, n, [], Entry({"name": cb, "kind": "service", "node": mnode,
                                             "service": model_name(s)}, f"serves {s}"))
        groups, notes = self._outputs(n, subs)
        for r, fit, ts in groups:
            self._timer(n, mnode, r, fit, ts)
        for cb, ns_ in notes.items():
            self.entries[cb].note = "; ".join(ns_)
        for s in g.clients.get(n, []):
            self._client(n, mnode, s, subs)

    def _outputs(self, n: str, subs: list[str]):
        """What sends each topic node n publishes: a subscription whose input rate it follows
        (noted), else a timer; outputs of one timer grouped. Returns the timer groups (rate,
        fit, topics) and the notes per subscription callback."""
        timer_groups: list[tuple[float | None, PeriodFit | None, list[str]]] = []
        notes: dict[str, list[str]] = {}
        for t in self.g.publishes.get(n, []):
            r_t = self.node_rate(n, t)
            # data-driven: an input whose rate matches -- never the node's own input topic (a
            # node that takes and sends one topic does not send it because it took it)
            inputs = [s for s in subs if s != t]
            follows = [s for s in inputs if self.follows_input(s, n, t)]
            if not follows and inputs and r_t is None and len(inputs) == 1:
                follows = inputs
                why = f"inferred: publishes {t} (no rate measured; the node's only input)"
            else:
                why = (f"inferred: publishes {t} ({r_t or 0:.1f}/s, as its input "
                       f"{follows[0] if follows else ''})")
            if follows:
                cb = self.sub_cb[(n, follows[0])]
                self.publishes_of[cb].append(t)
                notes.setdefault(cb, []).append(why)
                continue
            st = self.g.topics.get(t)
            fit = st.fits.get(n) if st else None
            for k, (r, gf, ts) in enumerate(timer_groups):
                if fit is not None and gf is not None and fit.periodic and gf.periodic:
                    if _same_timer(fit, gf):
                        ts.append(t)
                        break
                elif fit is None and gf is None and _rates_match(r, r_t):
                    ts.append(t)
                    break
            else:
                timer_groups.append((r_t, fit, [t]))
        return timer_groups, notes

    def _timer(self, n: str, mnode: str, r: float | None, fit: PeriodFit | None, ts: list[str]) -> None:
        """The timer that sends topics `ts` of node n, with its period: fitted, from the median
        gap, or unknown."""
        cb = self.unique(f"{mnode}/timer")
        self.timers.append(cb)
        f = {"name": cb, "kind": "timer", "node": mnode}
        if fit is not None and fit.periodic:
            period, tol = exact_period(fit)
            f["period"] = output.exact_duration(period)
            f["period_tolerance"] = output.exact_duration(tol)
            note = (f"inferred: a timer; period fitted to the send times of {fit.samples} messages on "
                    f"{', '.join(ts)}: {fit.period_ns / 1e6:.6f} ms +- {fit.bound_ns / 1e3:.2f} us "
                    f"(send jitter {fit.jitter_ns / 1e6:.2f} ms"
                    + (f", {fit.skipped} release(s) without a message" if fit.skipped else "")
                    + "); period_tolerance for binding the real timer -- the timer itself is not visible "
                    "in the graph")
        elif fit is not None:
            note = (f"unknown: period -- the messages on {', '.join(ts)} are not one periodic timer's "
                    f"({fit.why}); add `period:` by hand")
            self.sk.warnings.append(f"node {n}: {', '.join(ts)} is not sent by one periodic timer ({fit.why}); "
                                    "its period is left unknown")
        elif r is not None:
            # the median gap, not the mean rate: a loaded system skips timer releases, which
            # lowers the mean rate but leaves most gaps at the period
            gap = self.g.topics[ts[0]].median_gap_s if ts[0] in self.g.topics else None
            f["period"] = output.exact_duration(nice_period_ns(1.0 / gap if gap else r))
            note = (f"inferred: a timer; period from the median interval between messages on "
                    f"{', '.join(ts)} ({r:.2f}/s on average) -- the timer itself is not visible in the graph")
        else:
            note = (f"unknown: period (no messages on {', '.join(ts)} while observing) -- "
                    "add `period:` by hand")
        self._callback(cb, n, list(ts), Entry(f, note))

    def _client(self, n: str, mnode: str, s: str, subs: list[str]) -> None:
        """Node n as a client of service s: its data-driven callback calls it, the client
        callback (the continuation) publishes that callback's outputs."""
        if s not in self.server_cb:
            self.sk.warnings.append(f"node {n} is a client of {s}, which no node of the graph serves: not modelled")
            return
        own = [self.sub_cb[(n, t)] for t in subs]
        callers = [c for c in own if self.publishes_of[c]] or own or [c for c in self.timers if self.node_of[c] == n]
        if not callers:
            self.sk.warnings.append(f"node {n} is a client of {s} but has no callback that could call it: not modelled")
            return
        caller = callers[0]
        self.calls_of[caller].append(s)
        cb = self.unique(f"{mnode}/on_{_ident(s)}_response")
        self.client_cb[(n, s)] = cb
        self._callback(cb, n, self.publishes_of[caller],
                       Entry({"name": cb, "kind": "client", "node": mnode, "service": model_name(s)},
                             f"inferred: the continuation of {caller}'s request to {s}"
                             + (f", publishes what {caller} would ({', '.join(self.publishes_of[caller])})"
                                if self.publishes_of[caller] else "")))
        self.publishes_of[caller] = []
        entries = self.entries
        entries[caller].note = ((entries[caller].note + "; ") if entries[caller].note else "") + \
            f"inferred: calls {s} (node {n} is its client)"

    def finish_callbacks(self) -> None:
        """The callbacks with what they publish and call, and the services some node calls."""
        for cb, e in self.entries.items():
            if self.publishes_of.get(cb):
                e.fields["publishes"] = "[" + ", ".join(model_name(t) for t in self.publishes_of[cb]) + "]"
            if self.calls_of.get(cb):
                e.fields["calls"] = "[" + ", ".join(model_name(s) for s in self.calls_of[cb]) + "]"
            e.note = (e.note + "; " if e.note else "") + WCET_MARK
            self.sk.callbacks.append(e)
        self.called = sorted({s for v in self.calls_of.values() for s in v})
        for s in self.called:
            callers_ = sorted({self.node_of[c] for c, v in self.calls_of.items() if s in v})
            self.sk.services.append(Entry({"name": model_name(s)},
                                          f"served by {self.servers_of[s][0]}, called by {', '.join(callers_)}; "
                                          "unknown: request and response sizes (default 64B; a graph does not "
                                          "show them)"))

    # ---- chains
    def _successors(self, path: list[str], takers: dict[str, list[tuple[str, str]]]) -> list[str]:
        cur = path[-1]
        out = []
        for t in self.publishes_of.get(cur, []):
            ty = self.g.pub_types.get((self.node_of[cur], t), "")
            out += [c for c, sty in takers.get(t, []) if not (ty and sty and ty != sty)]
        out += [self.server_cb[s] for s in self.calls_of.get(cur, []) if s in self.server_cb]
        if self.entries[cur].fields.get("kind") == "service" and len(path) > 1:
            s = next(k for k, v in self.server_cb.items() if v == cur)
            caller = path[-2]
            if s in self.calls_of.get(caller, []) and (self.node_of[caller], s) in self.client_cb:
                out.append(self.client_cb[(self.node_of[caller], s)])
        return [c for c in out if c not in path]

    def chains(self) -> None:
        """Candidate chains: every path from a timer to a callback whose outputs nobody takes."""
        takers: dict[str, list[tuple[str, str]]] = {}   # topic -> (callback, type)
        for (n, t), cb in self.sub_cb.items():
            takers.setdefault(t, []).append((cb, self.g.sub_types.get((n, t), "")))
        for v in takers.values():
            v.sort()
        chains: list[list[str]] = []

        def walk(path: list[str]) -> None:
            if len(chains) >= MAX_CHAINS:
                return
            nxt = self._successors(path, takers)
            if not nxt:
                if len(path) > 1:
                    chains.append(list(path))
                return
            for c in nxt:
                walk(path + [c])

        for tcb in self.timers:
            walk([tcb])
        chain_names: set[str] = set()
        for path in chains:
            last_node = self.entries[path[-1]].fields["node"].replace("/", "_")
            src_topics = self.publishes_of.get(path[0]) or ["chain"]
            base = f"{_ident(src_topics[0])}_to_{last_node}"
            cname, i = base, 2
            while cname in chain_names:
                cname, i = f"{base}_{i}", i + 1
            chain_names.add(cname)
            self.sk.chains.append(Entry({"name": cname, "callbacks": "[" + ", ".join(path) + "]"},
                                        "candidate: a path from a timer to a sink; period = the timer's, "
                                        "deadline assumed = period"))

    def header(self, name: str) -> None:
        g, sk = self.g, self.sk
        sk.header = [
            "Model skeleton written by `chainrt discover` from the running ROS 2 graph",
            f"(ROS_DOMAIN_ID {g.domain}, {g.rmw}; observed for {g.observed_s:g} s): "
            f"{len(g.nodes)} node(s), {len(self.topics_used)} topic(s), {len(sk.services)} service(s), "
            f"{len(sk.callbacks)} callback(s), {len(sk.chains)} candidate chain(s).",
            "Comments say what was inferred rather than observed ('inferred:') and what is unknown",
            "('unknown:'). Execution times cannot be seen in a graph: run the nodes under a chainrt",
            "executor and `chainrt profile THIS_FILE --write`; `chainrt check` lists them until then.",
            "The executors are written as observed: ROS 2's default policy (ros-default), which knows no",
            "chains. For chain-aware scheduling: `chainrt synthesize THIS_FILE -o tuned.yaml` (chain",
            f"priorities, executors, cores), or `policy: {one_of(CHAIN_AWARE, '`')[1:]} with a `priority:` per chain.",
        ]
        unmodelled = sorted({s for ss in g.services.values() for s in ss} - set(self.called))
        if unmodelled:
            sk.header.append(f"Services served but called by no node of the graph (not modelled): {', '.join(unmodelled)}.")
        for w in sk.warnings:
            sk.header.append(f"WARNING: {w}")
        sk.header.append(f"name: {name}")


def _value(v) -> str:
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if s.startswith("[") or s.replace("_", "").replace("/", "").replace(".", "").replace("-", "").isalnum():
        return s
    return '"' + s.replace('"', '\\"') + '"'


def to_yaml(sk: Skeleton) -> str:
    name = sk.header[-1].split(": ", 1)[1] if sk.header and sk.header[-1].startswith("name: ") else "discovered"
    out = [f"# {line}" for line in sk.header if not line.startswith("name: ")]
    out += ["chainrt: 1", f"name: {name}"]
    for section in ("hosts", "executors", "nodes", "topics", "services", "callbacks", "chains"):
        entries = getattr(sk, section)
        if not entries:
            continue
        out.append(f"{section}:")
        for e in entries:
            body = ", ".join(f"{k}: {_value(v)}" for k, v in e.fields.items())
            line = f"  - {{{body}}}"
            if e.note:
                line += f"  # {e.note}"
            out.append(line)
    return "\n".join(out) + "\n"
