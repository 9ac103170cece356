"""Under localhost discovery no chainrt command binds a socket beyond loopback: `ss` is sampled
while discover, profile (listening, and with --run), a listening report and the reference-system
bench run, and every socket of the command's process and of its children must be bound to
127.0.0.1 (as `chainrt run`'s are, test_fastdds.py). Runs in the private network namespace the
ROS 2 tests use; needs rclpy, ss and the built runtime."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chainrt import runtime

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "tests/cpp/runtime/data/two_processes.yaml"
GRAPH = REPO / "tests/python/ros_nodes/graph.py"


def _tree(pid: int) -> set[int]:
    """`pid` and its descendants, now."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        for t in os.listdir(f"/proc/{p}/task") if os.path.isdir(f"/proc/{p}/task") else []:
            try:
                todo += [int(k) for k in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
            except OSError:
                pass
    return out


def _sockets_of(pids: set[int]) -> list[tuple[str, int]]:
    """(local address:port, pid) of every TCP/UDP socket that one of `pids` holds."""
    out = subprocess.run(["ss", "-tuanpH"], capture_output=True, text=True, check=False).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 7:
            continue
        for pid in (int(x) for x in re.findall(r"pid=(\d+)", line)):
            if pid in pids:
                rows.append((f[4], pid))
    return rows


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(170 + (os.getpid() % 30)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    for k in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE", "ROS_LOCALHOST_ONLY"):
        env.pop(k, None)
    return env


def _bound_while_running(argv: list[str], env: dict, cwd: Path, timeout: float = 240):
    """Runs chainrt `argv`, sampling the sockets of its process tree; (result, sockets seen)."""
    proc = subprocess.Popen([sys.executable, "-m", "chainrt.cli", *argv], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[tuple[str, int]] = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            seen.extend(_sockets_of(_tree(proc.pid)))
            time.sleep(0.1)

    t = threading.Thread(target=sample)
    t.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        done.set()
        t.join()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (proc.returncode, out, err), seen


def _needs(*what: str) -> None:
    if not shutil.which("ss"):
        pytest.skip("ss (iproute2) is not installed")
    if "rclpy" in what:
        pytest.importorskip("rclpy")
    if "runtime" in what:
        try:
            runtime.find_binary()
        except runtime.RuntimeNotFound as e:
            pytest.skip(str(e))


def _assert_loopback(seen) -> None:
    assert seen, "no socket of the command was seen"
    beyond = sorted({a for a, _ in seen if not a.startswith("127.")})
    assert not beyond, f"sockets bound beyond loopback: {beyond}"


def test_discover_binds_loopback_only_and_still_sees_the_graph(tmp_path):
    _needs("rclpy")
    env = _env()
    app = subprocess.Popen([sys.executable, str(GRAPH), "front"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        (rc, out, err), seen = _bound_while_running(
            ["discover", "--duration", "2s", "--settle", "1s", "--expect-nodes", "2"], env, tmp_path)
    finally:
        app.terminate()
        app.wait(10)
    assert rc == 0, err
    assert "/scan" in out  # the graph is still discovered over loopback
    _assert_loopback(seen)


def test_profile_listening_binds_loopback_only(tmp_path):
    _needs("rclpy")
    (rc, _, err), seen = _bound_while_running(["profile", str(MODEL), "--duration", "1s"], _env(), tmp_path)
    assert rc == 1 and "monitoring message" in err, err  # nothing to listen to; the sockets were open
    _assert_loopback(seen)


def test_a_listening_report_binds_loopback_only(tmp_path):
    _needs("rclpy")
    (rc, _, err), seen = _bound_while_running(["report", str(MODEL), "--duration", "1s", "-o",
                                               str(tmp_path / "r")], _env(), tmp_path)
    assert (tmp_path / "r").is_dir(), err
    _assert_loopback(seen)


def test_profile_run_binds_loopback_only_and_measures(tmp_path):
    _needs("rclpy", "runtime")
    (rc, out, err), seen = _bound_while_running(["profile", str(MODEL), "--run", "--duration", "2s",
                                                 "--warmup", "1s", "--json"], _env(), tmp_path)
    assert rc == 0, err
    assert '"messages"' in out
    _assert_loopback(seen)


def test_the_reference_system_bench_binds_loopback_only(tmp_path):
    _needs("runtime")
    from chainrt.reference_system import runner
    try:
        runner.find_binary()
    except runner.WorkloadNotFound as e:
        pytest.skip(str(e))
    (rc, _, err), seen = _bound_while_running(
        ["bench", "reference-system", "--configs", "edf-st", "--repeat", "1", "--duration", "2s", "--warmup",
         "1s", "--no-plots", "--no-sim", "--no-analysis", "--out", str(tmp_path / "rs")], _env(), tmp_path)
    assert rc == 0, err
    _assert_loopback(seen)
