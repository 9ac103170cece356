"""The one output layer (chainrt.output): units, tables and --json read the same in every
command, and no other module writes its own table formatter or unit helper."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from chainrt import output
from chainrt.cli import main

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python/chainrt"
MODEL = str(ROOT / "examples/two_chains.yaml")


def test_units():
    assert output.ms(1_234_567) == "1.23"
    assert output.ms(1_234_567, 3, unit=True) == "1.235 ms"
    assert output.ms(20_000_000, ".6g", unit=True) == "20 ms"
    assert output.ms(None) == "-" and output.us(None) == "-" and output.pct(None) == "-"
    assert output.us(1_500) == "2" and output.us(1_500, 1, unit=True) == "1.5 us"
    assert output.seconds(2_500_000_000, unit=True) == "2.5 s"
    assert output.pct(0.125, 1) == "12.5 %"
    assert output.duration(20_000_000) == "20 ms"
    assert [output.exact_duration(n) for n in (2_000_000_000, 20_000_000, 33_333_000, 7)] == \
        ["2s", "20ms", "33333us", "7ns"]
    assert output.spread({"n": 1, "median": 1.0, "min": 1.0, "max": 1.0}) == "1.00"
    assert output.spread({"n": 3, "median": 2.0, "min": 1.0, "max": 3.5}, 1) == "2.0 [1.0..3.5]"
    assert output.spread(None) == "-"


def test_table_aligns_text_left_and_figures_right():
    lines = output.table([("chain", "wcrt", "n"), ("high", "1.25", 3), ("a-long-name", "12.50", 10)], indent="  ")
    assert lines == ["  chain         wcrt   n",
                     "  high          1.25   3",
                     "  a-long-name  12.50  10"]
    assert output.table([("a", "b"), ("xx", "")], left="all", rstrip=True) == ["a   b", "xx"]
    assert output.table([]) == []


def test_emit_json_is_one_indented_document(capsys):
    output.emit_json({"b": 1, "a": [1, 2]})
    out = capsys.readouterr().out
    assert json.loads(out) == {"b": 1, "a": [1, 2]} and out.startswith("{\n  ")


def test_every_json_command_prints_through_the_output_layer(capsys):
    for argv in (["analyze", MODEL, "--json"], ["simulate", MODEL, "--duration", "1s", "--json"]):
        main(argv)
        out = capsys.readouterr().out
        assert out.startswith("{\n  "), argv  # emit_json's form
        json.loads(out)


def test_commands_print_tables_through_the_output_layer(capsys):
    assert main(["simulate", MODEL, "--duration", "2s"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    assert head == ["chain", "period", "deadline", "WCRT", "BCRT", "mean", "p99", "instances", "misses", "drops"]
    # figures right-aligned under their header: every row as long as the header
    assert len({len(line) for line in lines[:3]}) == 1
    main(["analyze", MODEL])
    out = capsys.readouterr().out
    assert re.search(r"^  chain\s+WCRT bound ms\s+BCRT bound ms\s+deadline ms\s+slack ms\s+verdict\s+bound from$", out, re.M)


# What a module-local formatter looks like: a unit helper (a function turning nanoseconds into
# text) or a table (column widths from the longest cell, then ljust/rjust).
_UNIT_HELPER = re.compile(r"^_?(ms|us|ns|s|pct|percent|fmt\w*|\w*_ms|\w*_us|columns|_?table|_columns)$")


def _defined_functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_module_defines_its_own_table_formatter_or_unit_helper():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "output.py":
            continue
        text = path.read_text()
        tree = ast.parse(text)
        for fn in _defined_functions(tree):
            body = ast.unparse(fn)
            converts = re.search(r"/\s*(1e[369]|1_?000(_?000)*)\b", body) and "return f" in body
            if _UNIT_HELPER.match(fn.name) and converts:
                offenders.append(f"{path.relative_to(ROOT)}: def {fn.name} (a unit helper)")
        if re.search(r"max\(len\(.*\)\s+for\s+\w+\s+in", text) and re.search(r"\.(ljust|rjust)\(\w+\)", text):
            offenders.append(f"{path.relative_to(ROOT)}: a table formatter (column widths + ljust/rjust)")
        for m in re.finditer(r"f\"[^\"]*\{'[^']+':[<>]\d+\}[^\"]*\{'[^']+':[<>]\d+\}", text):
            offenders.append(f"{path.relative_to(ROOT)}: a fixed-width table header: {m.group(0)[:60]}")
    assert not offenders, "\n".join(offenders)


def test_run_loads_the_model_once_and_a_local_run_skips_the_cross_layer_path(monkeypatch, capsys):
    """`chainrt run` parses the model file once and passes the model down (the comparison with
    the simulator and the analysis, the release grid, the run's warnings); a single-host run
    without --crosslayer goes straight to the runtime."""
    import chainrt.model as cm
    from chainrt import runtime
    from chainrt.crosslayer import cli as xcli
    loads = []
    real = cm.load_model
    monkeypatch.setattr(cm, "load_model", lambda path: loads.append(path) or real(path))

    def cross_layer(*a, **kw):
        raise AssertionError("a local run went through the cross-layer module")

    monkeypatch.setattr(xcli, "run_model", cross_layer)
    chain = {"wcrt_ns": 6_000_000, "bcrt_ns": 5_000_000, "mean_ns": 5_500_000, "p99_ns": 6_000_000,
             "instances": 10, "deadline_misses": 0, "drops": 0}
    monkeypatch.setattr(runtime, "run_model", lambda path, d, **kw: {
        "chains": {"high": chain, "low": {**chain, "wcrt_ns": 25_000_000}}, "policy": "fp", "threads": 1,
        "processes": ["p"], "duration_ns": d, "callbacks": {}})
    assert main(["run", MODEL, "--duration", "1s", "--policy", "fp"]) == 0
    out = capsys.readouterr().out
    assert loads == [MODEL]
    head = next(line for line in out.splitlines() if line.startswith("chain"))
    assert head.split()[:8] == ["chain", "wcrt", "bcrt", "mean", "p99", "inst", "miss", "drop"]
    assert re.search(r"^high\s+6\.00\s+5\.00\s+5\.50\s+6\.00\s+10\s+0\s+0\s+\|", out, re.M)
