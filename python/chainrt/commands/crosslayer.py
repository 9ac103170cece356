"""``chainrt crosslayer``: the cross-layer chain priority path of a model, on its own.

* ``chainrt crosslayer MODEL --iface IF ...``: installs the model's (port -> chain priority
  class) map and the XDP message selector on the interfaces, runs every class's packet threads
  at the class's priority (non-real-time ones as a server with --nonrt-server), prints the map,
  and on Ctrl-C / SIGTERM / --duration removes it all and prints the per-class and per-port
  packet counters;
* ``--profiles DIR``: writes the model's Fast DDS profiles (one file per process) instead;
* ``--map``: prints the (port -> class, priority) map only;
* ``--cleanup``: removes network namespaces a killed chainrt left behind, and gives the
  ksoftirqd threads back the policy a killed Preempt-RT-style run had changed.
"""

from __future__ import annotations

import signal
import sys
import time

from .. import cliargs, fastdds, output
from ..crosslayer import kernel, netns
from ..model import load_model_or_report
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("crosslayer", help=help_of("crosslayer"))
    p.add_argument("model", metavar="MODEL", nargs="?", type=cliargs.model_path, help="model YAML file")
    p.add_argument("--iface", action="append", default=[], help="receiving interface (repeatable)")
    p.add_argument("--duration", type=cliargs.duration, default=None, help="remove everything after this time (default: at Ctrl-C)")
    p.add_argument("--nonrt-server", metavar="BUDGET/PERIOD", type=cliargs.budget_period, default=None,
                   help="non-real-time packet processing as a SCHED_DEADLINE server, e.g. 2ms/10ms")
    p.add_argument("--domain", type=cliargs.ros_domain, default=None, help="ROS domain id (default: $ROS_DOMAIN_ID or 0)")
    p.add_argument("--profiles", metavar="DIR", type=cliargs.output_dir, help="write the Fast DDS profiles of every process into DIR")
    p.add_argument("--addresses", metavar="HOST=IP,...", default=None,
                   help="with --profiles: the hosts' addresses (default: everything on loopback)")
    p.add_argument("--map", action="store_true", help="print the (port -> class, priority) map and exit")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--cleanup", action="store_true",
                   help="remove network namespaces left by a killed chainrt (and restore the softirq threads' "
                        "policy it changed)")
    p.set_defaults(func=run)


def _domain(args) -> int:
    import os
    if args.domain is not None:
        return args.domain
    try:
        return int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
    except ValueError:
        raise ValueError(f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')!r} is not a number") from None


def run(args) -> int:
    if args.cleanup:
        if netns.available():
            print(f"chainrt crosslayer: {netns.available()}", file=sys.stderr)
            return 1
        gone = netns.remove_stale()
        print(f"removed {len(gone)} namespace(s)" + (f": {', '.join(gone)}" if gone else ""))
        back = kernel.restore_stale_rx_threads()
        if back:
            print(f"restored the scheduling policy of {', '.join(back)}")
        return 0
    if not args.model:
        return cliargs.fail("crosslayer", "a MODEL is needed (or --cleanup)")
    model = load_model_or_report(args.model, "crosslayer")
    if model is None:
        return cliargs.ERROR
    try:
        domain = _domain(args)
        server, duration = args.nonrt_server, args.duration
        entries, class_prio = kernel.port_classes(model, domain)
        if args.profiles:
            addrs = None
            if args.addresses:
                addrs = dict(kv.split("=", 1) for kv in args.addresses.split(",") if "=" in kv)
            paths = fastdds.write_profiles(model, args.profiles, domain_id=domain,
                                           localhost_only=addrs is None, host_addresses=addrs)
            for proc, path in paths.items():
                print(f"{proc}: {path} (FASTDDS_DEFAULT_PROFILES_FILE={path})")
            return 0
    except (ValueError, OSError) as e:
        print(f"chainrt crosslayer: {e}", file=sys.stderr)
        return 1
    rows = []
    for e in entries:
        owner = next(p for p in fastdds.participants(model, domain) if e.port in p.ports)
        rows.append({"port": e.port, "process": owner.process, "class": e.cls,
                     "priority": class_prio.get(e.cls, 0), "cpu": e.cpu})
    if args.map or not args.iface:
        if not args.map:
            print("chainrt crosslayer: no --iface given; the map it would install:", file=sys.stderr)
        _print_map(rows, class_prio, args.json)
        return 0 if args.map else 1
    try:
        with kernel.Selector(args.iface, entries, class_prio, server=server) as sel:
            if not args.json:
                _print_map(rows, class_prio, False)
                print(f"installed on {', '.join(args.iface)}; Ctrl-C removes it", flush=True)
            stop = []
            old = signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
            try:
                t_end = time.monotonic() + duration / 1e9 if duration else None
                while not stop and (t_end is None or time.monotonic() < t_end):
                    time.sleep(0.1)
            except KeyboardInterrupt:
                pass
            finally:
                signal.signal(signal.SIGTERM, old)
            threads = sel.class_threads()
    except kernel.KernelPathUnavailable as e:
        print(f"chainrt crosslayer: {e}", file=sys.stderr)
        return 1
    stats = sel.stats or {}
    if args.json:
        output.emit_json({"map": rows, "counters": stats, "class_threads": threads})
    else:
        cls = stats.get("classes", [])
        print("removed; packets per class: " + ", ".join(
            f"{'non-RT' if i == 0 else ('other' if i == len(cls) - 1 else f'class {i}')} {n}" for i, n in enumerate(cls)))
        for port, n in sorted(stats.get("ports", {}).items()):
            print(f"  port {port}: {n}")
    return 0


def _print_map(rows, class_prio, as_json: bool) -> None:
    if as_json:
        output.emit_json({"map": rows, "class_priorities": class_prio})
        return
    table = [("port", "process", "class", "priority", "cpu")]
    table += [(r["port"], r["process"], r["class"], r["priority"] or "non-RT", "any" if r["cpu"] < 0 else r["cpu"])
              for r in rows]
    print("\n".join(output.table(table, left=(1,), sep=" ")))
