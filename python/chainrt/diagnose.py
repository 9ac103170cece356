"""Why a chain has no bound, and the smallest change that gives it one (``chainrt analyze``).

For a chain the analysis leaves without a bound, ``explain(model, analysis, result)`` names the
term that makes it unbounded and tries changes of the model, each analysed again with the same
analysis (a few dozen analyses: milliseconds each):

* **its own work**: the chain's callbacks alone take longer than its period (no change of the
  rest helps);
* **overload**: the callbacks that may run on one of its executors' threads ask for more than
  those threads can give (Σ WCET / period of the timer that releases each callback, over the
  threads) — a term every analysis charges;
* **a blocking or interfering callback**: each other callback that shares an executor (or a
  core) with the chain, its execution time cut to 1 ns; one that alone gives the chain a bound
  is the cause — a lower-ranked callback *blocks* it (runs to completion once started), a
  higher-ranked one *interferes* with it;
* **the smallest change** for that cause: the largest execution time of that callback that
  still gives a bound (to the microsecond), the callback on a thread of its own (its node on a
  new single-threaded executor on a core of its own), and, under fixed priorities, the chain's
  callbacks ranked above it — each said only where the analysis confirms it.

Returns ``{chain: {"cause": text, "fixes": [text, ...]}}``; allocates; thread-safe (pure).
"""

from __future__ import annotations

from . import _core
from .model import load_model_from_string
from .model import policies as model_policies
from . import output

MAX_CANDIDATES = 24  # the other callbacks tried, largest execution time first
# The largest model diagnosed: each unbounded chain takes dozens of analyses of the whole model
# again (each what-if a copy through YAML), which at thousands of callbacks is minutes per chain.
MAX_CALLBACKS = 1000


def _bounded(model, analysis: str, chain: str) -> bool:
    try:
        ok, _ = _core._applicable(model, analysis)
        if not ok:
            return False
        return _core._analyze(model, analysis)["chains"][chain]["wcrt_bound_ns"] is not None
    except (ValueError, RuntimeError, KeyError):
        return False


def _copy(model):
    return load_model_from_string(model.to_yaml(), "<what-if>")


def _with_wcet(model, name: str, wcet: int):
    m = _copy(model)
    cbs = m.callbacks
    for c in cbs:
        if c.name == name:
            c.wcet = max(1, wcet)
            if c.bcet is not None:
                c.bcet = min(c.bcet, c.wcet)
    m.callbacks = cbs
    return load_model_from_string(m.to_yaml(), "<what-if>")


def _on_own_thread(model, name: str):
    """The model with the node of callback `name` on a new single-threaded executor of the same
    policy, on a core of its own (one more core on its host)."""
    m = _copy(model)
    # (plain values first: the model's lists are replaced below)
    node = next(c.node for c in m.callbacks if c.name == name)
    exec_name = next(n.executor for n in m.nodes if n.name == node)
    host_name, process, policy = next((e.host, e.process, e.policy) for e in m.executors if e.name == exec_name)
    hosts = m.hosts
    cores = 0
    for h in hosts:
        if h.name == host_name:
            h.cores += 1
            cores = h.cores
    m.hosts = hosts
    template = m.executors[0]
    e = type(template)()
    e.name, e.host, e.process, e.policy = f"{node}_own", host_name, process, policy
    t = type(template.threads[0])()
    t.name = "t0"
    t.cores = [cores - 1]
    e.threads = [t]
    m.executors = list(m.executors) + [e]
    nodes = m.nodes
    for n in nodes:
        if n.name == node:
            n.executor = e.name
    m.nodes = nodes
    cbs = m.callbacks
    for c in cbs:
        if c.node == node:
            c.affinity = []
    m.callbacks = cbs
    return load_model_from_string(m.to_yaml(), "<what-if>")


