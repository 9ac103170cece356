"""A chain through a ROS 2 service (docs/model.md, `services`): the loader expands the request and
the response into messages, so every analysis and the simulator handle it as the same chain
written with topics -- same bounds and same simulated response times -- and communication costs
apply to the request and the response with their own sizes."""

from __future__ import annotations

import pytest

from chainrt import _core
from chainrt.analysis import override
from chainrt.simulation import simulate
from chainrt.model import load_model_from_string

HEAD = """chainrt: 1
hosts: [{name: h, cores: 2}]
executors: [{name: main, host: h, policy: POLICY, threads: [{name: t0, cores: [0], priority: 50}]}]
"""
SERVICE = HEAD + """
services: [{name: q, request_size: 64B, response_size: 64B}]
callbacks:
  - {name: cam, kind: timer, node: camera, period: 20ms, wcet: 1ms, priority: 9, publishes: [img]}
  - {name: det, kind: subscription, node: detector, topic: img, wcet: 3ms, priority: 8, publishes: [dets]}
  - {name: plan, kind: subscription, node: planner, topic: dets, wcet: 2ms, priority: 7, calls: [q]}
  - {name: serve, kind: service, node: map, service: q, wcet: 1ms, priority: 6}
  - {name: on_map, kind: client, node: planner, service: q, wcet: 500us, priority: 5, publishes: [cmd]}
  - {name: logt, kind: timer, node: logger, period: 100ms, wcet: 4ms, priority: 2, publishes: [log]}
  - {name: up, kind: subscription, node: uploader, topic: log, wcet: 3ms, priority: 1}
chains:
  - {name: control, callbacks: [cam, det, plan, serve, on_map], priority: 2}
  - {name: logging, callbacks: [logt, up], priority: 1}
"""
# the same system with the request and the response written as topics
TOPICS = SERVICE.replace("services: [{name: q, request_size: 64B, response_size: 64B}]\n", "") \
    .replace("calls: [q]", "publishes: [q_request]") \
    .replace("kind: service, node: map, service: q,", "kind: subscription, node: map, topic: q_request, publishes: [q_response],") \
    .replace("kind: client, node: planner, service: q,", "kind: subscription, node: planner, topic: q_response,")


def _models(policy):
    s = load_model_from_string(SERVICE.replace("POLICY", policy), "service.yaml")
    t = load_model_from_string(TOPICS.replace("POLICY", policy), "topics.yaml")
    return s, t


@pytest.mark.parametrize("analysis", ["edf-mt", "fp-mt", "picas-st", "cros-rt"])
def test_every_analysis_bounds_a_service_chain_as_the_same_chain_of_topics(analysis):
    policy = {"edf-mt": "edf", "fp-mt": "fp", "picas-st": "picas", "cros-rt": "picas"}[analysis]
    s, t = _models(policy)
    ok_s, why_s = _core._applicable(s, analysis)
    ok_t, why_t = _core._applicable(t, analysis)
    assert ok_s == ok_t, (why_s, why_t)
    if not ok_s:
        pytest.skip(f"{analysis} does not apply to this system: {why_s}")
    a, b = _core._analyze(s, analysis), _core._analyze(t, analysis)
    for chain in ("control", "logging"):
        assert a["chains"][chain]["wcrt_bound_ns"] == b["chains"][chain]["wcrt_bound_ns"], (chain, a, b)
        assert a["chains"][chain]["wcrt_bound_ns"] is not None


def test_the_default_executor_analysis_bounds_it_with_the_service_ranks():
    s, _ = _models("ros-default")
    r = _core._analyze(s, "ros-default-st")
    assert r["chains"]["control"]["wcrt_bound_ns"] is not None


@pytest.mark.parametrize("policy", ["edf", "fp", "ros-default"])
def test_the_simulator_runs_the_service_chain_as_the_chain_of_topics(policy):
    s, t = _models(policy)
    a, _ = simulate(s, 2_000_000_000)
    b, _ = simulate(t, 2_000_000_000)
    for chain in ("control", "logging"):
        x, y = a["chains"][chain], b["chains"][chain]
        assert x["instances"] == y["instances"] > 0
        if policy != "ros-default":   # there, a service ranks below every subscription
            assert x["wcrt_ns"] == y["wcrt_ns"] and x["mean_ns"] == y["mean_ns"], (chain, x, y)


def test_the_request_and_response_cost_with_their_own_sizes():
    text = SERVICE.replace("POLICY", "picas").replace(
        "services: [{name: q, request_size: 64B, response_size: 64B}]",
        "services: [{name: q, request_size: 1KiB, response_size: 8KiB}]")
    text = text.replace("executors: [{name: main,", "executors: [{name: other, host: h, policy: picas, priority: 40, "
                        "threads: [{name: t0, cores: [1], priority: 40}]}, {name: main,")
    text = text.replace("chains:", "nodes: [{name: camera, executor: main}, {name: detector, executor: main}, "
                        "{name: planner, executor: main}, {name: map, executor: other}, {name: logger, executor: main}, "
                        "{name: uploader, executor: main}]\ncommunication: {same_host: {fixed: 100us, per_kib: 10us}}\nchains:")
    m = load_model_from_string(text, "cost.yaml")
    hops = {(h.from_, h.to): h for h in m.chain("control").hops}
    req, resp = hops[("plan", "serve")], hops[("serve", "on_map")]
    assert (req.kind, req.message_size, req.comm) == ("request", 1024, "same_host")
    assert (resp.kind, resp.message_size, resp.comm) == ("response", 8192, "same_host")
    cheap = load_model_from_string(text.replace("request_size: 1KiB, response_size: 8KiB",
                                                "request_size: 64B, response_size: 64B"), "cheap.yaml")
    a, b = _core._analyze(m, "cros-rt"), _core._analyze(cheap, "cros-rt")
    # the bigger request and response cost (10 + 80) - (0.6 + 0.6) us more on the chain's hops
    assert a["chains"]["control"]["wcrt_bound_ns"] > b["chains"]["control"]["wcrt_bound_ns"]


def test_chainrt_run_replays_a_chain_through_a_real_service(tmp_path):
    """`chainrt run` starts the model's service as a real ROS 2 service and client (the request
    carries the chain instance to the server, the response back to the caller's client
    callback): the chain completes through it in the executor's monitor."""
    import json
    import os
    import subprocess
    import sys

    from rosutil import have_rclpy, runtime_built
    if not (have_rclpy() and runtime_built()):
        pytest.skip("needs rclpy and the built runtime")
    model = tmp_path / "service.yaml"
    model.write_text(SERVICE.replace("POLICY", "edf").replace("cores: [0], priority: 50", "cores: [0]"))
    env = dict(os.environ, ROS_DOMAIN_ID=str(90 + os.getpid() % 9), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    # at a real-time priority where allowed, so that parallel builds do not starve the run
    fifo = ["--fifo", "10"] if os.geteuid() == 0 else []
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "run", str(model), "--duration", "2s", "--no-compare",
                        "--json", *fifo], capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode in (0, 2), r.stderr
    out = json.loads(r.stdout)
    assert out["chains"]["control"]["instances"] >= 50, out["chains"]
    assert out["callbacks"]["serve"]["instances"] >= 50 and out["callbacks"]["on_map"]["instances"] >= 50
    assert not [w for w in out.get("warnings", []) if "skipped" in w], out["warnings"]
