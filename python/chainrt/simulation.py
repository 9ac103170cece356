"""The deterministic simulator (sim/) as a library: a model's run for a duration, its per-chain
response times and, on request, its dispatch trace. ``chainrt simulate``, ``chainrt run``,
reports and benches use it."""

from __future__ import annotations

import json

from . import _core

EXEC_MODES = ["wcet", "bcet", "uniform", "mix"]
#: rcl's timer overrun rule per ROS 2 line (sched/include/chainrt/sched/timer.hpp, docs/simulator.md)
TIMER_RULES = ["rcl9", "rcl5"]


#: how threads without pinned cores run (``SimOptions::global_threads``): each on one core of the
#: simulator's round robin (model/facts.hpp simulated_core), or scheduled over the host's cores
#: as the kernel does (the ready threads of highest priority, one per core)
UNPINNED = ["placed", "global"]


def simulate(model, duration_ns: int, seed: int = 1, policy: str | None = None, threads: int | None = None,
             exec_mode: str = "wcet", comm: str = "fixed", trace: bool = False,
             offsets: dict[str, int] | None = None, timer_rule: str = "rcl9",
             unpinned: str = "placed") -> tuple[dict, dict | None]:
    """Run the C++ simulator; returns (summary dict, trace dict or None). ``timer_rule``: rcl's
    timer overrun rule of the ROS 2 line modelled, ``rcl9`` (Jazzy, Kilted) or ``rcl5`` (Humble, Iron).
    ``unpinned``: one of UNPINNED."""
    if unpinned not in UNPINNED:
        raise ValueError(f"unknown placement of unpinned threads '{unpinned}' ({', '.join(UNPINNED)})")
    summary, trace_text = _core._simulate(model, duration_ns, seed, policy, threads, exec_mode, comm, trace,
                                          2_000_000, offsets or {}, timer_rule=timer_rule,
                                          global_threads=unpinned == "global")
    return json.loads(summary), (json.loads(trace_text) if trace else None)
