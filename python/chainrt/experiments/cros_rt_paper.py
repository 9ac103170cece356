"""CROS-RT measured as the paper measures it: the predictability WCRT − BCRT of the
highest-priority chain over ≥ 10,000 instances, on real ROS 2 (rclcpp + Fast DDS) across two
network-namespace hosts (Lee, CROS-RT, slides "Experimental setup", "Baselines", Fig. 11–13).

The chains' nodes are one program for every configuration: the model's nodes generated as plain
rclcpp nodes (chainrt.stock), run under rclcpp's stock executor for the paper's baselines
(vanilla, Preempt-RT-style) and under chainrt's rclcpp ChainExecutor for CROS-RT's layers
(crosslayer.stacks); chainrt's own emulation of the default executor (``emulated``) only runs
beside vanilla as a fidelity column. Every run is accounted (chainrt.accounting): each instance
above its chain's ``cros-rt`` bound (at the nominal remote hop cost ``SERVER_HOP_COST_MS``;
vanilla and the emulation have none) classified platform / overrun / unexplained, and the top
chain's WCRT − BCRT and p99 − BCRT over its platform-free instances (no platform blackout in
the busy window) beside the raw ones.

Every run: the chains' publishers on host A (core 0), their subscribers on host B (core 1), each
in its own process (P3), a non-RT UDP flood A -> B in 1400-byte datagrams (the paper's 60
Mbit/s unless swept), the platform probe beside it (``crosslayer/platform.py``). Per run one CSV
row: the top chain's WCRT − BCRT (the paper's metric) and p99 − BCRT (its robust companion), every
chain's figures, the flood's delivery ratio, the 1-min load average, the hypervisor's steal and
what the probe saw. A run in which the probe saw a blackout of the platform longer than
``STALL_MS`` (a CPU taken from every thread of the model: the hypervisor, another process's long
non-preemptible kernel section) is *stalled*: its figures are reported apart from the clean runs',
never mixed in. The time the model's own threads held the CPU while the probe waited (its
processes in kernel code, its receive path's kernel threads: platform.split) is the model's,
not the platform's, and is taken out of the blackouts first.

Experiments (one engine, :func:`run_points`; the configurations of one point and run number run
back to back, in an order rotated per run number, so paired ratios see the same machine):

* :func:`predictability` — the paper's two chains (T = 20 ms with 2 × 2.5 ms of work, T = 200 ms
  with 2 × 10 ms), 4 KiB messages: every configuration of ``crosslayer.stacks`` over several runs;
* :func:`size_sweep` (Fig. 12) — the two chains with messages of 1 KiB .. 256 KiB;
* :func:`chain_sweep` (Fig. 11) — the paper's high chain on top of n − 1 UUniFast chains;
* :func:`traffic_sweep` (Fig. 13) — non-RT traffic 0 .. 90 Mbit/s, with the flood's delivery.

``cros-rt`` bounds (:func:`bounds`) are computed per point beside the measured WCRT for every
configuration the analysis models, with communication costs fitted from the runs (the hop's cost
C^R: the largest top-chain response beyond its work with the probe's blackouts taken out; fit on
the even run numbers and checked on the odd ones when a point has both, else fitted on its own
runs), without and with the run's measured platform; where the analysis gives no bound, its reason.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import accounting, cliargs, output, stock
from ..crosslayer import platform as plat
from ..crosslayer.kernel import PREEMPT_RT_PRIORITY
from ..crosslayer.platform import CURVE_WINDOWS_MS, PlatformProbe
from ..crosslayer.session import Flood
from ..crosslayer.stacks import STACKS, STOCK_EXECUTOR
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import cros_rt_kernel as k
from .lame_real import loadavg, measurement_lock

INSTANCES = 10_000
STALL_MS = 1.0
# discovery of the participants at their real-time priorities keeps a CPU busy for seconds after
# the start (with 8 chains the real-time class is throttled, sched_rt_runtime_us, 50 ms at a time
# for the first ~5 s): measured from 6 s on
WARMUP_NS = 6_000_000_000
FLOOD_SIZE = 1400
# the remote hop's cost (ms) the non-RT server's budget is chosen for (server_budget): above the
# full setup's fitted hop cost on this machine (1.1–1.5 ms with the platform's blackouts taken
# out), so that the budget the analysis admits still admits the chains with the measured costs
SERVER_HOP_COST_MS = 2.0
# the periods of the chains below the paper's high chain in the chain sweep (ms)
OTHER_PERIODS_MS = (40, 50, 100, 200)
# paired ratios of the top chain's WCRT − BCRT reported per point (numerator, denominator)
RATIOS = (("vanilla", "full"), ("preempt-rt", "full"), ("app-dds", "full"), ("app-dds", "preempt-rt"),
          ("vanilla", "full-server"), ("preempt-rt", "full-server"), ("emulated", "vanilla"))
# the ratio that is the emulation's fidelity, not a comparison of configurations
FIDELITY = "emulated/vanilla"
# configurations without chain priorities: no cros-rt bound (the accounting gives them only the
# platform-free split)
UNBOUNDED = ("vanilla", "emulated")
VANILLA_REASON = ("runs ROS 2's default executor without chain priorities; cros-rt analyses "
                  "prioritised SCHED_FIFO executors (the paper's P1–P4)")
SWEEPS = {"base": "chain set", "size": "message size", "chains": "number of chains",
          "rate": "non-RT traffic (Mbit/s)"}


@dataclass(frozen=True)
class Point:
    """One point of an experiment: a chain set (the top chain first), its message size and the
    flood's rate. ``sweep``/``value``: what is swept and its value as written in the CSV."""
    sweep: str
    value: str
    chains: tuple = field(default=k.PAPER_CHAINS)
    size: str = "4KiB"
    rate_mbps: float = 60.0

    @property
    def top(self) -> dict:
        return self.chains[0]

    def work_ms(self, chain: dict) -> float:
        return 2 * chain["wcet_us"] / 1000.0  # publisher and subscriber, one callback each

    def model(self, **kw) -> str:
        return k.chains_model(list(self.chains), self.size, name=f"cros_rt_{self.sweep}", **kw)

    def duration_s(self, instances: int) -> float:
        """Seconds to measure for ``instances`` completed instances of the top chain: 20 % more
        releases, as ROS 2's default executor skips the releases of a timer it serves late (on a
        loaded machine vanilla's top chain completed 87 % of its releases), the same for every
        configuration, so that each is measured as long."""
        return math.ceil(instances * 1.2) * self.top["period_ms"] / 1000.0 + 0.5


