"""The model's nodes generated as plain rclcpp nodes (chainrt_rclcpp_nodes, python/chainrt/stock.py):
the two-chain example under rclcpp's stock SingleThreadedExecutor and under chainrt's
ChainExecutor, the same binary and nodes. Both runs are monitored by the chain stamps the
messages carry: every chain releases about one instance per period over the run and every
released instance reaches the chain's end (none lost), so a generator that drops a hop (a
publish, a forwarded stamp, a subscription) fails here. Under the ChainExecutor every model
callback binds to its generated entity (else the executor refuses to start) and the executor's
own monitoring counts the same instances. Counts only, no wall-clock figure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chainrt import stock

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "two_chains.yaml"
SECONDS = 3.0
PERIODS_S = {"high": 0.020, "low": 0.200}

pytestmark = pytest.mark.skipif(stock.unavailable() is not None, reason=f"{stock.unavailable()}")


def _fifo() -> None:
    """The run's process under SCHED_FIFO where this user may set it: the counts need the CPU the
    model's utilisation asks for, which a loaded machine does not give a normal process."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except OSError:
        pass


def _env() -> dict:
    return {"ROS_DOMAIN_ID": str(60 + os.getpid() % 19), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def _check_counts(result: dict) -> None:
    for name, period in PERIODS_S.items():
        c = result["chains"][name]
        expected = SECONDS / period
        # A timer releases at most one instance per period; a loaded machine may skip some (rcl's
        # overrun rule), never half of them.
        assert expected / 2 <= c["released"] <= expected + 2, (name, c)
        assert c["lost"] == 0 and c["instances"] == c["released"], (name, c)
    runs = result["callbacks"]
    assert runs["hi_sub"] == runs["hi_pub"] and runs["lo_sub"] == runs["lo_pub"], runs


@pytest.mark.parametrize("executor", ["single", "chainrt"])
def test_generated_two_chains_counted_without_loss(executor):
    result = stock.run(MODEL, executor, duration=SECONDS, env=_env(), thread_params=False, preexec_fn=_fifo)
    _check_counts(result)
    report = result["reports"]["main"]
    if executor == "chainrt":
        # the executor's own monitoring: every model callback bound, the same instances counted
        assert not report.get("unused_model_callbacks"), report.get("unused_model_callbacks")
        for name in PERIODS_S:
            assert report["chains"][name]["instances"] == result["chains"][name]["instances"], report["chains"][name]
    else:
        assert report is None


def test_callbacks_in_the_models_groups_run(tmp_path):
    """Each callback in a callback group of its own: the generated groups are served with their
    nodes (a group left out of its node's executor would never run)."""
    import yaml
    doc = yaml.safe_load(MODEL.read_text())
    doc["callback_groups"] = [{"name": f"g_{cb['name']}", "type": "mutually_exclusive", "node": cb["node"]}
                              for cb in doc["callbacks"]]
    for cb in doc["callbacks"]:
        cb["group"] = f"g_{cb['name']}"
    grouped = tmp_path / "grouped.yaml"
    grouped.write_text(yaml.safe_dump(doc, sort_keys=False))
    _check_counts(stock.run(grouped, "single", duration=SECONDS, env=_env(), thread_params=False, preexec_fn=_fifo))


def test_bad_model_is_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("chainrt: 1\nname: x\ncallbacks: [\n")
    with pytest.raises(stock.StockRunFailed) as err:
        stock.run(bad, "single", duration=1.0, env=_env())
    assert "\n" not in str(err.value) and str(err.value).startswith("chainrt_rclcpp_nodes:")
    with pytest.raises(ValueError):
        stock.arguments(MODEL, "round-robin")


def test_a_failure_is_the_programs_own_last_line_not_a_middleware_notice():
    kilted = ("[WARN] [1796007303.989291780] [rmw_fastrtps_shared_cpp]: FASTRTPS_DEFAULT_PROFILES_FILE value is used "
              "for participant configuration, but it is deprecated and will no longer be supported.")
    assert stock.failure_reason(f"{kilted}\nchainrt_rclcpp_nodes: 'x.yaml': no such file\n", 1) == \
        "chainrt_rclcpp_nodes: 'x.yaml': no such file"
    # a ROS 2 error is kept; nothing but notices: how the program ended
    assert stock.failure_reason("[ERROR] [1.5] [rcl]: failed\n", 1) == "[ERROR] [1.5] [rcl]: failed"
    assert stock.failure_reason(kilted, -9) == "ended by signal SIGKILL"
    assert stock.failure_reason("", 3) == "exit status 3"


FUSION = {
    "chainrt": 1, "name": "fusion_nodes",
    "hosts": [{"name": "host0", "cores": 2}],
    "executors": [{"name": "main", "host": "host0", "policy": "fp", "threads": [{"name": "t0"}, {"name": "t1"}]}],
    "nodes": [{"name": n, "executor": "main"} for n in ("front", "rear", "fusion", "planner")],
    "topics": [{"name": t, "size": "1KiB"} for t in ("front_pts", "rear_pts", "fused")],
    "callbacks": [
        {"name": "front/timer", "kind": "timer", "node": "front", "period": "50ms", "wcet": "1ms", "priority": 1,
         "publishes": ["front_pts"]},
        {"name": "rear/timer", "kind": "timer", "node": "rear", "period": "50ms", "wcet": "1ms", "priority": 2,
         "publishes": ["rear_pts"]},
        {"name": "fusion/rear_pts", "kind": "fusion_input", "node": "fusion", "topic": "rear_pts", "wcet": "1ms",
         "priority": 3},
        {"name": "fusion/front_pts", "kind": "fusion_trigger", "node": "fusion", "topic": "front_pts", "wcet": "2ms",
         "priority": 4, "fuses": ["fusion/rear_pts"], "publishes": ["fused"]},
        {"name": "planner/fused", "kind": "subscription", "node": "planner", "topic": "fused", "wcet": "2ms",
         "priority": 5}],
    "chains": [
        {"name": "hot", "callbacks": ["front/timer", "fusion/front_pts", "planner/fused"], "deadline": "50ms",
         "class": "rt", "criticality": 2},
        {"name": "rear", "callbacks": ["rear/timer", "fusion/rear_pts"], "deadline": "50ms", "class": "rt",
         "criticality": 1}],
}


@pytest.mark.parametrize("executor", ["multi", "chainrt"])
def test_fusion_nodes_traced_under_multithreaded_and_chain_executor(tmp_path, executor):
    """LaME's fusion callbacks generated: the trigger publishes once its input cached, so the hot
    chain through it completes (at most its first instances, released before the rear input
    cached, are lost). Under stock rclcpp's MultiThreadedExecutor with two threads the callbacks
    run on both threads; the trace of every execution (--trace) counts the same instances as the
    program's own monitoring, and its executions carry the chains' releases."""
    import yaml

    from chainrt import accounting
    from chainrt.experiments import lame_real as lr
    from chainrt.model import load_model

    model_path = tmp_path / "fusion.yaml"
    model_path.write_text(yaml.safe_dump(FUSION, sort_keys=False))
    traces = tmp_path / "traces"
    traces.mkdir()
    result = stock.run(model_path, executor, duration=SECONDS, threads=2 if executor == "multi" else None,
                       env=_env(), thread_params=False, preexec_fn=_fifo,
                       trace=traces / "nodes.jsonl")
    assert result["executor"] == executor and result["threads"] == (2 if executor == "multi" else 0)
    for name in ("hot", "rear"):
        c = result["chains"][name]
        assert c["released"] >= SECONDS / 0.05 / 2, (name, c)
        assert c["lost"] <= (2 if name == "hot" else 0) and c["instances"] > 0, (name, c)
    executions = accounting.read_traces(traces)
    assert {x.callback for x in executions} == {cb["name"] for cb in FUSION["callbacks"]}
    if executor == "multi":
        assert len({x.thread for x in executions}) == 2
    zero = accounting.trace_zero(traces)
    figures, _ = lr.chain_figures(executions, load_model(str(model_path)), zero, zero)
    for name in ("hot", "rear"):
        assert figures[name]["instances"] == result["chains"][name]["instances"], name
