"""``chainrt trace-report TRACE``: per-chain latency from an LTTng trace (docs/tracing.md).

Works on a trace recorded with or without chainrt's executor: with it, the end-to-end latency
of every chain instance; with any executor, publish -> take per hop and, when the executor
emits callback events, callback execution times. What the trace does not allow is listed.
"""

from __future__ import annotations

import json
import sys

from .. import cliargs


def register(sub) -> None:
    p = sub.add_parser("trace-report", help="per-chain latency (and per hop) from an LTTng trace of ROS 2",
                       description="Per-chain latency from a trace recorded with chainrt's executor; for any "
                                   "executor publish -> take per hop, callback times and (with --model) chain "
                                   "latency by message flow when callback events exist. What the trace does "
                                   "not allow is listed, not estimated.")
    p.add_argument("trace", metavar="TRACE", help="the trace folder (chainrt trace record -o TRACE)")
    p.add_argument("--model", metavar="MODEL", type=cliargs.input_file,
                   help="model YAML: its chains hop by hop, and their latency by message flow")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..tracing import TraceError, analyze, format_report, read_trace

    model = None
    if args.model:
        from ..model import load_model_or_report
        model = load_model_or_report(args.model, "trace-report")
        if model is None:
            return cliargs.ERROR
    try:
        rep = analyze(read_trace(args.trace), model)
    except TraceError as e:
        print(f"chainrt trace-report: {e}", file=sys.stderr)
        return cliargs.ERROR
    if args.json:
        print(json.dumps(rep.to_json(), indent=1))
    else:
        print(format_report(rep))
    return cliargs.OK
