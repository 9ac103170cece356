"""Tests of ``chainrt discover`` and ``chainrt profile``.

The pure parts (graph -> skeleton, monitoring messages -> profile, text edits of the model) are
tested without ROS 2. Two end-to-end tests need ROS 2 (rclpy, and the built runtime for the
second) and skip otherwise:

* a graph of plain rclpy nodes in two processes, started by the test (tests/python/ros_nodes/
  graph.py) and spinning under chainrt's rclpy executor (its launcher swaps SingleThreadedExecutor
  for chainrt.rclpy.ChainExecutor; the nodes are unchanged), is discovered; the discovered
  topology must equal the started one; ``profile --write`` fills the execution times from the
  executor's monitoring, recovering each callback's configured work within 10 % on the mean;
  then the model passes ``check`` and ``analyze``, ``simulate`` and ``run`` work on it;
* ``profile --run`` on examples/two_chains.yaml recovers each callback's configured work (the WCET
  the runtime burns as thread CPU time) within 10 % on the mean, with BCET <= WCET.

No wall-clock figure is asserted: execution times are thread CPU time, compared with generous
relative bounds; rates only with a 20 % tolerance on the period the graph's timers were given.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rosutil import have_rclpy, runtime_built
import yaml

from chainrt import discover as dc
from chainrt import output
from chainrt import profile as pf
from chainrt.model import ModelError, load_model_from_string

REPO = Path(__file__).resolve().parents[2]
NODES = REPO / "tests" / "python" / "ros_nodes" / "graph.py"


def _graph() -> dc.Graph:
    g = dc.Graph(observed_s=3, domain="1", rmw="rmw_fastrtps_cpp")
    g.nodes = {"/sensor": "p1", "/filter": "p1", "/control": "p2", "/logger": "p2"}
    g.publishes = {"/sensor": ["/scan", "/status"], "/filter": ["/filtered"], "/control": ["/cmd"], "/logger": []}
    g.subscribes = {"/sensor": [], "/filter": ["/scan"], "/control": ["/filtered"], "/logger": ["/cmd", "/status"]}
    for t, r, s in (("/scan", 50.2, 1016), ("/filtered", 49.9, 1016), ("/cmd", 50.0, 80), ("/status", 10.0, 12)):
        g.topics[t] = dc.TopicStats(type="std_msgs/msg/UInt8MultiArray", count=100, rate_hz=r, size_max=s,
                                    size_mean=s)
    return g


def _callbacks(text: str) -> dict:
    return {c["name"]: c for c in yaml.safe_load(text)["callbacks"]}


def test_skeleton_infers_callbacks_timers_and_chains():
    text = dc.to_yaml(dc.skeleton(_graph(), cores=2))
    cbs = _callbacks(text)
    assert set(cbs) == {"sensor/timer", "sensor/timer_2", "filter/on_scan", "control/on_filtered",
                        "logger/on_cmd", "logger/on_status"}
    assert cbs["sensor/timer"]["period"] == "20ms" and cbs["sensor/timer_2"]["period"] == "100ms"
    assert cbs["filter/on_scan"]["publishes"] == ["filtered"]      # data-driven: the rates match
    assert "publishes" not in cbs["logger/on_cmd"]
    chains = {tuple(c["callbacks"]) for c in yaml.safe_load(text)["chains"]}
    assert chains == {("sensor/timer", "filter/on_scan", "control/on_filtered", "logger/on_cmd"),
                      ("sensor/timer_2", "logger/on_status")}
    data = yaml.safe_load(text)
    assert {e["name"] for e in data["executors"]} == {"control_exec", "filter_exec"}
    assert {t["name"]: t["size"] for t in data["topics"]}["scan"] == "1016B"
    assert "inferred: a timer; period from the median interval" in text
    # without execution times the model is incomplete, and says so for every callback
    with pytest.raises(ModelError) as e:
        load_model_from_string(text, "skeleton.yaml")
    assert all("wcet" in d["message"] for d in e.value.diagnostics)
    assert len(e.value.diagnostics) == 6


def test_skeleton_marks_a_silent_timer_unknown():
    g = _graph()
    g.topics["/status"] = dc.TopicStats(type="std_msgs/msg/String", note="0 message(s) in 3 s: rate not measured")
    text = dc.to_yaml(dc.skeleton(g, cores=2))
    assert "period" not in _callbacks(text)["sensor/timer_2"]
    assert "unknown: period" in text


def test_a_profiled_skeleton_is_a_valid_model(tmp_path):
    path = tmp_path / "skeleton.yaml"
    path.write_text(dc.to_yaml(dc.skeleton(_graph(), cores=2)))
    view = pf.read_model(str(path))
    col = pf.Collection()
    col.add(_msg(cbs={name: {"instances": 4, "cpu_total_ns": 4_000_000, "cpu_max_ns": 1_500_000,
                             "cpu_min_ns": 700_000, "wall_max_ns": 2_000_000} for name in view.callbacks}))
    prof = pf.build_profile(view, col)
    new = pf.apply_changes(view, pf.plan_changes(view, prof), None, "")
    m = load_model_from_string(new, "profiled.yaml")
    assert all(cb.wcet == 1_800_000 and cb.bcet == 700_000 for cb in m.callbacks)
    assert dc.WCET_MARK not in new and new.count(pf.PROFILED_MARK) == 6
    assert "inferred: a timer; period from the median interval" in new


def test_timer_period_from_the_median_gap_not_the_mean_rate():
    g = _graph()
    # a loaded system skipped releases: 27.7 messages/s on average, most gaps still 20 ms
    g.topics["/scan"].rate_hz, g.topics["/scan"].median_gap_s = 27.7, 0.0201
    g.topics["/filtered"].rate_hz = g.topics["/cmd"].rate_hz = 27.6
    assert _callbacks(dc.to_yaml(dc.skeleton(g, cores=2)))["sensor/timer"]["period"] == "20ms"


def test_nice_period_rounding():
    assert dc.nice_period_ns(49.9) == 20_000_000
    assert dc.nice_period_ns(333.3) == 3_000_000
    assert dc.nice_period_ns(1234.0) == 810_000


def _msg(run="r1", ex="main", seq=0, cbs=None, samples=None, chains=None):
    """A monitoring message in its plain form (chainrt.monitor_msg.to_dict)."""
    return {"run_id": run, "executor": ex, "seq": seq, "callbacks": cbs or {}, "samples": samples or {},
            "chains": chains or {}}


SKELETON = """# a comment that must survive
chainrt: 1
nodes:
  - {name: a, executor: e}
  - {name: b, executor: e}
