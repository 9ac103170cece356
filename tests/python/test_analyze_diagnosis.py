"""`chainrt analyze` on a chain without a bound names the term that leaves it unbounded (the
blocking callback, the thread, the overload) and the smallest change that gives a bound, each
change confirmed by the analysis: a user's robot whose camera chain shares its one thread with a
slow logger."""

from __future__ import annotations

import json
import subprocess
import sys

from chainrt import _core, diagnose
from chainrt.model import load_model_from_string

ROBOT = """
chainrt: 1
hosts: [{name: robot, cores: 2}]
executors:
  - {name: main, host: robot, policy: fp, threads: [{name: t0, cores: [0], priority: 50}]}
nodes: [{name: camera, executor: main}, {name: detector, executor: main}, {name: planner, executor: main},
        {name: logger, executor: main}, {name: uploader, executor: main}]
topics: [{name: image, size: 100KiB}, {name: objects}, {name: log}]
callbacks:
  - {name: camera/timer, kind: timer, node: camera, period: 33333us, wcet: 500us, priority: 10, publishes: [image]}
  - {name: detector/image, kind: subscription, node: detector, topic: image, wcet: 8ms, priority: 11, publishes: [objects]}
  - {name: planner/objects, kind: subscription, node: planner, topic: objects, wcet: 4ms, priority: 12}
  - {name: logger/timer, kind: timer, node: logger, period: 200ms, wcet: 25ms, priority: 1, publishes: [log]}
  - {name: uploader/log, kind: subscription, node: uploader, topic: log, wcet: 15ms, priority: 2}
chains:
  - {name: camera_command, callbacks: [camera/timer, detector/image, planner/objects], deadline: 33333us}
  - {name: logging, callbacks: [logger/timer, uploader/log], deadline: 200ms, class: be}
"""


def test_the_blocking_logger_is_named_with_the_changes_that_bound_the_camera_chain():
    m = load_model_from_string(ROBOT, "robot.yaml")
    r = _core._analyze(m, "fp-mt")
    assert r["chains"]["camera_command"]["wcrt_bound_ns"] is None
    d = diagnose.explain(m, "fp-mt", r)["camera_command"]
    assert "logger/timer" in d["cause"] and "blocks it" in d["cause"]
    assert "executor 'main'" in d["cause"]
    fixes = " | ".join(d["fixes"])
    assert "'logger/timer' at most" in fixes
    assert "thread of its own" in fixes
    # every fix the diagnosis names gives the chain a bound: the largest logger WCET it names
    w_ms = float(fixes.split("'logger/timer' at most ")[1].split(" ms")[0])
    ok = diagnose._with_wcet(m, "logger/timer", int(round(w_ms * 1e6)))
    assert _core._analyze(ok, "fp-mt")["chains"]["camera_command"]["wcrt_bound_ns"] is not None
    too_much = diagnose._with_wcet(m, "logger/timer", int(round(w_ms * 1e6)) + 1_000)
    assert _core._analyze(too_much, "fp-mt")["chains"]["camera_command"]["wcrt_bound_ns"] is None
    own = diagnose._on_own_thread(m, "logger/timer")
    assert _core._analyze(own, "fp-mt")["chains"]["camera_command"]["wcrt_bound_ns"] is not None


def test_overload_and_own_work_are_named():
    heavy = ROBOT.replace("wcet: 8ms, priority: 11", "wcet: 40ms, priority: 11")  # longer than the period
    m = load_model_from_string(heavy, "robot.yaml")
    d = diagnose.explain(m, "fp-mt", _core._analyze(m, "fp-mt"))["camera_command"]
    assert "its own callbacks take" in d["cause"]
    busy = ROBOT.replace("period: 200ms, wcet: 25ms", "period: 40ms, wcet: 25ms")
    m = load_model_from_string(busy, "robot.yaml")
    d = diagnose.explain(m, "fp-mt", _core._analyze(m, "fp-mt"))["camera_command"]
    assert "overload" in d["cause"]


def test_analyze_prints_the_cause_and_json_carries_it(tmp_path):
    path = tmp_path / "robot.yaml"
    path.write_text(ROBOT)
    out = subprocess.run([sys.executable, "-m", "chainrt.cli", "analyze", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    assert "camera_command: unbounded because callback 'logger/timer'" in out.stdout
    assert "a bound with: 'logger/timer' at most" in out.stdout
    js = subprocess.run([sys.executable, "-m", "chainrt.cli", "analyze", str(path), "--json"], capture_output=True,
                        text=True, timeout=120)
    d = json.loads(js.stdout)["diagnosis"]["camera_command"]
    assert d["fixes"] and "logger/timer" in d["cause"]


def test_a_model_above_the_diagnosis_limit_is_not_diagnosed_and_the_output_says_so(monkeypatch):
    from chainrt.commands.analyze import format_table
    m = load_model_from_string(ROBOT, "robot.yaml")
    r = _core._analyze(m, "fp-mt")
    assert diagnose.not_diagnosed(m, r) is None  # 5 callbacks: diagnosed
    monkeypatch.setattr(diagnose, "MAX_CALLBACKS", 4)
    assert diagnose.explain(m, "fp-mt", r) == {}
    note = diagnose.not_diagnosed(m, r)
    assert note and "not diagnosed: the model has 5 callbacks" in note and "up to 4 callbacks" in note
    r["diagnosis_note"] = note
    assert note in format_table(r)