def uunifast(n: int, u: float, rng: random.Random) -> list[float]:
    """UUniFast (Bini & Buttazzo): n utilisations summing to u, uniformly distributed."""
    us, rest = [], u
    for i in range(1, n):
        nxt = rest * rng.random() ** (1.0 / (n - i))
        us.append(rest - nxt)
        rest = nxt
    return us + [rest] if n > 0 else []


def chain_set(n: int, utilisation: float, seed: int) -> tuple:
    """The chain sweep's set of n chains: the paper's high chain on top (T = 20 ms, 2 × 2.5 ms,
    SCHED_FIFO 80), below it n − 1 chains whose utilisations UUniFast draws to sum to
    ``utilisation`` on each of the two cores, periods from OTHER_PERIODS_MS, each callback
    u·T of work (at least 0.1 ms), rate-monotonic priorities 79, 78, ..."""
    rng = random.Random(seed)
    us = uunifast(n - 1, utilisation, rng)
    periods = sorted(rng.choice(OTHER_PERIODS_MS) for _ in us)
    others = [dict(name=f"c{i + 1}", period_ms=t, wcet_us=max(100, round(u * t * 1000)), prio=k.HI_PRIO - 1 - i)
              for i, (u, t) in enumerate(zip(us, periods))]
    return (k.PAPER_CHAINS[0],) + tuple(others)


# ---------------------------------------------------------------------------------------------
# one run

FIELDS = ["experiment", "sweep", "value", "run", "config", "order", "started_utc", "loadavg", "loadavg_end",
          "steal_ms", "duration_s", "instances_target", "size", "chains", "flood_mbps", "rx_priority", "server_budget_ms",
          "server_period_ms", "top", "top_instances", "top_wcrt_ms", "top_bcrt_ms", "top_p99_ms", "top_mean_ms",
          "top_jitter_ms", "top_p99_excess_ms", "top_misses", "top_unstalled_instances",
          "top_unstalled_jitter_ms", "top_hop_destalled_max_ms", "stalled", "blackout_max_ms",
          "blackouts_long", "blackout_total_ms", "probe_blackout_max_ms", "model_held_max_ms",
          "model_held_total_ms", "platform_holders", "attribution", "flood_sent", "flood_received", "pdr",
          "rt_class_packets", "nonrt_class_packets", "threads_checked", "chain_figures", "chain_set",
          "executor", "executor_class", "top_bound_ms", *(f"acc_{c}" for c in ("above", *accounting.CAUSES)),
          "acc_chains", "acc_notes", "top_free_instances", "top_free_wcrt_ms",
          "top_free_bcrt_ms", "top_free_jitter_ms", "top_free_p99_excess_ms"]


def _curve_fields() -> list[str]:
    return [f"plat_s_{int(w * 1_000_000) // 1000}us_ns" for w in CURVE_WINDOWS_MS]


def thread_check(config: str, threads: dict, rx_priority: int | None) -> str:
    """What the mid-run look at the threads (session.run_on_hosts ``probe``) found, in a few
    words: for the fixed receive path, how many of its kernel threads ran at the fixed
    priority; for the selector, the real-time class threads at their class priority."""
    if config == "preempt-rt":
        ts = threads.get("rx_threads", [])
        ok = [t for t in ts if t["policy"] == "fifo" and t["priority"] == rx_priority]
        return f"receive threads at fifo {rx_priority}: {len(ok)}/{len(ts)}"
    if STACKS[config].receive_path == "selector":
        per = threads.get("class_threads", [])
        rt = [t for host in per for c, ts in host.items() if c != "0" for t in ts]
        return f"RT class threads at fifo: {sum(t['policy'] == 'fifo' for t in rt)}/{len(rt)}"
    return ""


def executor_label(config: str, stock_executor: str = STOCK_EXECUTOR) -> str:
    """What ran the chains' nodes in ``config``, as the tables name it."""
    kind = STACKS[config].executor
    if kind == "stock":
        return stock.LABELS[stock_executor]
    if kind == "chain":
        return stock.LABELS["chainrt"]
    return "chainrt-run ros-default: chainrt's emulation"


def accounting_bounds(point: Point, config: str, server: tuple[int, int] | None) -> dict[str, int | None]:
    """{chain: its ``cros-rt`` bound in ns} that a run of ``config`` is accounted against: the
    analysis of the point's model with the nominal remote hop cost SERVER_HOP_COST_MS (the cost
    the non-RT server is sized for; a hop above it is the model's defect, an unexplained
    instance) and the configuration's server. None where there is no bound: the configurations
    without chain priorities (UNBOUNDED), a chain the analysis does not bound."""
    names = [c["name"] for c in point.chains]
    if config in UNBOUNDED:
        return dict.fromkeys(names)
    meas = [{"kind": "remote", "size": k._bytes(point.size), "latency_ns": SERVER_HOP_COST_MS * 1e6}]
    plain, _ = k.cros_rt_bounds(point.model(measurements=meas, server=server if STACKS[config].server else None))
    return {n: (int(plain[n]) if plain.get(n) else None) for n in names}


def _ms(ns) -> float:
    return ns / 1e6 if ns is not None else float("nan")


def accounting_columns(acc: dict, top: str) -> dict:
    """The CSV columns of a run's accounting (accounting.after_run's JSON): the instances above
    their bound by cause over every chain, per chain its counts (and its worst unexplained case),
    the notes, and the top chain's figures over its platform-free instances."""
    chains = acc["chains"]
    per = {}
    for name, r in chains.items():
        per[name] = {"bound_ms": _ms(r["bound_ns"]) if r["bound_ns"] else None, "instances": r["raw"]["instances"],
                     "free": (r["platform_free"] or {}).get("instances"),
                     **{c: r[c] for c in ("above", *accounting.CAUSES)}}
        worst = [c["text"] for c in r["cases"] if c["cause"] == accounting.UNEXPLAINED]
        if worst:
            per[name]["worst_unexplained"] = worst[0]
    t = chains.get(top) or {}
    free = t.get("platform_free") or {}
    n = free.get("instances") or 0
    nan = float("nan")
    return dict(top_bound_ms=_ms(t["bound_ns"]) if t.get("bound_ns") else nan,
                **{f"acc_{c}": sum(r[c] for r in chains.values()) for c in ("above", *accounting.CAUSES)},
                acc_chains=json.dumps(per, separators=(",", ":")), acc_notes=" | ".join(acc.get("notes", [])),
                top_free_instances=n, top_free_wcrt_ms=_ms(free["max_ns"]) if n else nan,
                top_free_bcrt_ms=_ms(free["min_ns"]) if n else nan,
                top_free_jitter_ms=_ms(free["max_ns"] - free["min_ns"]) if n else nan,
                top_free_p99_excess_ms=_ms(free["p99_ns"] - free["min_ns"]) if n else nan)


