"""``chainrt experiment cros-rt-{two-chains,predictability,size,chains,traffic}``: CROS-RT's
experiments on real ROS 2 across two network-namespace hosts, with plots: the two-chain
experiment under several loads (chainrt.experiments.cros_rt_kernel) and the paper's runs and
sweeps (chainrt.experiments.cros_rt_paper). Needs root
(namespaces, XDP), clang and libbpf, and the built runtime. Registered into ``chainrt
experiment`` by :func:`add_parsers`."""

from __future__ import annotations

import json
import sys

from .. import cliargs, runtime, stock
from ..crosslayer import kernel, netns
from ..crosslayer.cli import parse_server
from ..crosslayer.stacks import stack
from . import cros_rt_kernel, cros_rt_paper
from .cros_rt_kernel import _bytes

#: A flood rate in Mbit/s (a 100 Gbit/s link at most).
RATE = cliargs.number(0, 100_000, "a rate in Mbit/s")


def add_parsers(esub) -> None:
    a = esub.add_parser("cros-rt-two-chains", help="CROS-RT (a) across two namespace hosts: high/low chain under a "
                                                   "non-RT UDP flood, vanilla vs app+DDS vs full cross-layer")
    a.add_argument("--runs", type=cliargs.positive, default=3)
    a.add_argument("--duration", type=cliargs.seconds, default=10.0, help="seconds measured per run (default 10)")
    a.add_argument("--rate", type=RATE, default=60.0, help="flood rate in Mbit/s (default 60)")
    a.add_argument("--loads", default="paper,pinned,overload",
                   help="paper (flood unpinned), pinned (flood sender on the high publisher's core), overload "
                        "(pinned at --overload-rate), busy (paper plus --hogs CPU-bound processes per CPU), "
                        "busy-overload (overload plus the hogs); default paper,pinned,overload")
    a.add_argument("--hogs", type=cliargs.count(0, 64, "a number of processes"), default=2, help="CPU-bound SCHED_OTHER processes per CPU of the busy load")
    a.add_argument("--configs", default="vanilla,app-dds,full,full-server",
                   help="configurations to run (default vanilla,app-dds,full,full-server)")
    a.add_argument("--server", metavar="Q/T",
                   help="the non-RT server of full-server, e.g. 1ms/10ms (default: the largest budget per 10 ms "
                        "that cros-rt admits without communication costs)")
    a.add_argument("--from-csv", metavar="CSV",
                   help="run nothing: summarise and plot the rows of an earlier run (its runs.csv)")
    a.add_argument("--overload-rate", type=RATE, default=1000.0, help="flood rate of the overload load (Mbit/s)")
    a.add_argument("--size", default="4KiB", help="message size (default 4KiB)")
    a.add_argument("--flood-size", type=cliargs.count(1, 65507, "a datagram size"), default=1400, help="the flood's datagram size in bytes (default 1400)")
    a.add_argument("--no-platform-probe", action="store_true",
                   help="do not measure the CPUs' blackouts beside each run (the platform term of the bounds)")
    a.add_argument("--out", default="out/cros_rt_two_chains")
    a.set_defaults(exp_func=run, which="two-chains")
    _paper_parsers(esub)


