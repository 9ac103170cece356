"""The typed monitoring message in Python (chainrt.monitor_msg): chainrt_msgs/msg/ChainStats, as
chainrt's build generates it, is found through the build; its plain form (to_dict) carries what
``chainrt profile`` reads, so a collection of typed messages gives the same profile figures as the
executors' figures. No ROS 2 communication: the message classes only."""

from __future__ import annotations

import pytest
from rosutil import have_rclpy, runtime_built

from chainrt import monitor_msg
from chainrt import profile as pf

pytestmark = pytest.mark.skipif(not (have_rclpy() and runtime_built()), reason="needs ROS 2 and chainrt's runtime build")


def _message(seq=0, run_id="r1"):
    ChainStats = monitor_msg.message_type()  # puts the build's chainrt_msgs on the path
    from chainrt_msgs.msg import CallbackStatistics, ChainStatistics
    m = ChainStats()
    m.run.run_id, m.run.executor, m.run.policy, m.run.threads = run_id, "main", "edf", 2
    m.seq, m.duration_ns, m.dispatches, m.samples_lost = seq, 5_000_000_000, 3, 1
    m.stamp.sec, m.stamp.nanosec = 12, 5
    m.chains = [ChainStatistics(name="loop", period_ns=10_000_000, deadline_ns=8_000_000, wcrt_ns=3_000_000,
                                bcrt_ns=1_000_000, mean_ns=2e6, p99_ns=3_000_000, instances=3, deadline_misses=0,
                                verdict=ChainStatistics.VERDICT_MET, samples_ns=[1_000_000, 2_000_000, 3_000_000])]
    m.callbacks = [CallbackStatistics(name="src", node="/a", kind="timer", instances=3, cpu_total_ns=3_000_000,
                                      cpu_max_ns=1_200_000, cpu_min_ns=800_000, wall_max_ns=1_500_000,
                                      grid_start_index=-1, start_ns=[0, 10_000_000, 20_000_000],
                                      wall_ns=[1_000_000] * 3, cpu_ns=[800_000, 1_000_000, 1_200_000],
                                      release_ns=[1, 10_000_001, 20_000_001], thread=[0, 1, 0]),
                   CallbackStatistics(name="idle", instances=0, grid_start_index=4, release_jitter_max_ns=7)]
    m.warnings = ["no SCHED_FIFO"]
    return m


def test_the_build_generated_message_is_found_and_its_plain_form_has_every_field():
    d = monitor_msg.to_dict(_message(seq=4))
    assert (d["run_id"], d["executor"], d["policy"], d["threads"], d["seq"]) == ("r1", "main", "edf", 2, 4)
    assert d["stamp_ns"] == 12_000_000_005 and d["samples_lost"] == 1 and d["warnings"] == ["no SCHED_FIFO"]
    loop = d["chains"]["loop"]
    assert loop["verdict"] == "met" and loop["samples_ns"] == [1_000_000, 2_000_000, 3_000_000]
    assert loop["deadline_ns"] == 8_000_000 and loop["mean_ns"] == 2e6
    src = d["callbacks"]["src"]
    assert (src["node"], src["kind"]) == ("/a", "timer") and "topic" not in src  # empty: not known
    assert "grid_start_index" not in src                                         # not on the grid
    assert d["callbacks"]["idle"]["grid_start_index"] == 4 and d["callbacks"]["idle"]["release_jitter_max_ns"] == 7
    assert d["samples"]["src"]["thread"] == [0, 1, 0] and "idle" not in d["samples"]  # ran nothing


def test_profile_figures_from_typed_messages():
    col = pf.Collection()
    col.add(monitor_msg.to_dict(_message(seq=0)))
    col.add(monitor_msg.to_dict(_message(seq=0)))                 # a duplicate: ignored
    col.add(monitor_msg.to_dict(_message(seq=1, run_id="other")), run_id="r1")  # another run: ignored
    assert col.messages == 1 and col.ignored == 1
    (src,) = col.sources.values()
    assert src.samples["src"]["cpu_ns"] == [800_000, 1_000_000, 1_200_000] and src.lost == 1


def test_events_topic_is_beside_the_stats_topic():
    assert monitor_msg.events_topic("/chainrt/chain_stats") == "/chainrt/events"
    assert monitor_msg.events_topic("/robot/chainrt/chain_stats") == "/robot/chainrt/events"