def account_run(point: Point, config: str, server: tuple[int, int] | None, trace_dir, probe,
                model_tids: set[int]) -> dict:
    """The accounting of one run of ``point`` in ``config`` (accounting.after_run's JSON) from its
    traces (every process's, in ``trace_dir``), the platform probe beside it (a live
    PlatformProbe or a kept one, :class:`KeptProbe`) and the run's own threads, against
    :func:`accounting_bounds`; instances released in the warm-up are left out."""
    bounds = accounting_bounds(point, config, server)
    prio = STACKS[config].executor_priorities
    return accounting.after_run(load_model_from_string(point.model()), str(trace_dir), probe, None, bounds,
                                {n: "analysis" for n, b in bounds.items() if b}, model_tids, warmup_ns=WARMUP_NS,
                                thread_params=prio, rt=prio)


@dataclass
class KeptProbe:
    """The platform probe of a kept run (``OUT/raw/<point>_<run>_<config>/blackouts.json.gz``),
    with what accounting.after_run reads of a live PlatformProbe."""
    period_ns: int
    blackouts: dict
    holds: dict
    pids: set
    attribution_error: str | None = None
    dropped: int = 0


def read_kept(dest: str | Path, trace_dir: str | Path) -> tuple[KeptProbe, set[int]]:
    """A kept run (:func:`_keep_raw`): its probe and its own threads; its traces are unpacked
    into ``trace_dir``. Raises OSError / ValueError / KeyError for a directory that is not one."""
    dest, trace_dir = Path(dest), Path(trace_dir)
    with gzip.open(dest / "blackouts.json.gz", "rt") as f:
        d = json.load(f)
    probe = KeptProbe(int(d["period_ns"]), {int(c): [tuple(x) for x in iv] for c, iv in d["cpus"].items()},
                      {int(c): [tuple(x) for x in h] for c, h in d.get("holds", {}).items()},
                      set(d.get("probe_pids", [])), d.get("attribution_error"), int(d.get("dropped", 0)))
    trace_dir.mkdir(parents=True, exist_ok=True)
    for src in dest.glob("*.gz"):
        if src.name != "blackouts.json.gz":
            with gzip.open(src, "rb") as a:
                (trace_dir / src.name[:-3]).write_bytes(a.read())
    return probe, set(d.get("model_tids", []))


def run_once(point: Point, config: str, run: int, *, instances: int, server: tuple[int, int] | None,
             rx_priority: int, experiment: str, order: int, tmp: str, raw_dir: Path | None,
             flood_size: int = FLOOD_SIZE, stock_executor: str = STOCK_EXECUTOR) -> dict:
    """One run of ``point`` in ``config`` with the platform probe beside it, accounted; the CSV
    row. ``stock_executor``: rclcpp's executor of the stock configurations."""
    model = Path(tmp) / f"{experiment}_{point.value}.yaml"
    model.write_text(point.model())
    duration = point.duration_s(instances)
    tdir = Path(tmp) / f"trace_{point.value}_{run}_{config}"
    flood = Flood("A", "B", rate_mbps=point.rate_mbps, size=flood_size) if point.rate_mbps > 0 else None
    probe = PlatformProbe(duration + 60)
    load0, steal0 = (loadavg() or [float("nan")])[0], k._steal_ms()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res = k._run_config(str(model), config, int(duration * 1e9), flood, server, WARMUP_NS, trace_dir=str(tdir),
                        probe=probe, rx_priority=rx_priority, threads=True, stock_executor=stock_executor)
    steal = k._steal_ms() - steal0
    top = point.top["name"]
    chains = res["chains"]
    t = chains[top]
    ok = t["instances"] > 0
    # the probe's view of the measured part: from the first measured release of the top chain
    # to the last finish
    try:
        inst = k.chain_instances(str(tdir), top, WARMUP_NS)
    except (OSError, ValueError, IndexError):
        inst = []
    span = (min(r for r, _ in inst), max(f for _, f in inst)) if inst else None
    raw = {c: plat.clip(iv, *span) for c, iv in probe.blackouts.items()} if span else {}
    # the platform's part of each blackout: without the time the model's own threads (and the
    # probe's) held the CPU
    model_tids = set(res.get("threads", {}).get("model_tids", [])) | probe.pids
    acc = account_run(point, config, server, tdir, probe, model_tids)
    per_cpu, held, info = {}, [], []
    for c, iv in raw.items():
        per_cpu[c], m, d = plat.split(iv, probe.holds.get(c, []), model_tids)
        held += m
        info += d
    lengths = [(e - b) / 1e6 for iv in per_cpu.values() for b, e in iv]
    long_iv = plat.merge([(b, e) for iv in per_cpu.values() for b, e in iv if (e - b) / 1e6 > STALL_MS])
    every = plat.merge([x for iv in per_cpu.values() for x in iv])
    holders: dict[str, float] = {}
    for d in info:
        if d["late_ns"]:
            holders["(timer late)"] = holders.get("(timer late)", 0.0) + d["late_ns"] / 1e6
        if d["held_ns"] and not d["model"]:
            name = d["holder"].split("/")[0]
            holders[name] = holders.get(name, 0.0) + d["held_ns"] / 1e6
    holders = dict(sorted(((n, round(v, 2)) for n, v in holders.items()), key=lambda kv: -kv[1])[:6])
    calm = [(f - r) / 1e6 for r, f in inst if plat.overlap(long_iv, r, f) == 0]
    hops = [(f - r - plat.overlap(every, r, f)) / 1e6 - point.work_ms(point.top) for r, f in inst]
    curve = {}
    cost = plat.probe_cost(probe)
    if span and cost is not None and not probe.dropped:
        curve = {f"plat_s_{w // 1000}us_ns": x for w, x in plat.curve(list(per_cpu.values()), probe.period_ns, cost)}
    fl = res.get("flood", {})
    nan = float("nan")
    row = dict(experiment=experiment, sweep=point.sweep, value=point.value, run=run, config=config, order=order,
               started_utc=started, loadavg=round(load0, 2), loadavg_end=round((loadavg() or [nan])[0], 2),
               steal_ms=round(steal, 1), duration_s=duration, instances_target=instances, size=point.size, chains=len(point.chains),
               flood_mbps=point.rate_mbps, rx_priority=rx_priority if config == "preempt-rt" else "",
               server_budget_ms=server[0] / 1e6 if server and STACKS[config].server else "",
               server_period_ms=server[1] / 1e6 if server and STACKS[config].server else "",
               top=top, top_instances=t["instances"],
               top_wcrt_ms=t["wcrt_ns"] / 1e6 if ok else nan, top_bcrt_ms=t["bcrt_ns"] / 1e6 if ok else nan,
               top_p99_ms=t["p99_ns"] / 1e6 if ok else nan, top_mean_ms=t["mean_ns"] / 1e6 if ok else nan,
               top_jitter_ms=(t["wcrt_ns"] - t["bcrt_ns"]) / 1e6 if ok else nan,
               top_p99_excess_ms=(t["p99_ns"] - t["bcrt_ns"]) / 1e6 if ok else nan,
               top_misses=t["deadline_misses"], top_unstalled_instances=len(calm),
               top_unstalled_jitter_ms=max(calm) - min(calm) if calm else nan,
               top_hop_destalled_max_ms=max(hops) if hops else nan,
               stalled=int(bool(lengths) and max(lengths) > STALL_MS) if span else "",
               blackout_max_ms=round(max(lengths, default=0.0), 3) if span else nan,
               blackouts_long=sum(x > STALL_MS for x in lengths), blackout_total_ms=round(sum(lengths), 1),
               probe_blackout_max_ms=round(max(((e - b) / 1e6 for iv in raw.values() for b, e in iv),
                                               default=0.0), 3) if span else nan,
               model_held_max_ms=round(max(((e - b) / 1e6 for b, e in held), default=0.0), 3),
               model_held_total_ms=round(sum((e - b) / 1e6 for b, e in held), 1),
               platform_holders=json.dumps(holders, separators=(",", ":")),
               attribution=probe.attribution_error or "held/late",
               flood_sent=fl.get("sent", 0), flood_received=fl.get("received", 0),
               pdr=fl.get("delivery_ratio", nan) if flood else nan,
               rt_class_packets=sum(sum(s.get("classes", [0, 0, 0, 0])[1:4]) for s in res.get("selector", [])),
               nonrt_class_packets=sum(s.get("classes", [0])[0] for s in res.get("selector", [])),
               threads_checked=thread_check(config, res.get("threads", {}), rx_priority),
               chain_figures=json.dumps({n: {"wcrt_ms": c["wcrt_ns"] / 1e6, "bcrt_ms": c["bcrt_ns"] / 1e6,
                                             "p99_ms": c["p99_ns"] / 1e6, "instances": c["instances"],
                                             "misses": c["deadline_misses"]}
                                         for n, c in chains.items() if c["instances"] > 0}, separators=(",", ":")),
               chain_set=json.dumps(list(point.chains), separators=(",", ":")),
               executor=executor_label(config, stock_executor),
               executor_class=json.dumps(res.get("executor_class", {}), separators=(",", ":")),
               **accounting_columns(acc, top), **curve)
    if raw_dir is not None:
        _keep_raw(probe, tdir, raw_dir / f"{point.value}_{run}_{config}", model_tids)
    return row


