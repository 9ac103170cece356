"""`chainrt --help`, `chainrt` alone and a mistyped command list the commands from
chainrt.commands.COMMANDS without importing any command module (each imports its own library:
all of them took most of a second); the list is the one declaration of the commands: the
modules of chainrt/commands register exactly its commands, each with its help."""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import pkgutil
import subprocess
import sys

import pytest

from chainrt import commands

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Runs the CLI in a fresh interpreter and prints the chainrt.commands.* modules it imported.
PROBE = """
import contextlib, io, sys
from chainrt import cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = cli.main(sys.argv[1:])
print(code)
print(" ".join(sorted(m for m in sys.modules if m.startswith("chainrt.commands."))))
"""


def imported_commands(*args: str) -> tuple[int, list[str]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    code, mods = p.stdout.split("\n")[:2]
    return int(code), mods.split()


@pytest.mark.parametrize("args", [["--help"], [], ["no-such-command"], ["--version"]])
def test_the_command_list_imports_no_command_module(args):
    code, mods = imported_commands(*args)
    assert mods == []
    assert code == (0 if args and args[0].startswith("--") else 1)


def test_a_command_imports_its_own_module_only():
    code, mods = imported_commands("check", "--help")
    assert code == 0
    assert mods == ["chainrt.commands.check"]


def test_help_lists_every_command_with_its_help(capsys):
    from chainrt import cli
    assert cli.main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name, (_module, text) in commands.COMMANDS.items():
        assert f"{name} {text}".replace("- ", "-") in out.replace("- ", "-")


def test_the_modules_register_exactly_the_listed_commands():
    modules = {i.name for i in pkgutil.iter_modules(commands.__path__)}
    assert modules == {module for module, _ in commands.COMMANDS.values()}
    for module in sorted(modules):
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"chainrt.commands.{module}").register(sub)
        helps = {a.dest: a.help for a in sub._choices_actions}
        want = {c: text for c, (m, text) in commands.COMMANDS.items() if m == module}
        assert helps == want, module
