"""chainrt as a ROS 2 package in a user's workspace: install chainrt from the build into a fresh
prefix (``cmake --install``), build the out-of-tree example package
(examples/ros_workspace/src/pipeline_demo) from a clean colcon workspace with
``find_package(chainrt)``, run its two nodes under the chainrt executor on real ROS 2 and check
their chain statistics; and `chainrt trace record` of the prefix finds the prefix's own tracing
libraries (recording the example's nodes when LTTng can record here, else skipped with the
reason). Needs the built runtime and colcon (both from scripts/setup); no
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

from chainrt import _build

REPO = Path(__file__).resolve().parents[2]
BUILD = _build.build_dir()  # this virtualenv's ROS 2 line's build
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


def test_install_prefix_has_the_monitoring_messages(installed, tmp_path):
    """chainrt_msgs is installed with chainrt: its ament index entry, and a plain rclpy program
    that puts the prefix's Python folder on its path publishes a ChainStats (its type support
    libraries found from where they lie, without LD_LIBRARY_PATH)."""
    assert (installed / "share" / "chainrt_msgs" / "package.xml").is_file()
    assert (installed / "share" / "ament_index" / "resource_index" / "packages" / "chainrt_msgs").exists()
    site = next((installed / "lib").glob("python3*/site-packages"))
    program = tmp_path / "plain.py"
    program.write_text(
        "import rclpy\n"
        "from chainrt_msgs.msg import ChainStats, ChainStatistics\n"
        "import chainrt_msgs\n"
        "rclpy.init()\n"
        "node = rclpy.create_node('plain')\n"
        "node.create_publisher(ChainStats, '/chainrt/chain_stats', 1).publish(\n"
        "    ChainStats(chains=[ChainStatistics(name='c', verdict=ChainStatistics.VERDICT_MET)]))\n"
        "print(chainrt_msgs.__file__)\n")
    # a fresh process: the wheels' own start-up sets their library path (and no more)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "CHAINRT_BUILD_DIR", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    env.update(PYTHONPATH=str(site), ROS_DOMAIN_ID="97", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    r = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(installed)), r.stdout  # the installed package, not the build's


RCLCPP_CONSUMER_CMAKE = """cmake_minimum_required(VERSION 3.22)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(chainrt REQUIRED)
if(NOT chainrt_HAS_RCLCPP)
  message(FATAL_ERROR "chainrt was installed without chainrt::rclcpp")
endif()
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE chainrt::rclcpp)
"""

RCLCPP_CONSUMER_MAIN = """#include <chainrt/rclcpp/chain_executor.hpp>
#include <rclcpp/rclcpp.hpp>
#include <cstdio>
int main(int argc, char** argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("consumer");
  int ticks = 0;
  auto timer = node->create_wall_timer(std::chrono::milliseconds(2), [&] { ++ticks; });
  chainrt::rclcpp::ChainExecutor exec;
  exec.add_node(node);
  while (ticks < 5) exec.spin_once(std::chrono::seconds(5));
  std::printf("ticks %d policy %s\\n", ticks, chainrt::to_string(exec.policy()));
  rclcpp::shutdown();
  return 0;
}
"""


def test_installed_package_exports_the_rclcpp_executor(installed, tmp_path):
    """find_package(chainrt) of the install prefix gives chainrt::rclcpp: a project of its own
    links it and runs an rclcpp node under the ChainExecutor."""
    if not (BUILD / "rclcpp" / "libchainrt_rclcpp.a").exists():
        pytest.skip("chainrt was built without rclcpp")
    targets = (installed / "lib" / "cmake" / "chainrt" / "chainrtTargets.cmake").read_text()
    assert "add_library(chainrt::rclcpp " in targets
    (tmp_path / "CMakeLists.txt").write_text(RCLCPP_CONSUMER_CMAKE)
    (tmp_path / "main.cpp").write_text(RCLCPP_CONSUMER_MAIN)
    env = {**os.environ, "CMAKE_PREFIX_PATH": str(installed)}
    env.pop("AMENT_PREFIX_PATH", None)
    for cmd in (["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"), "-G", "Ninja"],
                ["cmake", "--build", str(tmp_path / "b")]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_env = {**os.environ, "ROS_DOMAIN_ID": str(60 + os.getpid() % 40), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    r = subprocess.run([str(tmp_path / "b" / "consumer")], env=run_env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ticks 5 policy ros-default", r.stdout


@pytest.fixture(scope="module")
def workspace(installed, tmp_path_factory):
    """The example package built by colcon in a clean workspace against the installed chainrt:
    (pipeline_main, its installed model)."""
    ws = tmp_path_factory.mktemp("ws")
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
    return exe, model


def test_example_workspace_builds_with_colcon_and_runs_its_chain(workspace):
    exe, model = workspace

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


# ---------------------------------------------------------------------------------------------
# `chainrt trace record` from the install prefix (docs/tracing.md): its tracing libraries are
# installed with it and found without any environment variable.

FIND_PRELOAD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from chainrt import tracing_record
print(json.dumps({"module": tracing_record.__file__,
                  "preload": tracing_record.preload_list(tracing_record.tracing_config())}))
"""


