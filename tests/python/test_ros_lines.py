"""What differs between the ROS 2 lines chainrt builds on (Kilted, Jazzy), checked against the
real ROS 2 of the virtualenv running the tests: scripts/test runs this file with each line's
virtualenv (docs/ros_lines.md).

- rcl's timer overrun rule: a timer taken exactly on a period instant after an overrun. The
  simulator's default (sched::TimerRule::Rcl9, `--timer-rule rcl9`) is what the rcl of both
  lines does: that instant is skipped; rcl 5/6 (Humble, Iron, `rcl5`) run it at once.
- the build and the virtualenv are of one line (the build records its line in
  chainrt_ros2_env.json), so chainrt-run and chainrt.rclpy run on the rcl the tests import.
- rclpy's timer API: Kilted's rclpy hands a TimerInfo to a timer callback that asks for one,
  Jazzy's has none; chainrt.rclpy runs timers on both (test_rclpy_executor.py covers the rest).
- Fast DDS (3 on Kilted, 2.14 on Jazzy): the profile chainrt generates gives the participant's
  DDS threads the executor's SCHED_FIFO priority and pinning (CROS-RT P4) on both.
The real-ROS parts run in a subprocess with their own ROS_DOMAIN_ID, localhost only."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chainrt import _build
from chainrt.simulation import simulate
from chainrt.model import load_model_from_string

rclpy = pytest.importorskip("rclpy")

MS = 1_000_000

# `hog` (higher priority) holds the only thread until exactly 200 ms, so `tick` (100 ms),
# released at 0, is taken exactly on its grid instant 200 after an overrun.
HOG_AND_TICK = """
chainrt: 1
name: exact_grid
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, threads: 1, policy: fp}]
nodes: [{name: n, executor: e}]
callbacks:
  - {name: hog, kind: timer, node: n, period: 1000ms, wcet: 200ms, priority: 9}
  - {name: tick, kind: timer, node: n, period: 100ms, wcet: 1ms, priority: 1}
chains:
  - {name: T, callbacks: [tick], deadline: 100ms}
"""

# Real rcl (through rclpy, on ROS time so that the instants are exact): a 100 ms timer created at
# 1 s is first due at 1.1 s; it is taken exactly at 1.2 s, its next grid instant. Prints the
# time until its next call right after the take, and whether it is ready then.
RCL_TIMER = r"""
import json, rclpy
from rclpy.clock import Clock, ClockType
from rclpy.time import Time
rclpy.init()
node = rclpy.create_node("timer_rule_probe")
clock = Clock(clock_type=ClockType.ROS_TIME)
clock._set_ros_time_is_active(True)
at = lambda ns: clock.set_ros_time_override(Time(nanoseconds=ns, clock_type=ClockType.ROS_TIME))
at(1_000_000_000)
timer = node.create_timer(0.1, lambda: None, clock=clock)
first = timer.time_until_next_call()
at(1_200_000_000)
with timer.handle:
    timer.handle.call_timer()
