"""The soundness harness from Python: chainrt.soundness.add_arguments/run (what
`chainrt experiment soundness` calls) on a small number of systems per shipped analysis."""

from __future__ import annotations

import argparse
import json

import pytest

from chainrt import soundness
from chainrt.model import analysis_names


def parse(*argv: str) -> argparse.Namespace:
    """The command's arguments, run in this process, the campaign in a fresh folder."""
    import tempfile
    p = argparse.ArgumentParser()
    soundness.add_arguments(p)
    return p.parse_args(list(argv) + ["--in-process", "--quiet", "--out", tempfile.mkdtemp(prefix="chainrt-sound-")])


def test_every_shipped_analysis_survives_a_few_systems(tmp_path, capsys):
    args = parse("--sets", "40", "--json", "--counterexamples", str(tmp_path / "cx"))
    assert soundness.run(args) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["analysis"] for r in reports} == set(analysis_names())
    for r in reports:
        assert r["systems"] == 40
        assert r["simulations"] > 0 and r["executions"] > 0
        assert r["counterexamples"] == []
    assert not (tmp_path / "cx").exists()


def test_one_analysis_text_report(capsys):
    assert soundness.run(parse("--analysis", "edf-mt", "--sets", "10", "--variants", "2")) == 0
    out = capsys.readouterr().out
    assert out.startswith("edf-mt: 10 systems") and "counterexamples: 0" in out


def test_harsh_systems_and_climb(capsys):
    assert soundness.run(parse("--analysis", "cros-rt", "--sets", "15", "--harsh", "--climb", "4", "--json")) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["counterexamples"] == []
    assert rep["harsh"]["climb_simulations"] > 0 and rep["harsh"]["shuffled_priorities"] > 0


def test_negative_climb_is_an_error(capsys, tmp_path):
    # refused on the command line (cliargs), before any work
    from chainrt.cli import main
    assert main(["experiment", "soundness", "--sets", "1", "--climb", "-1", "--out", str(tmp_path / "o")]) == 1
    assert "--climb" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_unknown_analysis_is_an_error(capsys):
    assert soundness.run(parse("--analysis", "nope", "--sets", "1")) == 1
    assert "unknown analysis" in capsys.readouterr().err


def test_sag_under_another_policy_it_bounds(capsys):
    """--policy: sag (keyed to edf) generated and simulated under fp on the offsets/fusion family;
    its worst-case schedules are replayed, so most of its bounded chains are met exactly."""
    assert soundness.run(parse("--analysis", "sag", "--policy", "fp", "--phases", "--sets", "12", "--json")) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["policy"] == "fp" and rep["applicable"] > 0 and rep["counterexamples"] == []
    assert rep["tightness"]["bound_over_worst"]["histogram"][0] > 0


def test_policy_the_analysis_does_not_bound_is_an_error(capsys):
    assert soundness.run(parse("--analysis", "edf-mt", "--policy", "fp", "--sets", "1")) == 1
    err = capsys.readouterr().err
    assert "does not bound policy fp" in err and len(err.strip().splitlines()) == 1
    assert soundness.run(parse("--policy", "fp", "--sets", "1")) == 1
    assert "--policy needs one --analysis" in capsys.readouterr().err


def test_experiment_command_when_present(capsys, tmp_path):
    from chainrt.cli import main
    try:
        rc = main(["experiment", "soundness", "--analysis", "fp-mt", "--sets", "5", "--json", "--out", str(tmp_path)])
    except SystemExit as e:  # the experiment command (analysis engineer's) is not there yet
        pytest.skip(f"chainrt experiment soundness not available ({e})")
    assert rc == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["analysis"] == "fp-mt"


def test_own_low_fan_out_is_charged_the_smaller_way():
    """A chain's own fan-out ranked below it is charged as blocking or as the chain's own work,
    whichever bound is smaller: on this shared-callbacks system (seed 911, system 1) the blocking
    form alone gave one chain a bound 1.76x its own-work bound (worst / bound 0.34 instead of 0.60)."""
    rep = soundness.check("fp-mt", 1, seed=911, feature="shared-callbacks", first=1)
    assert rep["counterexamples"] == []
    assert [round(r, 4) for r in rep["ratios"]] == [0.3259, 0.6022, 0.7289]
