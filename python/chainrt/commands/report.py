"""``chainrt report MODEL``: one HTML page with the analysis, the simulation and the measured
behaviour of the model side by side (chainrt.report.model_report). The measured columns come from
the running system's own monitoring (the default), a recorded trace (``--trace``), or a replay of
the model by chainrt run (``--replay``); the page says which, and how it was measured."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import cliargs
from ..model import load_model_or_report, policy_names
from ..report import model_report
from ..report.html import plain
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("report", help=help_of("report"))
    p.add_argument("model", metavar="MODEL", type=cliargs.input_file, help="model YAML file")
    p.add_argument("-o", "--out", type=cliargs.output_dir, default=None, help="output folder (default out/report-<model name>)")
    p.add_argument("--duration", type=cliargs.duration, default="10s",
                   help="how long to listen to the running system (or to replay), and the simulated time (default 10s)")
    p.add_argument("--policy", choices=policy_names(),
                   help="override every executor's policy (analysis, simulation and replay)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", metavar="DIR", type=cliargs.input_dir,
                     help="measured columns from this recorded trace (chainrt trace record)")
    src.add_argument("--replay", action="store_true",
                     help="measured columns from a replay of the model: chainrt run starts the model's synthetic "
                          "nodes, burning its WCETs (not your nodes)")
    src.add_argument("--no-run", action="store_true", help="analysis and simulation only (nothing measured)")
    p.add_argument("--namespace", help="listen on NS/chainrt/chain_stats (default: every */chainrt/chain_stats)")
    p.add_argument("--run-id", help="only use monitoring messages of this run id")
    p.add_argument("--rt-priority", type=cliargs.fifo_priority, metavar="PRIO",
                   help="with --replay: run the executor threads at SCHED_FIFO PRIO (1..99) where the model gives "
                        "them no priority")
    p.set_defaults(func=run)


def run(args) -> int:
    d = args.duration
    if args.rt_priority is not None and not args.replay:
        print("chainrt report: --rt-priority applies to --replay (a running system keeps the priorities "
              "it was started with)", file=sys.stderr)
        return 1
    model = load_model_or_report(args.model, "report")
    if model is None:
        return 1
    mode = False if args.no_run else "replay" if args.replay else "trace" if args.trace else "monitor"
    out = Path(args.out) if args.out else Path("out") / f"report-{Path(args.model).stem}"
    try:
        data = model_report.collect(args.model, int(d), run=mode, policy=args.policy, fifo=args.rt_priority,
                                    namespace=args.namespace, run_id=args.run_id, trace=args.trace, model=model)
        page = model_report.write(data, out)
    except OSError as e:
        print(f"chainrt report: {plain(str(e))}", file=sys.stderr)
        return 1
    for f in (data.get("verdict") or {}).get("findings", []):
        print(f"warning: {plain(f['text'])}", file=sys.stderr)
    others = [f for f in model_report.FILES[1:] if (out / f).is_file()]
    print(f"report: {page}" + (f" (beside it: {', '.join(others)})" if others else ""))
    if data.get("run_failed"):
        # the page is written (analysis and simulation, and why nothing was measured), but the
        # measurement the report was asked for did not happen
        print(f"chainrt report: {plain(data['run_failed'])}", file=sys.stderr)
        return 1
    return 0
