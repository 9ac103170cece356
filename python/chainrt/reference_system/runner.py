"""Orchestration of the reference-system benchmark: every configuration (a model variant,
configs.py) runs on real ROS 2 (the C++ workload ``chainrt-reference-system`` from
bench/reference_system/), repeated and interleaved (the order rotates every repetition so that
no configuration always runs first or last); the sinks' samples give the upstream KPIs
(kpi.py); the same model variants also go through the simulator and the analysis.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import _core, verdict
from .. import runtime as chainrt_runtime
from ..analysis import analyze
from ..crosslayer import platform as platform_mod
from ..fastdds import loopback_environment
from ..model import load_model_from_string
from ..simulation import simulate
from . import configs, kpi, message, topology, upstream
from . import accounting as bench_accounting

REPO = Path(__file__).resolve().parents[3]
BINARY = "chainrt-reference-system"
BASE_MODEL = REPO / "examples" / "autoware_reference.yaml"
_PHASE = configs.DEFAULT_PLANNER_PHASE_NS
_DEFAULT_CONFIGS = list(configs.DEFAULT_CONFIGS)


class WorkloadNotFound(RuntimeError):
    """The C++ workload was not built (no ROS 2 at build time, or no build yet)."""


def find_binary() -> Path:
    """``$CHAINRT_REFERENCE_SYSTEM_BIN``, else the newest build's, else PATH."""
    return chainrt_runtime.find_built_program(BINARY, "CHAINRT_REFERENCE_SYSTEM_BIN", "bench/reference_system",
                                              WorkloadNotFound)


@dataclass
class BenchOptions:
    duration_ns: int = 10_000_000_000
    warmup_ns: int = 1_000_000_000
    load: str = "default"
    configs: list[str] = field(default_factory=lambda: list(_DEFAULT_CONFIGS))
    repeat: int = 3
    pin_core: int | None = None
    workload: str = "cpu"
    out_dir: Path = Path("out/reference-system")
    simulate: bool = True
    analyze: bool = True
    planner_phase_ns: int = _PHASE
    creation_step_ns: int | None = None  # timer phases of sequential node creation (configs.creation_phases)
    base_model: Path = BASE_MODEL
    real: bool = True
    rt_priority: int | None = None
    gantt: bool = False                 # trace the first run of each configuration
    # measure the platform's blackouts beside every real run (crosslayer/platform.py) and bound
    # the chains with them too (the hosts' blackout curve); needs SCHED_FIFO 99 (root)
    platform_probe: bool = True
    # "replica": chainrt's re-creation of the workload on the chainrt runtime (configs.py);
    # "upstream": upstream's own nodes on real rclcpp, stock executors and the ChainExecutor
    # (upstream.py)
    system: str = "replica"
    number_cruncher_limit: int | None = None  # upstream: the limit to use (default: calibrated)


class Progress:
    """A one-line progress bar on stderr (only drawn on a terminal unless forced)."""

    def __init__(self, total_s: float, stream=sys.stderr, enabled: bool | None = None):
        self.total = max(total_s, 1e-9)
        self.done = 0.0
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.t0 = time.monotonic()

    def show(self, extra: float, label: str) -> None:
        if not self.enabled:
            return
        frac = min(1.0, (self.done + extra) / self.total)
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        left = max(0.0, self.total - self.done - extra)
        self.stream.write(f"\r[{bar}] {frac * 100:5.1f}%  {label:<40.40}  ~{left:4.0f}s left ")
        self.stream.flush()

    def advance(self, seconds: float) -> None:
        self.done += seconds

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _environment(binary: Path) -> dict[str, str]:
    env = chainrt_runtime.ros_environment(binary)
    # a domain of its own: other ROS processes' discovery traffic stays out of the measurement
    env.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 60))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.update(loopback_environment(env))  # as chainrt run: nothing bound beyond loopback
    return env


