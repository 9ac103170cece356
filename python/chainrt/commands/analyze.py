"""``chainrt analyze MODEL [--analysis NAME] [--json]``: response-time bounds per chain.

Prints a table per chain (WCRT bound, BCRT bound, deadline, slack, verdict) or, with
``--json``, one object ``{"analysis", "schedulable", "chains": {NAME: {"wcrt_bound_ns",
"bcrt_bound_ns", "deadline_ns", "slack_ns", "schedulable", "reason"}}}``. Exit codes: 0 every
chain schedulable, 2 some chain is not (or has no bound), 1 error (invalid model, unknown
analysis, analysis not applicable). Without ``--analysis`` the analysis matching the
executors' policy is used and named. ``--policy`` and ``--threads`` override the executors'
policy and threads as in ``simulate`` and ``run`` (``--threads N``: N plain threads per
executor, thread classes and callback affinity dropped, as the simulator and runtime do).
"""

from __future__ import annotations

import sys

from .. import cliargs, diagnose, output
from ..analysis import analyze, override, verdict_of
from ..model import analyses, analysis_names, load_model_or_report, policy_names
from ..release_grid import drift_lines
from . import help_of


def register(sub) -> None:
    names = analysis_names()
    p = sub.add_parser("analyze", help=help_of("analyze"))
    p.add_argument("model", metavar="MODEL", nargs="?", type=cliargs.model_path, help="model YAML file")
    p.add_argument("--analysis", "-a", choices=names, help="analysis to run (default: the one matching the policy)")
    p.add_argument("--policy", choices=policy_names(), help="override every executor's policy (as simulate and run)")
    p.add_argument("--threads", type=cliargs.threads,
                   help="N plain threads per executor, 1..64 (replaces the model's threads, as simulate and run)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--list", action="store_true", help="list the analyses and exit")
    p.set_defaults(func=run)


def chain_rows(result: dict) -> list[str]:
    """The per-chain table of an analysis result (bounds, deadline, slack, verdict), one line each
    with its header; shared by ``analyze`` and ``synthesize``."""
    by = any("analysis" in c for c in result["chains"].values())
    rows = [("chain", "WCRT bound ms", "BCRT bound ms", "deadline ms", "slack ms", "verdict")
            + (("bound from",) if by else ())]
    for name, c in result["chains"].items():
        verdict = verdict_of(c)
        rows.append((name, *(output.ms(c[k], 3) for k in ("wcrt_bound_ns", "bcrt_bound_ns", "deadline_ns", "slack_ns")),
                     verdict) + ((c.get("analysis", ""),) if by else ()))
    return output.table(rows, left=(0, 5, 6), indent="  ", rstrip=True)


def format_table(result: dict, chosen_by_default: bool = False) -> str:
    how = " (chosen from the executors' policy)" if chosen_by_default else ""
    lines = [f"analysis {result['analysis']}{how}"]
    if result.get("analyses"):
        lines.append("  per chain the smallest bound of: " + "; ".join(
            n if w == "applied" else f"{n} ({w})" for n, w in result["analyses"].items()))
    lines += chain_rows(result)
    lines.extend(f"  {name}: {c['reason']}" for name, c in result["chains"].items() if c["reason"])
    for name, d in result.get("diagnosis", {}).items():
        lines.append(f"  {name}: unbounded because {d['cause']}")
        lines.extend(f"    a bound with: {fix}" for fix in d["fixes"])
    if result.get("diagnosis_note"):
        lines.append(f"  {result['diagnosis_note']}")
    if result.get("advice"):
        lines.append(f"  advice: {result['advice']}")
    lines.extend(f"  {d}" for d in result.get("phase_drift", []))
    lines.append("schedulable" if result["schedulable"] else "NOT schedulable")
    return "\n".join(lines)


def run(args) -> int:
    if args.list:
        rows = [(a["name"], f"policy {a['policy']}", a["summary"]) for a in analyses()]
        print("\n".join(output.table(rows, left="all", sep=" ", rstrip=True)))
        return 0
    if args.model is None:
        print("chainrt analyze: error: the following arguments are required: MODEL (see chainrt analyze --help)",
              file=sys.stderr)
        return 1
    model = load_model_or_report(args.model, "analyze")
    if model is None:
        return 1
    try:
        model = override(model, args.policy, args.threads)
        result = analyze(model, args.analysis)
    except ValueError as e:
        print(f"chainrt analyze: {e}", file=sys.stderr)
        return 1
    # the term that leaves a chain without a bound, and the smallest change that gives one
    diagnosis = diagnose.explain(model, result["analysis"], result)
    if diagnosis:
        result["diagnosis"] = diagnosis
    if note := diagnose.not_diagnosed(model, result):
        result["diagnosis_note"] = note
    advice = diagnose.policy_advice(model, result, args.model)
    if advice:
        result["advice"] = advice
    if drift := drift_lines(model):
        result["phase_drift"] = drift
    if args.json:
        output.emit_json(result)
    else:
        print(format_table(result, chosen_by_default=args.analysis is None))
    return 0 if result["schedulable"] else 2
