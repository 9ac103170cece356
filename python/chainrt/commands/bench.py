"""``chainrt bench``: benchmarks.

``chainrt bench reference-system``: the ROS 2 Real-Time Working Group's Autoware reference
system (examples/autoware_reference.yaml) on real ROS 2 under chainrt, for the compared
executor configurations (ros-default-st, ros-default-mt, ros-default-prioritized,
picas-single, picas-multi, edf-st, edf-mt), with upstream's KPIs; the same configurations
through the simulator and the analysis. Prints the KPI table (or ``--json``), writes
result.json, kpis.csv, the plots and index.html into ``--out``. See docs/reference_system.md.

The output folder describes exactly one run: the run writes into a staging folder
``<out>.partial-<run id>`` which replaces ``--out`` only when it is complete, with ``run.json``
(the run id and every file's SHA-256) written last; a run that fails or is interrupted leaves
``--out`` as it was and its staging folder marked by ``PARTIAL`` (docs/cli.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import cliargs


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
                   help="SCHED_FIFO base priority for every executor thread (configurations keep their own order)")
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


def _publish(staging: Path, out: Path, run_id: str) -> None:
    """Replaces `out` by the complete `staging` folder (two renames; the old one is removed)."""
    import shutil
    old = out.with_name(f"{out.name}.old-{run_id}")
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def run_reference_system(args) -> int:
    import shutil
    import uuid
    from ..reference_system import configs, report, runner
    if args.list:
        if args.system == "upstream":
            from ..reference_system import upstream
            for st in upstream.STOCK.values():
                print(f"{st.name:<30} {st.summary}")
            for n in upstream.CHAIN_CONFIGS:
                print(f"{n:<30} {configs.CONFIGS[n].summary}, on rclcpp (ChainExecutor)")
            return 0
        for c in configs.CONFIGS.values():
            print(f"{c.name:<24} {c.summary}")
        return 0
    run_id = uuid.uuid4().hex[:12]
    out = Path(args.out)
    staging = out.with_name(f"{out.name}.partial-{run_id}")
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        print(f"chainrt bench: cannot create {staging}: {err.strerror}", file=sys.stderr)
        return cliargs.ERROR
    from ..runtime import shm_entries, remove_stale_shm
    shm_before = shm_entries()
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
        if opts.system == "upstream":
            # upstream's nodes start their timers one after another as they are created (phases
            # no model states); the simulator and the analysis compare with the replica
            opts.simulate = opts.analyze = False
        if args.model:
            opts.base_model = Path(args.model)
        if opts.repeat < 1:
            raise ValueError("--repeat must be at least 1")
        if opts.duration_ns <= 0:
            raise ValueError("--duration must be positive")
        if opts.real:
            from .. import verdict
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
    from .. import verdict
    result["verdict"] = verdict.bench_findings(result)
    try:
        written = report.write_report(result, staging, plots=not args.no_plots)
        _manifest(staging, run_id)
        _publish(staging, out, run_id)
    except OSError as err:
        _mark_partial(staging, run_id, f"the report could not be written: {err}")
        print(f"chainrt bench: cannot write the report: {err}", file=sys.stderr)
        return 1
    written = {k: (out / v.relative_to(staging) if isinstance(v, Path) else
                   [out / i.relative_to(staging) for i in v] if isinstance(v, list) else v)
               for k, v in written.items()}
    if args.json:
        print(json.dumps(report.public_json(result)))
    else:
        print(written["table"])
        csv_note = f", CSV {written['csv']}" if written["csv"].is_file() else ""
        print(f"report: {written['html']}  (JSON {written['json']}{csv_note}, {len(written['images'])} plots)")
    for line in result["verdict"]:
        print(f"warning: {line}", file=sys.stderr)
    return 2 if args.fail_on_miss and any("analysis bound" in x for x in result["verdict"]) else 0
