"""``chainrt run MODEL``: run a model on real ROS 2 under the chainrt executor.

Every callback burns its WCET as thread CPU time and publishes a message of its topic's size to
the next hop; one ``chainrt-run`` process per ``process`` of the model. Prints per chain the
observed WCRT, BCRT, mean, p99, deadline misses and drops, next to the simulator's result and
the analysis bound for the same model and policy when those are available in ``chainrt._core``.
"""

from __future__ import annotations

import sys
import tempfile

from .. import accounting, cliargs, output, release_grid, runtime, verdict
from ..analysis import analysis_for_policy
from ..crosslayer import cli as xcli
from ..crosslayer.kernel import KernelPathUnavailable
from ..model import policy_names
from ..simulation import simulate



def register(sub) -> None:
    p = sub.add_parser("run", help="run a model on real ROS 2 (rcl + Fast DDS) under the chainrt executor")
    p.add_argument("model", metavar="MODEL", type=cliargs.model_path, help="model YAML file")
    p.add_argument("--duration", type=cliargs.duration, default="30s", help="measured run time (default 30s)")
    p.add_argument("--warmup", type=cliargs.duration_or_zero, default="500ms",
                   help="unmeasured start-up time (default 500ms)")
    p.add_argument("--policy", choices=policy_names(), help="override every executor's policy")
    p.add_argument("--threads", type=cliargs.threads,
                   help="N plain threads per executor, 1..64 (ignores the model's threads)")
    p.add_argument("--fifo", type=cliargs.fifo_priority, metavar="PRIO",
                   help="SCHED_FIFO priority for executor threads the model gives none (needs privilege)")
    p.add_argument("--no-thread-params", action="store_true",
                   help="ignore the model's pinning, priorities and reservations")
    p.add_argument("--stats-period", type=cliargs.duration, default=None, help="publish /chainrt/chain_stats every PERIOD")
    p.add_argument("--no-compare", action="store_true", help="do not run the simulator and the analysis")
    p.add_argument("--json", action="store_true", help="print JSON (the simulator's per-chain keys)")
    p.add_argument("--fail-on-miss", action="store_true",
                   help="exit 2 when a chain misses a deadline or exceeds its analysis bound")
    p.add_argument("--no-platform-probe", action="store_true",
                   help="do not measure the CPUs' blackouts beside the run (the accounting then cannot name the "
                        "platform as a cause)")
    p.add_argument("--namespace", metavar="NS",
                   help="run nodes and topics under NS (default: the model's own names)")
    xcli.add_run_arguments(p)
    p.add_argument("--lame-controller", nargs="?", const=10_000_000_000, default=None, metavar="PERIOD",
                   type=cliargs.duration,
                   help="run LaME's controller: plan the model's chains (thread classes, budgets), re-plan every "
                        "PERIOD (default 10s) and on an RT deadline miss with the measured execution times")
    p.add_argument("--scale-wcet", action="append", default=[], metavar="AT:FACTOR", type=cliargs.time_factor,
                   help="from AT after the start, every callback burns FACTOR x its WCET (repeatable; "
                        "emulates a CPU frequency change)")
    p.set_defaults(func=run)


def _release_grid(model, callbacks: dict) -> tuple[list[dict], list[str]]:
    """The timers' measured release jitter against the grid (chainrt.release_grid)."""
    try:
        return release_grid.release_report(model, callbacks)
    except (ImportError, ValueError, RuntimeError):
        return [], []


def _simulate(model, policy: str | None, threads: int | None, duration_ns: int):
    """The simulator's per-chain result for the same model and policy, or (None, note)."""
    try:
        summary, _ = simulate(model, duration_ns, policy=policy, threads=threads)
        return summary.get("chains", {}), None
    except AttributeError as e:  # bindings not built into this chainrt._core
        return None, f"simulator bindings not built ({e})"
    except Exception as e:  # report, do not fail the run
        return None, f"simulator call failed: {e}"


