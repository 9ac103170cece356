"""chainrt as a ROS 2 package in a user's workspace: install chainrt from the build into a fresh
prefix (``cmake --install``), build the out-of-tree example package
(examples/ros_workspace/src/pipeline_demo) from a clean colcon workspace with
``find_package(chainrt)``, run its two nodes under the chainrt executor on real ROS 2 and check
their chain statistics. Needs the built runtime and colcon (both from scripts/setup); no
wall-clock number is asserted, only counts and invariants (a chain instance cannot take less
than the CPU time its callbacks burn)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CHAINRT_BUILD_DIR", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
COLCON = Path(sys.executable).parent / "colcon"


# rclpy peer: GetParameters on the example's filter node (a ros2 param-style tool).
PARAM_PEER = """
import sys, rclpy
from rcl_interfaces.srv import GetParameters
rclpy.init()
node = rclpy.create_node('param_peer')
cli = node.create_client(GetParameters, '/robot1/obstacle_filter/get_parameters')
if not cli.wait_for_service(timeout_sec=60):
    sys.exit('no parameter service')
fut = cli.call_async(GetParameters.Request(names=['work_ms']))
rclpy.spin_until_future_complete(node, fut, timeout_sec=60)
res = fut.result()
print(res.values[0].double_value if res and res.values else 'none')
node.destroy_node()
rclpy.shutdown()
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if not (BUILD / "runtime" / "libchainrt_runtime.a").exists():
        pytest.skip("the chainrt runtime is not built (no ROS 2 at build time)")
    if not COLCON.exists():
        pytest.fail("colcon is not installed in the virtualenv (scripts/setup installs it)")
    prefix = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return prefix


def test_install_prefix_has_package_config_and_python(installed):
    cmake_dir = installed / "lib" / "cmake" / "chainrt"
    for f in ("chainrtConfig.cmake", "chainrtConfigVersion.cmake", "chainrtTargets.cmake",
              "ChainrtROS2.cmake"):
        assert (cmake_dir / f).is_file(), f
    targets = (cmake_dir / "chainrtTargets.cmake").read_text()
    for t in ("chainrt::model", "chainrt::sched", "chainrt::analysis", "chainrt::sim",
              "chainrt::runtime"):
        assert f"add_library({t} " in targets, t
    assert str(REPO) not in targets  # nothing points back into the source tree
    assert (installed / "share" / "ament_index" / "resource_index" / "packages" / "chainrt").exists()
    assert (installed / "share" / "chainrt" / "package.xml").is_file()
    # the installed CLI runs the installed Python package (not the source tree's)
    r = subprocess.run([str(installed / "bin" / "chainrt"), "check",
                        str(installed / "share" / "chainrt" / "examples" / "two_chains.yaml")],
                       capture_output=True, text=True, timeout=120, cwd=installed)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(installed / "bin" / "chainrt"), "--help"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert r.returncode == 0
    site = next((installed / "lib").glob("python3*/site-packages/chainrt"))
    assert list(site.glob("_core*.so")), "the compiled extension is installed with the package"


def test_example_workspace_builds_with_colcon_and_runs_its_chain(installed, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "examples" / "ros_workspace" / "src", ws / "src")
    env = dict(os.environ)
    env["CMAKE_PREFIX_PATH"] = str(installed)
    env.pop("AMENT_PREFIX_PATH", None)
    r = subprocess.run([str(COLCON), "build", "--cmake-args", "-DCMAKE_BUILD_TYPE=Release"],
                       cwd=ws, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exe = ws / "install" / "pipeline_demo" / "lib" / "pipeline_demo" / "pipeline_main"
    model = ws / "install" / "pipeline_demo" / "share" / "pipeline_demo" / "config" / "pipeline.yaml"
    assert exe.is_file() and model.is_file()

    run_env = dict(os.environ)
    run_env["ROS_DOMAIN_ID"] = str(60 + os.getpid() % 40)
    run_env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    seconds = 8.0  # long enough for the rclpy peer to start, discover and ask
    proc = subprocess.Popen([str(exe), str(model), str(seconds), "--ros-args", "-r",
                             "__ns:=/robot1", "-p", "work_ms:=2.5"],
                            env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # While it runs, an rclpy program (as `ros2 param get` does) reads the parameter through
    # the node's standard parameter service.
    peer = subprocess.run([sys.executable, "-c", PARAM_PEER], env=run_env, capture_output=True,
                          text=True, timeout=120)
    out, err = proc.communicate(timeout=120)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert r.returncode == 0, r.stderr[-3000:]
    assert peer.returncode == 0 and peer.stdout.strip() == "2.5", peer.stdout + peer.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["policy"] == "fp"
    cbs = report["callbacks"]
    assert {"capture", "detect", "housekeeping"} <= set(cbs)
    assert cbs["obstacle_filter/parameters/get"]["instances"] >= 1  # the peer's request
    # every frame captured is processed or counted as dropped
    assert cbs["detect"]["instances"] + cbs["detect"]["drops"] >= cbs["capture"]["instances"] - 1
    chain = report["chains"]["perception"]
    expected = seconds / 0.020
    assert chain["instances"] >= 0.25 * expected, chain
    assert chain["instances"] <= cbs["detect"]["instances"]
    # the chain's two callbacks burn 1 ms + 2 ms of CPU: no instance can be faster
    assert chain["bcrt_ns"] >= 3_000_000 * 0.95
    assert chain["bcrt_ns"] <= chain["mean_ns"] <= chain["wcrt_ns"]
    assert chain["p99_ns"] <= chain["wcrt_ns"]
    assert chain["deadline_ns"] == 20_000_000 and chain["period_ns"] == 20_000_000
    assert 0 <= chain["deadline_misses"] <= chain["instances"]
    assert "processed" in r.stderr
    # --ros-args reached the user's node: remapped namespace and the parameter override
    assert "/robot1/obstacle_filter: work_ms=2.5" in r.stderr
    # the chain's two callbacks burn 1 ms + 2.5 ms of CPU
    assert chain["bcrt_ns"] >= 3_500_000 * 0.95
