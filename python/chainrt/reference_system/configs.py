"""The executor configurations the benchmark compares, each as a variant of the reference
model (so that the real run, the simulator and the analysis read the same system):

============================ ========================================================================
name                         executors
============================ ========================================================================
``ros-default-st``           one ROS default executor, one thread (upstream "single-threaded")
``ros-default-mt``           one ROS default executor, two threads (upstream "multi-threaded")
``ros-default-prioritized``  upstream's "prioritized": five single-threaded ROS default executors —
                             front, rear, fusion (hot path; upstream SCHED_RR 1, here SCHED_FIFO 1),
                             planner (BehaviorPlanner, priority 30), other (no RT priority)
``picas-single``             one PiCAS executor, one thread, the reference page's callback priorities
``picas-multi``              PiCAS with single-threaded executors per chain group: planner chain,
                             hot path, the rest; executor priority = its most critical callback's
                             rank, applied as SCHED_FIFO priorities 3 / 2 (PiCAS Sec. III); the
                             rest runs no chain and stays SCHED_OTHER (``needs_fifo``)
``picas-synth``              the layout ``chainrt synthesize`` derives for the host's cores (PiCAS P1-P4:
                             priorities, chain-aware node allocation, pinned executors, SCHED_FIFO);
                             for one core where the benchmark pins every thread to one
``edf-st``                   one EDF ready-queue executor, one thread (EDF paper, readyQueue)
``edf-mt``                   one EDF ready-queue executor, two threads
``edf-multi``                (extra) EDF inside picas-multi's three executors: EDF within an executor,
                             the executors' fixed priorities across them (the rest SCHED_OTHER)
============================ ========================================================================

Loads: ``default`` keeps the model's execution times (2 ms per working callback); ``stressed``
scales the working callbacks so that the model's callbacks need ``STRESSED_DEMAND`` of one core.
Timer phases: the model gives none, so by default every timer starts when the executors start,
together (the synchronous release, the analyses' critical instant). Upstream's timers are not
together: rcl starts a timer's period when it is created, and upstream creates its nodes one
after another; ``creation_step_ns`` gives the timer of the k-th node (in the model's node order,
upstream's creation order) the offset k * step. ``planner_phase`` (default 0) releases the
BehaviorPlanner timer later still: with 50 ms the two 100 ms chains never start at the same
instant, which halves the ROS default executors' hot-path latency (docs/reference_system.md).

Scheduling classes (one rule for every configuration, ``needs_fifo``): an executor gets SCHED_FIFO
only where it runs a callback of a chain with a deadline; an executor that runs none (picas-multi's
"other") keeps SCHED_OTHER, and so do the processes' middleware threads (the ChainExecutor main is not started under ``chrt``: upstream.py). The reason
is the kernel's real-time bandwidth: the SCHED_FIFO threads of a core may take at most
``sched_rt_runtime_us`` of every ``sched_rt_period_us`` (95 % here); past it the kernel runs the
normal tasks for the rest of the period and every real-time thread of the core stops (~50 ms each
second). A configuration whose every thread is SCHED_FIFO at a 90 % load reaches that limit with
a probe or any other real-time thread beside it; one whose real-time part is only its chains
stays below it, and its non-critical work takes what the chains leave, as it would anyway.
A replica of a layout with its own priorities (``ros-default-prioritized``: upstream's, whose
"other" executor also runs the planner chain's later callbacks) keeps them: what it leaves
without a real-time priority stays SCHED_OTHER, as upstream runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import _core
from ..model import load_model, load_model_from_string
from . import topology, upstream

STRESSED_DEMAND = 0.9
DEFAULT_PLANNER_PHASE_NS = 0


@dataclass(frozen=True)
class Config:
    name: str
    policy: str
    summary: str
    layout: Callable  # (model, cores) -> list of (executor name, policy, threads, fifo, priority, nodes[, cores])
    # the layout's priorities are another system's own (upstream's prioritized layout): an executor
    # it gives no SCHED_FIFO priority stays SCHED_OTHER under --rt-priority too, whatever it runs
    own_priorities: bool = False


def _chain_nodes(model, chain: str) -> list[str]:
    by = {c.name: c for c in model.callbacks}
    out: list[str] = []
    for c in model.chain(chain).callbacks:
        if by[c].node not in out:
            out.append(by[c].node)
    return out


def _groups(model):
    front = _chain_nodes(model, "hot_path_front")
    rear = _chain_nodes(model, "hot_path_rear")
    planner = _chain_nodes(model, "behavior_planner")
    shared = [n for n in front if n in rear]
    hot = front + [n for n in rear if n not in front]
    other = [n.name for n in model.nodes if n.name not in hot and n.name not in planner]
    return ([n for n in front if n not in shared], [n for n in rear if n not in shared], shared, planner,
            other, hot)


def _single(policy: str, threads: int):
    def layout(model, cores: int):
        return [("main", policy, threads, None, None, [n.name for n in model.nodes])]
    return layout


def _prioritized(model, cores: int):
    front, rear, fusion, _, _, _ = _groups(model)
    # upstream: front/rear/fusion SCHED_RR priority 1, planner (BehaviorPlanner) 30, other none
    planner = ["BehaviorPlanner"]
    other = [n.name for n in model.nodes if n.name not in front + rear + fusion + planner]
    return [("front", "ros-default", 1, 1, None, front), ("rear", "ros-default", 1, 1, None, rear),
            ("fusion", "ros-default", 1, 1, None, fusion), ("planner", "ros-default", 1, 30, None, planner),
            ("other", "ros-default", 1, None, None, other)]


def _multi(policy: str):
    def layout(model, cores: int):
        _, _, _, planner, other, hot = _groups(model)
        groups = [("planner", planner), ("hot_path", hot), ("other", other)]
        # PiCAS: an executor's priority is that of its most critical callback; ranks -> FIFO 3, 2, 1
        def top(nodes):
            return max((c.priority or 0) for c in model.callbacks if c.node in nodes)
        ranked = sorted(groups, key=lambda g: -top(g[1]))
        n = len(ranked)
        return [(name, policy, 1, n - i, top(nodes), nodes) for i, (name, nodes) in enumerate(ranked)]
    return layout


def _synthesized(model, cores: int):
    """``chainrt synthesize`` on ``cores`` cores (PiCAS P1-P4): its callback priorities are
    written into ``model``; executors pinned to their cores (the 7th entry)."""
    s = _core._synthesize(model, cores=cores)["model"]  # no analysis result needed here
    prio = {c.name: c.priority for c in s.callbacks}
    cbs = model.callbacks
    for c in cbs:
        c.priority = prio[c.name]
    model.callbacks = cbs
    nodes: dict[str, list[str]] = {}
    for n in s.nodes:
        nodes.setdefault(n.executor, []).append(n.name)
    return [(e.name, "picas", 1, e.threads[0].fifo_priority, e.priority, nodes[e.name], list(e.threads[0].cores))
            for e in s.executors]


CONFIGS: dict[str, Config] = {c.name: c for c in [
    Config("ros-default-st", "ros-default", "ROS 2 default executor, 1 thread", _single("ros-default", 1)),
    Config("ros-default-mt", "ros-default", "ROS 2 default executor, 2 threads", _single("ros-default", 2)),
    Config("ros-default-prioritized", "ros-default",
           "upstream 'prioritized': 5 single-threaded default executors, hot path FIFO 1, planner FIFO 30",
           _prioritized, own_priorities=True),
    Config("picas-single", "picas", "PiCAS, one single-threaded executor", _single("picas", 1)),
    Config("picas-multi", "picas",
           "PiCAS, 3 single-threaded executors: planner FIFO 3, hot path FIFO 2, other (no chain) SCHED_OTHER",
           _multi("picas")),
    Config("picas-synth", "picas", "PiCAS layout from chainrt synthesize on the host's cores (executors pinned)",
           _synthesized),
    Config("edf-st", "edf", "EDF ready queue, 1 thread", _single("edf", 1)),
    Config("edf-mt", "edf", "EDF ready queue, 2 threads", _single("edf", 2)),
    Config("edf-multi", "edf",
           "EDF ready queue in picas-multi's 3 single-threaded executors (FIFO 3/2, other SCHED_OTHER)",
           _multi("edf")),
]}
DEFAULT_CONFIGS = list(CONFIGS)


def parse_configs(text: str | None, system: str = "replica") -> list[str]:
    """The configurations named in `text` (comma-separated; default: all of the system's)."""
    if system == "upstream":
        known = list(upstream.STOCK) + list(CONFIGS)
        default = upstream.default_configs()
    else:
        known, default = list(CONFIGS), list(DEFAULT_CONFIGS)
    if not text:
        return default
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def load_scale(model, load: str) -> float:
    if load == "default":
        return 1.0
    if load == "stressed":
        return topology.scale_for(model, STRESSED_DEMAND)
    raise ValueError(f"unknown load {load!r} (default, stressed)")


def scaled(model, scale: float):
    """The model with every working callback's execution time multiplied by `scale`."""
    if scale == 1.0:
        return model
    cbs = model.callbacks
    work = {c.name for c in cbs if topology.working(model, c)}
    for c in cbs:
        if c.name in work:
            c.wcet = int(round(c.wcet * scale))
    model.callbacks = cbs
    return model


def creation_phases(model, step_ns: int) -> dict[str, int]:
    """Timer name -> release offset as upstream's benchmark gives it: rcl starts a timer's period
    when the timer is created (rcl_timer_init), upstream creates its nodes one after another in
    the order of this model's node list, and each takes ``step_ns``; so the timer of the k-th
    node is released at k * step_ns (modulo its period)."""
    order = [n.name for n in model.nodes]
    return {c.name: (order.index(c.node) * step_ns) % c.period for c in model.callbacks if c.period}


def needs_fifo(model, nodes) -> bool:
    """Whether an executor holding ``nodes`` gets SCHED_FIFO: it runs a callback of a chain with a
    deadline. Every other executor (and the middleware) runs SCHED_OTHER, so that the real-time
    part of a configuration is its chains and stays inside the kernel's real-time bandwidth
    (module docstring). The simulator and the analyses read such an executor as a thread without
    a SCHED_FIFO priority: below every real-time thread of its core (model/facts.hpp,
    thread_fifo_priority), which is also where picas-multi's lowest FIFO rank put it."""
    critical = {cb for ch in model.chains if ch.deadline for cb in ch.callbacks}
    held = set(nodes)
    return any(c.name in critical for c in model.callbacks if c.node in held)


def variant(base_path: str, config: str, load: str = "default", pin_core: int | None = None,
            planner_phase_ns: int = DEFAULT_PLANNER_PHASE_NS, scale: float | None = None,
            rt_priority: int | None = None, creation_step_ns: int | None = None):
    """The model of one configuration: executors, threads, pinning, priorities, load, phases.
    ``rt_priority``: every executor thread that gets SCHED_FIFO (``needs_fifo``: it runs a chain
    with a deadline) runs at this base priority (shields all configurations alike from other
    processes); a configuration's own priorities are added on top, so their order is kept. An
    executor that runs no such chain has neither a SCHED_FIFO priority nor an executor priority
    (the model's fallback for its threads' SCHED_FIFO priority), whatever its layout says; a
    layout with another system's own priorities (``Config.own_priorities``: upstream's
    prioritized) keeps its executors without one at SCHED_OTHER too."""
    cfg = CONFIGS[config]
    model = load_model(base_path)
    model = scaled(model, load_scale(model, load) if scale is None else scale)
    cbs = model.callbacks
    phases = creation_phases(model, creation_step_ns) if creation_step_ns is not None else {}
    for c in cbs:
        if c.name in phases:
            c.offset = phases[c.name]
        if c.name == "BehaviorPlanner/timer":
            c.offset = (c.offset + planner_phase_ns) % c.period
    # The cores the layout may use: the host's, or one where the benchmark pins every thread to
    # one (the synthesized layout for two cores squeezed onto one would put its executors side by
    # side at one SCHED_FIFO priority, which no analysis bounds).
    layout = cfg.layout(model, 1 if pin_core is not None else model.hosts[0].cores)
    host = model.hosts[0].name
    executors, placement = [], {}
    template = model.executors[0]
    for name, policy, threads, fifo, priority, nodes, *pinned in layout:
        rt = needs_fifo(model, nodes) and not (cfg.own_priorities and fifo is None)
        e = type(template)()
        e.name, e.host, e.process, e.policy = name, host, "reference_system", policy
        e.priority = priority if rt else None
        e.dispatch_overhead = template.dispatch_overhead  # the runtime's own time per dispatch, measured once
        ts = []
        for i in range(threads):
            t = type(template.threads[0])()
            t.name = f"{name}_t{i}"
            t.cores = [pin_core] if pin_core is not None else (pinned[0] if pinned else [])
            t.fifo_priority = None if not rt else fifo if rt_priority is None else rt_priority + (fifo or 0)
            ts.append(t)
        e.threads = ts
        executors.append(e)
        for n in nodes:
            placement[n] = name
    missing = [n.name for n in model.nodes if n.name not in placement]
    if missing:
        raise ValueError(f"{config}: nodes without executor: {missing}")
    model.executors = executors
    nodes = model.nodes
    for n in nodes:
        n.executor = placement[n.name]
    model.nodes = nodes
    model.name = f"autoware_reference_{config}_{load}"
    # round trip through the loader: validation and derived fields (hops, groups)
    return load_model_from_string(model.to_yaml(), f"<{config}>")
