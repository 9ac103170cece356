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
        try:
            module = importlib.import_module(f"{commands.__name__}.{info.name}")
            if hasattr(module, "register"):
                module.register(sub)
        except Exception as err:  # one broken command must not take the others down
            _register_broken(sub, info.name, err)
    return parser


def _register_broken(sub, name: str, err: Exception) -> None:
    reason = f"{type(err).__name__}: {err}"
    p = sub.add_parser(name, help=f"(unavailable: {reason})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def fail(_args) -> int:
        print(f"chainrt {name}: this command failed to load ({reason}); "
              "is the build up to date? (scripts/setup)", file=sys.stderr)
        return 1

    p.set_defaults(func=fail)


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
