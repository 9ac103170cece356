"""Binding real rclpy entities to the callbacks of a chainrt model.

The rule is written once, in docs/model.md ("Binding real callbacks to the model"); every
chainrt executor follows it. A model callback of the executor is matched by its node and
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

from .. import output

KIND_TIMER, KIND_SUBSCRIPTION, KIND_SERVICE, KIND_CLIENT, KIND_EXTERNAL, KIND_EVENT = range(6)
_MODEL_KIND = {"timer": KIND_TIMER, "subscription": KIND_SUBSCRIPTION, "fusion_input": KIND_SUBSCRIPTION,
               "fusion_trigger": KIND_SUBSCRIPTION, "service": KIND_SERVICE, "client": KIND_CLIENT}
_KIND_WORD = {KIND_TIMER: "timer", KIND_SUBSCRIPTION: "subscription", KIND_SERVICE: "service",
              KIND_CLIENT: "client"}
DEFAULT_TOLERANCE = 0.01   # of the period, when the model gives no period_tolerance


class UnboundModelCallbacks(ValueError):
    """Model callbacks of the executor have no real counterpart (the message names each and
    the nearest real entity); ``ChainExecutor(allow_unbound=True)`` runs anyway."""


def _norm(name: str) -> str:
    return name.lstrip("/")


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

    def describe(self) -> str:
        if self.kind == KIND_TIMER:
            return f"timer, period {output.ms(self.period_ns, '.6g', unit=True)} ± {output.ms(self.tolerance_ns, '.6g', unit=True)}"
        word = _KIND_WORD.get(self.kind, "callback")
        return f"{word} of {'service' if self.kind in (KIND_SERVICE, KIND_CLIENT) else 'topic'} '{self.topic}'"


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

    def match(self, node: tuple[str, str], kind: int, period_ns: int, topic: str) -> ModelCallback | None:
        """The model callback the real entity is (see the module's rule), marked used."""
        self.seen.append(RealEntity(node, kind, period_ns, topic))
        fq, plain = node
        names = {c.node for c in self.callbacks}
        want = fq if fq in names else plain
        best, best_diff = None, None
        for c in self.callbacks:
            if c.used or c.kind != kind or c.node != want:
                continue
            if kind == KIND_TIMER:
                diff = abs(c.period_ns - period_ns)
                if c.period_ns and diff <= c.tolerance_ns and (best_diff is None or diff < best_diff):
                    best, best_diff = c, diff
            elif _norm(c.topic) == _norm(topic):
                best = c
                break
        if best is not None:
            best.used = True
        return best

    def unbound(self) -> list[ModelCallback]:
        return [c for c in self.callbacks if not c.used]

    def explain_unbound(self) -> str:
        """One line per model callback without a real counterpart, with the nearest real entity."""
        lines = []
        for c in self.unbound():
            cands = [e for e in self.seen if e.kind == c.kind and c.node in e.node]
            if not any(c.node in e.node for e in self.seen):
                why = f"no node '{c.node}' was added to the executor"
            elif not cands:
                why = f"node '{c.node}' has no {_KIND_WORD.get(c.kind, 'such callback')}"
            elif c.kind == KIND_TIMER:
                near = min(cands, key=lambda e: abs(e.period_ns - c.period_ns))
                off = abs(near.period_ns - c.period_ns)
                why = (f"the nearest timer of node '{c.node}' has period {output.ms(near.period_ns, '.6g', unit=True)} "
                       f"({100.0 * off / c.period_ns:.3g} % off; write its period exactly, e.g. "
                       f"'period: {near.period_ns}ns', or a wider 'period_tolerance')")
            else:
                what = "services" if c.kind in (KIND_SERVICE, KIND_CLIENT) else "topics"
                why = (f"node '{c.node}' has {_KIND_WORD[c.kind]}s of {what} "
                       + ", ".join(sorted({e.topic for e in cands})))
            lines.append(f"  {c.name} ({c.describe()}): {why}")
        return "\n".join(lines)


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
    # "arrival" (the rclpy executor's own order) needs no priorities from the model
    setup = _rclpy_exec.model_setup(m.to_yaml(), executor, None if policy == "arrival" else policy, threads)
    nodes_of = {n.name for n in m.nodes if n.executor == executor}
    prio = {name: (p, aff) for name, p, aff in setup["callbacks"]}
    view = ModelView(policy=setup["policy"], threads=list(setup["threads"]))
    for cb in m.callbacks:
        if cb.node not in nodes_of:
            continue
        p, aff = prio.get(cb.name, (None, (1 << 64) - 1))
        kind = _MODEL_KIND.get(cb.kind, KIND_SUBSCRIPTION)
        period = int(cb.period or 0)
        tol = cb.period_tolerance if cb.period_tolerance is not None else int(DEFAULT_TOLERANCE * period)
        name = cb.service if kind in (KIND_SERVICE, KIND_CLIENT) else cb.topic
        view.callbacks.append(ModelCallback(cb.name, cb.node, kind, period, name or "", p, aff, int(tol),
                                            offset_ns=int(cb.offset or 0)))
    for ch in m.chains:
        if any(view.by_name(c) is not None for c in ch.callbacks):
            view.chains.append((ch.name, int(ch.period or 0), int(ch.deadline or 0), [list(p) for p in ch.paths()]))
    return view
