"""Hostile and broken model files: each gives one-line, located errors (file:line:column) and
exit 1 — no crash, no traceback, no hang, bounded memory. The reproducers live in the parser's
fuzz corpus (fuzz/corpus, each with an `# expect: LINE | FIELD | MESSAGE` first line), so the
fuzz target replays them too."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from chainrt.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = sorted(p for p in (ROOT / "fuzz/corpus").glob("*.yaml") if p.read_bytes().startswith(b"# expect:"))
BROKEN = sorted((ROOT / "tests/models/broken").glob("*.yaml"))
LOCATED = re.compile(r"^.+:\d+:\d+: ")


def expectation(path: pathlib.Path) -> tuple[str, str, str]:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    line, field, message = (x.strip() for x in first[len("# expect:"):].split("|", 2))
    return line, field, message


def test_corpus_has_every_reproducer():
    names = {p.stem for p in CORPUS}
    for required in ("self_alias", "billion_laughs", "deep_nesting", "invalid_utf8_key", "invalid_utf8_name",
                     "queue_depth_huge", "threads_huge", "period_1ns", "period_huge", "digits_overflow"):
        assert required in names


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_hostile_model_gets_a_located_error(path, capsys):
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    line, field, message = expectation(path)
    assert any(l.startswith(f"{path}:{line}:") and field in l and message in l for l in err.splitlines()), err
    assert "Traceback" not in err


@pytest.mark.parametrize("path", CORPUS + BROKEN, ids=[p.stem for p in CORPUS + BROKEN])
def test_every_diagnostic_is_located(path, capsys):
    assert main(["check", str(path)]) == 1
    lines = [l for l in capsys.readouterr().err.splitlines() if not l.startswith("chainrt check:")]
    assert lines and all(LOCATED.match(l) for l in lines), lines


def check_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrt.cli", "check", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_dev_zero_is_refused_with_bounded_memory():
    # 16 MiB are read, then the file is refused: no unbounded growth (the test would time out).
    proc = check_cli("/dev/zero")
    assert proc.returncode == 1
    assert "larger than 16 MiB" in proc.stderr and "Traceback" not in proc.stderr


def test_directory_and_missing_file(tmp_path):
    proc = check_cli(str(tmp_path))
    assert proc.returncode == 1 and "is a directory" in proc.stderr and "empty" not in proc.stderr
    proc = check_cli(str(tmp_path / "missing.yaml"))
    assert proc.returncode == 1 and "cannot open the file" in proc.stderr


def test_huge_file_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("callbacks: []\nchains: []\n" + "# padding\n" * (2 << 20))
    proc = check_cli(str(big))
    assert proc.returncode == 1 and "larger than 16 MiB" in proc.stderr


def test_check_reports_every_error_of_a_file_in_one_pass(tmp_path, capsys):
    # Field errors (unknown field, bad unit) and a cross-reference error (a hop that does not
    # connect) are reported together.
    bad = tmp_path / "two_kinds.yaml"
    bad.write_text(
        "chainrt: 1\n"
        "callbacks:\n"
        "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, publishes: [x], colour: red}\n"
        "  - {name: b, kind: subscription, node: n, topic: nowhere, wcet: 2 parsecs}\n"
        "chains:\n"
        "  - {name: c, callbacks: [a, b]}\n")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "unknown field 'colour'" in err
    assert f"{bad}:4:" in err and "unknown unit" in err
    assert "hop 'a' -> 'b' does not connect" in err


def test_plain_aliases_still_work(tmp_path, capsys):
    ok = tmp_path / "aliases.yaml"
    ok.write_text(
        "chainrt: 1\n"
        "callbacks:\n"
        "  - {name: pub, kind: timer, node: n, period: &p 10ms, wcet: &w 1ms, publishes: [t]}\n"
        "  - {name: sub, kind: subscription, node: n, topic: t, wcet: *w}\n"
        "chains:\n"
        "  - {name: c, callbacks: [pub, sub], deadline: *p}\n")
    assert main(["check", "-q", str(ok)]) == 0, capsys.readouterr().err


def test_crlf_file_is_fine(tmp_path, capsys):
    crlf = tmp_path / "crlf.yaml"
    crlf.write_bytes((ROOT / "examples/two_chains.yaml").read_bytes().replace(b"\n", b"\r\n"))
    assert main(["check", "-q", str(crlf)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_python_api_raises_a_located_model_error(path):
    # the Python API raises chainrt.ModelError (a ValueError), never another exception, and
    # every diagnostic has its line and column
    import chainrt
    with pytest.raises(chainrt.ModelError) as info:
        chainrt.load_model(str(path))
    assert info.value.diagnostics and all(d["line"] > 0 and d["column"] > 0 for d in info.value.diagnostics)
