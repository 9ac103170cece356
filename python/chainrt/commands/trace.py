"""``chainrt trace`` and ``chainrt trace-report``: record an LTTng trace of a ROS 2 program,
compute per-chain latency from it, and export chains for CARET (docs/tracing.md).

``chainrt trace record -o DIR -- COMMAND...`` runs COMMAND in an LTTng session with the
ros2_tracing events and chainrt's chain events; ``chainrt trace-report DIR`` then computes the
per-chain latency: from a trace recorded with chainrt's executor the end-to-end latency of every
chain instance; for any executor publish -> take per hop, callback times and (with --model)
chain latency by message flow when callback events exist; what the trace does not allow is
listed, not estimated. ``chainrt trace caret MODEL`` writes the model's chains as a CARET
architecture file (its path definitions).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

from .. import cliargs, output
from ..model import load_model_or_report
from ..tracing import analyze, format_report, read_trace, TraceError
from ..tracing_caret import to_yaml
from ..tracing_record import RecordError
from ..tracing_record import record as do_record
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("trace", help=help_of("trace"))
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    r = tsub.add_parser("record", help="run a command in an LTTng session (ros2_tracing + chainrt events)",
                        description="Run COMMAND (after --) in an LTTng session recording the ros2:* and "
                                    "chainrt:* userspace events of it and its children into DIR.")
    r.add_argument("-o", "--output", metavar="DIR",
                   help="trace folder, new or empty (default: ./chainrt-trace-DATE-TIME)")
    r.add_argument("--session", metavar="NAME", help="LTTng session name (default: chainrt-PID-TIME)")
    r.add_argument("--events", default="ros2:*,chainrt:*", metavar="LIST",
                   help="comma-separated userspace event patterns (default: ros2:*,chainrt:*)")
    r.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the program to trace")
    r.set_defaults(func=record)
    c = tsub.add_parser("caret", help="write a model's chains as a CARET architecture file (path definitions)")
    c.add_argument("model", metavar="MODEL", type=cliargs.input_file, help="model YAML file")
    c.add_argument("-o", "--output", metavar="FILE", type=cliargs.output_file,
                   help="write here (default: standard output)")
    c.add_argument("--namespace", metavar="NS", default="",
                   help="the namespace the nodes ran under (chainrt run --namespace)")
    c.set_defaults(func=caret)

    p = sub.add_parser("trace-report", help=help_of("trace-report"),
                       description="Per-chain latency from a trace recorded with chainrt's executor; for any "
                                   "executor publish -> take per hop, callback times and (with --model) chain "
                                   "latency by message flow when callback events exist. What the trace does "
                                   "not allow is listed, not estimated.")
    p.add_argument("trace", metavar="TRACE", help="the trace folder (chainrt trace record -o TRACE)")
    p.add_argument("--model", metavar="MODEL", type=cliargs.input_file,
                   help="model YAML: its chains hop by hop, and their latency by message flow")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=report)


def record(args) -> int:

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        print("chainrt trace record: error: no command to trace (chainrt trace record -o DIR -- COMMAND ...)",
              file=sys.stderr)
        return cliargs.ERROR
    exe = cmd[0] if "/" in cmd[0] else (shutil.which(cmd[0]) or cmd[0])
    if not os.path.isfile(exe) or not os.access(exe, os.X_OK):
        why = "is a directory" if os.path.isdir(exe) else "no such program" if not os.path.exists(exe) \
            else "not executable"
        print(f"chainrt trace record: {cmd[0]}: {why}", file=sys.stderr)
        return cliargs.ERROR
    output = args.output or time.strftime("chainrt-trace-%Y%m%d-%H%M%S")
    events = tuple(e.strip() for e in args.events.split(",") if e.strip())
    if not events:
        print("chainrt trace record: error: --events is empty", file=sys.stderr)
        return cliargs.ERROR
    try:
        rc = do_record(cmd, output, session=args.session, events=events)
    except RecordError as e:
        print(f"chainrt trace record: {e}", file=sys.stderr)
        return cliargs.ERROR
    print(f"chainrt trace record: trace in {output} (chainrt trace-report {output})", file=sys.stderr)
    return rc


def caret(args) -> int:

    model = load_model_or_report(args.model, "trace caret")
    if model is None:
        return cliargs.ERROR
    text = to_yaml(model, args.namespace)
    if args.output:
        try:
            cliargs.write_atomic(args.output, text)
        except OSError as e:
            print(f"chainrt trace caret: {args.output}: {e.strerror or e}", file=sys.stderr)
            return cliargs.ERROR
    else:
        sys.stdout.write(text)
    return cliargs.OK


def report(args) -> int:

    model = None
    if args.model:
        model = load_model_or_report(args.model, "trace-report")
        if model is None:
            return cliargs.ERROR
    try:
        rep = analyze(read_trace(args.trace), model)
    except TraceError as e:
        print(f"chainrt trace-report: {e}", file=sys.stderr)
        return cliargs.ERROR
    if args.json:
        output.emit_json(rep.to_json())
    else:
        print(format_report(rep))
    return cliargs.OK
