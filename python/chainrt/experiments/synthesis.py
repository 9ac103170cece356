"""How far is PiCAS's heuristic from the best configuration? On random small systems (the EDF
ready-queue paper's generator, Sec. VI-C: 2 ≤ chains ≤ n, 2 ≤ callbacks per chain ≤ b, no
mutually exclusive groups) the PiCAS synthesis (P1–P4, ``chainrt synthesize``) and the
exhaustive search over every chain → core assignment and chain priority order are judged by the
same analysis; per point the schedulability ratio of each and the share of the optimum's
schedulable systems the heuristic also finds.

A run is a campaign (chainrt.campaign): each point's systems (system s of point (n, U) has seed
``point_seed + s``) are split into batches of ``BATCH`` systems (``batch_task``), run on the
embedded local Dask cluster, a running cluster or in this process, and kept per batch.
"""

from __future__ import annotations

import csv

from .. import _core, output
from ..campaign.plan import merge, Spec, split
from ..figures import pyplot, save_figure
from .progress import Progress


# Systems per batch: the exhaustive search judges up to 2^n·n! configurations per system.
BATCH = 5


def point_seed(seed: int, n: int, u: float) -> int:
    """System s of point (n, U) is generated with seed point_seed + s."""
    return seed * 1_000_003 + n * 10_007 + int(u * 1000) * 101


def point_label(n: int, u: float) -> str:
    return f"n={n} U={u}"


def batch_task(identity: dict, batch: dict) -> dict:
    """Systems first .. first + count - 1 of one point: schedulable by the heuristic, by the
    optimum, and the configurations the exhaustive search judged. Raises when the exhaustive
    search misses a configuration the heuristic found (a bug: the batch is reported)."""
    n = int(batch["group"].split()[0][2:])
    i = identity
    h_ok = x_ok = evaluated = 0
    for s in range(batch["first"], batch["first"] + batch["count"]):
        u = float(batch["group"].split()[1][2:])
        model = _core.edf_paper_system(m=i["cores"], n=n, b=i["callbacks"], u_norm=u, g=0, alpha=0.0,
                                       seed=batch["seed"] + s, policy="picas")
        h = _core._synthesize(model, cores=i["cores"], search="picas", layout=i["layout"], analysis=i["analysis"])
        x = _core._synthesize(model, cores=i["cores"], search="exhaustive", layout=i["layout"], analysis=i["analysis"])
        h_ok += bool(h["schedulable"])
        x_ok += bool(x["schedulable"])
        evaluated += x["evaluated"]
        if h["schedulable"] and not x["schedulable"]:
            raise AssertionError(f"exhaustive search missed a schedulable configuration (n={n}, U={u}, "
                                 f"system seed {batch['seed'] + s})")
    return {"systems": batch["count"], "heuristic_schedulable": h_ok, "optimum_schedulable": x_ok,
            "configurations": evaluated}


def identity(chain_counts: list[int], u_norms: list[float], sets: int, seed: int, cores: int = 2,
             callbacks: int = 4, layout: str = "per-core", analysis: str = "picas-st") -> dict:
    return {"chains": chain_counts, "u_norm": u_norms, "sets": sets, "seed": seed, "cores": cores,
            "callbacks": callbacks, "layout": layout, "analysis": analysis}


def make_spec(ident: dict):

    def make(size: int) -> Spec:
        groups = [(point_label(n, u), point_seed(ident["seed"], n, u), ident["sets"])
                  for n in ident["chains"] for u in ident["u_norm"]]
        return Spec("synthesis", ident, split(groups, size), batch_task, size=size)

    return make


def rows_from(ident: dict, results) -> list[dict]:
    """One row per (max chains n, U_norm) from the merged batch results (`results(label)`)."""
    rows = []
    for n in ident["chains"]:
        for u in ident["u_norm"]:
            parts = results(point_label(n, u))
            if not parts:
                continue
            m, _ = merge(parts)
            rows.append({"max_chains": n, "u_norm": u, "systems": m["systems"],
                         "heuristic_schedulable": m["heuristic_schedulable"],
                         "optimum_schedulable": m["optimum_schedulable"],
                         "mean_configurations": m["configurations"] / max(m["systems"], 1)})
    return rows


def run(chain_counts: list[int], u_norms: list[float], sets: int, seed: int, cores: int = 2, callbacks: int = 4,
        layout: str = "per-core", analysis: str = "picas-st", progress: bool = True) -> list[dict]:
    """The comparison in this process, batch after batch (a library call; the command runs it
    as a campaign)."""
    ident = identity(chain_counts, u_norms, sets, seed, cores, callbacks, layout, analysis)
    spec = make_spec(ident)(BATCH)
    bar = Progress(spec.systems, "synthesis", unit="systems") if progress else None
    done: dict[str, list[dict]] = {}
    for b in spec.batches:
        done.setdefault(b.group, []).append(batch_task(ident, b.as_dict()))
        if bar:
            bar.advance(b.count, b.group)
    if bar:
        bar.close()
    return rows_from(ident, lambda label: done.get(label, []))


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def format_table(rows: list[dict]) -> str:
    table = [("max chains", "U_norm", "systems", "PiCAS heuristic", "exhaustive optimum", "heuristic/optimum")]
    for r in rows:
        h, x, n = r["heuristic_schedulable"], r["optimum_schedulable"], r["systems"]
        table.append((r["max_chains"], f"{r['u_norm']:.2f}", n, f"{h / n:.2f}", f"{x / n:.2f}", f"{h / x:.2f}" if x else "-"))
    return "\n".join(output.table(table, left=()))


def plot(rows: list[dict], path: str) -> str:

    plt = pyplot()

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
    save_figure(fig, path, dpi=120)
    return path
