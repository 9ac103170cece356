"""One policy descriptor, one analysis registry: the Python package reads the executor
policies from the C++ descriptors (sched/policy.hpp, chainrt._core.policies()) and the analyses
from the registry (chainrt._core.analyses()); no module writes a list of their names again."""

from __future__ import annotations

import argparse
import ast
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


# The demo's tour picks three policies to show (a selection, not the list of policies).
CHOSEN = {"commands/demo.py"}


def _name_lists(names: set[str]):
    """(file, line) of every list, tuple or set literal in the package that spells out three or
    more of `names`."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if str(path.relative_to(PACKAGE)) in CHOSEN:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                found = {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}
                if len(found) >= 3:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(found)}"


def test_no_module_lists_the_policy_names_again():
    assert not list(_name_lists(set(policy_names())))


def test_no_module_lists_the_analysis_names_again():
    assert not list(_name_lists(set(analysis_names())))
