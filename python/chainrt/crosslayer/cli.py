"""``chainrt run``'s hosts and cross-layer options (kept here so run.py needs two hook lines)."""

from __future__ import annotations

import sys

from .. import cliargs, runtime
from . import kernel, netns, session


def add_run_arguments(p) -> None:
    p.add_argument("--hosts", choices=["auto", "netns", "local"], default="auto",
                   help="where the model's hosts run: auto (each in its own network namespace when the "
                        "model has several and chainrt may create namespaces, else all here), netns, local")
    p.add_argument("--crosslayer", action="store_true",
                   help="with hosts in namespaces: the kernel part of the chain priority path (XDP selector, "
                        "per-class packet threads at the chain's priority; needs root, clang, libbpf)")
    p.add_argument("--nonrt-server", metavar="BUDGET/PERIOD", type=cliargs.budget_period, default=None,
                   help="with --crosslayer: run non-real-time packet processing as a polling server, above the "
                        "real-time classes for BUDGET of every PERIOD (e.g. 2ms/10ms); default: below every "
                        "real-time thread")


def parse_server(text: str | None, flag: str = "--nonrt-server") -> tuple[int, int] | None:
    """(budget, period) in ns of a non-RT server given as BUDGET/PERIOD; ValueError names ``flag``."""
    if not text:
        return None
    import argparse
    try:
        return cliargs.budget_period(text)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{flag} {e}") from None


def wanted(args, model) -> bool:
    """Does this run need the hosts' namespaces or the kernel path (else: a plain local run)?"""
    hosts = {e.host for e in model.executors}
    mode = getattr(args, "hosts", "local")
    return bool(args.crosslayer or getattr(args, "nonrt_server", None) or mode == "netns"
                or (mode == "auto" and len(hosts) > 1))


def run_model(args, duration_ns: int, *, model, **kwargs) -> dict:
    """runtime.run_model, or session.run_on_hosts when the model's hosts go into namespaces
    (``model``: the loaded model of ``args.model``, passed down so that it is not parsed again).
    Notes for the user (why hosts run here) go to stderr; raises RuntimeError (one line)."""
    kwargs["model"] = model
    server = parse_server(getattr(args, "nonrt_server", None))
    hosts = {e.host for e in model.executors}
    mode = getattr(args, "hosts", "local")
    if args.crosslayer and len(hosts) < 2:
        raise RuntimeError("--crosslayer needs a model whose executors are on two or more hosts "
                           "(the kernel part acts on packets between hosts)")
    if mode == "local" or (mode == "auto" and len(hosts) < 2 and not args.crosslayer):
        if args.crosslayer:
            raise RuntimeError("--crosslayer needs the hosts in network namespaces (drop --hosts local)")
        return runtime.run_model(args.model, duration_ns, **kwargs)
    why = netns.available()
    if why:
        if mode == "netns" or args.crosslayer:
            raise RuntimeError(why)
        print(f"note: {why}: every host runs on this machine, over loopback", file=sys.stderr)
        return runtime.run_model(args.model, duration_ns, **kwargs)
    try:
        result = session.run_on_hosts(args.model, duration_ns, kernel=args.crosslayer, server=server, **kwargs)
    except (netns.NetnsUnavailable, kernel.KernelPathUnavailable) as e:
        raise RuntimeError(str(e)) from None
    note = "note: hosts in network namespaces: " + ", ".join(f"{h} {a}" for h, a in result["hosts"].items())
    for sel in result.get("selector", []):
        cls = sel.get("classes", [])
        if cls:
            note += (f"; {sel['host']} selector: {sum(cls[1:-1])} real-time and {cls[0]} non-real-time "
                     f"packets classified")
    print(note, file=sys.stderr)
    return result
