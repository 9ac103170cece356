"""Dispatch cost of chainrt's rclcpp ChainExecutor next to rclcpp's SingleThreaded, StaticSingle-
Threaded, MultiThreaded and Events executors, in one run: a 50 Hz timer publishing to N
subscriptions that do nothing (N = 1, 10, 50, 200), and a lone 1 kHz timer (N = 0). Per
configuration and executor: callbacks run, process CPU time per callback (every thread: executor,
DDS) and process CPU %. Each measurement is a fresh process (build/bench/rclcpp/
bench_rclcpp_dispatch); the configurations are repeated and interleaved; figures are mean ± stdev
[min..max] over the repetitions, with the ratios ChainExecutor / SingleThreaded and
ChainExecutor / Events of each repetition.

    .venv/bin/python bench/rclcpp/dispatch.py [--seconds 5] [--reps 3] [--n 1,10,50,200]
        [--cpu 1] [--fifo 10] [--lock /work/measure.lock] [--json out.json]

--cpu pins every measured process (all its threads) to one core; --fifo runs it under SCHED_FIFO.
"""

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "rclpy"))

from common import dispatch_table  # noqa: E402

KINDS = ("chainrt", "chainrt-fp", "SingleThreaded", "StaticSingleThreaded", "MultiThreaded", "Events")


def steal_ticks() -> int:
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])


def one(binary: Path, kind: str, n: int, seconds: float, cpu: int | None, fifo: int | None) -> dict | None:
    cmd = [str(binary), kind, str(n), str(seconds)]
    if fifo:
        cmd = ["chrt", "-f", str(fifo)] + cmd
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120, env=env)
    if p.returncode != 0:
        print(f"{kind} N={n}: failed ({p.returncode}): {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", default="1,10,50,200", help="subscription counts (0, the lone 1 kHz timer, is always run)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--cpu", type=int, help="pin each measured process to this core")
    ap.add_argument("--fifo", type=int, help="run each measured process under SCHED_FIFO at this priority")
    ap.add_argument("--lock", help="hold this lock file (flock) while measuring")
    ap.add_argument("--binary", default=str(ROOT / "build" / "bench" / "rclcpp" / "bench_rclcpp_dispatch"))
    ap.add_argument("--json")
    a = ap.parse_args()
    binary = Path(a.binary)
    if not binary.exists():
        print(f"dispatch.py: {binary} is not built (scripts/setup builds it when rclcpp is there)", file=sys.stderr)
        return 2
    kinds = [k for k in a.kinds.split(",") if k]
    ns = [0] + [int(x) for x in a.n.split(",") if x.strip()]
    lock = open(a.lock, "w") if a.lock else None
    if lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
    rows = []
    load0, steal0, t0 = os.getloadavg()[0], steal_ticks(), time.monotonic()
    try:
        for rep in range(a.reps):
            for n in ns:
                for kind in kinds:
                    r = one(binary, kind, n, a.seconds, a.cpu, a.fifo)
                    if r is None:
                        continue
                    r["rep"] = rep
                    rows.append(r)
                    print(f"rep {rep} N={n:3d} {kind:21s} {r['us_per_callback']:8.2f} us/cb  {r['cpu_pct']:5.1f} % CPU "
                          f"{r['callbacks']}/{r['expected']:.0f} callbacks", file=sys.stderr)
    finally:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_UN)
    elapsed = time.monotonic() - t0
    steal_pct = 100.0 * (steal_ticks() - steal0) / os.sysconf("SC_CLK_TCK") / max(elapsed, 1e-9) / os.cpu_count()
    print(f"dispatch cost, {a.seconds:g} s per run, {a.reps} repetitions (mean ± stdev [min..max]), "
          f"{os.cpu_count()} CPUs, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}, steal {steal_pct:.1f} %"
          f"{f', pinned to CPU {a.cpu}' if a.cpu is not None else ''}{f', SCHED_FIFO {a.fifo}' if a.fifo else ''}; "
          f"N=0: a lone 1 kHz timer, N>0: a 50 Hz timer publishing to N subscriptions")
    pairs = [(m, r) for m in ("chainrt", "chainrt-fp") for r in ("SingleThreaded", "Events")]
    dispatch_table(rows, ns, kinds, pairs, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
