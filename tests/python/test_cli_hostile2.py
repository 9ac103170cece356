"""Hostile command lines that once destroyed a model or ended in an internal error: an output path
that names an input (the same path, a symbolic or a hard link) is refused before any work and the
input is left as it was; numbers that are not finite, out of range or out of order, and a lock
that is not a regular file, are refused in one line (cliargs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "two_chains.yaml"


def chainrt(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrt.cli", *argv], capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout[-500:], r.stderr[-1500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    return lines[0]


# --------------------------------------------------------------------------- an output onto an input

SAME_FILE = [
    ("simulate", "M", "--duration", "1s", "--trace", "OUT"),
    ("simulate", "M", "--duration", "1s", "--gantt", "OUT"),
    ("trace", "caret", "M", "-o", "OUT"),
    ("synthesize", "M", "--cores", "2", "--fastdds-xml", "OUT"),
    ("synthesize", "M", "--cores", "2", "-o", "OUT"),
    ("lame", "allocate", "M", "-o", "OUT"),
    ("profile", "M", "--side", "OUT"),
]


def _link(kind: str, model: Path) -> Path:
    if kind == "same":
        return model
    out = model.with_name(f"{kind}-link.yaml")
    if kind == "symlink":
        out.symlink_to(model)
    else:
        os.link(model, out)
    return out


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("argv", SAME_FILE, ids=lambda a: " ".join(a[:2]) + " " + a[-2])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(tmp_path, argv, kind):
    model = tmp_path / "model.yaml"
    shutil.copy(EXAMPLE, model)
    before = model.read_bytes()
    out = _link(kind, model)
    r = chainrt(*(str(model) if a == "M" else str(out) if a == "OUT" else a for a in argv))
    line = one_line_error(r)
    assert str(out) in line and "destroy" in line, line
    assert model.read_bytes() == before
    if kind == "symlink":
        assert out.is_symlink()


def test_two_outputs_on_one_file_are_refused(tmp_path):
    out = tmp_path / "both.out"
    line = one_line_error(chainrt("simulate", str(EXAMPLE), "--duration", "1s", "--trace", str(out),
                                  "--gantt", str(out)))
    assert "another output" in line and not out.exists()


def test_distinct_outputs_and_special_files_still_work(tmp_path):
    r = chainrt("simulate", str(EXAMPLE), "--duration", "200ms", "--trace", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.json").stat().st_size > 0
    r = chainrt("trace", "caret", str(EXAMPLE), "-o", os.devnull)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- numbers and locks

@pytest.mark.parametrize("argv, flag", [
    (["experiment", "accelerator", "--no-real", "--duration", "nan"], "--duration"),
    (["experiment", "accelerator", "--no-real", "--duration", "inf"], "--duration"),
    (["experiment", "accelerator", "--no-real", "--duration", "1e12"], "--duration"),
    (["experiment", "accelerator", "--no-real", "--duration", "0"], "--duration"),
    (["experiment", "accelerator", "--no-real", "--overhead", "nan"], "--overhead"),
    (["experiment", "accelerator", "--no-real", "--overhead", "1e9"], "--overhead"),
    (["experiment", "accelerator", "--no-real", "--runs", "0"], "--runs"),
    (["experiment", "soundness", "--u-min", "nan"], "--u-min"),
    (["experiment", "soundness", "--u-max", "inf"], "--u-max"),
    (["experiment", "soundness", "--u-min", "0.7", "--u-max", "0.6"], "--u-min"),
    (["experiment", "soundness", "--horizon", "0"], "--horizon"),
    (["experiment", "soundness", "--sets", "0"], "--sets"),
    (["experiment", "lame-overload", "--duration", "nan"], "--duration"),
    (["experiment", "lame-throttle", "--throttle-at", "200", "--duration", "100"], "--throttle-at"),
    (["experiment", "f1tenth", "--duration", "-inf"], "--duration"),
    (["experiment", "cros-rt-two-chains", "--rate", "nan"], "--rate"),
    (["lame", "allocate", str(EXAMPLE), "--cores", "0"], "--cores"),
])
def test_numbers_out_of_range_are_refused_in_one_line(tmp_path, argv, flag):
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", *argv, *(["--out", str(tmp_path / "o")]
                                                                     if argv[0] == "experiment" else [])],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert flag in one_line_error(r)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("make", ["fifo", "dir"])
def test_a_lock_that_is_not_a_regular_file_is_refused_at_once(tmp_path, make):
    lock = tmp_path / "lock"
    os.mkfifo(lock) if make == "fifo" else lock.mkdir()
    r = chainrt("experiment", "accelerator", "--duration", "1", "--runs", "1", "--lock", str(lock),
                "--out", str(tmp_path / "o"), timeout=30)
    assert "--lock" in one_line_error(r)


def test_the_measurement_lock_refuses_a_fifo_put_in_its_place(tmp_path):
    # checked again when taken: a FIFO that appeared since the command line was read
    from chainrt.experiments.lame_real import measurement_lock
    lock = tmp_path / "lock"
    os.mkfifo(lock)
    box = {}

    def take():
        try:
            with measurement_lock(str(lock)):
                box["held"] = True
        except OSError as e:
            box["error"] = e

    t = threading.Thread(target=take, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive() and "error" in box and "held" not in box
    with measurement_lock(str(tmp_path / "regular")):
        pass
    assert (tmp_path / "regular").is_file()
