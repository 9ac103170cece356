"""``chainrt synthesize MODEL --cores N [-o OUT.yaml]``: PiCAS configuration synthesis.

From the model's chains, callbacks and nodes it assigns every callback priority (PiCAS P1:
more critical chains first; P2: later callbacks of a chain above earlier ones), places the
nodes on the cores chain by chain (P4: a chain's nodes together on one core where they fit),
groups them into single-threaded executors pinned to their core with SCHED_FIFO priorities in
the order of their most important callback (P3), and judges the result with the shipped
analysis. ``--search exhaustive`` tries every chain → core assignment and chain order instead
(small systems; the baseline the heuristic is compared with). The written model is the input
model with its executors, node placement and priorities replaced; ``--fastdds-xml`` also writes
the Fast DDS profile that gives each executor's middleware threads its priority and core.

Exit codes: 0 every chain schedulable, 2 some chain is not (each is named with the reason),
1 error (invalid model, a model that cannot be synthesized, an unwritable output).
"""

from __future__ import annotations


from .. import _core, cliargs, output
from ..fastdds import profiles_xml
from ..model import analysis_names
from .analyze import chain_rows
from . import help_of


def register(sub) -> None:
    names = analysis_names()
    p = sub.add_parser("synthesize", help=help_of("synthesize"))
    p.add_argument("model", metavar="MODEL", type=cliargs.input_file, help="model YAML file")
    p.add_argument("--cores", type=cliargs.count(1, 64, "a number of cores"), default=0,
                   help="CPU cores to allocate (default: the model's first host's cores)")
    p.add_argument("--search", choices=["picas", "exhaustive"], default="picas",
                   help="picas: the PiCAS heuristic (default); exhaustive: every chain -> core assignment "
                        "and chain order (small systems only)")
    p.add_argument("--layout", choices=["auto", "per-chain", "per-core"], default="auto",
                   help="executors: one per chain and core (PiCAS), one per core, or the better of both "
                        "by the analysis (default)")
    p.add_argument("--objective", choices=["slack", "critical"], default="slack",
                   help="among schedulable configurations: the largest minimum relative slack (default), "
                        "or the smallest bound of the most critical chains first")
    p.add_argument("--analysis", "-a", choices=names,
                   help="the analysis that judges configurations (default: the synthesized model's)")
    p.add_argument("--fifo-base", type=cliargs.count(1, 98, "a SCHED_FIFO priority"), default=10,
                   help="SCHED_FIFO priority of the lowest executor on a core (default 10)")
    p.add_argument("-o", "--output", metavar="OUT.yaml", type=cliargs.output_file,
                   help="write the synthesized model here")
    p.add_argument("--fastdds-xml", metavar="OUT.xml", type=cliargs.output_file,
                   help="write the Fast DDS profile giving each executor's middleware threads its priority")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.set_defaults(func=run)


def synthesize(model, cores: int = 0, search: str = "picas", layout: str = "auto", objective: str = "slack",
               analysis: str | None = None, fifo_base: int = 10) -> dict:
    """The synthesis as a dict: ``model`` (the variant), ``analysis``, ``schedulable``, ``layout``,
    ``decisions``, ``evaluated``, and ``result`` (the ``chainrt analyze --json`` dict of the
    variant, None when the analysis does not apply). ValueError when it cannot be done."""
    out = _core._synthesize(model, cores=cores, search=search, layout=layout, objective=objective,
                            analysis=analysis or "", fifo_base=fifo_base)
    out["result"] = _core._analyze(out["model"], out["analysis"]) if out["applicable"] else None
    return out


def format_report(s: dict) -> str:
    m = s["model"]
    lines = [f"synthesized {len(m.executors)} executor(s) on {max(h.cores for h in m.hosts)} core(s), "
             f"layout {s['layout']}, {s['evaluated']} configuration(s) judged"]
    lines += ["  " + d for d in s["decisions"]]
    lines.append("executors (single-threaded, policy picas):")
    nodes_of: dict[str, list[str]] = {}
    for n in m.nodes:
        nodes_of.setdefault(n.executor, []).append(n.name)
    for e in sorted(m.executors, key=lambda e: (e.threads[0].cores, -(e.threads[0].fifo_priority or 0))):
        t = e.threads[0]
        lines.append(f"  {e.name}: core {t.cores[0]}, SCHED_FIFO {t.fifo_priority}, "
                     f"nodes {', '.join(nodes_of.get(e.name, []))}")
    lines.append("chain priorities (P1): " + ", ".join(
        f"{c.name}={c.priority}" for c in sorted(m.chains, key=lambda c: -(c.priority or 0))))
    r = s["result"]
    if r is None:
        lines.append(f"analysis {s['analysis'] or '-'} does not apply: {s['why']}")
        return "\n".join(lines)
    lines.append(f"analysis {r['analysis']}:")
    lines += chain_rows(r)
    bad = [(n, c) for n, c in r["chains"].items() if not c["schedulable"]]
    for name, c in bad:
        if c["wcrt_bound_ns"] is None:
            lines.append(f"  {name} cannot be guaranteed: {c['reason']}")
        else:
            lines.append(f"  {name} cannot be guaranteed: its bound {output.ms(c['wcrt_bound_ns'], 3)} ms exceeds its "
                         f"deadline {output.ms(c['deadline_ns'], 3)} ms under this allocation (more cores, less work, or a "
                         "longer deadline)")
    lines.append("schedulable" if r["schedulable"] else "NOT schedulable")
    return "\n".join(lines)


@cliargs.with_model("synthesize")
def run(args, model) -> int:
    try:
        s = synthesize(model, cores=args.cores, search=args.search, layout=args.layout,
                       objective=args.objective, analysis=args.analysis, fifo_base=args.fifo_base)
    except ValueError as e:
        return cliargs.fail("synthesize", e)

    def xml():
        return profiles_xml(s["model"])

    if not cliargs.write_outputs("synthesize", {args.output: s["model"].to_yaml, args.fastdds_xml: xml}):
        return cliargs.ERROR
    out = {k: v for k, v in s.items() if k != "model"}
    out["executors"] = [{"name": e.name, "core": e.threads[0].cores[0], "fifo_priority": e.threads[0].fifo_priority,
                         "priority": e.priority} for e in s["model"].executors]
    out["written"] = args.output
    output.emit(out, lambda: format_report(s), as_json=args.json, wrote=[args.output, args.fastdds_xml])
    return 0 if s["schedulable"] else 2
