"""LaME's controller on the rclpy executor (chainrt.rclpy, ``lame_controller=``), measured on real
rclpy nodes over Fast DDS: one RT chain (a 50 ms timer -> a subscription) and one BE timer, every
callback burning thread-CPU time; from ``--step-at`` on every burn grows by ``--factor`` (an
emulated frequency drop). Runs the same system with the plan fixed (no controller) and with the
controller, and reports per configuration the RT chain's deadline misses before and after the
step (from the executor's monitor: instances whose response exceeded the deadline), the time of
the last miss after the step, the controller's decisions (re-plans, applied budgets, refusals)
and its CPU time per activation.

    .venv/bin/python bench/lame/rclpy_throttle.py [--duration 30] [--step-at 15] [--factor 2.5]
        [--period 5] [--out out/lame_rclpy.json]

Run it under the measurement lock and in a private network namespace (rosiso); it uses ROS
domain 171 and LOCALHOST discovery.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time

os.environ.setdefault("ROS_DOMAIN_ID", "171")
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"

import rclpy  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from chainrt.rclpy import ChainExecutor  # noqa: E402

MODEL = """chainrt: 1
name: rclpy_lame_bench
hosts: [{name: h, cores: 2}]
executors: [{name: x, host: h, policy: lame}]
nodes: [{name: bench_n, executor: x}]
topics: [{name: bench_a}]
callbacks:
  - {name: src, kind: timer, node: bench_n, period: 50ms, wcet: 5ms, publishes: [bench_a]}
  - {name: sink, kind: subscription, node: bench_n, topic: bench_a, wcet: 5ms}
  - {name: tick, kind: timer, node: bench_n, period: 100ms, wcet: 5ms}
chains:
  - {name: control, callbacks: [src, sink], deadline: 50ms, class: rt, criticality: 2}
  - {name: log, callbacks: [tick], deadline: 100ms, class: be}
"""
BURN_NS = 4_000_000


def burn(ns: int) -> None:
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


class Busy(Node):
    def __init__(self, context, step_at: float, factor: float):
        super().__init__("bench_n", context=context)
        self.step_at, self.f = step_at, factor
        self.pub = self.create_publisher(String, "bench_a", 10)
        self.create_timer(0.05, self.src)
        self.create_subscription(String, "bench_a", self.sink, 10)
        self.create_timer(0.1, lambda: burn(int(BURN_NS * self.factor())))

    def factor(self) -> float:
        return self.f if time.monotonic() >= self.step_at else 1.0

    def src(self):
        burn(int(BURN_NS * self.factor()))
        self.pub.publish(String(data="x"))

    def sink(self, _m):
        burn(int(BURN_NS * self.factor()))


def run(config: str, args, path: str) -> dict:
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        t0 = time.monotonic()
        node = Busy(ctx, t0 + args.step_at, args.factor)
        # "fixed plan": the same initial plan and threads, the controller never activates
        kw = ({"lame_controller": args.period} if config == "controller"
              else {"lame_controller": 1e6, "lame_on_miss": False})
        ex = ChainExecutor(model=path, context=ctx, report=False, stats_period=None, **kw)
        ex.add_node(node)
        spinner = threading.Thread(target=ex.spin, daemon=True)
        load0 = os.getloadavg()
        spinner.start()
        # the RT chain's miss counter over time (the loop's monitor), every 0.1 s
        series = []
        end = t0 + args.duration
        while time.monotonic() < end:
            time.sleep(0.1)
            loop = ex._loop
            if loop is not None:
                series.append((time.monotonic() - t0, int(loop.chain_misses()[loop.chain_names().index("control")])))
        ex.shutdown()
        spinner.join(10)
        load1 = os.getloadavg()
        r = ex.last_report
        deadline = r["chains"]["control"]["deadline_ns"]
        return {"config": config, "report_chain": {k: v for k, v in r["chains"]["control"].items() if k != "samples_ns"},
                "lame_controller": r.get("lame_controller", []), "load_before": load0, "load_after": load1,
                "warnings": r["warnings"], "deadline_ns": deadline, "misses_over_time": series}
    finally:
        rclpy.shutdown(context=ctx)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--step-at", type=float, default=15.0)
    ap.add_argument("--factor", type=float, default=2.5)
    ap.add_argument("--period", type=float, default=5.0, help="controller period (s)")
    ap.add_argument("--out", default="out/lame_rclpy.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.yaml")
        with open(path, "w") as f:
            f.write(MODEL)
        results = [run(c, args, path) for c in ("fixed plan", "controller")]
    for res in results:
        c = res["report_chain"]
        acts = res["lame_controller"]
        replans = [a for a in acts if a["decision"] == "reallocated"]
        cost = [a["decide_cpu_ms"] + a["apply_cpu_ms"] for a in acts]
        ser = res["misses_over_time"]
        before = max((m for t, m in ser if t < args.step_at), default=0)
        total = ser[-1][1] if ser else 0
        last = max((t for (t, m), (_t0, m0) in zip(ser[1:], ser) if m > m0 and t >= args.step_at), default=None)
        res["misses_before_step"], res["misses_after_step"] = before, total - before
        res["last_miss_after_step_s"] = None if last is None else last - args.step_at
        print(f"{res['config']}: RT chain 'control' {c['instances']} instances, {c['deadline_misses']} deadline misses, "
              f"worst {c['wcrt_ns'] / 1e6:.1f} ms (D {res['deadline_ns'] / 1e6:.0f} ms); misses before/after the step "
              f"{res['misses_before_step']}/{res['misses_after_step']}, last "
              f"{'-' if res['last_miss_after_step_s'] is None else format(res['last_miss_after_step_s'], '.1f') + ' s'} after it; "
              f"load {res['load_before'][0]:.2f}->{res['load_after'][0]:.2f}")
        for a in replans:
            rt = ", ".join(f"{k['name']} {k['budget_ns'] / 1e6:.2f} ms" for k in a["classes"])
            print(f"  +{a['at_ns'] / 1e9:.1f} s {a['trigger']}: {a['kind']} ({a['why'][:80]}) -> {rt}"
                  + (f"; refused {a['errors']}" if a["errors"] else ""))
        if cost:
            print(f"  controller CPU per activation: median {statistics.median(cost):.2f} ms, max {max(cost):.2f} ms "
                  f"({len(cost)} activations)")
        for w in res["warnings"]:
            print(f"  warning: {w}")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
