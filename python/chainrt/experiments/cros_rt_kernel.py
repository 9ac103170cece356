"""CROS-RT's experiments across two network-namespace hosts, on real ROS 2 (rcl + Fast DDS).

Configurations compared: the paper's baselines and the steps between them, one descriptor each
in :mod:`chainrt.crosslayer.stacks` (``vanilla``, ``preempt-rt``, ``app-dds``, ``full``,
``full-server``; the non-RT server's budget is the largest the ``cros-rt`` analysis admits,
:func:`server_budget`).

Experiment (a), :func:`two_chains`: a high chain (T = 20 ms, 5 ms of work) and a low chain
(T = 200 ms, 20 ms), each publisher on host A and subscriber on host B, under a non-RT UDP flood
A -> B (60 Mbit/s by default) and the loads below; WCRT − BCRT and p99 of the high chain per
configuration over several runs, the flood's delivery ratio, and the ``cros-rt`` bounds with
communication costs fitted from the measured hops. The paper's own runs and sweeps (≥ 10,000
instances, message size, number of chains, non-RT traffic) are :mod:`.cros_rt_paper`.

Loads: ``paper`` — the flood at 60 Mbit/s, unpinned; ``pinned`` — the same flood's sender on the
high publisher's core, so the flood's receive processing (which a veth does in the sender's
softirq) shares that CPU with the real-time chain; ``overload`` — as pinned, at 1 Gbit/s
(as fast as the sender manages): the softirq work then overflows into ksoftirqd (SCHED_OTHER),
where the RT chain's packets queue behind the flood's in the same backlog unless the selector
steers them to their own class thread — the kernel-side inversion CROS-RT removes; ``busy`` —
the paper's flood plus ``hogs`` CPU-bound SCHED_OTHER processes on every CPU (what a machine
that also compiles or runs other work looks like): the flood's and the chains' receive
processing in the SCHED_OTHER NAPI thread then waits behind the hogs and behind the low
chain's SCHED_FIFO callbacks, unless the selector hands the chains' packets to class threads at
their priority; ``busy-overload`` — overload plus the hogs; ``rx-overload`` — overload with the
receiving host's NAPI thread pinned to the high subscriber's CPU (a NIC whose interrupts go to
the real-time CPU): the flood's receive processing and the real-time subscriber share one CPU;
``rx-busy-overload`` — rx-overload plus the hogs.

``cros-rt`` bounds (:func:`cros_rt_check`): per load and per configuration the analysis models
(every one but ``vanilla``), the remote cost C^R is fitted from that configuration's
own fit runs (even run numbers) and the bound is checked against its check runs (odd run
numbers), which the fit never saw; and again with the measured platform (:func:`platform_check`):
the CPUs' blackouts, measured beside every run by a top-priority probe
(``crosslayer/platform.py``), taken out of the fit and given to each run's analysis as the
hosts' blackout curve (model ``hosts[].blackout``), which ``cros-rt`` charges.
"""

from __future__ import annotations

import csv
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from .. import _core, cliargs
from ..crosslayer import session
from ..crosslayer import platform as plat
from ..crosslayer.platform import CURVE_WINDOWS_MS, PlatformProbe
from ..crosslayer.session import Flood
from ..crosslayer.stacks import STACKS, STOCK_EXECUTOR, run_arguments
from ..figures import pyplot, save_figure
from ..model import load_model_from_string

# the configurations (crosslayer.stacks): vanilla, preempt-rt, app-dds, full, full-server
CONFIGS = list(STACKS)
LOADS = ("paper", "pinned", "overload", "busy", "busy-overload", "rx-overload", "rx-busy-overload")
# loads whose flood is pinned to the high publisher's CPU at the overload rate / with CPU hogs
OVERLOAD_LOADS = ("overload", "busy-overload", "rx-overload", "rx-busy-overload")
# loads whose receive processing (host B's NAPI thread) is pinned to the high subscriber's CPU
RX_PINNED_LOADS = ("rx-overload", "rx-busy-overload")
HOG_LOADS = ("busy", "busy-overload", "rx-busy-overload")
HI_PRIO, LO_PRIO = 80, 70


# the paper's two chains (experiment (a)): T = 20 ms with 5 ms of work, T = 200 ms with 20 ms
PAPER_CHAINS = (dict(name="high", period_ms=20, wcet_us=2500, prio=HI_PRIO),
                dict(name="low", period_ms=200, wcet_us=10000, prio=LO_PRIO))


def two_chain_model(size: str = "4KiB", extra_chains: list[dict] | None = None, name: str = "cros_rt_two_chains",
                    measurements: list[dict] | None = None, server: tuple[int, int] | None = None,
                    blackout: list[tuple[int, int]] | None = None) -> str:
    """The model of experiment (a) as YAML (:func:`chains_model` of the paper's two chains): the
    high chain at SCHED_FIFO 80, the low chain at 70. ``extra_chains``: more chains after them."""
    return chains_model(list(PAPER_CHAINS) + list(extra_chains or []), size, name=name,
                        measurements=measurements, server=server, blackout=blackout)