def _keep_raw(probe, trace_dir: Path, dest: Path, model_tids: set[int]) -> None:
    """The run's probe (blackouts, holders, what limited it) and every process's trace (gzip),
    for re-analysis and re-accounting later (:func:`read_kept`)."""
    dest.mkdir(parents=True, exist_ok=True)
    with gzip.open(dest / "blackouts.json.gz", "wt") as f:
        json.dump({"period_ns": probe.period_ns, "cpus": {str(c): iv for c, iv in probe.blackouts.items()},
                   "holds": {str(c): h for c, h in probe.holds.items()}, "model_tids": sorted(model_tids),
                   "probe_pids": sorted(probe.pids), "attribution_error": probe.attribution_error,
                   "dropped": probe.dropped}, f)
    for src in Path(trace_dir).glob("*.jsonl*"):
        with open(src, "rb") as a, gzip.open(dest / (src.name + ".gz"), "wb") as b:
            b.write(a.read())


# ---------------------------------------------------------------------------------------------
# many runs

def _done_keys(csv_path: Path) -> set:
    if not csv_path.is_file():
        return set()
    with open(csv_path, newline="") as f:
        return {(r["value"], int(r["run"]), r["config"]) for r in csv.DictReader(f)}


def default_server(point: Point, hop_cost_ms: float = SERVER_HOP_COST_MS) -> tuple[int, int]:
    """C4's parameters as the paper chooses them, by response-time analysis: the largest budget
    per 10 ms with which ``cros-rt`` keeps every chain of the point within its deadline when each
    remote hop costs ``hop_cost_ms`` (k.server_budget)."""
    meas = [{"kind": "remote", "size": k._bytes(point.size), "latency_ns": hop_cost_ms * 1e6}]
    return k.server_budget(measurements=meas, size=point.size, chains=list(point.chains))


def run_points(experiment: str, points: list[Point], configs: list[str], runs: int, out_dir: str, *,
               instances: int = INSTANCES, server: tuple[int, int] | None = None,
               rx_priority: int | None = None, lock: str = "", resume: bool = False,
               keep_raw: bool = True, log=None, stock_executor: str = STOCK_EXECUTOR) -> list[dict]:
    """Runs every point in every configuration ``runs`` times and appends one row per run to
    ``OUT/runs.csv`` as it completes. A *round* is one point and run number: its configurations
    run back to back, the order rotated by the run number, holding the measurement ``lock``
    (an flock file; "" for none) for the round only. ``resume``: keep the rows already in
    runs.csv and run only what is missing. ``server``: the non-RT server of the configurations
    with one (default: :func:`default_server`). ``stock_executor``: rclcpp's executor of the stock
    configurations. Returns the rows of runs.csv."""
    log = log or (lambda *a: print(*a, flush=True))
    rx_priority = rx_priority or PREEMPT_RT_PRIORITY
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runs.csv"
    if path.is_file() and not resume:
        path.unlink()
    done = _done_keys(path)
    fields = FIELDS + _curve_fields()
    if not path.is_file():
        with open(path, "w", newline="") as f:
            csv.DictWriter(f, fieldnames=fields).writeheader()
    # the non-RT server of every point, before any run (an analysis that admits none fails now)
    servers = {}
    if any(STACKS[c].server for c in configs):
        for p in points:
            try:
                servers[p.value] = server or default_server(p)
            except RuntimeError as e:
                raise RuntimeError(f"{p.sweep} {p.value}: {e} at {SERVER_HOP_COST_MS:g} ms per remote hop "
                                   "(give one with --server Q/T)") from None
    with tempfile.TemporaryDirectory(prefix="chainrt-crosrt-") as tmp:
        for run in range(runs):
            for p in points:
                todo = [c for c in configs if (p.value, run, c) not in done]
                if not todo:
                    continue
                rot = run % len(configs)
                order = [c for c in configs[rot:] + configs[:rot] if c in todo]
                with measurement_lock(lock):
                    for i, config in enumerate(order):
                        t0 = time.monotonic()
                        row = run_once(p, config, run, instances=instances, server=servers.get(p.value),
                                       rx_priority=rx_priority, experiment=experiment, order=i, tmp=tmp,
                                       raw_dir=out / "raw" if keep_raw else None, stock_executor=stock_executor)
                        with open(path, "a", newline="") as f:
                            csv.DictWriter(f, fieldnames=fields, restval="").writerow(row)
                        log(f"{experiment} {p.sweep}={p.value} run {run + 1}/{runs} {config:<11} "
                            f"WCRT-BCRT {row['top_jitter_ms']:7.2f} ms (platform-free {row['top_free_jitter_ms']:.2f}), "
                            f"p99-BCRT {row['top_p99_excess_ms']:6.2f} ms, above bound {row['acc_above']} "
                            f"(unexplained {row['acc_unexplained']}), "
                            f"n={row['top_instances']}, PDR {row['pdr']:.3f}, largest blackout "
                            f"{row['blackout_max_ms']:.2f} ms{' (stalled)' if row['stalled'] else ''}, "
                            f"load {row['loadavg']}, steal {row['steal_ms']:.0f} ms ({time.monotonic() - t0:.0f} s)")
                if lock:
                    time.sleep(20)  # let a waiting measurement take the lock between rounds
    return read_rows([str(path)])


