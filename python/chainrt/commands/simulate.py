"""``chainrt simulate MODEL``: run the deterministic discrete-event simulator (sim/) on a model.

Prints per chain the observed WCRT, BCRT, mean, p99, instances, deadline misses and drops
(``--json``: ``{"chains": {NAME: {period_ns, deadline_ns, wcrt_ns, bcrt_ns, mean_ns, p99_ns,
instances, deadline_misses, drops}}}``), optionally writes the dispatch trace (JSON) and a Gantt
chart per thread (PNG); where timers' relative phases drift (``release_grid``), says so
(``phase_drift``) and warns on stderr (``warnings``) when the duration covers only part of the
phase cycle. Without ``--policy``/``--threads`` the model's executors decide.
"""

from __future__ import annotations

import json
import sys

from .. import cliargs, gantt, output
from ..model import policy_names
from ..release_grid import coverage_warnings, drift_lines
from ..simulation import EXEC_MODES, simulate, TIMER_RULES, UNPINNED
from . import help_of



def register(sub) -> None:
    p = sub.add_parser("simulate", help=help_of("simulate"))
    p.add_argument("model", metavar="MODEL", type=cliargs.model_path, help="model YAML file")
    p.add_argument("--duration", type=cliargs.duration, default="10s", help="simulated time (default 10s)")
    p.add_argument("--seed", type=cliargs.seed, default=1, help="seed of sampled execution times, jitter and delays")
    p.add_argument("--policy", choices=policy_names(), help="override every executor's policy")
    p.add_argument("--threads", type=cliargs.threads, help="N plain threads per executor, 1..64 (replaces the model's threads)")
    p.add_argument("--exec", choices=EXEC_MODES, default="wcet",
                   help="execution times: wcet (default), bcet, uniform in [bcet, wcet], mix of both")
    p.add_argument("--comm", choices=["fixed", "sampled"], default="fixed",
                   help="communication delay: the model's cost line, or sampled from its measurements")
    p.add_argument("--trace", metavar="FILE", type=cliargs.output_file,
                   help="write every dispatch (thread, callback, release, start, finish) as JSON")
    p.add_argument("--gantt", metavar="FILE", type=cliargs.output_file, help="draw a Gantt chart per thread (PNG)")
    p.add_argument("--gantt-window", type=cliargs.duration, default=None, metavar="DUR",
                   help="time span drawn in the Gantt chart (default: the first 1s or the whole run)")
    p.add_argument("--timer-rule", choices=TIMER_RULES, default="rcl9",
                   help="rcl's rule for a timer taken late exactly on a period instant: rcl9 (Jazzy, "
                        "Kilted; default) skips that instant, rcl5 (Humble, Iron) runs it at once")
    p.add_argument("--unpinned", choices=UNPINNED, default="placed",
                   help="threads without pinned cores: placed (default) each on one core, round robin over "
                        "its host's cores; global as the kernel schedules them, the ready threads of highest "
                        "priority on the host's cores (a host with a pinned thread stays placed)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)


def format_table(result: dict) -> str:
    rows = [("chain", "period", "deadline", "WCRT", "BCRT", "mean", "p99", "instances", "misses", "drops")]
    for name, c in result["chains"].items():
        rows.append((name, *(output.duration(c[k]) for k in ("period_ns", "deadline_ns", "wcrt_ns", "bcrt_ns", "mean_ns",
                                                              "p99_ns")),
                     c["instances"], c["deadline_misses"], c["drops"]))
    lines = output.table(rows)
    lines.append(f"{result['executions']} callback executions in {output.duration(result['duration_ns'])} simulated")
    lines.extend(result.get("phase_drift", []))
    return "\n".join(lines)


@cliargs.with_model("simulate")
def run(args, model) -> int:
    try:
        duration = args.duration
        want_trace = bool(args.trace or args.gantt)
        result, trace = cliargs.interruptible(simulate, model, duration, args.seed, args.policy, args.threads,
                                              args.exec, args.comm, want_trace, None, args.timer_rule,
                                              args.unpinned)
    except (ValueError, RuntimeError) as err:
        return cliargs.fail("simulate", err)
    if not cliargs.write_outputs("simulate", {args.trace: lambda: json.dumps(trace)}):
        return cliargs.ERROR
    if args.gantt:
        window = args.gantt_window if args.gantt_window else min(duration, 1_000_000_000)
        try:
            gantt.draw(trace, args.gantt, end_ns=window, title=f"{model.name} ({args.policy or 'model policies'})")
        except OSError as err:
            return cliargs.fail("simulate", f"cannot write {args.gantt}: {err.strerror or err}")
    result["phase_drift"] = drift_lines(model)
    result["warnings"] = coverage_warnings(model, duration)
    output.emit(result, lambda: format_table(result), as_json=args.json, wrote=[args.trace, args.gantt])
    for w in result["warnings"]:
        print(f"chainrt simulate: warning: {w}", file=sys.stderr)
    return 0
