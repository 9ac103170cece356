"""Tests of ``chainrt run`` and ``chainrt.runtime``: merging of per-process reports (pure), and
an end-to-end run of a model on real ROS 2 when the runtime binary is built (skipped otherwise).
No wall-clock number is asserted: only counts, keys and the invariants between statistics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt import runtime

REPO = Path(__file__).resolve().parents[2]
KEYS = {"period_ns", "deadline_ns", "wcrt_ns", "bcrt_ns", "mean_ns", "p99_ns", "instances",
        "deadline_misses", "drops"}
RUN_KEYS = KEYS | {"expected_releases", "never_completed"}  # added by the run's supervisor


def _chain(samples, deadline=100, drops=0):
    return {"period_ns": 1000, "deadline_ns": deadline, "wcrt_ns": max(samples, default=0),
            "bcrt_ns": min(samples, default=0),
            "mean_ns": (sum(samples) / len(samples)) if samples else 0.0,
            "p99_ns": runtime.quantile(samples, 0.99), "instances": len(samples),
            "deadline_misses": sum(1 for s in samples if s > deadline), "drops": drops,
            "samples_ns": samples}


def test_quantile_nearest_rank():
    assert runtime.quantile([], 0.99) == 0
    assert runtime.quantile([5], 0.99) == 5
    assert runtime.quantile(list(range(1, 101)), 0.99) == 99
    assert runtime.quantile(list(range(1, 101)), 0.5) == 50


def test_merge_combines_processes_like_one_run():
    a = list(range(10, 110))          # leaf of the chain in process A
    b = [200, 5]                      # another leaf (branching chain) in process B
    parts = [{"policy": "edf", "threads": 1, "duration_ns": 7, "chains": {"c": _chain(a, drops=1)}},
             {"policy": "edf", "threads": 2, "duration_ns": 9, "chains": {"c": _chain(b, drops=2)}}]
    m = runtime.merge(parts)
    c = m["chains"]["c"]
    assert set(c) == KEYS
    allv = a + b
    assert c["instances"] == len(allv)
    assert c["wcrt_ns"] == max(allv) and c["bcrt_ns"] == min(allv)
    assert c["mean_ns"] == pytest.approx(sum(allv) / len(allv))
    assert c["p99_ns"] == runtime.quantile(allv, 0.99)
    assert c["deadline_misses"] == sum(1 for s in allv if s > 100)
    assert c["drops"] == 3
    assert m["threads"] == 3 and m["duration_ns"] == 9


def test_merge_chain_without_instances_in_one_process():
    parts = [{"chains": {"c": _chain([], drops=4)}}, {"chains": {"c": _chain([7, 9])}}]
    c = runtime.merge(parts)["chains"]["c"]
    assert c["instances"] == 2 and c["bcrt_ns"] == 7 and c["wcrt_ns"] == 9 and c["drops"] == 4


def _binary_or_skip():
    try:
        return runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("policy", ["fp", "ros-default"])
def test_run_two_chains_on_real_ros(policy, tmp_path):
    _binary_or_skip()
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(150 + (os.getpid() % 50)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    cmd = [sys.executable, "-m", "chainrt.cli", "run", str(REPO / "examples/two_chains.yaml"),
           "--duration", "1s", "--warmup", "200ms", "--policy", policy, "--json", "--no-compare"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["policy"] == policy
    assert res["processes"] == ["main"]
    assert set(res["chains"]) == {"high", "low"}
    for name, c in res["chains"].items():
        assert set(c) == RUN_KEYS, name
        assert c["instances"] > 0, name
        assert c["bcrt_ns"] <= c["mean_ns"] <= c["wcrt_ns"]
        assert c["bcrt_ns"] <= c["p99_ns"] <= c["wcrt_ns"]
        # the accounting rebuilds every measured instance from the dispatch traces
        raw = res["accounting"]["chains"][name]["raw"]
        assert (raw["instances"], raw["max_ns"]) == (c["instances"], c["wcrt_ns"]), name
    # every instance of a chain burns at least the WCETs of its callbacks (5 ms and 20 ms)
    assert res["chains"]["high"]["bcrt_ns"] >= 5_000_000
    assert res["chains"]["low"]["bcrt_ns"] >= 20_000_000


def test_run_two_processes_chain_crosses_processes():
    """Executors with different `process` values run as separate chainrt-run processes; the
    chain from the timer in one process to the subscription in the other is measured through
    the stamp carried by its messages."""
    _binary_or_skip()
    model = REPO / "tests/cpp/runtime/data/two_processes.yaml"
    assert runtime.list_processes(str(model)) == ["sensing", "acting"]
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(100 + (os.getpid() % 50)))
    cmd = [sys.executable, "-m", "chainrt.cli", "run", str(model), "--duration", "1s",
           "--warmup", "300ms", "--json", "--no-compare"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["processes"] == ["sensing", "acting"]
    across, local = res["chains"]["across"], res["chains"]["local"]
    assert across["instances"] > 0 and local["instances"] > 0
    # both callbacks' execution times are inside every measured instance
    assert across["bcrt_ns"] >= 3_000_000
    assert local["bcrt_ns"] >= 2_000_000
    assert res["threads"] == 3


def test_chain_without_a_completed_instance_is_reported_as_such():
    """A starved chain is not "0 misses": it is flagged with its expected releases."""
    result = {"chains": {"starved": _chain([]), "fine": _chain([5, 6])}, "warnings": []}
    runtime._mark_unfinished(result, duration_ns=10_000)
    starved, fine = result["chains"]["starved"], result["chains"]["fine"]
    assert starved["never_completed"] is True and starved["expected_releases"] == 10
    assert fine["never_completed"] is False
    assert any("starved" in w and "10 expected releases" in w for w in result["warnings"])
