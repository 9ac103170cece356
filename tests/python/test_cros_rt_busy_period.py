"""cros-rt on multi-host chains whose response exceeds the period, against the simulator with
measured (sampled) communication latencies — what the C++ harness does not generate (it uses
the declared, fixed hop costs). Chains of one to three callbacks alternate between two hosts,
so most are pipelined (each callback on its own CPU: analysis/src/cros_rt.cpp), at loads up to
0.97 per host, with remote and same-host latencies drawn per message from a wide spread.
``scripts/cros_rt_soundness`` runs the same check on 10,000 seeds."""

from __future__ import annotations

import json
import random

import chainrt
from chainrt import _core


def _simulate(model, seed, exec_mode, comm, offsets, horizon_periods=30):
    longest = max(c.period for c in model.chains)
    summary, _ = _core._simulate(model, max(10**9, longest * horizon_periods), seed, "picas", None, exec_mode,
                                 comm, False, 0, offsets)
    return json.loads(summary)["chains"]


def sampled_multi_host(first: int, last: int) -> dict:
    """{checked, beyond_period, max_ratio, violations} over the systems of seeds [first, last): four
    simulations each (latencies sampled, synchronous with WCETs and offset with BCET/WCET mixes;
    the fitted, fixed latencies, synchronous and offset with WCETs)."""
    checked = beyond = 0
    max_ratio = 0.0
    violations = []
    for seed in range(first, last):
        rnd = random.Random(seed)
        m = _core.uunifast_chains_system(chains=rnd.randint(2, 5), callbacks=rnd.choice([1, 2, 2, 3]), hosts=2,
                                         total_u=rnd.uniform(0.6, 0.97), seed=seed)
        lo, hi = rnd.choice([(100, 3000), (400, 900), (50, 8000)])
        y = m.to_yaml() + "  measurements:\n" + "".join(
            f"    - {{kind: remote, size: 1KiB, latency: {us}us}}\n" for us in (lo, (lo + hi) // 2, hi)) + (
            f"    - {{kind: same_host, size: 1KiB, latency: {lo}us}}\n"
            f"    - {{kind: same_host, size: 1KiB, latency: {hi // 2}us}}\n")
        mm = chainrt.load_model_from_string(y, "sampled.yaml")
        bounds = _core._analyze(mm, "cros-rt")["chains"]
        period = {c.name: c.period for c in mm.chains}
        for k in range(4):
            offsets = {} if k % 2 == 0 else {cb.name: rnd.randrange(cb.period) for cb in mm.callbacks if cb.kind == "timer"}
            sim = _simulate(mm, seed * 4 + k, "mix" if k == 1 else "wcet", "sampled" if k < 2 else "fixed", offsets)
            for name, b in bounds.items():
                if b["wcrt_bound_ns"] is None or sim[name]["instances"] == 0:
                    continue
                checked += 1
                beyond += b["wcrt_bound_ns"] > period[name]
                max_ratio = max(max_ratio, sim[name]["wcrt_ns"] / b["wcrt_bound_ns"])
                if sim[name]["wcrt_ns"] > b["wcrt_bound_ns"]:
                    violations.append((seed, name, sim[name]["wcrt_ns"], b["wcrt_bound_ns"]))
    return {"checked": checked, "beyond_period": beyond, "max_ratio": max_ratio, "violations": violations}


def test_sampled_latencies_multi_host_beyond_the_period():
    r = sampled_multi_host(0, 100)
    assert r["violations"] == []
    assert r["checked"] > 400
    assert r["beyond_period"] > 40  # the slice reaches R > T
    assert r["max_ratio"] > 0.9  # and some bound is nearly met