def read_rows(paths: list[str]) -> list[dict]:
    """The rows of one or more runs.csv, typed (numbers as floats, run as int)."""
    text = ("experiment", "sweep", "value", "config", "started_utc", "size", "top", "threads_checked",
            "chain_figures", "chain_set", "platform_holders", "attribution", "executor", "executor_class",
            "acc_chains", "acc_notes")
    rows = []
    need = {"sweep", "value", "run", "config", "top_jitter_ms", "top_p99_excess_ms", "stalled"}
    for p in paths:
        with cliargs.open_text(p) as f:
            reader = csv.DictReader(f)
            missing = need - set(reader.fieldnames or [])
            if missing:
                raise ValueError(f"{p}: not a runs.csv of the CROS-RT experiments (missing columns: "
                                 f"{', '.join(sorted(missing))})")
            for r in reader:
                row = {}
                for key, v in r.items():
                    if key in text:
                        row[key] = v
                    else:
                        try:
                            row[key] = float(v) if v != "" else float("nan")
                        except ValueError:
                            row[key] = float("nan")
                row["run"] = int(row["run"])
                rows.append(row)
    if not rows:
        raise ValueError(f"{', '.join(paths)}: no rows")
    return rows


# ---------------------------------------------------------------------------------------------
# summaries

def _median_spread(xs: list[float]) -> dict | None:
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": xs[0], "max": xs[-1], "n": len(xs)}


def _clean(r: dict) -> bool:
    return r.get("stalled") == 0


def point_values(rows: list[dict]) -> list[str]:
    """The experiment's points in sweep order (numeric where the values are)."""
    vals = list(dict.fromkeys(r["value"] for r in rows))
    def key(v):
        try:
            return (0, k._bytes(v))
        except ValueError:
            return (1, v)
    return sorted(vals, key=key)


def summarize(rows: list[dict], points: dict[str, Point] | None = None) -> dict:
    """Per point and configuration, over the clean runs and, apart, over the stalled ones: the
    top chain's WCRT − BCRT, p99 − BCRT and WCRT (median [min..max]), the instances and the
    flood's delivery ratio; per point the paired ratios of WCRT − BCRT (RATIOS; per run number,
    over the pairs of clean runs and over all pairs) and of the delivery ratio against vanilla;
    per configuration the spread of its clean medians over the sweep (largest ÷ smallest); and
    the ``cros-rt`` bounds (:func:`bounds`) when ``points`` gives the points' chain sets."""
    out: dict = {"stall_ms": STALL_MS, "points": {}, "sweep_spread": {}}
    configs = [c for c in STACKS if any(r["config"] == c for r in rows)]
    for v in point_values(rows):
        pr = [r for r in rows if r["value"] == v]
        per = {}
        for c in configs:
            rs = [r for r in pr if r["config"] == c]
            if not rs:
                continue
            entry = {}
            for part, sel in (("clean", [r for r in rs if _clean(r)]), ("stalled", [r for r in rs if not _clean(r)])):
                entry[part] = {key: _median_spread([r[key] for r in sel]) for key in
                               ("top_jitter_ms", "top_p99_excess_ms", "top_wcrt_ms", "top_instances", "pdr",
                                "blackout_max_ms", "top_unstalled_jitter_ms")}
                entry[part]["runs"] = sorted(r["run"] for r in sel)
            entry["accounting"] = accounting_summary(rs)
            entry["loadavg"] = _median_spread([r["loadavg"] for r in rs])
            entry["steal_ms"] = _median_spread([r["steal_ms"] for r in rs])
            per[c] = entry
        ratios = {}
        for num, den in RATIOS:
            a = {r["run"]: r for r in pr if r["config"] == num}
            b = {r["run"]: r for r in pr if r["config"] == den}
            pairs = [(a[x], b[x]) for x in sorted(a) if x in b]
            if not pairs:
                continue
            ratio = lambda p, key="top_jitter_ms": _get(p[0], key) / max(_get(p[1], key), 1e-9)  # noqa: E731
            ratios[f"{num}/{den}"] = {
                "clean_pairs": _median_spread([ratio(p) for p in pairs if _clean(p[0]) and _clean(p[1])]),
                "all_pairs": _median_spread([ratio(p) for p in pairs]),
                "platform_free_pairs": _median_spread([ratio(p, "top_free_jitter_ms") for p in pairs]),
                "p99_excess_clean_pairs": _median_spread([ratio(p, "top_p99_excess_ms") for p in pairs
                                                          if _clean(p[0]) and _clean(p[1])])}
        pdr = {}
        van = {r["run"]: r["pdr"] for r in pr if r["config"] == "vanilla"}
        for c in configs:
            if c == "vanilla":
                continue
            xs = [r["pdr"] / van[r["run"]] for r in pr if r["config"] == c and van.get(r["run"], 0) > 0]
            if xs:
                pdr[c] = _median_spread(xs)
        out["points"][v] = {"configs": per, "ratios": ratios, "pdr_over_vanilla": pdr}
    for c in configs:
        meds = {v: p["configs"][c]["clean"]["top_jitter_ms"]["median"]
                for v, p in out["points"].items() if c in p["configs"] and p["configs"][c]["clean"]["top_jitter_ms"]}
        if len(meds) > 1:
            lo = min(meds.values())
            out["sweep_spread"][c] = {"largest_over_smallest": max(meds.values()) / max(lo, 1e-9),
                                      "points_with_clean_runs": len(meds), "medians_ms": meds}
    if points:
        out["cros_rt"] = {v: bounds(points[v], [r for r in rows if r["value"] == v])
                          for v in point_values(rows) if v in points}
    return out