def _common(p, configs: str, runs: int, out: str, rate: bool = True, size: bool = True) -> None:
    """The options every one of the paper's experiments takes (``rate``/``size``: a fixed flood
    rate / message size, where they are not what is swept)."""
    p.add_argument("--configs", default=configs,
                   help=f"configurations, run back to back per point and run number (default {configs}; "
                        "known: vanilla, preempt-rt, app-dds, full, full-server, and emulated: chainrt's emulation "
                        "of the default executor beside vanilla, for its fidelity)")
    p.add_argument("--stock-executor", choices=["single", "multi", "static", "events"], default="single",
                   help="rclcpp's stock executor of vanilla and preempt-rt on the generated nodes (default single: "
                        "SingleThreadedExecutor)")
    p.add_argument("--runs", type=cliargs.positive, default=runs, help=f"runs per point and configuration (default {runs})")
    p.add_argument("--instances", type=cliargs.positive, default=10_000,
                   help="instances of the top chain measured per run (default 10000, the paper's)")
    if rate:
        p.add_argument("--rate", type=RATE, default=60.0, help="non-RT flood in Mbit/s (default 60)")
    if size:
        p.add_argument("--size", default="4KiB", help="message size (default 4KiB)")
    p.add_argument("--rx-priority", type=cliargs.fifo_priority, default=None, metavar="PRIO",
                   help="preempt-rt: the fixed SCHED_FIFO priority of every receive kernel thread "
                        "(default 50, PREEMPT_RT's for threaded interrupt handlers)")
    p.add_argument("--server", metavar="Q/T",
                   help="full-server's non-RT server, e.g. 1ms/10ms (default: the largest budget per 10 ms "
                        "with which cros-rt keeps the chains within their deadlines at 2 ms per remote hop)")
    p.add_argument("--lock", default="", type=cliargs.lock_file, metavar="FILE",
                   help="hold an flock on FILE (a machine-wide measurement lock) for each point and run number")
    p.add_argument("--resume", action="store_true", help="keep OUT/runs.csv's rows and run only the missing ones")
    p.add_argument("--no-raw", action="store_true", help="do not keep the top chain's traces and the probe's "
                                                         "blackouts in OUT/raw")
    p.add_argument("--from-csv", metavar="CSV[,CSV...]",
                   help="run nothing: summarise and plot the rows of earlier runs (their runs.csv)")
    p.add_argument("--out", default=out)


def _paper_parsers(esub) -> None:
    p = esub.add_parser("cros-rt-predictability",
                        help="CROS-RT's predictability (WCRT - BCRT of the top chain, >= 10,000 instances per run) "
                             "across two namespace hosts under a 60 Mbit/s non-RT flood, vanilla / Preempt-RT-style "
                             "/ app+DDS / full / full+server interleaved")
    _common(p, "vanilla,preempt-rt,app-dds,full,full-server", 3, "out/cros_rt_predictability")
    p.set_defaults(exp_func=run_paper, which="predictability")
    p = esub.add_parser("cros-rt-size", help="CROS-RT Fig. 12: the top chain's WCRT - BCRT for message sizes "
                                             "1 KiB .. 256 KiB across two namespace hosts")
    _common(p, "vanilla,preempt-rt,app-dds,full", 1, "out/cros_rt_size", size=False)
    p.add_argument("--sizes", default="1KiB,4KiB,16KiB,64KiB,256KiB")
    p.set_defaults(exp_func=run_paper, which="size")
    p = esub.add_parser("cros-rt-chains", help="CROS-RT Fig. 11: the top chain's WCRT - BCRT with 2 .. 8 chains "
                                               "(UUniFast) across two namespace hosts")
    _common(p, "vanilla,preempt-rt,app-dds,full", 1, "out/cros_rt_chains")
    p.add_argument("--counts", default="2,4,6,8", help="numbers of chains (default 2,4,6,8)")
    p.add_argument("--utilisation", type=cliargs.number(0, 1, "a utilisation", above=True), default=0.3,
                   help="UUniFast utilisation of the chains below the top one, per core (default 0.3)")
    p.add_argument("--seed", type=cliargs.seed, default=1)
    p.set_defaults(exp_func=run_paper, which="chains")
    p = esub.add_parser("cros-rt-traffic", help="CROS-RT Fig. 13: the top chain's WCRT - BCRT and the non-RT "
                                                "delivery ratio for non-RT traffic of 0 .. 90 Mbit/s")
    _common(p, "vanilla,preempt-rt,full,full-server", 1, "out/cros_rt_traffic", rate=False)
    p.add_argument("--rates", default="0,30,60,90", help="non-RT traffic in Mbit/s (default 0,30,60,90)")
    p.set_defaults(exp_func=run_paper, which="traffic")


