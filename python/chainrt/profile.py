"""Measured execution times into the model (``chainrt profile``).

Reads the executor monitoring topic (``<namespace>/chainrt/chain_stats``,
``chainrt_msgs/msg/ChainStats``, docs/runtime.md and docs/workflow.md) that chainrt's executors
publish -- the C++ runtime on rcl, the rclcpp and the rclpy executor publish the same message --
and derives, per callback of the model:

* execution time: thread CPU time per instance (``--time cpu``, the default: what the callback
  itself consumed, not time it spent preempted) or wall time (``--time wall``);
  BCET = the observed minimum, WCET = the observed maximum x (1 + margin), rounded up to a
  microsecond. The margin (default 20 %) covers paths the run did not exercise: an observed
  maximum is a lower bound of the true WCET, never the WCET itself;
* inter-arrival times (timers: between releases; subscriptions: between starts);
* chain response times (from the executors' own chain statistics);
* the hop latencies the CROS-RT cost fit reads (``communication.measurements``): for each hop
  of a chain, the start of the subscriber minus the finish of the publisher of the same chain
  instance, over the instances where the subscriber's executor ran nothing else in between (so
  the figure is the communication path, not blocking by other callbacks); the median is written.

Percentiles go into a side file (``MODEL.profile.json``). The model is changed only with
``write=True``; otherwise a diff is shown. Edits are made in the file's text (comments, order and
formatting of everything else stay as they were).

Monitoring message keys used (of its plain form, chainrt.monitor_msg.to_dict; the required ones
first):
``callbacks.NAME.{instances, cpu_total_ns, cpu_max_ns, wall_max_ns}``; optional:
``callbacks.NAME.{cpu_min_ns, wall_min_ns, wall_total_ns, node, kind, topic}``, ``run_id``,
``executor``, ``seq``, ``samples.NAME.{start_ns, wall_ns, cpu_ns, release_ns, thread}`` (the
dispatches since the previous message), ``samples_lost``, ``chains`` (as ``chainrt run``).
"""

from __future__ import annotations

import difflib
import math
import time
from dataclasses import dataclass, field

import yaml

from . import accounting as acc
from . import monitor_msg, output
from ._core import parse_duration
from .fastdds import loopback_participants
from .runtime import quantile
from .runtime import merge as merge_chain_reports
from .discover import WCET_MARK  # the skeleton's remark that --write replaces

STATS_SUFFIX = monitor_msg.STATS_SUFFIX
PROFILED_MARK = "bcet, wcet: measured by chainrt profile"
DEFAULT_MARGIN = 0.20
PERCENTILES = (0.5, 0.9, 0.99)


class ProfileError(RuntimeError):
    """A profile cannot be made or written (one-line message for the user)."""


# --------------------------------------------------------------------------- collecting

@dataclass
class Source:
    """What one executor (run id, executor name) reported."""
    last: dict = field(default_factory=dict)                     # the newest message
    seqs: set = field(default_factory=set)
    samples: dict = field(default_factory=dict)                  # callback -> {key: [..]}
    lost: int = 0


@dataclass
class Collection:
    sources: dict = field(default_factory=dict)                  # (run_id, executor) -> Source
    messages: int = 0
    ignored: int = 0                                             # other runs, malformed

    def add(self, msg: dict, run_id: str | None = None) -> None:
        """One monitoring message, in its plain form (monitor_msg.to_dict)."""
        if not isinstance(msg, dict) or not isinstance(msg.get("callbacks"), dict):
            self.ignored += 1
            return
        if run_id and msg.get("run_id") != run_id:
            self.ignored += 1
            return
        key = (str(msg.get("run_id", "")), str(msg.get("executor", "")))
        src = self.sources.setdefault(key, Source())
        seq = msg.get("seq")
        if seq is not None and seq in src.seqs:
            return  # a duplicate
        if seq is not None:
            src.seqs.add(seq)
        self.messages += 1
        if not src.last or _counted(msg) >= _counted(src.last):
            src.last = msg
        src.lost += int(msg.get("samples_lost", 0) or 0)
        for name, cols in (msg.get("samples") or {}).items():
            dst = src.samples.setdefault(name, {})
            for k, v in cols.items():
                if isinstance(v, list):
                    dst.setdefault(k, []).extend(int(x) for x in v)


def _counted(msg: dict) -> int:
    return sum(int(c.get("instances", 0)) for c in msg["callbacks"].values())


