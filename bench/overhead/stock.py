"""The EDF paper's overhead workload (Fig. 6: one timer -> N subscriptions, callbacks without
work) on real rclcpp: the same generated nodes (chainrt_rclcpp_nodes, python/chainrt/stock.py)
under rclcpp's stock SingleThreaded, MultiThreaded (2 threads) and Events executors and under
chainrt's ChainExecutor (2 threads) with each policy asked for, in one run, configurations
interleaved within each repetition, each measurement a fresh process. The latency of an instance
is from the timer's expected call time to the end of the last of the N subscription callbacks
(the binary's chain measurement, the same under every executor).

chainrt's own runtime running its emulation of ROS 2's default executor (chainrt-bench-overhead
--policies ros-default, 2 threads) is measured beside them as a fidelity column only: its mean
over stock MultiThreaded's, the same layout, at each N — it is no baseline.

    .venv/bin/python bench/overhead/stock.py [--n 1,2,5,...,200] [--reps 3] [--seconds 2]
        [--policies P,...] [--cpu 1] [--fifo 10] [--json out/overhead_stock.json]

--cpu pins every measured process (all its threads) to one core and --fifo runs it under
SCHED_FIFO; run it in a network namespace of its own (ROS_DOMAIN_ID of its own, discovery on
localhost), as every ROS 2 measurement here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from chainrt import runtime, stock  # noqa: E402

PERIOD_MS = 10
THREADS = 2
# the stock executors measured, as chainrt.stock names them
STOCK_EXECUTORS = ("single", "multi", "events")
EMULATION = "emulated ros-default (chainrt runtime)"
FIDELITY_REFERENCE = "multi"  # the emulation's layout: ROS 2's default executor on 2 threads


def fanout_model(n: int, policy: str = "ros-default", period_ms: int = PERIOD_MS, threads: int = THREADS) -> str:
    """The workload as a chainrt model (YAML): node bench_timer's timer publishing every
    `period_ms` to topic fanout, N subscriptions of it in node bench_subs (bound to the model in
    file order: docs/model.md's rule), callbacks of 1 µs, one chain from the timer to every
    subscription (a branching chain: an instance ends with the last of them), deadline = period,
    on one executor of `threads` threads."""
    subs = [f"sub{i}" for i in range(n)]
    lines = [
        "chainrt: 1",
        f"name: overhead_fanout_{n}",
        "hosts: [{name: host0, cores: 2}]",
        f"executors: [{{name: main, host: host0, policy: {policy}, threads: {threads}}}]",
        "nodes: [{name: bench_timer, executor: main}, {name: bench_subs, executor: main}]",
        "topics: [{name: fanout, size: 16B}]",
        "callbacks:",
        f"  - {{name: timer, kind: timer, node: bench_timer, period: {period_ms}ms, wcet: 1us, priority: 1, "
        "publishes: [fanout]}",
        *(f"  - {{name: {s}, kind: subscription, node: bench_subs, topic: fanout, wcet: 1us, priority: 2, "
          "queue_depth: 10}" for s in subs),
        "chains:",
        f"  - name: fanout\n    deadline: {period_ms}ms\n    paths:",
        *(f"      - [timer, {s}]" for s in subs),
    ]
    return "\n".join(lines) + "\n"


def configurations(policies: list[str]) -> list[tuple[str, str, str | None]]:
    """(label, executor, ChainExecutor policy) of every configuration measured, stock first."""
    out = [(stock.LABELS[e], e, None) for e in STOCK_EXECUTORS]
    return out + [(f"{stock.LABELS['chainrt']} {p}", "chainrt", p) for p in policies]


def _setup(cpu: int | None, fifo: int | None):
    def apply() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        if fifo is not None:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
    return apply


def measure_stock(model: Path, executor: str, policy: str | None, seconds: float, cpu, fifo) -> dict | None:
    """One fresh process of the generated nodes: {"instances", "lost", "mean_ns", "p99_ns", "max_ns"}."""
    try:
        # (the model's 2 threads: MultiThreaded's and the ChainExecutor's)
        r = stock.run(model, executor, duration=seconds, policy=policy, preexec_fn=_setup(cpu, fifo))
    except (stock.StockRunFailed, stock.StockUnavailable) as err:
        print(f"  {executor} {policy or ''}: {err}", file=sys.stderr)
        return None
    c = r["chains"]["fanout"]
    return {k: c[k] for k in ("instances", "lost", "mean_ns", "p99_ns", "max_ns")}


def measure_emulation(ns: list[int], seconds: float, cpu, fifo) -> dict[int, dict]:
    """chainrt's runtime emulating ros-default on the same workload (chainrt-bench-overhead), one
    process for every N: {n: {"instances", "mean_ns", "p99_ns"}}."""
    binary = runtime.find_built_program("chainrt-bench-overhead", "CHAINRT_BENCH_OVERHEAD_BIN", "bench/overhead",
                                        RuntimeError)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "emulation.json"
        cmd = [str(binary), "--n", ",".join(map(str, ns)), "--policies", "ros-default", "--reps", "1",
               "--instances", str(int(seconds * 1000 / PERIOD_MS)), "--period", str(PERIOD_MS), "--json", str(out)]
        if fifo is not None:
            cmd += ["--fifo", str(fifo)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=runtime.ros_environment(binary),
                           preexec_fn=_setup(cpu, fifo), timeout=120 + 30 * len(ns) * seconds)
        if p.returncode != 0 or not out.is_file():
            print(f"  emulation: exit {p.returncode}: {p.stderr.strip()[-300:]}", file=sys.stderr)
            return {}
        points = json.loads(out.read_text())["points"]
    return {pt["n"]: {"instances": pt["samples"], "mean_ns": pt["mean_ns"], "p99_ns": pt["p99_ns"]} for pt in points}


def summarise(runs: dict[str, dict[int, list[dict]]]) -> list[dict]:
    """Per configuration and N, over the repetitions: the mean (weighted by instances), the
    range of the repetitions' means, the mean of their p99s, instances and lost; and the ratios
    of the mean to stock SingleThreaded's and to stock MultiThreaded's of the same N (for the
    emulation: its fidelity, the ratio to MultiThreaded, the same layout)."""
    points = []
    for label, by_n in runs.items():
        for n, reps in sorted(by_n.items()):
            reps = [r for r in reps if r and r.get("instances")]
            if not reps:
                continue
            count = sum(r["instances"] for r in reps)
            points.append({"config": label, "n": n, "samples": count,
                           "mean_ns": sum(r["mean_ns"] * r["instances"] for r in reps) / count,
                           "rep_mean_min_ns": min(r["mean_ns"] for r in reps),
                           "rep_mean_max_ns": max(r["mean_ns"] for r in reps),
                           "p99_ns": sum(r["p99_ns"] for r in reps) / len(reps),
                           "lost": sum(r.get("lost", 0) for r in reps)})
    base = {(p["config"], p["n"]): p["mean_ns"] for p in points}
    for p in points:
        for key, ex in (("vs_stock_single", "single"), ("vs_stock_multi", "multi")):
            b = base.get((stock.LABELS[ex], p["n"]))
            p[key] = p["mean_ns"] / b if b else None
    return points


def table(points: list[dict]) -> list[str]:
    """The figure's table: mean µs [range of the repetitions' means] and the ratio to stock
    SingleThreaded, per N and configuration; the emulation last, as its fidelity ratio."""
    labels = list(dict.fromkeys(p["config"] for p in points if p["config"] != EMULATION))
    ns = sorted({p["n"] for p in points})
    at = {(p["config"], p["n"]): p for p in points}
    out = ["mean end-to-end latency, µs [range of repetition means] (mean / stock SingleThreaded's)"]
    for label in labels:
        cells = []
        for n in ns:
            p = at.get((label, n))
            cells.append("-" if p is None else f"N={n} {p['mean_ns'] / 1e3:.0f} [{p['rep_mean_min_ns'] / 1e3:.0f}.."
                         f"{p['rep_mean_max_ns'] / 1e3:.0f}] ({p['vs_stock_single']:.2f})"
                         if p["vs_stock_single"] else f"N={n} {p['mean_ns'] / 1e3:.0f}")
        out.append(f"  {label}: " + "; ".join(cells))
    emu = [at[(EMULATION, n)] for n in ns if (EMULATION, n) in at]
    if emu:
        out.append(f"fidelity (not a baseline): {EMULATION} / stock MultiThreaded mean: " + "; ".join(
            f"N={p['n']} {p['vs_stock_multi']:.2f}" if p["vs_stock_multi"] else f"N={p['n']} -" for p in emu))
    return out


# The ChainExecutor's policies of the EDF paper's overhead figure (Fig. 6): the default order and
# the two the paper compares.
PAPER_POLICIES = "ros-default,fp,edf"
# The numbers of subscriptions of the overhead figure, as chainrt-bench-overhead measures it.
PAPER_NS = (1, 2, 5, 10, 20, 50, 100, 150, 200)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=",".join(map(str, PAPER_NS)),
                    help="the numbers of subscriptions (default: chainrt-bench-overhead's, the figure's range)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--policies", default=PAPER_POLICIES,
                    help=f"the ChainExecutor's policies (default: {PAPER_POLICIES}, the paper's)")
    ap.add_argument("--cpu", type=int)
    ap.add_argument("--fifo", type=int)
    ap.add_argument("--no-emulation", action="store_true")
    ap.add_argument("--json", default=str(ROOT / "out" / "overhead_stock.json"))
    a = ap.parse_args(argv)
    if stock.unavailable():
        print(f"stock.py: {stock.unavailable()}", file=sys.stderr)
        return 1
    ns = [int(x) for x in a.n.split(",")]
    confs = configurations([p for p in a.policies.split(",") if p])
    runs: dict[str, dict[int, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for n in ns:
            models[n] = Path(tmp) / f"fanout_{n}.yaml"
            models[n].write_text(fanout_model(n))
        for rep in range(a.reps):
            for n in ns:
                order = confs[rep % len(confs):] + confs[:rep % len(confs)]  # interleaved, rotated
                for label, ex, pol in order:
                    r = measure_stock(models[n], ex, pol, a.seconds, a.cpu, a.fifo)
                    runs.setdefault(label, {}).setdefault(n, []).append(r)
                    if r:
                        print(f"rep {rep + 1} N={n} {label}: mean {r['mean_ns'] / 1e3:.0f} µs, {r['instances']} "
                              f"instances, {r['lost']} lost", file=sys.stderr)
            if not a.no_emulation:
                for n, r in measure_emulation(ns, a.seconds, a.cpu, a.fifo).items():
                    runs.setdefault(EMULATION, {}).setdefault(n, []).append(r)
    points = summarise(runs)
    print("\n".join(table(points)))
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps({"period_ns": PERIOD_MS * 1_000_000, "reps": a.reps, "seconds": a.seconds,
                                        "cpu": a.cpu, "fifo": a.fifo, "load_average": list(os.getloadavg()),
                                        "points": points}, indent=1) + "\n")
    print(f"wrote {a.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