executors:
  - {name: e, process: p}
topics:
  - {name: t, size: 1KiB}
callbacks:
  - {name: src, kind: timer, node: a, period: 10ms, publishes: [t]}   # inferred
  - name: dst
    kind: subscription
    node: b
    topic: t
    wcet: 9ms   # hand-written
chains:
  - {name: c, callbacks: [src, dst]}
"""


def _collection():
    col = pf.Collection()
    cb = {"src": {"instances": 3, "cpu_total_ns": 3_000_000, "cpu_max_ns": 1_200_000, "cpu_min_ns": 800_000,
                  "wall_max_ns": 1_500_000},
          # matched by node, kind and topic: an executor that does not know the model's names
          "cb7": {"instances": 3, "cpu_total_ns": 6_000_000, "cpu_max_ns": 2_500_000, "wall_max_ns": 3_000_000,
                  "node": "/b", "kind": "subscription", "topic": "/t"}}
    s = {"src": {"start_ns": [0, 10_000_000, 20_000_000], "wall_ns": [1_000_000] * 3,
                 "cpu_ns": [800_000, 1_000_000, 1_200_000], "release_ns": [1, 10_000_001, 20_000_001]},
         "cb7": {"start_ns": [1_100_000, 11_050_000, 21_200_000], "wall_ns": [2_000_000] * 3,
                 "cpu_ns": [1_500_000, 2_000_000, 2_500_000], "release_ns": [1, 10_000_001, 20_000_001]}}
    col.add(_msg(cbs=cb, samples=s))
    col.add(_msg(cbs=cb, samples=s))             # a duplicate (same seq): ignored
    col.add(_msg(run="other", cbs=cb), run_id="r1")  # another run: ignored
    col.add({"run_id": "r1", "callbacks": "not a mapping"})
    return col


def test_profile_from_monitoring_messages(tmp_path):
    col = _collection()
    assert col.messages == 1 and col.ignored == 2
    path = tmp_path / "m.yaml"
    path.write_text(SKELETON)
    view = pf.read_model(str(path))
    prof = pf.build_profile(view, col, margin=0.5)
    src, dst = prof["callbacks"]["src"], prof["callbacks"]["dst"]
    assert src["bcet_ns"] == 800_000 and src["wcet_ns"] == 1_800_000        # max x 1.5
    assert dst["monitored_as"] == "cb7" and dst["wcet_ns"] == 3_750_000
    assert dst["bcet_ns"] == 1_500_000 <= dst["wcet_ns"]                    # min of the samples
    assert src["inter_arrival_ns"]["mean"] == 10_000_000
    (hop,) = prof["hops"]
    assert hop["kind"] == "intra_process" and hop["size"] == "1KiB"
    assert hop["latency_ns"]["min"] == 50_000 and hop["latency_ns"]["max"] == 200_000
    changes = pf.plan_changes(view, prof)
    assert {(c.callback, c.field, c.old) for c in changes} == {
        ("src", "wcet", None), ("src", "bcet", None), ("dst", "wcet", "9ms"), ("dst", "bcet", None)}
    new = pf.apply_changes(view, changes, pf.measurements_of(prof), "measured")
    assert "# a comment that must survive" in new and "# hand-written" in new and "# inferred" in new
    m = load_model_from_string(new, "profiled.yaml")
    by = {c.name: c for c in m.callbacks}
    assert by["src"].wcet == 1_800_000 and by["src"].bcet == 800_000
    assert by["dst"].wcet == 3_750_000 and by["dst"].bcet == 1_500_000
    assert "latency: 100us" in new          # the median hop latency
    # a second profile replaces the measurements instead of adding a second section
    path.write_text(new)
    view2 = pf.read_model(str(path))
    again = pf.apply_changes(view2, pf.plan_changes(view2, prof), pf.measurements_of(prof), "measured")
    assert again == new


def test_two_timers_of_one_node_are_told_apart_by_their_period(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(dc.to_yaml(dc.skeleton(_graph(), cores=2)))
    view = pf.read_model(str(path))
    col = pf.Collection()
    agg = {"instances": 4, "cpu_total_ns": 4_000_000, "cpu_max_ns": 1_000_000, "wall_max_ns": 1_000_000}
    col.add(_msg(cbs={"fast": dict(agg, node="/sensor", kind="timer", cpu_max_ns=2_000_000),
                      "slow": dict(agg, node="/sensor", kind="timer", cpu_max_ns=3_000_000)},
                 samples={"fast": {"release_ns": [20_000_000 * k for k in range(1, 6)]},
                          "slow": {"release_ns": [100_000_000 * k for k in range(1, 6)]}}))
    prof = pf.build_profile(view, col, margin=0.0)
    assert prof["callbacks"]["sensor/timer"]["monitored_as"] == "fast"      # period 20ms
    assert prof["callbacks"]["sensor/timer_2"]["monitored_as"] == "slow"    # period 100ms


def test_without_minimum_or_samples_bcet_is_left_alone(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(SKELETON)
    view = pf.read_model(str(path))
    col = pf.Collection()
    col.add(_msg(cbs={"src": {"instances": 3, "cpu_total_ns": 3_000_000, "cpu_max_ns": 1_200_000,
                              "cpu_min_ns": 0, "wall_max_ns": 1_500_000}}))
    prof = pf.build_profile(view, col, margin=0.0)
    assert prof["callbacks"]["src"]["bcet_ns"] is None and prof["callbacks"]["src"]["wcet_ns"] == 1_200_000
    assert [(c.callback, c.field) for c in pf.plan_changes(view, prof)] == [("src", "wcet")]
    assert prof["missing"] == ["dst"]


def test_profile_errors_are_one_line(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(SKELETON)
    view = pf.read_model(str(path))
    with pytest.raises(pf.ProfileError, match="no monitoring message"):
        pf.build_profile(view, pf.Collection())
    col = pf.Collection()
    col.add(_msg(cbs={"zzz": {"instances": 1, "cpu_total_ns": 1, "cpu_max_ns": 1, "wall_max_ns": 1}}))
    with pytest.raises(pf.ProfileError, match="none of the model's callbacks"):
        pf.build_profile(view, col)
    (tmp_path / "bad.yaml").write_text("callbacks: [\n")
    with pytest.raises(pf.ProfileError, match="bad.yaml:"):
        pf.read_model(str(tmp_path / "bad.yaml"))


def test_profile_cli_rejects_bad_input(tmp_path):
    env = dict(os.environ)
    for args, msg in ((["profile", str(tmp_path / "missing.yaml")], "No such file"),
                      (["profile", str(REPO / "examples" / "two_chains.yaml"), "--margin", "x"], "margin"),
                      (["profile", str(tmp_path)], "Is a directory")):
        r = subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True, env=env)
        assert r.returncode == 1 and msg in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- with ROS 2

def _ros_env(domain: int) -> dict:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return env


def _chainrt(args, env, timeout=180):
    return subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


# rclpy's own cost around a callback (take, publish, the call from Python), counted in its CPU time
RCLPY_OVERHEAD_NS = 800_000
# what a publish of a few KiB costs the publisher's thread in CPU time (serialisation and the
# middleware's send; 0.15-0.25 ms on the median on the 2-core test VM)
PUBLISH_NS = 400_000


def _have_chainrt_rclpy() -> bool:
    try:
        from chainrt import _rclpy_exec  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not (have_rclpy() and _have_chainrt_rclpy()),
                    reason="needs rclpy and chainrt's rclpy executor (built with the runtime)")
def test_discover_a_running_rclpy_graph_then_profile_check_and_run(tmp_path):
    spec = importlib.util.spec_from_file_location("ros_graph", NODES)
    graph = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph)
    WORK_NS = graph.WORK_NS
    env = _ros_env(71)
    procs = [subprocess.Popen([sys.executable, str(NODES), p, "--chainrt"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for p in ("front", "back")]
    model = tmp_path / "discovered.yaml"
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        r = _chainrt(["discover", "--duration", "3s", "--settle", "10s", "--expect-nodes", "4",
                      "-o", str(model)], env)
        assert r.returncode == 0, r.stderr
        data = yaml.safe_load(model.read_text())
        # the discovered topology is the started one
        assert {n["name"] for n in data["nodes"]} == {"sensor", "filter", "control", "logger"}
        execs = {n["name"]: n["executor"] for n in data["nodes"]}
        assert execs["sensor"] == execs["filter"] != execs["control"] == execs["logger"]
        assert {t["name"] for t in data["topics"]} == {"scan", "filtered", "cmd", "status"}
        cbs = {c["name"]: c for c in data["callbacks"]}
        edges = {(c["node"], c.get("topic"), tuple(c.get("publishes", []))) for c in cbs.values()}
        assert edges == {("sensor", None, ("scan",)), ("sensor", None, ("status",)),
                         ("filter", "scan", ("filtered",)), ("control", "filtered", ("cmd",)),
                         ("logger", "cmd", ()), ("logger", "status", ())}
        from chainrt._core import parse_duration
        periods = sorted(parse_duration(c["period"]) / 1e6 for c in cbs.values() if c["kind"] == "timer")
        # written exactly (the fitted period, within the tolerance its measurement allows)
        for c in cbs.values():
            if c["kind"] == "timer":
                p, tol = parse_duration(c["period"]), parse_duration(c["period_tolerance"])
                # (the tolerance follows the send jitter: wide only on a starved machine)
                assert min(abs(p - 20_000_000), abs(p - 100_000_000)) <= tol < 0.05 * p, c
        # measured from the rates: a timer never fires early, but a loaded machine delays it
        assert 16 <= periods[0] < 60 and 80 <= periods[1] < 300, periods
        sizes = {t["name"]: int(t["size"].rstrip("B")) for t in data["topics"]}
        assert sizes["scan"] >= 1000 and sizes["status"] < 100
        assert {tuple(c["callbacks"]) for c in data["chains"]} == {
            ("sensor/timer", "filter/on_scan", "control/on_filtered", "logger/on_cmd"),
            ("sensor/timer_2", "logger/on_status")}
        assert _chainrt(["check", str(model)], env).returncode == 1   # execution times still missing
        # profile from the monitoring of the executor the nodes spin under (chainrt.rclpy)
        r = _chainrt(["profile", str(model), "--duration", "3s", "--write"], env)
        assert r.returncode == 0, r.stderr
        assert model.with_suffix(".profile.json").is_file()
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=20)
    r = _chainrt(["check", str(model)], env)
    assert r.returncode == 0, r.stdout + r.stderr
    prof = json.loads(model.with_suffix(".profile.json").read_text())
    for name, row in prof["callbacks"].items():
        assert row["bcet_ns"] <= row["wcet_ns"]
    # every callback burns WORK_NS of thread CPU time; the executor measures the whole callback:
    # that work plus rclpy's take (deserialisation), the publish and Python's call, which cost
    # 0.05-0.5 ms per instance on the median on the 2-core test VM (more while its host is busy).
    # The profile recovers the work within 10 % above that allowance on the median and on the
    # least instance, never below it, and reports that real minimum (BCET).
    # (The median, not the mean: without IRQ time accounting in the kernel, interrupts and softirqs
    # -- the loopback packets of every DDS message among them -- count as the CPU time of the thread
    # they interrupt, and lift the mean of a 3 s profile by a few hundred microseconds on a loaded
    # machine.)
    assert set(prof["callbacks"]) == set(WORK_NS)
    for name, work in WORK_NS.items():
        row = prof["callbacks"][name]
        assert work <= row["cpu_ns"]["mean"], (name, row["cpu_ns"])
        assert work <= row["cpu_ns"]["p50"] <= 1.10 * work + RCLPY_OVERHEAD_NS, (name, row["cpu_ns"])
        assert work <= row["cpu_ns"]["min"] <= 1.10 * work + RCLPY_OVERHEAD_NS, (name, row["cpu_ns"])
        assert row["bcet_ns"] == row["cpu_ns"]["min"] // 1000 * 1000
    assert _chainrt(["analyze", str(model)], env).returncode in (0, 2)
    assert _chainrt(["simulate", str(model), "--duration", "1s"], env).returncode == 0
    if runtime_built():
        r = _chainrt(["run", str(model), "--duration", "1s", "--no-compare", "--json"], env)
        assert r.returncode in (0, 2), r.stderr
        assert set(json.loads(r.stdout)["chains"]) == {c["name"] for c in data["chains"]}


@pytest.mark.skipif(not (have_rclpy() and runtime_built()), reason="needs rclpy and the built runtime")
def test_profile_recovers_the_configured_work_of_two_chains(tmp_path):
    model = tmp_path / "two_chains.yaml"
    shutil.copy(REPO / "examples" / "two_chains.yaml", model)
    configured = {"hi_pub": 2_500_000, "hi_sub": 2_500_000, "lo_pub": 10_000_000, "lo_sub": 10_000_000}
    r = _chainrt(["profile", str(model), "--run", "--duration", "3s", "--json"], _ros_env(72))
    assert r.returncode == 0, r.stderr
    prof = json.loads(r.stdout)
    for name, work in configured.items():
        row = prof["callbacks"][name]
        assert row["instances"] >= (5 if name.startswith("hi") else 1)   # the low chain: 5 Hz
        # thread CPU time: the configured work (burnt in thread CPU time) plus, for a publisher, its
        # publish; within 10 % on the median, never below the work
        allowance = PUBLISH_NS if name.endswith("_pub") else 0
        assert work <= row["cpu_ns"]["min"] <= row["cpu_ns"]["p50"] <= row["cpu_ns"]["max"], (name, row["cpu_ns"])
        assert row["cpu_ns"]["p50"] <= 1.10 * work + allowance, (name, row["cpu_ns"])
        assert work <= row["cpu_ns"]["mean"], (name, row["cpu_ns"])
        assert row["bcet_ns"] <= row["wcet_ns"]
        assert row["wcet_ns"] >= row["cpu_ns"]["max"] * 1.2 - 1000   # the default margin
    assert set(prof["chains"]) == {"high", "low"}
    assert {(h["from"], h["to"]) for h in prof["hops"]} == {("hi_pub", "hi_sub"), ("lo_pub", "lo_sub")}
    assert model.read_text() == (REPO / "examples" / "two_chains.yaml").read_text()  # no --write


# --------------------------------------------------------------------------- exact periods, unusual graphs

def _sends(period_ns: int, n: int, jitter_ns: int = 0, phase_ns: int = 0, skip=(), seed: int = 1) -> list[int]:
    import random
    rnd = random.Random(seed)
    t0 = 1_700_000_000_000_000_000 + phase_ns
    return [t0 + k * period_ns + (rnd.randrange(jitter_ns) if jitter_ns else 0) for k in range(n) if k not in skip]


def test_period_fit_is_exact_to_the_precision_the_observation_allows():
    # a 30 Hz timer (rclpy: 33333333 ns) sending with up to 2 ms of jitter, 10 % of releases skipped
    p = 33_333_333
    fit = dc.fit_period(_sends(p, 180, jitter_ns=2_000_000, skip=set(range(0, 180, 10))))
    assert fit.periodic and fit.skipped == 17   # (the first skipped release is before the first message)
    assert abs(fit.period_ns - p) <= 4 * fit.stderr_ns
    period, tol = dc.exact_period(fit)
    assert abs(period - p) <= tol < 50_000                      # binds the real timer, not a 1 % guess
    assert period == p  # 30 Hz lies within the fit's bound: written as rclpy makes 1/30 s
    # without jitter the period is known to the microsecond or better; a whole-ms timer stays round
    period, tol = dc.exact_period(dc.fit_period(_sends(p, 60)))
    assert abs(period - p) <= 1_000 and tol == 4_000          # 100 ppm of the period, rounded up
    assert dc.exact_period(dc.fit_period(_sends(20_000_000, 100, jitter_ns=500_000)))[0] == 20_000_000
    # a loaded executor that takes only 2 of every 5 releases: still one timer of that period
    fit = dc.fit_period(_sends(p, 300, jitter_ns=1_000_000, skip={k for k in range(300) if k % 5 in (1, 2, 3)}))
    assert fit.periodic and abs(fit.period_ns - p) <= 4 * fit.stderr_ns + 1


def test_a_period_fit_with_sends_delayed_by_most_of_a_period():
    # a 30 Hz camera whose every 6th send waits 0.8 of a period behind a low chain's long
    # callbacks on the same executor thread: one timer of 33.3 ms, not one of 16.7 ms
    p = 33_333_333
    ts = _sends(p, 180, jitter_ns=1_000_000)
    ts = [t + (int(0.8 * p) if k % 6 == 3 else 0) for k, t in enumerate(ts)]
    fit = dc.fit_period(ts)
    assert fit.periodic and abs(fit.period_ns - p) <= 4 * fit.stderr_ns + 1, fit
    period, tol = dc.exact_period(fit)
    assert abs(period - p) <= tol < p // 100


def test_a_whole_rate_within_the_fit_is_written_as_that_rate():
    # a loaded 30 Hz rclpy timer once fitted as 33.360 ms +- 47 us: 30 Hz (33333333 ns) lies within
    # the fit, and is what is written; the tolerance still holds the fitted period
    import dataclasses
    fit = dc.fit_period(_sends(33_333_333, 90, jitter_ns=1_000_000))
    loaded = dataclasses.replace(fit, period_ns=33_360_000.0, bound_ns=47_000.0)
    period, tol = dc.exact_period(loaded)
    assert period == 33_333_333 and output.exact_duration(period) == "33333333ns"
    assert abs(33_360_000 - period) <= tol
    # no whole rate within a tighter fit: the fitted period stands; a whole millisecond stays one
    assert dc.exact_period(dataclasses.replace(fit, period_ns=33_360_000.0, bound_ns=10_000.0))[0] == 33_360_000
    assert dc.exact_period(dataclasses.replace(fit, period_ns=20_000_900.0, bound_ns=20_000.0))[0] == 20_000_000
    assert dc.exact_period(dataclasses.replace(fit, period_ns=142_857_000.0, bound_ns=5_000.0))[0] == 142_857_142
    # loaded sends: wherever the fit allows 30 Hz, 30 Hz is written
    allowed = 0
    for seed in range(15):
        fit = dc.fit_period(_loaded_sends(33_333_333, 180, seed))
        if abs(fit.period_ns - 33_333_333) <= fit.bound_ns:
            allowed += 1
            assert dc.exact_period(fit)[0] == 33_333_333, (seed, fit)
    assert allowed >= 5


def test_the_skeleton_tells_how_to_choose_a_chain_aware_policy():
    text = dc.to_yaml(dc.skeleton(_robot_graph(), cores=2))
    assert "policy: ros-default" in text
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("chainrt synthesize THIS_FILE" in line for line in header)
    assert any("`policy: fp`, `edf` or `picas`" in line for line in header)


def _starved_sends(n: int) -> list[int]:
    """A 100 ms timer on an executor starved more and more: its sends wait 60-210 us (wake-up)
    at first, then, from a third of the observation on, three sends in four also wait behind
    another callback for 1-3 ms, longer and longer; twice a burst of starvation delays sends by
    several ms; three releases are skipped. Every delay is late, none early."""
    p, t0 = 100_000_000, 1_700_000_000_000_000_000
    out = []
    for k in range(n):
        d = 60_000 + (k * 37 % 11) * 15_000
        if k % 4 and k >= n // 3:
            d += 1_000_000 + 2_000_000 * (k - n // 3) // n + (k * 13 % 7) * 20_000
        d += {n // 4: 3_000_000, n // 4 + 1: 1_500_000, 3 * n // 4: 4_000_000}.get(k, 0)
        if k not in (7, 21, 35):
            out.append(t0 + k * p + d)
    return out


def test_a_period_fit_under_delays_that_drift_late():
    # a fit through the sends follows the drift (100.036 ms) and its standard error (+-21 us)
    # hides it; the floor of the delays gives the timer's period
    fit = dc.fit_period(_starved_sends(80))
    assert fit.periodic and fit.skipped == 3
    period, tol = dc.exact_period(fit)
    assert period == 100_000_000 and tol < 100_000, (period, tol)
    for n in (40, 60, 120):
        period, tol = dc.exact_period(dc.fit_period(_starved_sends(n)))
        assert abs(period - 100_000_000) <= tol < 200_000, (n, period, tol)


def _loaded_sends(period_ns: int, n: int, seed: int) -> list[int]:
    """Sends of a timer on a loaded executor (seeded): the wake-up (exponential, 0.1 ms), an
    autocorrelated starvation that grows over the observation, a wait behind another callback
    (about 1.4 ms) ever more likely, bursts of 2-8 ms over a few periods, 5 % of the releases
    skipped; every delay late."""
    import random
    rnd = random.Random(seed)
    t0 = 1_700_000_000_000_000_000
    out, starve, burst, extra = [], 0.0, 0, 0.0
    for k in range(n):
        f = k / (n - 1)
        starve = 0.6 * starve + (rnd.expovariate(1 / (2e6 * f + 1)) if rnd.random() < 0.1 + 0.5 * f else 0.0)
        behind = 1.1e6 + rnd.expovariate(1 / 3e5) if rnd.random() < 0.1 + 0.7 * f else 0.0
        if burst == 0 and rnd.random() < 0.05:
            burst, extra = rnd.randint(2, 5), rnd.uniform(2e6, 8e6)
        d = rnd.expovariate(1 / 1e5) + starve + behind + (extra if burst else 0.0)
        burst = max(0, burst - 1)
        if k in (0, n - 1) or rnd.random() >= 0.05:
            out.append(t0 + k * period_ns + int(d))
    return out


def test_the_true_period_lies_within_the_written_tolerance_under_load():
    for p, n in ((100_000_000, 30), (100_000_000, 50), (20_000_000, 150), (33_333_333, 180)):
        for seed in range(15):
            fit = dc.fit_period(_loaded_sends(p, n, seed))
            period, tol = dc.exact_period(fit)
            assert fit.periodic and abs(period - p) <= tol < p // 20, (p, n, seed, period, tol)


def _least_squares_tolerance(ts: list[int], p: int) -> float:
    """5 standard errors of a least-squares period over every send, at least 100 ppm: a fair
    tolerance where send jitter is independent and symmetric."""
    import numpy as np
    k = np.array([round((t - ts[0]) / p) for t in ts], dtype=float)
    t = np.array([x - ts[0] for x in ts], dtype=float)
    slope, icpt = np.polyfit(k, t, 1)
    res = t - (icpt + slope * k)
    se = np.sqrt((res ** 2).sum() / (len(t) - 2) / ((k - k.mean()) ** 2).sum())
    return max(5 * se, 1e-4 * p)


def test_the_tolerance_stays_tight_for_clean_sends():
    # independent jitter: the floor's tolerance is at most a few times the least-squares one
    for p, n in ((100_000_000, 30), (20_000_000, 100), (33_333_333, 180)):
        for jitter in (100_000, 2_000_000):
            ratios = []
            for seed in range(12):
                ts = _sends(p, n, jitter_ns=jitter, seed=seed)
                period, tol = dc.exact_period(dc.fit_period(ts))
                assert abs(period - p) <= tol, (p, jitter, seed)
                ratios.append(tol / _least_squares_tolerance(ts, p))
            ratios.sort()
            assert ratios[-1] <= 5 and ratios[len(ratios) // 2] <= 2.5, (p, jitter, ratios)
    assert dc.exact_period(dc.fit_period(_sends(100_000_000, 30, jitter_ns=100_000)))[0] == 100_000_000


def test_two_interleaved_timers_are_not_one_period():
    # (timers whose periods share a fine common grid, 100 and 150 ms, can look like one 33 ms
    # timer with skipped releases: send times cannot tell them apart; docs/workflow.md)
    a = _sends(100_000_000, 40)
    b = _sends(70_000_000, 57, phase_ns=13_000_000)
    fit = dc.fit_period(a + b)
    assert not fit.periodic and fit.why


def _robot_graph() -> dc.Graph:
    g = dc.Graph(observed_s=6, domain="1", rmw="rmw_fastrtps_cpp")
    key = "p"
    g.nodes = {n: key for n in ("/camera", "/detector", "/planner", "/map")}
    g.publishes = {"/camera": ["/image"], "/detector": ["/detections"], "/planner": ["/cmd"], "/map": []}
    g.subscribes = {"/camera": [], "/detector": ["/image"], "/planner": ["/detections"], "/map": []}
    g.services = {"/map": ["/map/query"]}
    g.clients = {"/planner": ["/map/query"]}
    p = 33_333_333
    for t, who, lag in (("/image", "/camera", 0), ("/detections", "/detector", 9_000_000), ("/cmd", "/planner", 15_000_000)):
        st = dc.TopicStats(type="std_msgs/msg/UInt8MultiArray", types=["std_msgs/msg/UInt8MultiArray"], count=180,
                           rate_hz=30.0, size_max=102400 if t == "/image" else 64, size_mean=100)
        st.sends[who] = _sends(p, 180, jitter_ns=300_000, phase_ns=lag)
        st.fits[who] = dc.fit_period(st.sends[who])
        g.topics[t] = st
    return g


def test_skeleton_models_a_service_hop_and_an_exact_period():
    text = dc.to_yaml(dc.skeleton(_robot_graph(), cores=2))
    data = yaml.safe_load(text)
    cbs = {c["name"]: c for c in data["callbacks"]}
    assert cbs["map/on_map_query_request"] == {"name": "map/on_map_query_request", "kind": "service", "node": "map",
                                                "service": "map/query"}
    assert cbs["planner/on_detections"]["calls"] == ["map/query"] and "publishes" not in cbs["planner/on_detections"]
    assert cbs["planner/on_map_query_response"]["kind"] == "client"
    assert cbs["planner/on_map_query_response"]["publishes"] == ["cmd"]
    assert {s["name"] for s in data["services"]} == {"map/query"}
    assert [tuple(c["callbacks"]) for c in data["chains"]] == [
        ("camera/timer", "detector/on_image", "planner/on_detections", "map/on_map_query_request",
         "planner/on_map_query_response")]
    period = cbs["camera/timer"]["period"]
    from chainrt._core import parse_duration
    assert period != "33ms" and abs(parse_duration(period) - 33_333_333) <= 1000, period
    assert "period_tolerance" in cbs["camera/timer"]
    # profiled, it is a valid model whose chain runs through the service
    for c in data["callbacks"]:
        c["wcet"] = "1ms"
    m = load_model_from_string(yaml.safe_dump(data), "robot.yaml")
    hops = m.chain(data["chains"][0]["name"]).hops
    assert [h.kind for h in hops] == ["topic", "topic", "request", "response"]


def test_a_node_never_publishes_its_own_input():
    g = _graph()
    # /filter also publishes /scan (a relay of its own input would be a loop): from a timer
    g.publishes["/filter"] = ["/filtered", "/scan"]
    cbs = _callbacks(dc.to_yaml(dc.skeleton(g, cores=2)))
    assert "scan" not in cbs["filter/on_scan"].get("publishes", [])
    assert cbs["filter/timer"]["publishes"] == ["scan"]


def test_two_timers_of_one_period_in_one_node_are_told_apart_by_their_phase():
    g = _graph()
    p = 20_000_000
    for t, phase in (("/scan", 0), ("/status", 7_000_000)):
        st = g.topics[t]
        st.sends = {"/sensor": _sends(p, 150, jitter_ns=100_000, phase_ns=phase)}
        st.fits = {"/sensor": dc.fit_period(st.sends["/sensor"])}
    cbs = _callbacks(dc.to_yaml(dc.skeleton(g, cores=2)))
    assert cbs["sensor/timer"]["publishes"] == ["scan"] and cbs["sensor/timer_2"]["publishes"] == ["status"]
    # sent together in every period: one timer publishing both
    g.topics["/status"].sends = {"/sensor": _sends(p, 150, jitter_ns=100_000, phase_ns=50_000)}
    g.topics["/status"].fits = {"/sensor": dc.fit_period(g.topics["/status"].sends["/sensor"])}
    cbs = _callbacks(dc.to_yaml(dc.skeleton(g, cores=2)))
    assert cbs["sensor/timer"]["publishes"] == ["scan", "status"] and "sensor/timer_2" not in cbs


def test_a_topic_published_by_two_timers_of_one_node_has_no_made_up_period():
    g = _graph()
    st = g.topics["/status"]
    st.sends = {"/sensor": _sends(100_000_000, 30) + _sends(70_000_000, 43, phase_ns=31_000_000)}
    st.fits = {"/sensor": dc.fit_period(st.sends["/sensor"])}
    sk = dc.skeleton(g, cores=2)
    text = dc.to_yaml(sk)
    assert "period" not in _callbacks(text)["sensor/timer_2"]
    assert "not one periodic timer" in text and any("not sent by one periodic timer" in w for w in sk.warnings)


def test_a_topic_with_two_types_is_said_and_not_connected_across_types():
    g = _graph()
    g.topics["/cmd"].types = ["std_msgs/msg/UInt8MultiArray", "std_msgs/msg/String"]
    g.pub_types[("/control", "/cmd")] = "std_msgs/msg/UInt8MultiArray"
    g.sub_types[("/logger", "/cmd")] = "std_msgs/msg/String"
    sk = dc.skeleton(g, cores=2)
    text = dc.to_yaml(sk)
    assert "WARNING: topic /cmd has 2 types" in text and "unknown: the topic has 2 types" in text
    chains = {tuple(c["callbacks"]) for c in yaml.safe_load(text)["chains"]}
    assert ("sensor/timer", "filter/on_scan", "control/on_filtered") in chains      # ends before the type change
    assert not any("logger/on_cmd" in c for c in chains)


def test_nodes_that_came_or_went_while_observing_are_said():
    g = _graph()
    g.observed_s = 6.0
    g.presence = {"/sensor": (0.0, 6.0), "/filter": (0.0, 6.0), "/control": (2.5, 6.0), "/logger": (0.0, 3.0)}
    g.duplicates = ["/filter"]
    sk = dc.skeleton(g, cores=2)
    text = dc.to_yaml(sk)
    assert "WARNING: node /control appeared 2.5 s into the observation" in text
    assert "WARNING: node /logger was gone 3.0 s into it" in text
    assert "WARNING: several nodes are named /filter" in text
    nodes = {n["name"] for n in yaml.safe_load(text)["nodes"]}
    assert nodes == {"sensor", "filter", "control", "logger"}


def test_a_period_fit_behind_long_callbacks_on_one_thread():
    # the user robot's camera (30 Hz) on one executor thread with a 5 Hz logger (25 ms) and its
    # uploader (15 ms): of every six sends one waits 0.8 of a period and one a quarter, and the
    # punctual ones are only about two thirds -- still one timer of 33.3 ms, not one of 16.7 ms
    p = 33_333_333
    ts = _sends(p, 180, jitter_ns=1_000_000)
    delay = {2: int(0.25 * p), 3: int(0.8 * p)}
    ts = [t + delay.get(k % 6, 0) for k, t in enumerate(ts)]
    fit = dc.fit_period(ts)
    assert fit.periodic and abs(fit.period_ns - p) <= 4 * fit.stderr_ns + 1, fit
    period, tol = dc.exact_period(fit)
    assert abs(period - p) <= tol < p // 100


def test_two_timers_of_one_period_on_one_topic_are_not_one_timer():
    # two publishers' worth of sends on one grid period but two phases: never one timer of that
    # period (every period would hold two sends), whatever the share of each phase
    p = 33_333_333
    for phase in (0.3, 0.5, 0.8):
        ts = _sends(p, 90, jitter_ns=500_000) + _sends(p, 90, jitter_ns=500_000, phase_ns=int(phase * p), seed=2)
        fit = dc.fit_period(ts)
        assert not (fit.periodic and abs(fit.period_ns - p) < p // 100), (phase, fit)


def test_profile_writes_the_executors_own_time_per_dispatch(tmp_path):
    """dst is ready when src finishes (same release) and starts 100, 50 and 200 us later: the
    executor's own time per dispatch is up to 200 us; src's gaps after an idle thread are not."""
    col = _collection()
    one = col.sources[("r1", "main")]
    col.sources = {("r1", "e"): one}
    path = tmp_path / "m.yaml"
    path.write_text(SKELETON)
    view = pf.read_model(str(path))
    prof = pf.build_profile(view, col, margin=0.5)
    assert prof["dispatch_overhead_ns"] == {"e": 200_000}
    changes = pf.plan_changes(view, prof)
    assert ("e", "dispatch_overhead", None, "200us", "executors") in {
        (c.callback, c.field, c.old, c.new, c.section) for c in changes}
    new = pf.apply_changes(view, changes, None, "")
    assert load_model_from_string(new, "profiled.yaml").executors[0].dispatch_overhead == 200_000
    one.lost = 1  # a lost dispatch would count as the executor's own time: left out
    assert pf.build_profile(view, col)["dispatch_overhead_ns"] == {}