def _installed_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CHAINRT_TRACING_CONFIG", "AMENT_PREFIX_PATH", "PYTHONPATH")}
    return env


def test_installed_trace_record_finds_its_tracing_libraries(installed, tmp_path):
    if not (BUILD / "chainrt_tracing.json").is_file():
        pytest.skip("chainrt was built without its tracing libraries (no LTTng-UST)")
    cfg = installed / "share" / "chainrt" / "tracing.json"
    assert cfg.is_file()
    assert str(BUILD) not in cfg.read_text()  # relative to the prefix, nothing in the build tree
    site = next((installed / "lib").glob("python3*/site-packages"))
    r = subprocess.run([sys.executable, "-c", FIND_PRELOAD, str(site)], env=_installed_env(),
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["module"].startswith(str(site))
    pre = out["preload"]
    built = json.loads((BUILD / "chainrt_tracing.json").read_text())
    assert len(pre) == len(built["ros2_preload"]) + 1
    for p in pre:  # the prefix's copies, never the build tree's
        assert p.startswith(str(installed / "lib" / "chainrt" / "tracing") + "/") and Path(p).is_file(), p
    assert [Path(p).name for p in pre] == [Path(p).name for p in built["ros2_preload"] + [built["chainrt"]]]
    # the prefix can be moved: the paths are relative to share/chainrt/tracing.json
    moved = tmp_path / "moved"
    shutil.copytree(installed, moved, symlinks=True)
    site = next((moved / "lib").glob("python3*/site-packages"))
    r = subprocess.run([sys.executable, "-c", FIND_PRELOAD, str(site)], env=_installed_env(),
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert all(p.startswith(str(moved) + "/") for p in json.loads(r.stdout)["preload"])


def test_installed_trace_record_records_the_example_nodes(installed, workspace, tmp_path):
    if not (BUILD / "chainrt_tracing.json").is_file():
        pytest.skip("chainrt was built without its tracing libraries (no LTTng-UST)")
    from test_tracing import _recording_unavailable  # the same probe as the tracing tests
    why = _recording_unavailable()
    if why:
        print(f"\nLTTng recording from the install prefix skipped: {why}", file=sys.stderr)
        pytest.skip(f"LTTng recording unavailable: {why}")
    from chainrt import tracing
    from chainrt.model import load_model
    exe, model = workspace
    env = _installed_env()
    env["ROS_DOMAIN_ID"] = str(60 + (os.getpid() + 20) % 40)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    trace = tmp_path / "trace"
    r = subprocess.run([str(installed / "bin" / "chainrt"), "trace", "record", "-o", str(trace), "--",
                        str(exe), str(model), "2", "--ros-args", "-r", "__ns:=/robot1"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    monitored = json.loads(r.stdout)["chains"]["perception"]
    events = list(tracing.read_trace(str(trace)))
    names = {e.name for e in events}
    # rcl's events through the installed libtracetools.so, chainrt's through libchainrt_tracing.so
    assert {"ros2:rcl_node_init", "ros2:rcl_publish", "ros2:rmw_take", "ros2:callback_start",
            "ros2:callback_end", "chainrt:chain_init", "chainrt:chain_complete"} <= names, names
    nodes = {(e.fields["namespace"], e.fields["node_name"]) for e in events if e.name == "ros2:rcl_node_init"}
    assert {("/robot1", "camera_driver"), ("/robot1", "obstacle_filter")} <= nodes, nodes
    assert any(e.name == "chainrt:chain_init" and e.fields["name"] == "perception" for e in events)
    rep = tracing.analyze(events, load_model(str(model)))
    assert {"capture", "detect"} <= set(rep.callbacks), rep.to_json()
    # the trace has the instances the executor measured. Each ends at the leaf's callback_end
    # tracepoint, which comes after the executor's own end stamp (on the same clock): no instance
    # is shorter in the trace, and on the mean they agree (a VM stall between the two stamps
    # lengthens one instance by up to milliseconds, not the mean of all).
    t = rep.chains["perception"]
    assert t["instances"] == monitored["instances"] > 0, (t, monitored)
    assert t["wcrt_ns"] >= monitored["wcrt_ns"] and t["bcrt_ns"] >= monitored["bcrt_ns"], (t, monitored)
    assert t["mean_ns"] == pytest.approx(monitored["mean_ns"], rel=0.02), (t, monitored)


def _fake_prefix(root: Path, with_config: bool, with_libs: bool) -> Path:
    (root / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (root / "share" / "ament_index" / "resource_index" / "packages" / "chainrt").write_text("")
    pkg = root / "lib" / "python3.11" / "site-packages" / "chainrt"
    pkg.mkdir(parents=True)
    if with_config:
        (root / "share" / "chainrt").mkdir(parents=True)
        (root / "share" / "chainrt" / "tracing.json").write_text(json.dumps(
            {"ros2_kind": "wheels", "chainrt": "../../lib/chainrt/tracing/libchainrt_tracing.so",
             "ros2_preload": ["../../lib/chainrt/tracing/tracetools/libtracetools.so"]}))
    if with_libs:
        (root / "lib" / "chainrt" / "tracing" / "tracetools").mkdir(parents=True)
        (root / "lib" / "chainrt" / "tracing" / "libchainrt_tracing.so").write_text("")
        (root / "lib" / "chainrt" / "tracing" / "tracetools" / "libtracetools.so").write_text("")
    return pkg / "tracing_record.py"


def test_trace_record_lookup_in_an_install_prefix(tmp_path, monkeypatch):
    """Pure: the order and the errors of the lookup (no LTTng, no build needed)."""
    from chainrt import tracing_record as tr
    monkeypatch.delenv("CHAINRT_TRACING_CONFIG", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    # installed without the tracing libraries (no LTTng-UST at build time): said so, and the
    # source tree's build is not used instead
    monkeypatch.setattr(tr, "__file__", str(_fake_prefix(tmp_path / "a", False, False)))
    with pytest.raises(tr.RecordError, match=r"installed without its tracing libraries"):
        tr.tracing_config()
    # the list is there but a library was removed
    monkeypatch.setattr(tr, "__file__", str(_fake_prefix(tmp_path / "b", True, False)))
    with pytest.raises(tr.RecordError, match=r"libchainrt_tracing.so is missing.*install again"):
        tr.tracing_config()
    # complete: absolute paths inside the prefix, the wheels' replacements first
    monkeypatch.setattr(tr, "__file__", str(_fake_prefix(tmp_path / "c", True, True)))
    assert tr.preload_list(tr.tracing_config()) == [
        str(tmp_path / "c" / "lib" / "chainrt" / "tracing" / "tracetools" / "libtracetools.so"),
        str(tmp_path / "c" / "lib" / "chainrt" / "tracing" / "libchainrt_tracing.so")]
    # a Python package outside any prefix and any build: a chainrt prefix of AMENT_PREFIX_PATH
    loose = tmp_path / "loose" / "chainrt"
    loose.mkdir(parents=True)
    monkeypatch.setattr(tr, "__file__", str(loose / "tracing_record.py"))
    monkeypatch.setattr(tr._build, "build_dir", lambda: None)  # no source checkout's build either
    with pytest.raises(tr.RecordError, match=r"not built"):
        tr.tracing_config()
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "c")]))
    assert tr.tracing_config()["chainrt"].startswith(str(tmp_path / "c") + "/")
    # the environment variable overrides everything
    monkeypatch.setenv("CHAINRT_TRACING_CONFIG", str(tmp_path / "b" / "share" / "chainrt" / "tracing.json"))
    with pytest.raises(tr.RecordError, match=r"is missing"):
        tr.tracing_config()
