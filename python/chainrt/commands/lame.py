"""``chainrt lame allocate MODEL [--cores N] [--period 10ms] [--be-placement capacity|paper] [-o OUT.yaml]
[--json]``: LaME's
thread classes, chain-to-threadclass allocation and least RT budgets (Algorithms 1-3 of the
LaME paper) for the executor that runs the model's chains.

Prints the thread classes (threads, cores, SCHED_DEADLINE runtime/period), which chains each
class serves, the chains demoted from real-time to best-effort and why, every RT chain's
response-time bound (fp-mt, LaME Theorem 1) and every BE chain's starvation-freedom check.
``-o`` writes the model with the plan applied (thread classes, reservations, callback
affinities); it validates with ``chainrt check``. ``--json`` prints one object instead.
Exit codes: 0 every RT chain meets its deadline, 2 some RT chain does not (or was demoted),
1 error.
"""

from __future__ import annotations


from .. import _core
from .. import cliargs, output
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("lame", help=help_of("lame"))
    lsub = p.add_subparsers(dest="lame_command", metavar="COMMAND")
    lsub.required = True
    a = lsub.add_parser("allocate", help="allocate chains to thread classes and search the least RT budgets")
    a.add_argument("model", metavar="MODEL", type=cliargs.input_file, help="model YAML file")
    a.add_argument("--cores", type=cliargs.count(1, 1024, "a number of cores"), default=0, metavar="N",
                   help="cores LaME may use (default: every core of the executor's host; more than the host "
                        "declares overrides the model's cores)")
    a.add_argument("--be-placement", choices=("capacity", "paper"), default="capacity",
                   help="where best-effort chains go: by the capacity the RT budgets leave each BE class, "
                        "keeping an overload in as few classes as possible (default), or the paper's worst-fit "
                        "by utilisation (Algorithm 2, lines 38-41)")
    a.add_argument("--period", type=cliargs.period, default="10ms", metavar="DURATION",
                   help="SCHED_DEADLINE period of every thread (default 10ms)")
    a.add_argument("--step", type=cliargs.percentage(0.1, 100, bare="percent"), default="1%", metavar="PERCENT",
                   help="budget search step, a percentage of the period (default 1%%)")
    a.add_argument("--controller-period", type=cliargs.duration, default="10s", metavar="DURATION",
                   help="BE chains must finish within it to count as starvation-free (default 10s)")
    a.add_argument("-o", "--output", metavar="OUT.yaml", type=cliargs.output_file, help="write the model with the plan applied")
    a.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    a.set_defaults(func=run_allocate)


def allocate(model, cores: int = 0, period: int = 10_000_000, step_permille: int = 10,
             controller_period: int = 10_000_000_000, measured=None, be_placement: str = "capacity") -> dict:
    """The allocation as a JSON-ready dict (plus the planned Model under "model")."""
    return _core.lame_allocate(model, cores, period, step_permille, controller_period, list(measured or []),
                               be_placement)


def format_report(r: dict) -> str:
    out = [f"LaME allocation of executor '{r['executor']}' "
           f"({r['analyses']} response-time analyses, {r['seconds'] * 1e3:.2f} ms)"]
    out.append("thread classes:")
    rows = [("class", "kind", "threads", "cores", "runtime", "period", "budget", "U/thread", "chains")]
    for c in r["rt_classes"] + r["be_classes"]:
        rows.append((c["name"], c["kind"], str(c["threads"]), ",".join(map(str, c["cores"])),
                     output.duration(c["runtime_ns"]) if c["runtime_ns"] else "none",
                     output.duration(c["period_ns"]), output.pct(c["runtime_ns"] / c["period_ns"], 1),
                     f"{c['utilisation_per_thread']:.3f}", ", ".join(c["chains"]) or "-"))
    out += output.table(rows, left="all", indent="  ", rstrip=True)
    if r["demotions"]:
        out.append("demoted to best effort:")
        out += [f"  {d['chain']}: {d['reason']}" for d in r["demotions"]]
    else:
        out.append("demoted to best effort: none")
    split = [l for l in r["linear_chains"] if l["upstream"]]
    if split:
        out.append("linearised (shared callbacks run with their owner; bound = owner's bound + own part):")
        out += [f"  {l['name']}: shares {len(l['path']) - len(l['own'])} callback(s) with {l['upstream']}, "
                f"owns {', '.join(l['own']) or 'nothing'}" for l in split]
    out.append("chains:")
    rows = [("chain", "class", "thread class", "bound ms", "deadline ms", "verdict")]
    notes = []
    for name, c in r["chains"].items():
        if c["class"] == "rt":
            verdict = "ok" if c["meets_deadline"] else ("MISS" if c["bound_ns"] is not None else "UNBOUNDED")
        else:
            verdict = ("starvation-free" + ("" if c["meets_deadline"] else ", past its deadline")) \
                if c["starvation_free"] else "no starvation bound"
        rows.append((name, c["class"], c["thread_class"], output.ms(c["bound_ns"], 3), output.ms(c["deadline_ns"], 3), verdict))
        if c["reason"] and not (c["class"] == "rt" and c["meets_deadline"]):
            notes.append(f"  {name}: {c['reason']}")
    out += output.table(rows, left="all", indent="  ", rstrip=True)
    out += notes
    for n in r["notes"]:
        out.append(f"note: {n}")
    rt_ok = r["rt_schedulable"] and not r["demotions"]
    out.append(("every RT chain meets its deadline" if rt_ok else "NOT every RT chain is guaranteed") + "; " +
               ("every BE chain is starvation-free" if r["be_starvation_free"]
                else "some BE chains have no starvation bound (BE threads are overloaded or unbounded)"))
    return "\n".join(out)


def run_allocate(args) -> int:
    if not hasattr(_core, "lame_allocate"):
        return cliargs.fail("lame", "this build has no LaME module (built with CHAINRT_SKIP_MODULES=lame)")
    return _allocate_and_report(args)


@cliargs.with_model("lame")
def _allocate_and_report(args, model) -> int:
    step = round(args.step * 1000)  # permille of the period
    try:
        r = allocate(model, args.cores, args.period, step, args.controller_period, be_placement=args.be_placement)
    except ValueError as err:
        return cliargs.fail("lame", err)
    planned = r.pop("model")
    if not cliargs.write_outputs("lame", {args.output: planned.to_yaml}):
        return cliargs.ERROR
    output.emit(r, lambda: format_report(r), as_json=args.json, wrote=[args.output])
    return 0 if (r["rt_schedulable"] and not r["demotions"]) else 2
