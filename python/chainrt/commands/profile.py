"""``chainrt profile MODEL``: measure execution times, inter-arrival times, chain response times and
hop latencies of nodes running under chainrt's executors and write them into the model
(chainrt.profile; the method is in docs/workflow.md)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from .. import cliargs, output, runtime
from .. import profile as pf
from ..fastdds import loopback_participants
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("profile", help=help_of("profile"))
    p.add_argument("model", metavar="MODEL", type=cliargs.model_path, help="model YAML file (e.g. written by chainrt discover)")
    p.add_argument("--duration", type=cliargs.duration, default="10s", help="how long to listen / run (default 10s)")
    p.add_argument("--run", action="store_true",
                   help="run the model's nodes under the C++ runtime (chainrt run) while listening")
    p.add_argument("--warmup", type=cliargs.duration_or_zero, default="2s",
                   help="with --run: unmeasured start-up time, also the time monitoring has to connect (default 2s)")
    p.add_argument("--namespace", help="listen on NS/chainrt/chain_stats (and run under NS with --run)")
    p.add_argument("--run-id", help="only use monitoring messages of this run")
    p.add_argument("--margin", type=cliargs.percentage(0, 1000), default="20%",
                   help="WCET = observed maximum x (1 + margin) (default 20%%; e.g. 0%%, 50%%)")
    p.add_argument("--time", choices=["cpu", "wall"], default="cpu",
                   help="execution time as thread CPU time (default) or wall time")
    p.add_argument("--no-measurements", action="store_true",
                   help="do not write communication.measurements (hop latencies)")
    p.add_argument("--write", action="store_true", help="write the changes into MODEL (otherwise: show the diff)")
    p.add_argument("--side", metavar="FILE", type=cliargs.output_file, help="percentiles file (default: MODEL with .profile.json)")
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    p.set_defaults(func=run)


def run(args) -> int:

    duration, warmup, margin = args.duration, args.warmup, args.margin
    try:
        if cliargs.is_pipe(args.model):  # reading it could wait forever for a writer
            raise ValueError(f"{args.model}: is a FIFO or socket, not a model file")
        view = pf.read_model(args.model)
    except (ValueError, pf.ProfileError) as e:
        print(f"chainrt profile: {e}", file=sys.stderr)
        return 1
    topic = (args.namespace.rstrip("/") + pf.STATS_SUFFIX) if args.namespace else None
    try:
        # a killed profile leaves no Fast DDS file of its listener or its run behind (its guard);
        # the listener binds nothing beyond loopback under localhost discovery (set here, before
        # the run's children are started beside it)
        with loopback_participants():
            col, partial = _measure(args, pf, runtime, duration, warmup, topic)
        try:
            prof = pf.build_profile(view, col, margin=margin, time_kind=args.time)
        except pf.ProfileError as e:
            if not partial:
                raise
            print(f"chainrt profile: {partial}, nothing written: {e}", file=sys.stderr)
            return cliargs.INTERRUPTED if partial == "interrupted" else cliargs.ERROR
    except (runtime.RuntimeNotFound, pf.ProfileError, RuntimeError) as e:
        print(f"chainrt profile: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"chainrt profile: rclpy is not available ({e}); source ROS 2 or run scripts/setup",
              file=sys.stderr)
        return 1
    if partial:
        # the measurements cover part of the time only: shown, never written into the model
        print(f"chainrt profile: {partial}; the measurements are partial"
              + (", so the model and the percentiles file were not written" if args.write else ""),
              file=sys.stderr)
    code = _show_and_write(args, pf, view, prof, margin, write=args.write and not partial)
    if partial:
        return cliargs.INTERRUPTED if partial == "interrupted" else cliargs.ERROR
    return code


def _measure(args, pf, runtime, duration, warmup, topic):
    """(the monitoring messages collected, why they are partial or None)."""
    partial = None
    if args.run:
        run_id = args.run_id or runtime.new_run_id()
        done = threading.Event()
        box = {}

        def listen():
            try:
                box["col"] = pf.listen(duration / 1e9, topic=topic or pf.STATS_SUFFIX, run_id=run_id,
                                       until=done.is_set, settle_s=1.5)
            except Exception as e:  # reported below
                box["error"] = e
        th = threading.Thread(target=listen, daemon=True)
        th.start()
        try:
            result = runtime.run_model(args.model, duration, warmup_ns=warmup, stats_period_ns=200_000_000,
                                       namespace=args.namespace, run_id=run_id)
        finally:
            done.set()
            th.join()
        if "error" in box:
            raise box["error"]
        col = box["col"]
        for w in result.get("warnings", []):
            print(f"warning: {w}", file=sys.stderr)
        if result.get("interrupted"):
            partial = "interrupted"
        elif result.get("failed_processes") or result.get("partial"):
            partial = "the run was partial (" + "; ".join(
                f"process {f['process']}: {f['reason']}" for f in result.get("failed_processes", [])) + ")"
    else:
        col = pf.listen(duration / 1e9, topic=topic, run_id=args.run_id)
    return col, partial


def _show_and_write(args, pf, view, prof, margin, write: bool) -> int:
    changes = pf.plan_changes(view, prof)
    meas = None if args.no_measurements else (pf.measurements_of(prof) or None)
    note = (f"hop latencies measured by chainrt profile (medians of {len(meas or [])} hop(s); "
            "see the .profile.json file)")
    new_text = pf.apply_changes(view, changes, meas, note)
    side = Path(args.side) if args.side else Path(args.model).with_suffix(".profile.json")

    if args.json:
        output.emit_json({**prof, "changes": [c.__dict__ for c in changes]})
    else:
        print(f"{args.model}: {prof['messages']} monitoring message(s) from executor(s) "
              f"{', '.join(e or '?' for e in prof['executors'])}; execution time = thread "
              f"{'CPU' if args.time == 'cpu' else 'wall'} time, WCET = max x {1 + margin:g}")
        rows = [("callback", "n", "cpu mean", "cpu p99", "cpu max", "wall max", "inter-arr", "|", "bcet", "wcet")]
        for name, r in prof["callbacks"].items():
            c, w, ia = r["cpu_ns"], r["wall_ns"], r["inter_arrival_ns"]
            rows.append((name, r["instances"], *(output.us(v) for v in (c.get("mean"), c.get("p99"), c.get("max"),
                                                                        w.get("max"), ia.get("mean"))),
                         "|", output.us(r["bcet_ns"]), output.us(r["wcet_ns"])))
        lines = output.table(rows, sep=" ")
        lines[0] += "   (us)"
        print("\n".join(lines))
        for name, c in prof["chains"].items():
            print(f"chain {name}: {c['instances']} instance(s), response time min {output.us(c['bcrt_ns'])} / "
                  f"mean {output.us(c['mean_ns'])} / p99 {output.us(c['p99_ns'])} / max {output.us(c['wcrt_ns'])} us")
        for h in prof["hops"]:
            print(f"hop {h['from']} -> {h['to']} ({h['kind']}, {h['size']}): latency median "
                  f"{output.us(h['latency_ns']['p50'])} us over {h['latency_ns']['n']} instance(s)"
                  + ("" if h["unblocked"] else " (every instance blocked by another callback: not written)"))
        for name, ns in prof.get("dispatch_overhead_ns", {}).items():
            print(f"executor {name}: own time per dispatch (backlogged thread) up to {output.us(ns)} us "
                  "(dispatch_overhead)")
        if prof["missing"]:
            print(f"not measured (no instance seen): {', '.join(prof['missing'])}", file=sys.stderr)
        if prof["samples_lost"]:
            print(f"note: {prof['samples_lost']} dispatch sample(s) were lost (the percentiles are over "
                  "the rest; extremes and means are exact)", file=sys.stderr)
        hand = [c for c in changes if c.old is not None]
        if hand:
            print("changes to values already in the model: " + "; ".join(
                f"{c.callback}.{c.field} {c.old} -> {c.new}" for c in hand))
        if new_text != view.text and not args.write:
            sys.stdout.write(pf.unified_diff(args.model, view.text, new_text))
    if not write:
        if new_text != view.text and not args.json and not args.write:
            print("(not written: add --write to change the model and write "
                  f"{side.name})")
        return 0
    try:  # each file whole or untouched; the model last, so that a failure leaves it as it was
        cliargs.write_atomic(side, json.dumps(prof, indent=2) + "\n")
        if new_text != view.text:
            cliargs.write_atomic(args.model, new_text)
    except OSError as e:
        print(f"chainrt profile: {e}", file=sys.stderr)
        return 1
    if not args.json:
        print(f"wrote {args.model} ({len(changes)} value(s) changed) and {side}")
    return 0
