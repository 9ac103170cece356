"""The ``chainrt`` command line.

Every sub-command lives in ``chainrt/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser (with a one-line ``help``) and sets
``func`` to a callable ``(args) -> int`` exit code. Exit codes (docs/cli.md, ``cliargs``): 0
success, 1 error (bad input or argument, invalid model, failed processes, unwritable output), 2
a negative verdict (e.g. unschedulable), 130 interrupted. Whatever happens, the user gets a
one-line error, never a Python traceback (``CHAINRT_DEBUG=1`` shows it for a bug report).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import _cli_interrupt, _cli_interrupt_state, commands
from ._build import version
from .cliargs import ERROR, INTERRUPTED, ArgumentError, path_roles, raise_if_interrupted, same_file_problem

PATH_ROLES = "_chainrt_path_roles"


class Parser(argparse.ArgumentParser):
    """argparse with chainrt's error convention: one line, exit 1 (sub-parsers inherit it)."""

    def error(self, message: str):
        raise ArgumentError(f"{self.prog}: error: {message} (see {self.prog} --help)")

    def parse_known_args(self, args=None, namespace=None):
        """As argparse's, and the paths' roles of this parser and of the sub-parsers chosen
        (cliargs.path_roles) gathered in the namespace, then checked by :func:`main`."""
        namespace, rest = super().parse_known_args(args, namespace)
        roles = dict(getattr(namespace, PATH_ROLES, None) or {})
        roles.update(path_roles(self._actions))
        setattr(namespace, PATH_ROLES, roles)
        return namespace, rest


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the command line `argv`: when its first argument names a command, the parser
    of that command alone (a command imports only its own modules and what they import, not
    those of the other commands, so that it starts faster); for `--help`, a mistyped or a
    missing command, every command listed from commands.COMMANDS with its one-line help,
    importing no command module. Without `argv`: the full parser of every command (tools and
    tests that walk them all)."""
    parser = Parser(
        prog="chainrt",
        description="Priority-driven, chain-aware real-time scheduling for ROS 2.",
        epilog="Exit codes: 0 ok, 1 error, 2 negative verdict (not schedulable), 130 interrupted (docs/cli.md).",
    )
    parser.add_argument("--version", action="version", version=f"chainrt {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    if argv is not None and (not argv or argv[0] not in commands.COMMANDS):
        for name, (_module, help_text) in commands.COMMANDS.items():
            sub.add_parser(name, help=help_text, add_help=False)
        return parser
    modules = sorted({module for module, _ in commands.COMMANDS.values()})
    chosen = [commands.COMMANDS[argv[0]][0]] if argv else modules
    for name in chosen:
        try:
            importlib.import_module(f"{commands.__name__}.{name}").register(sub)
        except Exception as err:  # one broken command must not take the others down
            for command, (module, _help) in commands.COMMANDS.items():
                if module == name and command not in sub.choices:
                    _register_broken(sub, command, err)
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
    _take_interrupt()
    try:
        parser = build_parser(sys.argv[1:] if argv is None else argv)
        try:
            args = parser.parse_args(argv)
        except ArgumentError as err:
            print(err, file=sys.stderr)
            return ERROR
        except SystemExit as done:  # --help and --version
            sys.stdout.flush()
            return int(done.code or 0) if isinstance(done.code, int) else ERROR
        same = same_file_problem(args, vars(args).pop(PATH_ROLES, {}))
        if same:
            print(f"{parser.prog} {args.command}: error: {same}", file=sys.stderr)
            return ERROR
        raise_if_interrupted()
        if not getattr(args, "func", None):
            parser.print_help()
            return ERROR
        code = int(args.func(args) or 0)
        raise_if_interrupted()
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except KeyboardInterrupt:
        print("chainrt: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`chainrt ... | head -1`): stop quietly; nothing more can be said.
        _silence_stdout()
        return ERROR
    except ArgumentError as err:  # a command that validates its arguments late
        print(err, file=sys.stderr)
        return ERROR
    except OSError as err:  # e.g. stdout on a full disk (`> /dev/full`), a file that vanished
        import errno
        where = f" {sys.argv[1]}" if argv is None and len(sys.argv) > 1 else ""
        if err.filename is None and err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
            _silence_stdout()
            print(f"chainrt{where}: cannot write the output: {err.strerror}", file=sys.stderr)
        else:
            print(f"chainrt{where}: {err.strerror or err}" + (f": {err.filename}" if err.filename else ""),
                  file=sys.stderr)
        return ERROR
    except MemoryError:
        print("chainrt: out of memory", file=sys.stderr)
        return ERROR
    except Exception as err:  # a bug: one line for the user, the traceback on request
        if os.environ.get("CHAINRT_DEBUG"):
            raise
        where = f" {sys.argv[1]}" if argv is None and len(sys.argv) > 1 else ""
        text = (str(err).strip().splitlines() or [""])[0]
        print(f"chainrt{where}: internal error: {type(err).__name__}: {text} "
              "(CHAINRT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return ERROR


def _take_interrupt() -> None:
    """From here on Ctrl-C is a KeyboardInterrupt (chainrt/__init__.py: the start-up handler ends
    the process quietly while it imports). Only where that handler is installed: the command line."""
    import signal
    if signal.getsignal(signal.SIGINT) is _cli_interrupt:
        default_hook = sys.unraisablehook

        def hook(unraisable):  # the swallowed interrupt is ours to report, once, as exit 130
            if not isinstance(unraisable.exc_value, KeyboardInterrupt):
                default_hook(unraisable)

        sys.unraisablehook = hook  # before the handler may raise: none of its raises is printed
        _cli_interrupt_state["main"] = True


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
