"""How far is PiCAS's heuristic from the best configuration? On random small systems (the EDF
ready-queue paper's generator, Sec. VI-C: 2 ≤ chains ≤ n, 2 ≤ callbacks per chain ≤ b, no
mutually exclusive groups) the PiCAS synthesis (P1–P4, ``chainrt synthesize``) and the
exhaustive search over every chain → core assignment and chain priority order are judged by the
same analysis; per point the schedulability ratio of each and the share of the optimum's
schedulable systems the heuristic also finds.
"""

from __future__ import annotations

import csv
import os

from .. import _core
from .progress import Progress


def run(chain_counts: list[int], u_norms: list[float], sets: int, seed: int, cores: int = 2, callbacks: int = 4,
        layout: str = "per-core", analysis: str = "picas-st", progress: bool = True) -> list[dict]:
    """One row per (max chains n, U_norm): systems, schedulable by the heuristic, by the
    optimum, configurations the exhaustive search judged (mean)."""
    rows = []
    bar = Progress(len(chain_counts) * len(u_norms) * sets, "synthesis") if progress else None
    for n in chain_counts:
        for u in u_norms:
            h_ok = x_ok = 0
            evaluated = 0
            for s in range(sets):
                model = _core.edf_paper_system(m=cores, n=n, b=callbacks, u_norm=u, g=0, alpha=0.0,
                                               seed=seed * 1_000_003 + n * 10_007 + int(u * 1000) * 101 + s,
                                               policy="picas")
                h = _core._synthesize(model, cores=cores, search="picas", layout=layout, analysis=analysis)
                x = _core._synthesize(model, cores=cores, search="exhaustive", layout=layout, analysis=analysis)
                h_ok += bool(h["schedulable"])
                x_ok += bool(x["schedulable"])
                evaluated += x["evaluated"]
                if h["schedulable"] and not x["schedulable"]:
                    raise AssertionError(f"exhaustive search missed a schedulable configuration (n={n}, u={u}, set {s})")
                if bar:
                    bar.advance(1, f"n={n} U={u}")
            rows.append({"max_chains": n, "u_norm": u, "systems": sets, "heuristic_schedulable": h_ok,
                         "optimum_schedulable": x_ok, "mean_configurations": evaluated / max(sets, 1)})
    if bar:
        bar.close()
    return rows


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def format_table(rows: list[dict]) -> str:
    lines = ["max chains  U_norm  systems  PiCAS heuristic  exhaustive optimum  heuristic/optimum"]
    for r in rows:
        h, x, n = r["heuristic_schedulable"], r["optimum_schedulable"], r["systems"]
        share = f"{h / x:.2f}" if x else "-"
        lines.append(f"{r['max_chains']:>10}  {r['u_norm']:>6.2f}  {n:>7}  {h / n:>15.2f}  {x / n:>18.2f}  {share:>17}")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, n in enumerate(sorted({r["max_chains"] for r in rows})):
        pts = [r for r in rows if r["max_chains"] == n]
        us = [r["u_norm"] for r in pts]
        # one colour per system size: solid = the optimum, dashed = the heuristic
        ax.plot(us, [r["optimum_schedulable"] / r["systems"] for r in pts], "-o", color=f"C{i}",
                label=f"exhaustive, ≤{n} chains")
        ax.plot(us, [r["heuristic_schedulable"] / r["systems"] for r in pts], "--s", color=f"C{i}",
                label=f"PiCAS, ≤{n} chains")
    ax.set_xlabel("normalised utilisation U_norm (2 cores)")
    ax.set_ylabel("schedulability ratio")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("PiCAS heuristic vs. the best configuration (same analysis)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
