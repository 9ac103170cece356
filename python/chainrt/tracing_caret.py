"""A chainrt model as a CARET architecture file (``chainrt trace caret``, docs/tracing.md).

CARET (TIER IV's trace analysis for ROS 2) measures path latency from an "architecture file":
a YAML document with ``named_paths`` (each a ``node_chain`` of ``node_name``,
``subscribe_topic_name``, ``publish_topic_name``), ``executors`` and ``nodes`` (callback
groups, callbacks with type, symbol and period or topic, ``publishes``, ``subscribes``,
``variable_passings`` and ``message_contexts``). Written from CARET's documented format; every
chain of the model becomes a named path (a branching chain one path per root-to-leaf path,
``CHAIN/0``, ``CHAIN/1``...), and the intra-node links of the chains become CARET's
``callback_chain`` message contexts. Names are the ones chainrt's runtime gives to ROS 2
(runtime/src/names.cpp): nodes and topics under the optional namespace.
"""

from __future__ import annotations

import re

UNDEFINED = "UNDEFINED"


def _ros_name(s: str) -> str:
    o = re.sub(r"[^A-Za-z0-9]", "_", s)
    return "n" + o if (not o or o[0].isdigit()) else o


def _ros_topic(prefix: str, topic: str) -> str:
    t = re.sub(r"[^A-Za-z0-9/]", "_", topic).lstrip("/")
    p = prefix.rstrip("/")
    return (p + "/" if p else "/") + t


def _node_fq(namespace: str, node: str) -> str:
    ns = namespace.strip("/")
    return f"/{ns}/{_ros_name(node)}" if ns else f"/{_ros_name(node)}"


def architecture(model, namespace: str = "") -> dict:
    """The CARET architecture of ``model`` (a dict ready for yaml.safe_dump)."""
    cbs = {c.name: c for c in model.callbacks}
    topic = lambda t: _ros_topic("/" + namespace.strip("/") if namespace.strip("/") else "", t)  # noqa: E731
    node_of = {c.name: _node_fq(namespace, c.node) for c in model.callbacks}
    group_of = {}
    groups_by_node: dict[str, list] = {}
    for g in model.groups:
        fq = _node_fq(namespace, g.node)
        gname = f"{fq}/{_ros_name(g.name.split('/')[-1])}"
        groups_by_node.setdefault(fq, []).append((gname, g.type, g.name))
    for c in model.callbacks:
        fq = node_of[c.name]
        match = [gname for gname, _, mname in groups_by_node.get(fq, []) if mname == c.group]
        group_of[c.name] = match[0] if match else f"{fq}/callback_group_default"

    # intra-node links along the chains: (node, sub topic, pub topic) and variable passings
    contexts: dict[str, set] = {}
    passings: dict[str, set] = {}
    paths = []
    for ch in model.chains:
        plist = ch.paths()
        for i, seq in enumerate(plist):
            pname = ch.name if len(plist) == 1 else f"{ch.name}/{i}"
            hop_topic = {}
            for h in ch.hops:
                # a service's request/response is no topic of CARET's paths
                hop_topic[(h.from_, h.to)] = (h.topic or None) if h.kind == "topic" else None
            chain_nodes = []   # [node, subscribe_topic, publish_topic]
            prev = None
            for cb in seq:
                n = node_of[cb]
                t_in = hop_topic.get((prev, cb)) if prev else None
                if chain_nodes and chain_nodes[-1][0] == n and (t_in is None):
                    # same node, no topic between: a variable passing inside the node
                    passings.setdefault(n, set()).add((prev, cb))
                else:
                    if chain_nodes and t_in is not None:
                        chain_nodes[-1][2] = topic(t_in)
                    chain_nodes.append([n, topic(t_in) if t_in else None, None])
                prev = cb
            node_chain = []
            for n, sub_t, pub_t in chain_nodes:
                node_chain.append({"node_name": n,
                                   "publish_topic_name": pub_t or UNDEFINED,
                                   "subscribe_topic_name": sub_t or UNDEFINED})
                if sub_t and pub_t:
                    contexts.setdefault(n, set()).add((sub_t, pub_t))
            paths.append({"path_name": pname, "node_chain": node_chain})

    executors = []
    for e in model.executors:
        names = sorted({group_of[c.name] for c in model.callbacks
                        if _executor_name(model, c) == e.name})
        executors.append({"executor_type": "single_threaded_executor" if len(e.threads) <= 1
                          else "multi_threaded_executor",
                          "executor_name": e.name, "callback_group_names": names})

    nodes = []
    for n in sorted(set(node_of.values())):
        mine = [c for c in model.callbacks if node_of[c.name] == n]
        groups: dict[str, dict] = {}
        for c in mine:
            g = group_of[c.name]
            gtype = next((t for gname, t, _ in groups_by_node.get(n, []) if gname == g), "mutually_exclusive")
            groups.setdefault(g, {"callback_group_type": gtype, "callback_group_name": g,
                                  "callback_names": []})["callback_names"].append(c.name)
        callbacks = []
        for c in mine:
            d = {"callback_name": c.name,
                 "callback_type": "timer_callback" if c.kind == "timer" else "subscription_callback",
                 "symbol": f"chainrt:{c.name}"}
            if c.kind == "timer":
                d["period_ns"] = int(c.period)
            else:
                d["topic_name"] = topic(c.topic)
            callbacks.append(d)
        node = {"node_name": n, "callback_groups": list(groups.values()), "callbacks": callbacks}
        vp = sorted(passings.get(n, set()))
        if vp:
            node["variable_passings"] = [{"callback_name_write": a, "callback_name_read": b} for a, b in vp]
        pubs: dict[str, list] = {}
        for c in mine:
            for t in c.publishes:
                pubs.setdefault(topic(t), []).append(c.name)
        if pubs:
            node["publishes"] = [{"topic_name": t, "callback_names": sorted(v)} for t, v in sorted(pubs.items())]
        subs = [{"topic_name": topic(c.topic), "callback_name": c.name} for c in mine if c.kind != "timer"]
        if subs:
            node["subscribes"] = sorted(subs, key=lambda s: s["topic_name"])
        ctx = sorted(contexts.get(n, set()))
        if ctx:
            node["message_contexts"] = [{"context_type": "callback_chain", "subscription_topic_name": s,
                                         "publisher_topic_name": p} for s, p in ctx]
        nodes.append(node)
    return {"named_paths": paths, "executors": executors, "nodes": nodes}


def _executor_name(model, cb) -> str:
    for n in model.nodes:
        if n.name == cb.node:
            return n.executor
    return ""


def to_yaml(model, namespace: str = "") -> str:
    import yaml

    header = ("# CARET architecture file written by `chainrt trace caret` from a chainrt model:\n"
              "# one named path per chain (per root-to-leaf path of a branching chain). Callback\n"
              "# symbols are chainrt's names as its executor reports them in\n"
              "# ros2:rclcpp_callback_register (\"chainrt:<callback>\").\n")
    return header + yaml.safe_dump(architecture(model, namespace), sort_keys=False, default_flow_style=False)
