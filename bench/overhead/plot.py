"""Plot the executor overhead benchmark (EDF ready-queue paper Fig. 6 workload): end-to-end
latency of one timer fanning out to N subscribers, per chainrt policy and the hand-written rcl
loop, against N. Usage: python bench/overhead/plot.py RESULT.json OUT.png"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    data = json.load(open(argv[1]))
    series: dict[str, list[tuple[int, float, float, float]]] = {}
    for p in data["points"]:
        series.setdefault(p["config"], []).append(
            (p["n"], p["mean_ns"] / 1e3, p["rep_mean_min_ns"] / 1e3, p["rep_mean_max_ns"] / 1e3))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        pts.sort()
        xs = [p[0] for p in pts]
        ax.errorbar(xs, [p[1] for p in pts], yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                    marker="o", ms=3, capsize=2, label=name, linestyle="--" if name == "rcl-loop" else "-")
    ax.set_xlabel("number of subscriber callbacks N")
    ax.set_ylabel("end-to-end latency (us)\nmean; bars: min..max of repetitions")
    ax.set_title("Executor overhead: 1 timer -> N subscribers, no work, 2 threads")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
