"""``chainrt check MODEL...``: validate model files and print a one-screen summary of each."""

from __future__ import annotations

import sys

from .. import cliargs, output
from ..model import load_model_or_report
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("check", help=help_of("check"))
    p.add_argument("models", nargs="+", metavar="MODEL", type=cliargs.model_path, help="model YAML file(s)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.set_defaults(func=run)


def release_rates(model) -> dict[str, float]:
    """Releases per second of every callback: timers at 1/T, subscriptions at the summed rate
    of their topic's publishers (an upper bound for fusion nodes), propagated to a fixed point."""
    rate = {cb.name: (1e9 / cb.period if cb.kind == "timer" else 0.0) for cb in model.callbacks}
    publishers: dict[str, list[str]] = {}
    for cb in model.callbacks:
        for t in cb.publishes:
            publishers.setdefault(t, []).append(cb.name)
    for _ in range(len(model.callbacks) + 1):
        changed = False
        for cb in model.callbacks:
            if cb.kind == "timer":
                continue
            r = sum(rate[p] for p in publishers.get(cb.topic, []))
            if abs(r - rate[cb.name]) > 1e-12:
                rate[cb.name], changed = r, True
        if not changed:
            break
    return rate


def system_utilisation(model) -> float:
    rate = release_rates(model)
    return sum(cb.wcet * 1e-9 * rate[cb.name] for cb in model.callbacks)


def summary(model) -> str:
    lines = []
    title = model.name or "(unnamed)"
    lines.append(f"model {title}: {len(model.chains)} chains, {len(model.callbacks)} callbacks, "
                 f"{len(model.nodes)} nodes, {len(model.executors)} executors")
    rows = [("chain", "callbacks", "period", "deadline", "class", "prio", "U")]
    total = 0.0
    for c in model.chains:
        u = model.chain_utilisation(c)
        total += u
        cls = c.criticality_class + (f"/{c.criticality}" if c.criticality else "")
        shape = str(len(c.callbacks)) + ("" if c.is_linear() else f" ({len(c.paths())} paths)")
        rows.append((c.name, shape, output.duration(c.period), output.duration(c.deadline), cls,
                     "-" if c.priority is None else str(c.priority), f"{u:.3f}"))
    lines += output.table(rows, indent="  ")
    lines.append(f"  total: chain utilisation sum {total:.3f}; system utilisation at most {system_utilisation(model):.3f} "
                 f"(callbacks counted once, each at the summed rate of its topic's publishers)")
    for e in model.executors:
        threads = ", ".join(t.name + (f"@{t.cores}" if t.cores else "") for t in e.threads)
        classes = f", thread classes {[tc.name for tc in e.thread_classes]}" if e.thread_classes else ""
        lines.append(f"  executor {e.name}: policy {e.policy}, host {e.host}, process {e.process}, "
                     f"{len(e.threads)} thread(s) [{threads}]{classes}")
    return "\n".join(lines)


def run(args) -> int:
    failed = 0
    for path in args.models:
        model = load_model_or_report(path, "check")
        if model is None:
            failed += 1
            continue
        if not args.quiet:
            print(f"{path}: ok")
            print(summary(model))
    if failed:
        print(f"chainrt check: {failed} of {len(args.models)} model(s) invalid", file=sys.stderr)
        return 1
    return 0
