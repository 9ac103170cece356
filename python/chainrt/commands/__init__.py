"""Sub-commands of the ``chainrt`` CLI, one module each (see chainrt.cli).

COMMANDS is the one list of them: per command, the module that registers it and its one-line
help. The CLI lists the commands from it without importing any module (``chainrt --help`` and a
mistyped command stay fast); each module's ``register()`` takes its help from it (help_of), and
tests/python/test_cli_all_commands.py checks that the modules register exactly these commands.
This module imports nothing: the CLI reads it on every start.
"""

from __future__ import annotations

# command -> (module in this package, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("analyze", "response-time bounds and schedulability of every chain of a model"),
    "bench": ("bench", "run benchmarks (the Autoware reference system) and report their KPIs"),
    "check": ("check", "validate model files and summarise chains, utilisation and executors"),
    "crosslayer": ("crosslayer", "install a model's chain priorities into the kernel's packet path (XDP "
                                 "selector, per-class packet threads), or write its Fast DDS profiles"),
    "demo": ("demo", "a tour: the two-chain example and the Autoware reference system"),
    "discover": ("discover", "write a model skeleton of the running ROS 2 graph (nodes, "
                             "topics, rates, sizes, candidate chains)"),
    "experiment": ("experiment", "run the papers' experiments (Fig. 7 schedulability, predictability, soundness)"),
    "lame": ("lame", "LaME: thread classes, allocation and budgets (Algorithms 1-3)"),
    "profile": ("profile", "measure callback execution times (and more) from chainrt's "
                           "executor monitoring and write BCET/WCET into the model"),
    "report": ("report", "HTML report: analysis, simulation and the measured running system "
                         "(or a trace, or a replay of the model) side by side"),
    "run": ("run", "run a model on real ROS 2 (rcl + Fast DDS) under the chainrt executor"),
    "simulate": ("simulate", "simulate a model's executors deterministically and report per-chain response times"),
    "synthesize": ("synthesize", "PiCAS priorities and node/executor/core allocation for a model"),
    "trace": ("trace", "record an LTTng trace of a ROS 2 program; export chains for CARET"),
    "trace-report": ("trace", "per-chain latency (and per hop) from an LTTng trace of ROS 2"),
}


def help_of(command: str) -> str:
    """The one-line help of `command` (a key of COMMANDS)."""
    return COMMANDS[command][1]
