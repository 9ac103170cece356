"""Reference-system KPIs on synthetic stats arrays: hot-path latency arithmetic, drops, the
behaviour-planner period, warm-up, Welford statistics, the 4096-byte message layout."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from chainrt.reference_system import kpi, message
from chainrt.reference_system.message import Entry

MS = 1_000_000


def hot_sample(t0: int, front_delay: int, rear_delay: int, latency_after_later: int, seq: int,
               drops: dict[str, int] | None = None, bp: tuple[int, int] | None = None) -> list[Entry]:
    """A sample as the VehicleDBWSystem sink sees it (hot path merged by BehaviorPlanner)."""
    drops = drops or {}
    later = t0 + max(front_delay, rear_delay)
    e = [Entry("FrontLidarDriver", t0 + front_delay, seq, drops.get("FrontLidarDriver", 0)),
         Entry("PointsTransformerFront", later + 1 * MS, seq, drops.get("PointsTransformerFront", 0)),
         Entry("RearLidarDriver", t0 + rear_delay, seq, drops.get("RearLidarDriver", 0)),
         Entry("PointsTransformerRear", later + 2 * MS, seq, drops.get("PointsTransformerRear", 0)),
         Entry("PointCloudFusion", later + 3 * MS, seq, drops.get("PointCloudFusion", 0)),
         Entry("RayGroundFilter", later + 4 * MS, seq, drops.get("RayGroundFilter", 0)),
         Entry("EuclideanClusterDetector", later + 5 * MS, seq, drops.get("EuclideanClusterDetector", 0)),
         Entry("ObjectCollisionEstimator", later + latency_after_later, seq, drops.get("ObjectCollisionEstimator", 0))]
    if bp is not None:
        e.append(Entry("BehaviorPlanner", bp[0], bp[1], drops.get("BehaviorPlanner", 0)))
    return e


def test_latency_is_end_minus_later_lidar():
    s = hot_sample(1000 * MS, 3 * MS, 1 * MS, 12 * MS, 5)
    assert kpi.hot_path_latency(s) == 12 * MS
    s = hot_sample(1000 * MS, 0, 7 * MS, 9 * MS, 5)
    assert kpi.hot_path_latency(s) == 9 * MS


def test_latency_needs_whole_hot_path():
    s = hot_sample(0, 0, 0, 10 * MS, 1)
    assert kpi.hot_path_latency([e for e in s if e.node != "ObjectCollisionEstimator"]) is None
    assert kpi.hot_path_latency([e for e in s if e.node != "RearLidarDriver"]) is None
    assert kpi.hot_path_latency([Entry("BehaviorPlanner", 5, 1)]) is None


def test_drops_sum_hot_path_entries_only():
    s = hot_sample(0, 0, 0, 10 * MS, 1, drops={"PointCloudFusion": 2, "RayGroundFilter": 1, "BehaviorPlanner": 7},
                   bp=(50 * MS, 1))
    assert kpi.hot_path_drops(s) == 3
    k = kpi.run_kpis({"VehicleDBWSystem": [s] * 12}).to_dict()
    assert k["dropped_by_node"]["BehaviorPlanner"] == 14 and k["dropped_by_node"]["PointCloudFusion"] == 4
    assert k["hot_path_drops"] == 6


def test_warmup_skips_first_ten_samples_at_the_sink():
    samples = []
    for i in range(30):
        lat = 100 * MS if i < 10 else 10 * MS + i * 1000
        samples.append(hot_sample(i * 100 * MS, 0, 0, lat, i, bp=(i * 100 * MS + 50 * MS, i)))
    k = kpi.run_kpis({"VehicleDBWSystem": samples}).to_dict()
    lat = k["hot_path_latency"]
    assert lat["count"] == 20
    assert lat["min_ns"] == 10 * MS + 10 * 1000
    assert lat["max_ns"] == 10 * MS + 29 * 1000
    assert lat["mean_ns"] == pytest.approx(10 * MS + 19.5 * 1000)
    assert k["sink_samples"]["VehicleDBWSystem"] == 30
    # without warm-up the 100 ms samples count
    k0 = kpi.run_kpis({"VehicleDBWSystem": samples}, warmup=0).to_dict()
    assert k0["hot_path_latency"]["max_ns"] == 100 * MS


def test_latency_statistics_match_numpy_and_p99_is_nearest_rank():
    rng = random.Random(7)
    lats = [rng.randrange(8 * MS, 40 * MS) for _ in range(500)]
    samples = [hot_sample(i * 100 * MS, 0, 0, lat, i) for i, lat in enumerate([0] * 10 + lats)]
    d = kpi.run_kpis({"VehicleDBWSystem": samples}).to_dict()["hot_path_latency"]
    a = np.array(lats, dtype=float)
    assert d["mean_ns"] == pytest.approx(a.mean(), rel=1e-12)
    assert d["std_ns"] == pytest.approx(a.std(), rel=1e-9)  # population std (M2 / n)
    assert d["min_ns"] == min(lats) and d["max_ns"] == max(lats)
    assert d["p99_ns"] == sorted(lats)[math.ceil(0.99 * 500) - 1]


def test_drop_totals_and_per_sample_mean():
    samples = [hot_sample(i * 100 * MS, 0, 0, 10 * MS, i, drops={"PointsTransformerRear": 1} if i % 4 == 0 else {})
               for i in range(50)]
    d = kpi.run_kpis({"VehicleDBWSystem": samples}).to_dict()
    measured = range(10, 50)
    assert d["hot_path_drops"] == sum(1 for i in measured if i % 4 == 0)
    assert d["hot_path_drops_per_sample"]["mean"] == pytest.approx(d["hot_path_drops"] / 40)


def test_behavior_planner_period_divides_by_sequence_gap():
    # the planner ran at 100 ms; samples 3 and 4 never reached the sink (gap of 3 sequences)
    seqs = [0, 1, 2, 5, 6, 7]
    times = [s * 100 * MS + (200_000 if s == 6 else 0) for s in seqs]
    samples = [[Entry("BehaviorPlanner", t, s)] for t, s in zip(times, seqs)]
    p = kpi.periods(samples)
    assert p == [100 * MS, 100 * MS, 100 * MS, 100 * MS + 200_000, 100 * MS - 200_000]
    k = kpi.run_kpis({"VehicleDBWSystem": samples}, warmup=0).to_dict()
    assert k["behavior_planner_period"]["mean_ns"] == pytest.approx(100 * MS)
    assert k["behavior_planner_jitter"]["max_abs_ns"] == pytest.approx(200_000)


def test_period_ignores_repeated_sequence_numbers():
    samples = [[Entry("BehaviorPlanner", 0, 1)], [Entry("BehaviorPlanner", 0, 1)], [Entry("BehaviorPlanner", 100 * MS, 2)]]
    assert kpi.periods(samples) == [100 * MS]


def test_welford_matches_two_pass():
    rng = random.Random(3)
    xs = [rng.gauss(5e7, 1e6) for _ in range(1000)]
    w = kpi.Welford()
    for x in xs:
        w.add(x)
    mean = sum(xs) / len(xs)
    assert w.mean == pytest.approx(mean, rel=1e-12)
    assert w.std == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs)), rel=1e-9)
    assert (w.min, w.max) == (min(xs), max(xs))


def test_spread_over_runs():
    s = kpi.spread([10.0, 12.0, 14.0])
    assert s["mean"] == 12.0 and s["runs"] == 3 and s["min"] == 10.0 and s["max"] == 14.0
    assert s["std"] == pytest.approx(math.sqrt(8 / 3))


def test_message_layout_round_trip():
    assert message.MESSAGE_DTYPE.itemsize == 4096
    entries = [Entry(f"Node{i}", 10 ** 12 + i, i, i % 3) for i in range(70)]
    buf = message.encode(entries, data0=42)
    assert len(buf) == 4096
    back = message.decode(buf)
    assert back == entries[:63]  # the array holds at most 63 entries
    # field offsets of the documented layout
    assert int.from_bytes(buf[0:8], "little") == 63
    assert int.from_bytes(buf[8:16], "little") == 10 ** 12
    assert buf[24:29] == b"Node0"
    assert int.from_bytes(buf[4040:4048], "little", signed=True) == 42


def test_dump_reader(tmp_path):
    recs = np.zeros(3, dtype=message.RECORD_DTYPE)
    for i in range(3):
        recs[i]["sink"] = i % 2
        recs[i]["received"] = 1000 + i
        recs[i]["message"] = np.frombuffer(message.encode([Entry("A", i, i)]), dtype=message.MESSAGE_DTYPE)[0]
    f = tmp_path / "dump.bin"
    recs.tofile(f)
    d = message.read_dump(f, ["VehicleDBWSystem", "IntersectionOutput"])
    assert [r for r, _ in d["VehicleDBWSystem"]] == [1000, 1002]
    assert d["IntersectionOutput"][0][1] == [Entry("A", 1, 1)]


def test_usage_summary_cpu_share_over_the_measured_window():
    from chainrt.reference_system.runner import usage_summary
    # 100 ms samples; 40 ms CPU per 100 ms after a 1 s warm-up with 90 ms per 100 ms before
    usage, cpu = [], 0
    for k in range(31):
        usage.append([k * 100 * MS, cpu, (30 + k) * 2 ** 20])
        cpu += 90 * MS if k < 10 else 40 * MS
    u = usage_summary(usage, warmup_ns=1000 * MS)
    assert u["cpu_percent"] == pytest.approx(40.0)
    assert u["rss_max_bytes"] == 60 * 2 ** 20
    # series: the share over the last second at every sample from 1 s on
    assert len(u["series"]) == 21 and u["series"][0]["cpu_percent"] == pytest.approx(90.0)
    assert u["series"][-1]["cpu_percent"] == pytest.approx(40.0)


def test_sequence_gaps_count_skipped_numbers_only():
    assert kpi.sequence_gaps([1, 2, 3]) == 0
    assert kpi.sequence_gaps([1, 3, 4, 7]) == 1 + 2
    assert kpi.sequence_gaps([5, 5, 2, 4]) == 1  # a repeat or a restart skips none


def test_lidar_samples_lost_before_the_sink_are_counted_without_a_dropped_entry():
    # every 3rd LiDAR sample never reaches the sink (overwritten after the hot path), and no
    # entry of the samples that do arrive says so: the hot-path drops stay 0, the gaps do not
    arrived = [i for i in range(1, 61) if i % 3]
    samples = [hot_sample(i * 100 * MS, 0, 0, 10 * MS, i) for i in arrived]
    d = kpi.run_kpis({"VehicleDBWSystem": samples}).to_dict()
    measured = arrived[kpi.WARMUP_SAMPLES:]
    lost = sum(1 for i in range(measured[0], measured[-1] + 1) if i % 3 == 0)
    assert d["hot_path_drops"] == 0
    assert d["lidar_samples_lost"] == {"FrontLidarDriver": lost, "RearLidarDriver": lost}
    pooled = kpi.pooled([kpi.run_kpis({"VehicleDBWSystem": samples})] * 2).to_dict()
    assert pooled["lidar_samples_lost"]["FrontLidarDriver"] == 2 * lost


def test_lidar_gaps_skip_samples_without_the_hot_path():
    samples = [hot_sample(i * 100 * MS, 0, 0, 10 * MS, i) for i in range(1, 31)]
    samples[20] = [Entry("BehaviorPlanner", 2_000 * MS, 20)]  # the planner fired with no hot-path input
    d = kpi.run_kpis({"VehicleDBWSystem": samples}).to_dict()
    assert d["lidar_samples_lost"] == {"FrontLidarDriver": 1, "RearLidarDriver": 1}
