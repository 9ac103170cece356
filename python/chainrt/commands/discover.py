"""``chainrt discover``: write a model skeleton of the running ROS 2 graph (chainrt.discover)."""

from __future__ import annotations

import os
import sys

from .. import cliargs, discover
from ..diagnose import chain_aware_advice, CHAIN_UNAWARE
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("discover", help=help_of("discover"))
    p.add_argument("-o", "--output", metavar="FILE", help="write the model here (default: standard output)")
    p.add_argument("--duration", type=cliargs.duration, default="5s", help="how long to measure rates and sizes (default 5s)")
    p.add_argument("--settle", type=cliargs.duration, default="2s",
                   help="discovery is done when the graph has not grown for this long (default 2s; "
                        "an empty graph is waited for up to 5 x as long, at least 10 s)")
    p.add_argument("--expect-nodes", type=cliargs.count(0, 100_000, "a number of nodes"), default=0, metavar="N",
                   help="stop waiting for discovery once N application nodes are seen")
    p.add_argument("--name", default="discovered", help="the model's name (default: discovered)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --output file")
    p.set_defaults(func=run)


def run(args) -> int:
    duration, settle = args.duration / 1e9, args.settle / 1e9
    if args.output and os.path.exists(args.output) and not args.force:
        print(f"chainrt discover: {args.output} exists (use --force to overwrite it)", file=sys.stderr)
        return 1
    if args.output and not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        print(f"chainrt discover: {args.output}: no such directory", file=sys.stderr)
        return 1
    try:
        graph = discover.observe(duration, settle, args.expect_nodes)
    except ImportError as e:
        print(f"chainrt discover: rclpy is not available ({e}); source ROS 2 or run scripts/setup",
              file=sys.stderr)
        return 1
    except Exception as e:  # an rclpy/RMW failure: one line, no traceback
        print(f"chainrt discover: could not observe the ROS 2 graph: {e}", file=sys.stderr)
        return 1
    if not graph.nodes:
        print(f"chainrt discover: no ROS 2 nodes found in domain {graph.domain} "
              f"(is the system running, with the same ROS_DOMAIN_ID and RMW_IMPLEMENTATION?)",
              file=sys.stderr)
        return 1
    sk = discover.skeleton(graph, name=args.name)
    text = discover.to_yaml(sk)
    for w in sk.warnings:  # what the observation could not determine (also in the file's header)
        print(f"chainrt discover: warning: {w}", file=sys.stderr)
    if args.output:
        try:
            cliargs.write_atomic(args.output, text)  # whole or untouched, also when interrupted
        except OSError as e:
            print(f"chainrt discover: {e}", file=sys.stderr)
            return 1
        print(f"wrote {args.output}: {len(graph.nodes)} nodes, {len(graph.topics)} topics; next: run the nodes under a chainrt executor and "
              f"`chainrt profile {args.output} --write`, then `chainrt analyze {args.output}`", file=sys.stderr)
    else:
        sys.stdout.write(text)
    print(f"chainrt discover: the executors are written as observed, with ROS 2's default policy "
          f"({CHAIN_UNAWARE}), which knows no chains; {chain_aware_advice(args.output or 'MODEL')}",
          file=sys.stderr)
    return 0
