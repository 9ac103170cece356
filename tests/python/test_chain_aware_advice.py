"""The workflow does not stop at ROS 2's default policy: where every executor runs ros-default and a
chain misses its deadline or has no bound, `chainrt analyze` (and the report) say how to choose a
chain-aware policy; a report whose chains have no bound does not call them "within" one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt.report import model_report

MODEL = """chainrt: 1
name: advice
hosts: [{{name: h, cores: 1}}]
executors: [{{name: e, host: h, policy: {policy}, threads: [{{name: t0, cores: [0]}}]}}]
nodes: [{{name: a, executor: e}}, {{name: b, executor: e}}]
topics: [{{name: x, size: 64B}}]
callbacks:
  - {{name: cam, kind: timer, node: a, period: 10ms, wcet: 2ms, priority: 2, publishes: [x]}}
  - {{name: det, kind: subscription, node: a, topic: x, wcet: {det}, priority: 3}}
  - {{name: log, kind: timer, node: b, period: 100ms, wcet: {log}, priority: 1}}
chains:
  - {{name: camera, callbacks: [cam, det], deadline: 10ms, priority: 2}}
  - {{name: logger, callbacks: [log], deadline: 100ms, priority: 1}}
"""


def analyze(tmp_path: Path, *extra: str, **fields) -> subprocess.CompletedProcess:
    path = tmp_path / "m.yaml"
    path.write_text(MODEL.format(**{"policy": "ros-default", "det": "3ms", "log": "30ms", **fields}))
    return subprocess.run([sys.executable, "-m", "chainrt.cli", "analyze", str(path), *extra],
                          capture_output=True, text=True, timeout=60)


def test_analyze_tells_a_ros_default_user_how_to_choose_a_chain_aware_policy(tmp_path):
    r = analyze(tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    advice = [line for line in r.stdout.splitlines() if line.strip().startswith("advice:")]
    assert len(advice) == 1, r.stdout
    assert "ros-default" in advice[0] and "chainrt synthesize" in advice[0] and str(tmp_path / "m.yaml") in advice[0]
    assert "fp, edf or picas" in advice[0] and "priority" in advice[0]
    js = json.loads(analyze(tmp_path, "--json").stdout)
    assert "chainrt synthesize" in js["advice"]


@pytest.mark.parametrize("fields", [{"policy": "fp"}, {"log": "1ms", "det": "1ms"}])
def test_no_policy_advice_under_a_chain_aware_policy_or_when_every_chain_is_met(tmp_path, fields):
    r = analyze(tmp_path, "--json", **fields)
    assert r.returncode in (0, 2), r.stderr
    assert "advice" not in json.loads(r.stdout)


def _data(bounds: dict) -> dict:
    chains = {"high": {"wcrt_ns": 6_000_000, "mean_ns": 5_000_000, "p99_ns": 6_000_000, "instances": 100,
                       "deadline_misses": 0},
              "low": {"wcrt_ns": 27_000_000, "mean_ns": 26_000_000, "p99_ns": 27_000_000, "instances": 10,
                      "deadline_misses": 0}}
    return {"model": "m.yaml", "name": "m", "duration_ns": 2_000_000_000, "policy": None, "when": "now",
            "measured": "monitor", "host": {"cpus": 2, "load_average": [0.5]}, "chains": ["high", "low"],
            "model_chains": {"high": {"period_ns": 20_000_000, "deadline_ns": 20_000_000, "callbacks": ["a"]},
                             "low": {"period_ns": 200_000_000, "deadline_ns": 200_000_000, "callbacks": ["c"]}},
            "wcet": {"a": 2_000_000, "c": 10_000_000}, "notes": [],
            "analysis": {"analysis": "ros-default", "chains": {c: {"wcrt_bound_ns": b} for c, b in bounds.items()}},
            "simulation": {"chains": {c: {"wcrt_ns": 30_000_000, "mean_ns": 1, "instances": 5} for c in chains}},
            "run": {"run_id": "r", "warnings": [], "chains": chains, "samples_ns": {}, "callbacks": {},
                    "messages": 3, "listened_ns": 2_000_000_000, "executors": ["e"]},
            "verdict": None}


def test_a_report_says_what_is_true_when_no_chain_has_a_bound(tmp_path):
    text = model_report.render(_data({"high": None, "low": None}), {})
    assert "within its analysis bound" not in text
    assert "No chain has an analysis bound" in text
    text = model_report.render(_data({"high": None, "low": 40_000_000}), {})
    assert "within its analysis bound" not in text and "Without an analysis bound" in text and "high" in text
    # every chain bounded, simulated and measured: the old sentence is true and stays
    text = model_report.render(_data({"high": 10_000_000, "low": 40_000_000}), {})
    assert "measured worst case is within its analysis bound and its simulated worst case" in text


def test_the_report_repeats_the_policy_advice(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(MODEL.format(policy="ros-default", det="3ms", log="30ms"))
    data = model_report.collect(str(path), 200_000_000, run=False)
    assert any("chainrt synthesize" in n and "ros-default" in n for n in data["notes"]), data["notes"]
    path.write_text(MODEL.format(policy="fp", det="3ms", log="30ms"))
    assert not any("chainrt synthesize" in n for n in model_report.collect(str(path), 200_000_000, run=False)["notes"])
