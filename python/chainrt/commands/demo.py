"""``chainrt demo``: a tour of chainrt in a few minutes, on the embedded ROS 2.

1. the two-chain experiment of the CROS-RT paper (examples/two_chains.yaml): for ROS 2's default
   order, fixed priority and EDF, the analysis bound, the simulated worst case and what a real run
   on rcl + Fast DDS measures, side by side. The real runs are the model's nodes generated as
   plain rclcpp nodes (chainrt.stock), one binary: ROS 2's order is rclcpp's stock
   SingleThreadedExecutor, fp and EDF chainrt's ChainExecutor. Where chainrt was built without
   rclcpp they run on chainrt's runtime, ROS 2's order then being chainrt's emulation of it (the
   output says which);
2. the Autoware reference system benchmark, short, summarised per configuration (the full report
   with plots is written to out/demo), and the real instances above the model's worst case,
   each accounted (a platform blackout, a callback over its WCET, ...), as one table.

Each step calls the ordinary chainrt commands. Real runs get a real-time priority where this
process may give one (root, CAP_SYS_NICE or an rtprio limit); where it may not, that is said once.
Warnings of the steps are grouped: one line per cause, naming what it concerns.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

from .. import cliargs, output, stock, verdict
from ..accounting import ACCOUNTED, CAUSES, OVERRUN, UNEXPLAINED, irq_time_accounting
from ..model import policies
from . import help_of

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The tour's three orders (a choice), each with its default analysis for one thread.
TOUR = ("ros-default", "fp", "edf")
POLICY_ANALYSIS = {p["name"]: p["analysis_single"] for p in policies() if p["name"] in TOUR}
RUN_FIFO = "50"        # the two chains' executor thread (examples/two_chains.yaml gives none)
BENCH_FIFO = "10"      # the reference system's base priority (configurations keep their own order)


def register(sub) -> None:
    p = sub.add_parser("demo", help=help_of("demo"))
    p.add_argument("--duration", type=cliargs.duration_text, default="5s", help="real ROS 2 run time per policy (default 5s)")
    p.add_argument("--bench-duration", type=cliargs.duration_text, default="10s", help="reference-system run time per configuration (default 10s)")
    p.add_argument("--skip-bench", action="store_true", help="only the two-chain part")
    p.set_defaults(func=run)


class Tour:
    """What the steps left to say: failed steps, and warnings grouped by cause."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.causes: dict[str, list[str]] = {}
        self.tabled: set[str] = set()  # configurations whose accounting is shown as a table

    def chainrt(self, *args: str, timeout: float = 900) -> tuple[int, str]:
        proc = subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True,
                              timeout=timeout)
        for line in proc.stderr.splitlines():
            if line.startswith("warning: "):
                self.warn(line[len("warning: "):])
        if proc.returncode not in (0, 2):
            self.failed.append(f"chainrt {args[0]}")
            last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
            print(f"   (chainrt {args[0]} failed: {last})")
        return proc.returncode, proc.stdout

    def warn(self, text: str) -> None:
        """Files a step's warning under its cause; 'X: ... likely cause: A (...); B (...)' under A and B."""
        subject, _, rest = text.partition(": ")
        if "likely cause: " in text:
            what = subject if rest else "a run"
            # (causes are separated by "; ", which may also appear inside a cause's parentheses)
            for cause in re.split(r"; (?![^()]*\))", text.split("likely cause: ", 1)[1]):
                # (the run's accounting of the instances above: its figures are the point)
                key = (f"{text.split(' measured', 1)[0]}: {cause}" if cause.startswith(ACCOUNTED)
                       else re.sub(r"\s*\(.*$", "", cause).strip())
                self.causes.setdefault(key, []).append(what)
        else:
            self.causes.setdefault(re.sub(r"\s*\(.*?\)", "", text).strip(), [])

    def print_warnings(self) -> None:
        for cause, where in self.causes.items():
            if cause.split(": ", 1)[0] in self.tabled and f": {ACCOUNTED}" in cause:
                continue  # (in the accounting table)
            names = sorted(set(where))
            shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
            print(f"warning: {cause}" + (f" (measured worst case above the model's in {shown})" if names else ""),
                  file=sys.stderr)


def rt_allowed() -> bool:
    return verdict.rt_available()[0]


def columns(header: tuple, rows: list[tuple], indent: str = "   ") -> None:
    print("\n".join(output.table([header, *rows], left=(), indent=indent)))


