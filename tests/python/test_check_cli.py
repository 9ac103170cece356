"""`chainrt check` and the Python model API: valid examples pass, broken files fail with
file:line diagnostics, --help lists every command."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

import chainrt
from chainrt.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
BROKEN = sorted((ROOT / "tests/models/broken").glob("*.yaml"))


def test_examples_are_valid(capsys):
    assert len(EXAMPLES) >= 4
    assert main(["check", *map(str, EXAMPLES)]) == 0
    out = capsys.readouterr().out
    for required in ("two_chains", "case_study_2", "autoware_reference", "autoware_lame"):
        assert required in out
    assert "system utilisation" in out


def expectation(path: pathlib.Path) -> tuple[int, str, str]:
    line = [l for l in path.read_text().splitlines() if l.startswith("# expect:")][-1]
    lineno, field, message = (x.strip() for x in line[len("# expect:"):].split("|", 2))
    return int(lineno), field, message


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_model_is_rejected_with_location(path, capsys):
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    lineno, field, message = expectation(path)
    prefix = f"{path}:{lineno}:" if lineno else f"{path}: "
    matching = [l for l in err.splitlines() if l.startswith(prefix) and message in l and field in l]
    assert matching, err


def test_model_error_carries_structured_diagnostics():
    with pytest.raises(chainrt.ModelError) as info:
        chainrt.load_model(str(ROOT / "tests/models/broken/unknown_callback_in_chain.yaml"))
    (d,) = [d for d in info.value.diagnostics if "bb" in d["message"]]
    assert d["line"] == 7 and d["field"] == "chains[0].callbacks[1]"


def test_python_round_trip(tmp_path):
    for path in EXAMPLES:
        a = chainrt.load_model(str(path))
        out = tmp_path / path.name
        a.save(str(out))
        b = chainrt.load_model(str(out))
        assert a == b
        assert a.to_yaml() == b.to_yaml()


def test_executor_dispatch_overhead_from_python(tmp_path):
    text = ("executors:\n  - {name: e, dispatch_overhead: 20us}\n"
            "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\n"
            "chains:\n  - {name: c, callbacks: [a]}\n")
    m = chainrt.load_model_from_string(text, "ov.yaml")
    assert m.executors[0].dispatch_overhead == 20_000
    assert "dispatch_overhead: 20us" in m.to_yaml()
    assert chainrt.load_model_from_string(m.to_yaml(), "again.yaml") == m
    e = m.executors[0]
    e.dispatch_overhead = 35_000
    m.executors = [e]
    assert chainrt.load_model_from_string(m.to_yaml(), "set.yaml").executors[0].dispatch_overhead == 35_000
    with pytest.raises(chainrt.ModelError) as info:
        chainrt.load_model_from_string(text.replace("20us", "-3us"), "bad.yaml")
    assert "bad.yaml:2:" in str(info.value) and "dispatch_overhead" in str(info.value)


def test_model_is_readable_from_python():
    m = chainrt.load_model(str(ROOT / "examples/two_chains.yaml"))
    high = m.chain("high")
    assert high.period == 20_000_000 and high.callbacks == ["hi_pub", "hi_sub"]
    assert m.callback("hi_pub").kind == "timer"
    assert m.executors[0].policy == "fp"
    assert high.hops[0].comm == "intra_process" and high.hops[0].message_size == 4096


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "chainrt.cli", "--help"], capture_output=True, text=True,
                         check=True).stdout
    commands = sorted(p.stem for p in (ROOT / "python/chainrt/commands").glob("*.py") if p.stem != "__init__")
    assert "check" in commands
    for name in commands:
        assert re.search(rf"^\s+{name}\s+\S", out, re.M), f"{name} missing or without help line:\n{out}"


def test_missing_file_is_an_error(capsys):
    assert main(["check", "/nonexistent.yaml"]) == 1
    assert "cannot open" in capsys.readouterr().err