def _above(model, chain: str, name: str):
    """The model with the chain's callbacks ranked above every other callback (fixed priorities)."""
    m = _copy(model)
    top = max((c.priority or 0) for c in m.callbacks)
    own = set(m.chain(chain).callbacks)
    cbs = m.callbacks
    for c in cbs:
        if c.name in own:
            c.priority = top + 1 + (c.priority or 0) - min((x.priority or 0) for x in cbs if x.name in own)
    m.callbacks = cbs
    return load_model_from_string(m.to_yaml(), "<what-if>")


def _release_periods(model) -> dict[str, int]:
    """Each callback's release period: its own (timers), else the shortest of its publishers'."""
    period = {c.name: c.period for c in model.callbacks if c.kind == "timer" and c.period}
    subs = {}
    for c in model.callbacks:
        if c.topic:
            subs.setdefault(c.topic, []).append(c.name)
    changed = True
    while changed:
        changed = False
        for c in model.callbacks:
            if c.name not in period:
                continue
            for t in c.publishes:
                for s in subs.get(t, []):
                    if period[c.name] < period.get(s, 1 << 62):
                        period[s] = period[c.name]
                        changed = True
    return period


def _executors_of(model, chain: str) -> set[str]:
    node_exec = {n.name: n.executor for n in model.nodes}
    by = {c.name: c for c in model.callbacks}
    return {node_exec[by[c].node] for c in model.chain(chain).callbacks}


def _overload(model, chain: str) -> str | None:
    period = _release_periods(model)
    node_exec = {n.name: n.executor for n in model.nodes}
    for e in model.executors:
        if e.name not in _executors_of(model, chain):
            continue
        demand = sum(c.wcet / period[c.name] for c in model.callbacks
                     if node_exec[c.node] == e.name and period.get(c.name))
        threads = max(1, len(e.threads))
        if demand > threads:
            return (f"overload: the callbacks of executor '{e.name}' ask for {demand:.2f} of its {threads} "
                    f"thread(s) (execution time over release period)")
    return None


def _rank(model, chain: str, name: str) -> str:
    by = {c.name: c for c in model.callbacks}
    own = [by[c].priority for c in model.chain(chain).callbacks if by[c].priority is not None]
    p = by[name].priority
    if p is None or not own:
        return "delays"
    return "blocks" if p < min(own) else "interferes with"


def _largest_wcet(model, analysis: str, chain: str, name: str, wcet: int) -> int | None:
    """The largest execution time of `name` (to the microsecond, below its WCET) with a bound."""
    lo, hi = 0, wcet // 1000  # in us: lo has a bound (tested before), hi has none
    if not _bounded(_with_wcet(model, name, 1), analysis, chain):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _bounded(_with_wcet(model, name, mid * 1000), analysis, chain):
            lo = mid
        else:
            hi = mid
    return lo * 1000 if lo > 0 else 1


def explain_chain(model, analysis: str, chain: str) -> dict:
    by = {c.name: c for c in model.callbacks}
    own = model.chain(chain)
    own_work = sum(by[c].wcet for c in own.callbacks)
    if own.period and own_work > own.period:
        return {"cause": f"its own callbacks take {output.ms(own_work, 3, unit=True)}, more than its period {output.ms(own.period, 3, unit=True)}",
                "fixes": ["shorter callbacks on the chain, or a longer period"]}
    overload = _overload(model, chain)
    node_exec = {n.name: n.executor for n in model.nodes}
    host_of = {e.name: e.host for e in model.executors}
    mine = _executors_of(model, chain)
    hosts = {host_of[x] for x in mine}
    cands = [c for c in model.callbacks if c.name not in set(own.callbacks)
             and (node_exec[c.node] in mine or host_of[node_exec[c.node]] in hosts)]
    cands = sorted(cands, key=lambda c: -c.wcet)[:MAX_CANDIDATES]
    for c in cands:
        if not _bounded(_with_wcet(model, c.name, 1), analysis, chain):
            continue
        where = f"executor '{node_exec[c.node]}'"
        cause = (f"callback '{c.name}' ({output.ms(c.wcet, 3, unit=True)}, node '{c.node}', {where}) {_rank(model, chain, c.name)} it"
                 + (f"; {overload}" if overload else ""))
        fixes = []
        w = _largest_wcet(model, analysis, chain, c.name, c.wcet)
        if w is not None:
            fixes.append(f"'{c.name}' at most {output.ms(w, 3, unit=True)}")
        try:
            if _bounded(_on_own_thread(model, c.name), analysis, chain):
                fixes.append(f"node '{c.node}' on a thread of its own (another executor, another core)")
        except (ValueError, RuntimeError, StopIteration):
            pass
        policies = {e.policy for e in model.executors if e.name in mine}
        if policies <= {p["name"] for p in model_policies() if p["orders_by_priority"]}:
            try:
                if _bounded(_above(model, chain, c.name), analysis, chain):
                    fixes.append(f"the chain's callbacks ranked above '{c.name}' (higher priorities)")
            except (ValueError, RuntimeError):
                pass
        return {"cause": cause, "fixes": fixes}
    if overload:
        return {"cause": overload, "fixes": ["shorter callbacks, longer periods, or more threads"]}
    return {"cause": "no single callback's execution time makes the difference: the load of its executors' "
                     "threads together", "fixes": []}