def two_chains(tour: Tour, duration: str, rt: bool) -> None:
    model = str(ROOT / "examples/two_chains.yaml")
    print("== 1. Two chains on one thread (the CROS-RT paper's experiment)")
    print("   high: T = 20 ms, 5 ms of work; low: T = 200 ms, 20 ms of work. Under ROS 2's default order")
    print("   the high chain can wait behind whole low-priority runs; under fixed priority (fp) or EDF it")
    print("   waits for at most one low-priority callback.\n")
    why_not = stock.unavailable()
    rows = []
    for policy, analysis in POLICY_ANALYSIS.items():
        on = real_label(policy, why_not)
        print(f"   {policy}: analysis, simulation, {duration} on {on} ...", flush=True)
        bound = chains_of(tour, "analyze", model, "--analysis", analysis)
        sim = chains_of(tour, "simulate", model, "--policy", policy, "--duration", "10s")
        real = real_chains(tour, model, policy, duration, rt, why_not)
        for chain in ("high", "low"):
            b, s, r = bound.get(chain, {}), sim.get(chain, {}), real.get(chain, {})
            bound_text = output.ms(b.get("wcrt_bound_ns")) if b.get("wcrt_bound_ns") is not None else ("none" if b else "-")
            rows.append((chain, policy, bound_text, output.ms(s.get("wcrt_ns")), output.ms(r.get("mean_ns")),
                         output.ms(r.get("p99_ns")), output.ms(r.get("wcrt_ns")), str(r.get("deadline_misses", "-")),
                         on))
    print()
    columns(("chain", "policy", "bound", "sim worst", "real mean", "real p99", "real max", "misses", "real run on"),
            sorted(rows, key=lambda r: (r[0] != "high", r[0])))
    print("   (ms) bound: the analysis' worst case (for ROS 2's order, Casini et al. 2019 finds none within the")
    print("   period here); sim worst: the simulator's worst case over 10 s; real: rcl + Fast DDS on this machine,")
    if why_not is None:
        print("   the same generated rclcpp nodes (one binary) under each executor.\n")
    else:
        print(f"   on chainrt's runtime; ROS 2's order is chainrt's emulation of it (stock rclcpp: {why_not}).\n")


def real_label(policy: str, why_not: str | None) -> str:
    """What the real run of `policy` runs on: the generated rclcpp nodes under rclcpp's stock
    SingleThreadedExecutor (ROS 2's order) or chainrt's ChainExecutor; without rclcpp, chainrt's
    runtime, whose ROS 2 order is an emulation."""
    if why_not is None:
        return stock.LABELS["single"] if policy == "ros-default" else f"{stock.LABELS['chainrt']} ({policy})"
    return "chainrt's emulation of ROS 2's order" if policy == "ros-default" else "chainrt's runtime"


def real_chains(tour: Tour, model: str, policy: str, duration: str, rt: bool, why_not: str | None) -> dict:
    """Per chain of one real run: mean_ns, p99_ns, wcrt_ns, deadline_misses ({} when it failed)."""
    if why_not is not None:
        fifo = ["--fifo", RUN_FIFO] if rt else []
        return chains_of(tour, "run", model, "--policy", policy, "--duration", duration, "--no-compare", *fifo)

    def fifo_child() -> None:  # the whole process (the executor's and the middleware's threads)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(RUN_FIFO)))

    executor = "single" if policy == "ros-default" else "chainrt"
    try:
        result = stock.run(model, executor, duration=cliargs.duration(duration) / 1e9,
                           policy=None if executor == "single" else policy, preexec_fn=fifo_child if rt else None)
    except (stock.StockRunFailed, stock.StockUnavailable) as err:
        tour.failed.append(f"the {real_label(policy, None)} run")
        print(f"   ({real_label(policy, None)} failed: {err})")
        return {}
    chains = {}
    for name, c in result["chains"].items():
        chains[name] = {"mean_ns": c["mean_ns"], "p99_ns": c["p99_ns"], "wcrt_ns": c["max_ns"],
                        "deadline_misses": c["deadline_misses"]} if c["instances"] else {}
        if c["lost"]:
            tour.warn(f"{name} under {real_label(policy, None)}: {c['lost']} of {c['released']} chain instance(s) "
                      "did not complete")
    return chains


def chains_of(tour: Tour, *args: str) -> dict:
    rc, out = tour.chainrt(*args, "--json")
    if rc not in (0, 2):
        return {}
    try:
        return json.loads(out)["chains"]
    except (ValueError, KeyError, TypeError):
        return {}


