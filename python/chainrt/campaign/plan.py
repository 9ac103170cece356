"""A campaign's plan: its identity, its deterministic batches, the build that computes them, and
the merge of batch results.

A batch is systems ``first .. first + count - 1`` of one seed within one group (an analysis, a
Fig. 7 point, a synthesis point): every experiment derives system i of a seed from (seed, i)
alone, so a batch computes the same systems whichever process, machine or split runs it, and
the campaign's results do not depend on the batch size or the engine. Batch results are merged
per group in plan order (seed order, then system index), never in the order they arrive.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Callable

from .. import _core
from .._build import version

FORMAT = 2  # of manifest.json and the batch files (2: batch files carry their checksum)


@dataclass(frozen=True)
class Batch:
    index: int   # position in the plan: the merge order and the batch file's name
    group: str   # results merge within a group ("edf-mt", "u_norm=0.3", ...)
    first: int   # index of the first system within the group's seed
    count: int   # systems
    seed: int    # the seed the group's systems derive from

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        last = self.first + self.count - 1
        return f"batch {self.index} ({self.group}, systems {self.first}..{last} of seed {self.seed})"


@dataclass
class Spec:
    """One campaign. `task(identity, batch) -> dict` runs on a worker: a module-level function
    (Dask sends it by reference), given the identity and a batch as plain dicts; its result
    is JSON data and counts `batch["count"]` systems."""
    kind: str                       # "soundness", "schedulability", "synthesis", "lame-property"
    identity: dict                  # every parameter that determines the results (JSON data)
    batches: list[Batch]
    task: Callable[[dict, dict], dict]
    size: int = 0                   # systems per batch the plan was split with
    groups: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.groups:
            seen: dict[str, None] = {}
            for b in self.batches:
                seen.setdefault(b.group, None)
            self.groups = list(seen)

    @property
    def systems(self) -> int:
        return sum(b.count for b in self.batches)

    @property
    def batch_size(self) -> int:
        return self.size or max((b.count for b in self.batches), default=0)

    def key(self) -> str:
        """Names the campaign folder: the same kind and identity, the same folder (the batch size
        is the plan's, not the identity's: it does not change any result)."""
        text = json.dumps({"kind": self.kind, "identity": self.identity}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]


def split(groups: list[tuple[str, int, int]], size: int, first: int = 0) -> list[Batch]:
    """Batches of at most `size` systems for each (group, seed, systems), in that order,
    starting at system `first` of each group's seed."""
    out: list[Batch] = []
    for group, seed, total in groups:
        for lo in range(first, first + total, size):
            out.append(Batch(len(out), group, lo, min(size, first + total - lo), seed))
    return out


_BUILD: str | None = None


def build_id() -> str:
    """The build that computes a batch: chainrt's version and a digest of the C++ extension.
    A campaign is resumed, and a worker's result accepted, only from the same build."""
    global _BUILD
    if _BUILD is None:
        h = hashlib.sha256()
        with open(_core.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _BUILD = f"{version()}+{h.hexdigest()[:16]}"
    return _BUILD


def merge(reports: list[dict]) -> tuple[dict, list[str]]:
    """Merges batch reports of one group, given in plan order. Counts (integers) add up, a
    field named max* / min* keeps the largest / smallest, lists are concatenated, objects merge
    field by field, text and flags must agree. A fraction such as a median or a mean cannot be
    merged from its parts: it is left out and named in the second return value (the kind
    recomputes what it needs, e.g. the tightness figures from the batches' ratios)."""
    dropped: list[str] = []
    return _merge(reports, "", dropped), dropped


def _merge(values: list, path: str, dropped: list[str]):
    first = values[0]
    if isinstance(first, bool) or first is None or isinstance(first, str):
        if any(v != first for v in values):
            raise ValueError(f"the batches disagree on {path or 'the result'}: {sorted({str(v) for v in values})}")
        return first
    if isinstance(first, int):
        return sum(values)
    if isinstance(first, float):
        name = path.rsplit(".", 1)[-1]
        if name.startswith("max"):
            return max(values)
        if name.startswith("min"):
            return min(values)
        dropped.append(path)
        return None
    if isinstance(first, list):
        return [x for v in values for x in v]
    if isinstance(first, dict):
        out = {}
        keys = list(dict.fromkeys(k for v in values for k in v))  # every batch's fields, in order
        for k in keys:
            present = [v[k] for v in values if k in v]
            m = _merge(present, f"{path}.{k}" if path else k, dropped)
            if m is not None or present[0] is None:
                out[k] = m
        return out
    raise ValueError(f"{path}: cannot merge {type(first).__name__}")


def quantile(ascending: list[float], q: float) -> float:
    """The harness's percentile (sim/src/soundness.cpp): element ⌊q·n⌋ of the ascending list."""
    return ascending[min(len(ascending) - 1, int(q * len(ascending)))]


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
