"""The reference system's message (shared/reference/autoware-reference-system.md, "Message").

No ROS message type can be generated in this project, so the upstream layout travels as a
fixed 4096-byte little-endian buffer in a ``std_msgs/msg/UInt8MultiArray`` (``data`` field):

====== ======================= ===========================================================
offset field                   meaning
====== ======================= ===========================================================
0      size (uint64)           number of filled stats entries (at most 63)
8      stats[63] (64 B each)   timestamp (uint64 ns, CLOCK_MONOTONIC at callback start),
                               sequence_number (uint32, per publishing node/connection),
                               dropped_samples (uint32), node_name (48 bytes, NUL padded)
4040   data[7] (int64)         data[0]: the workload's result; data[1..4]: chainrt's
                               chain-instance stamp (chain, instance, release, deadline) so
                               that EDF deadlines travel with the sample (EDF paper IV-B)
====== ======================= ===========================================================

The C++ side is bench/reference_system/include/chainrt/reference_system/sample.hpp; the sinks
(Command nodes) dump every received sample as a record (``RECORD_DTYPE``): sink index, receive
time, then the 4096 bytes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

MESSAGE_SIZE = 4096
STATS_CAPACITY = 63
NODE_NAME_LEN = 48
DATA_LEN = 7
_DTYPES = ("ENTRY_DTYPE", "MESSAGE_DTYPE", "RECORD_DTYPE")


@functools.cache
def _numpy():
    """numpy and the layouts as numpy dtypes, imported on first use: the command line, which
    imports this module with the bench command, starts without numpy (tens of ms)."""
    import numpy as np

    entry = np.dtype([
        ("timestamp", "<u8"),
        ("sequence_number", "<u4"),
        ("dropped_samples", "<u4"),
        ("node_name", f"S{NODE_NAME_LEN}"),
    ])
    message = np.dtype([
        ("size", "<u8"),
        ("stats", entry, (STATS_CAPACITY,)),
        ("data", "<i8", (DATA_LEN,)),
    ])
    record = np.dtype([
        ("sink", "<u4"),
        ("reserved", "<u4"),
        ("received", "<i8"),
        ("message", message),
    ])
    assert entry.itemsize == 64
    assert message.itemsize == MESSAGE_SIZE
    return np, dict(zip(_DTYPES, (entry, message, record)))


def __getattr__(name: str):
    """ENTRY_DTYPE, MESSAGE_DTYPE, RECORD_DTYPE: the layouts (built on first use, _numpy)."""
    if name in _DTYPES:
        return _numpy()[1][name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Entry:
    """One stats entry: the node a sample passed through and when."""
    node: str
    timestamp: int
    sequence: int
    dropped: int = 0


Sample = list  # list[Entry], oldest first (the order of the stats array)


def entries_of(message) -> Sample:
    """The filled stats entries of one message (a MESSAGE_DTYPE scalar)."""
    n = min(int(message["size"]), STATS_CAPACITY)
    st = message["stats"]
    return [Entry(bytes(st[i]["node_name"]).rstrip(b"\0").decode("utf-8", "replace"),
                  int(st[i]["timestamp"]), int(st[i]["sequence_number"]), int(st[i]["dropped_samples"]))
            for i in range(n)]


def encode(entries: Sample, data0: int = 0) -> bytes:
    """The 4096-byte buffer of a sample (for tests and tools; the workload builds it in C++)."""
    np, dt = _numpy()
    m = np.zeros((), dtype=dt["MESSAGE_DTYPE"])
    kept = entries[:STATS_CAPACITY]
    m["size"] = len(kept)
    for i, e in enumerate(kept):
        m["stats"][i] = (e.timestamp, e.sequence, e.dropped, e.node.encode()[:NODE_NAME_LEN])
    m["data"][0] = data0
    return m.tobytes()


def decode(buffer: bytes) -> Sample:
    if len(buffer) != MESSAGE_SIZE:
        raise ValueError(f"a reference-system message has {MESSAGE_SIZE} bytes, not {len(buffer)}")
    np, dt = _numpy()
    return entries_of(np.frombuffer(buffer, dtype=dt["MESSAGE_DTYPE"])[0])


def read_dump(path: str | Path, sinks: list[str]) -> dict[str, list[tuple[int, Sample]]]:
    """Samples received by each sink, in arrival order: {sink: [(received_ns, entries), ...]}."""
    np, dt = _numpy()
    raw = np.fromfile(str(path), dtype=dt["RECORD_DTYPE"])
    out: dict[str, list[tuple[int, Sample]]] = {s: [] for s in sinks}
    for rec in raw:
        idx = int(rec["sink"])
        if idx >= len(sinks):
            raise ValueError(f"{path}: record names sink {idx}, only {len(sinks)} known")
        out[sinks[idx]].append((int(rec["received"]), entries_of(rec["message"])))
    return out
