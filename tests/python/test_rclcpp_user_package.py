"""A C++ user's own rclcpp package, built as docs/rclcpp.md says: chainrt installed into a prefix
(``cmake --install``), the ROS 2 environment chainrt's rclcpp was built in (the wheels' line:
``source .ros2/<distro>/install/setup.sh``), a CMake project with only ``find_package(chainrt)``
and ``find_package(rclcpp)`` and no C++ standard of its own (tests/cpp/rclcpp/user_package). Its
plain rclcpp program and its ChainExecutor program both build and run. The install writes
nothing into the checkout outside the build folder. Counts only, no wall-clock number."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from chainrt import _build

REPO = Path(__file__).resolve().parents[2]
BUILD = _build.build_dir()
PACKAGE = REPO / "tests" / "cpp" / "rclcpp" / "user_package"


def _checkout_state(exclude: Path) -> set[str]:
    """Every file of the checkout git reports (untracked and ignored ones too), but the build's
    and Python's caches (other tests may write those meanwhile)."""
    r = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rel = str(exclude.resolve().relative_to(REPO)) if exclude.resolve().is_relative_to(REPO) else None
    return {line for line in r.stdout.splitlines()
            if not (rel and line[3:].startswith(rel + "/")) and "__pycache__" not in line and ".pytest_cache" not in line}


def _ros_environment() -> dict[str, str]:
    """The environment of a user's shell that builds against chainrt's ROS 2: for the wheels, the
    rclcpp prefix's setup.sh sourced (docs/rclcpp.md); a sourced ROS 2 is already in os.environ."""
    info = json.loads((BUILD / "chainrt_ros2_env.json").read_text())
    env = dict(os.environ)
    if info["kind"] != "wheels":
        return env
    setup = REPO / ".ros2" / info["distro"] / "install" / "setup.sh"
    if not setup.is_file():
        pytest.skip(f"no {setup} (scripts/setup builds rclcpp there)")
    env.pop("LDFLAGS", None)
    r = subprocess.run(["bash", "-c", f". '{setup}' && env -0"], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    return dict(kv.split("=", 1) for kv in r.stdout.decode().split("\0") if "=" in kv)


def test_user_package_with_find_package_chainrt_and_rclcpp_builds_and_runs(tmp_path):
    if BUILD is None or not (BUILD / "rclcpp" / "libchainrt_rclcpp.a").exists():
        pytest.skip("chainrt was built without rclcpp")
    before = _checkout_state(BUILD)
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert _checkout_state(BUILD) == before, "cmake --install wrote into the checkout"

    env = _ros_environment()
    env["CMAKE_PREFIX_PATH"] = f"{prefix}:{env.get('CMAKE_PREFIX_PATH', '')}".rstrip(":")
    src = tmp_path / "user_package"
    shutil.copytree(PACKAGE, src)
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    for cmd in (["cmake", "-S", str(src), "-B", str(src / "build"), "-G", "Ninja", *launcher],
                ["cmake", "--build", str(src / "build")]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-3000:]

    run_env = {**env, "ROS_DOMAIN_ID": str(100 + os.getpid() % 60), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    r = subprocess.run([str(src / "build" / "plain_robot")], env=run_env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert r.stdout.strip() == "ticks 5", r.stdout
    r = subprocess.run([str(src / "build" / "chain_robot")], env=run_env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    words = r.stdout.split()
    assert words[:2] == ["chain", "talk"] and int(words[2]) >= 5 and words[3:] == ["policy", "edf"], r.stdout
