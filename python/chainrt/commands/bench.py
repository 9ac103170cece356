"""``chainrt bench``: benchmarks.

``chainrt bench reference-system``: the ROS 2 Real-Time Working Group's Autoware reference
system (examples/autoware_reference.yaml) on real ROS 2 under chainrt, for the compared
executor configurations (ros-default-st, ros-default-mt, ros-default-prioritized,
picas-single, picas-multi, edf-st, edf-mt), with upstream's KPIs; the same configurations
through the simulator and the analysis. Prints the KPI table (or ``--json``), writes
result.json, kpis.csv, the plots and index.html into ``--out``. See docs/reference_system.md.

The output folder describes exactly one run: the run writes into a staging folder
``<out>.partial-<run id>`` beside it, with ``run.json`` (the run id and every file's SHA-256)
written last; only when the run is complete do its files replace those of ``--out``. A run that
fails or is interrupted leaves ``--out`` as it was and its staging folder marked by ``PARTIAL``
(docs/cli.md). ``--out`` must be a new folder, an empty one or an earlier output of this
benchmark (a folder holding exactly the files its ``run.json`` lists): the benchmark never
deletes or overwrites a file it did not write, and refuses a folder holding any other file
before it starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import cliargs, output, verdict
from ..janitor import guard, remove_stale_shm, shm_entries
from ..reference_system import configs, report, runner, upstream


def register(sub) -> None:
    p = sub.add_parser("bench", help="run benchmarks (the Autoware reference system) and report their KPIs")
    bsub = p.add_subparsers(dest="bench", metavar="BENCH", title="benchmarks")
    r = bsub.add_parser("reference-system",
                        help="Autoware reference system: chainrt vs the default executors, upstream KPIs, plots")
    r.add_argument("--duration", type=cliargs.duration, default="10s", help="measured time per run (default 10s; the committed figures: 60s)")
    r.add_argument("--warmup", type=cliargs.duration_or_zero, default="1s", help="run time before measuring (default 1s; the KPIs also skip "
                                                 "the first 10 samples at the sink, as upstream)")
    r.add_argument("--load", choices=["default", "stressed"], default="default",
                   help="default: the model's 2 ms per working callback; stressed: work scaled to 90%% of one core")
    r.add_argument("--configs", help="comma-separated configurations (default: all; see --list)")
    r.add_argument("--repeat", type=cliargs.positive, default=3, help="runs per configuration, interleaved (default 3)")
    r.add_argument("--pin-core", type=cliargs.cpu_core, help="run the whole process (all executor threads) on this CPU core")
    r.add_argument("--rt-priority", type=cliargs.fifo_priority,
                   help="SCHED_FIFO base priority for every executor thread that runs a chain with a deadline "
                        "(configurations keep their own order; the rest and the middleware stay SCHED_OTHER; "
                        "with --system upstream, a stock rclcpp executor's whole process runs at it; upstream's "
                        "prioritized layouts set their own)")
    r.add_argument("--workload", choices=["cpu", "primes"], default="cpu",
                   help="work per callback: calibrated thread CPU time (default) or upstream's prime count")
    r.add_argument("--planner-phase", type=cliargs.duration_or_zero, default="0ms", help="release offset of the BehaviorPlanner timer (default 0: all timers together)")
    r.add_argument("--creation-step", type=cliargs.duration, help="timer phases as upstream's sequential node creation gives them: "
                   "the timer of the k-th node starts at k x STEP (e.g. 1ms; default: all timers together)")
    r.add_argument("--system", choices=["replica", "upstream"], default="replica",
                   help="replica: chainrt's re-creation of the workload on the chainrt runtime (default); upstream: "
                        "upstream's own nodes on real rclcpp, stock rclcpp executors and chainrt's ChainExecutor")
    r.add_argument("--number-cruncher-limit", type=cliargs.positive,
                   help="upstream: the prime-count limit of every working node (default: calibrated to the load's "
                        "CPU time per working callback on this machine)")
    r.add_argument("--model", type=cliargs.input_file, help="the reference model (default examples/autoware_reference.yaml)")
    r.add_argument("--out", type=cliargs.output_dir, default="out/reference-system", help="output folder (default out/reference-system)")
    r.add_argument("--json", action="store_true", help="print the result as JSON (no samples) instead of the table")
    r.add_argument("--model-only", action="store_true", help="no real run: only the simulator and the analysis")
    r.add_argument("--no-sim", action="store_true", help="skip the simulator")
    r.add_argument("--no-analysis", action="store_true", help="skip the analysis")
    r.add_argument("--no-platform-probe", action="store_true",
                   help="do not measure the platform's blackouts beside the runs (by default a SCHED_FIFO 99 probe "
                        "per CPU does, when run as root, and the chains are also bounded with them)")
    r.add_argument("--no-plots", action="store_true", help="skip the PNGs")
    r.add_argument("--gantt", action="store_true",
                   help="trace the first run of each configuration and draw its executor threads (Gantt PNG)")
    r.add_argument("--list", action="store_true", help="list the configurations and exit")
    r.add_argument("--fail-on-miss", action="store_true",
                   help="exit 2 when a measured worst case exceeds its analysis bound")
    r.set_defaults(func=run_reference_system)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def _manifest(folder: Path, run_id: str, partial: str | None = None) -> None:
    """run.json: the run id and the SHA-256 of every file of the folder (written last)."""
    import hashlib
    files = {}
    for f in sorted(folder.rglob("*")):
        if f.is_file() and f.name not in ("run.json", "PARTIAL"):
            files[str(f.relative_to(folder))] = hashlib.sha256(f.read_bytes()).hexdigest()
    doc = {"run_id": run_id, "complete": partial is None, "files": files}
    if partial is not None:
        doc["partial"] = partial
        cliargs.write_atomic(folder / "PARTIAL", f"run {run_id}: {partial}\n")
    cliargs.write_atomic(folder / "run.json", json.dumps(doc, indent=1))


def _listed(folder: Path) -> set[str] | None:
    """The files an earlier output of this benchmark in `folder` consists of (its run.json's list,
    with run.json and PARTIAL), or None when `folder` holds no such run.json."""
    try:
        doc = json.loads((folder / "run.json").read_text())
        files = doc["files"]
        if not isinstance(doc.get("run_id"), str) or not isinstance(files, dict):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {str(Path(f)) for f in files} | {"run.json", "PARTIAL"}


def out_problem(out: Path, model: Path | None = None) -> str | None:
    """Why the benchmark may not use `out` as its output folder, or None: it must be new, empty
    or an earlier output of this benchmark holding nothing else (the files a run replaces are
    exactly the ones it wrote), and must not hold the --model file."""
    if not out.exists():
        return None
    if not out.is_dir():
        return f"{out}: exists and is not a folder"
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if not p.is_dir())
    if not present:
        return None
    listed = _listed(out)
    if model is not None and listed is not None:
        try:
            model.resolve().relative_to(out.resolve())
            return (f"--model {model} lies inside --out {out}, whose files the run replaces; "
                    "copy the model elsewhere or choose another --out")
        except ValueError:
            pass
    foreign = [p for p in present if listed is None or p not in listed]
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        return (f"--out {out} holds files that are not the output of an earlier benchmark run ({shown}); "
                "chainrt bench replaces only its own output: choose a new or empty folder")
    return None


def _publish(staging: Path, out: Path, run_id: str) -> None:
    """Puts the complete `staging` folder in place of `out`: a new `out` is the staging folder
    renamed; an existing one (empty, or an earlier output: out_problem) keeps its identity: the
    earlier run's files are removed, the new ones moved in, run.json last."""
    import os
    if not out.exists():
        staging.rename(out)
        return
    problem = out_problem(out)
    if problem:  # something appeared in the folder during the run: leave everything as it is
        raise OSError(problem)
    for rel in sorted(_listed(out) or (), key=lambda r: -r.count("/")):
        (out / rel).unlink(missing_ok=True)
    for d in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        try:
            d.rmdir()  # only folders the earlier run's files left empty
        except OSError:
            pass
    for entry in sorted(staging.iterdir(), key=lambda p: p.name == "run.json"):
        os.replace(entry, out / entry.name)
    staging.rmdir()


