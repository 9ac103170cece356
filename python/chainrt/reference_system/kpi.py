"""KPIs of the reference system, computed as upstream computes them from the stats array of
the samples that reach a sink (shared/reference/autoware-reference-system.md, "KPIs"):

- warm-up: the first ``WARMUP_SAMPLES`` samples at a sink are skipped;
- hot-path latency of a sample: timestamp(ObjectCollisionEstimator)
  - max(timestamp(FrontLidarDriver), timestamp(RearLidarDriver)); min, max, mean and standard
  deviation as running statistics (Welford), plus the p99 (nearest rank, the runtime's rule);
- hot-path drops of a sample: the sum of ``dropped_samples`` over its hot-path entries (what
  the PiCAS paper's Table I reports, per sample: upstream's std_latency "dropped");
- LiDAR samples lost before the sink: the gaps in each LiDAR driver's sequence number between
  consecutive hot-path samples at the sink (upstream's README KPI "front LiDAR samples that did
  not trigger an update"); it also counts a sample lost after the hot path (a depth-1 input
  overwritten at BehaviorPlanner), which no hot-path entry's ``dropped_samples`` records;
- behaviour-planner period: (timestamp - previous timestamp) / (sequence - previous sequence)
  of consecutive BehaviorPlanner entries; jitter: the deviation from the nominal 100 ms.

All times are integer nanoseconds in, floats only for means and deviations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .message import Entry, Sample

WARMUP_SAMPLES = 10
FRONT_LIDAR = "FrontLidarDriver"
REAR_LIDAR = "RearLidarDriver"
HOT_PATH_END = "ObjectCollisionEstimator"
HOT_PATH_NODES = (FRONT_LIDAR, REAR_LIDAR, "PointsTransformerFront", "PointsTransformerRear",
                  "PointCloudFusion", "RayGroundFilter", "EuclideanClusterDetector", HOT_PATH_END)
BEHAVIOR_PLANNER = "BehaviorPlanner"
BEHAVIOR_PLANNER_PERIOD_NS = 100_000_000
HOT_PATH_SINK = "VehicleDBWSystem"


@dataclass
class Welford:
    """Running count, mean, variance (population, M2/n), min and max (Welford's update)."""
    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    def add(self, x: float) -> None:
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)
        self.min = min(self.min, x)
        self.max = max(self.max, x)

    @property
    def std(self) -> float:
        return math.sqrt(self.m2 / self.count) if self.count else 0.0


def quantile(values: list[int], p: float) -> int:
    """Nearest-rank p-quantile (0 < p <= 1), as the runtime's monitor computes it."""
    if not values:
        return 0
    s = sorted(values)
    rank = max(1, math.ceil(p * len(s) - 1e-9))
    return int(s[min(rank, len(s)) - 1])


def after_warmup(samples: list, warmup: int = WARMUP_SAMPLES) -> list:
    """The samples of one sink without its first `warmup` ones."""
    return list(samples[warmup:])


def entry(sample: Sample, node: str) -> Entry | None:
    """The entry of `node` in a sample (each node appears at most once)."""
    for e in sample:
        if e.node == node:
            return e
    return None


def hot_path_latency(sample: Sample) -> int | None:
    """timestamp(ObjectCollisionEstimator) - max(timestamp(front lidar), timestamp(rear lidar));
    None when the sample did not pass the whole hot path."""
    end, front, rear = entry(sample, HOT_PATH_END), entry(sample, FRONT_LIDAR), entry(sample, REAR_LIDAR)
    if end is None or front is None or rear is None:
        return None
    return int(end.timestamp) - max(int(front.timestamp), int(rear.timestamp))


def hot_path_drops(sample: Sample) -> int:
    """Sum of dropped_samples over the hot-path entries of a sample."""
    return sum(e.dropped for e in sample if e.node in HOT_PATH_NODES)


def sequence_gaps(sequences: list[int]) -> int:
    """Sequence numbers skipped in an arrival-ordered list: the sum of ``new - prev - 1`` where
    ``new > prev`` (upstream's get_missed_samples_and_update_seq_nr); a repeated or lower
    number (the same sample again, a restarted publisher) skips none."""
    lost = 0
    for prev, new in zip(sequences, sequences[1:]):
        if new > prev:
            lost += new - prev - 1
    return lost


def lidar_samples_lost(samples: list[Sample], roots: tuple[str, ...] = (FRONT_LIDAR, REAR_LIDAR)) -> dict[str, int]:
    """Per LiDAR driver, its samples that never reached the sink between the first and the last
    hot-path sample of `samples`: the gaps in its entries' sequence numbers."""
    out = {}
    for root in roots:
        seqs = [e.sequence for e in (entry(s, root) for s in samples) if e is not None]
        out[root] = sequence_gaps(seqs)
    return out


