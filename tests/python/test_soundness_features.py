"""``chainrt experiment soundness --feature``: only systems with the feature, the counts of its
constructs and bounded chains, the tightness figures, and a clear error for a bad name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chainrt import soundness


def run_cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrt.cli", "experiment", "soundness", *argv],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("feature", soundness.FEATURES)
def test_feature_systems_only(feature, tmp_path):
    rep = soundness.check("fp-mt", 30, seed=5, counterexample_dir=str(tmp_path), feature=feature)
    assert rep["feature"] == feature
    assert rep["applicable"] == rep["feature_systems"] > 20
    assert rep["counterexamples"] == []
    t = rep["tightness"]
    assert t["chains"] > 0 and 0 < t["p10"] <= t["median"] <= t["p90"] <= 1.0
    if feature == "shared-callbacks":
        assert rep["merges"] + rep["forks"] == rep["feature_systems"]
    if feature == "branch-join":
        assert 0 <= rep["leaf_branches"] < rep["feature_systems"]
    if feature.startswith("accelerator"):  # every system draws one access mode (or both)
        assert rep["direct_access_systems"] + rep["server_access_systems"] + rep["both_access_systems"] == \
            rep["feature_systems"]


def test_feature_line_and_bad_feature(tmp_path):
    ok = run_cli("--analysis", "edf-mt", "--sets", "10", "--feature", "shared-callbacks",
                 "--counterexamples", str(tmp_path), "--out", str(tmp_path / "campaign"))
    assert ok.returncode == 0, ok.stderr
    assert "feature shared-callbacks: 10 systems" in ok.stdout and "bound / worst simulated median" in ok.stdout
    bad = run_cli("--analysis", "edf-mt", "--sets", "1", "--feature", "nope")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "invalid choice" in bad.stderr
