"""What the LaME experiments' real-ROS 2 runs share: holding the machine's measurement lock for
one run at a time, the load average around a run, per-instance chain response times from a
``chainrt-run --trace`` dispatch trace, the controller's activations (paper Fig. 8), and the
figure of response time over time with the deadlines drawn (paper Fig. 5-7 show the same
quantities as summaries).

The real runs' configurations (REAL_CONFIGS): the baseline is stock rclcpp's
MultiThreadedExecutor, one thread per core, running the model's nodes as generated rclcpp nodes
(chainrt.stock, ``chainrt_rclcpp_nodes``); LaME runs on chainrt's runtime (``chainrt-run``) and,
from the same generated nodes' binary as the baseline, on the rclcpp ChainExecutor; chainrt's
emulation of the default executor (policy ros-default on chainrt's runtime) runs beside them as
a fidelity column. Every configuration's figures come from the same kind of record — every
callback execution, traced by the executor (chainrt-run) or by the generated callbacks
themselves — and every run is accounted (chainrt.accounting.after_run) with the platform probe
beside it.

A chain instance's response time is taken where the runtime's monitoring takes it: the dispatch
of the chain's last callback carries the release stamp of the chain's first callback (the stamp
travels with the messages), response = finish - that release. Trace times are ns since the run's
start (warm-up included).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import os
import shutil
import stat
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

from .. import accounting, runtime, stock
from ..crosslayer.kernel import KernelPathUnavailable
from ..crosslayer.platform import PlatformProbe
from ..figures import pyplot, save_figure
from ..model import load_model

# The real runs' configurations, as the reports name them (module docstring).
REAL_CONFIGS = {
    "default": f"{stock.LABELS['multi']}, one thread per core",
    "lame": "LaME, chainrt runtime",
    "lame_rclcpp": "LaME, rclcpp ChainExecutor",
    "emulated": "ROS 2 default as chainrt emulates it (ros-default)",
}
# which runs the LaME plan (the others run the baseline's document)
LAME_CONFIGS = ("lame", "lame_rclcpp")
# which run the generated rclcpp nodes (chainrt_rclcpp_nodes), with which of its executors
GENERATED = {"default": "multi", "lame_rclcpp": "chainrt"}


def parse_configs(text: str, allowed=tuple(REAL_CONFIGS)) -> list[str]:
    """'default,lame' -> the configurations, in that order (ValueError naming the known ones)."""
    configs = [c.strip() for c in str(text).split(",") if c.strip()]
    if not configs or any(c not in allowed for c in configs) or len(set(configs)) != len(configs):
        raise ValueError(f"--configs takes a comma-separated list of {', '.join(allowed)}")
    return configs


@contextlib.contextmanager
def measurement_lock(path: str | None):
    """Holds an exclusive flock(2) on `path` (the machine-wide measurement lock that `flock PATH
    cmd` takes too) for the duration of the block; no lock when `path` is empty."""
    if not path:
        yield
        return
    # O_NONBLOCK: a FIFO put in the file's place since the command line was checked is refused
    # at once instead of waiting for a reader
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file (a lock file must be one)", path)
    with os.fdopen(fd, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def loadavg() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty when /proc is not readable)."""
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return []


def measured_run(path: str, duration_ns: int, lock: str | None, warmup_ns: int,
                 probe: bool = False, bounds: dict | None = None) -> tuple[dict, dict]:
    """One ``chainrt run`` of the model file `path` holding the measurement lock `lock`: its
    report and {"load_before", "load_after" (load averages), "steal_percent"} around it. With
    `probe`, the platform probe (crosslayer.platform: a SCHED_FIFO 99 thread per CPU, above
    everything of the model) runs beside it and the record adds "longest_blackout_ms", the
    longest time any CPU was not there for it during the run (None where the probe cannot run,
    "probe_error" saying why). With ``bounds`` ({chain: bound ns}) the report adds "accounting"
    (chainrt.accounting.after_run: every instance above its bound classified, platform-free
    statistics), the processes tracing their dispatches. Raises what chainrt.runtime.run_model
    raises (its one-line errors)."""
    with measurement_lock(lock), tempfile.TemporaryDirectory(prefix="chainrt-trace-") as traces:
        with sampled(probe, (duration_ns + warmup_ns) / 1e9 + 5) as m:
            r = runtime.run_model(path, duration_ns, warmup_ns=warmup_ns,
                                  trace_dir=traces if bounds is not None else None)
        if bounds is not None:
            r["accounting"] = accounting.after_run(load_model(path), traces, m["probe"], m["note"], bounds,
                                                   {n: "analysis" for n in bounds}, set(r.get("model_tids", [])),
                                                   warmup_ns)
    return r, m["load"]


