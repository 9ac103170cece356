"""ROS 2's command line and launch on chainrt (scripts/ros2_tools, python/chainrt/ament.py and
launch.py, cmake/ChainrtAmentPrefix.cmake): the virtualenv's `ros2` finds chainrt's programs and
sees a running chainrt system; `ros2 launch` of the examples starts the container with the model
and two composable nodes, or the two-chain system, their monitoring appears, and Ctrl-C leaves no
process behind. Real ROS 2, a domain of its own, localhost discovery."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainrt import _build, ament

ROOT = Path(__file__).resolve().parents[2]
ROS2 = Path(sys.prefix) / "bin" / "ros2"
DEMO_PREFIX = "examples/rclcpp_components/install"  # <build>/..., built for test_rclcpp_container


def test_ros2_environment_keeps_what_is_named_and_adds_this_ros2_and_chainrt(monkeypatch, tmp_path):
    recorded = {"AMENT_PREFIX_PATH": f"/rclcpp{os.pathsep}/venv", "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    monkeypatch.setattr(ament, "_recorded_environment", lambda: dict(recorded))
    monkeypatch.setattr(ament, "prefix", lambda: tmp_path)
    env = ament.ros2_environment({"AMENT_PREFIX_PATH": f"/ws{os.pathsep}/venv", "RMW_IMPLEMENTATION": "x"})
    paths = env["AMENT_PREFIX_PATH"].split(os.pathsep)
    assert paths[:3] == ["/ws", "/venv", "/rclcpp"] and paths[-1] == str(tmp_path)
    assert len(paths) == len(set(paths))
    assert env["RMW_IMPLEMENTATION"] == "x"  # a user's choice stays
    assert ament.ros2_environment({})["RMW_IMPLEMENTATION"] == "rmw_fastrtps_cpp"


def _need_ros2():
    if not ROS2.is_file():
        pytest.skip(f"no {ROS2}: ROS 2's command line is not installed here (scripts/setup installs it)")


def _env(extra_prefix=None):
    env = dict(os.environ, ROS_DOMAIN_ID=str(5 + os.getpid() % 10), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    if extra_prefix is not None:
        env["AMENT_PREFIX_PATH"] = os.pathsep.join(p for p in (str(extra_prefix), env.get("AMENT_PREFIX_PATH")) if p)
    return env


def _ros2(args, env, timeout=60):
    return subprocess.run([str(ROS2), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _until(what, probe, timeout=60.0):
    """Polls `probe` (returning a str) until `what(out)`; returns the last output."""
    end = time.monotonic() + timeout
    out = ""
    while time.monotonic() < end:
        out = probe()
        if what(out):
            return out
        time.sleep(0.5)
    return out


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for this purpose (its parent has not reaped it yet)
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class Launch:
    """`ros2 launch ARGS` in a process group of its own, output to a file."""

    def __init__(self, args, env, log):
        self.log = log
        with open(log, "w") as f:
            self.proc = subprocess.Popen([str(ROS2), "launch", *args], env=env, stdout=f, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def output(self):
        return self.log.read_text()

    def started_pids(self):
        return [int(p) for p in re.findall(r"process started with pid \[(\d+)\]", self.output())]

    def interrupt(self):
        """Ctrl-C: SIGINT to the launch process only, as a terminal's would reach it first."""
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            return None

    def kill_leftovers(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def group_alive(self):
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except ProcessLookupError:
            return False


def _interrupt_and_check_nothing_left(launch):
    pids = launch.started_pids()
    assert pids, launch.output()
    rc = launch.interrupt()
    assert rc is not None, "ros2 launch did not end on SIGINT:\n" + launch.output()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (launch.group_alive() or any(_alive(p) for p in pids)):
        time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    assert not left and not launch.group_alive(), f"left behind: {left}\n{launch.output()}"
    assert "Traceback" not in launch.output(), launch.output()


def _echo_stats(env):
    return _ros2(["topic", "echo", "--once", "--no-daemon", "--full-length", "/chainrt/chain_stats"], env,
                 timeout=30).stdout


def _assert_typed(echoed):
    """`ros2 topic echo` printed a chainrt_msgs/msg/ChainStats (its fields, not a JSON string)."""
    for field in ("stamp:", "run:", "  run_id:", "  policy:", "seq:", "chains:", "  verdict:", "callbacks:",
                  "  cpu_max_ns:", "  start_ns:"):
        assert f"\n{field}" in "\n" + echoed, (field, echoed)
    assert "\ndata:" not in "\n" + echoed, echoed


def test_ros2_topic_echo_prints_the_typed_message_of_chainrt_run(tmp_path):
    """`chainrt run --stats-period` publishes chainrt_msgs/msg/ChainStats: `ros2 topic echo`
    prints it, and `ros2 topic info` names the type."""
    _need_ros2()
    env = _env()
    log = open(tmp_path / "run.log", "w")
    run = subprocess.Popen([str(Path(sys.prefix) / "bin" / "chainrt"), "run", str(ROOT / "examples" / "two_chains.yaml"),
                            "--duration", "120s", "--warmup", "0s", "--stats-period", "300ms", "--no-compare"],
                           env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        stats = _until(lambda o: "high" in o and "low" in o, lambda: _echo_stats(env))
        assert "high" in stats, stats + (tmp_path / "run.log").read_text()
        _assert_typed(stats)
        info = _until(lambda o: "Type:" in o,
                      lambda: _ros2(["topic", "info", "--no-daemon", "--spin-time", "3", "/chainrt/chain_stats"],
                                    env).stdout)
        assert "chainrt_msgs/msg/ChainStats" in info, info
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        log.close()


def test_ros2_run_finds_chainrt_programs():
    _need_ros2()
    env = _env()
    out = _ros2(["pkg", "executables", "chainrt"], env)
    assert out.returncode == 0, out.stderr
    assert "chainrt chainrt_component_container" in out.stdout and "chainrt chainrt-run" in out.stdout
    # ros2 run starts the build's container: a bad model ends it with its one-line error
    bad = _ros2(["run", "chainrt", "chainrt_component_container", "--ros-args", "-p",
                 "chainrt.model:=/nonexistent/system.yaml"], env)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "chainrt_component_container:" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("executor", ["runtime", "rclpy"])
def test_launch_two_chains_is_seen_by_ros2_and_ends_on_ctrl_c(tmp_path, executor):
    """The model's chains on chainrt-run, or the rclpy nodes of examples/rclpy under chainrt.rclpy's
    ChainExecutor: the same nodes, topics and chains either way."""
    _need_ros2()
    env = _env()
    launch = Launch([str(ROOT / "examples" / "two_chains.launch.py"), f"executor:={executor}"], env,
                    tmp_path / "launch.log")
    try:
        nodes = _until(lambda o: all(n in o for n in ("/hi_sensor", "/hi_control", "/lo_sensor", "/lo_logger")),
                       lambda: _ros2(["node", "list", "--no-daemon"], env).stdout)
        assert "/hi_sensor" in nodes and "/lo_logger" in nodes, nodes + launch.output()
        topics = _until(lambda o: "/hi_data" in o and "/chainrt/chain_stats" in o,
                        lambda: _ros2(["topic", "list", "--no-daemon", "--spin-time", "2"], env).stdout)
        assert "/hi_data" in topics and "/chainrt/chain_stats" in topics, topics
        stats = _until(lambda o: "high" in o and "low" in o, lambda: _echo_stats(env))
        assert "high" in stats and "low" in stats, stats + launch.output()
        _assert_typed(stats)  # chainrt run's, or the rclpy ChainExecutor's
        _interrupt_and_check_nothing_left(launch)
    finally:
        launch.kill_leftovers()


@pytest.mark.parametrize("launch_file", ["components.launch.py", "components.launch.xml"])
def test_launch_container_loads_two_nodes_with_the_model_and_ends_on_ctrl_c(tmp_path, launch_file):
    _need_ros2()
    demo = _build.build_dir() / DEMO_PREFIX
    if not (demo / "share" / "chainrt_demo_components").is_dir():
        pytest.skip(f"no {demo}: build the target chainrt_demo_components (part of the rclcpp tests)")
    env = _env(extra_prefix=demo)
    launch = Launch(["chainrt_demo_components", launch_file], env, tmp_path / "launch.log")
    try:
        nodes = _until(lambda o: all(n in o for n in ("/container", "/sensor", "/filter")),
                       lambda: _ros2(["node", "list", "--no-daemon"], env).stdout)
        assert all(n in nodes for n in ("/container", "/sensor", "/filter")), nodes + launch.output()
        # the model's chain, measured by the container's executor
        stats = _until(lambda o: "sense_to_filter" in o, lambda: _echo_stats(env))
        assert "sense_to_filter" in stats, stats + launch.output()
        _assert_typed(stats)  # the rclcpp ChainExecutor's
        _interrupt_and_check_nothing_left(launch)
    finally:
        launch.kill_leftovers()


def _ros2_tools(venv, env_extra):
    env = {**os.environ, **env_extra}
    return subprocess.run([str(ROOT / "scripts" / "ros2_tools"), str(venv)], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_ros2_tools_redo_nothing_when_nothing_changed_and_say_why_they_skip(tmp_path):
    """scripts/setup runs scripts/ros2_tools every time: with the stamp of what it installed it
    installs nothing again (the launcher is written anew); without the sources it says why."""
    _need_ros2()
    stamp = Path(sys.prefix) / ".chainrt-ros2-tools"
    if not stamp.is_file():
        pytest.skip(f"{sys.prefix} has no stamp of scripts/ros2_tools (its ros2 came from elsewhere)")
    distro = json.loads((_build.build_dir() / "chainrt_ros2_env.json").read_text())["distro"]
    before = stamp.read_text()
    again = _ros2_tools(sys.prefix, {"CHAINRT_ROS_DISTRO": distro})
    assert again.returncode == 0 and again.stdout.strip().splitlines()[-1] == "ros2-tools: up to date", again
    assert stamp.read_text() == before and os.access(ROS2, os.X_OK)
    missing = _ros2_tools(tmp_path / "venv", {"CHAINRT_ROS_DISTRO": distro, "CHAINRT_ROS2_SRC": str(tmp_path / "none")})
    assert missing.returncode == 0, missing
    assert missing.stdout.strip() == f"ros2-tools: skipped: no ROS 2 sources at {tmp_path / 'none'} " \
                                     "(set CHAINRT_ROS2_SRC to the folder of the release tarballs)"
