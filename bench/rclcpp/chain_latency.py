"""End-to-end response time of a robot's chain under chainrt's model-less rclcpp ChainExecutor,
next to rclcpp's EventsExecutor and SingleThreadedExecutor, in one run: a 30 Hz camera timer ->
detector -> planner -> the map server's service -> planner's response callback -> controller
(a timer, three subscriptions and a service), beside a 15 ms logger timer with 4 ms of CPU
(bench/rclcpp/chain_latency_bench.cpp). Each measurement is a fresh process of the same binary;
executors are interleaved within each repetition, all at the repetition's phase (how far the
camera's timer is from the logger's: it decides the worst case, so it is the same for every
executor of a repetition and varied between repetitions). Per executor: p99 (and p50) of the camera ->
controller response time, mean ± stdev [min..max] over the repetitions, and the ratio of
chainrt's p99 to each stock executor's within each repetition.

    .venv/bin/python bench/rclcpp/chain_latency.py [--seconds 15] [--reps 3] [--cpu 1] [--fifo 10]
        [--kinds chainrt,Events,SingleThreaded] [--json out.json]

--cpu pins every measured process (all its threads) to one core; --fifo runs it under SCHED_FIFO
(both as the robot's own deployment would). Run it in a network namespace of its own, with a
ROS_DOMAIN_ID of its own, so that no other ROS 2 process is discovered.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KINDS = ("chainrt", "chainrt-fp", "SingleThreaded", "Events")


def one(binary: Path, kind: str, seconds: float, phase: float, cpu: int | None, fifo: int | None) -> dict | None:
    def setup() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        if fifo is not None:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))

    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    try:
        out = subprocess.run([str(binary), kind, str(seconds), str(phase)], capture_output=True, text=True, env=env,
                             preexec_fn=setup, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        print(f"  {kind}: no answer within {seconds + 60:.0f} s", file=sys.stderr)
        return None
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    print(f"  {kind}: exit {out.returncode}: {out.stderr.strip()[-300:]}", file=sys.stderr)
    return None


def spread(xs: list[float]) -> str:
    if not xs:
        return "-"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.2f} ± {sd:.2f} [{min(xs):.2f}..{max(xs):.2f}]"


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--fifo", type=int, default=None)
    ap.add_argument("--kinds", default="chainrt,Events,SingleThreaded")
    ap.add_argument("--phases", default="0,5,10",
                    help="ms from the logger's timer to the camera's, one per repetition in turn (default 0,5,10)")
    ap.add_argument("--binary", default=None, help="default: <build>/bench/rclcpp/bench_rclcpp_chain_latency")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    try:
        phases = [float(p) for p in a.phases.split(",") if p.strip()]
    except ValueError:
        phases = []
    bad = [k for k in kinds if k not in KINDS]
    if bad or "chainrt" not in kinds or not (a.seconds > 0) or a.reps < 1 or not phases \
            or not all(0 <= p < 1000 for p in phases):
        print(f"chain_latency: --kinds from {', '.join(KINDS)} with chainrt among them, --seconds > 0, "
              "--reps >= 1, --phases of 0 <= ms < 1000",
              file=sys.stderr)
        return 2
    build = Path(os.environ.get("CHAINRT_BUILD_DIR", ROOT / "build"))
    binary = Path(a.binary) if a.binary else build / "bench" / "rclcpp" / "bench_rclcpp_chain_latency"
    if not binary.exists():
        print(f"chain_latency: {binary} is not built (cmake --build build --target bench_rclcpp_chain_latency)",
              file=sys.stderr)
        return 2
    print(f"load before: {load()}")
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    ratios: dict[str, list[float]] = {k: [] for k in kinds if k != "chainrt"}
    for rep in range(a.reps):
        order = kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]  # a different executor first each time
        got = {}
        phase = phases[rep % len(phases)]
        for k in order:
            r = one(binary, k, a.seconds, phase, a.cpu, a.fifo)
            if r is None or r["samples"] == 0:
                continue
            got[k] = r
            runs[k].append(r)
            print(f"  rep {rep + 1} phase {phase:g} ms {k:15s} p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  "
                  f"max {r['max_ms']:7.2f} ms  ({r['samples']} of ~{r['expected']:.0f} instances)")
        for k in ratios:
            if "chainrt" in got and k in got and got[k]["p99_ms"] > 0:
                ratios[k].append(got["chainrt"]["p99_ms"] / got[k]["p99_ms"])
    print(f"load after: {load()}")
    print(f"\ncamera -> controller, {a.reps} x {a.seconds:g} s"
          f"{f', CPU {a.cpu}' if a.cpu is not None else ''}{f', SCHED_FIFO {a.fifo}' if a.fifo else ''}")
    print(f"{'executor':16s} {'p99 ms':30s} p50 ms")
    for k in kinds:
        print(f"{k:16s} {spread([r['p99_ms'] for r in runs[k]]):30s} {spread([r['p50_ms'] for r in runs[k]])}")
    for k, rs in ratios.items():
        print(f"chainrt p99 / {k} p99 (same repetition): {spread(rs)}")
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": runs, "ratios": ratios}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
