"""kill -9 of any chainrt process — a `chainrt run` child, the `chainrt run` parent, `chainrt
profile --run`, `chainrt bench reference-system` — leaves the process table, /dev/shm, /tmp and
the output folder's parent exactly as they were before the command started. Each scenario
(leftovers_scenario.py) runs in fresh PID, network and mount namespaces with private tmpfs
mounts, so the listings hold only what the scenario started and the comparison is exact even
while other programs run on the machine. Needs root (namespaces) and the built runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt import runtime

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "needs root (PID, network and mount namespaces)"
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "needs unshare (util-linux) and ip (iproute2)"
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--net", "--mount", "true"],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"namespaces unavailable: {r.stderr.strip()}"


def _scenario(kind: str) -> dict:
    why = _can_unshare()
    if why:
        pytest.skip(why)
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    script = ("mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /tmp && "
              "mount -t tmpfs tmpfs /mnt && ip link set lo up && exec \"$@\"")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--net", "--mount", "--propagation", "private",
                        "bash", "-c", script, "scenario", sys.executable, str(HERE / "leftovers_scenario.py"), kind],
                       capture_output=True, text=True, timeout=400, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _assert_nothing_left(res: dict) -> None:
    before, after = res["before"], res["after"]
    for key in before:
        gone, new = sorted(set(before[key]) - set(after[key])), sorted(set(after[key]) - set(before[key]))
        assert not gone and not new, f"{key}: left behind {new}, removed {gone}; stderr: {res['stderr']}"


def test_kill9_of_a_run_child_leaves_nothing():
    res = _scenario("run-child")
    assert res["rc"] == 1  # the run noticed the failed process
    _assert_nothing_left(res)


def test_kill9_of_the_run_parent_leaves_nothing():
    _assert_nothing_left(_scenario("run-parent"))


def test_kill9_of_profile_run_leaves_nothing():
    pytest.importorskip("rclpy")
    _assert_nothing_left(_scenario("profile"))


def test_kill9_of_the_bench_leaves_nothing():
    from chainrt.reference_system import runner
    try:
        runner.find_binary()
    except runner.WorkloadNotFound as e:
        pytest.skip(str(e))
    _assert_nothing_left(_scenario("bench"))
