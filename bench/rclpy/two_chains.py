"""The two chains of examples/two_chains.yaml as real rclpy nodes (examples/rclpy), under
chainrt.rclpy (fp, edf; one thread, as the model says) and rclpy's SingleThreaded,
MultiThreaded (its default thread count) and Events executors, in one run, repeated and
interleaved.

The nodes measure each chain instance's response time themselves (nominal timer release to the
end of the last callback), so every executor is measured the same way. Every executor's
spinning thread is pinned to core 0 (the model's thread t0). Each measurement is a fresh
process. Prints p50/p99/max of the high and low chain per executor: mean ± stdev [min..max]
over the repetitions, and the bound "own work + one low-priority callback" (15 ms).

    .venv/bin/python bench/rclpy/two_chains.py [--seconds 8] [--reps 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "examples" / "rclpy")]

from common import EXECUTORS, make_executor, measure, quantile, ros_env, spread  # noqa: E402

MODEL = REPO / "examples" / "two_chains.yaml"
BOUND_MS = 2.5 + 2.5 + 10.0   # the high chain's own work plus one low-priority callback
WARMUP_S = 1.0


def one(kind: str, seconds: float, fifo: int) -> dict:
    ros_env()
    if fifo:  # every thread of the process (executor, DDS) inherits it: the executor's order
        try:  # decides, not the other processes of a shared machine
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
        except OSError:
            pass
    import rclpy
    from rclpy.context import Context
    from two_chains_nodes import make_nodes

    ctx = Context()
    rclpy.init(context=ctx)
    nodes = make_nodes(context=ctx)
    ex = make_executor(kind, ctx, model=str(MODEL), threads=None if kind == "MultiThreaded" else 1)
    for n in nodes:
        ex.add_node(n)
    stop = threading.Event()

    def spin():
        os.sched_setaffinity(0, {0})
        while not stop.is_set() and ctx.ok():
            ex.spin_once(timeout_sec=0.05)
    th = threading.Thread(target=spin)
    th.start()
    time.sleep(WARMUP_S)
    for n in nodes:
        if hasattr(n, "latencies_ns"):
            n.latencies_ns.clear()
    cpu0 = time.process_time()
    time.sleep(seconds)
    cpu = time.process_time() - cpu0
    stop.set()
    th.join()
    hi, lo = nodes[1].latencies_ns, nodes[3].latencies_ns
    out = {"executor": kind, "cpu_s": cpu, "seconds": seconds, "hi_n": len(hi), "lo_n": len(lo)}
    for name, v in (("hi", hi), ("lo", lo)):
        out[f"{name}_p50_ms"] = quantile(v, 0.5) / 1e6
        out[f"{name}_p99_ms"] = quantile(v, 0.99) / 1e6
        out[f"{name}_max_ms"] = max(v) / 1e6 if v else float("nan")
    out["hi_over_bound_pct"] = 100 * sum(1 for x in hi if x > BOUND_MS * 1e6) / len(hi) if hi else float("nan")
    try:
        ex.shutdown()
    except Exception:
        pass
    rclpy.shutdown(context=ctx)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--fifo", type=int, default=10,
                    help="SCHED_FIFO priority of each measured process (0: normal scheduling)")
    ap.add_argument("--executors", default=",".join(EXECUTORS),
                    help="comma-separated subset of: " + ", ".join(EXECUTORS))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.seconds, a.fifo)))
        return 0
    kinds = [k for k in a.executors.split(",") if k]
    unknown = [k for k in kinds if k not in EXECUTORS]
    if unknown:
        ap.error(f"unknown executor {unknown[0]} (one of: {', '.join(EXECUTORS)})")
    rows = []
    for rep in range(a.reps):
        for kind in kinds:
            r = measure(__file__, [kind, "--seconds", str(a.seconds), "--fifo", str(a.fifo)], kind, a.seconds + 60)
            if r is None:
                continue
            rows.append(r)
            print(f"rep {rep} {kind:15s} hi p99 {r['hi_p99_ms']:6.2f} ms  lo p99 {r['lo_p99_ms']:6.2f} ms",
                  file=sys.stderr)
    print(f"two_chains as rclpy nodes, {a.seconds:g} s per run after {WARMUP_S:g} s warm-up, {a.reps} "
          f"repetitions (mean ± stdev [min..max] over repetitions), spinning thread on core 0, "
          f"{os.cpu_count()} CPUs, " + (f"SCHED_FIFO {a.fifo} for every measured process" if a.fifo else "normal scheduling"))
    print(f"bound for the high chain under fp/edf: own work + one low callback = {BOUND_MS:.1f} ms")
    print(f"{'executor':15s} {'hi p50 ms':>30s} {'hi p99 ms':>30s} {'hi max ms':>30s} {'lo p99 ms':>30s} {'hi > bound %':>26s} {'CPU %':>26s}")
    for kind in EXECUTORS:
        rs = [r for r in rows if r["executor"] == kind]
        if not rs:
            continue
        print(f"{kind:15s} {spread([r['hi_p50_ms'] for r in rs]):>30s} {spread([r['hi_p99_ms'] for r in rs]):>30s} "
              f"{spread([r['hi_max_ms'] for r in rs]):>30s} {spread([r['lo_p99_ms'] for r in rs]):>30s} "
              f"{spread([r['hi_over_bound_pct'] for r in rs]):>26s} "
              f"{spread([100 * r['cpu_s'] / r['seconds'] for r in rs]):>26s}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