def _analyse(model, policy: str | None, threads: int | None):
    """The bound of the analysis matching `policy` (chainrt analyze), or (None, note)."""
    if threads:
        return None, "no analysis bound shown with --threads (the model's threads differ)"
    try:
        return analysis_for_policy(model, policy)
    except Exception as e:  # report, do not fail the run
        return None, f"analysis call failed: {e}"


def _measured_run(args, duration: int, kwargs: dict, trace_dir: str):
    """The run with every process tracing its dispatches into ``trace_dir`` and, unless
    --no-platform-probe, the platform probe beside it: (result, the probe or None, a note when
    the platform was not measured)."""
    probe, note = (None, "platform not measured (--no-platform-probe)") if args.no_platform_probe else \
        accounting.probe_beside((duration + args.warmup) / 1e9 + 60)
    if probe is None:
        return runtime.run_model(args.model, duration, trace_dir=trace_dir, **kwargs), None, note
    result = None
    try:
        with probe:
            result = runtime.run_model(args.model, duration, trace_dir=trace_dir, **kwargs)
    except KernelPathUnavailable as e:  # the probe could not start or failed: the run is still reported
        if result is None:
            result = runtime.run_model(args.model, duration, trace_dir=trace_dir, **kwargs)
        return result, None, f"platform not measured: {e}"
    return result, probe, None


def exit_code(result: dict) -> int:
    """1 when a process failed (never 0), 130 when interrupted, else 0 (docs/cli.md)."""
    if result.get("failed_processes"):
        return cliargs.ERROR
    if result.get("interrupted"):
        return cliargs.INTERRUPTED
    return cliargs.OK