def periods(samples: list[Sample], node: str = BEHAVIOR_PLANNER, keep=None) -> list[float]:
    """(t - t_prev) / (seq - seq_prev) of consecutive entries of `node` (new sequence only);
    ``keep(prev, entry)``: only the periods it accepts (all by default)."""
    out: list[float] = []
    prev: Entry | None = None
    for s in samples:
        e = entry(s, node)
        if e is None:
            continue
        if prev is not None and e.sequence > prev.sequence and (keep is None or keep(prev, e)):
            out.append((e.timestamp - prev.timestamp) / (e.sequence - prev.sequence))
        if prev is None or e.sequence > prev.sequence:
            prev = e
    return out


def _stats(values: list[float], with_p99: bool = True) -> dict:
    w = Welford()
    for v in values:
        w.add(v)
    d = {"min_ns": int(w.min) if w.count else 0, "mean_ns": w.mean, "max_ns": int(w.max) if w.count else 0,
         "std_ns": w.std, "count": w.count}
    if with_p99:
        d["p99_ns"] = quantile([int(v) for v in values], 0.99)
    return d


@dataclass
class RunKpis:
    """The KPIs of one run (one configuration, one repetition)."""
    hot_path_latencies: list[int] = field(default_factory=list)
    hot_path_drops_per_sample: list[int] = field(default_factory=list)
    behavior_planner_periods: list[float] = field(default_factory=list)
    sink_samples: dict[str, int] = field(default_factory=dict)
    dropped_by_node: dict[str, int] = field(default_factory=dict)  # over the measured samples
    lidar_lost: dict[str, int] = field(default_factory=dict)  # lidar_samples_lost of the measured samples

    def to_dict(self, nominal_period_ns: int = BEHAVIOR_PLANNER_PERIOD_NS) -> dict:
        lat = _stats(self.hot_path_latencies)
        per = _stats(self.behavior_planner_periods, with_p99=False)
        jit = [abs(p - nominal_period_ns) for p in self.behavior_planner_periods]
        drops = self.hot_path_drops_per_sample
        return {
            "hot_path_latency": lat,
            "hot_path_drops": int(sum(drops)),
            "hot_path_drops_per_sample": {"mean": (sum(drops) / len(drops)) if drops else 0.0,
                                          "std": _stats(drops, with_p99=False)["std_ns"] if drops else 0.0},
            "behavior_planner_period": per,
            "behavior_planner_jitter": {"mean_abs_ns": (sum(jit) / len(jit)) if jit else 0.0,
                                        "max_abs_ns": max(jit) if jit else 0.0},
            "sink_samples": dict(self.sink_samples),
            "dropped_by_node": dict(self.dropped_by_node),
            "lidar_samples_lost": dict(self.lidar_lost),
        }


def run_kpis(sinks: dict[str, list[Sample]], warmup: int = WARMUP_SAMPLES,
             hot_path_sink: str = HOT_PATH_SINK, keep_sample=None, keep_period=None) -> RunKpis:
    """KPIs of one run from the samples each sink received (in arrival order); ``keep_sample``
    and ``keep_period`` (:func:`periods`): only the hot-path samples and planner periods they
    accept (the platform-free ones, reference_system.accounting)."""
    k = RunKpis()
    for name, samples in sinks.items():
        k.sink_samples[name] = len(samples)
    measured = after_warmup(sinks.get(hot_path_sink, []), warmup)
    for s in measured:
        lat = hot_path_latency(s)
        if lat is not None and (keep_sample is None or keep_sample(s)):
            k.hot_path_latencies.append(lat)
            k.hot_path_drops_per_sample.append(hot_path_drops(s))
    k.behavior_planner_periods = periods(measured, keep=keep_period)
    k.lidar_lost = lidar_samples_lost(measured)
    for s in measured:
        for e in s:
            k.dropped_by_node[e.node] = k.dropped_by_node.get(e.node, 0) + e.dropped
    return k


def pooled(runs: list[RunKpis]) -> RunKpis:
    """All samples of several runs of one configuration together."""
    out = RunKpis()
    for r in runs:
        out.hot_path_latencies += r.hot_path_latencies
        out.hot_path_drops_per_sample += r.hot_path_drops_per_sample
        out.behavior_planner_periods += r.behavior_planner_periods
        for s, n in r.sink_samples.items():
            out.sink_samples[s] = out.sink_samples.get(s, 0) + n
        for node, n in r.dropped_by_node.items():
            out.dropped_by_node[node] = out.dropped_by_node.get(node, 0) + n
        for node, n in r.lidar_lost.items():
            out.lidar_lost[node] = out.lidar_lost.get(node, 0) + n
    return out


def spread(values: list[float]) -> dict:
    """Spread of one figure over repeated runs: mean, std (population), min, max, runs."""
    w = Welford()
    for v in values:
        if v is not None:  # a run without the figure (e.g. no sample reached the sink)
            w.add(v)
    return {"mean": w.mean, "std": w.std, "min": w.min if w.count else 0.0,
            "max": w.max if w.count else 0.0, "runs": w.count}
