"""The reference system's structure as read from a chainrt model (the model file IS the
topology: shared/reference/autoware-reference-system.md, "Node types" and "Graph").

A node's type follows from its callbacks, the same rule the C++ workload applies
(bench/reference_system/src/system.cpp):

- Sensor: one timer, no subscription;           - Cyclic: one timer and subscriptions;
- Command: subscriptions that publish nothing;  - Transform: one subscription publishing;
- Fusion: two or more subscriptions publishing one and the same topic;
- Intersection: subscriptions publishing pairwise different topics (one-to-one);
- LaME's split Fusion (fusion_input / fusion_trigger callbacks) is a Fusion node too.

Also here: the hot path's latency floor (work after the later LiDAR sample plus one
non-preemptive blocking callback), the CPU demand of the model's callbacks per second, and the
scale of the working callbacks that makes a load need a given share of one core.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUB_KINDS = ("subscription", "fusion_input", "fusion_trigger")
NODE_TYPES = ("Sensor", "Transform", "Fusion", "Cyclic", "Intersection", "Command")


@dataclass
class NodeInfo:
    name: str
    type: str
    timer: str | None = None                                # callback name
    subscriptions: list[str] = field(default_factory=list)  # callback names, file order
    inputs: list[str] = field(default_factory=list)         # topics, in order
    outputs: list[str] = field(default_factory=list)        # topics


def node_types(model) -> dict[str, NodeInfo]:
    """Every node of the model with its reference-system type (ValueError if none fits)."""
    out: dict[str, NodeInfo] = {}
    by_node: dict[str, list] = {n.name: [] for n in model.nodes}
    for cb in model.callbacks:
        by_node[cb.node].append(cb)
    for name, cbs in by_node.items():
        timers = [c for c in cbs if c.kind == "timer"]
        subs = [c for c in cbs if c.kind in SUB_KINDS]
        outputs: list[str] = []
        for c in cbs:
            for t in c.publishes:
                if t not in outputs:
                    outputs.append(t)
        info = NodeInfo(name, "", timers[0].name if timers else None, [c.name for c in subs],
                        [c.topic for c in subs], outputs)
        if len(timers) > 1 or len(cbs) != len(timers) + len(subs):
            raise ValueError(f"node {name}: not a reference-system node (callbacks {[c.name for c in cbs]})")
        if timers and not subs:
            info.type = "Sensor"
        elif timers:
            info.type = "Cyclic"
        elif not outputs:
            info.type = "Command"
        elif len(subs) == 1:
            info.type = "Transform"
        elif len(outputs) == 1:
            info.type = "Fusion"
        elif len(outputs) == len(subs) and all(len(c.publishes) == 1 for c in subs):
            info.type = "Intersection"
        else:
            raise ValueError(f"node {name}: {len(subs)} subscriptions publishing {outputs} fit no node type")
        out[name] = info
    return out


def topic_graph(model) -> dict[str, dict[str, list[str]]]:
    """{topic: {"publishers": [nodes], "subscribers": [nodes]}} (the topology check)."""
    g = {t.name: {"publishers": [], "subscribers": []} for t in model.topics}
    for cb in model.callbacks:
        for t in cb.publishes:
            if cb.node not in g[t]["publishers"]:
                g[t]["publishers"].append(cb.node)
        if cb.kind in SUB_KINDS and cb.node not in g[cb.topic]["subscribers"]:
            g[cb.topic]["subscribers"].append(cb.node)
    return g


def working(model, cb) -> bool:
    """Whether a callback burns its work (the others only cache, start or record a sample)."""
    types = node_types(model)
    t = types[cb.node].type
    if cb.kind == "timer":
        return t == "Cyclic"
    if cb.kind == "fusion_input":
        return False
    return t in ("Transform", "Fusion", "Intersection")


def rates(model) -> dict[str, float]:
    """Activations per second of every callback, following the node semantics: timers 1/T, a
    subscription the rate of its topic; a Fusion publishes at the slower input's rate (both
    caches must be filled), a Cyclic node at its timer's rate."""
    types = node_types(model)
    by_name = {c.name: c for c in model.callbacks}
    topic_rate: dict[str, float] = {}
    cb_rate: dict[str, float] = {}
    for c in model.callbacks:
        if c.kind == "timer":
            cb_rate[c.name] = 1e9 / c.period
    for _ in range(len(model.callbacks) + 1):  # propagate along the (acyclic) graph
        for n in types.values():
            if n.type in ("Sensor", "Cyclic"):
                for t in n.outputs:
                    topic_rate[t] = cb_rate[n.timer]
            for s in n.subscriptions:
                topic = by_name[s].topic
                if topic in topic_rate:
                    cb_rate[s] = topic_rate[topic]
            if n.type in ("Transform", "Intersection"):
                for s in n.subscriptions:
                    if s in cb_rate:
                        for t in by_name[s].publishes:
                            topic_rate[t] = cb_rate[s]
            elif n.type == "Fusion" and all(s in cb_rate for s in n.subscriptions):
                topic_rate[n.outputs[0]] = min(cb_rate[s] for s in n.subscriptions)
    return cb_rate