def _get(r: dict, key: str, default=float("nan")):
    v = r.get(key, default)
    return default if v is None or v == "" else v


def accounting_summary(rows: list[dict]) -> dict:
    """One configuration's accounting over its runs: the instances above their bound by cause
    (summed), the top chain's instances raw and platform-free (summed), and its WCRT − BCRT and
    p99 − BCRT raw and platform-free per run (median [min..max]); rows of an older runs.csv
    without the accounting give NaN spreads and zero counts."""
    def total(key):
        xs = [_get(r, key) for r in rows]
        return int(sum(x for x in xs if x == x))
    out = {c: total(f"acc_{c}") for c in ("above", *accounting.CAUSES)}
    out.update(top_instances=total("top_instances"), top_free_instances=total("top_free_instances"),
               top_bound_ms=_median_spread([_get(r, "top_bound_ms") for r in rows]))
    for key in ("top_jitter_ms", "top_free_jitter_ms", "top_p99_excess_ms", "top_free_p99_excess_ms"):
        out[key] = _median_spread([_get(r, key) for r in rows])
    out["executor"] = next((r["executor"] for r in rows if r.get("executor")), "")
    out["notes"] = sorted({n for r in rows for n in (r.get("acc_notes") or "").split(" | ") if n})
    return out


def bounds(point: Point, rows: list[dict]) -> dict:
    """The ``cros-rt`` bounds beside the measured WCRT at one point, per configuration.

    For each configuration the analysis models (all but vanilla: the analysis assumes chain
    priorities in SCHED_FIFO executors and, for the kernel, CROS-RT's selector, so preempt-rt's and
    app-dds' fitted costs carry their kernel path's FIFO order), C^R is the largest top-chain hop
    (response − work − the probe's blackouts inside the instance) of the fit runs: the even run
    numbers where the point also has odd ones (checked there), else all its runs (in-sample).
    The bound of every chain without a platform (what the paper's analysis says on a CPU that is
    always there) and, per run, with that run's measured blackout curve (hosts[].blackout); each
    against the run's WCRT (:func:`k.verdict`). Where no finite bound results: the reason."""
    out = {}
    size_b = k._bytes(point.size)
    for c in [c for c in STACKS if any(r["config"] == c for r in rows)]:
        rs = sorted((r for r in rows if r["config"] == c), key=lambda r: r["run"])
        if c in UNBOUNDED:
            out[c] = {"reason": f"{c} {VANILLA_REASON}"}
            continue
        odd = [r for r in rs if r["run"] % 2]
        fit = [r for r in rs if r["run"] % 2 == 0] if odd and len(odd) < len(rs) else rs
        hops = [k._finite(r.get("top_hop_destalled_max_ms")) for r in fit]
        hops = [h for h in hops if h is not None]
        if not hops:
            out[c] = {"reason": "no measured hop to fit C^R from (no completed instance)"}
            continue
        remote = max(0.0, max(hops))
        meas = [{"kind": "remote", "size": size_b, "latency_ns": remote * 1e6}]
        server = None
        if STACKS[c].server:
            q = {(k._finite(r.get("server_budget_ms")), k._finite(r.get("server_period_ms"))) for r in rs}
            qb, qt = sorted(q, key=str)[0]
            server = (int(qb * 1e6), int(qt * 1e6)) if qb and qt else None
        plain, res = k.cros_rt_bounds(point.model(measurements=meas, server=server))
        names = [ch["name"] for ch in point.chains]
        entry = {"fit_runs": [r["run"] for r in fit], "in_sample": fit is rs, "fitted_remote_ms": remote,
                 "bound_ms": {n: (plain[n] / 1e6 if plain.get(n) else None) for n in names},
                 "reasons": {n: res["chains"][n].get("reason", "") for n in names
                             if not plain.get(n) and res["chains"][n].get("reason")}, "runs": []}
        for r in rs:
            figs = json.loads(r.get("chain_figures") or "{}")
            measured = {n: figs[n]["wcrt_ms"] for n in names if n in figs}
            pts = k.curve_points(r)
            pb, pres = k.cros_rt_bounds(point.model(measurements=meas, server=server, blackout=pts)) if pts else ({}, {})
            b = {n: (pb[n] / 1e6 if pb.get(n) else None) for n in names} if pts else {}
            deadline = {ch["name"]: float(ch["period_ms"]) for ch in point.chains}
            entry["runs"].append({
                "run": r["run"], "role": "fit" if r in fit and not entry["in_sample"] else
                ("in-sample" if entry["in_sample"] else "check"), "stalled": not _clean(r),
                "measured_wcrt_ms": measured, "platform_bound_ms": b,
                "platform_reasons": {n: pres["chains"][n].get("reason", "") for n in names
                                     if pts and not pb.get(n) and pres["chains"][n].get("reason")},
                "verdict": {n: k.verdict(b.get(n), measured[n], deadline[n]) for n in measured if pts},
                "verdict_without_platform": {n: k.verdict(entry["bound_ms"][n], measured[n], deadline[n])
                                             for n in measured}})
        out[c] = entry
    return out