def usage_summary(usage: list[list[int]], warmup_ns: int, window_ns: int = 1_000_000_000) -> dict:
    """Process CPU (% of one core) and memory over the measured window, and their series: the
    CPU share over the last `window_ns` at every sample (100 ms samples are too coarse for the
    kernel's CPU-time accounting to give a smooth share)."""
    pts = [u for u in usage if u[0] >= warmup_ns] or usage
    series = []
    j = 0
    for i, b in enumerate(usage):
        while j < i and b[0] - usage[j + 1][0] >= window_ns:
            j += 1
        a = usage[j]
        if b[0] - a[0] >= window_ns:
            series.append((b[0], 100.0 * (b[1] - a[1]) / (b[0] - a[0]), b[2]))
    if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
        cpu = 100.0 * (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
    else:
        cpu = 0.0
    rss = [u[2] for u in pts]
    return {"cpu_percent": cpu, "rss_max_bytes": max(rss) if rss else 0,
            "rss_mean_bytes": (sum(rss) / len(rss)) if rss else 0.0,
            "series": [{"t_ns": t, "cpu_percent": c, "rss_bytes": r} for t, c, r in series]}


def gantt_trace(records: list, window_ns: int = 250_000_000, skip_ns: int = 2_000_000_000) -> dict | None:
    """The executor trace of a run as chainrt.gantt draws it, shifted so that 0 is 1 ms before a
    FrontLidarDriver release `skip_ns` into the trace; only the `window_ns` after it."""
    if not records:
        return None
    first = min(r[3] for r in records)
    # the nominal release of a FrontLidarDriver instance (its stamp's release), not its start
    lidar = sorted(r[6] or r[3] for r in records if r[1] == "FrontLidarDriver/timer" and r[3] >= first + skip_ns)
    if not lidar:
        return None
    t0 = lidar[0] - 1_000_000
    threads = sorted({(r[0], r[2]) for r in records})
    names = sorted({r[1] for r in records})
    events = [[threads.index((r[0], r[2])), names.index(r[1]), max(0, r[6] - t0), r[3] - t0, r[4] - t0]
              for r in records if t0 <= r[4] and r[3] <= t0 + window_ns]
    releases = sorted({r[6] for r in records if r[1] == "FrontLidarDriver/timer" and r[6]})
    period = min((b - a for a, b in zip(releases, releases[1:]) if b > a), default=None)
    return {"threads": [{"executor": e, "name": f"t{t}", "core": "-"} for e, t in threads],
            "callbacks": names, "events": events, "window_ns": window_ns, "lidar_period_ns": period}


def run_once(binary: Path, model_path: Path, opts: BenchOptions, tag: str, progress: Progress | None = None,
             label: str = "", trace: bool = False) -> dict:
    """One real run of one configuration; returns its KPIs, usage and the executor's chains."""
    raw = opts.out_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    dump, js = raw / f"{tag}.bin", raw / f"{tag}.json"
    cmd = [str(binary), str(model_path), "--duration", f"{opts.duration_ns}ns", "--warmup", f"{opts.warmup_ns}ns",
           "--workload", opts.workload, "--dump", str(dump), "--json", str(js),
           "--topic-prefix", f"/rs_{os.getpid()}_{tag.replace('-', '_')}"]
    if opts.pin_core is not None:
        cmd += ["--pin-core", str(opts.pin_core)]
    expected = (opts.duration_ns + opts.warmup_ns) / 1e9
    t0 = time.monotonic()
    probe, platform = _platform_probe(opts, expected + 130)
    measured = isinstance(probe, platform_mod.PlatformProbe)
    if trace or measured:  # (the accounting needs every execution)
        cmd += ["--trace"]
    tids: set[int] = set()
    with probe:
        # no workload outlives a killed bench (the binary ties itself to this process)
        proc = subprocess.Popen(cmd, env=chainrt_runtime.tied_to_this_process(_environment(binary)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None:
            if progress:
                progress.show(min(time.monotonic() - t0, expected), label)
            time.sleep(0.25)
            if measured:  # the run's own threads: what the platform attribution tells apart
                try:
                    tids.update(int(t) for t in os.listdir(f"/proc/{proc.pid}/task"))
                except OSError:
                    pass
            if time.monotonic() - t0 > expected + 120:
                proc.terminate()
        _, err = proc.communicate()
    if isinstance(probe, platform_mod.PlatformProbe):
        platform = {"blackouts": probe.blackouts, "period_ns": probe.period_ns, "cost_ns": platform_mod.probe_cost(probe),
                    "dropped": probe.dropped}
    if proc.returncode != 0 or not js.is_file():
        raise RuntimeError(f"{BINARY} ({tag}) exited with {proc.returncode}: {err.strip()[-2000:]}")
    summary = json.loads(js.read_text())
    sinks = message.read_dump(dump, summary["sinks"])
    samples = {s: [entries for _, entries in recs] for s, recs in sinks.items()}
    k = kpi.run_kpis(samples)
    account = bench_accounting.run_input(summary.get("trace", []), probe, tids | {proc.pid},
                                         summary.get("started_ns", 0) + opts.warmup_ns, samples) if measured else None
    return {"kpis": k, "usage": usage_summary(summary["usage"], opts.warmup_ns), "accounting": account,
            "runtime_chains": summary["runtime"]["chains"], "warnings": summary.get("warnings", []),
            "runtime_callbacks": summary["runtime"].get("callbacks", {}),
            "records_lost": summary.get("records_lost", 0), "wall_s": time.monotonic() - t0,
            "stderr": err.strip()[-2000:], "gantt": gantt_trace(summary.get("trace", [])) if trace else None,
            "platform": platform}


def _platform_probe(opts: BenchOptions, duration_s: float):
    """The platform probe for one run (a context manager), or a no-op one and the reason none runs."""
    if not opts.platform_probe:
        return contextlib.nullcontext(), {"unavailable": "not asked for (--no-platform-probe)"}
    try:
        platform_mod.build_probe()
    except platform_mod.KernelPathUnavailable as err:
        return contextlib.nullcontext(), {"unavailable": str(err)}
    if os.geteuid() != 0:
        return contextlib.nullcontext(), {"unavailable": "the platform probe needs root (SCHED_FIFO 99)"}
    # (only the CPUs the workload may use: the curve applies to every core of the model's host)
    cpus = [opts.pin_core] if opts.pin_core is not None else None
    return platform_mod.PlatformProbe(duration_s, cpus), None


def platform_curve(runs: list[dict]) -> tuple[list[tuple[int, int]] | None, str]:
    """The blackout curve of a configuration's runs (every run's every CPU; crosslayer/platform.py),
    or None and why there is none."""
    plats = [r.get("platform") or {} for r in runs]
    missing = [p.get("unavailable", "no probe") for p in plats if "blackouts" not in p]
    if not plats or missing:
        return None, missing[0] if missing else "no real run"
    if any(p.get("cost_ns") is None for p in plats):
        return None, "the platform probe's own CPU time could not be read"
    if any(p.get("dropped") for p in plats):
        return None, "the platform probe dropped blackout records"
    # each run's CPUs: the probe's blackouts with the executors' late wake-ups (accounting.late_wakeups)
    blackouts = []
    for r, p in zip(runs, plats):
        wake = ((r.get("accounting") or {}).get("wakeups")) or {}
        mine = {str(cpu): iv for cpu, iv in wake.items()}
        blackouts += [platform_mod.merge(list(iv) + list(mine.get(str(cpu), []))) for cpu, iv in p["blackouts"].items()]
    cost = max(p["cost_ns"] for p in plats)
    return platform_mod.curve(blackouts, max(p["period_ns"] for p in plats), cost), ""


def _platform_summary(run: dict) -> dict:
    """One run's platform in figures: blackout in total and the longest, per CPU (ms)."""
    p = run.get("platform") or {}
    if "blackouts" not in p:
        return {"unavailable": p.get("unavailable", "no probe")}
    return {"probe_cost_us": None if p.get("cost_ns") is None else p["cost_ns"] / 1e3,
            "cpus": {str(cpu): {"blackout_ms": sum(e - b for b, e in iv) / 1e6,
                                "longest_ms": max((e - b for b, e in iv), default=0) / 1e6}
                     for cpu, iv in p["blackouts"].items()}}


def with_platform(model, points: list[tuple[int, int]]):
    """A copy of the model whose hosts carry the blackout curve."""
    m = load_model_from_string(model.to_yaml(), "platform variant")
    hosts = []
    for h in m.hosts:
        h.blackout = [_core.BlackoutPoint(w, x) for w, x in points]
        hosts.append(h)
    m.hosts = hosts
    return m


def _pooled_chain(chains: dict, names: list[str]) -> dict:
    rows = [chains[n] for n in names if n in chains and chains[n].get("instances", 0) > 0]
    n = sum(r["instances"] for r in rows)
    return {"mean_ns": (sum(r["mean_ns"] * r["instances"] for r in rows) / n) if n else None,
            "wcrt_ns": max((r["wcrt_ns"] for r in rows), default=None),
            "instances": n}


HOT_CHAINS = ["hot_path_front", "hot_path_rear"]


def simulated_kpi(model, trace: dict) -> dict:
    """Upstream's hot-path latency read off a simulator trace: for every ObjectCollisionEstimator
    execution, its start minus the later start of the two LiDAR timer instances of the same
    period (the simulator's events carry callback starts; the stats array does not exist there).
    Assumes a hot-path instance finishes within its period (true unless overloaded)."""
    names = trace["callbacks"]
    ix = {n: i for i, n in enumerate(names)}
    front, rear = model.callback("FrontLidarDriver/timer"), model.callback("RearLidarDriver/timer")
    end = ix.get("ObjectCollisionEstimator/EuclideanClusterDetector")
    starts = {ix[front.name]: {}, ix[rear.name]: {}}
    oce = []
    for _th, cb, rel, start, _fin in trace["events"]:
        if cb in starts:
            starts[cb].setdefault(rel, start)
        elif cb == end:
            oce.append(start)
    lat, seen = [], set()
    for s0 in sorted(oce):
        k = (s0 - front.offset) // front.period
        if k in seen:
            continue
        f = starts[ix[front.name]].get(front.offset + k * front.period)
        r = starts[ix[rear.name]].get(rear.offset + k * rear.period)
        if f is not None and r is not None and s0 >= max(f, r):
            seen.add(k)
            lat.append(s0 - max(f, r))
    lat = lat[kpi.WARMUP_SAMPLES:]
    return {"hot_path_latency": kpi._stats(lat)} if lat else {}


def simulate_config(model, duration_ns: int) -> dict:
    result, trace = simulate(model, duration_ns, seed=1, trace=True)
    ch = result["chains"]
    out = {"hot_path": _pooled_chain(ch, HOT_CHAINS), "behavior_planner": _pooled_chain(ch, ["behavior_planner"]),
           "chains": ch}
    if trace and not trace.get("truncated"):
        out.update(simulated_kpi(model, trace))
    return out


def analyze_config(model) -> dict:
    try:
        r = analyze(model)
    except (ValueError, RuntimeError) as err:
        return {"analysis": None, "reason": str(err)}
    out = {"analysis": r["analysis"], "schedulable": r["schedulable"], "chains": r["chains"]}
    hot = [r["chains"][c] for c in HOT_CHAINS if c in r["chains"]]
    bounds = [c["wcrt_bound_ns"] for c in hot]
    out["hot_path_bound_ns"] = max(bounds) if bounds and all(b is not None for b in bounds) else None
    bp = r["chains"].get("behavior_planner", {})
    out["behavior_planner_bound_ns"] = bp.get("wcrt_bound_ns")
    # which analysis gave each bound (analyze: the tightest per chain, not always the model's own)
    if out["hot_path_bound_ns"] is not None:
        out["hot_path_analysis"] = max(hot, key=lambda c: c["wcrt_bound_ns"]).get("analysis") or r["analysis"]
    out["behavior_planner_analysis"] = bp.get("analysis") or r["analysis"]
    reasons = [c.get("reason") for c in hot if c.get("reason")]
    out["reason"] = reasons[0] if reasons else ""
    return out


DISTURBED_SHARE = 0.75


def _if_counted(stats: dict, key: str):
    return stats[key] if stats.get("count") else None


def preempted_callbacks(runs: list[dict], chain_callbacks: dict[str, list[str]]) -> dict:
    """Per chain ("hot_path", "behavior_planner"), the instances in which one of its callbacks lost
    the CPU while running: the run's largest wall time per instance exceeds its largest CPU time
    by the verdict's preemption rule (the executor's records; time the model does not contain:
    a higher-priority thread, or the hypervisor). Largest first, one per run and callback."""
    out: dict[str, list[dict]] = {}
    for chain, cbs in chain_callbacks.items():
        rows = []
        for i, r in enumerate(runs):
            stats = r.get("runtime_callbacks") or {}
            for cb in cbs:
                st = stats.get(cb)
                if st and verdict.lost_cpu(st):
                    rows.append({"run": i + 1, "callback": cb, "wall_ns": st["wall_max_ns"], "cpu_ns": st["cpu_max_ns"]})
        if rows:
            out[chain] = sorted(rows, key=lambda x: x["cpu_ns"] - x["wall_ns"])
    return out


def chain_callbacks(model) -> dict[str, list[str]]:
    """The callbacks of the benchmark's chains (the hot paths pooled) in a configuration's model."""
    hot = [cb for name in HOT_CHAINS for cb in verdict.chain_callbacks(model, name)]
    return {"hot_path": list(dict.fromkeys(hot)), "behavior_planner": verdict.chain_callbacks(model, "behavior_planner")}


def aggregate(name: str, runs: list[dict], floor_ns: int, demand: float | None = None,
              chains: dict[str, list[str]] | None = None, info: tuple[str, str] | None = None) -> dict:
    """The figures of one configuration: pooled samples of all runs plus the spread of the
    per-run figures (mean, std, min, max over runs). `chains`: the callbacks of each chain, for
    the instances that lost the CPU while running (preempted_callbacks)."""
    policy, summary = info or (configs.CONFIGS[name].policy, configs.CONFIGS[name].summary)
    pooled = kpi.pooled([r["kpis"] for r in runs]).to_dict()
    per_run = [dict(r["kpis"].to_dict(), cpu_percent=r["usage"]["cpu_percent"],
                    rss_max_bytes=r["usage"]["rss_max_bytes"]) for r in runs]
    runtime_hot = [_pooled_chain(r["runtime_chains"], HOT_CHAINS) for r in runs]
    runtime_bp = [_pooled_chain(r["runtime_chains"], ["behavior_planner"]) for r in runs]
    out = {
        "policy": policy,
        "summary": summary,
        **pooled,
        "cpu": {"mean_percent": kpi.spread([r["usage"]["cpu_percent"] for r in runs])},
        "memory": {"rss_max_bytes": kpi.spread([r["usage"]["rss_max_bytes"] for r in runs])},
        "spread": {
            "hot_path_latency_mean_ns": kpi.spread([_if_counted(p["hot_path_latency"], "mean_ns") for p in per_run]),
            "hot_path_latency_max_ns": kpi.spread([_if_counted(p["hot_path_latency"], "max_ns") for p in per_run]),
            "hot_path_latency_p99_ns": kpi.spread([_if_counted(p["hot_path_latency"], "p99_ns") for p in per_run]),
            "hot_path_drops": kpi.spread([p["hot_path_drops"] for p in per_run]),
            "behavior_planner_period_mean_ns": kpi.spread([_if_counted(p["behavior_planner_period"], "mean_ns")
                                                           for p in per_run]),
            "behavior_planner_period_std_ns": kpi.spread([_if_counted(p["behavior_planner_period"], "std_ns")
                                                          for p in per_run]),
        },
        "latency_over_floor": (pooled["hot_path_latency"]["mean_ns"] / floor_ns)
        if floor_ns and pooled["hot_path_latency"]["count"] else None,
        # runs whose process got clearly less CPU than the model needs: another load took the core
        "disturbed_runs": [{"run": i + 1, "cpu_percent": p["cpu_percent"]} for i, p in enumerate(per_run)
                           if demand and p["cpu_percent"] < DISTURBED_SHARE * demand * 100],
        "preempted": preempted_callbacks(runs, chains or {}),
        "runtime_chains": {
            "hot_path": {"mean_ns": kpi.spread([h["mean_ns"] for h in runtime_hot if h["mean_ns"] is not None]),
                         "wcrt_ns": max((h["wcrt_ns"] for h in runtime_hot if h["wcrt_ns"] is not None), default=None)},
            "behavior_planner": {"mean_ns": kpi.spread([h["mean_ns"] for h in runtime_bp if h["mean_ns"] is not None]),
                                 "wcrt_ns": max((h["wcrt_ns"] for h in runtime_bp if h["wcrt_ns"] is not None),
                                                default=None)},
        },
        "runs": [{k: v for k, v in p.items() if k != "sink_samples"} | {"sink_samples": p["sink_samples"]}
                 for p in per_run],
        "samples": {"hot_path_latency_ns": kpi.pooled([r["kpis"] for r in runs]).hot_path_latencies,
                    "behavior_planner_period_ns": kpi.pooled([r["kpis"] for r in runs]).behavior_planner_periods},
        "usage_series": runs[0]["usage"]["series"] if runs else [],
        "gantt": runs[0].get("gantt") if runs else None,
        "warnings": sorted({w for r in runs for w in r["warnings"]}),
    }
    return out


def checks(result: dict) -> dict:
    """The targets the priority-driven configurations are held to (information, not a test):
    mean latency over its floor (1.3x stressed, 1.15x default), at most half of
    ros-default-st's mean, zero hot-path drops, planner period std below 0.1 ms."""
    limit = 1.3 if result["load"] == "stressed" else 1.15
    base = result["configs"].get("ros-default-st")
    out = {}
    for name, c in result["configs"].items():
        if c["policy"] not in ("picas", "edf"):
            continue
        mean = c["hot_path_latency"]["mean_ns"]
        if not c["hot_path_latency"]["count"]:
            out[name] = {"latency_over_floor": None, "floor_limit": limit, "within_floor": False, "zero_drops": False,
                         "planner_period_std_below_0.1ms": False, "no_samples": True}
            continue
        row = {"latency_over_floor": c["latency_over_floor"], "floor_limit": limit,
               "within_floor": c["latency_over_floor"] is not None and c["latency_over_floor"] <= limit,
               "zero_drops": c["hot_path_drops"] == 0,
               "planner_period_std_below_0.1ms": c["behavior_planner_period"]["std_ns"] < 100_000}
        if base and base["hot_path_latency"]["mean_ns"]:
            row["vs_ros_default_st"] = mean / base["hot_path_latency"]["mean_ns"]
            row["at_most_half_of_ros_default_st"] = row["vs_ros_default_st"] <= 0.5
        out[name] = row
    return out


def _model_config(name: str, system: str) -> str | None:
    """The layout (configs.py) whose model variant describes a configuration: its own; for a
    stock rclcpp executor of the upstream system the replica layout with the same executor
    rule (None where there is none: the EventsExecutor, upstream's callback-group layout)."""
    if system == "upstream" and upstream.is_stock(name):
        return upstream.STOCK[name].replica
    return name


def _info(name: str, system: str) -> tuple[str, str]:
    """(policy, summary) of a configuration."""
    if system == "upstream" and upstream.is_stock(name):
        return "rclcpp", upstream.STOCK[name].summary
    cfg = configs.CONFIGS[name]
    return cfg.policy, (cfg.summary + " on rclcpp (ChainExecutor)" if system == "upstream" else cfg.summary)


def _probe_result(probe, platform):
    if isinstance(probe, platform_mod.PlatformProbe):
        return {"blackouts": probe.blackouts, "period_ns": probe.period_ns, "cost_ns": platform_mod.probe_cost(probe),
                "dropped": probe.dropped}
    return platform


def bounded(system: str, name: str) -> bool:
    """Whether a configuration runs at the phases of its model, so that the simulator and the
    analysis describe it: every one of the replica, and chainrt's layouts on upstream's nodes (the
    ChainExecutor releases their timers on the release grid); not a stock rclcpp executor, whose
    timers start when upstream creates their nodes, one after another."""
    return not (system == "upstream" and upstream.is_stock(name))


def run_upstream_once(name: str, model_path: Path | None, opts: BenchOptions, tag: str, limit: int, cpuset, env,
                      progress: Progress | None = None, label: str = "", trace: bool = False) -> dict:
    """One real run of one configuration of upstream's system (upstream.run_config), with the
    platform probe beside it and, where it ran, the run's accounting input: its platform-free
    samples and, for chainrt's layouts (``bounded``), the ChainExecutor's dispatch trace."""
    expected = (opts.duration_ns + opts.warmup_ns) / 1e9
    probe, platform = _platform_probe(opts, expected + 60)
    measured = isinstance(probe, platform_mod.PlatformProbe)
    tids: set[int] = set()
    with probe:
        # (the accounting of a ChainExecutor layout against its bound needs every execution)
        r = upstream.run_config(name, model_path, opts, tag, limit, cpuset, env,
                                progress=(lambda s: progress.show(s, label)) if progress else None,
                                trace=trace or (measured and bounded(opts.system, name)), tids=tids)
    records, log = r.pop("trace"), r.pop("log")
    r["gantt"] = gantt_trace(records) if trace else None
    r["platform"] = _probe_result(probe, platform)
    r["usage"] = usage_summary(r["usage"], opts.warmup_ns)
    r["accounting"] = bench_accounting.upstream_input(records, probe, tids, log, opts.warmup_ns) if measured else None
    return r


def run_bench(opts: BenchOptions, progress_stream=sys.stderr, progress: bool | None = None,
              log=lambda s: None) -> dict:
    """Run the benchmark; returns the result dict (see docs/reference_system.md)."""
    if opts.system not in ("replica", "upstream"):
        raise ValueError(f"unknown system {opts.system!r} (replica, upstream)")
    base = configs.load_model(str(opts.base_model))
    scale = configs.load_scale(base, opts.load)
    models_dir = opts.out_dir / "models"
    models_dir.mkdir(parents=True, exist_ok=True)
    variants = {}
    for name in opts.configs:
        layout = _model_config(name, opts.system)
        if layout is None:
            continue
        m = configs.variant(str(opts.base_model), layout, opts.load, opts.pin_core, opts.planner_phase_ns,
                            rt_priority=opts.rt_priority, creation_step_ns=opts.creation_step_ns)
        path = models_dir / f"{name}.yaml"
        m.save(str(path))
        variants[name] = (m, path)
    any_model = next(iter(variants.values()))[0] if variants else configs.variant(
        str(opts.base_model), "ros-default-st", opts.load, opts.pin_core)
    floor_ns = topology.hot_path_floor(any_model)
    result = {
        "benchmark": "autoware-reference-system", "system": opts.system,
        "load": opts.load, "work_scale": scale, "demand": topology.demand(any_model),
        "duration_ns": opts.duration_ns, "warmup_ns": opts.warmup_ns, "repeat": opts.repeat,
        "pin_core": opts.pin_core, "rt_priority": opts.rt_priority, "workload": opts.workload, "planner_phase_ns": opts.planner_phase_ns,
        "creation_step_ns": opts.creation_step_ns,
        "hot_path_floor_ns": floor_ns, "hot_path_floor_no_blocking_ns": topology.hot_path_floor(any_model, False),
        "configs": {}, "host": {"cpus": os.cpu_count(), "load_average": list(os.getloadavg())},
    }
    runs: dict[str, list[dict]] = {n: [] for n in opts.configs}
    if opts.real:
        cpuset = None
        if opts.system == "upstream":
            env = _environment(upstream.program(opts.configs[0]))
            work_ns = topology.work_per_callback(any_model)
            if opts.number_cruncher_limit is None:
                cal = upstream.calibrate(work_ns, opts.pin_core, opts.rt_priority)
                limit = cal["limit"]
            else:
                limit, cal = opts.number_cruncher_limit, None
            result["number_cruncher"] = {"limit": limit, "work_ns": work_ns, "calibration": cal}
            cpuset = upstream.CpuSet.create(opts.pin_core)
            result["cpuset"] = cpuset is not None
            log(f"number-cruncher limit {limit} for {work_ns / 1e6:.2f} ms of CPU time per working callback")
        else:
            binary = find_binary()
        per_run = (opts.duration_ns + opts.warmup_ns) / 1e9 + 2.0
        bar = Progress(per_run * opts.repeat * len(opts.configs), progress_stream, progress)
        try:
            for rep in range(opts.repeat):
                order = opts.configs[rep % len(opts.configs):] + opts.configs[:rep % len(opts.configs)]
                for name in order:
                    label = f"{name} run {rep + 1}/{opts.repeat}"
                    tag = f"{name}-r{rep + 1}"
                    if opts.system == "upstream":
                        r = run_upstream_once(name, variants[name][1] if name in variants else None, opts, tag,
                                              limit, cpuset, env, bar, label, trace=opts.gantt and rep == 0)
                    else:
                        r = run_once(binary, variants[name][1], opts, tag, bar, label, trace=opts.gantt and rep == 0)
                    runs[name].append(r)
                    bar.advance(per_run)
                    bar.show(0, label)
                    log(f"{label}: hot-path mean {r['kpis'].to_dict()['hot_path_latency']['mean_ns'] / 1e6:.2f} ms")
        finally:
            bar.close()
            if cpuset is not None:
                cpuset.remove()
        result["host"]["load_average_after"] = list(os.getloadavg())
    for name in opts.configs:
        model = variants[name][0] if name in variants else None
        policy, summary = _info(name, opts.system)
        c = aggregate(name, runs[name], floor_ns, result["demand"], chain_callbacks(model) if model else {},
                      info=(policy, summary)) if runs[name] else {"policy": policy, "summary": summary}
        if model is not None and not bounded(opts.system, name):
            model = None  # (its replica's model serves the layout's placement only)
        if model is not None and opts.simulate:
            c["simulated"] = simulate_config(model, max(opts.duration_ns, 10_000_000_000))
        if runs[name]:
            # the platform measured beside the runs: what the hypervisor, interrupts or the
            # kernel took above every thread (attributes outliers; bounds the chains below)
            points, why = platform_curve(runs[name])
            c["platform"] = {"curve": points, "reason": why, "runs": [_platform_summary(r) for r in runs[name]]}
        if model is not None and opts.analyze:
            c["analysis"] = analyze_config(model)
            if runs[name] and c["platform"]["curve"]:
                # The bound with the platform measured beside the runs (never their responses).
                c["analysis_platform"] = analyze_config(with_platform(model, c["platform"]["curve"]))
        if runs[name]:
            # every instance above the model's bound classified; the KPIs over platform-free samples
            # (a stock executor, without a model: the platform-free split alone)
            c["accounting"] = bench_accounting.config_accounting(model, runs[name], c.get("analysis"), c.get("simulated"),
                                                                 c.get("analysis_platform"))
        result["configs"][name] = c
    if opts.real:
        result["checks"] = upstream.checks(result) if opts.system == "upstream" else checks(result)
    return result
