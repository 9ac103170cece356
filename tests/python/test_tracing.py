"""Tests of standard tracing (docs/tracing.md): the trace analysis on synthetic events (pure),
the CARET export, the command line, and -- when LTTng can record here (lttng-tools, the built
tracing libraries, Babeltrace 2's Python bindings) -- real recordings: an rclpy program under
rclpy's own executor, and examples/two_chains.yaml under chainrt, whose trace-report must agree
with the executor's own monitoring of the same run (same instances; same latencies up to the
few microseconds between the executor's clock reading and its callback_end event). Without
LTTng those are skipped with the reason. No wall-clock number is asserted."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from chainrt import tracing, tracing_caret
from chainrt.cli import main
from chainrt.model import load_model
from chainrt.tracing import Event, analyze

REPO = Path(__file__).resolve().parents[2]
TWO = str(REPO / "examples/two_chains.yaml")


# ---------------------------------------------------------------------------------------------
# Analysis on synthetic events


def _topology(pid, node=0x10, pub=0x20, rmw_pub=0x21, sub=0x30, rmw_sub=0x31, topic="/hi_data"):
    return [
        Event(1, "ros2:rcl_node_init", {"node_handle": node, "rmw_handle": 1, "node_name": "hi_sensor",
                                        "namespace": "/"}, pid, pid),
        Event(2, "ros2:rcl_publisher_init", {"publisher_handle": pub, "node_handle": node,
                                             "rmw_publisher_handle": rmw_pub, "topic_name": topic,
                                             "queue_depth": 10}, pid, pid),
        Event(3, "ros2:rcl_subscription_init", {"subscription_handle": sub, "node_handle": node,
                                                "rmw_subscription_handle": rmw_sub, "topic_name": topic,
                                                "queue_depth": 10}, pid, pid),
    ]


def test_chain_latency_is_callback_end_minus_release():
    pid, tid = 7, 8
    ev = _topology(pid)
    ev += [Event(10, "chainrt:chain_init", {"executor": 1, "chain": 0, "name": "high", "period": 100,
                                            "deadline": 50}, pid, tid),
           Event(11, "chainrt:chain_callback", {"executor": 1, "chain": 0, "position": 1, "callback": 0xCB,
                                                "name": "hi_sub", "leaf": 1}, pid, tid)]
    # instance 0: release 100, leaf ends at 130 -> 30; instance 1: release 200, ends at 270 -> 70 (miss)
    for release, start, end, inst in ((100, 120, 130, 0), (200, 240, 270, 1)):
        ev += [Event(start, "ros2:callback_start", {"callback": 0xCB, "is_intra_process": 0}, pid, tid),
               Event(end, "ros2:callback_end", {"callback": 0xCB}, pid, tid),
               Event(end + 3, "chainrt:chain_complete", {"executor": 1, "chain": 0, "instance": inst,
                                                         "callback": 0xCB, "release": release,
                                                         "deadline": release + 50, "missed": 0}, pid, tid)]
    rep = analyze(ev)
    c = rep.chains["high"]
    assert c["instances"] == 2 and c["wcrt_ns"] == 70 and c["bcrt_ns"] == 30
    assert c["mean_ns"] == 50 and c["deadline_misses"] == 1 and c["deadline_ns"] == 50
    assert rep.callbacks["hi_sub"]["instances"] == 2 and rep.callbacks["hi_sub"]["wcrt_ns"] == 30
    assert not any("end-to-end" in x for x in rep.not_derivable)


def test_completion_without_its_callback_end_is_skipped_not_guessed():
    pid = 3
    ev = [Event(1, "chainrt:chain_init", {"executor": 1, "chain": 0, "name": "c", "period": 1, "deadline": 0}, pid, 4),
          Event(5, "ros2:callback_end", {"callback": 0xAA}, pid, 4),
          Event(6, "chainrt:chain_complete", {"executor": 1, "chain": 0, "instance": 0, "callback": 0xBB,
                                              "release": 1, "deadline": 0, "missed": 0}, pid, 4)]
    rep = analyze(ev)
    assert "c" not in rep.chains
    assert any("no matching callback_end" in n for n in rep.notes)


def test_hops_match_publish_and_take_by_topic_and_source_timestamp_per_process():
    # two processes use the same handle values: they must not be confused
    a, b = 100, 200
    ev = _topology(a) + _topology(b, topic="/lo_data")
    ev += [Event(1000, "ros2:rmw_publish", {"rmw_publisher_handle": 0x21, "message": 1, "timestamp": 555}, a, a),
           Event(1000, "ros2:rmw_publish", {"rmw_publisher_handle": 0x21, "message": 1, "timestamp": 556}, b, b),
           Event(1400, "ros2:rmw_take", {"rmw_subscription_handle": 0x31, "message": 2, "source_timestamp": 555,
                                         "taken": 1}, a, a + 1),
           Event(1900, "ros2:rmw_take", {"rmw_subscription_handle": 0x31, "message": 2, "source_timestamp": 556,
                                         "taken": 1}, b, b + 1),
           Event(2000, "ros2:rmw_take", {"rmw_subscription_handle": 0x31, "message": 2, "source_timestamp": 0,
                                         "taken": 0}, a, a + 1),
           Event(2100, "ros2:rmw_take", {"rmw_subscription_handle": 0x31, "message": 2, "source_timestamp": 999,
                                         "taken": 1}, a, a + 1)]
    rep = analyze(ev, load_model(TWO))
    hops = {h["topic"]: h for h in rep.hops}
    assert hops["/hi_data"]["instances"] == 1 and hops["/hi_data"]["mean_ns"] == 400
    assert hops["/lo_data"]["instances"] == 1 and hops["/lo_data"]["mean_ns"] == 900
    assert hops["/hi_data"]["publisher_node"] == "/hi_sensor"
    assert any("/hi_data: 1 take(s) without the publish" in n for n in rep.notes)
    # no callback events, no chainrt events: said plainly
    text = " ".join(rep.not_derivable)
    assert "end-to-end chain latency" in text and "callback execution" in text
    high = rep.model_chains["high"]
    assert high["latency_in_trace"] is False
    assert high["hops"][0]["topic"] == "hi_data" and high["hops"][0]["instances"] == 1
    assert "not derivable" in tracing.format_report(rep)


def _rclcpp_like_topology(pid):
    """two_chains' high chain as a stock executor reports it: no chainrt events, no chainrt
    symbols; callbacks are found by node and period (timer) or node and topic (subscription)."""
    def node(h, name):
        return Event(1, "ros2:rcl_node_init", {"node_handle": h, "rmw_handle": 0, "node_name": name,
                                               "namespace": "/"}, pid, pid)
    return [node(0x1, "hi_sensor"), node(0x2, "hi_control"),
            Event(2, "ros2:rcl_publisher_init", {"publisher_handle": 0x10, "node_handle": 0x1,
                                                 "rmw_publisher_handle": 0x11, "topic_name": "/hi_data",
                                                 "queue_depth": 10}, pid, pid),
            Event(3, "ros2:rcl_subscription_init", {"subscription_handle": 0x20, "node_handle": 0x2,
                                                    "rmw_subscription_handle": 0x21, "topic_name": "/hi_data",
                                                    "queue_depth": 1}, pid, pid),
            Event(4, "ros2:rclcpp_subscription_init", {"subscription_handle": 0x20, "subscription": 0x22}, pid, pid),
            Event(5, "ros2:rclcpp_subscription_callback_added", {"subscription": 0x22, "callback": 0xC5}, pid, pid),
            Event(6, "ros2:rclcpp_callback_register", {"callback": 0xC5, "symbol": "lambda()"}, pid, pid),
            Event(7, "ros2:rcl_timer_init", {"timer_handle": 0x30, "period": 20_000_000}, pid, pid),
            Event(8, "ros2:rclcpp_timer_link_node", {"timer_handle": 0x30, "node_handle": 0x1}, pid, pid),
            Event(9, "ros2:rclcpp_timer_callback_added", {"timer_handle": 0x30, "callback": 0xC7}, pid, pid)]


def test_chain_latency_by_message_flow_without_chainrt_events():
    pid = 11
    ev = _rclcpp_like_topology(pid)

    def cb(t0, t1, callback, vtid, inner=()):
        return ([Event(t0, "ros2:callback_start", {"callback": callback, "is_intra_process": 0}, pid, vtid)]
                + list(inner) + [Event(t1, "ros2:callback_end", {"callback": callback}, pid, vtid)])

    def pub(t, stamp):
        return Event(t, "ros2:rmw_publish", {"rmw_publisher_handle": 0x11, "message": 0, "timestamp": stamp}, pid, 1)

    def take(t, stamp):
        return Event(t, "ros2:rmw_take", {"rmw_subscription_handle": 0x21, "message": 0,
                                          "source_timestamp": stamp, "taken": 1}, pid, 2)
    # instance A: timer 100..120 publishes stamp 1; taken at 130; subscription runs 140..170 -> 70
    ev += cb(100, 120, 0xC7, 1, [pub(110, 1)]) + [take(130, 1)] + cb(140, 170, 0xC5, 2)
    # B and C publish before the subscription runs; depth 1 keeps only C's message -> 360 - 300
    ev += cb(200, 220, 0xC7, 1, [pub(210, 2)]) + [take(230, 2)]
    ev += cb(300, 320, 0xC7, 1, [pub(310, 3)]) + [take(330, 3)] + cb(340, 360, 0xC5, 2)
    rep = analyze(sorted(ev, key=lambda e: e.ts), load_model(TWO))
    f = rep.flow_chains["high"]
    assert f["instances"] == 2 and f["wcrt_ns"] == 70 and f["bcrt_ns"] == 60
    assert "low" not in rep.flow_chains and not rep.chains
    assert rep.model_chains["high"]["latency_by_flow"] is True
    assert any("release to its source callback's start" in x for x in rep.not_derivable)
    assert "by message flow" in tracing.format_report(rep)


def test_empty_trace_says_so():
    rep = analyze([])
    assert rep.events == 0 and any("no event" in n for n in rep.notes)


# ---------------------------------------------------------------------------------------------
# CARET export


def test_caret_paths_of_two_chains():
    arch = tracing_caret.architecture(load_model(TWO))
    paths = {p["path_name"]: p["node_chain"] for p in arch["named_paths"]}
    assert set(paths) == {"high", "low"}
    assert paths["high"] == [
        {"node_name": "/hi_sensor", "publish_topic_name": "/hi_data", "subscribe_topic_name": "UNDEFINED"},
        {"node_name": "/hi_control", "publish_topic_name": "UNDEFINED", "subscribe_topic_name": "/hi_data"}]
    nodes = {n["node_name"]: n for n in arch["nodes"]}
    assert nodes["/hi_sensor"]["callbacks"][0] == {"callback_name": "hi_pub", "callback_type": "timer_callback",
                                                   "symbol": "chainrt:hi_pub", "period_ns": 20_000_000}
    assert nodes["/hi_control"]["subscribes"] == [{"topic_name": "/hi_data", "callback_name": "hi_sub"}]
    assert arch["executors"][0]["executor_type"] == "single_threaded_executor"


def test_caret_branching_chain_and_node_contexts():
    arch = tracing_caret.architecture(load_model(str(REPO / "examples/autoware_reference.yaml")), "robot")
    names = [p["path_name"] for p in arch["named_paths"]]
    assert "behavior_planner/0" in names and "behavior_planner/1" in names
    for p in arch["named_paths"]:
        chain = p["node_chain"]
        assert chain[0]["subscribe_topic_name"] == "UNDEFINED" and chain[-1]["publish_topic_name"] == "UNDEFINED"
        for a, b in zip(chain, chain[1:]):  # consecutive nodes are linked by one topic
            assert a["publish_topic_name"] == b["subscribe_topic_name"] != "UNDEFINED"
            assert a["publish_topic_name"].startswith("/robot/")
    vi = next(n for n in arch["nodes"] if n["node_name"] == "/robot/VehicleInterface")
    assert {c["context_type"] for c in vi["message_contexts"]} == {"callback_chain"}


def test_caret_cli_writes_yaml(tmp_path):
    out = tmp_path / "arch.yaml"
    assert main(["trace", "caret", TWO, "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert {"named_paths", "executors", "nodes"} <= set(data)


# ---------------------------------------------------------------------------------------------
# Command line


def test_trace_report_of_a_missing_trace_is_one_line(tmp_path, capsys):
    assert main(["trace-report", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "nope" in err


def test_trace_record_needs_a_runnable_command(tmp_path, capsys):
    assert main(["trace", "record", "-o", str(tmp_path / "t")]) == 1
    assert "no command" in capsys.readouterr().err
    assert main(["trace", "record", "-o", str(tmp_path / "t"), "--", "/nonexistent/prog"]) == 1
    assert "/nonexistent/prog: no such program" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The replacement libraries against the wheels they stand in for


def _tracing_cfg():
    from chainrt import tracing_record
    try:
        return tracing_record.tracing_config()
    except tracing_record.RecordError as e:
        pytest.skip(str(e))


def _dynamic(cmd: list[str]) -> str:
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"{cmd[0]} (binutils) not installed")
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _wheel_lib(name: str) -> Path:
    found = sorted(Path(sys.prefix).glob(f"lib/{name}"))
    if not found:
        pytest.skip(f"the wheels' {name} is not in {sys.prefix}/lib")
    return found[0]


def test_replacement_tracetools_exports_every_function_of_the_wheels():
    cfg = _tracing_cfg()
    if cfg.get("ros2_kind") != "wheels":
        pytest.skip("built against a sourced ROS 2: no replacement needed")
    ours = next(p for p in cfg["ros2_preload"] if p.endswith("libtracetools.so"))

    def exported(lib):
        return {line.split()[-1] for line in _dynamic(["nm", "-D", "--defined-only", str(lib)]).splitlines()
                if line.split()[1:2] == ["T"]}
    theirs = exported(_wheel_lib("libtracetools.so"))
    assert any(s.startswith("ros_trace_") for s in theirs)
    assert theirs - exported(ours) == set()
    assert "SONAME" in _dynamic(["readelf", "-d", ours]) and "[libtracetools.so]" in _dynamic(["readelf", "-d", ours])


def test_stubs_carry_the_sonames_the_wheels_need():
    cfg = _tracing_cfg()
    if cfg.get("ros2_kind") != "wheels":
        pytest.skip("built against a sourced ROS 2: no stubs")

    def soname(lib):
        for line in _dynamic(["readelf", "-d", str(lib)]).splitlines():
            if "(SONAME)" in line:
                return line.split("[", 1)[1].rstrip("]")
        return None
    stubs = {soname(p) for p in cfg["ros2_preload"] if "/stubs/" in p}
    needed = set()
    for lib in ("librcl.so", "librmw_fastrtps_shared_cpp.so", "librmw_fastrtps_cpp.so"):
        for line in _dynamic(["readelf", "-d", str(_wheel_lib(lib))]).splitlines():
            if "(NEEDED)" in line and "lttng-ust" in line:
                needed.add(line.split("[", 1)[1].rstrip("]"))
    assert needed and needed <= stubs
    # and the wheels' libraries import no LTTng function themselves (only tracetools')
    for lib in ("librcl.so", "librmw_fastrtps_shared_cpp.so", "librmw_fastrtps_cpp.so"):
        und = _dynamic(["nm", "-D", "--undefined-only", str(_wheel_lib(lib))])
        assert not [s for s in und.split() if s.startswith(("lttng_", "__tracepoint", "tracepoint_"))]


# ---------------------------------------------------------------------------------------------
# Real recordings (LTTng)


@functools.cache
def _recording_unavailable() -> str | None:
    from chainrt import tracing_record
    why = tracing_record.lttng_available()
    if why:
        return why
    try:
        tracing_record.tracing_config()
    except tracing_record.RecordError as e:
        return str(e)
    try:
        tracing._import_bt2()
    except tracing.TraceError as e:
        return str(e)
    # can a session be created here (a session daemon running, or one started for the probe)?
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        name = f"chainrt-probe-{os.getpid()}"
        try:
            with tracing_record.session_daemon(dict(os.environ)) as env:
                r = subprocess.run(["lttng", "--no-sessiond", "create", name, f"--output={tmp}/t"],
                                   capture_output=True, text=True, env=env)
                subprocess.run(["lttng", "--no-sessiond", "destroy", name], capture_output=True, text=True, env=env)
        except tracing_record.RecordError as e:
            return str(e)
    if r.returncode != 0:
        lines = (r.stderr.strip() or r.stdout.strip()).splitlines()
        return f"lttng create failed: {lines[-1] if lines else r.returncode}"
    return None


def _skip_without_lttng():
    why = _recording_unavailable()
    if why:
        print(f"\nLTTng recording skipped: {why}", file=sys.stderr)
        pytest.skip(f"LTTng recording unavailable: {why}")


def _ros_env(domain: int) -> dict:
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(domain)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["PYTHONPATH"] = str(REPO / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


TALKER = textwrap.dedent("""
    import time, rclpy
    from std_msgs.msg import String
    rclpy.init()
    n = rclpy.create_node('tracing_talker')
    got = []
    p = n.create_publisher(String, 'tracing_chatter', 10)
    n.create_subscription(String, 'tracing_chatter', lambda m: got.append(m.data), 10)
    n.create_timer(0.02, lambda: p.publish(String(data='x')))
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        rclpy.spin_once(n, timeout_sec=0.05)
    print('received', len(got))
    n.destroy_node(); rclpy.shutdown()
