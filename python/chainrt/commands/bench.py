"""``chainrt bench``: benchmarks.

``chainrt bench reference-system``: the ROS 2 Real-Time Working Group's Autoware reference
system (examples/autoware_reference.yaml) on real ROS 2 under chainrt, for the compared
executor configurations (ros-default-st, ros-default-mt, ros-default-prioritized,
picas-single, picas-multi, edf-st, edf-mt), with upstream's KPIs; the same configurations
through the simulator and the analysis. Prints the KPI table (or ``--json``), writes
result.json, kpis.csv, the plots and index.html into ``--out``. See docs/reference_system.md.
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
    r.add_argument("--model", type=cliargs.input_file, help="the reference model (default examples/autoware_reference.yaml)")
    r.add_argument("--out", type=cliargs.output_dir, default="out/reference-system", help="output folder (default out/reference-system)")
    r.add_argument("--json", action="store_true", help="print the result as JSON (no samples) instead of the table")
    r.add_argument("--model-only", action="store_true", help="no real run: only the simulator and the analysis")
    r.add_argument("--no-sim", action="store_true", help="skip the simulator")
    r.add_argument("--no-analysis", action="store_true", help="skip the analysis")
    r.add_argument("--no-plots", action="store_true", help="skip the PNGs")
    r.add_argument("--gantt", action="store_true",
                   help="trace the first run of each configuration and draw its executor threads (Gantt PNG)")
    r.add_argument("--list", action="store_true", help="list the configurations and exit")
    r.set_defaults(func=run_reference_system)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def run_reference_system(args) -> int:
    from ..reference_system import configs, report, runner
    if args.list:
        for c in configs.CONFIGS.values():
            print(f"{c.name:<24} {c.summary}")
        return 0
    try:
        opts = runner.BenchOptions(
            duration_ns=args.duration, warmup_ns=args.warmup, load=args.load,
            configs=configs.parse_configs(args.configs), repeat=args.repeat, pin_core=args.pin_core,
            workload=args.workload, out_dir=Path(args.out), simulate=not args.no_sim, analyze=not args.no_analysis,
            planner_phase_ns=args.planner_phase, real=not args.model_only, rt_priority=args.rt_priority,
            gantt=args.gantt)
        if args.model:
            opts.base_model = Path(args.model)
        if opts.repeat < 1:
            raise ValueError("--repeat must be at least 1")
        if opts.duration_ns <= 0:
            raise ValueError("--duration must be positive")
        result = runner.run_bench(opts)
    except runner.WorkloadNotFound as err:
        print(f"chainrt bench: {err}\n(--model-only runs the simulator and the analysis without ROS 2)", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError, OSError) as err:
        print(f"chainrt bench: {err}", file=sys.stderr)
        return 1
    written = report.write_report(result, opts.out_dir, plots=not args.no_plots)
    if args.json:
        print(json.dumps(report.public_json(result)))
    else:
        print(written["table"])
        csv_note = f", CSV {written['csv']}" if written["csv"].is_file() else ""
        print(f"report: {written['html']}  (JSON {written['json']}{csv_note}, {len(written['images'])} plots)")
    return 0
