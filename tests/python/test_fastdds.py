"""Fast DDS profiles generated from a model (chainrt.fastdds): known ports per participant,
DDS threads at the executor's priority (CROS-RT P4), loopback-only transports under localhost
discovery — checked on the XML, and with `ss` on a real two-process run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chainrt import fastdds, runtime
from chainrt.model import load_model_from_string

REPO = Path(__file__).resolve().parents[2]
NS = "{http://www.eprosima.com}"

MODEL = """
chainrt: 1
name: two_hosts
hosts:
  - {name: hostA, cores: 2}
  - {name: hostB, cores: 2}
executors:
  - {name: ea, host: hostA, process: pa, policy: fp, priority: 60, threads: [{name: t0, cores: [0], priority: 60}]}
  - {name: eb, host: hostB, process: pb, policy: fp, threads: [{name: t0, cores: [1], priority: 70}, {name: t1, cores: [0], priority: 65}]}
  - {name: ec, host: hostB, process: pc, policy: fp, threads: 1}
nodes:
  - {name: sensor, executor: ea}
  - {name: control, executor: eb}
  - {name: logger, executor: ec}
topics:
  - {name: data, size: 4KiB}
callbacks:
  - {name: pub, kind: timer, node: sensor, period: 20ms, wcet: 1ms, priority: 3, publishes: [data]}
  - {name: sub, kind: subscription, node: control, topic: data, wcet: 1ms, priority: 4}
  - {name: log, kind: subscription, node: logger, topic: data, wcet: 1ms}
chains:
  - {name: high, callbacks: [pub, sub], deadline: 20ms, priority: 2}