""")


def test_record_rclpy_program_under_its_own_executor(tmp_path):
    _skip_without_lttng()
    prog = tmp_path / "talker.py"
    prog.write_text(TALKER)
    trace = tmp_path / "trace"
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "trace", "record", "-o", str(trace), "--",
                        sys.executable, str(prog)], env=_ros_env(150 + os.getpid() % 40),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    received = int(r.stdout.split("received")[1].split()[0])
    assert received > 0
    rep = analyze(tracing.read_trace(str(trace)))
    hop = [h for h in rep.hops if h["topic"] == "/tracing_chatter"]
    assert hop, rep.to_json()
    # every message the subscriber took is matched to its publish
    assert hop[0]["instances"] == received
    assert hop[0]["publisher_node"] == hop[0]["subscriber_node"] == "/tracing_talker"
    assert 0 < hop[0]["bcrt_ns"] <= hop[0]["mean_ns"] <= hop[0]["wcrt_ns"]
    assert not rep.chains and any("callback_start" in x for x in rep.not_derivable)


def test_record_two_chains_under_chainrt_agrees_with_its_monitoring(tmp_path):
    _skip_without_lttng()
    from chainrt import runtime
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    trace = tmp_path / "trace"
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "trace", "record", "-o", str(trace), "--",
                        sys.executable, "-m", "chainrt.cli", "run", TWO, "--duration", "2s", "--warmup", "300ms",
                        "--no-compare", "--json"], env=_ros_env(150 + (os.getpid() + 7) % 40),
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    monitored = json.loads(r.stdout)["chains"]
    rep = analyze(tracing.read_trace(str(trace)), load_model(TWO))
    assert set(rep.chains) == {"high", "low"}, rep.to_json()
    for name, m in monitored.items():
        t = rep.chains[name]
        assert t["instances"] == m["instances"] > 0, (name, t, m)
        # the same instances, measured once by the executor and once from the trace's events:
        # agreement within 2 % (the events follow the executor's clock readings by microseconds)
        assert t["mean_ns"] == pytest.approx(m["mean_ns"], rel=0.02), (name, t, m)
        assert t["wcrt_ns"] == pytest.approx(m["wcrt_ns"], rel=0.02), (name, t, m)
        assert t["deadline_misses"] == m["deadline_misses"]
    # from the ros2 events alone (as for a stock executor), by message flow: every measured
    # instance is found again (the flow also counts the warm-up's)
    for name in ("high", "low"):
        assert rep.flow_chains[name]["instances"] >= rep.chains[name]["instances"]
    # the ros2 events of chainrt's executor: its callbacks are named and timed
    assert {"hi_pub", "hi_sub", "lo_pub", "lo_sub"} <= set(rep.callbacks)
    assert any(h["topic"].endswith("/hi_data") for h in rep.hops)


RCLPY_CHAINS = textwrap.dedent("""
    import json, sys, threading, time
    import rclpy
    sys.path.insert(0, sys.argv[1])
    from chainrt.rclpy import ChainExecutor
    from two_chains_nodes import make_nodes
    rclpy.init()
    ex = ChainExecutor(model=sys.argv[2], report=False)
    for n in make_nodes():
        ex.add_node(n)
    def stop():
        time.sleep(2.3)
        ex.shutdown(timeout_sec=0)
    threading.Thread(target=stop, daemon=True).start()
    ex.spin()
    print(json.dumps(ex.last_report["chains"]))