@contextlib.contextmanager
def sampled(probe: bool, seconds: float):
    """Around one run: the load averages and the hypervisor steal, and with `probe` the
    platform probe beside it (platform_probe, with its attribution). Yields a dict that has,
    after the block, "load" (measured_run's record), "probe" (the PlatformProbe once it ended
    well, else None) and "note" (why the platform was not measured, else None)."""
    m: dict = {}
    load0, j0 = loadavg(), cpu_jiffies()
    platform: dict = {}
    held: dict = {}
    with platform_probe(seconds, platform, held) if probe else contextlib.nullcontext():
        yield m
    m["load"] = {"load_before": load0, "load_after": loadavg(), "steal_percent": steal_percent(j0, cpu_jiffies()),
                 **platform}
    m["probe"] = held.get("probe")
    m["note"] = None if m["probe"] else \
        f"platform not measured: {platform.get('probe_error') or 'the probe was not asked for'}"


@contextlib.contextmanager
def platform_probe(seconds: float, out: dict, held: dict | None = None):
    """The platform probe beside the block: `out` gets "longest_blackout_ms" (the longest time a
    CPU was not there for the probe's SCHED_FIFO 99 thread), or None and "probe_error" where the
    probe cannot start or failed. The block runs once either way. With `held`, the probe runs
    with its attribution and ``held["probe"]`` is the PlatformProbe once it ended well."""
    pp = PlatformProbe(seconds, attribute=held is not None)
    try:
        pp.__enter__()
    except KernelPathUnavailable as e:
        out.update(longest_blackout_ms=None, probe_error=str(e))
        yield
        return
    try:
        yield
    finally:
        try:
            pp.__exit__(None, None, None)
            longest = max((b - a for iv in pp.blackouts.values() for a, b in iv), default=0)
            out.update(longest_blackout_ms=round(longest / 1e6, 3))
            if held is not None:
                held["probe"] = pp
        except KernelPathUnavailable as e:
            out.update(longest_blackout_ms=None, probe_error=str(e))


def load_text(load: dict) -> str:
    """'1-min load [a] -> [b], steal s %' of a measured_run() load record, and the longest
    platform blackout where the probe ran."""
    text = f"1-min load {load['load_before'][:1]} -> {load['load_after'][:1]}, steal {load['steal_percent']} %"
    if load.get("longest_blackout_ms") is not None:
        text += f", longest platform blackout {load['longest_blackout_ms']:.2f} ms"
    elif load.get("probe_error"):
        text += f" (no platform probe: {load['probe_error']})"
    return text


def report_tail(out: str, name: str, loads: list[dict], run_label: Callable[[dict], str],
                plot: Callable[[str], None] | None) -> None:
    """The end of a measured experiment's report: each run's load_text() after its label
    ``run_label(load)``, then the figure ``<out>/<name>.png`` drawn by ``plot(path)`` (none when
    `plot` is None) and the files the experiment wrote (``<name>.csv`` and ``<name>.json``)."""
    for x in loads:
        print(f"  {run_label(x)}: {load_text(x)}")
    if plot is not None:
        path = os.path.join(out, f"{name}.png")
        plot(path)
        print(f"  wrote {path}")
    print(f"  wrote {os.path.join(out, f'{name}.csv')} and {name}.json")


def cpu_jiffies() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs from /proc/stat ((0, 0) when not readable): the share
    of time the hypervisor ran something else while this VM wanted to run, over an interval, is
    the difference of two readings."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (v[7] if len(v) > 7 else 0), sum(v[:8])
    except (OSError, ValueError, IndexError):
        return 0, 0