"""


@pytest.fixture(scope="module")
def model():
    return load_model_from_string(MODEL)


def _parse(xml: str):
    return ET.fromstring(xml)


def test_known_ports_are_distinct_and_in_the_domain_range(model):
    ports = fastdds.participant_ports(model, domain_id=5)
    assert list(ports) == ["pa", "pb", "pc"]
    flat = [p for pair in ports.values() for p in pair]
    assert len(set(flat)) == 6
    assert all(7400 + 250 * 5 + fastdds.OFFSET <= p < 7400 + 250 * 6 for p in flat)
    with pytest.raises(fastdds.ProfileError):
        fastdds.participant_ports(model, domain_id=233)


def test_priority_and_affinity_follow_the_executor(model):
    parts = {p.process: p for p in fastdds.participants(model)}
    assert parts["pa"].priority == 60 and parts["pa"].affinity == 0b01
    assert parts["pb"].priority == 70 and parts["pb"].affinity == 0b11  # highest thread, union of cores
    assert parts["pc"].priority is None and parts["pc"].affinity == 0
    pm = fastdds.port_priorities(model)
    assert pm[parts["pb"].metatraffic_port] == 70 and pm[parts["pc"].user_port] == 0


def test_localhost_profile_binds_loopback_only_with_thread_priorities(model):
    root = _parse(fastdds.profiles_xml(model, "pb", domain_id=3))
    addrs = [a.text for a in root.iter(NS + "address")]
    assert addrs and set(addrs) == {"127.0.0.1"}
    assert not list(root.iter(NS + "metatrafficMulticastLocatorList"))
    part = root.find(f"{NS}profiles/{NS}participant")
    assert part.get("is_default_profile") == "true"
    meta, user = fastdds.participant_ports(model, 3)["pb"]
    ports = {int(e.text) for e in part.find(f"{NS}rtps/{NS}builtin/{NS}metatrafficUnicastLocatorList").iter(NS + "port")}
    assert ports == {meta}
    ports = {int(e.text) for e in part.find(f"{NS}rtps/{NS}defaultUnicastLocatorList").iter(NS + "port")}
    assert ports == {user}
    peers = {int(e.text) for e in part.find(f"{NS}rtps/{NS}builtin/{NS}initialPeersList").iter(NS + "port")}
    # the other chainrt participants' known ports, and the standard ports of the participants
    # Fast DDS numbers itself on this machine (ros2 CLI, plain rclpy programs)
    standard = {fastdds.PORT_BASE + fastdds.DOMAIN_GAIN * 3 + 10 + 2 * i for i in range(fastdds.STANDARD_PEERS)}
    assert peers == {fastdds.participant_ports(model, 3)[p][0] for p in ("pa", "pc")} | standard
    threads = [e for e in root.iter() if e.find(NS + "priority") is not None]
    names = {e.tag.replace(NS, "") for e in threads}
    assert {"timed_events_thread", "default_reception_threads", "builtin_controllers_sender_thread"} <= names
    assert all(e.find(NS + "priority").text == "70" and e.find(NS + "scheduling_policy").text == "1"
               and e.find(NS + "affinity").text == "3" for e in threads)
    assert [int(e.text) for e in root.iter(NS + "receiveBufferSize")] == [1 << 20]  # 4 KiB topics: the minimum
    # a participant without a real-time priority keeps Fast DDS's default threads
    root = _parse(fastdds.profiles_xml(model, "pc"))
    assert not [e for e in root.iter() if e.find(NS + "priority") is not None]
    # the vanilla baseline: no thread settings at all
    root = _parse(fastdds.profiles_xml(model, "pb", thread_priorities=False))
    assert not [e for e in root.iter() if e.find(NS + "priority") is not None]


def test_host_addresses_profile_reaches_peers_over_udp_without_shm(model):
    hosts = {"hostA": "10.200.0.1", "hostB": "10.200.0.2"}
    root = _parse(fastdds.profiles_xml(model, "pa", localhost_only=False, host_addresses=hosts))
    part = root.find(f"{NS}profiles/{NS}participant")
    peers = [(l.find(NS + "address").text, int(l.find(NS + "port").text))
             for l in part.find(f"{NS}rtps/{NS}builtin/{NS}initialPeersList").iter(NS + "udpv4")]
    ports = fastdds.participant_ports(model)
    assert sorted(peers) == [("10.200.0.2", ports["pb"][0]), ("10.200.0.2", ports["pc"][0])]
    assert [t.text for t in root.iter(NS + "type")] == ["UDPv4"]  # no SHM across namespaces
    assert not list(root.iter(NS + "interfaceWhiteList"))
    bound = [a.text for a in part.find(f"{NS}rtps/{NS}defaultUnicastLocatorList").iter(NS + "address")]
    assert bound == ["10.200.0.1"]
    with pytest.raises(fastdds.ProfileError, match="hostB"):
        fastdds.profiles_xml(model, "pb", localhost_only=False, host_addresses={"hostA": "10.0.0.1"})
    with pytest.raises(fastdds.ProfileError, match="no process"):
        fastdds.profiles_xml(model, "nope")


def test_run_environments_leave_a_user_profile_alone(tmp_path):
    model = REPO / "tests/cpp/runtime/data/two_processes.yaml"
    assert fastdds.run_environments(model, tmp_path, {"FASTDDS_DEFAULT_PROFILES_FILE": "/x.xml"}) == {}
    assert fastdds.run_environments(model, tmp_path, {"FASTRTPS_DEFAULT_PROFILES_FILE": "/x.xml"}) == {}
    assert fastdds.run_environments(model, tmp_path, {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}) == {}
    assert fastdds.run_environments(model, tmp_path, {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}
    envs = fastdds.run_environments(model, tmp_path, {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
                                                      "ROS_DOMAIN_ID": "9"})
    assert set(envs) == {"sensing", "acting"}
    for proc, e in envs.items():
        assert Path(e["FASTDDS_DEFAULT_PROFILES_FILE"]).is_file()
        assert e["FASTRTPS_DEFAULT_PROFILES_FILE"] == e["FASTDDS_DEFAULT_PROFILES_FILE"]  # Jazzy's name
        assert e["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SYSTEM_DEFAULT"


def _sockets() -> list[tuple[str, str]]:
    out = subprocess.run(["ss", "-tuanpH"], capture_output=True, text=True, check=False).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and "chainrt-run" in line:
            rows.append((f[4], " ".join(f[6:])))
    return rows


def test_localhost_run_binds_no_socket_beyond_loopback():
    """`ss` while `chainrt run` runs a two-process model under localhost discovery: every
    socket of its chainrt-run processes is bound to 127.0.0.1."""
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    if not shutil.which("ss"):
        pytest.skip("ss (iproute2) is not installed")
    model = REPO / "tests/cpp/runtime/data/two_processes.yaml"
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(200 + (os.getpid() % 30)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    for k in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE"):
        env.pop(k, None)
    seen: list[tuple[str, str]] = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            seen.extend(_sockets())
            time.sleep(0.2)

    t = threading.Thread(target=sample)
    t.start()
    try:
        out = subprocess.run([sys.executable, "-m", "chainrt.cli", "run", str(model), "--duration", "1500ms",
                              "--warmup", "300ms", "--json", "--no-compare"],
                             capture_output=True, text=True, env=env, timeout=300, check=False)
    finally:
        done.set()
        t.join()
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["chains"]["across"]["instances"] > 0
    assert seen, "no socket of chainrt-run was seen"
    beyond = sorted({(a, who) for a, who in seen if not a.startswith("127.")})
    assert not beyond, f"sockets bound beyond loopback: {beyond}"
