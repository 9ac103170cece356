"""Former counterexamples: systems on which a shipped analysis's bound was beaten by the simulator.

Each is kept as a regression test: every bound the analysis gives on the system must be at least
the worst response the simulator reaches there."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import yaml

DATA = pathlib.Path(__file__).resolve().parent / "data"


def _chainrt(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "chainrt.cli", *args, "--json"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)["chains"]


def _bounds_hold(model: str, analysis: str) -> dict:
    """Each chain's (bound, simulated worst); asserts bound >= simulated worst where there is a bound."""
    bounds = _chainrt("analyze", model, "--analysis", analysis)
    simulated = _chainrt("simulate", model, "--duration", "10s")
    out = {}
    for name, sim in simulated.items():
        bound = bounds[name]["wcrt_bound_ns"]
        if bound is not None:
            assert sim["wcrt_ns"] <= bound, (name, sim["wcrt_ns"], bound)
        out[name] = (bound, sim["wcrt_ns"])
    return out


def test_picas_st_bound_holds_on_the_known_counterexample():
    # One single-threaded PiCAS executor runs chain0's low-priority head c0_0 (15 ms), then its
    # c0_1 and c0_2 (priorities 4 and 7, group-mates of chain4's last callback, priority 8) ahead
    # of chain4's first callback (priority 4): 68 ms. picas-st bounded chain4 at 57 ms, charging
    # c0_1 and c0_2 (chain0 has no bound) as one blocking.
    got = _bounds_hold(str(DATA / "picas_st_counterexample.yaml"), "picas-st")
    assert got["chain4"][1] >= 68_000_000  # the model still produces that schedule
    assert got["chain0"][0] is None and got["chain4"][0] is None


def test_picas_st_bounds_the_counterexample_once_the_other_chain_has_a_bound(tmp_path):
    # Without chain1, chain0 has a bound, and chain4 one that charges c0_1 and c0_2 as
    # interference (70 ms; the simulator 69 ms).
    model = yaml.safe_load((DATA / "picas_st_counterexample.yaml").read_text())
    chain1 = next(c for c in model["chains"] if c["name"] == "chain1")
    model["chains"].remove(chain1)
    model["callbacks"] = [c for c in model["callbacks"] if c["name"] not in chain1["callbacks"]]
    path = tmp_path / "without_chain1.yaml"
    path.write_text(yaml.safe_dump(model, sort_keys=False))
    got = _bounds_hold(str(path), "picas-st")
    assert got["chain0"][0] is not None
    assert got["chain4"][0] is not None and got["chain4"][0] <= 71_000_000
