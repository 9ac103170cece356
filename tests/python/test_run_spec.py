"""The run specification of ``chainrt run`` (runtime/run_options.def, runtime/run_spec.hpp): the
options of a run are one table that ``chainrt run``'s arguments, the specification it writes and
chainrt-run's reader all come from; the model is parsed once in the CLI process and once in each
chainrt-run process (counted through CHAINRT_MODEL_LOAD_LOG, the model loader's own record)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from chainrt import _core, runtime
from chainrt.cli import main

REPO = Path(__file__).resolve().parents[2]
TWO_PROCESSES = REPO / "tests/cpp/runtime/data/two_processes.yaml"


def _parses(log: Path) -> Counter:
    """Model parses by process id, from the loader's record."""
    if not log.exists():
        return Counter()
    return Counter(line.split(" ", 1)[0] for line in log.read_text().splitlines() if line)


def test_every_user_option_of_the_table_is_an_argument_of_chainrt_run(capsys):
    assert main(["run", "--help"]) == 0
    text = capsys.readouterr().out
    table = _core.run_options()
    assert {o["key"] for o in table} >= {"duration", "policy", "scale_wcet", "process", "run_id"}
    for o in table:  # (chainrt run's own --json prints JSON; chainrt-run's names the report's file)
        assert (o["flag"] in text) == (o["scope"] == "user" or o["flag"] == "--json"), o["flag"]


def test_the_specification_holds_the_model_and_the_options_by_the_tables_keys():
    from chainrt.model import load_model
    model = load_model(str(TWO_PROCESSES))
    spec = json.loads(runtime.run_spec(model, str(TWO_PROCESSES), {
        "duration": 2_000_000_000, "policy": "edf", "threads": None, "no_thread_params": True,
        "fifo": None, "scale_wcet": [(1_000_000_000, 1.5)], "lame_controller": None}))
    assert spec["model_file"] == str(TWO_PROCESSES)
    assert spec["options"] == {"duration": "2000000000ns", "policy": "edf", "no_thread_params": True,
                               "scale_wcet": ["1000000000ns:1.5"]}
    assert spec["model"] == model.to_yaml()
    with pytest.raises(ValueError, match="unknown run option 'speed'"):
        runtime.run_spec(model, "m.yaml", {"speed": 2})


def test_chainrt_run_parses_the_model_once_and_hands_its_processes_one_specification(tmp_path, monkeypatch):
    """The CLI process parses the model once (no second load for the processes, the DDS
    profiles or the run's options); every process gets the same specification, which
    chainrt-run reads with its one reader and parses the model from, once."""
    try:
        binary = runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    log = tmp_path / "parses.log"
    monkeypatch.setenv("CHAINRT_MODEL_LOAD_LOG", str(log))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    started = []

    def supervise(self):
        started.append(self)
        chain = {"period_ns": 10_000_000, "deadline_ns": 10_000_000, "wcrt_ns": 1, "bcrt_ns": 1, "mean_ns": 1.0,
                 "p99_ns": 1, "instances": 1, "deadline_misses": 0, "drops": 0}
        return {"chains": {"across": chain, "local": {**chain, "period_ns": 50_000_000, "deadline_ns": 50_000_000}},
                "callbacks": {}, "warnings": [], "policy": "fp", "threads": 2,
                "duration_ns": 1, "processes": self.processes, "run_id": self.run_id, "failed_processes": []}

    monkeypatch.setattr(runtime.Supervisor, "run", supervise)
    assert main(["run", str(TWO_PROCESSES), "--duration", "1s", "--policy", "edf", "--scale-wcet", "0s:1.5",
                 "--no-compare", "--no-platform-probe", "--json"]) == 0
    assert _parses(log) == {str(os.getpid()): 1}
    [sup] = started
    assert sup.processes == ["sensing", "acting"]
    spec = tmp_path / "spec.json"
    spec.write_text(sup.spec)
    assert json.loads(sup.spec)["options"]["policy"] == "edf"
    out = subprocess.run([str(binary), "--spec", str(spec), "--list-processes"], capture_output=True, text=True,
                         env=runtime.ros_environment(binary), timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["sensing", "acting"]
    counts = _parses(log)
    assert len(counts) == 2 and sorted(counts.values()) == [1, 1]


def test_a_bad_specification_is_one_line(tmp_path):
    try:
        binary = runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": "chainrt: 1\n", "options": {"threads": "0"}}))
    out = subprocess.run([str(binary), "--spec", str(spec)], capture_output=True, text=True,
                         env=runtime.ros_environment(binary), timeout=60, check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == "chainrt-run: --threads: '0' is not a thread count (1..64)"


@pytest.mark.skipif(sys.platform != "linux", reason="ROS 2 on Linux")
def test_a_run_parses_the_model_once_per_process_on_real_ros(tmp_path):
    """`chainrt run` of a two-process model on real ROS 2: one parse in the CLI process and one
    in each chainrt-run process, nowhere else (no --list-processes child, no second load)."""
    from rosutil import run_cli_on_ros
    log = tmp_path / "parses.log"
    os.environ["CHAINRT_MODEL_LOAD_LOG"] = str(log)
    try:
        out = run_cli_on_ros(["run", str(TWO_PROCESSES), "--duration", "300ms", "--warmup", "100ms",
                              "--no-thread-params", "--no-compare", "--no-platform-probe", "--json"], 120)
    finally:
        del os.environ["CHAINRT_MODEL_LOAD_LOG"]
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["processes"] == ["sensing", "acting"]
    counts = _parses(log)
    assert len(counts) == 3 and set(counts.values()) == {1}, counts


def test_the_rclpy_executors_view_of_a_model_file_parses_it_once(tmp_path, monkeypatch):
    """chainrt.rclpy hands the loaded model to its C++ loop module as it is (no YAML text that
    is parsed again): a model file is parsed once, a loaded model not again."""
    try:
        from chainrt.rclpy.binding import load_view
        from chainrt import _rclpy_exec  # noqa: F401
    except ImportError as e:
        pytest.skip(f"no rclpy loop module: {e}")
    from chainrt.model import load_model
    log = tmp_path / "parses.log"
    monkeypatch.setenv("CHAINRT_MODEL_LOAD_LOG", str(log))
    two_chains = REPO / "examples/two_chains.yaml"
    view = load_view(str(two_chains), None, "edf", None, [])
    assert view.policy == "edf" and {c.name for c in view.callbacks} == {"hi_pub", "hi_sub", "lo_pub", "lo_sub"}
    assert _parses(log) == {str(os.getpid()): 1}
    model = load_model(str(two_chains))
    assert load_view(model, "main", None, None, []).policy == "fp"
    assert _parses(log) == {str(os.getpid()): 2}  # the load above, nothing in load_view
