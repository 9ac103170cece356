"""`chainrt bench reference-system`: the output folder describes exactly one run (run id in
run.json and result.json, every file listed with its hash), a new run replaces an earlier
output whole, a run that fails leaves the previous folder untouched and no staging folder
behind, and the benchmark never deletes or overwrites a file it did not write: a folder holding
anything else is refused before the run (the user's model included), `--out .` works."""

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
    assert _run(out) == 0  # an earlier output is replaced whole
    second = json.loads((out / "run.json").read_text())
    assert second["run_id"] != first["run_id"]
    assert {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"run.json"} == set(second["files"])
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


def _tree(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_folder_with_the_users_files_is_refused_and_left_as_it_was(tmp_path, capsys):
    work = tmp_path / "mywork"
    work.mkdir()
    model = work / "my_model.yaml"
    model.write_bytes((ROOT / "examples/autoware_reference.yaml").read_bytes())
    (work / "notes.txt").write_text("mine")
    before = _tree(work)
    assert _run(work, "--model", str(model)) == 1
    err = capsys.readouterr().err
    assert "my_model.yaml" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert _tree(work) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mywork"]


def test_a_file_added_to_an_earlier_output_is_kept(tmp_path, capsys):
    out = tmp_path / "rs"
    assert _run(out) == 0
    (out / "stale.txt").write_text("the user's")
    before = _tree(out)
    assert _run(out) == 1
    assert "stale.txt" in capsys.readouterr().err
    assert _tree(out) == before


def test_out_dot_and_an_empty_folder_keep_their_identity(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    inode = empty.stat().st_ino
    monkeypatch.chdir(empty)
    assert main([*ARGS, "--out", "."]) == 0, capsys.readouterr().err
    assert empty.stat().st_ino == inode and (empty / "run.json").is_file()
    assert main([*ARGS, "--out", "."]) == 0  # its own earlier output: replaced in place
    assert empty.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]