@cliargs.with_model("run")  # every error of the file, before ROS 2 starts
def run(args, model) -> int:
    duration, warmup = args.duration, args.warmup
    stats = args.stats_period or 0
    extra = []
    if args.lame_controller is not None:
        extra += ["--lame-controller", f"{args.lame_controller}ns"]
        args.no_compare = True  # the plan changes at run time: no single model to simulate
    for at, factor in args.scale_wcet:
        extra += ["--scale-wcet", f"{at}ns:{factor!r}"]
    watch = verdict.RunWatch(model, args.fifo, not args.no_thread_params)
    kwargs = dict(policy=args.policy, threads=args.threads, warmup_ns=warmup, fifo=args.fifo,
                  thread_params=not args.no_thread_params, stats_period_ns=stats, namespace=args.namespace,
                  extra_args=extra)
    traces = tempfile.TemporaryDirectory(prefix="chainrt-trace-")
    try:
        accounted = not xcli.wanted(args, model)  # (hosts in namespaces: their own experiments' accounting)
        if not accounted:
            result, probe, probe_note = xcli.run_model(args, model, duration, **kwargs), None, None
        else:
            result, probe, probe_note = _measured_run(args, duration, kwargs, traces.name)
    except (runtime.RuntimeNotFound, RuntimeError, ValueError) as e:
        traces.cleanup()
        return cliargs.fail("run", e)

    notes = []
    if result.get("interrupted"):
        notes.append("interrupted: the figures cover the time run until the signal")
    if result.get("failed_processes"):
        notes.append("partial: process(es) " + ", ".join(f["process"] for f in result["failed_processes"])
                     + " failed; the figures are those of the other processes")
    sim = bound = None
    if not args.no_compare and not result.get("interrupted"):
        try:  # a Ctrl-C here skips the comparison; the run's figures are still reported
            sim, note = _simulate(model, args.policy, args.threads, duration + warmup)
            if note:
                notes.append(note)
            bound, note = _analyse(model, args.policy or result.get("policy"), args.threads)
            if note:
                notes.append(note)
        except KeyboardInterrupt:
            result["interrupted"] = True
            notes.append("interrupted during the comparison with the simulator and the analysis (skipped)")

    judged = watch.finish(result, bound, sim)
    with traces:
        account = None if not accounted else accounting.after_run(
            model, traces.name, probe, probe_note, *accounting.bounds_of(model, bound, sim),
            set(result.get("model_tids", [])), warmup, not (args.no_thread_params or args.threads),
            bool(args.fifo) or (not args.no_thread_params and verdict.model_asks_rt(model)), sim)
    if account is not None:
        accounting.attribute(judged.findings, account)
        account["notes"] += accounting.coverage_notes(account, result["chains"])
    grid_rows, grid_warnings = _release_grid(model, result.get("callbacks", {}))
    # a failed process is an error and an interruption 130 whatever the verdict; otherwise the
    # negative verdict (a chain above its bound or simulated worst case) on request
    code = exit_code(result)
    if code == cliargs.OK and args.fail_on_miss and judged.negative:
        code = cliargs.NEGATIVE
    if args.json:
        out = {"model": args.model, "run_id": result.get("run_id"), "policy": result.get("policy"),
               "threads": result.get("threads"), "duration_ns": result.get("duration_ns"),
               "processes": result.get("processes"),
               "interrupted": bool(result.get("interrupted")), "timed_out": bool(result.get("timed_out")),
               "failed_processes": result.get("failed_processes", []), "partial": bool(result.get("partial")),
               "exit_code": exit_code(result),
               "chains": result["chains"], "callbacks": result.get("callbacks", {}),
               "warnings": result.get("warnings", []) + grid_warnings, "notes": notes,
               "release_jitter": grid_rows}
        if sim is not None:
            out["simulated"] = sim
        if bound is not None:
            out["analysis"] = bound
        out["run_id"] = result.get("run_id")
        if "lame_controller" in result:
            out["lame_controller"] = result["lame_controller"]
        out["verdict"] = judged.to_json()
        if account is not None:
            out["accounting"] = account
        output.emit_json(out)
        return code

    print(f"{args.model}: policy {result.get('policy')}, {result.get('threads')} thread(s), "
          f"processes {', '.join(result.get('processes', []))}, "
          f"{(result.get('duration_ns', 0) if result.get('interrupted') else duration) / 1e9:g} s on real ROS 2")
    head = ["chain", "wcrt", "bcrt", "mean", "p99", "inst", "miss", "drop"]
    if sim is not None:
        head += ["|", "sim wcrt", "sim mean", "sim p99", "sim miss"]
    if bound is not None:
        head += ["|", "bound"]
        notes.insert(0, f"bound: analysis {bound.get('analysis')}")
    rows = [head]
    for name, c in result["chains"].items():
        if c.get("never_completed"):
            row = [name, "never", "-", "-", "-", 0, "-", c["drops"]]
        else:
            row = [name, *(output.ms(c[k]) for k in ("wcrt_ns", "bcrt_ns", "mean_ns", "p99_ns")),
                   c["instances"], c["deadline_misses"], c["drops"]]
        if sim is not None:
            s = sim.get(name, {}) if isinstance(sim, dict) else {}
            row += ["|", *(output.ms(s.get(k)) for k in ("wcrt_ns", "mean_ns", "p99_ns")), s.get("deadline_misses", "-")]
        if bound is not None:
            b = bound.get("chains", {}).get(name, {}) if isinstance(bound, dict) else {}
            row += ["|", output.ms(b.get("wcrt_bound_ns"))]
        rows.append(row)
    lines = output.table(rows, sep=" ")
    lines[0] += "   (ms)"
    print("\n".join(lines))
    for a in result.get("lame_controller", []):
        print(f"lame controller +{a['at_ns'] / 1e9:.2f} s ({a['trigger']}): {a['decision']} - {a['why']} "
              f"[{a['decide_cpu_ms'] + a['apply_cpu_ms']:.2f} ms CPU]" +
              (f"; {'; '.join(a['classes'])}" if a["classes"] else "") +
              "".join(f"; refused: {e}" for e in a["errors"]))
    if grid_rows:
        print(release_grid.format_rows(grid_rows))
    for w in result.get("warnings", []) + grid_warnings:
        print(f"warning: {w}")
    for n in notes:
        print(f"note: {n}")
    for line in judged.lines():
        print(f"warning: {line}")
    if account is not None:
        print("\n".join(accounting.report_lines(account, output.color_wanted())))
        for n in account["notes"]:
            print(f"note: {n}")
    return code
