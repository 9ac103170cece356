"""`chainrt experiment schedulability|predictability|soundness`: outputs, determinism and the
Fig. 7 shape on a reduced run (the full 2000-set run is the benchmark's job)."""

from __future__ import annotations

import csv
import pathlib

from chainrt import _core
from chainrt.cli import main
from chainrt.experiments import schedulability as sch
from chainrt.model import analysis_names


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_small_run_writes_csv_and_one_png_per_panel(tmp_path, capsys):
    out = tmp_path / "fig7"
    assert main(["experiment", "schedulability", "--sets", "20", "--out", str(out), "--quiet", "--in-process"]) == 0
    rows = read(out / "fig7.csv")
    assert {r["panel"] for r in rows} == set(sch.PANELS)
    assert {r["analysis"] for r in rows} == set(sch.ANALYSES) | {"jiang22"}
    assert all(r["sets"] == "20" for r in rows)
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["fig7_a_u_norm.png", "fig7_b_n.png", "fig7_c_b.png", "fig7_d_g.png", "fig7_e_alpha.png"]


def test_points_are_deterministic_and_independent_of_chunking():
    a = _core._schedulable_counts(4, 8, 5, 0.4, 2, 0.2, 11, 0, 60, ["edf-mt", "fp-mt"], 1)
    b1 = _core._schedulable_counts(4, 8, 5, 0.4, 2, 0.2, 11, 0, 25, ["edf-mt", "fp-mt"], 2)
    b2 = _core._schedulable_counts(4, 8, 5, 0.4, 2, 0.2, 11, 25, 35, ["edf-mt", "fp-mt"], 2)
    assert a == [x + y for x, y in zip(b1, b2)]


def test_fig7a_shape():
    # Schedulability falls as U_norm grows, and EDF schedules more than the default executor's
    # analysis at low and moderate utilisation.
    pts = sch.run_points(sch.plan(["u_norm"], 3, {"u_norm": [0.1, 0.3, 0.6]}), 150,
                         ["edf-mt", "ros-default-st"], progress=False)
    edf = [p.counts["edf-mt"] for p in pts]
    assert edf[0] >= edf[1] >= edf[2]
    assert edf[0] >= 140


def test_fig7a_edf_above_the_papers_baseline():
    # The paper's Fig. 7a: EDF above the default multi-threaded executor's analysis (Jiang et al.
    # 2022, the refuted reference curve) over most of the U_norm range.
    pts = sch.run_points(sch.plan(["u_norm"], 5, {"u_norm": [0.3, 0.5, 0.7]}), 150,
                         ["edf-mt", "jiang22"], progress=False)
    for p in pts:
        assert p.counts["edf-mt"] > p.counts["jiang22"], (p.value, p.counts)


def test_jiang22_is_a_reference_curve_never_a_verdict(capsys):
    two = pathlib.Path(__file__).resolve().parents[2] / "examples" / "two_chains.yaml"
    import pytest

    # not even a choice of `chainrt analyze --analysis` (a bad argument: exit 1, one line)
    assert main(["analyze", str(two), "--analysis", "jiang22"]) == 1
    assert "invalid choice: 'jiang22'" in capsys.readouterr().err
    assert "jiang22" not in analysis_names()
    r = _core._jiang22_reference(_core.edf_paper_system(seed=5))
    assert "unsound" in r["label"] and r["applicable"]


def test_unknown_panel_or_analysis_is_an_error(tmp_path, capsys):
    assert main(["experiment", "schedulability", "--panels", "zeta", "--out", str(tmp_path)]) == 1
    assert main(["experiment", "schedulability", "--analyses", "jiang", "--out", str(tmp_path)]) == 1


def test_predictability(tmp_path):
    assert main(["experiment", "predictability", "--sets", "10", "--chains", "2,4", "--out", str(tmp_path),
                 "--quiet"]) == 0
    rows = read(tmp_path / "predictability.csv")
    assert len(rows) == 20
    assert (tmp_path / "predictability_cros_rt.png").exists()


def test_soundness_subcommand_is_wired(capsys):
    import pytest

    assert main(["experiment", "soundness", "--help"]) == 0
    assert "soundness" in capsys.readouterr().out