def _numbers(text: str, flag: str, kind=float) -> list:
    try:
        vals = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{flag} {text!r}: want comma-separated numbers") from None
    if not vals:
        raise ValueError(f"{flag}: no value")
    return vals


def _paper_points(args, x):
    if args.which == "predictability":
        return x.predictability_points(args.size, args.rate)
    if args.which == "size":
        sizes = [v for v in args.sizes.split(",") if v]
        for v in sizes:
            try:
                if not 0 < _bytes(v) <= 1 << 24:
                    raise ValueError
            except ValueError:
                raise ValueError(f"--sizes: {v!r} is not a message size (e.g. 4KiB)") from None
        return x.size_points(sizes, args.rate)
    if args.which == "chains":
        counts = _numbers(args.counts, "--counts", int)
        if not all(2 <= n <= 16 for n in counts) or not 0 < args.utilisation < 1:
            raise ValueError("--counts take 2..16 chains and --utilisation lies in (0, 1)")
        return x.chain_points(counts, args.utilisation, args.seed, args.size, args.rate)
    rates = _numbers(args.rates, "--rates")
    if not all(0 <= r <= 10_000 for r in rates):
        raise ValueError("--rates: Mbit/s within 0..10000")
    return x.rate_points(rates, args.size)


def run_paper(args) -> int:
    """The paper's runs and sweeps (chainrt.experiments.cros_rt_paper)."""
    x = cros_rt_paper
    name = f"cros_rt_{args.which}"
    try:
        if args.from_csv:
            rows = x.read_rows([p for p in args.from_csv.split(",") if p])
        else:
            configs = [c for c in args.configs.split(",") if c]
            for c in configs:
                stack(c)
            if not configs or args.runs < 1 or args.instances < 1:
                raise ValueError("need configurations, --runs >= 1 and --instances >= 1")
            if args.rx_priority is not None and not 1 <= args.rx_priority <= 99:
                raise ValueError("--rx-priority: want 1..99")
            server = None
            if args.server:
                server = parse_server(args.server, "--server")
            points = _paper_points(args, x)
            why = netns.available()
            if why:
                raise RuntimeError(why)
            runtime.find_binary()
            if any(stack(c).executor != "emulated" for c in configs):
                stock.find_binary()
            kernel.build()
            rows = x.run_points(name, points, configs, args.runs, args.out, instances=args.instances, server=server,
                                rx_priority=args.rx_priority, lock=args.lock, resume=args.resume,
                                keep_raw=not args.no_raw, stock_executor=args.stock_executor)
        s = x.finish(name, rows, args.out)
    except (runtime.RuntimeNotFound, kernel.KernelPathUnavailable, netns.NetnsUnavailable, RuntimeError,
            ValueError, OSError, KeyError) as e:  # (stock.StockUnavailable / StockRunFailed are RuntimeErrors)
        print(f"chainrt experiment: {e}", file=sys.stderr)
        return 1
    print(x.tables(s, rows))
    print(f"written: {args.out}/summary.json, tables.md, {name}.png" + ("" if args.from_csv else ", runs.csv"))
    return 0


def run(args) -> int:
    x = cros_rt_kernel
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
            server = parse_server(args.server, "--server")
        s = x.two_chains(args.out, runs=args.runs, duration_s=args.duration, rate_mbps=args.rate,
                         loads=loads, size=args.size, configs=configs,
                         overload_mbps=args.overload_rate, hogs=args.hogs, server=server,
                         platform_probe=not args.no_platform_probe, flood_size=args.flood_size)
        print(json.dumps({k: v["ratios"] for k, v in s["loads"].items()}, indent=2))
        if "cros_rt" in s:
            print(json.dumps({"cros_rt": s["cros_rt"]}, indent=2))
        print(f"written: {args.out}/runs.csv, summary.json, two_chains.png")
    except (runtime.RuntimeNotFound, kernel.KernelPathUnavailable, netns.NetnsUnavailable,
            RuntimeError, ValueError, OSError) as e:
        print(f"chainrt experiment: {e}", file=sys.stderr)
        return 1
    return 0
