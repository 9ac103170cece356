"""A user's own rclpy robot (tests/python/user_robot/robot.py: camera 30 Hz, 100 KiB -> detector
8 ms -> planner 4 ms -> /map/query service 1 ms -> command; logger 5 Hz 25 ms -> uploader 15 ms),
under chainrt.rclpy's ChainExecutor without a model (monitoring on, as for profiling), with a
model, and under rclpy's Events and SingleThreaded executors, in one run: interleaved, each a
fresh process, pinned to one core, SCHED_FIFO.

The measure is the program's own: camera release -> publication of the command that answers it
(TimerInfo.expected_call_time in the image, read back when the command is published). Per
executor: p50/p99/max and deadline misses (33.3 ms) per run, then mean ± stdev [min..max] over
the runs; the load average and the hypervisor's steal time (/proc/stat) beside each run.

    flock /work/measure.lock .venv/bin/python bench/rclpy/user_robot.py [--seconds 15] [--reps 3]
        [--cpu 1] [--fifo 80] [--model M] [--csv docs/rclpy_user_robot.csv]

Needs root for SCHED_FIFO (without it the runs are at normal priority and the output says so).
Run inside a private network namespace when others use ROS 2 (it sets its own domain id).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROBOT = REPO / "tests" / "python" / "user_robot" / "robot.py"
DEADLINE_NS = 1_000_000_000 // 30


def quantile(v: list[int], p: float) -> float:
    if not v:
        return float("nan")
    s = sorted(v)
    return float(s[min(len(s) - 1, max(0, int(-(-p * len(s) // 1)) - 1))])


def spread(v: list[float]) -> str:
    if not v:
        return "-"
    m = sum(v) / len(v)
    sd = (sum((x - m) ** 2 for x in v) / (len(v) - 1)) ** 0.5 if len(v) > 1 else 0.0
    return f"{m:7.2f} ± {sd:5.2f} [{min(v):.2f}..{max(v):.2f}]"


def steal_jiffies() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        cols = [int(x) for x in f.readline().split()[1:]]
    return cols[7] if len(cols) > 7 else 0, sum(cols)


VARIANTS = {
    "chainrt-modelless": ["--executor", "chain", "--stats-period", "0.2"],
    "chainrt-model-edf": ["--executor", "chain", "--policy", "edf"],
    "events": ["--executor", "events"],
    "single": ["--executor", "single"],
}


def one(variant: str, args, model: str | None, domain: int) -> dict:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, str(ROBOT), *VARIANTS[variant], "--duration", str(args.seconds),
               "--warmup", "2", "--out", str(out)]
        if variant == "chainrt-model-edf":
            cmd += ["--model", model]
        prefix = ["taskset", "-c", str(args.cpu)]
        if args.fifo:
            prefix = ["chrt", "-f", str(args.fifo)] + prefix
        s0, l0 = steal_jiffies(), os.getloadavg()[0]
        try:
            r = subprocess.run(prefix + cmd, env=env, capture_output=True, text=True, timeout=args.seconds + 90)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{variant}: no end {args.seconds + 90:g} s after its start (killed)") from None
        s1 = steal_jiffies()
        if r.returncode != 0 or not out.is_file():
            raise RuntimeError(f"{variant}: exit {r.returncode}: {r.stderr.strip().splitlines()[-3:]}")
        data = json.loads(out.read_text())
    lat = data["latencies_ns"]
    row = {"executor": variant, "n": len(lat), "p50_ms": quantile(lat, 0.5) / 1e6, "p99_ms": quantile(lat, 0.99) / 1e6,
           "max_ms": max(lat) / 1e6 if lat else float("nan"),
           "mean_ms": sum(lat) / len(lat) / 1e6 if lat else float("nan"),
           "misses": sum(1 for x in lat if x > DEADLINE_NS), "load1": l0,
           "steal_pct": 100.0 * (s1[0] - s0[0]) / max(1, s1[1] - s0[1])}
    rep = data.get("report") or {}
    if rep.get("chains"):   # chainrt's own measure of the same chain (with a model)
        best = max(rep["chains"].values(), key=lambda c: c.get("instances", 0))
        row["chainrt_p99_ms"] = best.get("p99_ns", 0) / 1e6
        row["chainrt_mean_ms"] = best.get("mean_ns", 0) / 1e6
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1, help="the core every measured process is pinned to")
    ap.add_argument("--fifo", type=int, default=80, help="SCHED_FIFO priority of the measured process (0: none)")
    ap.add_argument("--model", help="the robot's model for chainrt-model-edf (default: skipped)")
    ap.add_argument("--executors", default=",".join(VARIANTS))
    ap.add_argument("--csv", help="write one row per run")
    a = ap.parse_args()
    kinds = [k for k in a.executors.split(",") if k in VARIANTS]
    if not a.model:
        kinds = [k for k in kinds if k != "chainrt-model-edf"]
    if a.fifo and os.geteuid() != 0:
        print("note: not root: runs at normal priority", file=sys.stderr)
        a.fifo = 0
    rows = []
    domain = 100 + os.getpid() % 100
    for rep in range(a.reps):
        for kind in kinds:
            try:
                r = one(kind, a, a.model, domain)
            except RuntimeError as err:
                print(f"user_robot: {err}", file=sys.stderr)
                return 1
            r["rep"] = rep
            rows.append(r)
            print(f"rep {rep} {kind:18s} p50 {r['p50_ms']:6.2f}  p99 {r['p99_ms']:6.2f}  max {r['max_ms']:6.2f} ms  "
                  f"misses {r['misses']:3d}/{r['n']}  load {r['load1']:.2f}  steal {r['steal_pct']:.2f} %",
                  file=sys.stderr)
    print(f"user robot (tests/python/user_robot), {a.seconds:g} s per run after 2 s warm-up, {a.reps} runs each, "
          f"interleaved; one process pinned to core {a.cpu}, "
          + (f"SCHED_FIFO {a.fifo}" if a.fifo else "normal scheduling")
          + f"; {os.cpu_count()} CPUs; camera -> command latency from the program's own stamps "
          "(mean ± stdev [min..max] over runs)")
    print(f"{'executor':18s} {'p50 ms':>28s} {'p99 ms':>28s} {'max ms':>28s} {'misses/run':>28s} {'load1':>8s} {'steal %':>8s}")
    for kind in kinds:
        rs = [r for r in rows if r["executor"] == kind]
        print(f"{kind:18s} {spread([r['p50_ms'] for r in rs]):>28s} {spread([r['p99_ms'] for r in rs]):>28s} "
              f"{spread([r['max_ms'] for r in rs]):>28s} {spread([float(r['misses']) for r in rs]):>28s} "
              f"{sum(r['load1'] for r in rs) / len(rs):8.2f} {sum(r['steal_pct'] for r in rs) / len(rs):8.2f}")
    if a.csv:
        keys = sorted({k for r in rows for k in r})
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
