"""The simulated worst case of a model over its allowed release jitter, and bound / worst.

``worst_case(model, ...)`` simulates the model at its declared offsets (the phases the release
grid keeps) with every timer's release jitter at its maximum, drawn per release and at zero,
under WCET and BCET/WCET-mix execution times, then hill-climbs over a constant release delay per
timer (within its declared jitter) and per-callback execution times (within [BCET, WCET]),
keeping a move when the worst response of the target chains over their bounds does not drop —
the adversarial search of the soundness harness (sim/soundness.hpp), for one model. Where a host
of several cores runs more unpinned threads than cores (and no pinned one), each run is simulated
twice: with the simulator's placement of those threads and with the kernel's global scheduling of
them. Returns
``{chain: worst simulated response (ns)}``. ``tightness(bounds, worst)``: bound / worst per
chain. Allocates; each simulation is one ``chainrt._core._simulate`` call.
"""

from __future__ import annotations

import json
import random

from . import _core
from .model import load_model_from_string


def _simulate(model, duration_ns: int, seed: int, exec_mode: str, delays: dict | None, random_jitter: bool) -> dict:
    out: dict[str, int] = {}
    for global_threads in ((False, True) if _core._unpinned_threads_share_cores(model) else (False,)):
        s, _ = _core._simulate(model, duration_ns, seed=seed, exec=exec_mode, release_delays=delays or {},
                               random_jitter=random_jitter, global_threads=global_threads)
        for n, c in json.loads(s)["chains"].items():
            if c["instances"] > 0:
                out[n] = max(out.get(n, 0), c["wcrt_ns"])
    return out


def _with_times(model, times: dict[str, int]):
    """The model with each named callback running exactly `times[name]` (WCET = BCET)."""
    m = load_model_from_string(model.to_yaml(), "<worst case>")
    cbs = m.callbacks
    for c in cbs:
        if c.name in times:
            c.wcet = times[c.name]
            c.bcet = times[c.name]
    m.callbacks = cbs
    return m


def worst_case(model, duration_ns: int = 5_000_000_000, climb: int = 24, seed: int = 1,
               bounds: dict[str, int] | None = None, chains: list[str] | None = None) -> dict[str, int]:
    """The worst simulated response per chain over the declared jitter (module doc). `bounds`
    (chain → bound) steer the climb to the chains closest to theirs; `chains`: the target ones."""
    timers = [c for c in model.callbacks if c.kind == "timer"]
    targets = chains or [c.name for c in model.chains]
    worst: dict[str, int] = {}

    def score(r: dict) -> float:
        vals = [r.get(c, 0) / bounds[c] if bounds and bounds.get(c) else r.get(c, 0) / 1e9 for c in targets]
        return max(vals, default=0.0)

    def note(r: dict) -> None:
        for n, w in r.items():
            worst[n] = max(worst.get(n, 0), w)

    max_delays = {t.name: t.jitter for t in timers}
    zero = {t.name: 0 for t in timers}
    for i, (mode, delays, rnd) in enumerate([("wcet", max_delays, False), ("wcet", None, True), ("mix", None, True),
                                              ("wcet", zero, False), ("mix", max_delays, False)]):
        note(_simulate(model, duration_ns, seed + i, mode, delays, rnd))
    # Every callback at its WCET, also where the simulator would run its BCET (a fusion input that
    # only caches): the climb's start, with the jitter at its maximum and at zero.
    times = {c.name: c.wcet for c in model.callbacks}
    best, best_score = dict(max_delays), -1.0
    for i, delays in enumerate([max_delays, zero]):
        r = _simulate(_with_times(model, times), duration_ns, seed + 10 + i, "wcet", delays, False)
        note(r)
        if score(r) > best_score:
            best, best_score = dict(delays), score(r)
    rng = random.Random(seed)
    cur_delays, cur_times, cur_score = best, dict(times), best_score
    for step in range(climb):
        delays, t = dict(cur_delays), dict(cur_times)
        for _ in range(rng.randint(1, 2)):
            if timers and rng.random() < 0.5:
                tm = rng.choice(timers)
                r = rng.random()
                delays[tm.name] = 0 if r < 0.3 else tm.jitter if r < 0.6 else rng.randint(0, max(0, tm.jitter))
            else:
                c = rng.choice(model.callbacks)
                lo, hi = (c.bcet if c.bcet is not None else c.wcet), c.wcet
                r = rng.random()
                t[c.name] = lo if r < 0.4 else hi if r < 0.7 else rng.randint(lo, hi)
        res = _simulate(_with_times(model, t), duration_ns, seed + 100 + step, "wcet", delays, False)
        note(res)
        if score(res) >= cur_score:
            cur_delays, cur_times, cur_score = delays, t, score(res)
    return worst


def tightness(bounds: dict[str, int | None], worst: dict[str, int]) -> dict[str, float | None]:
    """bound / worst simulated per chain (None where either is missing)."""
    return {c: (b / worst[c] if b and worst.get(c) else None) for c, b in bounds.items()}