def chains_model(chains: list[dict], size: str = "4KiB", name: str = "cros_rt_chains",
                 measurements: list[dict] | None = None, server: tuple[int, int] | None = None,
                 blackout: list[tuple[int, int]] | None = None) -> str:
    """A model of CROS-RT's experiments as YAML: each chain {name, period_ms, wcet_us, prio} a
    timer publisher in its own process on host A and a subscriber in its own process on host B
    (CROS-RT's P3: one chain per executor), each callback ``wcet_us``, publishers on core 0 of A,
    subscribers on core 1 of B, at the chain's SCHED_FIFO priority; messages of ``size``.
    ``server``: the non-RT server (budget, period ns) as a top-priority chain on both hosts, for
    the analysis only. ``blackout``: both hosts' blackout curve [(window ns, max ns)] (model
    ``hosts[].blackout``; see :func:`platform_bounds`): the two namespace hosts share this
    machine's CPUs, so the curve measured on them is each host's."""
    curve = ""
    if blackout:
        curve = ", blackout: [" + ", ".join(f"{{window: {w}ns, max: {x}ns}}" for w, x in blackout) + "]"
    lines = ["chainrt: 1", f"name: {name}", "hosts:", f"  - {{name: A, cores: 2{curve}}}",
             f"  - {{name: B, cores: 2{curve}}}", "executors:"]
    nodes, topics, cbs, chs = [], [], [], []
    for i, c in enumerate(chains):
        n, p = c["name"], c["prio"]
        for side, host, core in (("pub", "A", 0), ("sub", "B", 1)):
            lines.append(f"  - {{name: {n}_{side}_x, host: {host}, process: {n}_{side}, policy: picas, priority: {p}, "
                         f"threads: [{{name: t0, cores: [{core}], priority: {p}}}]}}")
            nodes.append(f"  - {{name: {n}_{side}_node, executor: {n}_{side}_x}}")
        topics.append(f"  - {{name: {n}_data, size: {size}}}")
        # PiCAS P1: later callbacks of a chain above earlier ones; higher chains above lower
        cbs.append(f"  - {{name: {n}_pub, kind: timer, node: {n}_pub_node, period: {c['period_ms']}ms, "
                   f"wcet: {c['wcet_us']}us, priority: {2 * p}, publishes: [{n}_data]}}")
        cbs.append(f"  - {{name: {n}_sub, kind: subscription, node: {n}_sub_node, topic: {n}_data, "
                   f"wcet: {c['wcet_us']}us, priority: {2 * p + 1}}}")
        chs.append(f"  - {{name: {n}, callbacks: [{n}_pub, {n}_sub], deadline: {c['period_ms']}ms, "
                   f"priority: {p}, class: rt}}")
    if server:
        q, t = server
        for host, core in (("A", 0), ("B", 1)):
            lines.append(f"  - {{name: nonrt_server_{host}, host: {host}, process: nonrt_server_{host}, policy: picas, "
                         f"priority: 99, threads: [{{name: t0, cores: [{core}], priority: 99}}]}}")
            nodes.append(f"  - {{name: nonrt_node_{host}, executor: nonrt_server_{host}}}")
            cbs.append(f"  - {{name: nonrt_budget_{host}, kind: timer, node: nonrt_node_{host}, period: {t}ns, "
                       f"wcet: {q}ns, priority: 250}}")
            chs.append(f"  - {{name: nonrt_server_{host}, callbacks: [nonrt_budget_{host}], deadline: {t}ns, priority: 99}}")
    out = lines + ["nodes:"] + nodes + ["topics:"] + topics + ["callbacks:"] + cbs + ["chains:"] + chs
    if measurements:
        out += ["communication:", "  measurements:"]
        out += [f"    - {{kind: {m['kind']}, size: {m['size']}B, latency: {int(m['latency_ns'])}ns}}" for m in measurements]
    return "\n".join(out) + "\n"


def cros_rt_bounds(yaml_text: str) -> dict:
    """{chain: wcrt bound ns or None} of the ``cros-rt`` analysis for a model text."""
    m = load_model_from_string(yaml_text)
    ok, why = _core._applicable(m, "cros-rt")
    if not ok:
        raise RuntimeError(f"cros-rt does not apply: {why}")
    r = _core._analyze(m, "cros-rt")
    r = json.loads(r) if isinstance(r, str) else r
    return {n: (c.get("wcrt_bound_ns") if c.get("schedulable", True) or c.get("wcrt_bound_ns") else None)
            for n, c in r["chains"].items()}, r


def server_budget(measurements: list[dict] | None = None, period_ns: int = 10_000_000, size: str = "4KiB",
                  chains: list[dict] | None = None) -> tuple[int, int]:
    """C4's parameters from the ``cros-rt`` analysis: the largest budget Q (in 100 µs steps) of a
    non-RT server with period T that, as a top-priority chain on the real-time cores of both
    hosts, leaves every RT chain within its deadline. ``chains``: the chain set (default: the
    paper's two chains)."""
    chains = list(chains or PAPER_CHAINS)
    best = 0
    step = 100_000
    for q in range(step, period_ns, step):
        bounds, res = cros_rt_bounds(chains_model(chains, size, measurements=measurements, server=(q, period_ns)))
        if all(res["chains"][c["name"]]["schedulable"] for c in chains):
            best = q
        else:
            break
    if best == 0:
        raise RuntimeError("no non-RT server budget keeps the real-time chains schedulable")
    return best, period_ns


_HOG = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\nwhile True:\n    pass\n"


