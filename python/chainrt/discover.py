"""From a running ROS 2 graph to a chainrt model skeleton (``chainrt discover``).

Two halves, kept apart so the second is testable without ROS 2:

* :func:`observe` joins the graph (rclpy graph API, the caller's ``ROS_DOMAIN_ID`` and RMW) and
  records what a graph can tell: nodes, topics and their types, publishers and subscriptions per
  node, the process of each node (the DDS participant of its endpoints: nodes of one process share
  its GUID prefix), and, by subscribing to every topic for a while, each topic's message rate and
  serialized message size.
* :func:`skeleton` turns that :class:`Graph` into a model in the documented format
  (docs/model.md) plus a note per entry saying what was inferred rather than observed. A graph does
  not show callbacks, so they are inferred: one subscription callback per (node, subscribed topic);
  a topic a node publishes is attributed to the subscription callback whose input topic has the
  same rate (data-driven), else to a timer whose period is the topic's measured period. Candidate
  chains are the paths from each timer along publish -> subscribe edges to a callback whose output
  nobody takes. Execution times are not observable from the graph: they are left out, and
  ``chainrt profile MODEL --write`` fills them (``chainrt check`` reports them missing until then).
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass, field

# Graph entities that are ROS 2 infrastructure, not the application.
INFRA_TOPICS = {"/rosout", "/parameter_events"}
MONITOR_SUFFIX = "/chainrt/chain_stats"
RATE_MATCH = 0.15        # a published topic "follows" an input when the rates differ by < 15 %
MAX_CHAINS = 64          # candidate chains listed at most (paths can multiply in dense graphs)
WCET_MARK = "wcet: measure with `chainrt profile`"   # chainrt profile --write replaces it


@dataclass
class TopicStats:
    type: str = ""
    count: int = 0                 # messages received while observing
    rate_hz: float | None = None   # None: fewer than 3 messages seen
    median_gap_s: float | None = None  # median inter-arrival time (robust to skipped releases)
    size_max: int | None = None    # serialized (CDR) bytes
    size_mean: float | None = None
    note: str = ""                 # why rate/size are missing


@dataclass
class Graph:
    nodes: dict[str, str] = field(default_factory=dict)          # node -> process key
    topics: dict[str, TopicStats] = field(default_factory=dict)  # ROS topic name -> stats
    publishes: dict[str, list[str]] = field(default_factory=dict)   # node -> topics
    subscribes: dict[str, list[str]] = field(default_factory=dict)  # node -> topics
    services: dict[str, list[str]] = field(default_factory=dict)    # node -> services
    observed_s: float = 0.0
    domain: str = ""
    rmw: str = ""


# --------------------------------------------------------------------------- observing (rclpy)

def _fq(name: str, ns: str) -> str:
    return (ns.rstrip("/") + "/" + name) if ns not in ("", "/") else "/" + name


def _is_ignored_node(fq: str, own: str) -> bool:
    base = fq.rsplit("/", 1)[-1]
    return fq == own or base.startswith("_") or base.startswith("chainrt_monitor_")


def _is_ignored_topic(t: str) -> bool:
    return t in INFRA_TOPICS or t.endswith(MONITOR_SUFFIX) or "/_" in t


def _message_class(type_name: str):
    """``pkg/msg/Name`` -> the Python message class, or None when it is not importable here."""
    parts = type_name.split("/")
    if len(parts) != 3:
        return None
    try:
        return getattr(importlib.import_module(f"{parts[0]}.{parts[1]}"), parts[2])
    except (ImportError, AttributeError):
        return None


def observe(duration_s: float = 5.0, settle_s: float = 2.0, expect_nodes: int = 0) -> Graph:
    """Joins the graph for ``settle_s`` (discovery) plus ``duration_s`` (rates and sizes).
    ``expect_nodes``: stop waiting for discovery early once this many nodes are seen."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("_chainrt_discover", context=context)
        own = node.get_fully_qualified_name()
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        # discovery: wait until the graph has not grown for `settle_s` (or the expected number of
        # nodes is there and quiet for 0.5 s); an empty graph is given up to 5 x settle_s (at
        # least 10 s: discovery on a loaded machine can take seconds)
        start = time.monotonic()
        give_up = start + max(10.0, 5 * settle_s)
        last, stable_since = -1, start
        while True:
            executor.spin_once(timeout_sec=0.1)
            now = time.monotonic()
            names = [n for n in node.get_node_names_and_namespaces() if not _is_ignored_node(_fq(*n), own)]
            size = len(names) + len(node.get_topic_names_and_types())
            if size != last:
                last, stable_since = size, now
            quiet = now - stable_since
            if expect_nodes and len(names) >= expect_nodes and quiet > 0.5:
                break
            if names and not expect_nodes and quiet >= max(settle_s, 0.5):
                break
            if now >= give_up or (names and now - start >= max(10.0, 5 * settle_s)):
                break

        g = Graph(domain=os.environ.get("ROS_DOMAIN_ID", "0"),
                  rmw=os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp"))
        for name, ns in node.get_node_names_and_namespaces():
            fq = _fq(name, ns)
            if _is_ignored_node(fq, own):
                continue
            g.nodes[fq] = ""
            g.publishes[fq] = sorted(t for t, _ in node.get_publisher_names_and_types_by_node(name, ns)
                                     if not _is_ignored_topic(t))
            g.subscribes[fq] = sorted(t for t, _ in node.get_subscriber_names_and_types_by_node(name, ns)
                                      if not _is_ignored_topic(t))
            g.services[fq] = sorted(s for s, _ in node.get_service_names_and_types_by_node(name, ns)
                                    if not s.rsplit("/", 1)[-1].endswith(
                                        ("_parameters", "_parameter_types", "_parameters_atomically",
                                         "describe_parameters", "get_type_description")))
        # processes: nodes whose endpoints share a DDS participant (GUID prefix) share a process
        for t, _types in node.get_topic_names_and_types():
            infos = list(node.get_publishers_info_by_topic(t)) + list(node.get_subscriptions_info_by_topic(t))
            for info in infos:
                fq = _fq(info.node_name, info.node_namespace)
                if fq in g.nodes and not g.nodes[fq]:
                    g.nodes[fq] = bytes(info.endpoint_gid[:12]).hex()
        for fq in g.nodes:
            g.nodes[fq] = g.nodes[fq] or fq  # no endpoint seen: a process of its own
        used = {t for ts in list(g.publishes.values()) + list(g.subscribes.values()) for t in ts}
        types = dict((t, ty[0] if ty else "") for t, ty in node.get_topic_names_and_types())
        qos = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=100,
                         reliability=QoSReliabilityPolicy.BEST_EFFORT,
                         durability=QoSDurabilityPolicy.VOLATILE)
        arrivals: dict[str, list[tuple[float, int]]] = {}
        for t in sorted(used):
            st = g.topics.setdefault(t, TopicStats(type=types.get(t, "")))
            cls = _message_class(st.type)
            if cls is None:
                st.note = f"message type {st.type or '?'} is not importable here: rate and size not measured"
                continue
            arrivals[t] = []

            def on_msg(data, t=t):
                arrivals[t].append((time.monotonic(), len(data)))

            node.create_subscription(cls, t, on_msg, qos, raw=True)
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        g.observed_s = duration_s
        for t, seen in arrivals.items():
            st = g.topics[t]
            st.count = len(seen)
            if seen:
                sizes = [n for _, n in seen]
                st.size_max, st.size_mean = max(sizes), sum(sizes) / len(sizes)
            if len(seen) >= 3 and seen[-1][0] > seen[0][0]:
                st.rate_hz = (len(seen) - 1) / (seen[-1][0] - seen[0][0])
                gaps = sorted(b[0] - a[0] for a, b in zip(seen, seen[1:]))
                st.median_gap_s = gaps[len(gaps) // 2]
            else:
                st.note = f"{len(seen)} message(s) in {duration_s:g} s: rate not measured"
        executor.shutdown()
        node.destroy_node()
        return g
    finally:
        rclpy.shutdown(context=context)


# --------------------------------------------------------------------------- the skeleton (pure)

def model_name(ros_name: str) -> str:
    """A ROS name as a model name: without the leading slash (the runtime adds it back)."""
    return ros_name.lstrip("/")


def nice_period_ns(rate_hz: float) -> int:
    """The period of a measured rate, rounded: to a whole millisecond when within 2 %, else to
    10 microseconds (timers are set in round numbers; the measurement has jitter)."""
    p = 1e9 / rate_hz
    ms = round(p / 1e6)
    if ms >= 1 and abs(p - ms * 1e6) <= 0.02 * p:
        return int(ms * 1_000_000)
    return max(10_000, int(round(p / 10_000)) * 10_000)


def fmt_duration(ns: int) -> str:
    for unit, f in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % f == 0:
            return f"{ns // f}{unit}"
    return f"{ns}ns"


@dataclass
class Entry:
    fields: dict            # ordered model fields (values already in model syntax)
    note: str = ""          # inferred / unknown, shown as a comment


@dataclass
class Skeleton:
    hosts: list[Entry] = field(default_factory=list)
    executors: list[Entry] = field(default_factory=list)
    nodes: list[Entry] = field(default_factory=list)
    topics: list[Entry] = field(default_factory=list)
    callbacks: list[Entry] = field(default_factory=list)
    chains: list[Entry] = field(default_factory=list)
    header: list[str] = field(default_factory=list)


def _rates_match(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= RATE_MATCH * max(a, b)


def skeleton(g: Graph, name: str = "discovered", cores: int | None = None) -> Skeleton:
    sk = Skeleton()
    cores = cores or os.cpu_count() or 1
    sk.hosts.append(Entry({"name": "localhost", "cores": cores},
                          "this machine's core count (the graph does not show hosts)"))
    # one executor per process, named after its first node
    procs: dict[str, list[str]] = {}
    for n in sorted(g.nodes):
        procs.setdefault(g.nodes[n], []).append(n)
    exec_of: dict[str, str] = {}
    used_exec: set[str] = set()
    for key, members in sorted(procs.items(), key=lambda kv: kv[1][0]):
        ename = model_name(members[0]).replace("/", "_") + "_exec"
        while ename in used_exec:
            ename += "_"
        used_exec.add(ename)
        for n in members:
            exec_of[n] = ename
        sk.executors.append(Entry(
            {"name": ename, "host": "localhost", "process": ename, "policy": "ros-default", "threads": 1},
            f"inferred: one process ({len(members)} node(s) share a DDS participant), "
            "run by a single-threaded ROS 2 default executor"))
    for n in sorted(g.nodes):
        sk.nodes.append(Entry({"name": model_name(n), "executor": exec_of[n]}))
    topics_used = sorted({t for ts in list(g.publishes.values()) + list(g.subscribes.values()) for t in ts})
    for t in topics_used:
        st = g.topics.get(t, TopicStats())
        f = {"name": model_name(t)}
        bits = [st.type or "type unknown"]
        if st.size_max is not None:
            f["size"] = f"{st.size_max}B"
            bits.append(f"size: largest of {st.count} messages (mean {st.size_mean:.0f}B)")
        else:
            bits.append("unknown: size (default 64B)")
        if st.rate_hz is not None:
            bits.append(f"{st.rate_hz:.1f} msg/s")
        if st.note:
            bits.append(st.note)
        sk.topics.append(Entry(f, "; ".join(bits)))

    # callbacks
    cb_names: set[str] = set()

    def unique(base: str) -> str:
        n, i = base, 2
        while n in cb_names:
            n, i = f"{base}_{i}", i + 1
        cb_names.add(n)
        return n

    publishes_of: dict[str, list[str]] = {}   # callback -> topics
    sub_cb: dict[tuple[str, str], str] = {}   # (node, topic) -> callback
    timers: list[str] = []
    entries: dict[str, Entry] = {}
    rate = {t: g.topics[t].rate_hz if t in g.topics else None for t in topics_used}
    for n in sorted(g.nodes):
        subs = g.subscribes.get(n, [])
        pubs = g.publishes.get(n, [])
        mnode = model_name(n)
        for t in subs:
            cb = unique(f"{mnode}/on_{model_name(t).replace('/', '_')}")
            sub_cb[(n, t)] = cb
            publishes_of[cb] = []
            entries[cb] = Entry({"name": cb, "kind": "subscription", "node": mnode, "topic": model_name(t)})
        timer_groups: list[tuple[float | None, list[str]]] = []
        notes: dict[str, list[str]] = {}
        for t in pubs:
            # data-driven: the input whose rate matches; with no rates known, the only input
            follows = [s for s in subs if _rates_match(rate.get(s), rate.get(t))]
            if not follows and subs and rate.get(t) is None and len(subs) == 1:
                follows = subs
                why = f"inferred: publishes {t} (no rate measured; the node's only input)"
            else:
                why = (f"inferred: publishes {t} ({rate.get(t) or 0:.1f}/s, as its input "
                       f"{follows[0] if follows else ''})")
            if follows:
                cb = sub_cb[(n, follows[0])]
                publishes_of[cb].append(t)
                notes.setdefault(cb, []).append(why)
                continue
            for r, ts in timer_groups:
                if _rates_match(r, rate.get(t)):
                    ts.append(t)
                    break
            else:
                timer_groups.append((rate.get(t), [t]))
        for r, ts in timer_groups:
            cb = unique(f"{mnode}/timer")
            timers.append(cb)
            publishes_of[cb] = ts
            f = {"name": cb, "kind": "timer", "node": mnode}
            if r is not None:
                # the median gap, not the mean rate: a loaded system skips timer releases, which
                # lowers the mean rate but leaves most gaps at the period
                gap = g.topics[ts[0]].median_gap_s if ts[0] in g.topics else None
                f["period"] = fmt_duration(nice_period_ns(1.0 / gap if gap else r))
                note = (f"inferred: a timer; period from the median interval between messages on "
                        f"{', '.join(ts)} ({r:.2f}/s on average) -- the timer itself is not visible in the graph")
            else:
                note = (f"unknown: period (no messages on {', '.join(ts)} while observing) -- "
                        "add `period:` by hand")
            entries[cb] = Entry(f, note)
        for cb, ns_ in notes.items():
            entries[cb].note = "; ".join(ns_)
    for cb, e in entries.items():
        if publishes_of.get(cb):
            e.fields["publishes"] = "[" + ", ".join(model_name(t) for t in publishes_of[cb]) + "]"
        e.note = (e.note + "; " if e.note else "") + WCET_MARK
        sk.callbacks.append(e)

    # candidate chains: timer -> ... -> a callback whose outputs nobody takes
    takers: dict[str, list[str]] = {}
    for (n, t), cb in sub_cb.items():
        takers.setdefault(model_name(t), []).append(cb)
    for v in takers.values():
        v.sort()
    chains: list[list[str]] = []

    def walk(path: list[str]) -> None:
        if len(chains) >= MAX_CHAINS:
            return
        nxt = [c for t in publishes_of.get(path[-1], []) for c in takers.get(model_name(t), [])
               if c not in path]
        if not nxt:
            if len(path) > 1:
                chains.append(list(path))
            return
        for c in nxt:
            walk(path + [c])

    for tcb in timers:
        walk([tcb])
    chain_names: set[str] = set()
    for path in chains:
        last_node = entries[path[-1]].fields["node"].replace("/", "_")
        src_topics = publishes_of.get(path[0]) or ["chain"]
        base = f"{model_name(src_topics[0]).replace('/', '_')}_to_{last_node}"
        cname, i = base, 2
        while cname in chain_names:
            cname, i = f"{base}_{i}", i + 1
        chain_names.add(cname)
        sk.chains.append(Entry({"name": cname, "callbacks": "[" + ", ".join(path) + "]"},
                               "candidate: a path from a timer to a sink; period = the timer's, "
                               "deadline assumed = period"))
    svc = sorted({s for ss in g.services.values() for s in ss})
    sk.header = [
        f"Model skeleton written by `chainrt discover` from the running ROS 2 graph",
        f"(ROS_DOMAIN_ID {g.domain}, {g.rmw}; observed for {g.observed_s:g} s): "
        f"{len(g.nodes)} node(s), {len(topics_used)} topic(s), {len(sk.callbacks)} callback(s), "
        f"{len(sk.chains)} candidate chain(s).",
        "Comments say what was inferred rather than observed ('inferred:') and what is unknown",
        "('unknown:'). Execution times cannot be seen in a graph: run the nodes under a chainrt",
        "executor and `chainrt profile THIS_FILE --write`; `chainrt check` lists them until then.",
    ]
    if svc:
        sk.header.append(f"Services seen but not modelled: {', '.join(svc)}.")
    sk.header.append(f"name: {name}")
    return sk


def _value(v) -> str:
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if s.startswith("[") or s.replace("_", "").replace("/", "").replace(".", "").replace("-", "").isalnum():
        return s
    return '"' + s.replace('"', '\\"') + '"'


def to_yaml(sk: Skeleton) -> str:
    name = sk.header[-1].split(": ", 1)[1] if sk.header and sk.header[-1].startswith("name: ") else "discovered"
    out = [f"# {line}" for line in sk.header if not line.startswith("name: ")]
    out += ["chainrt: 1", f"name: {name}"]
    for section in ("hosts", "executors", "nodes", "topics", "callbacks", "chains"):
        entries = getattr(sk, section)
        if not entries:
            continue
        out.append(f"{section}:")
        for e in entries:
            body = ", ".join(f"{k}: {_value(v)}" for k, v in e.fields.items())
            line = f"  - {{{body}}}"
            if e.note:
                line += f"  # {e.note}"
            out.append(line)
    return "\n".join(out) + "\n"