def run_reference_system(args) -> int:
    import os
    import shutil
    import uuid
    if args.list:
        if args.system == "upstream":
            rows = [(st.name, st.summary) for st in upstream.STOCK.values()]
            rows += [(n, f"{configs.CONFIGS[n].summary}, on rclcpp (ChainExecutor)") for n in upstream.CHAIN_CONFIGS]
        else:
            rows = [(c.name, c.summary) for c in configs.CONFIGS.values()]
        print("\n".join(output.table(rows, left="all", sep=" ", rstrip=True)))
        return 0
    run_id = uuid.uuid4().hex[:12]
    out = Path(os.path.abspath(args.out))  # "." and "..": the folder by its own name
    problem = out_problem(out, Path(args.model) if args.model else None)
    if problem:
        print(f"chainrt bench: {problem}", file=sys.stderr)
        return cliargs.ERROR
    staging = out.with_name(f"{out.name}.partial-{run_id}")
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        print(f"chainrt bench: cannot create {staging}: {err.strerror}", file=sys.stderr)
        return cliargs.ERROR
    shm_before = shm_entries()
    # a killed bench (SIGKILL) leaves neither its staging folder nor Fast DDS files behind
    with guard() as watcher:
        watcher.remove_if_killed(staging)
        try:
            return _run_reference_system(args, run_id, out, staging, configs, report, runner)
        except KeyboardInterrupt:
            _mark_partial(staging, run_id, "interrupted")
            print(f"chainrt bench: interrupted; {out} is unchanged, the partial run is in {staging}", file=sys.stderr)
            return cliargs.INTERRUPTED
        finally:
            remove_stale_shm(shm_before)  # Fast DDS files a failed or killed workload left behind
            if staging.exists() and not (staging / "PARTIAL").exists():
                shutil.rmtree(staging, ignore_errors=True)  # nothing worth keeping (e.g. a bad argument)


