"""The cross-executor trace test: the same deterministic scenarios, for every policy of the
policy descriptor, through the simulator, chainrt's C++ runtime on rcl (``chainrt-run``) and
the rclpy executor (``chainrt.rclpy``), which must dispatch in the same order. All three dispatch
through one sched::Dispatcher (its admission rule and ready queue).

Deterministic: one executor thread; the timers are on the release grid with the run's release
epoch set ahead of the start (CHAINRT_RELEASE_EPOCH_NS), so every timer is released at the same
instant, before the first selection, and only once in the run (period 10 s); each callback works
its model WCET (CPU time) and then publishes, and Fast DDS delivers a message to a reader of the
same process in the writer's thread, so what a callback published is there when the thread
selects again. Every later decision is the policy's: several callbacks ready at one instant.
Only orders are compared, never times. tests/cpp/runtime/sim_vs_runtime_test.cpp compares the
runtime with the simulator dispatch by dispatch on an injected clock (exact start times).

The rclpy executor's one documented difference, rclpy's own node-by-node take order under
ros-default, is an explicit option (``take_order="node"``), tested here against the default.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from chainrt import _core
from chainrt.model import load_model_from_string, policy_names
from rosutil import chainrt_cli, runtime_built

rclpy = pytest.importorskip("rclpy")
_rclpy_exec = pytest.importorskip("chainrt._rclpy_exec",
                                  reason="chainrt.rclpy needs the ROS 2 build (scripts/setup)")

from rclpy.context import Context  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from chainrt import runtime as chainrt_runtime  # noqa: E402
from chainrt.rclpy import ChainExecutor  # noqa: E402

MS = 1_000_000
DATA = Path(__file__).parent / "data"  # the scenarios: topics, callbacks, chains
_ids = itertools.count()

# Each scenario lists its callbacks node by node, timers before subscriptions: the registration
# order (the ready queue's last tie-break) is then the same in the simulator (model order), the
# runtime (model order) and the rclpy executor (nodes in the order added, timers first).
#
# fan: two chains released together; CA (A -> a1 -> x) has the larger deadline but the higher
# priorities at its head, so ros-default (polling points: timers of one polling window first),
# fp/picas (priority), edf/mixed (deadline) and LaME's best-effort thread (refresh only when
# its queue is empty) each give their own order.
FAN = (DATA / "dispatch_fan.yaml").read_text()

# poll: T feeds s1 and s2; s1 feeds s3, registered before s2. The default executor's readySet
# runs s2 (same polling window as s1) before s3 (released after the window was taken), where an
# always-refreshed queue in the same kind order would run s3 first; priorities and deadlines
# give the other policies other orders.
POLL = (DATA / "dispatch_poll.yaml").read_text()

SCENARIOS = {"fan": FAN, "poll": POLL}

# The order each policy gives (the simulator's, checked here so that a scenario that stopped
# exercising its policy is noticed, not only a disagreement between the dispatchers).
EXPECTED = {
    ("fan", "ros-default"): ["A", "B", "a1", "b1", "x"],
    ("fan", "fp"): ["A", "a1", "x", "B", "b1"],
    ("fan", "picas"): ["A", "a1", "x", "B", "b1"],
    ("fan", "edf"): ["B", "b1", "A", "a1", "x"],
    ("fan", "mixed"): ["B", "b1", "A", "a1", "x"],
    ("fan", "lame"): ["A", "B", "a1", "b1", "x"],
    ("poll", "ros-default"): ["T", "s1", "s2", "s3"],
    ("poll", "fp"): ["T", "s1", "s3", "s2"],
    ("poll", "picas"): ["T", "s1", "s3", "s2"],
    # one instance of T releases both chains: its deadline is a + min(D) for both branches
    # (sim::Simulator's chain key), so the tie goes to the priorities
    ("poll", "edf"): ["T", "s1", "s3", "s2"],
    ("poll", "mixed"): ["T", "s1", "s3", "s2"],
    ("poll", "lame"): ["T", "s1", "s2", "s3"],
}


def model_text(scenario: str, policy: str) -> str:
    # lame: one best-effort thread class, so that LaME's own admission rule (a best-effort thread
    # refreshes its queue only when it is empty, LaME Sec. 4.1) is the one compared
    threads = ("thread_classes: [{name: be, kind: be, cores: [0]}]" if policy == "lame" else "threads: 1")
    return (f"chainrt: 1\nname: {scenario}\nhosts: [{{name: h, cores: 1}}]\n"
            f"executors:\n  - name: e\n    host: h\n    policy: {policy}\n    {threads}\n"
            "nodes: [{name: src, executor: e}, {name: work, executor: e}]\n" + SCENARIOS[scenario])


def simulated(text: str) -> list[str]:
    model = load_model_from_string(text)
    _, trace = _core._simulate(model, 500 * MS, 1, None, None, "wcet", "fixed", True, 1000)
    t = json.loads(trace)
    return [t["callbacks"][e[1]] for e in sorted(t["events"], key=lambda e: e[3])]


def runtime_trace(text: str, tmp_path, domain: int) -> list[str]:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    env = chainrt_runtime.ros_environment()
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               CHAINRT_RELEASE_EPOCH_NS=str(time.monotonic_ns() + 3_000 * MS))
    trace = tmp_path / "trace.jsonl"
    p = subprocess.run([str(chainrt_runtime.find_binary()), str(path), "--duration", "300ms", "--warmup", "0ms",
                        "--no-thread-params", "--trace", str(trace)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return [r["callback"] for r in sorted(rows, key=lambda r: r["start"])]


def busy(ns: int) -> None:
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


def mark_in_code(ex: ChainExecutor, model, entities: dict) -> None:
    """What the model says of its callbacks and chains, said in code instead (no model file)."""
    for cb in model.callbacks:
        ex.mark(entities[cb.name], name=cb.name, priority=cb.priority, wcet=cb.wcet / 1e9)
    for ch in model.chains:
        ex.add_chain(ch.name, [entities[c] for c in ch.callbacks], deadline=ch.deadline / 1e9,
                     priority=ch.priority)


def rclpy_trace(text: str, tmp_path, domain: int, monkeypatch, take_order: str = "kind",
                in_code: bool = False, saved: Path | None = None) -> list[str]:
    """The scenario as ordinary rclpy nodes (one per model node, entities created in model order)
    under chainrt.rclpy bound to the model (in_code: no model file, the model's callbacks and
    chains marked in code; saved: where the executor writes the model it ran by)."""
    path = tmp_path / "model.yaml"
    path.write_text(text)
    model = load_model_from_string(text)
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    ran: list[str] = []
    entities: dict = {}
    try:
        nodes = {n.name: Node(n.name, context=context) for n in model.nodes}
        pubs: dict = {}
        for cb in model.callbacks:
            node = nodes[cb.node]
            outs = []
            for t in cb.publishes:
                if t not in pubs:
                    pubs[t] = node.create_publisher(String, t, 10)
                outs.append(pubs[t])

            def work(*_, name=cb.name, wcet=cb.wcet, outs=outs):
                ran.append(name)
                busy(wcet)
                for p in outs:
                    p.publish(String(data=name))
            if cb.kind == "timer":
                entities[cb.name] = node.create_timer(cb.period / 1e9, work)
            else:
                entities[cb.name] = node.create_subscription(String, cb.topic, work, 10)
        monkeypatch.setenv("CHAINRT_RELEASE_EPOCH_NS", str(_rclpy_exec.monotonic_ns() + 1_500 * MS))
        expected = len(simulated(text))
        how = ({"policy": model.executors[0].policy, "threads": 1} if in_code else {"model": str(path)})
        with ChainExecutor(**how, context=context, report=False, take_order=take_order) as ex:
            if in_code:
                mark_in_code(ex, model, entities)
            for n in nodes.values():
                ex.add_node(n)
            end = time.monotonic() + 20
            while len(ran) < expected and time.monotonic() < end:
                ex.spin_once(timeout_sec=0.05)
            settle = time.monotonic() + 0.2  # nothing more may run
            while time.monotonic() < settle:
                ex.spin_once(timeout_sec=0.05)
            if in_code:  # every entity is a callback of the model of the marks
                assert ex.unmatched == [] and ex.unused_model_callbacks == [], ex.unmatched
            if saved is not None:
                ex.save_model(saved)
            ex.shutdown()
    finally:
        try:
            rclpy.shutdown(context=context)
        except Exception:
            pass
    return ran


def test_the_expected_orders_are_of_policies_of_the_descriptor_and_every_scenario():
    # A policy added to the descriptor runs through every dispatcher below at once (the three
    # orders must agree); its expected order here is optional, so a new policy stays two files.
    expected_policies = {p for _, p in EXPECTED}
    assert expected_policies <= set(policy_names())
    assert len(expected_policies) >= 6
    assert set(EXPECTED) == {(s, p) for s in SCENARIOS for p in expected_policies}


@pytest.mark.parametrize("policy", policy_names())
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_simulator_runtime_and_rclpy_executor_dispatch_alike(scenario, policy, tmp_path, monkeypatch):
    if not runtime_built():
        pytest.skip("chainrt-run is not built")
    text = model_text(scenario, policy)
    sim = simulated(text)
    if (scenario, policy) in EXPECTED:  # the scenario still exercises what the policy decides
        assert sim == EXPECTED[(scenario, policy)], f"simulator: {sim}"
    domain = 150 + (os.getpid() + next(_ids)) % 40
    real = runtime_trace(text, tmp_path, domain)
    assert real == sim, f"{policy}/{scenario}\nruntime:   {real}\nsimulator: {sim}"
    py = rclpy_trace(text, tmp_path, domain + 41, monkeypatch)
    assert py == sim, f"{policy}/{scenario}\nrclpy:     {py}\nsimulator: {sim}"


# rclpy's own take order, an explicit option: node n1's subscription S and node n2's timer H
# (released at 150 ms, while F works 400 ms: margins far above the wake-up latency of a loaded
# machine)
# are taken at the same polling point. ROS 2's default order
# (the simulator's, the runtime's, take_order="kind") takes the timer first; rclpy's
# SingleThreadedExecutor (take_order="node") takes node by node, n1 (added first) before n2.
NODE_ORDER = """chainrt: 1
name: take_order
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: ros-default, threads: 1}]
nodes: [{name: n1, executor: e}, {name: n2, executor: e}]
topics: [{name: t, size: 16B}]
callbacks:
  - {name: S, kind: subscription, node: n1, topic: t, wcet: 2ms}
  - {name: F, kind: timer, node: n2, period: 10s, wcet: 400ms, publishes: [t]}
  - {name: H, kind: timer, node: n2, period: 11s, offset: 150ms, wcet: 2ms}
