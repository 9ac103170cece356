"""Priorities, deadlines and chains marked in code on chainrt.rclpy's ChainExecutor.

Without a model file, a user marks entities in the nodes' own code or where the executor is
set up: a callback's name, priority and WCET, a chain of entities with its period, deadline,
criticality and chain priority, a callback group's executor thread. When the executor builds its
loop it turns the marks and its entities into the model library's Model through the one builder
of such models (C++ ``runtime::model_from_code``, through ``chainrt._rclpy_exec``; the rclcpp
executor uses it too) and binds and schedules by that model exactly as by a model file. With a
model file, the file wins where both speak (docs/rclpy.md). ``save_model`` writes the model as
the model library writes models, for ``chainrt check`` / ``analyze`` / ``simulate`` /
``synthesize``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from chainrt.model import load_model, load_model_from_string
from chainrt.rclpy.binding import (KIND_CLIENT, KIND_SERVICE, KIND_SUBSCRIPTION, KIND_TIMER, _infrastructure,
                                   choose_executor, load_view)


def seconds_to_ns(value: float | None, what: str) -> int:
    if value is None:
        return 0
    ns = int(round(float(value) * 1e9))
    if ns <= 0:
        raise ValueError(f"{what} must be positive (seconds)")
    return ns


@dataclass
class CallbackMarks:
    entity: Any
    name: str = ""
    priority: int | None = None
    wcet_ns: int = 0


@dataclass
class ChainMarks:
    entities: list
    period_ns: int = 0
    deadline_ns: int = 0
    criticality: str = "rt"
    level: int = 0
    priority: int | None = None


@dataclass
class ThreadMarks:
    group: Any
    name: str
    cores: list[int] = field(default_factory=list)
    fifo_priority: int | None = None


@dataclass
class Marks:
    callbacks: dict[int, CallbackMarks] = field(default_factory=dict)   # by id(entity)
    chains: dict[str, ChainMarks] = field(default_factory=dict)
    groups: dict[int, ThreadMarks] = field(default_factory=dict)        # by id(group)
    notes: list[str] = field(default_factory=list)                      # what the model file overrode
    dirty: bool = False


def entities_of(nodes: list, infrastructure) -> list[tuple]:
    """(entity, node, kind, period_ns, topic) of the executor's timers, subscriptions, services
    and clients: node by node in the order added, timers, subscriptions, services, clients, each
    in creation order (the executor's registration order; rclpy's own services left out)."""
    out = []
    for node in nodes:
        out += [(t, node, KIND_TIMER, t.timer_period_ns, "") for t in node.timers]
        out += [(s, node, KIND_SUBSCRIPTION, 0, s.topic_name) for s in node.subscriptions]
        out += [(s, node, KIND_SERVICE, 0, s.service_name) for s in node.services
                if not infrastructure(node, s, KIND_SERVICE)]
        out += [(c, node, KIND_CLIENT, 0, c.service_name) for c in node.clients]
    return out


def build(marks: Marks, nodes: list, infrastructure, *, base=None, executor: str | None, policy: str | None,
          threads: int | None, bound: dict[int, str], measured: dict[int, int],
          require_wcet: bool) -> tuple[str, dict[int, str], list[str]]:
    """The model of the marks and the entities of ``nodes`` (on ``base``, a model file's Model,
    when given; ``bound``: id(entity) -> the file's callback it binds to). Returns its YAML, the
    model callback of each entity (by id) and the notes of marks the file overrode."""
    from chainrt import _rclpy_exec

    ents = entities_of(nodes, infrastructure)
    index = {id(e[0]): i for i, e in enumerate(ents)}
    group_of = {id(t.group): t.name for t in marks.groups.values()}
    rows = []
    for entity, node, kind, period, topic in ents:
        m = marks.callbacks.get(id(entity))
        group = entity.callback_group
        thread = group_of.get(id(group), "")
        rows.append((node.get_fully_qualified_name().lstrip("/"), kind, int(period), topic,
                     "" if group is node.default_callback_group else str(id(group)),
                     type(group).__name__ == "ReentrantCallbackGroup", bound.get(id(entity), ""),
                     int(measured.get(id(entity), 0)), m is not None or bool(thread),
                     m.name if m else "", m.priority if m else None, m.wcet_ns if m else 0, thread))
    thread_rows, seen = [], set()
    for t in marks.groups.values():
        if t.name not in seen:
            seen.add(t.name)
            thread_rows.append((t.name, list(t.cores), t.fifo_priority))
    chain_rows = []
    for name, c in marks.chains.items():
        missing = [e for e in c.entities if id(e) not in index]
        if missing:
            raise ValueError(f"add_chain('{name}'): a callback of a node not added to this executor")
        chain_rows.append((name, [index[id(e)] for e in c.entities], c.period_ns, c.deadline_ns,
                           c.criticality, c.level, c.priority))
    if base is not None:
        names = [x for n in nodes for x in (n.get_fully_qualified_name().lstrip("/"), n.get_name())]
        executor = choose_executor(base, executor, names)
    model_policy = policy if policy not in (None, "arrival") else "ros-default"
    yaml, model_names, notes, _ = _rclpy_exec.model_from_code(
        base, executor or "main", model_policy, int(threads or 1),
        os.cpu_count() or 1, rows, thread_rows, chain_rows, require_wcet)
    return yaml, {id(e[0]): n for e, n in zip(ents, model_names) if n}, list(notes)


class MarksMixin:
    """The marking methods of chainrt.rclpy.ChainExecutor (see the module's text)."""

    def _markable(self) -> Marks:
        if self._spinning:
            raise RuntimeError("chainrt.rclpy: mark entities before spin(), not while it spins")
        if self._lame_period_ns:
            raise ValueError("chainrt.rclpy: marks in code do not combine with lame_controller "
                             "(it plans from a model file)")
        self._marks.dirty = True
        self._force_build = True   # bound again at the next spin_once
        return self._marks

    def mark(self, entity, *, name: str | None = None, priority: int | None = None,
             wcet: float | None = None) -> None:
        """Mark a timer, subscription, service or client: its model name (default
        ``<node>/timer@20ms`` and the like), its priority (larger = more important) and its
        WCET in seconds (default: measured when the model is saved)."""
        if entity is None:
            raise ValueError("mark(): no entity (None)")
        marks = self._markable()
        m = marks.callbacks.setdefault(id(entity), CallbackMarks(entity))
        if name:
            m.name = str(name)
        if priority is not None:
            m.priority = int(priority)
        if wcet is not None:
            m.wcet_ns = seconds_to_ns(wcet, "wcet")

    def set_callback_priority(self, entity, priority: int) -> None:
        """The callback's priority (larger = more important): ``mark(entity, priority=...)``."""
        self.mark(entity, priority=priority)

    def add_chain(self, name: str, callbacks: list, *, deadline: float | None = None,
                  period: float | None = None, criticality: str = "rt", level: int = 0,
                  priority: int | None = None) -> None:
        """A chain of entities, source first (a subscription after X: X publishes its topic; a
        service after X: X calls it), with its end-to-end deadline and period in seconds
        (defaults: the source timer's period), criticality class ``rt``/``be`` and level, and
        chain priority."""
        if not name:
            raise ValueError("add_chain(): a chain needs a name")
        if not callbacks or any(c is None for c in callbacks):
            raise ValueError(f"add_chain('{name}'): a chain needs its callbacks (no None)")
        marks = self._markable()
        marks.chains[str(name)] = ChainMarks(list(callbacks), seconds_to_ns(period, "period"),
                                             seconds_to_ns(deadline, "deadline"), str(criticality), int(level),
                                             None if priority is None else int(priority))

    def set_callback_group_thread(self, group, thread: str, *, cores: list[int] | tuple = (),
                                  fifo_priority: int | None = None) -> None:
        """Every callback of ``group`` runs on executor thread ``thread`` (pinned to ``cores``,
        SCHED_FIFO ``fifo_priority``)."""
        if group is None or not thread:
            raise ValueError("set_callback_group_thread(): a callback group and a thread name")
        marks = self._markable()
        marks.groups[id(group)] = ThreadMarks(group, str(thread), [int(c) for c in cores],
                                              None if fifo_priority is None else int(fifo_priority))

    @property
    def mark_notes(self) -> list[str]:
        """What the model file overrode of the marks."""
        return list(self._marks.notes)

    def model_yaml(self) -> str:
        """The model the executor runs by (with marks: the model of them; without marks or a
        model: one of the nodes added), as the model library writes models. A callback without
        a WCET gets the largest CPU time measured so far; ValueError names one never run and
        never given one."""
        if self._spinning:
            raise RuntimeError("chainrt.rclpy: model_yaml()/save_model() while the executor spins")
        with self._build_lock:
            base = self._file_model()
            if not self._marks.callbacks and not self._marks.chains and not self._marks.groups and base is not None:
                return base.to_yaml()
            return self._model_of_marks(base, require_wcet=True)[0]

    def save_model(self, path) -> None:
        """Write :meth:`model_yaml` to ``path`` (``chainrt check path`` reads it)."""
        text = self.model_yaml()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    # ---- applying the marks (the executor's build lock held) ---------------------------------
    def _file_model(self):

        m = self._file_model_arg
        if m is None:
            return None
        if isinstance(m, (str, bytes)) or hasattr(m, "__fspath__"):  # parsed once, then kept
            self._file_model_arg = load_model(m)
            if self._model_arg is m:
                self._model_arg = self._file_model_arg
        return self._file_model_arg

    def _model_of_marks(self, base, require_wcet: bool) -> tuple[str, dict[int, str], list[str], str]:

        names = [x for n in self._node_order for x in (n.get_fully_qualified_name().lstrip("/"), n.get_name())]
        bound: dict[int, str] = {}
        executor = self._executor_arg
        if base is not None:  # the file's binding, as the executor binds (explicit, else the rule)
            executor = choose_executor(base, executor, names)
            view = load_view(base, executor, self._policy_arg, self._threads_arg, names)
            view.reset()
            explicit = {id(e): n for n, e in self._explicit.items()}
            for entity, node, kind, period, topic in entities_of(self._node_order, _infrastructure):
                if id(entity) in explicit:
                    bound[id(entity)] = explicit[id(entity)]
                    continue
                mc = view.match((node.get_fully_qualified_name().lstrip("/"), node.get_name()), kind, period, topic)
                if mc is not None:
                    bound[id(entity)] = mc.name
        measured: dict[int, int] = {}
        if self._loop is not None:
            cbs = self.report(with_samples=False)["callbacks"]
            for _, entity, _, name in self._ents:
                measured[id(entity)] = int(cbs.get(name, {}).get("cpu_max_ns", 0))
        yaml, by_entity, notes = build(self._marks, self._node_order, _infrastructure, base=base, executor=executor,
                                       policy=self._policy_arg, threads=self._threads_arg, bound=bound,
                                       measured=measured, require_wcet=require_wcet)
        return yaml, by_entity, notes, executor or "main"

    def _apply_marks(self) -> None:
        """The model of the marks becomes the executor's model (the file's, or none, before)."""

        yaml, by_entity, notes, executor = self._model_of_marks(self._file_model(), require_wcet=False)
        self._marks.notes = notes
        self._marks.dirty = False
        self._code_names = by_entity
        self._model_arg = load_model_from_string(yaml, "<marks in code>")
        self._model_executor = executor
        self._view = None
