"""``chainrt run MODEL``: run a model on real ROS 2 under the chainrt executor.

Every callback burns its WCET as thread CPU time and publishes a message of its topic's size to
the next hop; one ``chainrt-run`` process per ``process`` of the model. Prints per chain the
observed WCRT, BCRT, mean, p99, deadline misses and drops, next to the simulator's result and
the analysis bound for the same model and policy when those are available in ``chainrt._core``.
"""

from __future__ import annotations

import tempfile

from .. import accounting, cliargs, output, release_grid, runtime, verdict
from ..analysis import analysis_for_policy
from ..crosslayer import cli as xcli
from ..crosslayer.kernel import KernelPathUnavailable
from ..simulation import simulate
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("run", help=help_of("run"))
    p.add_argument("model", metavar="MODEL", type=cliargs.model_path, help="model YAML file")
    # the run's own options: the table every chainrt-run reads too (runtime/run_options.def)
    keys = cliargs.add_run_options(p)
    p.add_argument("--no-compare", action="store_true", help="do not run the simulator and the analysis")
    p.add_argument("--json", action="store_true", help="print JSON (the simulator's per-chain keys)")
    p.add_argument("--fail-on-miss", action="store_true",
                   help="exit 2 when a chain misses a deadline or exceeds its analysis bound")
    p.add_argument("--no-platform-probe", action="store_true",
                   help="do not measure the CPUs' blackouts beside the run (the accounting then cannot name the "
                        "platform as a cause)")
    xcli.add_run_arguments(p)
    p.set_defaults(func=run, run_option_keys=keys)


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


def _execute(args, model, traces: str):
    """The run itself (locally with the platform probe beside it, or on the model's hosts):
    (result, probe or None, a note when the platform was not measured, whether it is accounted)."""
    kwargs = dict(model=model, warmup_ns=args.warmup, thread_params=not args.no_thread_params,
                  options=cliargs.run_option_values(args, args.run_option_keys))
    if xcli.wanted(args, model):  # (hosts in namespaces: their own experiments' accounting)
        return xcli.run_model(args, args.duration, **kwargs), None, None, False
    return (*_measured_run(args, args.duration, kwargs, traces), True)


def _result_notes(result: dict) -> list[str]:
    """What the user must know to read the figures: an interruption, failed processes."""
    notes = []
    if result.get("interrupted"):
        notes.append("interrupted: the figures cover the time run until the signal")
    if result.get("failed_processes"):
        notes.append("partial: process(es) " + ", ".join(f["process"] for f in result["failed_processes"])
                     + " failed; the figures are those of the other processes")
    return notes


def _compare(args, model, result: dict, notes: list[str]):
    """The simulator's result and the analysis bound for the same model and policy (sim, bound;
    None where not asked for, interrupted or unavailable, with a note)."""
    sim = bound = None
    if args.no_compare or result.get("interrupted"):
        return sim, bound
    try:  # a Ctrl-C here skips the comparison; the run's figures are still reported
        sim, note = _simulate(model, args.policy, args.threads, args.duration + args.warmup)
        if note:
            notes.append(note)
        bound, note = _analyse(model, args.policy or result.get("policy"), args.threads)
        if note:
            notes.append(note)
    except KeyboardInterrupt:
        result["interrupted"] = True
        notes.append("interrupted during the comparison with the simulator and the analysis (skipped)")
    return sim, bound


def _account(args, model, result: dict, traces: str, probe, probe_note, bound, sim, judged):
    """The accounting of the run's deadline misses and bound excesses (chainrt.accounting), its
    causes attached to the verdict's findings; None for a run on the model's hosts."""
    account = accounting.after_run(
        model, traces, probe, probe_note, *accounting.bounds_of(model, bound, sim),
        set(result.get("model_tids", [])), args.warmup, not (args.no_thread_params or args.threads),
        bool(args.fifo) or (not args.no_thread_params and verdict.model_asks_rt(model)), sim)
    if account is not None:
        accounting.attribute(judged.findings, account)
        account["notes"] += accounting.coverage_notes(account, result["chains"])
    return account