def _mark_partial(staging: Path, run_id: str, why: str) -> None:
    try:
        _manifest(staging, run_id, partial=why)
    except OSError:
        pass


def _run_reference_system(args, run_id, out, staging, configs, report, runner) -> int:
    try:
        opts = runner.BenchOptions(
            duration_ns=args.duration, warmup_ns=args.warmup, load=args.load,
            configs=configs.parse_configs(args.configs, args.system), repeat=args.repeat, pin_core=args.pin_core,
            workload=args.workload, out_dir=staging, simulate=not args.no_sim, analyze=not args.no_analysis,
            planner_phase_ns=args.planner_phase, real=not args.model_only, rt_priority=args.rt_priority,
            gantt=args.gantt, creation_step_ns=args.creation_step, platform_probe=not args.no_platform_probe,
            system=args.system, number_cruncher_limit=args.number_cruncher_limit)
        if args.model:
            opts.base_model = Path(args.model)
        if opts.repeat < 1:
            raise ValueError("--repeat must be at least 1")
        if opts.duration_ns <= 0:
            raise ValueError("--duration must be positive")
        if opts.real:
            for w in verdict.start_warnings(None, fifo=args.rt_priority, how="--rt-priority PRIO"):
                print(f"warning: {w}", file=sys.stderr)
        result = runner.run_bench(opts)
    except runner.upstream.UpstreamNotBuilt as err:
        print(f"chainrt bench: {err}", file=sys.stderr)
        return 1
    except runner.WorkloadNotFound as err:
        print(f"chainrt bench: {err}\n(--model-only runs the simulator and the analysis without ROS 2)", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError, OSError) as err:
        print(f"chainrt bench: {err}", file=sys.stderr)
        if any(staging.iterdir()):
            _mark_partial(staging, run_id, f"failed: {err}")
        return 1
    except (IndexError, KeyError) as err:  # a model without the reference system's chains/callbacks
        print(f"chainrt bench: {opts.base_model} cannot be used by the reference-system benchmark "
              f"(it needs the Autoware reference topology): {err}", file=sys.stderr)
        return 1
    result["run_id"] = run_id
    result["verdict"] = verdict.bench_findings(result)
    try:
        written = report.write_report(result, staging, plots=not args.no_plots)
        _manifest(staging, run_id)
    except OSError as err:
        _mark_partial(staging, run_id, f"the report could not be written: {err}")
        print(f"chainrt bench: cannot write the report: {err}", file=sys.stderr)
        return 1
    try:
        _publish(staging, out, run_id)
    except OSError as err:
        _mark_partial(staging, run_id, f"could not replace {out}: {err}")
        print(f"chainrt bench: the run is complete in {staging} but could not replace {out}: "
              f"{err.strerror or err}", file=sys.stderr)
        return 1
    written = {k: (out / v.relative_to(staging) if isinstance(v, Path) else
                   [out / i.relative_to(staging) for i in v] if isinstance(v, list) else v)
               for k, v in written.items()}
    if args.json:
        output.emit_json(report.public_json(result))
    else:
        print(written["table"])
        csv_note = f", CSV {written['csv']}" if written["csv"].is_file() else ""
        print(f"report: {written['html']}  (JSON {written['json']}{csv_note}, {len(written['images'])} plots)")
    for line in result["verdict"]:
        print(f"warning: {line}", file=sys.stderr)
    return 2 if args.fail_on_miss and any("analysis bound" in x for x in result["verdict"]) else 0