print(json.dumps({"first_ns": first, "next_in_ns": timer.time_until_next_call(), "ready": timer.is_ready()}))
node.destroy_node()
rclpy.shutdown()
"""


def _ros_env() -> dict:
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(170 + os.getpid() % 30)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return env


def _tick_releases(timer_rule: str) -> list[int]:
    model = load_model_from_string(HOG_AND_TICK, "<exact_grid>")
    _, trace = simulate(model, 399 * MS, trace=True, timer_rule=timer_rule)
    tick = trace["callbacks"].index("tick")
    return [e[2] for e in trace["events"] if e[1] == tick]


def test_simulated_exact_grid_instant_differs_between_the_rules():
    # (release of each tick instance) rcl9: 200 is skipped; rcl5: 200 runs at once
    assert _tick_releases("rcl9") == [0, 300 * MS]
    assert _tick_releases("rcl5") == [0, 200 * MS, 300 * MS]


def test_rcl_of_this_line_skips_the_exact_grid_instant_as_the_simulators_default():
    out = subprocess.run([sys.executable, "-c", RCL_TIMER], capture_output=True, text=True, env=_ros_env(),
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    real = json.loads(out.stdout.strip().splitlines()[-1])
    assert real["first_ns"] == 100 * MS
    # the simulator's default rule gives the tick after the one taken at 200 ms at 300 ms
    sim_next = _tick_releases("rcl9")[1] - 200 * MS
    assert (real["next_in_ns"], real["ready"]) == (sim_next, False), real


def test_build_and_virtualenv_are_of_one_line():
    build = _build.build_dir()
    env_file = build / "chainrt_ros2_env.json" if build else None
    if env_file is None or not env_file.is_file():
        pytest.skip("no C++ build with ROS 2 for this virtualenv (run scripts/setup)")
    recorded = json.loads(env_file.read_text())
    import importlib.metadata as md
    lines = {d.metadata["Name"].split("-")[1] for d in md.distributions()
             if (d.metadata["Name"] or "").startswith("ros-") and d.metadata["Name"].count("-") >= 2
             and d.metadata["Name"].endswith("-rclpy")}
    if recorded.get("kind") == "wheels":
        assert lines == {recorded["distro"]}, (lines, recorded)
    assert recorded["distro"] in ("kilted", "jazzy")


def test_chainrt_rclpy_runs_a_timer_with_this_lines_timer_api():
    """A timer callback asking for a TimerInfo gets one where rclpy has it (Kilted); a plain timer
    callback runs on every line."""
    from rclpy.context import Context

    from chainrt.rclpy import ChainExecutor
    try:
        from rclpy.timer import TimerInfo
    except ImportError:
        TimerInfo = None
    os.environ.update({k: v for k, v in _ros_env().items() if k.startswith("ROS_")})
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        node = rclpy.create_node("timer_api", context=ctx)
        got = []
        if TimerInfo is not None:
            def cb(info: TimerInfo) -> None:
                got.append(info.expected_call_time.nanoseconds)
        else:
            def cb() -> None:
                got.append(node.get_clock().now().nanoseconds)
        node.create_timer(0.01, cb)
        ex = ChainExecutor(context=ctx, report=False)
        ex.add_node(node)
        for _ in range(50):
            ex.spin_once(timeout_sec=0.1)
            if len(got) >= 3:
                break
        ex.shutdown()
        assert len(got) >= 3 and got == sorted(got)
        if TimerInfo is not None:  # expected call times lie on the timer's 10 ms grid
            assert all((b - a) % (10 * MS) == 0 for a, b in zip(got, got[1:]))
    finally:
        rclpy.shutdown(context=ctx)


# An rclpy participant with chainrt's generated profile for a one-thread executor at SCHED_FIFO
# 60 on core 0: prints its threads' (name, policy, priority, cores) and what it logged.
DDS_THREADS = r"""
import json, os, sys
from types import SimpleNamespace as NS
from chainrt import fastdds
thread = NS(fifo_priority=60, cores=[0], name="t0")
model = NS(name="lines", topics=[NS(size=4096)],
           executors=[NS(name="e", host="h", process="p", priority=None, threads=[thread], thread_classes=[])])
path = sys.argv[1]
open(path, "w").write(fastdds.profiles_xml(model, "p", domain_id=int(os.environ["ROS_DOMAIN_ID"])))
os.environ.update(fastdds.profile_environment(path))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "SYSTEM_DEFAULT"
import rclpy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("lines_dds")
pub = node.create_publisher(String, "lines_dds", 10)
got = []
node.create_subscription(String, "lines_dds", got.append, 10)
for _ in range(100):
    pub.publish(String(data="x"))
    rclpy.spin_once(node, timeout_sec=0.05)
    if got:
        break
rows = []
for tid in os.listdir(f"/proc/{os.getpid()}/task"):
    name = open(f"/proc/{os.getpid()}/task/{tid}/comm").read().strip()
    t = int(tid)
    rows.append([name, os.sched_getscheduler(t), os.sched_getparam(t).sched_priority, sorted(os.sched_getaffinity(t))])
print(json.dumps({"received": bool(got), "threads": rows}))
rclpy.shutdown()
"""


def test_generated_profile_sets_the_dds_threads_of_this_lines_fast_dds(tmp_path):
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (PermissionError, OSError):
        pytest.skip("SCHED_FIFO is not permitted here")
    env = _ros_env()
    for v in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE"):
        env.pop(v, None)
    out = subprocess.run([sys.executable, "-c", DDS_THREADS, str(tmp_path / "p.xml")], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["received"]
    dds = [t for t in res["threads"] if t[0].startswith(("dds.ev.", "dds.udp.", "dds.asyn."))]
    assert {t[0].split(".")[1] for t in dds} >= {"ev", "udp", "asyn"}, res["threads"]
    assert all(t[1:] == [os.SCHED_FIFO, 60, [0]] for t in dds), dds