def _emit_json(args, result: dict, report: dict) -> None:
    """The run as one JSON document (docs/cli.md)."""
    sim, bound, account = report["sim"], report["bound"], report["account"]
    out = {"model": args.model, "run_id": result.get("run_id"), "policy": result.get("policy"),
           "threads": result.get("threads"), "duration_ns": result.get("duration_ns"),
           "processes": result.get("processes"),
           "interrupted": bool(result.get("interrupted")), "timed_out": bool(result.get("timed_out")),
           "failed_processes": result.get("failed_processes", []), "partial": bool(result.get("partial")),
           "exit_code": exit_code(result),
           "chains": result["chains"], "callbacks": result.get("callbacks", {}),
           "warnings": result.get("warnings", []) + report["grid_warnings"], "notes": report["notes"],
           "release_jitter": report["grid_rows"]}
    if sim is not None:
        out["simulated"] = sim
    if bound is not None:
        out["analysis"] = bound
    out["run_id"] = result.get("run_id")
    if "lame_controller" in result:
        out["lame_controller"] = result["lame_controller"]
    out["verdict"] = report["judged"].to_json()
    if account is not None:
        out["accounting"] = account
    output.emit_json(out)


def _chain_rows(result: dict, sim, bound) -> list[str]:
    """The table of chains: measured, then simulated and bound where there are."""
    head = ["chain", "wcrt", "bcrt", "mean", "p99", "inst", "miss", "drop"]
    if sim is not None:
        head += ["|", "sim wcrt", "sim mean", "sim p99", "sim miss"]
    if bound is not None:
        head += ["|", "bound"]
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
    return lines


def _print_report(args, result: dict, report: dict) -> None:
    """The run for a person: a header line, the table of chains, then LaME's activations, the
    release jitter, warnings, notes, the verdict and the accounting."""
    notes, bound, account = report["notes"], report["bound"], report["account"]
    print(f"{args.model}: policy {result.get('policy')}, {result.get('threads')} thread(s), "
          f"processes {', '.join(result.get('processes', []))}, "
          f"{(result.get('duration_ns', 0) if result.get('interrupted') else args.duration) / 1e9:g} s on real ROS 2")
    if bound is not None:
        notes.insert(0, f"bound: analysis {bound.get('analysis')}")
    print("\n".join(_chain_rows(result, report["sim"], bound)))
    for a in result.get("lame_controller", []):
        print(f"lame controller +{a['at_ns'] / 1e9:.2f} s ({a['trigger']}): {a['decision']} - {a['why']} "
              f"[{a['decide_cpu_ms'] + a['apply_cpu_ms']:.2f} ms CPU]" +
              (f"; {'; '.join(a['classes'])}" if a["classes"] else "") +
              "".join(f"; refused: {e}" for e in a["errors"]))
    if report["grid_rows"]:
        print(release_grid.format_rows(report["grid_rows"]))
    for w in result.get("warnings", []) + report["grid_warnings"]:
        print(f"warning: {w}")
    for n in notes:
        print(f"note: {n}")
    for line in report["judged"].lines():
        print(f"warning: {line}")
    if account is not None:
        print("\n".join(accounting.report_lines(account, output.color_wanted())))
        for n in account["notes"]:
            print(f"note: {n}")


@cliargs.with_model("run")  # every error of the file, before ROS 2 starts
def run(args, model) -> int:
    """Runs the model (one chainrt-run per process), compares it with the simulator and the
    analysis, judges and accounts for what it measured, and reports it."""
    if args.lame_controller is not None:
        args.no_compare = True  # the plan changes at run time: no single model to simulate
    watch = verdict.RunWatch(model, args.fifo, not args.no_thread_params)
    traces = tempfile.TemporaryDirectory(prefix="chainrt-trace-")
    try:
        result, probe, probe_note, accounted = _execute(args, model, traces.name)
    except (runtime.RuntimeNotFound, RuntimeError, ValueError) as e:
        traces.cleanup()
        return cliargs.fail("run", e)
    notes = _result_notes(result)
    sim, bound = _compare(args, model, result, notes)
    judged = watch.finish(result, bound, sim)
    with traces:
        account = _account(args, model, result, traces.name, probe, probe_note, bound, sim, judged) \
            if accounted else None
    grid_rows, grid_warnings = _release_grid(model, result.get("callbacks", {}))
    # a failed process is an error and an interruption 130 whatever the verdict; otherwise the
    # negative verdict (a chain above its bound or simulated worst case) on request
    code = exit_code(result)
    if code == cliargs.OK and args.fail_on_miss and judged.negative:
        code = cliargs.NEGATIVE
    report = {"sim": sim, "bound": bound, "judged": judged, "account": account, "notes": notes,
              "grid_rows": grid_rows, "grid_warnings": grid_warnings}
    if args.json:
        _emit_json(args, result, report)
    else:
        _print_report(args, result, report)
    return code
