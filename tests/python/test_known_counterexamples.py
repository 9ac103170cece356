"""Known counterexamples: systems on which a shipped analysis's bound is beaten by the simulator.

Each is a strict xfail: it documents the unsound bound (the README's limitations name it) and
turns into a failure the moment the analysis is fixed, so that the entry is removed with the fix."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

DATA = pathlib.Path(__file__).resolve().parent / "data"


def _chainrt(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "chainrt.cli", *args, "--json"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)["chains"]


@pytest.mark.xfail(strict=True, reason="picas-st bounds chain4 at 57.075 ms; the simulator reaches 68 ms: "
                                       "a lower-priority head of another chain blocks, then that chain's "
                                       "higher-priority callbacks run before the analysed chain")
def test_picas_st_bound_holds_on_the_known_counterexample():
    model = str(DATA / "picas_st_counterexample.yaml")
    bound = _chainrt("analyze", model, "--analysis", "picas-st")["chain4"]["wcrt_bound_ns"]
    simulated = _chainrt("simulate", model, "--duration", "10s")["chain4"]["wcrt_ns"]
    assert bound is not None
    assert simulated <= bound, (simulated, bound)
