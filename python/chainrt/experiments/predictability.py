"""CROS-RT's predictability experiment (slides "Randomly generated chains (UUniFast)",
Fig. 11a): the distribution of WCRT − BCRT of the highest-priority chain as the number of
chains grows. Here both ends are the analysis' bounds: the cros-rt WCRT bound minus the BCRT
lower bound (Σ BCET along the chain), on CROS-RT-style systems from the C++ generator
(one single-threaded executor per chain and host, two hosts, UUniFast utilisations; the load per
host grows with the number of chains).
"""

from __future__ import annotations

import csv

from .. import _core
from ..figures import pyplot, save_figure
from .progress import Progress


def run(chain_counts: list[int], sets: int, seed: int, callbacks: int = 3, hosts: int = 2,
        u_per_chain: float = 0.08, message_size: int = 1024, progress: bool = True) -> dict[int, list[int | None]]:
    """Every added chain adds load (utilisation ``u_per_chain`` per host on average, as in
    CROS-RT's experiment where more chains mean more contention), capped at 0.95 per host."""
    bar = Progress(len(chain_counts) * sets, "predictability") if progress else None
    out: dict[int, list[int | None]] = {}
    for n in chain_counts:
        gaps: list[int | None] = []
        for s in range(sets):
            total_u = min(0.95, u_per_chain * n)
            model = _core.uunifast_chains_system(chains=n, callbacks=callbacks, hosts=hosts, total_u=total_u,
                                                 message_size=message_size, seed=seed * 7919 + n * 100_003 + s)
            r = _core._analyze(model, "cros-rt")
            top = r["chains"]["chain0"]  # chain0 has the highest priority
            gaps.append(None if top["wcrt_bound_ns"] is None else top["wcrt_bound_ns"] - top["bcrt_bound_ns"])
            if bar:
                bar.advance(1, f"{n} chains")
        out[n] = gaps
    if bar:
        bar.close()
    return out


def write_csv(result: dict[int, list[int | None]], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["chains", "set", "wcrt_minus_bcrt_bound_ns"])
        for n, gaps in result.items():
            for i, g in enumerate(gaps):
                w.writerow([n, i, "" if g is None else g])


def plot(result: dict[int, list[int | None]], path: str) -> str:

    plt = pyplot()

    ns = sorted(result)
    data = [[g / 1e6 for g in result[n] if g is not None] or [0.0] for n in ns]
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    ax.boxplot(data, showfliers=True)
    ax.set_xticks(range(1, len(ns) + 1), [str(n) for n in ns])
    unb = [sum(1 for g in result[n] if g is None) for n in ns]
    ax.set_xlabel("number of chains")
    ax.set_ylabel("WCRT − BCRT bound of the top chain (ms)")
    ax.set_title("cros-rt predictability (UUniFast chains)\nunbounded: " + ", ".join(map(str, unb)), fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    return path