def listen(duration_s: float, topic: str | None = None, run_id: str | None = None,
           until=None, settle_s: float = 1.0) -> Collection:
    """Subscribes to the monitoring topic(s) -- ``topic``, or every ``*/chainrt/chain_stats``
    found in the graph -- for ``duration_s`` (:func:`_listen`), from a participant that binds
    nothing beyond loopback under localhost discovery (fastdds.loopback_participants)."""
    with loopback_participants():
        return _listen(duration_s, topic, run_id, until, settle_s)


def _listen(duration_s: float, topic: str | None = None, run_id: str | None = None,
           until=None, settle_s: float = 1.0) -> Collection:
    """Subscribes to the monitoring topic(s) -- ``topic``, or every ``*/chainrt/chain_stats``
    found in the graph -- for ``duration_s`` from when the first one is found (discovery is
    given 10 s more) (or, with ``until``, while ``until()`` is False and
    then ``settle_s`` more to catch the executors' final messages)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, QoSReliabilityPolicy

    try:
        chain_stats = monitor_msg.message_type()
    except monitor_msg.MessagesUnavailable as e:
        raise ProfileError(str(e)) from None

    col = Collection()
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("_chainrt_profile", context=context)
        ex = SingleThreadedExecutor(context=context)
        ex.add_node(node)
        qos = QoSProfile(depth=1000, reliability=QoSReliabilityPolicy.RELIABLE)
        subscribed: set[str] = set()

        def subscribe(t: str) -> None:
            if t not in subscribed:
                subscribed.add(t)
                node.create_subscription(chain_stats, t, lambda m: col.add(monitor_msg.to_dict(m), run_id), qos)

        if topic:
            subscribe(topic)
        start = time.monotonic()
        end = start + duration_s
        # without a topic the listening time starts when the first monitoring topic is found
        # (discovery on a loaded machine takes seconds); it is looked for at most 10 s more
        found = bool(topic)
        last_scan = 0.0
        stop_at = None
        while True:
            now = time.monotonic()
            if until is None and now >= end and (found or now >= end + 10.0):
                break
            if until is not None:
                if stop_at is None and until():
                    stop_at = now + settle_s
                if stop_at is not None and now >= stop_at:
                    break
                if now >= end + 3600:  # a safety net: never listen forever
                    break
            if not topic and now - last_scan > 0.25:
                last_scan = now
                for t, types in node.get_topic_names_and_types():
                    if t.endswith(STATS_SUFFIX) and monitor_msg.TYPE_NAME in types:
                        subscribe(t)
                        if not found:
                            found, end = True, now + duration_s
            ex.spin_once(timeout_sec=0.05)
        ex.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    return col


# --------------------------------------------------------------------------- the model's text

def _ros(name: str) -> str:
    return "/" + str(name).lstrip("/")


@dataclass
class ModelView:
    """The parts of a model file profile needs, read with PyYAML (a skeleton without execution
    times does not load in the validating parser yet), with the text positions for editing."""
    text: str
    root: yaml.MappingNode
    callbacks: dict        # name -> {"node": MappingNode, "fields": {key: (keynode, valnode)}}
    data: dict             # the plain data
    executors: dict = field(default_factory=dict)  # name -> as callbacks


def _entries(root: yaml.MappingNode, section: str) -> dict:
    """name -> {"node", "fields"} of the named mappings listed under the top-level ``section``."""
    out = {}
    for k, v in root.value:
        if k.value == section and isinstance(v, yaml.SequenceNode):
            for item in v.value:
                if not isinstance(item, yaml.MappingNode):
                    continue
                fields = {kk.value: (kk, vv) for kk, vv in item.value}
                if "name" in fields and isinstance(fields["name"][1], yaml.ScalarNode):
                    out[fields["name"][1].value] = {"node": item, "fields": fields}
    return out


def read_model(path: str) -> ModelView:
    try:
        with open(path) as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: {e}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ProfileError(f"{path}{where}: not valid YAML ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        raise ProfileError(f"{path}: not a chainrt model (the top level is not a mapping)")
    cbs = _entries(root, "callbacks")
    if not cbs:
        raise ProfileError(f"{path}: the model has no callbacks")
    return ModelView(text, root, cbs, data, _entries(root, "executors"))


def _callback_info(view: ModelView) -> dict:
    """name -> {node, kind, topic, publishes} from the plain data."""
    out = {}
    for cb in view.data.get("callbacks") or []:
        if isinstance(cb, dict) and "name" in cb:
            kind = str(cb.get("kind", ""))
            # the monitor's "topic" of a service server or client is its service name
            where = cb.get("service", "") if kind in ("service", "client") else cb.get("topic", "")
            out[str(cb["name"])] = {"node": str(cb.get("node", "")), "kind": kind,
                                    "topic": str(where), "period_ns": _period_ns(cb.get("period")),
                                    "publishes": [str(t) for t in cb.get("publishes") or []]}
    return out


def _period_ns(text) -> int | None:
    if text is None:
        return None
    try:
        d = parse_duration(str(text))
        return int(d) if d else None
    except (ValueError, ImportError):
        return None


def hop_kind(view: ModelView, a_node: str, b_node: str) -> str:
    """Same process -> intra_process, same host -> same_host, else remote (as docs/model.md)."""
    d = view.data
    execs = {str(e.get("name")): e for e in d.get("executors") or [] if isinstance(e, dict)}
    nodes = {str(n.get("name")): n for n in d.get("nodes") or [] if isinstance(n, dict)}
    first_host = next((str(h.get("name")) for h in d.get("hosts") or [] if isinstance(h, dict)), "localhost")
    only_exec = next(iter(execs)) if len(execs) == 1 else ""

    def place(node):
        e = str(nodes.get(node, {}).get("executor", only_exec))
        ex = execs.get(e, {})
        return str(ex.get("process", e)), str(ex.get("host", first_host))
    (pa, ha), (pb, hb) = place(a_node), place(b_node)
    return "intra_process" if pa == pb else ("same_host" if ha == hb else "remote")


# --------------------------------------------------------------------------- the profile

def dist(values: list[int]) -> dict:
    if not values:
        return {}
    out = {"n": len(values), "min": min(values), "mean": sum(values) / len(values), "max": max(values)}
    for p in PERCENTILES:
        out[f"p{round(p * 100)}"] = quantile(values, p)
    return out


def _match(name: str, info: dict, monitor_cbs: dict, samples: dict | None = None) -> str | None:
    """The monitored callback that is the model's callback `name`: the same name, else the same
    node, kind and topic (an executor that does not know the model's names); of several timers
    of one node, the one whose median inter-release time is the model's period (within 15 %)."""
    if name in monitor_cbs:
        return name
    cands = [m for m, c in monitor_cbs.items()
             if _ros(c.get("node", "")) == _ros(info["node"]) and c.get("kind") == info["kind"]
             and (info["kind"] == "timer" or _ros(c.get("topic", "")) == _ros(info["topic"]))]
    if len(cands) > 1 and info["kind"] == "timer" and info.get("period_ns"):
        def period_of(m):
            rel = sorted(r for r in (samples or {}).get(m, {}).get("release_ns", []) if r > 0)
            gaps = [b - a for a, b in zip(rel, rel[1:])]
            return quantile(gaps, 0.5) if gaps else None
        cands = [m for m in cands if period_of(m) and abs(period_of(m) - info["period_ns"]) <= 0.15 * info["period_ns"]]
    return cands[0] if len(cands) == 1 else None


def _ceil_us(ns: float) -> int:
    return max(1000, int(math.ceil(ns / 1000.0)) * 1000)


def _floor_us(ns: float) -> int:
    return max(1000, int(ns // 1000) * 1000)


def build_profile(view: ModelView, col: Collection, margin: float = DEFAULT_MARGIN,
                  time_kind: str = "cpu") -> dict:
    """The profile of every model callback the monitor reported; raises ProfileError when none."""
    if not col.sources:
        raise ProfileError("no monitoring message received (are the nodes running under a chainrt "
                           "executor with monitoring on, e.g. `chainrt run MODEL --stats-period 200ms`, "
                           "in the same ROS_DOMAIN_ID?)")
    infos = _callback_info(view)
    # merge the executors: each callback is run by one of them
    monitor_cbs, samples, owner = {}, {}, {}
    for key, src in col.sources.items():
        for name, c in src.last.get("callbacks", {}).items():
            if isinstance(c, dict):
                monitor_cbs[name] = c
                owner[name] = key
        for name, cols in src.samples.items():
            samples[name] = cols
    cbs, missing, by_model, model_name = {}, [], {}, {}
    for name, info in infos.items():
        m = _match(name, info, monitor_cbs, samples)
        if m:
            model_name[m] = name
        if m and m in samples:
            by_model[name] = samples[m]
        c = monitor_cbs.get(m) if m else None
        if not c or int(c.get("instances", 0)) == 0:
            missing.append(name)
            continue
        s = samples.get(m, {})
        n = int(c["instances"])
        cpu, wall = s.get("cpu_ns", []), s.get("wall_ns", [])
        starts = s.get("start_ns", [])
        rel = [r for r in s.get("release_ns", []) if r > 0]
        arrivals = sorted(rel if info["kind"] == "timer" and rel else starts)
        inter = [b - a for a, b in zip(arrivals, arrivals[1:])]
        agg = {"cpu": {"n": n, "mean": c["cpu_total_ns"] / n, "max": int(c["cpu_max_ns"])},
               "wall": {"n": n, "max": int(c["wall_max_ns"])}}
        # a minimum of 0 is an executor that does not record minima (no instance takes 0 ns)
        if int(c.get("cpu_min_ns", 0) or 0) > 0:
            agg["cpu"]["min"] = int(c["cpu_min_ns"])
        if int(c.get("wall_min_ns", 0) or 0) > 0:
            agg["wall"]["min"] = int(c["wall_min_ns"])
        if "wall_total_ns" in c:
            agg["wall"]["mean"] = c["wall_total_ns"] / n
        row = {"monitored_as": m, "instances": n, "executor": owner[m][1],
               "cpu_ns": {**dist(cpu), **agg["cpu"]} if cpu else agg["cpu"],
               "wall_ns": {**dist(wall), **agg["wall"]} if wall else agg["wall"],
               "inter_arrival_ns": dist(inter)}
        # percentiles come from the samples; extremes and mean from the executor's exact aggregates
        if cpu:
            row["cpu_ns"].update({"n": n, "mean": agg["cpu"]["mean"], "max": agg["cpu"]["max"]})
        t = row["cpu_ns"] if time_kind == "cpu" else row["wall_ns"]
        hi = t["max"]
        lo = t.get("min") or min(cpu if time_kind == "cpu" else wall, default=None)
        row["wcet_ns"] = _ceil_us(hi * (1.0 + margin))
        # no minimum reported and no samples: BCET is not known (the model's stays)
        row["bcet_ns"] = min(_floor_us(lo), row["wcet_ns"]) if lo else None
        cbs[name] = row
    if not cbs:
        raise ProfileError("the monitoring messages name none of the model's callbacks (" +
                           ", ".join(sorted(monitor_cbs)[:6]) + "); is it the same system?")
    _observed_phases(cbs, infos, by_model)
    chains = _chains(col)
    hops = _hops(view, infos, by_model)
    lost = sum(s.lost for s in col.sources.values())
    overhead = _dispatch_overheads(view, col, model_name)
    return {"dispatch_overhead_ns": overhead, "margin": margin, "time": time_kind, "messages": col.messages,
            "runs": sorted({k[0] for k in col.sources}), "executors": sorted({k[1] for k in col.sources}),
            "samples_lost": lost, "callbacks": cbs, "missing": missing, "chains": chains, "hops": hops}


def _chain_paths(view: ModelView) -> dict[str, list[str]]:
    """{name: callbacks in order} of every path of the model's chains (a linear chain: one)."""
    out = {}
    for ch in view.data.get("chains") or []:
        if not isinstance(ch, dict):
            continue
        paths = ch.get("paths") or ([ch.get("callbacks")] if ch.get("callbacks") else [])
        for i, p in enumerate(paths):
            out[f"{ch.get('name')}#{i}"] = [str(c) for c in p or []]
    return out


def _dispatch_overheads(view: ModelView, col: Collection, model_name: dict) -> dict[str, int]:
    """{executor: the largest own time per dispatch the run showed, rounded up to a microsecond}
    (accounting.dispatch_gaps over each executor's dispatch samples; ``model_name``: monitored
    callback name -> the model's). An executor that lost samples is left out: a lost dispatch
    between two recorded ones would count as the executor's own time."""
    chains, out = _chain_paths(view), {}
    for (_, executor), src in col.sources.items():
        if src.lost or not executor:
            continue
        executions = []
        for mon, cols in src.samples.items():
            starts = cols.get("start_ns", [])
            threads, cpus = cols.get("thread") or [0] * len(starts), cols.get("cpu_ns") or [0] * len(starts)
            for st, w, c, r, t in zip(starts, cols.get("wall_ns", []), cpus, cols.get("release_ns", []), threads):
                executions.append(acc.Execution(model_name.get(mon, mon), executor, t, st, st + w, c, r if r > 0 else None))
        for e, g in acc.dispatch_gaps(executions, chains).items():
            if g:
                out[e] = max(out.get(e, 0), _ceil_us(max(g)))
    return out


def _observed_phases(cbs: dict, infos: dict, samples: dict) -> None:
    """Each profiled timer's phase as the run showed it, ``observed_offset_ns``: its first release
    after the earliest first release of all of them, modulo its period. Only between two or more
    timers (one alone has no phase to speak of). The model records it as ``phase: observed``:
    a measurement of unmodified nodes, never a guaranteed offset (docs/model.md)."""
    firsts = {}
    for name, row in cbs.items():
        rel = [r for r in samples.get(name, {}).get("release_ns", []) if r > 0]
        period = infos.get(name, {}).get("period_ns")
        if infos.get(name, {}).get("kind") == "timer" and rel and period:
            firsts[name] = (min(rel), period)
    if len(firsts) < 2:
        return
    t0 = min(f for f, _ in firsts.values())
    for name, (first, period) in firsts.items():
        cbs[name]["observed_offset_ns"] = (first - t0) % period


def _chains(col: Collection) -> dict:
    parts = [src.last for src in col.sources.values() if isinstance(src.last.get("chains"), dict)
             and src.last["chains"]]
    if not parts:
        return {}
    merged = merge_chain_reports([{"chains": p["chains"]} for p in parts])["chains"]
    return {n: {k: c[k] for k in ("instances", "bcrt_ns", "mean_ns", "p99_ns", "wcrt_ns", "deadline_misses")}
            for n, c in merged.items() if c["instances"] > 0}


def _hops(view: ModelView, infos: dict, samples: dict) -> list[dict]:
    """Hop latencies of the model's chains (linear chains and paths), linked by release stamp."""
    # every dispatch of an executor, to tell whether a subscriber's executor was busy
    per_release = {}
    for name, s in samples.items():
        for st, w, r in zip(s.get("start_ns", []), s.get("wall_ns", []), s.get("release_ns", [])):
            if r > 0:
                per_release.setdefault(name, {})[r] = (st, st + w)
    busy = sorted((st, st + w, name) for name, s in samples.items()
                  for st, w in zip(s.get("start_ns", []), s.get("wall_ns", [])))
    topics = {str(t.get("name")): t.get("size", "64B") for t in view.data.get("topics") or []
              if isinstance(t, dict)}
    services = {str(t.get("name")): t for t in view.data.get("services") or [] if isinstance(t, dict)}
    edges = {(a, b) for p in _chain_paths(view).values() for a, b in zip(p, p[1:])}
    out = []
    import bisect
    starts = [b[0] for b in busy]
    for a, b in sorted(edges):
        if a not in infos or b not in infos or a not in per_release or b not in per_release:
            continue
        topic = infos[b]["topic"]
        lat_all, lat_free = [], []
        for r, (_, fin_a) in per_release[a].items():
            if r not in per_release[b]:
                continue
            st_b = per_release[b][r][0]
            if st_b < fin_a:
                continue
            lat_all.append(st_b - fin_a)
            # anything else running between the publisher's finish and the subscriber's start?
            i = bisect.bisect_left(starts, fin_a)
            clash = any(s < st_b and n not in (a, b) for s, e, n in busy[max(0, i - 3):i + 8]
                        if e > fin_a)
            if not clash:
                lat_free.append(st_b - fin_a)
        if not lat_all:
            continue
        use = lat_free or lat_all
        if infos[b]["kind"] in ("service", "client"):  # a request or a response of the service
            key = "request_size" if infos[b]["kind"] == "service" else "response_size"
            size = services.get(topic, {}).get(key, "64B")
        else:
            size = topics.get(topic, "64B")
        out.append({"from": a, "to": b, "topic": topic, "size": str(size),
                    "kind": hop_kind(view, infos[a]["node"], infos[b]["node"]),
                    "latency_ns": dist(use), "unblocked": bool(lat_free), "all_ns": dist(lat_all)})
    return out


# --------------------------------------------------------------------------- editing the model

@dataclass
class Change:
    callback: str          # the callback's name (the executor's for section "executors")
    field: str
    old: str | None
    new: str
    section: str = "callbacks"


def plan_changes(view: ModelView, prof: dict) -> list[Change]:
    changes = []
    for name, row in prof["callbacks"].items():
        fields = view.callbacks[name]["fields"] if name in view.callbacks else {}
        for key in ("wcet", "bcet"):
            if row[f"{key}_ns"] is None:
                continue
            new = output.exact_duration(row[f"{key}_ns"])
            old = fields[key][1].value if key in fields else None
            if old != new:
                changes.append(Change(name, key, old, new))
        # a measured timer phase, unless the model guarantees the timer's offset itself
        phase = fields["phase"][1].value if "phase" in fields else None
        if "observed_offset_ns" in row and phase != "guaranteed":
            off = output.exact_duration(row["observed_offset_ns"]) if row["observed_offset_ns"] else "0ns"
            old = fields["offset"][1].value if "offset" in fields else None
            if old != off:
                changes.append(Change(name, "offset", old, off))
            if phase != "observed":
                changes.append(Change(name, "phase", phase, "observed"))
    # the executors' own time per dispatch, which every analysis charges beside the WCETs
    for name, ns in sorted((prof.get("dispatch_overhead_ns") or {}).items()):
        if name not in view.executors:
            continue
        fields = view.executors[name]["fields"]
        new = output.exact_duration(ns)
        old = fields["dispatch_overhead"][1].value if "dispatch_overhead" in fields else None
        if old != new:
            changes.append(Change(name, "dispatch_overhead", old, new, "executors"))
    return changes


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def apply_changes(view: ModelView, changes: list[Change], measurements: list[dict] | None,
                  note: str) -> str:
    """The model's text with the changes made (and ``communication.measurements`` replaced when
    given); everything else byte for byte as it was."""
    text = view.text
    edits = []  # (start, end, replacement)
    by_cb: dict[tuple[str, str], list[Change]] = {}
    for c in changes:
        by_cb.setdefault((c.section, c.callback), []).append(c)
    for (section, name), cs in by_cb.items():
        entry = (view.executors if section == "executors" else view.callbacks)[name]
        m, fields = entry["node"], entry["fields"]
        adds = []
        for c in cs:
            if c.field in fields:
                v = fields[c.field][1]
                edits.append((v.start_mark.index, v.end_mark.index, c.new))
            else:
                adds.append(f"{c.field}: {c.new}")
        # the skeleton's "measure with chainrt profile" remark on the entry's line is now done
        eol = text.find("\n", m.end_mark.index)
        eol = len(text) if eol < 0 else eol
        k = text.find(WCET_MARK, m.end_mark.index, eol)
        if k >= 0:
            edits.append((k, k + len(WCET_MARK), PROFILED_MARK))
        if not adds:
            continue
        if m.flow_style:
            close = text.rindex("}", m.start_mark.index, m.end_mark.index)
            edits.append((close, close, ", " + ", ".join(adds)))
        else:
            first_key = m.value[0][0]
            indent = " " * first_key.start_mark.column
            last_val = m.value[-1][1]
            end = text.find("\n", last_val.end_mark.index - 1)
            end = len(text) if end < 0 else end
            edits.append((end, end, "".join(f"\n{indent}{a}" for a in adds)))
    if measurements is not None:
        flow = "[" + ", ".join(f"{{kind: {m['kind']}, size: {m['size']}, latency: {m['latency']}}}"
                               for m in measurements) + "]"
        comm = next((v for k, v in view.root.value if k.value == "communication"), None)
        if comm is None:
            tail = "" if text.endswith("\n") else "\n"
            edits.append((len(text), len(text), f"{tail}communication:\n  # {note}\n  measurements: {flow}\n"))
        elif isinstance(comm, yaml.MappingNode):
            meas = next((v for k, v in comm.value if k.value == "measurements"), None)
            if meas is not None:
                edits.append((meas.start_mark.index, meas.end_mark.index, flow))
            elif comm.flow_style:
                close = text.rindex("}", comm.start_mark.index, comm.end_mark.index)
                edits.append((close, close, (", " if comm.value else "") + f"measurements: {flow}"))
            elif comm.value:
                indent = " " * comm.value[0][0].start_mark.column
                end = text.find("\n", comm.value[-1][1].end_mark.index - 1)
                end = len(text) if end < 0 else end
                edits.append((end, end, f"\n{indent}measurements: {flow}"))
    for start, end, rep in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + rep + text[end:]
    return text


def measurements_of(prof: dict) -> list[dict]:
    """The hops' median latencies as CROS-RT measurements; a hop whose every instance was blocked
    by another callback is left out (its figure would be blocking, not communication)."""
    return [{"kind": h["kind"], "size": h["size"], "latency": output.exact_duration(_ceil_us(h["latency_ns"]["p50"]))}
            for h in prof["hops"] if h["unblocked"]]


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=path, tofile=path + " (profiled)"))