def steal_percent(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """Hypervisor steal between two cpu_jiffies() readings, in % of the CPU time (None: unknown)."""
    total = after[1] - before[1]
    return round(100.0 * (after[0] - before[0]) / total, 2) if total > 0 else None


def budgets(classes: list[dict]) -> str:
    """"rt0 68.0 %, rt1 82.3 %": each thread class's budget as a share of its period."""
    return ", ".join(f"{c['name']} {100 * c['runtime_ns'] / c['period_ns']:.1f} %" for c in classes)


def demoted_at(acts: list[dict]):
    """From a run's controller activations: a function (chain, t in s) -> whether the chain was
    demoted (best effort) by the plan in force at t. Demotions name linear chains ("<chain>#k"
    of a split chain, with ": reason"); a chain counts as demoted when any of its paths is."""
    steps = []
    for a in sorted((a for a in acts if a["decision"] == "reallocated"), key=lambda a: a["at_s"]):
        steps.append((a["at_s"], {d.split(":")[0].split("#")[0] for d in a.get("demoted", [])}))

    def demoted(chain: str, t: float) -> bool:
        now = set()
        for at, names in steps:
            if at > t:
                break
            now = names
        return chain in now

    return demoted


def activations(report: dict) -> list[dict]:
    """Every activation of LaME's controller in a run report: time, trigger, decision, its own
    thread-CPU time deciding and applying (paper Fig. 8), number of analyses, errors."""
    return [{"at_s": a["at_ns"] / 1e9, "trigger": a["trigger"], "decision": a["decision"],
             "decide_cpu_ms": a["decide_cpu_ms"], "apply_cpu_ms": a["apply_cpu_ms"],
             "analyses": a.get("analyses", 0), "classes": a.get("classes", []), "demoted": a.get("demoted", []),
             "errors": a.get("errors", []), "kind": a.get("kind", ""), "chains": a.get("chains", []),
             "why": a.get("why", "")}
            for a in report.get("lame_controller", [])]


def activation_cost(acts_per_run: list[list[dict]]) -> dict:
    """Median, p90 and max of the controller's CPU time per activation (decide + apply) over all
    runs, separately for activations that kept the plan and those that re-planned."""
    out = {}
    for key, pick in (("all", lambda a: True), ("holds", lambda a: a["decision"] == "holds"),
                      ("reallocated", lambda a: a["decision"] != "holds")):
        v = sorted(a["decide_cpu_ms"] + a["apply_cpu_ms"] for acts in acts_per_run for a in acts if pick(a))
        if v:
            out[key] = {"n": len(v), "median_ms": statistics.median(v), "p90_ms": v[min(len(v) - 1, int(0.9 * len(v)))],
                        "max_ms": v[-1], "min_ms": v[0]}
    return out


def plot_responses(series: dict[str, dict[str, list[tuple[float, float]]]], deadlines_ms: dict[str, float],
                   groups: list[tuple[str, list[str]]], path: str, title: str,
                   vlines: dict[str, list[tuple[float, str]]] | None = None, labels: dict[str, str] | None = None) -> None:
    """Response time over time: one row per configuration (keys of `series`), one column per
    chain group (`groups`: (title, chains)); each chain's instances as dots, its deadline as a
    dashed line of the same colour; `vlines[config]`: (time, label) marks (throttle switch,
    controller re-plans)."""

    plt = pyplot()

    configs = list(series)
    import textwrap

    width = max(10.0, 6.5 * len(groups))
    fig, axes = plt.subplots(len(configs), len(groups), figsize=(width, 3.3 * len(configs)),
                             squeeze=False, sharex=True)
    cmap = plt.get_cmap("tab20")
    for i, config in enumerate(configs):
        for j, (gtitle, chains) in enumerate(groups):
            ax = axes[i][j]
            for k, chain in enumerate(chains):
                pts = series[config].get(chain, [])
                color = cmap(k % 20)
                short = chain.split("_")[0] + ("*" if chain.endswith("_dup") else "")
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ".", ms=2, color=color, label=short)
                else:
                    ax.plot([], [], ".", color=color, label=short + " (none completed)")
                ax.axhline(deadlines_ms[chain], color=color, ls="--", lw=0.8)
            for t, text in (vlines or {}).get(config, []):
                ax.axvline(t, color="k", ls=":" if text != "switch" else "--", lw=0.8)
            ax.set_yscale("log")
            ax.set_ylabel("response time [ms]")
            ax.set_title(f"{(labels or {}).get(config, config)}: {gtitle}", fontsize=9)
            ax.legend(fontsize=6, ncol=2, loc="upper left", markerscale=3)
            if i == len(configs) - 1:
                ax.set_xlabel("chain release [s since start]")
    fig.suptitle(textwrap.fill(title, int(width * 14)), fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def plot_activations(acts_per_run: list[list[dict]], path: str, title: str, switch_s: float | None = None) -> None:
    """The controller's own thread-CPU time per activation over the run (paper Fig. 8a), deciding
    and applying stacked, one marker per run; re-planning activations filled, the others hollow."""

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(9, 3.2))
    markers = "osD^v<>"
    for k, acts in enumerate(acts_per_run):
        for replan in (False, True):
            pts = [a for a in acts if (a["decision"] != "holds") == replan]
            ax.plot([a["at_s"] for a in pts], [a["decide_cpu_ms"] + a["apply_cpu_ms"] for a in pts],
                    markers[k % len(markers)], color=f"C{k}", mfc=f"C{k}" if replan else "none", ls="",
                    label=f"run {k}, {'re-planned' if replan else 'plan held'}")
    if switch_s is not None:
        ax.axvline(switch_s, color="k", ls="--", lw=0.8)
    ax.set_xlabel("activation [s since start]")
    ax.set_ylabel("controller CPU time [ms]\n(decide + apply)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, ncol=3)
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def chain_figures(executions: list, model, zero_ns: int, since_ns: int) -> tuple[dict, dict]:
    """Per chain, from the recorded executions (chainrt.accounting.Execution): the figures the
    experiments report ({"instances", "released", "wcrt_ns", "mean_ns", "deadline_ns",
    "deadline_misses"}, instances released from ``since_ns`` on, as the simulator's summary has
    them) and every instance's (release in s since ``zero_ns``, response in ms). "released"
    counts the executions of the chain's first callback, so released - instances were lost or
    are still under way at the end."""
    chains = {c.name: list(c.callbacks) for c in model.chains}
    figures, responses = {}, {}
    for ch in model.chains:
        insts = [i for i in accounting.instances(executions, {ch.name: chains[ch.name]})[ch.name]
                 if i.release >= since_ns]
        resp = [i.response for i in insts]
        first = chains[ch.name][0]
        released = len({x.release for x in executions if x.callback == first and x.release is not None
                        and x.release >= since_ns})
        figures[ch.name] = {"instances": len(resp), "released": released, "wcrt_ns": max(resp, default=0),
                            "mean_ns": sum(resp) / len(resp) if resp else 0, "deadline_ns": ch.deadline,
                            "deadline_misses": sum(1 for r in resp if ch.deadline and r > ch.deadline)}
        responses[ch.name] = [((i.release - zero_ns) / 1e9, i.response / 1e6) for i in insts]
    return figures, responses


def per_thread(executions: list) -> list:
    """The executions with each thread as an executor of its own: the busy periods of a LaME run
    (chainrt.accounting) are its threads'. Each of LaME's thread classes here has one thread per
    core with a reservation of its own, so an RT chain's instance waits only for work on its own
    class's threads, never for the overloaded BE side's backlog (which would make every busy
    window reach back to the run's start)."""
    return [dataclasses.replace(x, executor=f"{x.executor}/{x.thread}") for x in executions]


def _launch(config: str, path: str, seconds: float, warmup: float, traces: str, cores: int,
            controller_ns: int, scale: tuple[int, float] | None) -> dict:
    """Runs one configuration's processes; {"warnings", "lame_controller", "model_tids", "report"}."""
    if config in GENERATED:
        r = stock.run(path, GENERATED[config], duration=seconds + warmup,
                      threads=cores if config == "default" else None, trace=Path(traces) / "nodes.jsonl",
                      scale_wcet=scale,
                      lame_controller_ns=controller_ns if config in LAME_CONFIGS else 0)
        return {"warnings": r.get("warnings", []), "lame_controller": r.get("lame_controller", []),
                "model_tids": [], "report": {k: r[k] for k in ("executor", "threads", "chains", "callbacks") if k in r}}
    extra = []
    if scale is not None:
        extra += ["--scale-wcet", f"{scale[0]}ns:{scale[1]!r}"]
    if config in LAME_CONFIGS and controller_ns:
        extra += ["--lame-controller", f"{controller_ns}ns"]
    r = runtime.run_model(path, int(seconds * 1e9), warmup_ns=int(warmup * 1e9), extra_args=extra, trace_dir=traces)
    return {"warnings": r.get("warnings", []), "lame_controller": r.get("lame_controller", []),
            "model_tids": r.get("model_tids", []), "report": {"chains": r.get("chains", {})}}


def real_config_run(config: str, doc: dict, out: str, tag: str, seconds: float, warmup: float, *, cores: int,
                    lock: str | None, probe: bool, bounds: dict, controller_ns: int = 0,
                    scale: tuple[int, float] | None = None) -> dict:
    """One real run of `config` (REAL_CONFIGS) on the model `doc` (written to ``<out>/<config>.yaml``)
    holding the measurement lock, the platform probe beside it (``probe``): {"chains" (figures,
    chain_figures), "responses", "accounting" (chainrt.accounting.after_run against ``bounds``
    {chain: ns or None}), "warnings", "activations" (LaME's controller), "load" (as measured_run's)}.
    The run's trace is kept as ``<out>/<config>_<tag>.trace.jsonl``. ``scale``: (ns after the
    start, factor) from when every callback burns factor x its WCET. Raises the runtime's and
    chainrt.stock's one-line errors."""
    path = os.path.join(out, f"{config}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    model = load_model(path)
    with measurement_lock(lock), tempfile.TemporaryDirectory(prefix="chainrt-trace-") as traces:
        # the generated nodes discover each other and drain after the timers stop: room for both
        with sampled(probe, seconds + warmup + 60) as m:
            r = _launch(config, path, seconds, warmup, traces, cores, controller_ns, scale)
        executions = accounting.read_traces(traces)
        zero = accounting.trace_zero(traces) or 0
        tids = set(r["model_tids"]) | {x.thread for x in executions}
        acc = accounting.after_run(model, traces, m["probe"], m["note"], bounds,
                                   {n: "analysis" for n, b in bounds.items() if b}, tids, int(warmup * 1e9),
                                   executions=per_thread(executions) if config in LAME_CONFIGS else None)
        for t in Path(traces).glob("*.jsonl"):
            shutil.copy(t, os.path.join(out, f"{config}_{tag}.{t.stem}.trace.jsonl"))
    figures, responses = chain_figures(executions, model, zero, zero + int(warmup * 1e9))
    return {"chains": figures, "responses": responses, "accounting": acc, "warnings": r["warnings"],
            "activations": activations(r), "load": m["load"], "report": r["report"]}


def accounting_summary(runs: list[dict], chains: list[str]) -> dict:
    """Over a configuration's runs, for `chains` (the RT chains): instances above their bound by
    cause, and the worst response raw and over the platform-free instances, per run (ms; None
    where the platform was not measured)."""
    out = {"above": 0, **{c: 0 for c in accounting.CAUSES}, "worst_raw_ms": [], "worst_free_ms": [],
           "free_instances": [], "instances": [], "notes": []}
    for r in runs:
        acc = r["accounting"]
        rows = [acc["chains"][c] for c in chains if c in acc["chains"]]
        for key in ("above", *accounting.CAUSES):
            out[key] += sum(x[key] for x in rows)
        raw = [x["raw"]["max_ns"] for x in rows if x["raw"]["max_ns"] is not None]
        free = [x["platform_free"]["max_ns"] for x in rows if x["platform_free"] and x["platform_free"]["max_ns"] is not None]
        out["worst_raw_ms"].append(max(raw) / 1e6 if raw else None)
        out["worst_free_ms"].append(max(free) / 1e6 if free and acc["measured"] else None)
        out["instances"].append(sum(x["raw"]["instances"] for x in rows))
        out["free_instances"].append(sum(x["platform_free"]["instances"] for x in rows) if acc["measured"] else None)
        out["notes"] += [n for n in acc.get("notes", []) if n not in out["notes"]]
    return out
