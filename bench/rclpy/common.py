"""Shared by the chainrt.rclpy benchmarks (and bench/rclcpp/dispatch.py): making each executor,
statistics with spread, the dispatch-cost table."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys

EXECUTORS = ("chainrt-fp", "chainrt-edf", "SingleThreaded", "MultiThreaded", "Events")


def available_executors() -> tuple[str, ...]:
    """EXECUTORS less those this rclpy lacks: rclpy's EventsExecutor (rclpy.experimental) is in
    the rclpy of both lines chainrt pins (Kilted 9.1.2, Jazzy 7.1.6), not in Jazzy's rclpy up to
    7.1.3."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return tuple(k for k in EXECUTORS if k != "Events")
    return EXECUTORS


def make_executor(kind: str, context, model=None, threads=None):
    """One executor of `kind` on `context`. rclpy's MultiThreaded gets `threads` threads
    (its default: the CPU count)."""
    if kind.startswith("chainrt-"):
        from chainrt.rclpy import ChainExecutor
        return ChainExecutor(model=model, policy=kind.split("-", 1)[1], context=context, report=False,
                             threads=threads)
    from rclpy import executors
    if kind == "SingleThreaded":
        return executors.SingleThreadedExecutor(context=context)
    if kind == "MultiThreaded":
        return executors.MultiThreadedExecutor(num_threads=threads, context=context)
    if kind == "Events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor(context=context)
    raise ValueError(f"unknown executor {kind}")


def ros_env() -> None:
    os.environ.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def quantile(v, p):
    """Nearest rank, as the runtime's monitor."""
    if not v:
        return float("nan")
    s = sorted(v)
    return s[max(1, math.ceil(p * len(s))) - 1]


def spread(values) -> str:
    """mean ± stdev [min..max] of repetitions."""
    values = [v for v in values if v == v]
    if not values:
        return "n/a"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):8.2f} ± {sd:5.2f} [{min(values):.2f}..{max(values):.2f}]"


def measure(script: str, args: list[str], label: str, timeout: float) -> dict | None:
    """Run one measurement of `script` in a fresh process (``--one ...``); its last stdout line
    is a JSON object. None (and the reason on stderr) when it failed."""
    p = subprocess.run([sys.executable, script, "--one", *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        print(f"{label}: failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def dispatch_table(rows: list[dict], ns: list[int], kinds: list[str], pairs: list[tuple[str, str]],
                   json_path: str | None = None) -> None:
    """Print the dispatch-cost table of bench/rclpy/dispatch.py and bench/rclcpp/dispatch.py: per N
    and executor, the CPU time per callback and the process CPU % (mean ± stdev [min..max] over the
    repetitions) and the share of due callbacks that ran; per (mine, reference) pair the ratio of
    the two within each repetition (rows carry "rep"). Writes the rows to json_path when given."""
    width = max(len(k) for k in kinds) + 1
    print(f"{'N':>4s} {'executor':{width}s} {'CPU us per callback':>34s} {'process CPU %':>30s} {'run / due':>10s}")
    for n in ns:
        for kind in kinds:
            rs = [r for r in rows if r["executor"] == kind and r["n"] == n]
            if rs:
                print(f"{n:4d} {kind:{width}s} {spread([r['us_per_callback'] for r in rs]):>34s} "
                      f"{spread([r['cpu_pct'] for r in rs]):>30s} "
                      f"{sum(r['callbacks'] for r in rs) / max(1, sum(r['expected'] for r in rs)):>9.1%}")
        per_rep: dict[int, dict[str, float]] = {}
        for r in rows:
            if r["n"] == n:
                per_rep.setdefault(r["rep"], {})[r["executor"]] = r["us_per_callback"]
        for mine, ref in pairs:
            ratios = [v[mine] / v[ref] for v in per_rep.values() if mine in v and ref in v]
            if ratios:
                print(f"{'':4s} ratio {mine}/{ref}: {spread(ratios)}")
    if json_path:
        from pathlib import Path
        Path(json_path).write_text(json.dumps(rows, indent=1))
