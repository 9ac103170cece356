"""Gantt chart of a simulator trace: one row per executor thread, one bar per callback
execution (start to finish, preempted intervals included), coloured by callback; read from the trace JSON of
``chainrt simulate --trace`` ({"threads", "callbacks", "events": [[thread, callback, release,
start, finish], ...]})."""

from __future__ import annotations

from .figures import pyplot, save_figure


def draw(trace: dict, path: str, start_ns: int = 0, end_ns: int | None = None, title: str = "") -> None:
    plt = pyplot()

    threads = trace["threads"]
    names = trace["callbacks"]
    events = trace["events"]
    if end_ns is None:
        end_ns = max((e[4] for e in events), default=start_ns + 1)
    cmap = plt.get_cmap("tab20")
    used = sorted({e[1] for e in events if e[4] > start_ns and e[3] < end_ns})
    colour = {cb: cmap(i % 20) for i, cb in enumerate(used)}
    fig_h = max(1.0 + 0.45 * max(1, len(threads)), 0.8 + 0.2 * min(20, len(used)))  # room for the legend
    fig, ax = plt.subplots(figsize=(12, fig_h))
    scale = 1e6  # ns -> ms
    for th, cb, _rel, s, f in events:
        if f <= start_ns or s >= end_ns:
            continue
        s0, f0 = max(s, start_ns), min(f, end_ns)
        ax.broken_barh([(s0 / scale, max(f0 - s0, 1) / scale)], (th - 0.4, 0.8), facecolors=colour[cb],
                       edgecolors="black", linewidth=0.3)
    ax.set_yticks(range(len(threads)))
    ax.set_yticklabels([f"{t['executor']}/{t['name']} (core {t['core']})" for t in threads], fontsize=8)
    ax.set_xlim(start_ns / scale, end_ns / scale)
    ax.set_ylim(-0.6, len(threads) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("time [ms]")
    if title:
        ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[cb]) for cb in used[:20]]
    if handles:
        ax.legend(handles, [names[cb] for cb in used[:20]], fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
