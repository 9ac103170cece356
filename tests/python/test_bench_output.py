"""`chainrt bench reference-system`: the output folder describes exactly one run (run id in
run.json and result.json, every file listed with its hash), a new run replaces it whole, and a
run that fails leaves the previous folder untouched and no staging folder behind."""

from __future__ import annotations

import hashlib
import json
import pathlib

from chainrt.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARGS = ["bench", "reference-system", "--model-only", "--configs", "edf-st", "--no-plots", "--no-analysis"]


def _run(out: pathlib.Path, *extra: str) -> int:
    return main([*ARGS, "--out", str(out), *extra])


def test_folder_is_one_whole_run(tmp_path, capsys):
    out = tmp_path / "rs"
    assert _run(out) == 0
    first = json.loads((out / "run.json").read_text())
    assert first["complete"] is True
    assert json.loads((out / "result.json").read_text())["run_id"] == first["run_id"]
    for name, digest in first["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    listed = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"run.json"}
    assert listed == set(first["files"])
    (out / "stale.txt").write_text("from an earlier run")
    assert _run(out) == 0
    second = json.loads((out / "run.json").read_text())
    assert second["run_id"] != first["run_id"] and not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rs"]  # no staging or old folder left


def test_failed_run_leaves_the_previous_folder(tmp_path, capsys):
    out = tmp_path / "rs"
    assert _run(out) == 0
    before = (out / "run.json").read_text()
    assert _run(out, "--model", str(ROOT / "examples/two_chains.yaml")) == 1
    err = capsys.readouterr().err
    assert "cannot be used by the reference-system benchmark" in err and "Traceback" not in err
    assert (out / "run.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rs"]