chains:
  - {name: C, callbacks: [F, S], deadline: 100ms}
"""


def test_rclpy_take_order_node_by_node_is_an_explicit_option(tmp_path, monkeypatch):
    sim = simulated(NODE_ORDER)
    assert sim == ["F", "H", "S"]
    domain = 150 + (os.getpid() + next(_ids)) % 40
    assert rclpy_trace(NODE_ORDER, tmp_path, domain, monkeypatch) == sim
    assert rclpy_trace(NODE_ORDER, tmp_path, domain + 41, monkeypatch, take_order="node") == ["F", "S", "H"]
    with pytest.raises(ValueError, match="take_order"):
        ChainExecutor(take_order="alphabetical")


# Priorities and chains marked in the nodes' code, without a model file: the rclpy executor
# dispatches as with the equivalent YAML model (the simulator's order of the YAML, which the
# runtime and the rclpy executor bound to the file follow above), and the model it writes
# (save_model) passes `chainrt check` and says what the YAML says. LaME's thread classes are no
# mark in code (lame is left out).
@pytest.mark.parametrize("policy", [p for p in policy_names() if p != "lame"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_rclpy_marks_in_code_dispatch_as_the_yaml_model(scenario, policy, tmp_path, monkeypatch):
    text = model_text(scenario, policy)
    sim = simulated(text)
    domain = 150 + (os.getpid() + next(_ids)) % 40
    saved = tmp_path / "saved.yaml"
    py = rclpy_trace(text, tmp_path, domain + 41, monkeypatch, in_code=True, saved=saved)
    assert py == sim, f"{policy}/{scenario}\nrclpy, marks in code: {py}\nYAML model:           {sim}"
    p = chainrt_cli(["check", str(saved)], dict(os.environ))
    assert p.returncode == 0, p.stdout + p.stderr
    assert_same_model(load_model_from_string(saved.read_text()), load_model_from_string(text))


def assert_same_model(got, want) -> None:
    """The scheduling content of two models: the policy, the callbacks (kind, node, period, WCET,
    priority, topic, what they publish) and the chains (members, period, deadline, priority)."""
    assert got.executors[0].policy == want.executors[0].policy
    fields = ("kind", "node", "period", "wcet", "priority", "topic")
    got_cbs = {c.name: c for c in got.callbacks}
    assert sorted(got_cbs) == sorted(c.name for c in want.callbacks)
    for w in want.callbacks:
        g = got_cbs[w.name]
        assert [getattr(g, f) for f in fields] == [getattr(w, f) for f in fields], w.name
        assert sorted(g.publishes) == sorted(w.publishes), w.name
    got_chains = {c.name: c for c in got.chains}
    assert sorted(got_chains) == sorted(c.name for c in want.chains)
    for w in want.chains:
        g = got_chains[w.name]
        assert (list(g.callbacks), g.period, g.deadline, g.priority) == (list(w.callbacks), w.period, w.deadline,
                                                                        w.priority), w.name