def demand(model, working_only: bool = False) -> float:
    """CPU time the callbacks need per second of run time (1.0 = one core busy). A Fusion node
    caches (bcet) on every input and works (wcet) once per fused pair. ``working_only``: only
    the burned work (what the C++ workload spends on purpose)."""
    types = node_types(model)
    r = rates(model)
    total = 0.0
    for c in model.callbacks:
        rate = r.get(c.name, 0.0)
        node = types[c.node]
        best = c.bcet if c.bcet is not None else c.wcet
        if node.type == "Fusion" and c.kind == "subscription":
            # each input completes a fused pair for its share of the fused rate (Eq.: f / n)
            fused = min(r.get(s, 0.0) for s in node.subscriptions)
            share = fused / len(node.subscriptions)
            total += share * c.wcet if working_only else share * c.wcet + (rate - share) * best
        elif working_only and not working(model, c):
            continue
        else:
            total += rate * c.wcet
    return total / 1e9


def hot_path_floor(model, blocking: bool = True) -> int:
    """Lower bound of the hot-path latency on one core, in ns: the work that must follow the
    later of the two LiDAR samples before ObjectCollisionEstimator starts (its transformer, the
    Fusion's working run, RayGroundFilter, EuclideanClusterDetector; upstream's timestamp is
    taken at callback start), plus, with ``blocking``, one non-preemptive blocking callback (the
    longest working callback off the hot path)."""
    front = model.chain("hot_path_front").callbacks
    rear = model.chain("hot_path_rear").callbacks
    by_name = {c.name: c for c in model.callbacks}
    shared = [c for c in front if c in rear]
    # the later LiDAR's own branch (the longer of the two branches, to be conservative: none)
    branch = min(sum(by_name[c].wcet for c in chain[1:] if c not in shared) for chain in (front, rear))
    # the Fusion's run that completes the pair works; the end's own work is not in the latency
    after = [c for c in shared if c != shared[-1]]
    work = branch + sum(by_name[c].wcet for c in after)
    if blocking:
        hot = set(front) | set(rear)
        work += max((c.wcet for c in model.callbacks if c.name not in hot and working(model, c)), default=0)
    return int(work)


def scale_for(model, target: float) -> float:
    """Factor for the working callbacks' execution times so that demand(model) == target."""
    fixed = demand(model) - demand(model, working_only=True)
    work = demand(model, working_only=True)
    if work <= 0:
        raise ValueError("the model has no working callback to scale")
    return (target - fixed) / work


def work_per_callback(model) -> int:
    """The CPU time of one working callback in ns. The reference system gives every working node
    the same work (upstream: one number-cruncher limit for all), so the model's working callbacks
    must agree (ValueError otherwise)."""
    w = {c.wcet for c in model.callbacks if working(model, c)}
    if len(w) != 1:
        raise ValueError(f"the working callbacks of the model differ in execution time ({sorted(w)}); upstream's "
                         "reference system gives them one number-cruncher limit")
    return int(next(iter(w)))
