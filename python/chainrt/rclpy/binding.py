"""Binding real rclpy entities to the callbacks of a chainrt model.

The rule is described in docs/model.md ("Binding real callbacks to the model") and written once,
in C++ (runtime/entity_binding.hpp: binding_match, explain_unbound), which chainrt's rclcpp
executor uses too; this module calls it through chainrt._rclpy_exec. A model callback of the executor is matched by its node and
  - a timer: its period, within the model's ``period_tolerance`` (default 1 % of the period);
    of several timers of one node, the nearest period;
  - a subscription (and the fusion kinds): its topic (``hi_data`` matches ``/hi_data``);
  - a service: its service name; a client: the service name of the client;
in creation order when a node has several candidates. A node matches the model node named
like its fully qualified name without the leading ``/`` (``ns/camera``), else like its plain
name. ``ChainExecutor.bind(name, entity)`` binds explicitly and wins over the rule. Entities
that match nothing run with the default: no priority (last under fp/picas), no deadline (last
under edf), their ROS kind rank under ros-default; ``ChainExecutor.unmatched`` lists them. A
model callback without a real counterpart is an error when the executor starts
(:class:`UnboundModelCallbacks`), unless ``allow_unbound=True``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chainrt.model import load_model

KIND_TIMER, KIND_SUBSCRIPTION, KIND_SERVICE, KIND_CLIENT, KIND_EXTERNAL, KIND_EVENT = range(6)


class UnboundModelCallbacks(ValueError):
    """Model callbacks of the executor have no real counterpart (the message names each and
    the nearest real entity); ``ChainExecutor(allow_unbound=True)`` runs anyway."""


@dataclass
class ModelCallback:
    name: str
    node: str
    kind: int
    period_ns: int
    topic: str                    # subscriptions: the topic; services and clients: the service
    priority: int | None = None
    affinity: int = (1 << 64) - 1
    tolerance_ns: int = 0         # timers: how far a real period may be from period_ns
    used: bool = False
    offset_ns: int = 0                 # a timer's model offset: armed on the release grid


@dataclass
class RealEntity:
    """What the binding sees of one real entity (for the error message of an unbound callback)."""
    node: tuple[str, str]         # (fully qualified without the leading '/', plain name)
    kind: int
    period_ns: int
    topic: str


@dataclass
class ModelView:
    """What the executor needs from a model for ONE of its executors."""
    policy: str
    threads: list = field(default_factory=list)          # (name, cores, fifo, budget, period, real-time)
    callbacks: list[ModelCallback] = field(default_factory=list)
    chains: list = field(default_factory=list)            # (name, period_ns, deadline_ns, paths)
    seen: list[RealEntity] = field(default_factory=list)  # the real entities offered to match()

    def by_name(self, name: str) -> ModelCallback | None:
        for c in self.callbacks:
            if c.name == name:
                return c
        return None

    def reset(self) -> None:
        for c in self.callbacks:
            c.used = False
        self.seen = []

    def _candidates(self) -> list[tuple]:
        return [(c.name, c.node, c.kind, c.period_ns, c.tolerance_ns, c.topic, c.used) for c in self.callbacks]

    def match(self, node: tuple[str, str], kind: int, period_ns: int, topic: str) -> ModelCallback | None:
        """The model callback the real entity is (see the module's rule), marked used."""
        from chainrt import _rclpy_exec

        self.seen.append(RealEntity(node, kind, period_ns, topic))
        i = _rclpy_exec.binding_match(self._candidates(), (node[0], node[1], kind, period_ns, topic))
        if i is None:
            return None
        self.callbacks[i].used = True
        return self.callbacks[i]

    def unbound(self) -> list[ModelCallback]:
        return [c for c in self.callbacks if not c.used]

    def explain_unbound(self) -> str:
        """One line per model callback without a real counterpart, with the nearest real entity."""
        from chainrt import _rclpy_exec

        seen = [(e.node[0], e.node[1], e.kind, e.period_ns, e.topic) for e in self.seen]
        return _rclpy_exec.explain_unbound(self._candidates(), seen)


def choose_executor(m, executor: str | None, node_names: list[str]) -> str:
    """Which executor of model ``m`` this is: ``executor``, else the model's only one, else the
    one that hosts the first of ``node_names`` found in the model."""
    names = [e.name for e in m.executors]
    if executor is None:
        if len(names) == 1:
            executor = names[0]
        else:
            host = {n.name: n.executor for n in m.nodes}
            executor = next((host[n] for n in node_names if n in host), None)
            if executor is None:
                raise ValueError("the model has several executors; say which one with executor=...")
    if executor not in names:
        raise ValueError(f"the model has no executor '{executor}' (it has: {', '.join(names)})")
    return executor


def load_view(model, executor: str | None, policy: str | None, threads: int | None,
              node_names: list[str]) -> ModelView:
    """The model (a path or a chainrt Model) seen by one executor. ``executor`` None: the model's
    only executor, else the one that hosts the first of ``node_names`` found in the model."""
    from chainrt import _rclpy_exec

    m = load_model(model) if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__") else model
    executor = choose_executor(m, executor, node_names)
    # "arrival" (the rclpy executor's own order) needs no priorities from the model
    setup = _rclpy_exec.model_setup(m, executor, None if policy == "arrival" else policy, threads)
    offsets = {cb.name: int(cb.offset or 0) for cb in m.callbacks}
    view = ModelView(policy=setup["policy"], threads=list(setup["threads"]))
    # the executor's callbacks in file order, as the binding rule sees them (its kind, period
    # tolerance and topic or service come from runtime/entity_binding.hpp's binding_candidate)
    for name, p, aff, node, kind, period, tol, topic in setup["callbacks"]:
        view.callbacks.append(ModelCallback(name, node, kind, period, topic, p, aff, tol, offset_ns=offsets[name]))
    for ch in m.chains:
        if any(view.by_name(c) is not None for c in ch.callbacks):
            view.chains.append((ch.name, int(ch.period or 0), int(ch.deadline or 0), [list(p) for p in ch.paths()]))
    return view


_PARAMETER_SERVICES = ("describe_parameters", "get_parameters", "get_parameter_types", "list_parameters",
                       "set_parameters", "set_parameters_atomically", "get_type_description")


def _infrastructure(node, entity, kind) -> bool:
    """rclpy's own per-node services (parameters, type description): run, never listed as
    unmatched."""
    if kind != KIND_SERVICE:
        return False
    name = entity.service_name
    base = node.get_fully_qualified_name().rstrip("/") + "/"
    return name.startswith(base) and name[len(base):] in _PARAMETER_SERVICES


def _load_loop_module():
    """chainrt._rclpy_exec, or RuntimeError saying how to build it."""
    try:
        from chainrt import _rclpy_exec
    except ImportError as err:  # built only with ROS 2 (scripts/setup)
        raise RuntimeError("chainrt.rclpy needs the chainrt._rclpy_exec extension, which is built "
                           "with the rcl runtime: run scripts/setup") from err
    return _rclpy_exec
