"""Arguments that make no sense are refused on the command line, before any work, with one line
and exit 1 (cliargs, the validation layer): a count of zero or below, a duration of zero, a
period below the model's minimum that a command would write into a model `check` then refuses,
a ROS domain id out of range; a FIFO given as a model never blocks a command."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chainrt.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "examples/two_chains.yaml")


@pytest.mark.parametrize("argv, word", [
    (["lame", "allocate", MODEL, "--period", "1ns"], "--period"),
    (["lame", "allocate", MODEL, "--cores", "-1"], "--cores"),
    (["lame", "allocate", MODEL, "--controller-period", "0s"], "--controller-period"),
    (["experiment", "synthesis", "--sets", "0"], "--sets"),
    (["experiment", "synthesis", "--seed", "-4"], "--seed"),
    (["report", MODEL, "--duration", "0s"], "--duration"),
    (["discover", "--expect-nodes", "-1"], "--expect-nodes"),
    (["discover", "--duration", "soon"], "--duration"),
    (["crosslayer", MODEL, "--domain", "999"], "--domain"),
    (["profile", MODEL, "--margin", "5000%"], "--margin"),
    (["profile", MODEL, "--duration", "0s"], "--duration"),
    (["profile", MODEL, "--warmup", "-1s"], "--warmup"),
    (["bench", "reference-system", "--repeat", "0"], "--repeat"),
    (["run", MODEL, "--threads", "0"], "--threads"),
    (["run", MODEL, "--scale-wcet", "2s:-1"], "--scale-wcet"),
    (["run", MODEL, "--scale-wcet", "later:2"], "--scale-wcet"),
    (["run", MODEL, "--lame-controller", "0s"], "--lame-controller"),
    (["run", MODEL, "--nonrt-server", "5ms/2ms"], "--nonrt-server"),
    (["lame", "allocate", MODEL, "--step", "0"], "--step"),
    (["lame", "allocate", MODEL, "--step", "a bit"], "--step"),
    (["crosslayer", MODEL, "--nonrt-server", "2ms"], "--nonrt-server"),
    (["crosslayer", MODEL, "--duration", "soon"], "--duration"),
    (["discover", "--settle", "0s"], "--settle"),
    (["report", MODEL, "--trace", "no/such/folder"], "--trace"),
    (["simulate", MODEL, "--policy", "fifo"], "--policy"),
])
def test_nonsense_is_refused_in_one_line(argv, word, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error: argument" in err[0] and word in err[0], err
    assert list(tmp_path.iterdir()) == []  # nothing was started or written


def test_a_plan_is_never_written_with_a_period_check_refuses(tmp_path, capsys):
    from chainrt import _core
    if not hasattr(_core, "lame_allocate"):
        pytest.skip("no LaME module in this build")
    plan = tmp_path / "plan.yaml"
    assert main(["lame", "allocate", MODEL, "--period", "1ns", "-o", str(plan)]) == 1
    assert not plan.exists()
    code = main(["lame", "allocate", MODEL, "--period", "10us", "-o", str(plan)])
    assert code in (0, 2), capsys.readouterr().err
    assert main(["check", "-q", str(plan)]) == 0, capsys.readouterr().err


def test_a_fifo_without_a_writer_never_blocks(tmp_path):
    fifo = tmp_path / "model.yaml"
    os.mkfifo(fifo)
    # `check` reads it in the C++ loader: refused when no program writes into it
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "check", str(fifo)], capture_output=True, text=True,
                       timeout=120)  # a bound against blocking forever, not a timing assertion
    assert r.returncode == 1 and "FIFO" in r.stderr and "Traceback" not in r.stderr, r.stderr
    # commands that read a model file in Python refuse a FIFO outright
    for argv in (["lame", "allocate", str(fifo)], ["profile", str(fifo)], ["trace", "caret", str(fifo)]):
        r = subprocess.run([sys.executable, "-m", "chainrt.cli", *argv], capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and "FIFO" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (argv, r.stderr)


def test_a_fifo_with_a_writer_is_read(tmp_path):
    fifo = tmp_path / "model.yaml"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "w") as f:
            f.write(Path(MODEL).read_text())

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "check", "-q", str(fifo)], capture_output=True,
                       text=True, timeout=120)
    t.join(5)
    assert r.returncode == 0, r.stderr


def test_a_missing_build_is_one_line_not_a_traceback(tmp_path):
    """A virtualenv whose build is missing (setup not run, or its build failed): the command line
    says so in one line and exits 1, an import names the fix too."""
    env = dict(os.environ, CHAINRT_BUILD_DIR=str(tmp_path / "no-build"))
    chainrt = Path(sys.executable).parent / "chainrt"
    r = subprocess.run([str(chainrt), "demo"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"chainrt: the C++ core is not built (no _core module in {tmp_path / 'no-build' / 'python' / 'chainrt'}); "
        "run scripts/setup"]
    r = subprocess.run([sys.executable, "-c", "import chainrt"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "ImportError: chainrt: the C++ core is not built" in r.stderr