class CpuHogs:
    """``per_cpu`` CPU-bound SCHED_OTHER processes pinned to every CPU, for the lifetime of the
    context (the ``busy`` load: the machine's other work competing with the packet path)."""

    def __init__(self, per_cpu: int):
        self.per_cpu, self.procs = per_cpu, []

    def __enter__(self):
        import subprocess
        for cpu in sorted(os.sched_getaffinity(0)):
            for _ in range(self.per_cpu):
                self.procs.append(subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", _HOG]))
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except Exception:
                p.kill()
                p.wait()
        self.procs = []


def _steal_ms() -> float:
    """CPU time the hypervisor took from this VM's CPUs so far (/proc/stat steal), in ms."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _quantiles(xs: list[float]) -> dict:
    xs = sorted(xs)
    if not xs:
        return {"p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    return {"p50": xs[len(xs) // 2], "p99": xs[min(len(xs) - 1, math.ceil(0.99 * len(xs)) - 1)], "max": xs[-1]}


def chain_components(trace_dir: str, chain: str = "high", warmup_ns: int = 0) -> dict:
    """Where a chain's response time goes, from the dispatch traces of its publisher and
    subscriber processes (``<chain>_pub.jsonl``, ``<chain>_sub.jsonl``; times of every instance
    relative to its own release r, so the two processes' clocks need no pairing):
    ``pub_start`` S1 − r (the timer's release delay), ``pub_done`` F1 − r (the message is
    published at F1), ``sub_start`` S2 − r (the message has crossed DDS and the kernel path and
    the subscriber's executor dispatches it), ``sub_wall`` F2 − S2 (the subscriber's execution,
    preemptions included), ``response`` F2 − r. Each as {p50, p99, max} in ms."""
    def records(proc: str, cb: str) -> list[dict]:
        out = []
        path = Path(trace_dir) / f"{proc}.jsonl"
        if not path.is_file():
            return out
        for line in path.read_text().splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("callback") == cb and d.get("release", -1) >= 0 and d["start"] >= warmup_ns:
                out.append(d)
        return out
    pub, sub = records(f"{chain}_pub", f"{chain}_pub"), records(f"{chain}_sub", f"{chain}_sub")
    ms = 1e6
    return {"pub_start": _quantiles([(d["start"] - d["release"]) / ms for d in pub]),
            "pub_done": _quantiles([(d["finish"] - d["release"]) / ms for d in pub]),
            "sub_start": _quantiles([(d["start"] - d["release"]) / ms for d in sub]),
            "sub_wall": _quantiles([(d["finish"] - d["start"]) / ms for d in sub]),
            "response": _quantiles([(d["finish"] - d["release"]) / ms for d in sub])}


def _run_config(model_path: str, config: str, duration_ns: int, flood, server, warmup_ns: int,
                hogs: int = 0, trace_dir: str | None = None, probe=None, rx_priority: int | None = None,
                threads: bool = False, stock_executor: str = STOCK_EXECUTOR) -> dict:
    """One run of the model in configuration ``config`` (crosslayer.stacks), with ``hogs``
    CPU-bound processes per CPU and the platform ``probe`` beside it; ``threads``: record the
    threads' policies mid-run (session.run_on_hosts ``probe``); ``stock_executor``: rclcpp's
    executor of the stock configurations (chainrt.stock's name)."""
    import contextlib
    kw = dict(warmup_ns=warmup_ns, trace_dir=trace_dir, flood=flood, probe=threads,
              **run_arguments(STACKS[config], server=server, rx_priority=rx_priority, stock_executor=stock_executor))
    with CpuHogs(hogs) if hogs else contextlib.nullcontext(), probe or contextlib.nullcontext():
        return session.run_on_hosts(model_path, duration_ns, **kw)


def _keep_raw(probe, trace_dir: Path, dest: Path) -> None:
    """The run's probe blackouts and the high chain's traces, for re-analysis later."""
    import shutil
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "blackouts.json").write_text(json.dumps({"period_ns": probe.period_ns,
                                                     "cpus": {str(c): iv for c, iv in probe.blackouts.items()}}))
    for f in Path(trace_dir).glob("high_*"):
        shutil.copy(f, dest / f.name)


# the CPU of each host's real-time core in experiment (a) (two_chain_model: A core 0, B core 1)
PLATFORM_CPU = {"A": 0, "B": 1}


def process_start(trace_dir: str, process: str) -> int:
    """The CLOCK_MONOTONIC start (ns) of a process of the run, from the ``.start`` file it
    writes beside its trace. Raises OSError / ValueError / IndexError when there is none."""
    return int((Path(trace_dir) / f"{process}.jsonl.start").read_text().split()[0])


def chain_instances(trace_dir: str, chain: str, warmup_ns: int = 0) -> list[tuple[int, int]]:
    """(release, finish) on CLOCK_MONOTONIC (ns) of every instance of ``chain`` dispatched after
    the warm-up, from the trace of its last callback ``<chain>_sub`` (process ``<chain>_sub``):
    the release is the chain's, carried with the message; aligned through the process's
    ``.start``. Raises OSError / ValueError / IndexError when the start is missing; no trace: []."""
    start = process_start(trace_dir, f"{chain}_sub")
    path = Path(trace_dir) / f"{chain}_sub.jsonl"
    out = []
    for line in (path.read_text().splitlines() if path.is_file() else []):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("callback") != f"{chain}_sub" or d.get("release", -1) < 0 or d["start"] < warmup_ns:
            continue
        out.append((start + d["release"], start + d["finish"]))
    return out


def platform_columns(probe, trace_dir: str, warmup_ns: int, duration_ns: int, widened: bool = False) -> dict:
    """What the platform probe saw during the measured part of a run, as CSV columns:
    per CPU the largest and the total blackout, the blackout curve of the hosts
    (``plat_s_{window µs}us_ns``, ns at each window of ``platform.CURVE_WINDOWS_MS``: the most
    blackout of any probed CPU in any window of that length, plus the probe's own time — both
    namespace hosts run on this machine's CPUs; absent when the probe's own CPU time could not be
    read or it dropped records), and the high chain's hop with the blackouts inside each
    instance taken out (``hi_hop_destalled_max_ms``: the largest response − work − blackout time
    inside [release, finish] of any instance; the fit of C^R under the measured platform). Times
    are aligned through the ``.start`` file each process writes beside its trace (its start on
    CLOCK_MONOTONIC). ``widened``: the same from the blackouts widened by the probe's period
    (platform.widen), columns ``platw_*`` and ``hi_hopw_destalled_max_ms``."""
    try:
        begin = process_start(trace_dir, "high_pub") + warmup_ns
    except (OSError, ValueError, IndexError):
        return {}
    end = begin + duration_ns
    cols: dict = {}
    both = []
    pre, hop_key = ("platw", "hi_hopw_destalled_max_ms") if widened else ("plat", "hi_hop_destalled_max_ms")
    def measured(iv):
        return plat.clip(plat.widen(iv, probe.period_ns) if widened else iv, begin, end)
    for host, cpu in PLATFORM_CPU.items():
        iv = measured(probe.blackouts.get(cpu, []))
        both += iv
        cols[f"{pre}_stall_max{cpu}_ms"] = max((e - b for b, e in iv), default=0) / 1e6
        cols[f"{pre}_stall_total{cpu}_ms"] = sum(e - b for b, e in iv) / 1e6
    cost = plat.probe_cost(probe)
    if cost is not None and not probe.dropped:
        for w, x in plat.curve([measured(iv) for iv in probe.blackouts.values()], probe.period_ns, cost):
            cols[f"{pre}_s_{w // 1000}us_ns"] = x
    both = plat.merge(both)
    try:
        inst = chain_instances(trace_dir, "high", warmup_ns)
    except (OSError, ValueError, IndexError):
        return {}
    hops = [(f - r - plat.overlap(both, r, f)) / 1e6 - HIGH_WORK_MS for r, f in inst]
    cols[hop_key] = max(hops) if hops else float("nan")
    return cols


def two_chains(out_dir: str = "out/cros_rt_two_chains", runs: int = 3, duration_s: float = 10.0,
               rate_mbps: float = 60.0, loads: tuple[str, ...] = ("paper", "pinned"),
               configs: tuple[str, ...] = tuple(CONFIGS), size: str = "4KiB", plot: bool = True,
               overload_mbps: float = 1000.0, hogs: int = 2, server: tuple[int, int] | None = None,
               platform_probe: bool = True, flood_size: int = 1400, log=print) -> dict:
    """Experiment (a). Writes ``runs.csv`` (one row per run), ``summary.json`` and ``two_chains.png``
    into out_dir and returns the summary. ``hogs``: CPU-bound processes per CPU of the ``busy``
    load. Runs alternate between the configurations, so each run number sees every
    configuration under the same machine conditions (the per-run ratios pair them).
    ``server``: the non-RT server's (budget, period) in ns for ``full-server``; default: the
    largest budget per 10 ms that ``cros-rt`` admits without communication costs
    (:func:`server_budget`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="chainrt-crosrt-") as tmp:
        model_path = Path(tmp) / "two_chains.yaml"
        model_path.write_text(two_chain_model(size))
        if "full-server" in configs and server is None:
            server = server_budget(size=size)
        if server:
            log(f"non-RT server from the cros-rt analysis: budget {server[0] / 1e6:g} ms every {server[1] / 1e6:g} ms")
        for load in loads:
            rate = overload_mbps if load in OVERLOAD_LOADS else rate_mbps
            flood = (Flood("A", "B", rate_mbps=rate, size=flood_size,
                           cpu=0 if load in ("pinned",) + OVERLOAD_LOADS else None,
                           rx_cpu=PLATFORM_CPU["B"] if load in RX_PINNED_LOADS else None) if rate > 0 else None)
            for run in range(runs):
                for config in configs:
                    t0 = time.monotonic()
                    load1 = os.getloadavg()[0]
                    steal0 = _steal_ms()
                    tdir = Path(tmp) / f"trace_{load}_{run}_{config}"
                    probe = PlatformProbe(duration_s + 60) if platform_probe else None
                    res = _run_config(str(model_path), config, int(duration_s * 1e9), flood, server, 2_000_000_000,
                                      hogs=hogs if load in HOG_LOADS else 0, trace_dir=str(tdir),
                                      probe=probe)
                    plat_cols = {}
                    if probe:
                        for w in (False, True):
                            plat_cols.update(platform_columns(probe, str(tdir), 2_000_000_000, int(duration_s * 1e9), w))
                        _keep_raw(probe, tdir, out / "raw" / f"{load}_{run}_{config}")
                    comp = chain_components(str(tdir), "high", warmup_ns=2_000_000_000)
                    hi, lo = res["chains"]["high"], res["chains"]["low"]
                    fl = res.get("flood", {})
                    row = dict(load=load, run=run, config=config, loadavg=round(load1, 2),
                               hogs_per_cpu=hogs if load in HOG_LOADS else 0, flood_mbps=rate,
                               flood_size=flood_size,
                               steal_ms=round(_steal_ms() - steal0, 1),
                               server_budget_ms=server[0] / 1e6 if server and config == "full-server" else 0.0,
                               server_period_ms=server[1] / 1e6 if server and config == "full-server" else 0.0,
                               hi_wcrt_ms=hi["wcrt_ns"] / 1e6, hi_bcrt_ms=hi["bcrt_ns"] / 1e6,
                               hi_p99_ms=hi["p99_ns"] / 1e6, hi_mean_ms=hi["mean_ns"] / 1e6,
                               hi_p99_excess_ms=(hi["p99_ns"] - hi["bcrt_ns"]) / 1e6,
                               hi_jitter_ms=(hi["wcrt_ns"] - hi["bcrt_ns"]) / 1e6, hi_instances=hi["instances"],
                               hi_misses=hi["deadline_misses"],
                               lo_wcrt_ms=lo["wcrt_ns"] / 1e6, lo_bcrt_ms=lo["bcrt_ns"] / 1e6,
                               lo_p99_ms=lo["p99_ns"] / 1e6, lo_instances=lo["instances"],
                               flood_sent=fl.get("sent", 0), flood_received=fl.get("received", 0),
                               pdr=fl.get("delivery_ratio", float("nan")),
                               rt_class_packets=sum(s.get("classes", [0, 0])[1] for s in res.get("selector", [])),
                               nonrt_class_packets=sum(s.get("classes", [0])[0] for s in res.get("selector", [])),
                               **{f"hi_{k}_{q}_ms": v[q] for k, v in comp.items() if k != "response"
                                  for q in ("p99", "max")}, **plat_cols)
                    rows.append(row)
                    log(f"{load:>6} run {run + 1}/{runs} {config:<11} high p99 {row['hi_p99_ms']:7.2f} ms, "
                        f"WCRT-BCRT {row['hi_jitter_ms']:7.2f} ms, n={hi['instances']}; low WCRT {row['lo_wcrt_ms']:7.2f} ms; "
                        f"flood PDR {row['pdr']:.3f}; high p99/max of release delay {comp['pub_start']['p99']:.2f}/"
                        f"{comp['pub_start']['max']:.2f}, arrival {comp['sub_start']['p99']:.2f}/{comp['sub_start']['max']:.2f}, "
                        f"subscriber {comp['sub_wall']['p99']:.2f}/{comp['sub_wall']['max']:.2f} ms "
                        f"({time.monotonic() - t0:.0f} s)")
    with open(out / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), restval="")
        w.writeheader()
        w.writerows(rows)
    summary = summarize(rows, size)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if plot:
        plot_two_chains(rows, out / "two_chains.png", summary)
    return summary


def summarize_csv(csv_path: str, out_dir: str, size: str = "4KiB", plot: bool = True) -> dict:
    """Summary and plot of the rows of an earlier :func:`two_chains` (its ``runs.csv``)."""
    with cliargs.open_text(csv_path) as f:
        rows = [{k: (v if k in ("load", "config") else float(v) if v != "" else float("nan")) for k, v in r.items()}
                for r in csv.DictReader(f)]
    if not rows:
        raise ValueError("no rows")
    need = {"load", "run", "config", "hi_p99_ms", "hi_p99_excess_ms", "hi_jitter_ms", "hi_wcrt_ms", "lo_wcrt_ms",
            "pdr", "hi_misses"}
    missing = sorted(need - set(rows[0]))
    if missing:
        raise ValueError(f"not a runs.csv of this experiment (missing columns: {', '.join(missing)})")
    for r in rows:
        r["run"] = int(r["run"])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(rows, size)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if plot:
        plot_two_chains(rows, out / "two_chains.png", summary)
    return summary


def _stats(xs):
    xs = [x for x in xs if x == x]
    if not xs:
        return None
    return {"mean": statistics.fmean(xs), "min": min(xs), "max": max(xs),
            "stdev": statistics.stdev(xs) if len(xs) > 1 else 0.0, "n": len(xs)}


def summarize(rows: list[dict], size: str = "4KiB") -> dict:
    """Per load and configuration: mean/min/max/stdev over runs of the high chain's p99 and
    WCRT−BCRT, the low chain's WCRT, the flood's delivery ratio; the ratios of the means and the
    same ratios paired per run number; and :func:`cros_rt_check` (bounds fitted on some runs,
    checked on the others)."""
    out: dict = {"loads": {}}
    for load in sorted({r["load"] for r in rows}):
        per = {}
        for config in CONFIGS:
            rs = [r for r in rows if r["load"] == load and r["config"] == config]
            if not rs:
                continue
            per[config] = {k: _stats([r[k] for r in rs]) for k in
                           ("hi_p99_ms", "hi_p99_excess_ms", "hi_jitter_ms", "hi_wcrt_ms", "lo_wcrt_ms",
                            "pdr", "hi_misses")}
        ratios = {}
        if "vanilla" in per and "full" in per:
            ratios["p99_vanilla_over_full"] = per["vanilla"]["hi_p99_ms"]["mean"] / max(per["full"]["hi_p99_ms"]["mean"], 1e-9)
        if "vanilla" in per and "full" in per:
            ratios["p99_excess_vanilla_over_full"] = (per["vanilla"]["hi_p99_excess_ms"]["mean"]
                                                      / max(per["full"]["hi_p99_excess_ms"]["mean"], 1e-9))
            ratios["jitter_vanilla_over_full"] = (per["vanilla"]["hi_jitter_ms"]["mean"]
                                                  / max(per["full"]["hi_jitter_ms"]["mean"], 1e-9))
        if "app-dds" in per and "full" in per:
            ratios["p99_appdds_over_full"] = per["app-dds"]["hi_p99_ms"]["mean"] / max(per["full"]["hi_p99_ms"]["mean"], 1e-9)
            ratios["jitter_appdds_over_full"] = per["app-dds"]["hi_jitter_ms"]["mean"] / max(per["full"]["hi_jitter_ms"]["mean"], 1e-9)
        if "vanilla" in per and "full-server" in per and per["vanilla"]["pdr"] and per["full-server"]["pdr"]:
            ratios["pdr_server_over_vanilla"] = per["full-server"]["pdr"]["mean"] / max(per["vanilla"]["pdr"]["mean"], 1e-9)
        if "vanilla" in per and "full" in per and per["vanilla"]["pdr"] and per["full"]["pdr"]:
            ratios["pdr_full_over_vanilla"] = per["full"]["pdr"]["mean"] / max(per["vanilla"]["pdr"]["mean"], 1e-9)
        # the same ratios per run number (the configurations of one run number ran back to back)
        def paired(num, den, key="hi_p99_ms"):
            a = {r["run"]: r[key] for r in rows if r["load"] == load and r["config"] == num}
            b = {r["run"]: r[key] for r in rows if r["load"] == load and r["config"] == den}
            return _stats([a[k] / max(b[k], 1e-9) for k in a if k in b])
        per_run = {"p99_vanilla_over_full": paired("vanilla", "full"),
                   "p99_appdds_over_full": paired("app-dds", "full"),
                   "p99_vanilla_over_appdds": paired("vanilla", "app-dds"),
                   "p99_excess_vanilla_over_full": paired("vanilla", "full", "hi_p99_excess_ms")}
        loadavg = _stats([r.get("loadavg", float("nan")) for r in rows if r["load"] == load])
        out["loads"][load] = {"configs": per, "ratios": ratios,
                              "per_run_ratios": {k: v for k, v in per_run.items() if v}, "loadavg": loadavg}
    out["cros_rt"] = cros_rt_check(rows, size)
    return out


# the configurations whose scheduling the cros-rt analysis models: chain priorities in the
# executors and DDS threads (app-dds and preempt-rt: the kernel path selects no message by
# priority, so their measured costs carry its inversions; full: the kernel path is
# priority-aware, as the analysis assumes).
# full-server: full with the non-RT server, modelled (as server_budget chooses its budget) as a
# top-priority chain of budget Q every T on both hosts. vanilla (the default executor, no
# priorities) is not what cros-rt models.
MODELLED = ("preempt-rt", "app-dds", "full", "full-server")
HIGH_WORK_MS = 5.0  # the high chain's two callbacks, 2 x 2.5 ms
DEADLINE_MS = {"high": 20.0, "low": 200.0}  # two_chain_model: each chain's deadline is its period


def _finite(v):
    """v as a float, or None when absent or not a number (JSON has no NaN)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def cros_rt_check(rows: list[dict], size: str = "4KiB") -> dict:
    """The ``cros-rt`` bounds of experiment (a) with fitted communication costs, checked against
    runs the fit never saw. Per load and per modelled configuration: C^R (the per-message cost of
    a remote hop; the chains have no intra-process or same-host hop, so C^I and C^L do not occur)
    is fitted from the configuration's own fit runs (even run numbers) as the largest measured
    high-chain response beyond its callbacks' execution (everything that is not the callbacks'
    work: the timer's release delay, DDS, the kernel path, wake-ups — charged to the hop, as the
    paper's decomposition does); the bounds of both chains are then compared with every response
    time of the check runs (odd run numbers) and, for reference, of all runs."""
    size_b = _bytes(size)
    out: dict = {"fit": "C^R = max over the fit runs (even run numbers) of the high chain's WCRT minus its "
                        f"{HIGH_WORK_MS:g} ms of work, per load and configuration; checked on the odd runs",
                 "loads": {}}
    server = None
    for load in sorted({r["load"] for r in rows}):
        per = {}
        for config in MODELLED:
            rs = [r for r in rows if r["load"] == load and r["config"] == config]
            fit = [r for r in rs if int(r["run"]) % 2 == 0]
            check = [r for r in rs if int(r["run"]) % 2 == 1]
            if not fit:
                continue
            lat_ms = max(max(r["hi_wcrt_ms"] - HIGH_WORK_MS, 0.0) for r in fit + [{"hi_wcrt_ms": HIGH_WORK_MS + 1e-6}])
            meas = [{"kind": "remote", "size": size_b, "latency_ns": lat_ms * 1e6}]
            if config == "full-server":
                # the budget the runs used: recorded per row, else two_chains' default
                q = {(_finite(r.get("server_budget_ms")), _finite(r.get("server_period_ms"))) for r in rs}
                if len(q) > 1:
                    raise ValueError(f"load {load}: full-server runs with different server budgets")
                qb, qt = q.pop()
                server = (int(qb * 1e6), int(qt * 1e6)) if qb and qt else server_budget(size=size)
            bounds, res = cros_rt_bounds(two_chain_model(size, measurements=meas,
                                                         server=server if config == "full-server" else None))
            bound_ms = {k: (v / 1e6 if v else None) for k, v in bounds.items() if k in ("high", "low")}

            def worst(rs_):
                return {"high": max(r["hi_wcrt_ms"] for r in rs_), "low": max(r["lo_wcrt_ms"] for r in rs_)} if rs_ else None

            def holds(rs_):
                if not rs_:
                    return None
                w = worst(rs_)
                return all(bound_ms.get(k) is not None and bound_ms[k] >= w[k] for k in w)

            # the check runs' responses above their bound, with what the run saw of the platform
            violations = [{"run": int(r["run"]), "chain": chain, "measured_ms": r[key], "bound_ms": bound_ms.get(chain),
                           "steal_ms": _finite(r.get("steal_ms")),
                           "release_delay_max_ms": _finite(r.get("hi_pub_start_max_ms")),
                           "loadavg": _finite(r.get("loadavg"))}
                          for r in check for chain, key in (("high", "hi_wcrt_ms"), ("low", "lo_wcrt_ms"))
                          if bound_ms.get(chain) is None or r[key] > bound_ms[chain]]
            plat = platform_check(rs, fit, check, size, server if config == "full-server" else None)
            per[config] = {"fit_runs": sorted(int(r["run"]) for r in fit),
                           "check_runs": sorted(int(r["run"]) for r in check),
                           "fitted_remote_ms": lat_ms,
                           "bound_ms": bound_ms,
                           "reasons": {k: c.get("reason", "") for k, c in res["chains"].items()
                                       if k in ("high", "low") and c.get("reason")},
                           "max_fit_ms": worst(fit), "max_check_ms": worst(check),
                           "holds_on_check_runs": holds(check), "holds_on_all_runs": holds(rs),
                           "check_violations": violations}
            if plat:
                per[config]["platform"] = plat
            platw = platform_check(rs, fit, check, size, server if config == "full-server" else None, widened=True)
            if platw:
                per[config]["platform_widened"] = platw
        if per:
            out["loads"][load] = per
    return out


def curve_points(row: dict, pre: str = "plat") -> list[tuple[int, int]]:
    """The hosts' blackout curve [(window ns, max ns)] of a run from its columns
    ``<pre>_s_<window µs>us_ns`` (platform.CURVE_WINDOWS_MS); [] when the row has none."""
    points = []
    for w_ms in CURVE_WINDOWS_MS:
        w = int(w_ms * 1_000_000)
        x = _finite(row.get(f"{pre}_s_{w // 1000}us_ns"))
        if x is None:
            return []
        points.append((w, int(x)))
    return points


def verdict(bound_ms: float | None, measured_ms: float, deadline_ms: float) -> str:
    """A bound against a run's response: "covered" (a finite bound at or above it), "beaten" (a
    finite bound below it: unsound), "miss" (no finite bound, and the run did miss the
    deadline: the analysis was right), "pessimistic" (no finite bound, the deadline was met)."""
    if bound_ms is not None:
        return "covered" if bound_ms >= measured_ms else "beaten"
    return "miss" if measured_ms > deadline_ms else "pessimistic"


def platform_bounds(remote_ms: float, size: str, row: dict, server: tuple[int, int] | None,
                    pre: str = "plat") -> dict:
    """The ``cros-rt`` bounds {chain: ms or None} of one run with the measured platform.

    Deviation from CROS-RT (whose model has no platform; reason: this VM's CPUs disappear for up
    to 8 ms and more — hypervisor steal, long non-preemptible kernel sections — so no bound
    that assumes a dedicated CPU covers every run): the blackouts the platform probe measured on
    this machine's CPUs during this run (``platform_columns``) are the hosts' blackout curve
    (model ``hosts[].blackout``, ``crosslayer/platform.py``), which ``cros-rt`` charges on every
    core the chain can be delayed on (docs/analysis.md, "The platform term"). The bound is the
    response against the supply the platform gave in that run. A run without curve columns
    gives {}."""
    points = curve_points(row, pre)
    if not points:
        return {}
    meas = [{"kind": "remote", "size": _bytes(size), "latency_ns": remote_ms * 1e6}]
    bounds, _ = cros_rt_bounds(two_chain_model(size, measurements=meas, server=server, blackout=points))
    return {chain: (bounds[chain] / 1e6 if bounds.get(chain) else None) for chain in ("high", "low")}


def platform_check(rs: list[dict], fit: list[dict], check: list[dict], size: str,
                   server: tuple[int, int] | None, widened: bool = False) -> dict:
    """The ``cros-rt`` bounds with the measured platform (:func:`platform_bounds`), checked run by
    run. C^R is fitted on the fit runs from their hops with the measured blackouts taken out
    (``hi_hop_destalled_max_ms``), so that a stall in a fit run no longer becomes the hop's
    cost; each run's bound uses that run's own platform measurement, never its chains'
    responses. {} when the rows carry no platform curve. ``widened``: from the widened blackouts
    (``platw_*`` columns)."""
    pre, hop_key = ("platw", "hi_hopw_destalled_max_ms") if widened else ("plat", "hi_hop_destalled_max_ms")
    hops = [_finite(r.get(hop_key)) for r in fit]
    if not fit or any(h is None for h in hops):
        return {}
    remote_ms = max(0.0, max(hops))
    runs = []
    for r in sorted(rs, key=lambda r: int(r["run"])):
        b = platform_bounds(remote_ms, size, r, server, pre)
        if not b:
            return {}
        meas = {"high": r["hi_wcrt_ms"], "low": r["lo_wcrt_ms"]}
        v = {k: verdict(b[k], meas[k], DEADLINE_MS[k]) for k in meas}
        runs.append({"run": int(r["run"]), "role": "check" if int(r["run"]) % 2 else "fit",
                     "bound_ms": b, "measured_ms": meas, "verdict": v,
                     "stall_max_ms": max(_finite(r.get(f"{pre}_stall_max{c}_ms")) or 0.0 for c in PLATFORM_CPU.values()),
                     "holds": all(b[k] is not None and b[k] >= meas[k] for k in meas)})
    chk = [x for x in runs if x["role"] == "check"]
    return {"fitted_remote_ms": remote_ms, "runs": runs,
            "check_runs_covered": sum(x["holds"] for x in chk), "check_runs": len(chk),
            "check_verdicts": {v: sum(list(x["verdict"].values()).count(v) for x in chk)
                               for v in ("covered", "beaten", "miss", "pessimistic")},
            "sound_on_all_runs": not any("beaten" in x["verdict"].values() for x in runs),
            "holds_on_check_runs": all(x["holds"] for x in chk) if chk else None,
            "holds_on_all_runs": all(x["holds"] for x in runs)}


def _bytes(size: str) -> int:
    units = {"KiB": 1024, "B": 1, "KB": 1000, "MiB": 1 << 20}
    for u in sorted(units, key=len, reverse=True):
        if size.endswith(u):
            return int(float(size[: -len(u)]) * units[u])
    return int(size)


def plot_two_chains(rows: list[dict], path: Path, summary: dict | None = None) -> None:
    """Per load: the high chain's p99, p99 − BCRT, WCRT − BCRT and the flood's delivery ratio per
    configuration (dots: runs), and both chains' WCRT per run next to the ``cros-rt`` bound
    fitted for that configuration (open: fit runs, filled: check runs; a cross at the top: no
    finite bound) and, in black, each run's bound with the platform term."""

    plt = pyplot()
    loads = sorted({r["load"] for r in rows})
    configs = [c for c in CONFIGS if any(r["config"] == c for r in rows)]
    check = (summary or {}).get("cros_rt") or cros_rt_check(rows)
    fig, axes = plt.subplots(len(loads), 5, figsize=(21, 3.6 * len(loads)), squeeze=False)
    for i, load in enumerate(loads):
        for j, (key, label) in enumerate((("hi_p99_ms", "high chain p99 (ms)"),
                                          ("hi_p99_excess_ms", "high chain p99 − BCRT (ms)"),
                                          ("hi_jitter_ms", "high chain WCRT − BCRT (ms)"),
                                          ("pdr", "non-RT packet delivery ratio"))):
            ax = axes[i][j]
            for k, c in enumerate(configs):
                ys = [r[key] for r in rows if r["load"] == load and r["config"] == c]
                ax.scatter([k] * len(ys), ys, s=18, alpha=0.7)
                if ys:
                    ax.bar(k, statistics.fmean(ys), alpha=0.3)
            ax.set_xticks(range(len(configs)), configs, rotation=15)
            if key != "pdr":
                ax.set_yscale("log")
            ax.set_title(f"{label} — load '{load}'", fontsize=9)
            ax.grid(alpha=0.3)
        ax = axes[i][4]
        per = check.get("loads", {}).get(load, {})
        top = max([r["lo_wcrt_ms"] for r in rows if r["load"] == load] + [1.0]) * 1.5
        for k, c in enumerate(configs):
            for chain, key, colour in (("high", "hi_wcrt_ms", "C0"), ("low", "lo_wcrt_ms", "C1")):
                x = k + (-0.15 if chain == "high" else 0.15)
                for r in rows:
                    if r["load"] == load and r["config"] == c:
                        fitted = c in per and int(r["run"]) in per[c]["fit_runs"]
                        ax.scatter([x], [r[key]], s=18, edgecolors=colour,
                                   facecolors="none" if fitted else colour)
                if c in per:
                    b = per[c]["bound_ms"].get(chain)
                    if b is not None:
                        ax.hlines(b, x - 0.12, x + 0.12, colors=colour, linewidth=2.5)
                    else:
                        ax.scatter([x], [top], marker="x", color=colour)
                    # each run's bound with the platform term: a dash beside its point
                    for pr in per[c].get("platform", {}).get("runs", []):
                        pb = pr["bound_ms"].get(chain)
                        ax.scatter([x + 0.07], [pb if pb is not None else top], marker="_" if pb is not None else "x",
                                   s=40, color="k", linewidths=1)
        ax.set_xticks(range(len(configs)), configs, rotation=15)
        ax.set_yscale("log")
        ax.set_title(f"WCRT/run, cros-rt bound (bar, x: none) — '{load}'\nblue high, orange low; open: fit runs; "
                     "black: each run's bound with the platform term", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("CROS-RT two chains across two namespace hosts under a non-RT UDP flood (dots: runs, bars: mean)")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