def reference_system(tour: Tour, duration: str, rt: bool) -> None:
    out_dir = ROOT / "out/demo"
    # Every executor thread on one core, the last this process may use: there the platform probe's
    # wake-ups preempt a thread without the kernel moving it to another CPU, which on several CPUs
    # reorders real-time threads of equal priority (a schedule no model of the layout has).
    core = max(os.sched_getaffinity(0))
    print(f"== 2. The Autoware reference system (upstream's 24-node graph, chainrt's replica, core {core}, "
          f"{duration} per configuration)")
    print("   The hot path runs from the front LiDAR's timer to the collision estimator; its floor is the")
    print("   work on the path. ROS 2's executors first, then PiCAS and EDF layouts.", flush=True)
    args = ["bench", "reference-system", "--duration", duration, "--repeat", "1", "--pin-core", str(core),
            "--out", str(out_dir)]
    rc, out = tour.chainrt(*args, *(["--rt-priority", BENCH_FIFO] if rt else []))
    if rc not in (0, 2):
        return
    try:
        result = json.loads((out_dir / "result.json").read_text())
    except (OSError, ValueError):
        tour.failed.append("chainrt bench")
        print(f"   (the benchmark wrote no result in {out_dir})")
        return
    floor = result.get("hot_path_floor_ns")
    rows = []
    for name, c in result.get("configs", {}).items():
        lat = c.get("hot_path_latency") or {}
        rows.append((name, c.get("summary", ""), output.ms(lat.get("mean_ns")), output.ms(lat.get("p99_ns")),
                     output.ms(lat.get("max_ns")), str(c.get("hot_path_drops", "-"))))
    print()
    columns(("configuration", "", "hot path mean", "p99", "max", "drops"), rows)
    print(f"   (ms; the hot path's work floor: {output.ms(floor)} ms) report with plots: {out_dir / 'index.html'}\n")
    accounting_table(tour, result)


# The accounting table's header: one column per cause (a cause's heading where it is not its name).
ACCOUNTING_HEADER = ("configuration", "chain", "above", "instances",
                     *({"bounded": "within bound"}.get(c, c) for c in CAUSES))


def accounting_rows(result: dict) -> list[tuple]:
    """Per configuration and KPI chain (the two hot-path chains together), the instances above the
    analysis bound (or, where they stay within it or there is none, above the simulated worst
    case), split by cause: the benchmark's accounting (verdict.kpi_accounting), in
    ACCOUNTING_HEADER's order. Chains with none above are left out."""
    rows = []
    for name, c in result.get("configs", {}).items():
        for chain in ("hot_path", "behavior_planner"):
            for against, label in (("chains", "bound"), ("simulated", "simulated")):
                total = verdict.kpi_accounting(c.get("accounting"), chain, against)
                if total and total["above"]:
                    rows.append((name, chain, label, str(total["above"]), *(str(total[k]) for k in CAUSES)))
                    break
    return rows


def accounting_table(tour: Tour, result: dict) -> None:
    rows = accounting_rows(result)
    tour.tabled = set(result.get("configs", {}))
    if not rows:
        print("   No real instance above its analysis bound or simulated worst case.\n")
        return
    print("   Real instances above the model's worst case, each accounted:")
    print("\n".join(output.table([ACCOUNTING_HEADER, *rows], left=(0, 1, 2), indent="   ")))
    print("   (above: the analysis bound, or the simulated worst case where the bound holds or there is none;")
    print("   platform: a CPU blackout in the instance's busy window; overrun: a callback over its WCET;")
    print("   runtime: the executor's own time, which the simulation leaves out; within bound: a schedule the")
    print("   simulation did not reach; unexplained: none of these, a defect)")
    first = len(ACCOUNTING_HEADER) - len(CAUSES)  # the first cause's column

    def total(cause: str) -> int:
        return sum(int(r[first + CAUSES.index(cause)]) for r in rows)

    if total(OVERRUN) and irq_time_accounting() is False:
        print("   (a callback's CPU time on this kernel, which has no IRQ time accounting, includes the interrupts")
        print("   and softirqs that arrived while it ran: an overrun may be the interrupt load's)")
    print()
    bad = total(UNEXPLAINED)
    if bad:
        tour.warn(f"{bad} real instance{'s' if bad > 1 else ''} above the model's worst case unexplained, a defect of "
                  "the model, an analysis or the executor: see the accounting table")


def run(args) -> int:
    tour = Tour()
    rc, out = tour.chainrt("check", str(ROOT / "examples/two_chains.yaml"))
    print(out)
    if rc != 0:
        return cliargs.ERROR
    rt = rt_allowed()
    if not rt:
        print("note: this user may not set real-time priorities (root, CAP_SYS_NICE or an rtprio limit is needed),"
              " so the real runs share the CPU with everything else on this machine\n")
    two_chains(tour, args.duration, rt)
    if not args.skip_bench:
        reference_system(tour, args.bench_duration, rt)
    tour.print_warnings()
    if tour.failed:
        print(f"chainrt demo: {len(tour.failed)} step(s) failed ({', '.join(sorted(set(tour.failed)))}); "
              "see the messages above", file=sys.stderr)
        return cliargs.ERROR
    print("What you saw: the same model analysed, simulated and run; a chain-aware order bounds the high chain")
    print("by its own work plus one low-priority callback, where ROS 2's order has no such bound.")
    print("Next: `chainrt analyze examples/autoware_reference.yaml`, `chainrt simulate ... --policy edf`, and your")
    print("own nodes under chainrt's ChainExecutor (rclcpp or rclpy) — README, 'Your own nodes'.")
    return 0
