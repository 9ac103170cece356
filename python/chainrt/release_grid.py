"""The release grid as a run saw it: per model timer, the release jitter an executor measured
against the grid (``sched::ReleaseGrid``: releases at epoch + offset + k·period, the epoch shared
by the run) next to the jitter the model declares, and the timers that started late (after their
first grid release, so that the common start of the run's timers did not hold).

``release_report(model, callbacks)`` takes the merged per-callback figures of a run (the
executors' ``release_jitter_max_ns``, ``grid_start_index``) and returns rows and warnings; a
timer whose offset the model calls guaranteed and whose measured jitter exceeds the declared one
is a warning: the analyses' bounds hold for jitter up to the declared value only.
"""

from __future__ import annotations


def release_report(model, callbacks: dict) -> tuple[list[dict], list[str]]:
    rows, warnings = [], []
    for cb in model.callbacks:
        if cb.kind != "timer":
            continue
        st = callbacks.get(cb.name) or {}
        if "release_jitter_max_ns" not in st:
            continue
        row = {"timer": cb.name, "phase": cb.phase, "offset_ns": int(cb.offset or 0),
               "declared_jitter_ns": int(cb.jitter or 0), "measured_jitter_max_ns": st["release_jitter_max_ns"],
               "measured_jitter_mean_ns": st.get("release_jitter_mean_ns", 0),
               "samples": st.get("release_jitter_samples", 0), "grid_start_index": st.get("grid_start_index", 0)}
        rows.append(row)
        if cb.phase == "guaranteed" and row["measured_jitter_max_ns"] > row["declared_jitter_ns"]:
            warnings.append(f"timer '{cb.name}': release jitter {row['measured_jitter_max_ns'] / 1e6:.3f} ms measured "
                            f"against the grid, above the {row['declared_jitter_ns'] / 1e6:.3f} ms the model declares "
                            f"(the bounds that use its guaranteed offset hold for the declared jitter only)")
        if cb.phase == "guaranteed" and row["grid_start_index"] > 0:
            warnings.append(f"timer '{cb.name}': started at grid index {row['grid_start_index']}, after the run's "
                            f"common start (its offset holds, but instances fused with other timers' may pair "
                            f"across periods)")
    return rows, warnings


def format_rows(rows: list[dict]) -> str:
    """One line: each timer's measured max release jitter (and the declared one), in ms."""
    parts = [f"{r['timer']} {r['measured_jitter_max_ns'] / 1e6:.3f}"
             + (f" (declared {r['declared_jitter_ns'] / 1e6:.3f})" if r["declared_jitter_ns"] else "")
             for r in rows]
    return "release jitter against the grid, max ms: " + ", ".join(parts)
