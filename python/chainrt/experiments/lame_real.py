"""What the LaME experiments' real-ROS 2 runs share: holding the machine's measurement lock for
one run at a time, the load average around a run, per-instance chain response times from a
``chainrt-run --trace`` dispatch trace, the controller's activations (paper Fig. 8), and the
figure of response time over time with the deadlines drawn (paper Fig. 5-7 show the same
quantities as summaries).

A chain instance's response time is taken where the runtime's monitoring takes it: the dispatch
of the chain's last callback carries the release stamp of the chain's first callback (the stamp
travels with the messages), response = finish - that release. Trace times are ns since the run's
start (warm-up included).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import statistics
from collections.abc import Callable

from .. import accounting, runtime
from ..crosslayer.kernel import KernelPathUnavailable
from ..crosslayer.platform import PlatformProbe
from ..figures import pyplot, save_figure
from ..model import load_model


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
    import tempfile


    with measurement_lock(lock), tempfile.TemporaryDirectory(prefix="chainrt-trace-") as traces:
        load0, j0 = loadavg(), cpu_jiffies()
        platform: dict = {}
        held: dict = {}
        with platform_probe((duration_ns + warmup_ns) / 1e9 + 5, platform, held) if probe else \
                contextlib.nullcontext():
            r = runtime.run_model(path, duration_ns, warmup_ns=warmup_ns,
                                  trace_dir=traces if bounds is not None else None)
        load1, j1 = loadavg(), cpu_jiffies()
        if bounds is not None:
            note = None if held.get("probe") else \
                f"platform not measured: {platform.get('probe_error') or 'the probe was not asked for'}"
            r["accounting"] = accounting.after_run(load_model(path), traces, held.get("probe"), note, bounds,
                                                   {n: "analysis" for n in bounds}, set(r.get("model_tids", [])),
                                                   warmup_ns)
    return r, {"load_before": load0, "load_after": load1, "steal_percent": steal_percent(j0, j1), **platform}


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


class StealSampler:
    """Hypervisor steal of every CPU (/proc/stat), sampled every `interval` seconds on
    CLOCK_MONOTONIC by a background thread while the block runs — the platform's blackouts: time
    the host ran something else while this VM wanted the CPU. A miss is attributed to them by
    the steal during its instance (steal_ms). /proc/stat counts in clock ticks (10 ms at
    USER_HZ = 100), so a blackout shorter than a tick may show as one tick or none."""

    def __init__(self, interval: float = 0.05):
        import threading

        self.interval = interval
        self.samples: list[tuple[int, int]] = []  # (monotonic ns, steal ticks summed over the CPUs)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _read() -> int:
        total = 0
        try:
            with open("/proc/stat") as f:
                for line in f:
                    if line.startswith("cpu") and line[3:4].isdigit():
                        v = line.split()
                        total += int(v[8]) if len(v) > 8 else 0
        except (OSError, ValueError):
            return 0
        return total

    def _run(self) -> None:
        import time

        while not self._stop.is_set():
            self.samples.append((time.monotonic_ns(), self._read()))
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        import time

        self._stop.set()
        self._thread.join()
        self.samples.append((time.monotonic_ns(), self._read()))
        return False

    def steal_ms(self, t0_ns: int, t1_ns: int) -> float | None:
        """Steal (ms, all CPUs) between the last sample at or before t0 and the first at or after
        t1; None outside the sampled span."""
        before = [s for s in self.samples if s[0] <= t0_ns]
        after = [s for s in self.samples if s[0] >= t1_ns]
        if not before or not after:
            return None
        tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
        return (after[0][1] - before[-1][1]) * tick_ms


def misses_with_steal(responses: dict[str, list[tuple[float, float]]], deadlines_ms: dict[str, float],
                      start_ns: int | None, sampler: StealSampler, since_s: float = 0.0) -> list[dict]:
    """Every instance from `since_s` on that missed its deadline, with the hypervisor steal during
    it (release to completion; `start_ns`: the run's start on CLOCK_MONOTONIC, the trace's zero)."""
    out = []
    for chain, pts in responses.items():
        for t, ms in pts:
            if t < since_s or ms <= deadlines_ms[chain]:
                continue
            steal = None
            if start_ns is not None:
                t0 = start_ns + int(t * 1e9)
                steal = sampler.steal_ms(t0, t0 + int(ms * 1e6))
            out.append({"chain": chain, "release_s": round(t, 4), "response_ms": round(ms, 3),
                        "steal_ms": None if steal is None else round(steal, 1)})
    return sorted(out, key=lambda m: m["release_s"])


def trace_start_ns(trace: str) -> int | None:
    """The run's start on CLOCK_MONOTONIC that chainrt-run writes beside its trace (FILE.start)."""
    try:
        with open(trace + ".start") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


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


def leaves_of(model, names=None) -> dict[str, list[tuple[str, int]]]:
    """Last callback of each chain (restricted to `names` when given) -> [(chain, deadline ns)]."""
    out: dict[str, list[tuple[str, int]]] = {}
    for c in model.chains:
        if names is None or c.name in names:
            out.setdefault(c.callbacks[-1], []).append((c.name, c.deadline))
    return out


def trace_responses(path: str, leaves: dict[str, list[tuple[str, int]]]) -> dict[str, list[tuple[float, float]]]:
    """Per chain, (release in s since the start, response time in ms) of every completed instance
    in the trace, in release order."""
    out: dict[str, list[tuple[float, float]]] = {c: [] for v in leaves.values() for c, _ in v}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["release"] < 0:
                continue
            for chain, _deadline in leaves.get(d["callback"], []):
                out[chain].append((d["release"] / 1e9, (d["finish"] - d["release"]) / 1e6))
    for v in out.values():
        v.sort()
    return out


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
