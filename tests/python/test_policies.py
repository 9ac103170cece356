"""One policy descriptor, one analysis registry: the Python package reads the executor
policies from the C++ descriptors (sched/policy.hpp, chainrt._core.policies()) and the analyses
from the registry (chainrt._core.analyses()); no module writes a list of their names again."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from chainrt import _core
from chainrt.cli import build_parser
from chainrt.model import (ModelError, analyses, analysis_names, load_model_from_string, policies,
                           policy_names)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python/chainrt"

MODEL = """
name: one
executors:
  - {{name: e, policy: {policy}, threads: 1}}
nodes:
  - {{name: n, executor: e}}
callbacks:
  - {{name: t, node: n, kind: timer, period: 10ms, wcet: 1ms}}
chains:
  - {{name: c, callbacks: [t], priority: 1}}
"""


def test_the_policies_are_the_descriptors():
    ps = policies()
    assert [p["name"] for p in ps] == policy_names()
    assert {"ros-default", "picas", "fp", "edf", "mixed", "lame"} <= set(policy_names())
    for p in ps:
        assert p["description"] and p["admission"] in ("immediate", "polling-point", "lame-best-effort")
        assert p["analysis_single"] or p["no_analysis"]
        for a in (p["analysis_single"], p["analysis_multi"]):
            assert a is None or a in analysis_names()
    assert {p["name"]: p["admission"] for p in ps}["ros-default"] == "polling-point"
    assert {p["name"] for p in ps if p["orders_by_priority"]} == {"picas", "fp", "lame"}


@pytest.mark.parametrize("policy", policy_names())
def test_the_model_parser_takes_every_policy(policy):
    m = load_model_from_string(MODEL.format(policy=policy))
    assert m.executors[0].policy == policy


def test_the_model_parser_refuses_another_name():
    with pytest.raises(ModelError, match="policy"):
        load_model_from_string(MODEL.format(policy="fifo"))


def _parsers(parser, prefix=""):
    for act in parser._actions:
        if isinstance(act, argparse._SubParsersAction):
            for name, sub in act.choices.items():
                yield f"{prefix}{name}", sub
                yield from _parsers(sub, f"{prefix}{name} ")


def test_every_policy_option_offers_the_descriptors():
    seen = []
    for name, cmd in _parsers(build_parser()):
        for act in cmd._actions:
            if "--policy" in act.option_strings and act.choices is not None:
                assert list(act.choices) == policy_names(), name
                seen.append(name)
    assert {"analyze", "simulate", "run", "report"} <= set(seen)


def test_the_rclpy_executor_offers_the_descriptors():
    executor = pytest.importorskip("chainrt.rclpy.executor")
    assert executor.POLICIES == ("arrival", *policy_names())


def test_the_analysis_registry():
    names = analysis_names()
    assert names == [a["name"] for a in analyses()] == [a["name"] for a in _core.analyses()]
    assert {"edf-mt", "fp-mt", "picas-st", "ros-default-st", "cros-rt"} <= set(names)
    single = {a["name"] for a in analyses() if a["single_threaded"]}
    assert single == {"picas-st", "ros-default-st", "cros-rt", "sag"}
    assert {a["policy"] for a in analyses()} <= set(policy_names())


def test_experiments_read_the_registry():
    from chainrt.experiments import schedulability as sch
    assert sch.ANALYSES == analysis_names()


# Selections of a few policies that no property of the policies gives, each written once and
# named: package file (or, outside the package, the file from the repository root) -> the start
# of its line.
CHOSEN = {
    "bench/overhead/stock.py": "PAPER_POLICIES = ",  # the executors of the EDF paper's overhead figure
    "commands/demo.py": "TOUR = ",                  # the orders the demo's tour shows
    "diagnose.py": "CHAIN_AWARE = ",                # the policies the chain-aware advice recommends
    "experiments/f1tenth.py": "CONFIGS = ",         # the F1TENTH paper's configurations (Fig. 4)
}


def _chosen(rel: str, line: str) -> bool:
    return rel in CHOSEN and line.lstrip().startswith(CHOSEN[rel])


def _name_lists(names: set[str]):
    """(file, line) of every list, tuple or set literal in the package that spells out three or
    more of `names`."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel, lines = str(path.relative_to(PACKAGE)), path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not _chosen(rel, lines[node.lineno - 1]):
                found = {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}
                if len(found) >= 3:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(found)}"


def test_no_module_lists_the_policy_names_again():
    assert not list(_name_lists(set(policy_names())))


def test_no_module_lists_the_analysis_names_again():
    assert not list(_name_lists(set(analysis_names())))


# Where chainrt's own sources are (tests and documentation excepted): C/C++ and Python.
SOURCE_DIRS = ["model", "sched", "sim", "runtime", "rclcpp", "lame", "synth", "analysis", "bpf", "bench", "fuzz",
               "python/bindings", "python/chainrt", "scripts"]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".c", ".def", ".py"}
POLICIES_DEF = ROOT / "model/include/chainrt/model/policies.def"


def _names_on(line: str, names) -> set[str]:
    """The policy names written on `line` as words of their own (`fp` in `fp-mt` is not one)."""
    return {n for n in names if re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", line)}


def _text_lists(names) -> list[str]:
    """Every line of chainrt's sources but policies.def that names three or more policies: in
    code, a message or a comment alike (a message built from policies.def names none)."""
    found = []
    for d in SOURCE_DIRS:
        for f in sorted((ROOT / d).rglob("*")):
            rel = f.relative_to(ROOT)
            if (not f.is_file() or f.suffix not in SOURCE_SUFFIXES or f == POLICIES_DEF or "__pycache__" in rel.parts
                    or any(p in ("tests", "test") for p in rel.parts[:-1]) or f.name.startswith("test_")):
                continue
            in_pkg = str(f.relative_to(PACKAGE)) if f.is_relative_to(PACKAGE) else str(rel)
            for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                if len(_names_on(line, names)) >= 3 and not _chosen(in_pkg, line):
                    found.append(f"{rel}:{i}: {line.strip()}")
    return found


def test_no_source_writes_a_list_of_policy_names():
    """policies.def is the one list of policies: messages are built from it (policy_list() in C++,
    chainrt._core.policies() in Python), and the analyses declare which policies they are the
    default for themselves (ResponseTimeAnalysis::default_for)."""
    found = _text_lists(policy_names())
    assert not found, "policy names listed outside policies.def:\n" + "\n".join(found)


def test_the_text_check_sees_a_list():
    names = policy_names()
    assert _names_on('"unknown policy (ros-default, picas, fp, edf, mixed, lame)"', names) == set(names)
    assert _names_on("fp-mt, picas-st and edf-mt", names) == set()
    assert len(_names_on("// fp, picas and edf order by a job-level fixed priority", names)) == 3