def tables(summary: dict, rows: list[dict]) -> str:
    """The summary as Markdown: per point and configuration the clean runs' and, apart, the
    stalled runs' top-chain WCRT − BCRT and p99 − BCRT (median [min..max], ms), the WCRT − BCRT of
    the instances no platform blackout > STALL_MS touched, the non-RT delivery against vanilla's,
    the load; the paired ratios; the cros-rt bounds of the top chain beside its measured WCRT."""
    out = []
    sweep = rows[0]["sweep"]
    head = SWEEPS.get(sweep, sweep)
    out.append(f"| {head} | configuration | clean runs | WCRT − BCRT | p99 − BCRT | stalled runs | WCRT − BCRT "
               "(stalled) | p99 − BCRT (stalled) | WCRT − BCRT, instances without a platform blackout "
               f"> {STALL_MS:g} ms | non-RT delivery / vanilla | instances (fewest) | load avg | steal (ms) |")
    out.append("|" + "---|" * 13)
    for v, p in summary["points"].items():
        for c, e in p["configs"].items():
            cl, st = e["clean"], e["stalled"]
            allj = [r["top_unstalled_jitter_ms"] for r in rows if r["value"] == v and r["config"] == c]
            pdr = p["pdr_over_vanilla"].get(c)
            out.append(f"| {v} | {config_name(c, e)} | {len(cl['runs'])} | {output.spread(cl['top_jitter_ms'])} | {output.spread(cl['top_p99_excess_ms'])} "
                       f"| {len(st['runs'])} | {output.spread(st['top_jitter_ms'])} | {output.spread(st['top_p99_excess_ms'])} "
                       f"| {output.spread(_median_spread(allj))} | {output.spread(pdr, 3) if pdr else '–'} "
                       f"| {min(r['top_instances'] for r in rows if r['value'] == v and r['config'] == c):,.0f} "
                       f"| {output.spread(e['loadavg'], 1)} | {output.spread(e['steal_ms'], 0)} |")
    out.append("")
    out.append(f"| {head} | WCRT − BCRT ratio | clean pairs | all pairs | platform-free instances, all pairs "
               "| p99 − BCRT ratio, clean pairs |")
    out.append("|---|---|---|---|---|---|")
    for v, p in summary["points"].items():
        for key, r in p["ratios"].items():
            name = f"{key} (fidelity of chainrt's emulation to stock rclcpp)" if key == FIDELITY else key
            out.append(f"| {v} | {name} | {output.spread(r['clean_pairs'], 1)} (n={(r['clean_pairs'] or {}).get('n', 0)}) "
                       f"| {output.spread(r['all_pairs'], 1)} (n={(r['all_pairs'] or {}).get('n', 0)}) "
                       f"| {output.spread(r.get('platform_free_pairs'), 1)} | {output.spread(r['p99_excess_clean_pairs'], 1)} |")
    out.append("")
    out += accounting_table(summary, head)
    if summary.get("cros_rt"):
        out.append("")
        out.append(f"| {head} | configuration | C^R fitted (ms) | fit | top chain: bound without platform / "
                   "measured WCRT per run (ms) | bound with the run's platform per run (ms) | reason where none |")
        out.append("|---|---|---|---|---|---|---|")
        for v, per in summary["cros_rt"].items():
            for c, b in per.items():
                if "fitted_remote_ms" not in b:
                    out.append(f"| {v} | {c} | – | – | – | – | {b['reason']} |")
                    continue
                top = next(iter(b["bound_ms"]))
                bound = b["bound_ms"][top]
                meas = ", ".join(f"{x['measured_wcrt_ms'].get(top, float('nan')):.1f}"
                                 + ("s" if x["stalled"] else "") for x in b["runs"])
                plat = ", ".join(f"{x['platform_bound_ms'][top]:.1f}" if x["platform_bound_ms"].get(top) else "∞"
                                 for x in b["runs"])
                reasons = "; ".join(f"{n}: {t}" for n, t in b["reasons"].items())
                fit = "in-sample" if b["in_sample"] else "runs " + ",".join(map(str, b["fit_runs"]))
                out.append(f"| {v} | {c} | {b['fitted_remote_ms']:.2f} | {fit} | "
                           f"{'∞' if bound is None else f'{bound:.1f}'} / {meas} | {plat} | {reasons} |")
    return "\n".join(out)


def config_name(config: str, entry: dict) -> str:
    """A configuration as the tables name it: its name and what ran the nodes."""
    ex = (entry.get("accounting") or {}).get("executor")
    return f"{config} ({ex})" if ex else config


def accounting_table(summary: dict, head: str) -> list[str]:
    """The accounting beside the figures (Markdown lines): per point and configuration the top
    chain's instances and cros-rt bound, every chain's instances above its bound by cause, and
    the top chain's WCRT − BCRT and p99 − BCRT raw and over its platform-free instances (median
    [min..max] of the runs, ms); the notes (what limited the accounting) after it."""
    out = [f"| {head} | configuration | top-chain instances (platform-free) | top-chain bound | above bound | "
           + "".join(f"{c} | " for c in accounting.CAUSES) + "WCRT − BCRT raw | WCRT − BCRT platform-free | "
           "p99 − BCRT raw | p99 − BCRT platform-free |", "|" + "---|" * (9 + len(accounting.CAUSES))]
    notes = set()
    for v, p in summary["points"].items():
        for c, e in p["configs"].items():
            a = e.get("accounting") or {}
            if not a:
                continue
            bound = a["top_bound_ms"]
            out.append(f"| {v} | {config_name(c, e)} | {a['top_instances']:,} ({a['top_free_instances']:,}) "
                       f"| {output.spread(bound) if bound else 'none'} | {a['above']} | "
                       + "".join(f"{a[c]} | " for c in accounting.CAUSES) + f"{output.spread(a['top_jitter_ms'])} "
                       f"| {output.spread(a['top_free_jitter_ms'])} | {output.spread(a['top_p99_excess_ms'])} "
                       f"| {output.spread(a['top_free_p99_excess_ms'])} |")
            notes.update(f"{c}: {n}" for n in a["notes"])
    out += [f"- {n}" for n in sorted(notes)]
    return out


# ---------------------------------------------------------------------------------------------
# plots

COLOURS = {"vanilla": "C3", "preempt-rt": "C1", "app-dds": "C2", "full": "C0", "full-server": "C4", "emulated": "C7"}


def _scatter_runs(ax, xs, rows, key, colour, label=None):
    """Clean runs filled, stalled runs hollow."""
    for x, r in zip(xs, rows):
        ax.scatter([x], [r[key]], s=22, color=colour if _clean(r) else "none", edgecolors=colour,
                   label=label, zorder=3)
        label = None


