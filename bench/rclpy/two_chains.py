"""The two chains of examples/two_chains.yaml as real rclpy nodes (examples/rclpy), under
chainrt.rclpy (fp, edf; one thread, as the model says) and rclpy's SingleThreaded,
MultiThreaded (its default thread count) and Events executors, in one run, repeated and
interleaved.

The nodes measure each chain instance's response time themselves (nominal timer release to the
end of the last callback), so every executor is measured the same way. Every executor's
spinning thread is pinned to core 0 (the model's thread t0). Each measurement is a fresh
process. Prints p50/p99/max of the high and low chain per executor: mean ± stdev [min..max]
over the repetitions, and the bound "own work + one low-priority callback" (15 ms).

Timer phases (``--phase``): ``creation`` creates the four nodes one after the other, as a
user's program does, so the relative phase of the two timers is whatever their creation gave
(200 ms is a multiple of 20 ms, so it stays fixed for the whole process and varies between
processes). ``adversarial`` creates lo_sensor so that its timer fires 0.3 ms before one of the
high chain's releases: every tenth high instance then meets a low callback that has just
started, the worst case for the high chain under fp/edf (its p99 is that instance's response
time) and a bad one for rclpy's executors (after lo_pub they run lo_sub before hi_sub, because
lo_sub became ready first). ``both`` measures each.

Under chainrt the bound is also taken from what the executor's monitoring measured in the same
run (thread CPU time per callback, max): hi_pub + hi_sub + the longer low callback. That is
"own work + one low-priority callback" with the work rclpy really does per callback (the take,
deserialisation, publish and the Python call on top of the 2.5/10 ms of busy work).

    .venv/bin/python bench/rclpy/two_chains.py [--seconds 8] [--reps 3] [--phase both] [--json out.json]
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

from common import EXECUTORS, available_executors, make_executor, measure, quantile, ros_env, spread  # noqa: E402

MODEL = REPO / "examples" / "two_chains.yaml"
BOUND_MS = 2.5 + 2.5 + 10.0   # the high chain's own work plus one low-priority callback
WARMUP_S = 1.0
LEAD_NS = 300_000             # --phase adversarial: lo_sensor's timer fires this long before hi's
PHASES = ("creation", "adversarial")


def _next_call_ns(node) -> int:
    """Nanoseconds until the node's only timer is due."""
    return node.timer.time_until_next_call()


def _nodes_with_phase(phase: str, ctx) -> tuple[list, float]:
    """The four nodes; for "adversarial", lo_sensor's timer is restarted so that it expires
    LEAD_NS before one of hi_sensor's. Returns the nodes and the achieved lead of lo's releases
    before hi's (ms, measured from the two timers)."""
    from two_chains_nodes import make_nodes
    nodes = make_nodes(context=ctx)
    if phase == "adversarial":
        # rcl_timer_reset: lo's next expiry becomes reset time + 200 ms (a multiple of 20 ms), so
        # resetting it LEAD_NS before one of hi's releases puts every lo release there.
        period = 20_000_000
        target = time.monotonic_ns() + _next_call_ns(nodes[0]) - LEAD_NS
        while target < time.monotonic_ns() + 1_000_000:
            target += period
        time.sleep(max(0.0, (target - time.monotonic_ns()) / 1e9 - 0.001))
        while time.monotonic_ns() < target:
            pass
        nodes[2].timer.reset()
    hi_next, lo_next = _next_call_ns(nodes[0]), _next_call_ns(nodes[2])
    lead_ms = ((hi_next - lo_next) % 20_000_000) / 1e6
    return nodes, lead_ms