""")


def test_record_rclpy_program_under_chain_executor_agrees_with_its_monitoring(tmp_path):
    _skip_without_lttng()
    pytest.importorskip("chainrt._rclpy_exec", reason="chainrt.rclpy needs the ROS 2 build (scripts/setup)")
    prog = tmp_path / "chains.py"
    prog.write_text(RCLPY_CHAINS)
    trace = tmp_path / "trace"
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "trace", "record", "-o", str(trace), "--",
                        sys.executable, str(prog), str(REPO / "examples" / "rclpy"), TWO],
                       env=_ros_env(150 + (os.getpid() + 13) % 40), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    monitored = json.loads(r.stdout.strip().splitlines()[-1])
    rep = analyze(tracing.read_trace(str(trace)), load_model(TWO))
    # the rclpy program ran under chainrt's executor: its chain events are in the trace
    assert set(rep.chains) == {"high", "low"}, rep.to_json()
    assert not any("chain latency" in x for x in rep.not_derivable), rep.not_derivable
    for name, m in monitored.items():
        t = rep.chains[name]
        assert t["instances"] == m["instances"] > 0, (name, t, m)
        assert t["mean_ns"] == pytest.approx(m["mean_ns"], rel=0.02), (name, t, m)
        # The trace ends an instance at its callback_end tracepoint, the monitor at its own clock
        # reading a few microseconds apart: an instance that ends within that gap of its deadline
        # is a miss to one and not to the other (seen once under load: 19 against 18).
        assert abs(t["deadline_misses"] - m["deadline_misses"]) <= 1, (name, t, m)
    # its callbacks are named and timed by callback_start/callback_end
    assert {"hi_pub", "hi_sub", "lo_pub", "lo_sub"} <= set(rep.callbacks), rep.callbacks


# ---------------------------------------------------------------------------------------------
# The LTTng daemons of a recording: it ends those it started, by their PIDs, whichever way it
# ends, and leaves a session daemon that was running alone

MARK = "CHAINRT_TEST_LTTNG_MARK"


def _daemon_env(tmp_path) -> tuple[dict, str]:
    """The environment of a recording in a test and its mark: every LTTng daemon started from it
    inherits the mark (other programs' daemons on this machine do not count). A user other than
    root gets an LTTNG_HOME of its own (root's session daemon is one per machine)."""
    mark = f"{os.getpid()}-{tmp_path.name}"
    env = _ros_env(150 + (os.getpid() + 19) % 40)
    env[MARK] = mark
    if os.getuid() != 0:
        (tmp_path / "lttng-home").mkdir()
        env["LTTNG_HOME"] = str(tmp_path / "lttng-home")
    return env, mark


def _lttng_daemons() -> dict[int, tuple[str, int, int, str]]:
    """The LTTng daemon processes alive now (lttng-sessiond, lttng-consumerd, their lttng-runas
    helpers): PID -> (name, parent PID, start time, the test mark of their environment)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            name = Path(f"/proc/{entry}/comm").read_text().strip()
            if not name.startswith("lttng-"):
                continue
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if stat[0] != "Z":
            mark = next((v.split(b"=", 1)[1].decode() for v in environ if v.startswith(MARK.encode() + b"=")), "")
            found[int(entry)] = (name, int(stat[1]), int(stat[19]), mark)
    return found


def _new_daemons(before: dict, mark: str) -> dict:
    """The daemons started from the test's environment since ``before`` and still alive."""
    return {pid: d for pid, d in _lttng_daemons().items()
            if d[3] == mark and (pid not in before or before[pid][2] != d[2])}


def _where_no_session_daemon_runs(tmp_path) -> tuple[dict, str, dict]:
    """A test's environment and mark (_daemon_env) and the LTTng daemons alive before its
    recording; skipped where LTTng cannot record, or where a session daemon runs (a recording
    then uses it and starts none)."""
    _skip_without_lttng()
    from chainrt import tracing_record
    env, mark = _daemon_env(tmp_path)
    if tracing_record.session_daemon_reachable(env):
        pytest.skip("a session daemon runs here: a recording uses it and starts none")
    return env, mark, _lttng_daemons()


def _record_cmd(trace, *command, session: str | None = None) -> list[str]:
    return ([sys.executable, "-m", "chainrt.cli", "trace", "record", "-o", str(trace)]
            + (["--session", session] if session else []) + ["--", *command])


def _record(env: dict, trace, *command, session: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(_record_cmd(trace, *command, session=session), env=env, capture_output=True, text=True,
                          timeout=120)


def _recorded(trace) -> bool:
    """The trace holds the metadata of a traced process's userspace buffers: the session daemon
    saw the process register."""
    return any(trace.glob("ust/**/metadata"))


def test_record_ends_the_lttng_daemons_it_started(tmp_path):
    env, mark, before = _where_no_session_daemon_runs(tmp_path)
    r = _record(env, tmp_path / "trace", sys.executable, "-c", "print('traced')")
    assert r.returncode == 0, r.stderr
    assert "traced" in r.stdout and _recorded(tmp_path / "trace")
    assert _new_daemons(before, mark) == {}


def test_record_ends_the_lttng_daemons_it_started_when_lttng_create_fails(tmp_path):
    env, mark, before = _where_no_session_daemon_runs(tmp_path)
    r = _record(env, tmp_path / "trace", "true", session="no/such")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "lttng create" in r.stderr and "Traceback" not in r.stderr
    assert _new_daemons(before, mark) == {}


def test_interrupted_record_ends_the_lttng_daemons_it_started(tmp_path):
    env, mark, before = _where_no_session_daemon_runs(tmp_path)
    started = tmp_path / "started"
    prog = ("import os, signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); "
            f"open({str(started)!r}, 'w').write(str(os.getpid())); time.sleep(60)")
    rec = subprocess.Popen(_record_cmd(tmp_path / "trace", sys.executable, "-c", prog), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (started.exists() and started.read_text()) and rec.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rec.poll() is None and started.exists(), "the traced command did not start"
        # Ctrl-C at a terminal: SIGINT to chainrt and to the command (one process group)
        rec.send_signal(signal.SIGINT)
        os.kill(int(started.read_text()), signal.SIGINT)
        _, err = rec.communicate(timeout=60)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    assert rec.returncode == 130, err
    assert _new_daemons(before, mark) == {}


def test_record_uses_a_running_session_daemon_and_leaves_it_running(tmp_path):
    _skip_without_lttng()
    from chainrt import tracing_record
    env, mark = _daemon_env(tmp_path)
    user = None
    if not tracing_record.session_daemon_reachable(env):  # the user's daemon
        user = subprocess.Popen(["lttng-sessiond", "--no-kernel"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not tracing_record.session_daemon_reachable(env):
            assert time.monotonic() < deadline and (user is None or user.poll() is None), "no session daemon"
            time.sleep(0.05)
        before = _lttng_daemons()
        running = {pid: d for pid, d in before.items() if d[0] == "lttng-sessiond"}
        r = _record(env, tmp_path / "trace", sys.executable, "-c", "print('traced')")
        assert r.returncode == 0, r.stderr
        assert _recorded(tmp_path / "trace")
        after = _lttng_daemons()
        assert all(pid in after and after[pid][2] == d[2] for pid, d in running.items()), (running, after)

        def below_running(pid):
            while pid > 1 and pid in after:
                pid = after[pid][1]
                if pid in running:
                    return True
            return False
        # what the recording started: only the running daemon's own consumer daemons
        assert all(below_running(pid) for pid in _new_daemons(before, mark)), after
    finally:
        if user is not None:
            user.terminate()
            user.wait(timeout=30)


def test_a_daemon_that_ignores_sigterm_is_killed_and_its_children_are_ended(tmp_path, monkeypatch):
    # no LTTng needed: a stand-in that ignores SIGTERM, with a child it leaves behind when killed
    from chainrt import tracing_record
    monkeypatch.setattr(tracing_record, "DAEMON_STOP_S", 0.5)
    child = tmp_path / "child"
    daemon = subprocess.Popen(["sh", "-c", f'trap "" TERM; sleep 300 & echo $! > {child}; wait'],
                              start_new_session=True)
    deadline = time.monotonic() + 10
    while not (child.exists() and child.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    sleeper = int(child.read_text())
    tracing_record._stop_daemon(daemon)
    assert daemon.returncode == -signal.SIGKILL
    assert tracing_record._proc_stat(sleeper) is None or tracing_record._proc_stat(sleeper)[0] == "Z"
