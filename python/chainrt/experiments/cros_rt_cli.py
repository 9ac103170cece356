"""``chainrt experiment cros-rt-{two-chains,chains,size}``: CROS-RT's experiments on real ROS 2
across two network-namespace hosts (chainrt.experiments.cros_rt_kernel), with plots. Needs root
(namespaces, XDP), clang and libbpf, and the built runtime. Registered into ``chainrt
experiment`` by :func:`add_parsers`."""

from __future__ import annotations

import json
import sys


def add_parsers(esub) -> None:
    a = esub.add_parser("cros-rt-two-chains", help="CROS-RT (a) across two namespace hosts: high/low chain under a "
                                                   "non-RT UDP flood, vanilla vs app+DDS vs full cross-layer")
    a.add_argument("--runs", type=int, default=3)
    a.add_argument("--duration", type=float, default=10.0, help="seconds measured per run (default 10)")
    a.add_argument("--rate", type=float, default=60.0, help="flood rate in Mbit/s (default 60)")
    a.add_argument("--loads", default="paper,pinned,overload",
                   help="paper (flood unpinned), pinned (flood sender on the high publisher's core), overload "
                        "(pinned at --overload-rate), busy (paper plus --hogs CPU-bound processes per CPU), "
                        "busy-overload (overload plus the hogs); default paper,pinned,overload")
    a.add_argument("--hogs", type=int, default=2, help="CPU-bound SCHED_OTHER processes per CPU of the busy load")
    a.add_argument("--configs", default="vanilla,app-dds,full,full-server",
                   help="configurations to run (default vanilla,app-dds,full,full-server)")
    a.add_argument("--server", metavar="Q/T",
                   help="the non-RT server of full-server, e.g. 1ms/10ms (default: the largest budget per 10 ms "
                        "that cros-rt admits without communication costs)")
    a.add_argument("--from-csv", metavar="CSV",
                   help="run nothing: summarise and plot the rows of an earlier run (its runs.csv)")
    a.add_argument("--overload-rate", type=float, default=1000.0, help="flood rate of the overload load (Mbit/s)")
    a.add_argument("--size", default="4KiB", help="message size (default 4KiB)")
    a.add_argument("--flood-size", type=int, default=1400, help="the flood's datagram size in bytes (default 1400)")
    a.add_argument("--no-platform-probe", action="store_true",
                   help="do not measure the CPUs' blackouts beside each run (the platform term of the bounds)")
    a.add_argument("--out", default="out/cros_rt_two_chains")
    a.set_defaults(exp_func=run, which="two-chains")
    b = esub.add_parser("cros-rt-chains", help="CROS-RT (b) across namespace hosts: top chain's WCRT-BCRT as chain sets grow")
    b.add_argument("--counts", default="2,3,4,6")
    b.add_argument("--sets", type=int, default=2)
    b.add_argument("--duration", type=float, default=6.0)
    b.add_argument("--out", default="out/cros_rt_chains")
    b.set_defaults(exp_func=run, which="chains")
    c = esub.add_parser("cros-rt-size", help="CROS-RT (c) across namespace hosts: WCRT-BCRT for message sizes 1-256 KiB")
    c.add_argument("--sizes", default="1KiB,4KiB,16KiB,64KiB,128KiB,256KiB")
    c.add_argument("--duration", type=float, default=6.0)
    c.add_argument("--out", default="out/cros_rt_size")
    c.set_defaults(exp_func=run, which="size")


def run(args) -> int:
    from ..crosslayer import kernel, netns
    from . import cros_rt_kernel as x
    from .. import runtime
    if getattr(args, "from_csv", None):
        try:
            s = x.summarize_csv(args.from_csv, args.out, size=args.size)
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            print(f"chainrt experiment: {args.from_csv}: {e}", file=sys.stderr)
            return 1
        print(json.dumps({k: v["ratios"] for k, v in s["loads"].items()}, indent=2))
        print(json.dumps({"cros_rt": s["cros_rt"]}, indent=2))
        print(f"written: {args.out}/summary.json, two_chains.png")
        return 0
    why = netns.available()
    if why:
        print(f"chainrt experiment: {why}", file=sys.stderr)
        return 1
    try:
        runtime.find_binary()
        kernel.build()
        if args.which == "two-chains":
            if args.runs < 1 or args.duration <= 0 or args.hogs < 0 or not 16 <= args.flood_size <= 65000:
                raise ValueError("--runs and --duration must be positive, --hogs not negative, "
                                 "--flood-size within 16..65000")
            loads = tuple(l for l in args.loads.split(",") if l)
            configs = tuple(c for c in args.configs.split(",") if c)
            bad = [v for v in loads if v not in x.LOADS] + [c for c in configs if c not in x.CONFIGS]
            if bad:
                raise ValueError(f"unknown load or configuration: {', '.join(bad)} (loads: {', '.join(x.LOADS)}; "
                                 f"configurations: {', '.join(x.CONFIGS)})")
            server = None
            if args.server:
                from ..crosslayer.cli import parse_server
                server = parse_server(args.server, "--server")
            s = x.two_chains(args.out, runs=args.runs, duration_s=args.duration, rate_mbps=args.rate,
                             loads=loads, size=args.size, configs=configs,
                             overload_mbps=args.overload_rate, hogs=args.hogs, server=server,
                             platform_probe=not args.no_platform_probe, flood_size=args.flood_size)
            print(json.dumps({k: v["ratios"] for k, v in s["loads"].items()}, indent=2))
            if "cros_rt" in s:
                print(json.dumps({"cros_rt": s["cros_rt"]}, indent=2))
            print(f"written: {args.out}/runs.csv, summary.json, two_chains.png")
        elif args.which == "chains":
            x.chain_count(args.out, counts=tuple(int(v) for v in args.counts.split(",")), sets=args.sets,
                          duration_s=args.duration)
            print(f"written: {args.out}/chains.csv, chains.png")
        else:
            x.message_size(args.out, sizes=tuple(args.sizes.split(",")), duration_s=args.duration)
            print(f"written: {args.out}/size.csv, size.png")
    except (runtime.RuntimeNotFound, kernel.KernelPathUnavailable, netns.NetnsUnavailable,
            RuntimeError, ValueError, OSError) as e:
        print(f"chainrt experiment: {e}", file=sys.stderr)
        return 1
    return 0
