"""Per-chain latency from an LTTng trace of ROS 2 (``chainrt trace-report``, docs/tracing.md).

A trace holds the ros2_tracing events (provider ``ros2``: rcl/rmw publish and take, the
callbacks' start and end, the entities' init events) and, when chainrt's executor ran,
chainrt's chain-instance events (provider ``chainrt``). What can be derived depends on which
events the trace holds:

* chainrt's executor (``chainrt:chain_complete``): the end-to-end latency of every measured
  chain instance, as chainrt's monitoring defines it (EDF ready-queue paper Sec. IV-B): the
  ``ros2:callback_end`` of the leaf that completed the instance minus the instance's release
  (the source timer's nominal release, field ``release`` of the chainrt event, on the trace's
  clock CLOCK_MONOTONIC). Deadline misses: latency > D.
* any executor that emits ``ros2:callback_start``/``callback_end`` (chainrt's, rclcpp's):
  the execution time (wall) of every callback.
* every ROS 2 process (rcl/rmw events, rclpy included): per hop, publish -> take: the time
  from ``ros2:rmw_publish`` to the ``ros2:rmw_take`` of the same message (matched by topic and
  source timestamp) in the subscriber. The take is when the subscriber's executor took the
  message, so the hop includes its wait in that executor.

What a trace does not support is said, not estimated (:attr:`TraceReport.not_derivable`).

Events are read with Babeltrace 2's Python bindings (Debian: python3-bt2); the analysis
(:func:`analyze`) works on plain :class:`Event` records and is tested without LTTng.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from .runtime import quantile
from . import output


class TraceError(Exception):
    """A trace that cannot be read (missing, not CTF, or no Babeltrace 2 bindings)."""


@dataclass
class Event:
    ts: int                 # ns on the trace clock (LTTng-UST: CLOCK_MONOTONIC)
    name: str               # "provider:event"
    fields: dict
    vpid: int = 0
    vtid: int = 0


# ---------------------------------------------------------------------------------------------
# Reading


def _import_bt2():
    try:
        import bt2  # noqa: F401
        return bt2
    except ImportError:
        pass
    # Debian's python3-bt2 lives in the system's dist-packages; the extension is built for
    # CPython 3.x of the system, which a virtualenv of the same minor version can load.
    for d in ("/usr/lib/python3/dist-packages",):
        if os.path.isdir(os.path.join(d, "bt2")):
            sys.path.append(d)
            try:
                import bt2
                return bt2
            except ImportError:
                pass
            finally:
                sys.path.remove(d)
    raise TraceError("reading a trace needs Babeltrace 2's Python bindings (Debian/Ubuntu: "
                     "apt-get install python3-bt2) for this Python "
                     f"{sys.version_info.major}.{sys.version_info.minor}")


def _value(v):
    """A bt2 field value as plain Python."""
    try:
        if isinstance(v, (int, float, str, bool)):
            return v
        import collections.abc as abc
        if isinstance(v, abc.Mapping):
            return {str(k): _value(x) for k, x in v.items()}
        if isinstance(v, str) or hasattr(v, "capitalize"):
            return str(v)
        if isinstance(v, abc.Sequence):
            return [_value(x) for x in v]
        for t in (int, float):
            try:
                return t(v)
            except (TypeError, ValueError):
                pass
        return str(v)
    except Exception:
        return str(v)


# A trace directory is untrusted input: Babeltrace aborts the process (SIGABRT) on some damaged
# metadata and spins for minutes, deaf to SIGINT, on others. It therefore reads in a child
# process (``python -m chainrt.tracing DIR``) that streams the events back in batches; the
# child must show progress (a batch, or a heartbeat while a long stream is decoded) every
# STALL_S, or it is killed and the trace refused. The metadata is checked first (present, of
# bounded size, CTF text or packetized CTF metadata, whole packets, a complete TSDL text),
# which refuses garbage and truncated files at once.
STALL_S = 3.0
MAX_METADATA_BYTES = 64 << 20
BATCH = 2000
READER = ["-m", "chainrt.tracing"]  # the child's arguments after the interpreter (tests replace it)
_PACKET_MAGIC = (b"\x57\x1d\xd1\x75", b"\x75\xd1\x1d\x57")  # 0x75D11D57, either byte order


def check_metadata(path: str) -> list[str]:
    """The metadata files of the CTF trace(s) under `path`; raises TraceError (one line) for a
    directory that holds no trace or a metadata file that cannot be CTF metadata."""
    if not os.path.exists(path):
        raise TraceError(f"{path}: no such file or folder")
    if not os.path.isdir(path):
        raise TraceError(f"{path}: not a folder (a trace is the folder chainrt trace record wrote)")
    found = []
    for d, dirs, files in os.walk(path):
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(d, x))]
        if "metadata" in files:
            found.append(os.path.join(d, "metadata"))
    if not found:
        raise TraceError(f"{path}: not a CTF trace (no metadata file)")
    for m in found:
        try:
            size = os.path.getsize(m)
            with open(m, "rb") as f:
                head = f.read(64)
        except OSError as e:
            raise TraceError(f"{m}: cannot read the trace metadata ({e.strerror})") from None
        if size > MAX_METADATA_BYTES:
            raise TraceError(f"{m}: trace metadata of {size >> 20} MiB is not plausible")
        if not (head[:4] in _PACKET_MAGIC or head.lstrip().startswith(b"/* CTF 1.8")):
            raise TraceError(f"{m}: not CTF trace metadata (damaged or not a trace)")
        why = _tsdl_problem(m)
        if why:
            raise TraceError(f"{m}: damaged trace metadata ({why})")
    return found


def _tsdl_problem(metadata: str) -> str | None:
    """Why the metadata file is not whole: a packet cut short, or a TSDL text whose blocks do not
    close (a file truncated at any byte is one of them); None when it looks whole."""
    import struct
    with open(metadata, "rb") as f:
        data = f.read()
    if data[:4] in _PACKET_MAGIC:
        order = "<" if data[:4] == _PACKET_MAGIC[0] else ">"
        text, at = bytearray(), 0
        header = 37  # magic, uuid, checksum, content_size, packet_size, 5 one-byte fields (CTF 1.8)
        while at < len(data):
            if len(data) - at < header or data[at:at + 4] != data[:4]:
                return "a metadata packet is cut short or has no header"
            content, size = struct.unpack_from(order + "II", data, at + 24)
            if size % 8 or content % 8 or content > size or content < header * 8 or at + size // 8 > len(data):
                return "a metadata packet is cut short"
            text += data[at + header:at + content // 8]
            at += size // 8
    else:
        text = bytearray(data)
    depth = 0
    for c in bytes(text):
        if c == ord("{"):
            depth += 1
        elif c == ord("}"):
            depth -= 1
            if depth < 0:
                return "unbalanced braces"
    if depth != 0 or not bytes(text).rstrip().endswith(b";"):
        return "the TSDL text ends in the middle of a declaration"
    return None


def read_trace(path: str) -> Iterator[Event]:
    """The events of the CTF trace(s) under ``path`` (an LTTng session's output folder), in
    time order, with the vpid/vtid contexts when they were recorded. Raises TraceError with one
    line for anything that is not a readable trace (read in a child process: see STALL_S)."""
    import pickle
    import queue
    import subprocess
    import threading
    check_metadata(path)
    try:
        _import_bt2()
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    child = subprocess.Popen([sys.executable, *READER, str(path)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    box: queue.Queue = queue.Queue()

    def pump():  # the batches as they come; None at the end of the stream
        try:
            while True:
                box.put(pickle.load(child.stdout))
        except (EOFError, OSError, pickle.UnpicklingError, ValueError):
            box.put(None)

    threading.Thread(target=pump, name="chainrt-trace-reader", daemon=True).start()
    try:
        while True:
            try:
                batch = box.get(timeout=STALL_S)
            except queue.Empty:
                raise TraceError(f"{path}: reading the trace made no progress for {STALL_S:g} s "
                                 "(damaged metadata or streams?); stopped") from None
            if batch is None:
                break
            if isinstance(batch, dict):  # the child's own one-line error, or a heartbeat
                if "error" in batch:
                    raise TraceError(f"{path}: {batch['error']}")
                continue
            for ts, name, fields, vpid, vtid in batch:
                yield Event(ts, name, fields, vpid, vtid)
        try:
            rc = child.wait(timeout=STALL_S)
        except subprocess.TimeoutExpired:
            rc = None
        if rc != 0:
            import signal
            why = ("it did not end" if rc is None else
                   f"it aborted with {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() else
                   f"exit {rc}")
            raise TraceError(f"{path}: Babeltrace failed on this trace ({why}); the metadata or a stream is damaged")
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        for f in (child.stdout, child.stderr):
            f.close()


def _read_events(path: str):
    """The reading child: every event as (ts, name, fields, vpid, vtid), in batches."""
    bt2 = _import_bt2()
    try:
        it = bt2.TraceCollectionMessageIterator(str(path))
    except Exception as e:  # bt2 raises its own error types with multi-line causes
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TraceError(f"not a readable CTF trace ({first})") from None
    event_type = bt2._EventMessageConst
    try:
        for msg in it:
            if type(msg) is not event_type:
                yield None  # progress without an event
                continue
            ev = msg.event
            cs = msg.default_clock_snapshot
            freq = cs.clock_class.frequency
            ts = cs.value if freq == 1_000_000_000 else int(cs.value * 1_000_000_000 // freq)
            payload = ev.payload_field
            fields = {str(k): _value(v) for k, v in payload.items()} if payload is not None else {}
            vpid = vtid = 0
            ctx = ev.common_context_field
            if ctx is not None:
                if "vpid" in ctx:
                    vpid = int(ctx["vpid"])
                if "vtid" in ctx:
                    vtid = int(ctx["vtid"])
            yield (ts, ev.name, fields, vpid, vtid)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TraceError(f"reading the trace failed ({first})") from None


def _child_main(path: str) -> int:
    import pickle
    import time
    out = sys.stdout.buffer
    batch, last = [], time.monotonic()
    pickle.dump({"heartbeat": True}, out)  # started: the stall watch now times the reading itself
    out.flush()
    try:
        for ev in _read_events(path):
            if ev is not None:
                batch.append(ev)
            now = time.monotonic()
            if len(batch) >= BATCH or (now - last > 1.0):
                pickle.dump(batch if batch else {"heartbeat": True}, out)
                out.flush()
                batch, last = [], now
        if batch:
            pickle.dump(batch, out)
    except TraceError as e:
        pickle.dump({"error": str(e)}, out)
    out.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# Statistics (the runtime's conventions: nearest-rank p99, ns)


def summary(samples: list[int]) -> dict:
    n = len(samples)
    return {
        "instances": n,
        "mean_ns": (sum(samples) / n) if n else 0.0,
        "p99_ns": quantile(samples, 0.99),  # nearest rank, as the C++ monitor
        "wcrt_ns": max(samples) if n else 0,
        "bcrt_ns": min(samples) if n else 0,
    }


# ---------------------------------------------------------------------------------------------
# Analysis


@dataclass
class TraceReport:
    chains: dict = field(default_factory=dict)      # name -> summary + deadline_ns, deadline_misses, source
    flow_chains: dict = field(default_factory=dict)  # name -> summary: by message flow (needs a model)
    hops: list = field(default_factory=list)        # per topic and publisher/subscriber node
    callbacks: dict = field(default_factory=dict)   # name -> execution-time summary
    model_chains: dict = field(default_factory=dict)  # model chain -> its hops' topics (when a model was given)
    not_derivable: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    events: int = 0
    processes: list = field(default_factory=list)   # vpids seen

    def to_json(self) -> dict:
        return {"chains": self.chains, "flow_chains": self.flow_chains, "hops": self.hops, "callbacks": self.callbacks,
                "model_chains": self.model_chains, "not_derivable": self.not_derivable,
                "notes": self.notes, "events": self.events, "processes": self.processes}


def _model_topology(model):
    """(chain name -> [(callback_from, callback_to, topic)], callback -> node) of a model."""
    cbs = {c.name: c for c in model.callbacks}
    chains = {}
    for ch in model.chains:
        hops = []
        names = list(ch.callbacks)
        for a, b in zip(names, names[1:]):
            ca, cb = cbs.get(a), cbs.get(b)
            if ca is None or cb is None:
                continue
            topic = cb.topic if (cb.kind == "subscription" and cb.topic in list(ca.publishes)) else None
            hops.append((a, b, topic))
        chains[ch.name] = hops
    return chains, {c.name: c.node for c in model.callbacks}


def _topic_matches(traced: str, model_topic: str) -> bool:
    """A traced (fully qualified) topic is the model's topic (under any namespace prefix)."""
    t = model_topic.strip("/")
    return traced == "/" + t or traced.endswith("/" + t)


class _Origin:
    """One chain instance followed by message flow: its source callback and start time."""
    __slots__ = ("source", "start", "leaf_end")

    def __init__(self, source: str, start: int):
        self.source, self.start, self.leaf_end = source, start, {}


class _Flow:
    """Chain latency by message flow, for any executor that emits callback events (chainrt's,
    rclcpp's): an instance starts at the callback_start of the chain's source timer; a publish
    inside a callback (same thread, between its start and end) carries the instance on; the take
    of that message (matched by topic and source timestamp) queues it for the subscription's
    callback (FIFO, at most the subscription's depth: keep-last drops the oldest); the callback
    that starts next for that subscription continues the instance; the instance ends at the
    callback_end of the chain's last callback (of every leaf, for a branching chain). Model
    callbacks are found in the trace by their registered symbol ("chainrt:<name>") or else by
    node and topic (subscriptions) or node and period (timers)."""

    def __init__(self, model):
        self.cbs = {c.name: c for c in model.callbacks}
        self.chains = []  # (name, source, leaves)
        for ch in model.chains:
            paths = [list(p) for p in ch.paths()]
            if paths and paths[0] and self.cbs.get(paths[0][0]) is not None \
                    and self.cbs[paths[0][0]].kind == "timer":
                self.chains.append((ch.name, paths[0][0], frozenset(p[-1] for p in paths)))
        self.sources = {src for _, src, _ in self.chains}
        self.resolved: dict = {}
        self.running: dict = {}   # (vpid, vtid) -> (model name, origin)
        self.carried: dict = {}   # (topic, source timestamp) -> origin
        self.pending: dict = {}   # (vpid, callback) -> [origin or None]
        self.samples: dict = {}   # chain -> [ns]

    def resolve(self, p, cb, names, timer_of, period, timer_node, sub_of_cb) -> str | None:
        key = (p, cb)
        if key in self.resolved:
            return self.resolved[key]
        name = names.get(key)
        if name not in self.cbs:
            name = None
            cands = []
            if key in timer_of:
                t = timer_of[key]
                node, per = timer_node.get((p, t)), period.get((p, t))
                cands = [c.name for c in self.cbs.values() if c.kind == "timer" and node
                         and _node_matches(node, c.node) and int(c.period) == per]
            elif key in sub_of_cb:
                topic, node = sub_of_cb[key]
                cands = [c.name for c in self.cbs.values() if c.kind != "timer" and c.topic
                         and _topic_matches(topic, c.topic) and _node_matches(node, c.node)]
            name = cands[0] if len(cands) == 1 else None
        self.resolved[key] = name
        return name

    def start(self, p, vtid, ts, name, cb):
        origin = None
        if name in self.sources:
            origin = _Origin(name, ts)
        elif name is not None:
            q = self.pending.get((p, cb))
            origin = q.pop(0) if q else None
        self.running[(p, vtid)] = (name, origin)

    def publish(self, p, vtid, topic, stamp):
        r = self.running.get((p, vtid))
        if r is not None and r[1] is not None:
            self.carried[(topic, stamp)] = r[1]

    def take(self, p, cb, topic, stamp, depth):
        q = self.pending.setdefault((p, cb), [])
        q.append(self.carried.pop((topic, stamp), None))
        if depth and len(q) > depth:
            del q[0]

    def end(self, p, vtid, ts):
        r = self.running.pop((p, vtid), None)
        if r is None or r[1] is None:
            return
        name, origin = r
        for chain, source, leaves in self.chains:
            if source != origin.source or name not in leaves:
                continue
            ends = origin.leaf_end.setdefault(chain, {})
            ends[name] = ts
            if len(ends) == len(leaves):
                self.samples.setdefault(chain, []).append(max(ends.values()) - origin.start)


def _node_matches(traced: str, model_node: str) -> bool:
    import re
    n = re.sub(r"[^A-Za-z0-9]", "_", model_node)
    return traced == "/" + n or traced.endswith("/" + n)


class _Tables:
    """What analyze() reads out of the events, keyed by (vpid, handle) where pointers are per process."""

    def __init__(self, rep: TraceReport, flow):
        self.rep, self.flow = rep, flow
        self.timer_of: dict = {}           # (vpid, callback) -> timer handle
        self.timer_period: dict = {}       # (vpid, timer handle) -> period
        self.timer_node: dict = {}         # (vpid, timer handle) -> node name
        self.sub_of_cb: dict = {}          # (vpid, callback) -> (topic, node)
        self.cb_of_rmw_sub: dict = {}      # (vpid, rmw subscription handle) -> callback
        self.rmw_of_rcl_sub: dict = {}     # (vpid, rcl subscription handle) -> (rmw handle, depth)
        self.depth_of_cb: dict = {}        # (vpid, callback) -> subscription queue depth
        self.node_name: dict = {}
        self.pub_topic: dict = {}          # (vpid, rmw publisher handle) -> (topic, node)
        self.sub_topic: dict = {}          # (vpid, rmw subscription handle) -> (topic, node)
        self.rcl_pub_node: dict = {}
        self.rcl_sub: dict = {}            # (vpid, rcl subscription handle) -> (topic, node)
        self.cb_name: dict = {}            # (vpid, callback) -> name
        self.cb_of_sub: dict = {}          # (vpid, subscription object) -> rcl handle
        self.chain_meta: dict = {}         # (vpid, executor, chain) -> (name, deadline)
        self.published: dict = {}          # (topic, source timestamp) -> (ts, node)
        self.hop_samples: dict = {}        # (topic, pub node, sub node) -> [ns]
        self.unmatched_takes: dict = {}    # topic -> count
        self.cb_open: dict = {}            # (vpid, vtid) -> (callback, start ts)
        self.cb_last_end: dict = {}        # (vpid, vtid) -> (callback, end ts)
        self.cb_samples: dict = {}         # (vpid, callback) -> [ns]
        self.chain_samples: dict = {}      # chain name -> [ns]
        self.chain_info: dict = {}         # chain name -> {"deadline_ns", "deadline_misses"}
        self.counts: dict = {}
        self.pids: set = set()
        self.n = 0

    def read(self, ev: Event) -> None:
        self.n += 1
        self.counts[ev.name] = self.counts.get(ev.name, 0) + 1
        self.pids.add(ev.vpid)
        handler = _HANDLERS.get(ev.name)
        if handler is not None:
            handler(self, ev, ev.vpid, ev.fields)

    # -- entities: nodes, publishers, subscriptions, callbacks, timers
    def node_init(self, ev, p, f):
        ns = str(f.get("namespace", "/"))
        nn = str(f.get("node_name", ""))
        self.node_name[(p, f.get("node_handle"))] = (ns.rstrip("/") + "/" + nn) if ns != "/" else "/" + nn

    def publisher_init(self, ev, p, f):
        node = self.node_name.get((p, f.get("node_handle")), "?")
        self.pub_topic[(p, f.get("rmw_publisher_handle"))] = (str(f.get("topic_name")), node)
        self.rcl_pub_node[(p, f.get("publisher_handle"))] = node

    def subscription_init(self, ev, p, f):
        node = self.node_name.get((p, f.get("node_handle")), "?")
        self.sub_topic[(p, f.get("rmw_subscription_handle"))] = (str(f.get("topic_name")), node)
        self.rcl_sub[(p, f.get("subscription_handle"))] = (str(f.get("topic_name")), node)
        self.rmw_of_rcl_sub[(p, f.get("subscription_handle"))] = (f.get("rmw_subscription_handle"),
                                                                   int(f.get("queue_depth") or 0))

    def callback_register(self, ev, p, f):
        sym = str(f.get("symbol", ""))
        self.cb_name[(p, f.get("callback"))] = sym[len("chainrt:"):] if sym.startswith("chainrt:") else sym

    def rclcpp_subscription_init(self, ev, p, f):
        self.cb_of_sub[(p, f.get("subscription"))] = f.get("subscription_handle")

    def subscription_callback_added(self, ev, p, f):
        h = self.cb_of_sub.get((p, f.get("subscription")))
        if h is not None and (p, h) in self.rcl_sub:
            cb = f.get("callback")
            self.sub_of_cb[(p, cb)] = self.rcl_sub[(p, h)]
            rmw, depth = self.rmw_of_rcl_sub[(p, h)]
            self.cb_of_rmw_sub[(p, rmw)] = cb
            self.depth_of_cb[(p, cb)] = depth

    def timer_init(self, ev, p, f):
        self.timer_period[(p, f.get("timer_handle"))] = int(f.get("period", 0))

    def timer_link_node(self, ev, p, f):
        self.timer_node[(p, f.get("timer_handle"))] = self.node_name.get((p, f.get("node_handle")))

    def timer_callback_added(self, ev, p, f):
        self.timer_of[(p, f.get("callback"))] = f.get("timer_handle")

    # -- communication: publish -> take per hop
    def publish(self, ev, p, f):
        topic, node = self.pub_topic.get((p, f.get("rmw_publisher_handle")), (None, None))
        if topic is not None:
            self.published[(topic, f.get("timestamp"))] = (ev.ts, node)
            if self.flow is not None:
                self.flow.publish(p, ev.vtid, topic, f.get("timestamp"))

    def take(self, ev, p, f):
        if not f.get("taken"):
            return
        topic, node = self.sub_topic.get((p, f.get("rmw_subscription_handle")), (None, None))
        if topic is None:
            return
        if self.flow is not None:
            cb = self.cb_of_rmw_sub.get((p, f.get("rmw_subscription_handle")))
            if cb is not None:
                self.flow.take(p, cb, topic, f.get("source_timestamp"), self.depth_of_cb.get((p, cb), 0))
        src = self.published.get((topic, f.get("source_timestamp")))
        if src is None:
            self.unmatched_takes[topic] = self.unmatched_takes.get(topic, 0) + 1
            return
        self.hop_samples.setdefault((topic, src[1], node), []).append(ev.ts - src[0])

    # -- callback execution
    def callback_start(self, ev, p, f):
        self.cb_open[(p, ev.vtid)] = (f.get("callback"), ev.ts)
        if self.flow is not None:
            cb = f.get("callback")
            self.flow.start(p, ev.vtid, ev.ts, self.flow.resolve(p, cb, self.cb_name, self.timer_of, self.timer_period,
                                                                 self.timer_node, self.sub_of_cb), cb)

    def callback_end(self, ev, p, f):
        cb = f.get("callback")
        o = self.cb_open.pop((p, ev.vtid), None)
        if o is not None and o[0] == cb:
            self.cb_samples.setdefault((p, cb), []).append(ev.ts - o[1])
        self.cb_last_end[(p, ev.vtid)] = (cb, ev.ts)
        if self.flow is not None:
            self.flow.end(p, ev.vtid, ev.ts)

    # -- chainrt's chain events
    def chain_init(self, ev, p, f):
        self.chain_meta[(p, f.get("executor"), f.get("chain"))] = (str(f.get("name")), int(f.get("deadline", 0)))

    def chain_callback(self, ev, p, f):
        self.cb_name.setdefault((p, f.get("callback")), str(f.get("name")))

    def chain_complete(self, ev, p, f):
        meta = self.chain_meta.get((p, f.get("executor"), f.get("chain")))
        end = self.cb_last_end.get((p, ev.vtid))
        if meta is None or end is None or end[0] != f.get("callback"):
            self.rep.notes.append(f"a chain completion at {ev.ts} ns has no matching callback_end "
                                  "(events lost?); skipped")
            return
        cname, deadline = meta
        lat = end[1] - int(f.get("release"))
        self.chain_samples.setdefault(cname, []).append(lat)
        info = self.chain_info.setdefault(cname, {"deadline_ns": deadline, "deadline_misses": 0})
        if deadline > 0 and lat > deadline:
            info["deadline_misses"] += 1


_HANDLERS = {
    "ros2:rcl_node_init": _Tables.node_init,
    "ros2:rcl_publisher_init": _Tables.publisher_init,
    "ros2:rcl_subscription_init": _Tables.subscription_init,
    "ros2:rclcpp_callback_register": _Tables.callback_register,
    "ros2:rclcpp_subscription_init": _Tables.rclcpp_subscription_init,
    "ros2:rclcpp_subscription_callback_added": _Tables.subscription_callback_added,
    "ros2:rcl_timer_init": _Tables.timer_init,
    "ros2:rclcpp_timer_link_node": _Tables.timer_link_node,
    "ros2:rclcpp_timer_callback_added": _Tables.timer_callback_added,
    "ros2:rmw_publish": _Tables.publish,
    "ros2:rmw_take": _Tables.take,
    "ros2:callback_start": _Tables.callback_start,
    "ros2:callback_end": _Tables.callback_end,
    "chainrt:chain_init": _Tables.chain_init,
    "chainrt:chain_callback": _Tables.chain_callback,
    "chainrt:chain_complete": _Tables.chain_complete,
}


def _summarise(t: _Tables) -> None:
    """The report's chains, message-flow chains, hops, unmatched takes and callbacks from the tables."""
    rep = t.rep
    for cname, samples in t.chain_samples.items():
        rep.chains[cname] = {**summary(samples), **t.chain_info[cname],
                             "source": "chainrt:chain_complete - chain release"}
    if t.flow is not None:
        for cname, samples in t.flow.samples.items():
            rep.flow_chains[cname] = {**summary(samples),
                                      "source": "message flow: source callback_start -> last callback_end"}
    for (topic, pnode, snode), samples in sorted(t.hop_samples.items(), key=lambda kv: kv[0]):
        rep.hops.append({"topic": topic, "publisher_node": pnode, "subscriber_node": snode,
                         **summary(samples)})
    for topic, k in sorted(t.unmatched_takes.items()):
        rep.notes.append(f"{topic}: {k} take(s) without the publish in the trace (published by an "
                         "untraced process or before recording started)")
    for (p, cb), samples in t.cb_samples.items():
        nm = t.cb_name.get((p, cb)) or (f"callback {cb:#x}" if isinstance(cb, int) else f"callback {cb}")
        key = nm if nm not in rep.callbacks else f"{nm} (pid {p})"
        rep.callbacks[key] = summary(samples)


def _not_derivable(rep: TraceReport, counts: dict) -> None:
    """What the trace's events cannot give, each with the reason."""
    have_callbacks = counts.get("ros2:callback_start", 0) > 0
    have_chainrt = counts.get("chainrt:chain_complete", 0) > 0
    have_comm = counts.get("ros2:rmw_publish", 0) > 0 and counts.get("ros2:rmw_take", 0) > 0
    if not have_chainrt:
        what = ("the time from a chain's release to its source callback's start (the message-flow "
                "latency above starts at that callback)" if rep.flow_chains else
                "end-to-end chain latency (release -> completion)")
        if counts.get("chainrt:executor_init", 0) > 0:
            why = ("chainrt's executor ran but monitored no chain (give it a model that names the "
                   "chains: ChainExecutor(model=...), chainrt run MODEL)")
        else:
            why = ("the trace has no chainrt chain events (no chainrt executor ran, or the chainrt "
                   "events were not enabled)")
        rep.not_derivable.append(f"{what}: {why}; a chain's release is not an rcl/rmw event")
    if not have_callbacks:
        rep.not_derivable.append(
            "callback execution and response times: the executor emitted no ros2:callback_start/"
            "callback_end (rclpy's executors do not; chainrt's and rclcpp's do)")
        rep.not_derivable.append(
            "the time from a take to the next publish inside a node (node latency): without "
            "callback events a take cannot be tied to the publish it causes")
        rep.not_derivable.append(
            "timer releases: rcl emits no event when a timer fires (only rcl_timer_init)")
    if not have_comm:
        rep.not_derivable.append(
            "publish -> take per hop: the trace has no ros2:rmw_publish/rmw_take pair (were the "
            "ros2 events enabled, and the publishers' processes traced?)")


def _model_chains(rep: TraceReport, model) -> None:
    """Each model chain's hops as traced, and the trace's chains the model does not name."""
    chains, _ = _model_topology(model)
    for cname, hops in chains.items():
        entry = {"hops": []}
        for a, b, topic in hops:
            h = {"from": a, "to": b, "topic": topic}
            if topic is None:
                h["note"] = "not a topic hop (same callback or no publish/subscribe link)"
            else:
                found = [x for x in rep.hops if _topic_matches(x["topic"], topic)]
                if found:
                    h["traced"] = [x["topic"] for x in found]
                    h.update({k: v for k, v in _merge(found).items()})
                else:
                    h["note"] = "no publish -> take of this topic in the trace"
            entry["hops"].append(h)
        entry["latency_in_trace"] = cname in rep.chains
        entry["latency_by_flow"] = cname in rep.flow_chains
        rep.model_chains[cname] = entry
    unknown = [c for c in rep.chains if c not in chains]
    if unknown:
        rep.notes.append("chains in the trace that the model does not name: " + ", ".join(sorted(unknown)))


def analyze(events: Iterable[Event], model=None) -> TraceReport:
    """Derive per-chain latency, per-hop publish -> take and callback execution times."""
    rep = TraceReport()
    t = _Tables(rep, _Flow(model) if model is not None else None)
    for ev in events:
        t.read(ev)
    rep.events = t.n
    rep.processes = sorted(t.pids)
    if t.n == 0:
        rep.notes.append("the trace holds no event (was the program run under `chainrt trace record`?)")
    _summarise(t)
    _not_derivable(rep, t.counts)
    if model is not None:
        _model_chains(rep, model)
    return rep


def _merge(found: list[dict]) -> dict:
    """Combined summary of hop entries (weighted mean; max of maxima; p99 of the largest entry)."""
    n = sum(x["instances"] for x in found)
    if n == 0:
        return summary([])
    return {"instances": n,
            "mean_ns": sum(x["mean_ns"] * x["instances"] for x in found) / n,
            "p99_ns": max(x["p99_ns"] for x in found),
            "wcrt_ns": max(x["wcrt_ns"] for x in found),
            "bcrt_ns": min(x["bcrt_ns"] for x in found)}


def format_report(rep: TraceReport) -> str:
    out = [f"trace: {rep.events} events from {len(rep.processes)} process(es)"]
    for title, chains in (("Per-chain end-to-end latency (ms): release -> completion of the chain's last callback",
                           rep.chains),
                          ("Per-chain latency by message flow (ms): source callback's start -> last callback's end",
                           rep.flow_chains)):
        if not chains:
            continue
        rows = [("chain", "instances", "mean", "p99", "max", "min", "misses")]
        rows += [(name, c["instances"], *(output.ms(c[k], 3) for k in ("mean_ns", "p99_ns", "wcrt_ns", "bcrt_ns")),
                  c.get("deadline_misses", "-")) for name, c in sorted(chains.items())]
        out += ["", title, *output.table(rows, indent="  ")]
    if rep.model_chains:
        out.append("")
        out.append("Model chains, hop by hop (publish -> take, ms)")
        for cname, e in rep.model_chains.items():
            lat = ("end-to-end latency above" if e["latency_in_trace"] else
                   "latency by message flow above (from its source callback's start)" if e["latency_by_flow"]
                   else "end-to-end latency: not derivable from this trace")
            out.append(f"  {cname}: {lat}")
            for h in e["hops"]:
                if "note" in h:
                    out.append(f"    {h['from']} -> {h['to']}: {h['note']}")
                else:
                    out.append(f"    {h['from']} -> {h['to']} [{h['topic']}]: n={h['instances']} mean {output.ms(h['mean_ns'], 3)}"
                               f" p99 {output.ms(h['p99_ns'], 3)} max {output.ms(h['wcrt_ns'], 3)}")
    if rep.hops:
        out.append("")
        out.append("Per hop, publish (rmw_publish) -> take (rmw_take) of the same message (ms)")
        rows = [("topic", "publisher -> subscriber", "n", "mean", "p99", "max")]
        rows += [(h["topic"], f"{h['publisher_node']} -> {h['subscriber_node']}", h["instances"],
                  *(output.ms(h[k], 3) for k in ("mean_ns", "p99_ns", "wcrt_ns"))) for h in rep.hops]
        out += output.table(rows, left=(0, 1), indent="  ")
    if rep.callbacks:
        out.append("")
        out.append("Callback execution (callback_start -> callback_end, wall, ms)")
        rows = [("callback", "n", "mean", "p99", "max")]
        rows += [(name, c["instances"], *(output.ms(c[k], 3) for k in ("mean_ns", "p99_ns", "wcrt_ns")))
                 for name, c in sorted(rep.callbacks.items())]
        out += output.table(rows, indent="  ")
    if rep.not_derivable:
        out.append("")
        out.append("Not derivable from this trace:")
        out.extend(f"  - {x}" for x in rep.not_derivable)
    if rep.notes:
        out.append("")
        out.append("Notes:")
        out.extend(f"  - {x}" for x in rep.notes)
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))

