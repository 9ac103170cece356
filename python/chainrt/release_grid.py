"""The release grid as a run saw it: per model timer, the release jitter an executor measured
against the grid (``sched::ReleaseGrid``: releases at epoch + offset + k·period, the epoch shared
by the run) next to the jitter the model declares, and the timers that started late (after their
first grid release, so that the common start of the run's timers did not hold).

``release_report(model, callbacks)`` takes the merged per-callback figures of a run (the
executors' ``release_jitter_max_ns``, ``grid_start_index``) and returns rows and warnings; a
timer whose offset the model calls guaranteed and whose measured jitter exceeds the declared one
is a warning: the analyses' bounds hold for jitter up to the declared value only.

``aligned_groups(model)`` and ``phase_drift(model)`` say which timers the grid keeps aligned and
which drift: two timers of periods P and Q released on the grid from one epoch keep their
relative phase for ever when one period is a multiple of the other (30 Hz and 5 Hz given as
rates or fractions, ``period: 30 Hz`` or ``1/30 s``, released at epoch + offset + round(k·P);
10 Hz and 100 Hz), or more generally repeat it every lcm(P, Q), which for periods such as
33,333,333 ns and 200 ms is 77 days: over that cycle the phase drifts through every value, and a
run of minutes sees only the phases near its start. Periods are exact fractions of a ns here
(``exact_period``), so a rate's rounding to whole ns is never mistaken for a drift.
"""

from __future__ import annotations

import math
from fractions import Fraction


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


#: two timers are aligned when their phase cycle (lcm of the periods) is at most this many times
#: the longer period; beyond it their relative phase drifts slowly through its cycle
ALIGNED_CYCLE_PERIODS = 1000


def _timers(model) -> list:
    return [cb for cb in model.callbacks if cb.kind == "timer" and int(cb.period or 0) > 0]


def grid_period(cb) -> Fraction:
    """The period the release grid releases a timer by, in ns: exact for a rate or a fraction."""
    exact = getattr(cb, "exact_period", None)
    return Fraction(*exact) if exact else Fraction(int(cb.period))


def phase_cycle(p: Fraction, q: Fraction) -> Fraction:
    """After how long two timers of periods p and q (ns) are released at the same relative phase
    again: the least common multiple of the two fractions."""
    return Fraction(math.lcm(p.numerator, q.numerator), math.gcd(p.denominator, q.denominator))


def aligned_groups(model) -> list[list[str]]:
    """The model's timers grouped so that the timers of a group keep their relative phases
    (pairwise phase cycle at most ``ALIGNED_CYCLE_PERIODS`` longer periods), largest group first."""
    timers = _timers(model)
    parent = list(range(len(timers)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(timers):
        for j in range(i + 1, len(timers)):
            p, q = grid_period(a), grid_period(timers[j])
            if phase_cycle(p, q) <= ALIGNED_CYCLE_PERIODS * max(p, q):
                parent[root(j)] = root(i)
    groups: dict[int, list[str]] = {}
    for i, t in enumerate(timers):
        groups.setdefault(root(i), []).append(t.name)
    return sorted(groups.values(), key=len, reverse=True)


def phase_drift(model) -> list[dict]:
    """Per pair of timers whose relative phase drifts (one per pair of distinct periods): the
    two timers, by how much the longer one's phase moves against the shorter one's grid every
    longer period (``step_ns``), and the cycle after which the phases repeat (``cycle_ns``)."""
    timers = sorted(_timers(model), key=grid_period)
    out, seen = [], set()
    for i, a in enumerate(timers):
        for b in timers[i + 1:]:
            p, q = grid_period(a), grid_period(b)
            cycle = phase_cycle(p, q)
            if (p, q) in seen or cycle <= ALIGNED_CYCLE_PERIODS * q:
                continue
            seen.add((p, q))
            out.append({"timers": [a.name, b.name], "step_ns": _ns(q - round(q / p) * p), "every_ns": _ns(q),
                        "cycle_ns": _ns(cycle)})
    return out


def _ns(x: Fraction) -> int | float:
    return int(x) if x.denominator == 1 else float(x)


def span(ns: int | float) -> str:
    """A span of time for a user, ns up to days."""
    for unit, size in (("days", 86_400e9), ("h", 3_600e9), ("min", 60e9), ("s", 1e9)):
        if ns >= size:
            return f"{ns / size:.1f} {unit}"
    return f"{ns / 1e6:.3f} ms"


def drift_lines(model) -> list[str]:
    """One line per drifting pair of timers, for the reports of analyze and simulate."""
    return [f"the relative phase of timers '{d['timers'][0]}' and '{d['timers'][1]}' drifts by {d['step_ns']} ns "
            f"every {span(d['every_ns'])} and repeats every {span(d['cycle_ns'])}" for d in phase_drift(model)]


def coverage_warnings(model, duration_ns: int) -> list[str]:
    """What a run of ``duration_ns`` leaves out: per drifting pair whose phase cycle it does not
    cover, the share it covers (the phases it does not reach may hold a worse case)."""
    return [f"the simulated {span(duration_ns)} cover {100 * duration_ns / d['cycle_ns']:.2g} % of the "
            f"{span(d['cycle_ns'])} phase cycle of timers '{d['timers'][0]}' and '{d['timers'][1]}' (their relative "
            f"phase drifts by {d['step_ns']} ns every {span(d['every_ns'])}): the phases not reached may give a worse "
            f"case; `chainrt analyze` covers every phase"
            for d in phase_drift(model) if duration_ns < d["cycle_ns"]]
