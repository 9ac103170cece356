"""Marks in code on chainrt.rclpy's ChainExecutor beside a model file and their edges (the
dispatch order of marks without a file, against the YAML's, is in test_dispatch_traces.py):
the file wins where both speak, a marked entity the file lacks joins the model, a callback
group's thread, a callback without a WCET, marks while spinning."""

from __future__ import annotations

import os

import pytest

from rosutil import rclpy_context

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("chainrt._rclpy_exec", reason="chainrt.rclpy needs the ROS 2 build (scripts/setup)")

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from chainrt.model import load_model_from_string  # noqa: E402
from chainrt.rclpy import ChainExecutor  # noqa: E402

FILE = """chainrt: 1
name: filed
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: fp, threads: 1}]
nodes: [{name: src, executor: e}, {name: work, executor: e}]
topics: [{name: ta}]
callbacks:
  - {name: A, kind: timer, node: src, period: 100ms, wcet: 1ms, publishes: [ta], priority: 2}
  - {name: a1, kind: subscription, node: work, topic: ta, wcet: 1ms}
chains:
  - {name: CA, callbacks: [A, a1], deadline: 50ms}
"""


@pytest.fixture
def context():
    yield from rclpy_context(60 + os.getpid() % 30)


def test_the_model_file_wins_where_both_speak(context, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(FILE)
    src, work = Node("src", context=context), Node("work", context=context)
    a = src.create_timer(0.1, lambda: None)
    a1 = work.create_subscription(String, "ta", lambda _m: None, 10)
    extra = work.create_timer(0.5, lambda: None)
    ex = ChainExecutor(model=str(path), context=context, report=False)
    try:
        ex.set_callback_priority(a, 7)                       # the file says 2
        ex.set_callback_priority(a1, 9)                      # the file says none
        ex.mark(extra, name="housekeeping", priority=1, wcet=0.001)
        ex.add_chain("CA", [a, a1], deadline=0.01)           # the file's CA wins
        ex.add_node(src)
        ex.add_node(work)
        m = load_model_from_string(ex.model_yaml())
        cbs = {c.name: c for c in m.callbacks}
        assert cbs["A"].priority == 2 and cbs["a1"].priority == 9
        assert cbs["housekeeping"].priority == 1 and cbs["housekeeping"].period == 500_000_000
        assert {c.name: c.deadline for c in m.chains} == {"CA": 50_000_000}
        ex.spin_once(timeout_sec=0.01)
        assert ex.unmatched == []                            # the marked timer is a model callback
        assert len(ex.mark_notes) == 2 and "'A'" in ex.mark_notes[0] and "CA" in ex.mark_notes[1]
    finally:
        ex.shutdown()


def test_group_thread_missing_wcet_and_marks_while_spinning(context):
    node = Node("grouped", context=context)
    fast = MutuallyExclusiveCallbackGroup()
    t1 = node.create_timer(0.02, lambda: None, callback_group=fast)
    t2 = node.create_timer(0.04, lambda: None)
    ex = ChainExecutor(context=context, report=False)
    try:
        ex.set_callback_group_thread(fast, "fast", cores=[0], fifo_priority=60)
        ex.mark(t1, name="fast_tick", priority=5, wcet=0.001)
        ex.add_node(node)
        with pytest.raises(ValueError, match="grouped/timer@40ms"):
            ex.model_yaml()
        ex.mark(t2, wcet=0.002)
        m = load_model_from_string(ex.model_yaml())
        [th] = m.executors[0].threads
        assert (th.name, list(th.cores), th.fifo_priority) == ("fast", [0], 60)
        cbs = {c.name: c for c in m.callbacks}
        assert list(cbs["fast_tick"].affinity) == ["fast"] and cbs["fast_tick"].group == "grouped/group1"
        assert list(cbs["grouped/timer@40ms"].affinity) == []
        ex._spinning = True                                  # as while spin() runs on another thread
        with pytest.raises(RuntimeError, match="before spin"):
            ex.set_callback_priority(t2, 1)
        ex._spinning = False
    finally:
        ex.shutdown()
