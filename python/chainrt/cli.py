"""The ``chainrt`` command line.

Every sub-command lives in ``chainrt/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser (with a one-line ``help``) and sets
``func`` to a callable ``(args) -> int`` exit code. Exit codes: 0 success, 1 error (bad
input, invalid model), 2 a negative verdict (e.g. unschedulable).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chainrt",
        description="Priority-driven, chain-aware real-time scheduling for ROS 2.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("chainrt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
