"""Dispatch cost of chainrt.rclpy next to rclpy's SingleThreaded, MultiThreaded and Events
executors, in one run: a timer publishing to N subscriptions that do no work (N = 1..200), and
a lone 1 kHz timer. Per configuration and executor: callbacks run, process CPU time per callback
(every thread: executor, DDS) and process CPU %. Each measurement is a fresh process; the
configurations are repeated and interleaved; figures are mean ± stdev [min..max] over the
repetitions, with the ratios chainrt / SingleThreaded and chainrt / Events.

    .venv/bin/python bench/rclpy/dispatch.py [--seconds 3] [--reps 3] [--n 1,10,50,100,200]
"""

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import dispatch_table, make_executor, measure, ros_env  # noqa: E402

KINDS = ("chainrt-fp", "SingleThreaded", "MultiThreaded", "Events")
FANOUT_HZ = 50.0


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(kind: str, n: int, seconds: float) -> dict:
    ros_env()
    import rclpy
    from rclpy.context import Context
    from rclpy.node import Node
    from std_msgs.msg import Empty

    ctx = Context()
    rclpy.init(context=ctx)
    count = [0]

    def cb(*_):
        count[0] += 1
    src, dst = Node("bench_source", context=ctx), Node("bench_sinks", context=ctx)
    if n == 0:  # the lone 1 kHz timer
        src.create_timer(0.001, cb)
    else:
        pub = src.create_publisher(Empty, "fanout", 10)
        for _ in range(n):
            dst.create_subscription(Empty, "fanout", cb, 10)

        def tick():
            count[0] += 1
            pub.publish(Empty())
        src.create_timer(1.0 / FANOUT_HZ, tick)
    ex = make_executor(kind, ctx)
    ex.add_node(src)
    ex.add_node(dst)
    if n:
        end = time.monotonic() + 10
        while pub.get_subscription_count() < n and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.01)
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.01)
    c0, k0, t0 = cpu_s(), count[0], time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.01)
    cpu, k, wall = cpu_s() - c0, count[0] - k0, time.monotonic() - t0
    expected = (n + 1) * FANOUT_HZ * wall if n else 1000 * wall
    try:
        ex.shutdown()
    except Exception:
        pass
    rclpy.shutdown(context=ctx)
    return {"executor": kind, "n": n, "callbacks": k, "expected": expected, "cpu_s": cpu, "wall_s": wall,
            "us_per_callback": 1e6 * cpu / max(k, 1), "cpu_pct": 100 * cpu / wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", default="1,10,50,100,200", help="subscription counts (0: the lone 1 kHz timer)")
    ap.add_argument("--json")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), a.seconds)))
        return 0
    ns = [0] + [int(x) for x in a.n.split(",") if x.strip()]
    rows = []
    for rep in range(a.reps):
        for n in ns:
            for kind in KINDS:
                r = measure(__file__, [kind, str(n), "--seconds", str(a.seconds)], f"{kind} N={n}", a.seconds + 90)
                if r is None:
                    continue
                r["rep"] = rep
                rows.append(r)
                print(f"rep {rep} N={n:3d} {kind:15s} {r['us_per_callback']:8.1f} us/cb  {r['cpu_pct']:5.1f} % CPU "
                      f"{r['callbacks']}/{r['expected']:.0f} callbacks", file=sys.stderr)
    print(f"dispatch cost, {a.seconds:g} s per run, {a.reps} repetitions (mean ± stdev [min..max]), "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; N=0: a lone 1 kHz timer, "
          f"N>0: a {FANOUT_HZ:g} Hz timer publishing to N subscriptions")
    dispatch_table(rows, ns, list(KINDS), [("chainrt-fp", "SingleThreaded"), ("chainrt-fp", "Events")], a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
