"""Fig. 7 of the EDF ready-queue paper (Al Arafat et al., Sec. VI-C): the percentage of
generated systems each analysis calls schedulable while ONE parameter varies and the others
keep the paper's defaults (m = 4, n = 8, b = 5, U_norm = 0.3, g = 2, α = 0.2; 2000 systems per
point). Systems come from the C++ generator (``chainrt.analysis`` generator.hpp); system i of a
point has seed ``stream_seed(point_seed, i)``, so results do not depend on the chunking or on the
number of threads. Multi-threaded analyses (edf-mt, fp-mt) see the m-thread executor; the
single-threaded baselines (picas-st, ros-default-st, cros-rt) see the same chains partitioned
over m single-threaded executors.

Besides the shipped analyses, the default run draws one REFERENCE curve that is not an analysis
chainrt ships: ``jiang22``, the default multi-threaded executor analysis of Jiang et al. (RTSS
2022) that the paper compares against — refuted by Teper et al. (2024), so it is never a
verdict (not in the registry, not in ``chainrt analyze``); see analysis/src/reference_jiang22.cpp
for exactly what is computed.
"""

from __future__ import annotations

import csv
import os
import zlib
from dataclasses import dataclass, field

from .. import _core
from ..campaign.plan import Batch, merge, Spec, split
from ..figures import pyplot, save_figure
from ..model import analyses, analysis_names
from .progress import Progress

DEFAULTS = {"m": 4, "n": 8, "b": 5, "u_norm": 0.3, "g": 2, "alpha": 0.2}

PANELS: dict[str, list] = {
    "u_norm": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    "n": [2, 4, 6, 8, 10, 12, 14, 16],
    "b": [2, 3, 4, 5, 6, 7, 8, 9, 10],
    "g": [0, 1, 2, 3, 4, 5, 6],
    "alpha": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
}

LABELS = {"u_norm": "U_norm", "n": "n (max chains)", "b": "b (max callbacks per chain)",
          "g": "g (max mutually exclusive groups)", "alpha": "α (share of callbacks in groups)"}

ANALYSES = analysis_names()  # the registry (analysis.hpp), in its order
# Reference curves: published analyses chainrt does not ship (analysis/include/chainrt/analysis/reference.hpp).
REFERENCE = ["jiang22"]
LEGEND = {"jiang22": "jiang22 (published, unsound:\nrefuted by Teper et al. 2024)",
          **{a["name"]: f"{a['name']} (partitioned)" for a in analyses() if a["single_threaded"]}}


@dataclass
class Point:
    panel: str
    value: float
    params: dict
    seed: int
    counts: dict = field(default_factory=dict)
    sets: int = 0


def point_seed(base: int, panel: str, value) -> int:
    return (base * 1_000_003 + zlib.crc32(f"{panel}={value}".encode())) & 0xFFFFFFFFFFFFFFFF


def plan(panels: list[str], base_seed: int, values: dict | None = None) -> list[Point]:
    points = []
    for panel in panels:
        for v in (values or {}).get(panel, PANELS[panel]):
            params = dict(DEFAULTS)
            params[panel] = v
            points.append(Point(panel, v, params, point_seed(base_seed, panel, v)))
    return points


# Systems per batch: a few ms of analyses each (five analyses and the reference curve), so a batch
# takes seconds and a 2000-system point is two batches (docs/campaigns.md, "Sizing").
BATCH = 1000


def point_label(panel: str, value) -> str:
    return f"{panel}={value}"


def batch_task(identity: dict, batch: dict) -> dict:
    """Systems first .. first + count - 1 of one point (the batch's group, "panel=value"),
    analysed by every analysis of the identity: how many each calls schedulable."""
    panel, text = batch["group"].split("=", 1)
    params = dict(DEFAULTS)
    params[panel] = next(v for v in PANELS[panel] if str(v) == text) if panel in PANELS else float(text)
    analyses = identity["analyses"]
    counts = _core._schedulable_counts(int(params["m"]), int(params["n"]), int(params["b"]),
                                       float(params["u_norm"]), int(params["g"]), float(params["alpha"]),
                                       batch["seed"], batch["first"], batch["count"], analyses, 1)
    return {"systems": batch["count"], "schedulable": dict(zip(analyses, counts))}


def make_spec(points: list[Point], sets: int, analyses: list[str], identity: dict):

    def make(size: int) -> Spec:
        return Spec("schedulability", identity,
                    split([(point_label(p.panel, p.value), p.seed, sets) for p in points], size), batch_task, size=size)

    return make


def apply(points: list[Point], results) -> list[Point]:
    """Fills every point from its merged batch results (`results(label)`: in plan order)."""
    for p in points:
        parts = results(point_label(p.panel, p.value))
        if parts:
            merged, _ = merge(parts)
            p.counts, p.sets = merged["schedulable"], merged["systems"]
    return points


def run_points(points: list[Point], sets: int, analyses: list[str], threads: int = 0,
               chunk: int = BATCH, progress: bool = True) -> list[Point]:
    """The points' systems in this process, batch after batch (a library call; the command runs
    them as a campaign). `threads` is kept for callers; every batch runs on one thread."""
    bar = Progress(len(points) * sets, "schedulability", unit="systems") if progress else None
    done: dict[str, list[dict]] = {}
    for p in points:
        label = point_label(p.panel, p.value)
        for first in range(0, sets, chunk):
            b = Batch(0, label, first, min(chunk, sets - first), p.seed)
            done.setdefault(label, []).append(batch_task({"analyses": analyses}, b.as_dict()))
            if bar:
                bar.advance(b.count, label)
    if bar:
        bar.close()
    return apply(points, lambda label: done.get(label, []))


def write_csv(points: list[Point], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "value", "analysis", "schedulable", "sets", "ratio"])
        for p in points:
            for a, c in p.counts.items():
                w.writerow([p.panel, p.value, a, c, p.sets, f"{c / p.sets:.4f}"])


def plot(points: list[Point], out_dir: str, prefix: str = "fig7_") -> list[str]:

    plt = pyplot()

    style = {"edf-mt": ("o", "-", "C0"), "fp-mt": ("s", "-", "C1"), "picas-st": ("^", "--", "C2"),
             "ros-default-st": ("v", "--", "C3"), "cros-rt": ("x", ":", "C4"), "jiang22": ("D", "-.", "0.45")}
    files = []
    for letter, panel in zip("abcde", PANELS):
        ps = [p for p in points if p.panel == panel]
        if not ps:
            continue
        fig, ax = plt.subplots(figsize=(5.6, 3.9))
        for a in ps[0].counts:
            xs = [p.value for p in ps]
            ys = [100.0 * p.counts[a] / p.sets for p in ps]
            marker, line, color = style.get(a, ("d", "-", None))
            ax.plot(xs, ys, marker=marker, markersize=4, linestyle=line, color=color, label=LEGEND.get(a, a))
        if panel in ("n", "b", "g"):
            ax.set_xticks([p.value for p in ps])
        ax.set_xlabel(LABELS[panel])
        ax.set_ylabel("schedulable systems (%)")
        ax.set_ylim(-3, 103)
        fixed = ", ".join(f"{k}={v}" for k, v in DEFAULTS.items() if k != panel)
        ax.set_title(f"Fig. 7{letter}: vary {panel} ({ps[0].sets} sets/point)\n{fixed}", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6.5, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{prefix}{letter}_{panel}.png")
        save_figure(fig, path, dpi=120, tight=True)
        files.append(path)
    return files