def not_diagnosed(model, result: dict) -> str | None:
    """Why the chains of `result` without a bound are not diagnosed (a model above MAX_CALLBACKS),
    or None."""
    unbounded = sum(1 for c in result["chains"].values() if c["wcrt_bound_ns"] is None)
    n = len(model.callbacks)
    if not unbounded or n <= MAX_CALLBACKS:
        return None
    return (f"the {unbounded} chain(s) without a bound are not diagnosed: the model has {n} callbacks, and a "
            f"diagnosis analyses it dozens of times again per chain (done up to {MAX_CALLBACKS} callbacks)")


#: ROS 2's own executors' policy: it orders callbacks by kind and handle, never by chain.
CHAIN_UNAWARE = "ros-default"
#: The policies the advice recommends for chain-aware scheduling (each with a default analysis
#: and a priority per chain), in the order it names them: a choice, not a property of the policies.
CHAIN_AWARE = ("fp", "edf", "picas")


def one_of(names, quote: str = "") -> str:
    """``a, b or c`` (each name between `quote`s)."""
    names = [f"{quote}{n}{quote}" for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def chain_aware_advice(model_path: str) -> str:
    """How to give a model's chains a chain-aware policy (said by discover, analyze and report)."""
    return (f"for chain-aware scheduling let `chainrt synthesize {model_path} -o tuned.yaml` choose chain "
            f"priorities, executors and cores (PiCAS), or set the executors' `policy:` to {one_of(CHAIN_AWARE)} "
            "and give each chain a `priority:` (docs/model.md)")


def policy_advice(model, result: dict | None, model_path: str) -> str | None:
    """The advice to choose a chain-aware policy when every executor of the model runs ROS 2's
    default policy and some chain of `result` (an analysis dict; None: no analysis applied) misses
    its deadline or has no bound; None otherwise."""
    if not model.executors or any(e.policy != CHAIN_UNAWARE for e in model.executors):
        return None
    if result is not None and all(c["schedulable"] for c in result["chains"].values()):
        return None
    return f"the executors run ROS 2's default policy ({CHAIN_UNAWARE}), which knows no chains: " \
        + chain_aware_advice(model_path)


def explain(model, analysis: str, result: dict) -> dict:
    """``{chain: {"cause", "fixes"}}`` for every chain of `result` (an analysis dict) without a bound
    whose reason is not another chain's (those name it already); nothing for a model above
    MAX_CALLBACKS (not_diagnosed says so)."""
    out = {}
    if len(model.callbacks) > MAX_CALLBACKS:
        return out
    for name, c in result["chains"].items():
        if c["wcrt_bound_ns"] is not None or "has no bound itself" in (c.get("reason") or ""):
            continue
        if (c.get("reason") or "").startswith("analysis not applicable"):
            continue
        try:
            out[name] = explain_chain(model, analysis, name)
        except (ValueError, RuntimeError, KeyError, StopIteration):
            continue
    return out
