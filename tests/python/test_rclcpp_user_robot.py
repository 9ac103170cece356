"""A user's own rclcpp robot (bench/rclcpp/chain_latency_bench.cpp, plain rclcpp nodes: camera
30 Hz -> detector -> planner, which calls the map server's service -> the response callback
publishes the command -> controller; beside it a 15 ms logger timer) goes through the documented
path with no hand edit and no hand bind():

    robot under ChainExecutor (no model, monitoring on)  ->  chainrt discover  ->  chainrt profile
    --write  ->  chainrt check / analyze  ->  robot under ChainExecutor(model, policy edf)

Every model callback binds to its rclcpp entity, the service and the client included (else the
executor refuses to start), and the chain from the camera to the controller is counted about once
per camera period. Counts only, no wall-clock number."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml

from rosutil import chainrt_cli, robot_env

from chainrt import _build

BUILD = _build.build_dir()
ROBOT = None if BUILD is None else BUILD / "bench" / "rclcpp" / "bench_rclcpp_chain_latency"

pytestmark = pytest.mark.skipif(ROBOT is None or not ROBOT.exists(),
                                reason="chainrt was built without rclcpp (no bench_rclcpp_chain_latency)")


def _start(env, seconds, *args):
    # at a real-time priority where the machine allows it, so that other load does not starve
    # the 30 Hz camera (discover measures the period the program has)
    rt = ["chrt", "-f", "10"] if os.geteuid() == 0 and shutil.which("chrt") else []
    p = subprocess.Popen([*rt, str(ROBOT), "chainrt", str(seconds), *args], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    assert line == "ready", (line, p.stderr.read() if p.poll() is not None else "")
    return p


def _stop(p) -> tuple[str, str]:
    if p.poll() is None:
        p.terminate()
    try:
        return p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()


def test_rclcpp_robot_from_discover_to_a_counted_chain_aware_run(tmp_path):
    env = robot_env(30 + os.getpid() % 25)
    model = tmp_path / "robot.yaml"
    # 1. the robot as a user first runs it: the ChainExecutor, no model, monitoring on
    robot = _start(env, 600, "--stats-period", "200")
    try:
        r = chainrt_cli(["discover", "--duration", "6s", "--settle", "10s", "--expect-nodes", "6", "-o", str(model)], env)
        assert r.returncode == 0, r.stderr
        data = yaml.safe_load(model.read_text())
        cbs = {c["name"]: c for c in data["callbacks"]}
        server = next(c for c in cbs.values() if c["kind"] == "service")
        client = next(c for c in cbs.values() if c["kind"] == "client")
        assert server["node"] == "map_server" and client["node"] == "planner", model.read_text()
        cam = next(c for c in cbs.values() if c["node"] == "camera")
        control = next(c for c in data["chains"] if c["callbacks"][0] == cam["name"])
        assert control["callbacks"][-4:-1] == [next(c["name"] for c in cbs.values() if c.get("calls")),
                                               server["name"], client["name"]], data["chains"]
        # 2. execution times from the same running system's monitoring
        r = chainrt_cli(["profile", str(model), "--duration", "6s", "--write"], env)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        _stop(robot)
    r = chainrt_cli(["check", str(model)], env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = chainrt_cli(["analyze", str(model), "--policy", "edf", "--json"], env)
    assert r.returncode in (0, 2), r.stderr
    # 3. the robot under its discovered model, unedited, EDF: every model callback binds (the
    #    service and the client too), and the camera's chain is counted
    seconds = 8
    robot = _start(env, seconds, "--model", str(model), "--policy", "edf")
    try:
        out, err = robot.communicate(timeout=120)
    finally:
        _stop(robot)
    assert robot.returncode == 0, err
    result = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    report = result["report"]
    assert report["policy"] == "edf", report.get("policy")
    # the real entities without a model callback: only the logger's timer, which publishes nothing
    # and so cannot be discovered; every entity of the chain is bound
    assert set(report.get("unmatched", [])) <= {"logger/timer@15ms"}, report.get("unmatched")
    counted = report["chains"][control["name"]]["instances"]
    expected = seconds * 30
    assert counted >= 0.8 * expected, (counted, expected, report["chains"])