def plot(rows: list[dict], summary: dict, path: Path, sweep: str) -> None:
    """The figure of an experiment. ``base``: per configuration the top chain's WCRT − BCRT and
    p99 − BCRT per run, and its WCRT per run beside the ``cros-rt`` bounds. A sweep: the clean
    runs' median WCRT − BCRT and p99 − BCRT per configuration against the swept value (every run
    a point: filled clean, hollow stalled); the traffic sweep adds the flood's delivery ratio, the
    chain sweep every chain's WCRT − BCRT in its largest set."""

    plt = pyplot()
    configs = [c for c in STACKS if any(r["config"] == c for r in rows)]
    vals = point_values(rows)
    if sweep == "base":
        fig, axes = plt.subplots(1, 4, figsize=(19, 4.4))
        for j, (key, label) in enumerate((("top_jitter_ms", "top chain WCRT − BCRT (ms)"),
                                          ("top_p99_excess_ms", "top chain p99 − BCRT (ms)"),
                                          ("pdr", "non-RT packet delivery ratio"))):
            ax = axes[j]
            for i, c in enumerate(configs):
                rs = [r for r in rows if r["config"] == c]
                _scatter_runs(ax, [i] * len(rs), rs, key, COLOURS[c])
                med = summary["points"][vals[0]]["configs"][c]["clean"][key]
                if med:
                    ax.hlines(med["median"], i - 0.3, i + 0.3, colors=COLOURS[c], linewidth=2.5)
            ax.set_xticks(range(len(configs)), configs, rotation=15)
            if key != "pdr":
                ax.set_yscale("log")
            ax.set_title(label + "\nbar: median of clean runs; hollow: stalled runs", fontsize=9)
            ax.grid(alpha=0.3)
        ax = axes[3]
        cb = (summary.get("cros_rt") or {}).get(vals[0], {})
        top = rows[0]["top"]
        for i, c in enumerate(configs):
            rs = [r for r in rows if r["config"] == c]
            _scatter_runs(ax, [i] * len(rs), rs, "top_wcrt_ms", COLOURS[c])
            b = cb.get(c, {})
            if b.get("bound_ms", {}).get(top) is not None:
                ax.hlines(b["bound_ms"][top], i - 0.3, i + 0.3, colors="k", linewidth=2)
            for x in b.get("runs", []):
                pb = x["platform_bound_ms"].get(top)
                if pb is not None:
                    ax.scatter([i + 0.2], [pb], marker="_", s=60, color="grey")
        ax.set_xticks(range(len(configs)), configs, rotation=15)
        ax.set_yscale("log")
        ax.set_title("top chain WCRT per run (dots); cros-rt bound with fitted C^R (black bar),\n"
                     "with each run's measured platform (grey); no bar: no bound (reason in summary.json)", fontsize=8)
        ax.grid(alpha=0.3)
    else:
        extra = sweep in ("rate", "chains")
        fig, axes = plt.subplots(1, 3 if extra else 2, figsize=(16 if extra else 11, 4.4))
        xs_num = {v: i for i, v in enumerate(vals)}
        for j, (key, label) in enumerate((("top_jitter_ms", "top chain WCRT − BCRT (ms)"),
                                          ("top_p99_excess_ms", "top chain p99 − BCRT (ms)"))):
            ax = axes[j]
            for off, c in enumerate(configs):
                dx = (off - (len(configs) - 1) / 2) * 0.06
                meds = [(xs_num[v] + dx, summary["points"][v]["configs"][c]["clean"][key]["median"]) for v in vals
                        if c in summary["points"][v]["configs"] and summary["points"][v]["configs"][c]["clean"][key]]
                if meds:
                    ax.plot(*zip(*meds), color=COLOURS[c], marker="o", label=c)
                rs = [r for r in rows if r["config"] == c]
                _scatter_runs(ax, [xs_num[r["value"]] + dx for r in rs], rs, key, COLOURS[c])
            ax.set_xticks(range(len(vals)), vals)
            ax.set_xlabel(SWEEPS.get(sweep, sweep))
            ax.set_yscale("log")
            ax.set_title(label + "\nline: median of clean runs; dots: runs (hollow: stalled)", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        if sweep == "rate":
            ax = axes[2]
            for c in configs:
                pts = [(xs_num[r["value"]], r["pdr"]) for r in rows if r["config"] == c and r["pdr"] == r["pdr"]]
                if pts:
                    ax.scatter(*zip(*pts), color=COLOURS[c], s=18)
                    meds = {}
                    for x, y in pts:
                        meds.setdefault(x, []).append(y)
                    xs = sorted(meds)
                    ax.plot(xs, [statistics.median(meds[x]) for x in xs], color=COLOURS[c], label=c)
            ax.set_xticks(range(len(vals)), vals)
            ax.set_xlabel(SWEEPS["rate"])
            ax.set_title("non-RT packet delivery ratio", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        elif sweep == "chains":
            ax = axes[2]
            v = vals[-1]
            for off, c in enumerate(configs):
                dx = (off - (len(configs) - 1) / 2) * 0.12
                for r in (r for r in rows if r["config"] == c and r["value"] == v):
                    figs = json.loads(r["chain_figures"] or "{}")
                    names = sorted(figs, key=lambda n: (n != r["top"], n))
                    ys = [figs[n]["wcrt_ms"] - figs[n]["bcrt_ms"] for n in names]
                    ax.scatter([i + dx for i in range(len(names))], ys, s=18,
                               color=COLOURS[c] if _clean(r) else "none", edgecolors=COLOURS[c])
                    ax.set_xticks(range(len(names)), names)
            ax.set_yscale("log")
            ax.set_title(f"every chain's WCRT − BCRT (ms) in the {v}-chain set\n(by priority, highest first)",
                         fontsize=9)
            ax.grid(alpha=0.3)
    fig.suptitle(f"CROS-RT on two namespace hosts: {SWEEPS.get(sweep, sweep)} — top chain over "
                 f"{int(min(r['top_instances'] for r in rows)):,}+ instances per run; stalled: a CPU blackout "
                 f"> {STALL_MS:g} ms during the run", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


# ---------------------------------------------------------------------------------------------
# the experiments

def predictability_points(size: str = "4KiB", rate_mbps: float = 60.0) -> list[Point]:
    return [Point("base", "two-chains", k.PAPER_CHAINS, size, rate_mbps)]


def size_points(sizes, rate_mbps: float = 60.0) -> list[Point]:
    return [Point("size", s, k.PAPER_CHAINS, s, rate_mbps) for s in sizes]


def chain_points(counts, utilisation: float = 0.3, seed: int = 1, size: str = "4KiB",
                 rate_mbps: float = 60.0) -> list[Point]:
    return [Point("chains", str(n), chain_set(n, utilisation, seed * 1000 + n), size, rate_mbps) for n in counts]


def rate_points(rates, size: str = "4KiB") -> list[Point]:
    return [Point("rate", f"{r:g}", k.PAPER_CHAINS, size, float(r)) for r in rates]


def points_of(rows: list[dict]) -> list[Point]:
    """The points the rows were measured at (their chain sets, sizes and rates, as recorded)."""
    out = {}
    for r in rows:
        if r["value"] not in out:
            chains = tuple(json.loads(r["chain_set"])) if r.get("chain_set") else k.PAPER_CHAINS
            out[r["value"]] = Point(r["sweep"], r["value"], chains, r["size"], r["flood_mbps"])
    return list(out.values())


def finish(experiment: str, rows: list[dict], out_dir: str) -> dict:
    """summary.json and the figure (``<experiment>.png``) of the rows."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_value = {p.value: p for p in points_of(rows)}
    s = summarize(rows, by_value)
    (out / "summary.json").write_text(json.dumps(s, indent=2, default=str))
    (out / "tables.md").write_text(tables(s, rows) + "\n")
    plot(rows, s, out / f"{experiment}.png", rows[0]["sweep"])
    return s