def one(kind: str, seconds: float, fifo: int, phase: str) -> dict:
    ros_env()
    if fifo:  # every thread of the process (executor, DDS) inherits it: the executor's order
        try:  # decides, not the other processes of a shared machine
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
        except OSError:
            pass
    import rclpy
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    nodes, lead_ms = _nodes_with_phase(phase, ctx)
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
    if kind.startswith("chainrt-"):
        ex.record_from_now()
        ex._loop.monitor_json("", "", 0)  # consumes the warm-up's dispatch records
    cpu0 = time.process_time()
    time.sleep(seconds)
    cpu = time.process_time() - cpu0
    stop.set()
    th.join()
    hi, lo = nodes[1].latencies_ns, nodes[3].latencies_ns
    out = {"executor": kind, "phase": phase, "lo_lead_ms": lead_ms, "cpu_s": cpu, "seconds": seconds,
           "hi_n": len(hi), "lo_n": len(lo)}
    for name, v in (("hi", hi), ("lo", lo)):
        out[f"{name}_p50_ms"] = quantile(v, 0.5) / 1e6
        out[f"{name}_p99_ms"] = quantile(v, 0.99) / 1e6
        out[f"{name}_max_ms"] = max(v) / 1e6 if v else float("nan")
    out["hi_over_bound_pct"] = 100 * sum(1 for x in hi if x > BOUND_MS * 1e6) / len(hi) if hi else float("nan")
    if kind.startswith("chainrt-"):
        # the dispatch records measured after the warm-up (thread CPU time of each callback)
        samples = json.loads(ex._loop.monitor_json("", "", 0))["samples"]
        work = {n: max(samples[n]["cpu_ns"]) / 1e6 for n in ("hi_pub", "hi_sub", "lo_pub", "lo_sub")}
        out["work_max_ms"] = work
        out["measured_bound_ms"] = work["hi_pub"] + work["hi_sub"] + max(work["lo_pub"], work["lo_sub"])
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
    ap.add_argument("--executors", default=",".join(available_executors()),
                    help="comma-separated subset of: " + ", ".join(available_executors())
                    + " (Events: rclpy's EventsExecutor, from Kilted on)")
    ap.add_argument("--phase", choices=(*PHASES, "both"), default="both",
                    help="timer phases: as created, adversarial, or both (default)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    phases = PHASES if a.phase == "both" else (a.phase,)
    if a.one:
        print(json.dumps(one(a.one, a.seconds, a.fifo, phases[0])))
        return 0
    kinds = [k for k in a.executors.split(",") if k]
    unknown = [k for k in kinds if k not in available_executors()]
    if unknown:
        ap.error(f"unknown executor {unknown[0]} (this rclpy has: {', '.join(available_executors())})")
    rows = []
    for rep in range(a.reps):
        for phase in phases:
            for kind in kinds:
                r = measure(__file__, [kind, "--seconds", str(a.seconds), "--fifo", str(a.fifo), "--phase", phase],
                            kind, a.seconds + 60)
                if r is None:
                    continue
                rows.append(r)
                extra = (f"  measured bound {r['measured_bound_ms']:6.2f} ms" if "measured_bound_ms" in r else "")
                print(f"rep {rep} {phase:11s} {kind:15s} hi p99 {r['hi_p99_ms']:6.2f} ms  lo p99 {r['lo_p99_ms']:6.2f} ms"
                      f"  (lo leads hi by {r['lo_lead_ms']:5.2f} ms){extra}", file=sys.stderr)
    print(f"two_chains as rclpy nodes, {a.seconds:g} s per run after {WARMUP_S:g} s warm-up, {a.reps} "
          f"repetitions (mean ± stdev [min..max] over repetitions), spinning thread on core 0, "
          f"{os.cpu_count()} CPUs, " + (f"SCHED_FIFO {a.fifo} for every measured process" if a.fifo else "normal scheduling")
          + f", load average {os.getloadavg()[0]:.2f}")
    print(f"nominal bound for the high chain under fp/edf: own work + one low callback = {BOUND_MS:.1f} ms;"
          " measured bound: the same with the execution times the executor measured in that run")
    for phase in phases:
        print(f"\ntimer phases: {phase}")
        print(f"{'executor':15s} {'hi p50 ms':>30s} {'hi p99 ms':>30s} {'hi max ms':>30s} {'lo p99 ms':>30s} "
              f"{'CPU %':>26s} {'measured bound ms':>30s}")
        for kind in EXECUTORS:
            rs = [r for r in rows if r["executor"] == kind and r["phase"] == phase]
            if not rs:
                continue
            bound = spread([r["measured_bound_ms"] for r in rs]) if "measured_bound_ms" in rs[0] else "-"
            print(f"{kind:15s} {spread([r['hi_p50_ms'] for r in rs]):>30s} {spread([r['hi_p99_ms'] for r in rs]):>30s} "
                  f"{spread([r['hi_max_ms'] for r in rs]):>30s} {spread([r['lo_p99_ms'] for r in rs]):>30s} "
                  f"{spread([100 * r['cpu_s'] / r['seconds'] for r in rs]):>26s} {bound:>30s}")
    held = [r for r in rows if "measured_bound_ms" in r]
    within = [r for r in held if r["hi_p99_ms"] <= r["measured_bound_ms"]]
    if held:
        print(f"\nchainrt runs whose high-chain p99 is within that run's measured bound: {len(within)} of {len(held)}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
