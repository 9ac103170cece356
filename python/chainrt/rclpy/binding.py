"""Binding real rclpy entities to the callbacks of a chainrt model.

A model callback is matched by its node's name and
  - a timer: its period (the real timer's period within 1 %),
  - a subscription: its topic (``hi_data`` matches ``/hi_data``),
  - a service or a client: its service name (the model's ``topic`` field),
in creation order when a node has several candidates. ``ChainExecutor.bind(name, entity)``
binds explicitly and wins over the rule. Entities that match nothing run with the default:
no priority (last under fp/picas), no deadline (last under edf), their ROS kind rank under
ros-default; ``ChainExecutor.unmatched`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KIND_TIMER, KIND_SUBSCRIPTION, KIND_SERVICE, KIND_CLIENT, KIND_EXTERNAL, KIND_EVENT = range(6)
_MODEL_KIND = {"timer": KIND_TIMER, "subscription": KIND_SUBSCRIPTION, "fusion_input": KIND_SUBSCRIPTION,
               "fusion_trigger": KIND_SUBSCRIPTION, "service": KIND_SERVICE, "client": KIND_CLIENT}


def _norm(name: str) -> str:
    return name.lstrip("/")


@dataclass
class ModelCallback:
    name: str
    node: str
    kind: int
    period_ns: int
    topic: str
    priority: int | None = None
    affinity: int = (1 << 64) - 1
    used: bool = False
    offset_ns: int = 0                 # a timer's model offset: armed on the release grid


@dataclass
class ModelView:
    """What the executor needs from a model for ONE of its executors."""
    policy: str
    threads: list = field(default_factory=list)          # (name, cores, fifo, budget, period)
    callbacks: list[ModelCallback] = field(default_factory=list)
    chains: list = field(default_factory=list)            # (name, period_ns, deadline_ns, paths)

    def by_name(self, name: str) -> ModelCallback | None:
        for c in self.callbacks:
            if c.name == name:
                return c
        return None

    def match(self, node_name: str, kind: int, period_ns: int, topic: str) -> ModelCallback | None:
        for c in self.callbacks:
            if c.used or c.kind != kind or c.node != node_name:
                continue
            if kind == KIND_TIMER:
                if c.period_ns and abs(c.period_ns - period_ns) <= 0.01 * c.period_ns:
                    return c
            elif _norm(c.topic) == _norm(topic):
                return c
        return None


def load_view(model, executor: str | None, policy: str | None, threads: int | None,
              node_names: list[str]) -> ModelView:
    """The model (a path or a chainrt Model) seen by one executor. ``executor`` None: the model's
    only executor, else the one that hosts the first of ``node_names`` found in the model."""
    from chainrt import _rclpy_exec
    from chainrt.model import load_model

    m = load_model(model) if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__") else model
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
    setup = _rclpy_exec.model_setup(m.to_yaml(), executor, policy, threads)
    nodes_of = {n.name for n in m.nodes if n.executor == executor}
    prio = {name: (p, aff) for name, p, aff in setup["callbacks"]}
    view = ModelView(policy=setup["policy"], threads=list(setup["threads"]))
    for cb in m.callbacks:
        if cb.node not in nodes_of:
            continue
        p, aff = prio.get(cb.name, (None, (1 << 64) - 1))
        view.callbacks.append(ModelCallback(cb.name, cb.node, _MODEL_KIND.get(cb.kind, KIND_SUBSCRIPTION),
                                            int(cb.period or 0), cb.topic or "", p, aff,
                                            offset_ns=int(cb.offset or 0)))
    for ch in m.chains:
        if any(view.by_name(c) is not None for c in ch.callbacks):
            view.chains.append((ch.name, int(ch.period or 0), int(ch.deadline or 0), [list(p) for p in ch.paths()]))
    return view
