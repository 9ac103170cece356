"""``chainrt report MODEL``: one HTML page with the analysis, the simulation and a real run of the
model side by side (chainrt.report.model_report)."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import cliargs


def register(sub) -> None:
    p = sub.add_parser("report", help="HTML report: analysis, simulation and a real run of a model side by side")
    p.add_argument("model", metavar="MODEL", type=cliargs.input_file, help="model YAML file")
    p.add_argument("-o", "--out", type=cliargs.output_dir, default=None, help="output folder (default out/report-<model name>)")
    p.add_argument("--duration", type=cliargs.duration, default="10s", help="simulated and real run time (default 10s)")
    p.add_argument("--policy", choices=["ros-default", "picas", "fp", "edf", "mixed", "lame"],
                   help="override every executor's policy")
    p.add_argument("--no-run", action="store_true", help="analysis and simulation only (no ROS 2 run)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..model import load_model_or_report
    from ..report import model_report
    d = args.duration
    if load_model_or_report(args.model, "report") is None:
        return 1
    out = Path(args.out) if args.out else Path("out") / f"report-{Path(args.model).stem}"
    try:
        data = model_report.collect(args.model, int(d), run=not args.no_run, policy=args.policy)
        page = model_report.write(data, out)
    except OSError as e:
        print(f"chainrt report: {e}", file=sys.stderr)
        return 1
    for f in (data.get("verdict") or {}).get("findings", []):
        print(f"warning: {f['text']}", file=sys.stderr)
    others = [f for f in model_report.FILES[1:] if (out / f).is_file()]
    print(f"report: {page}" + (f" (beside it: {', '.join(others)})" if others else ""))
    return 0
