"""Reference-system structure read from the model (node types, topology, floor, loads), the
compared configurations as model variants, the report (table, JSON, CSV, plots, HTML) on
synthetic KPIs, and the CLI; a short real run when the C++ workload is built."""

from __future__ import annotations

import json
import pathlib

import pytest

import chainrt
from chainrt.cli import main
from chainrt.reference_system import configs, kpi, report, runner, topology
from chainrt.reference_system.message import Entry

ROOT = pathlib.Path(__file__).resolve().parents[2]
REF = ROOT / "examples" / "autoware_reference.yaml"
LAME = ROOT / "examples" / "autoware_lame.yaml"
MS = 1_000_000

UPSTREAM_TYPES = {
    "FrontLidarDriver": "Sensor", "RearLidarDriver": "Sensor", "PointCloudMap": "Sensor", "Visualizer": "Sensor",
    "Lanelet2Map": "Sensor", "EuclideanClusterSettings": "Sensor", "PointsTransformerFront": "Transform",
    "PointsTransformerRear": "Transform", "PointCloudFusion": "Fusion", "RayGroundFilter": "Transform",
    "VoxelGridDownsampler": "Transform", "PointCloudMapLoader": "Transform", "NDTLocalizer": "Fusion",
    "EuclideanClusterDetector": "Intersection", "ObjectCollisionEstimator": "Transform",
    "Lanelet2GlobalPlanner": "Fusion", "Lanelet2MapLoader": "Fusion", "ParkingPlanner": "Transform",
    "LanePlanner": "Transform", "BehaviorPlanner": "Cyclic", "MPCController": "Transform",
    "VehicleInterface": "Fusion", "VehicleDBWSystem": "Command", "IntersectionOutput": "Command"}
UPSTREAM_INPUTS = {
    "PointCloudFusion": ["PointsTransformerFront", "PointsTransformerRear"],
    "NDTLocalizer": ["VoxelGridDownsampler", "PointCloudMapLoader"],
    "EuclideanClusterDetector": ["RayGroundFilter", "EuclideanClusterSettings"],
    "Lanelet2GlobalPlanner": ["Visualizer", "NDTLocalizer"],
    "Lanelet2MapLoader": ["Lanelet2Map", "Lanelet2GlobalPlanner"],
    "BehaviorPlanner": ["ObjectCollisionEstimator", "NDTLocalizer", "Lanelet2GlobalPlanner", "Lanelet2MapLoader",
                        "ParkingPlanner", "LanePlanner"],
    "VehicleInterface": ["MPCController", "BehaviorPlanner"]}


@pytest.mark.parametrize("path", [REF, LAME], ids=["reference", "lame"])
def test_node_types_and_inputs_match_upstream(path):
    types = topology.node_types(chainrt.load_model(str(path)))
    assert {n: t.type for n, t in types.items()} == UPSTREAM_TYPES
    for node, inputs in UPSTREAM_INPUTS.items():
        if path == REF:  # input order = merge order (input 0 first)
            assert types[node].inputs == inputs
        else:            # LaME lists the trigger callback after the input callback
            assert sorted(types[node].inputs) == sorted(inputs)


def test_topology_one_publisher_per_topic_and_upstream_subscribers():
    g = topology.topic_graph(chainrt.load_model(str(REF)))
    assert len(g) == 23
    assert all(len(v["publishers"]) == 1 for v in g.values())
    assert g["EuclideanIntersection"]["publishers"] == ["EuclideanClusterDetector"]
    assert sorted(g["Lanelet2MapLoader"]["subscribers"]) == ["BehaviorPlanner", "LanePlanner", "ParkingPlanner"]
    assert sorted(g["PointCloudFusion"]["subscribers"]) == ["RayGroundFilter", "VoxelGridDownsampler"]
    assert g["VehicleInterface"]["subscribers"] == ["VehicleDBWSystem"]


def test_rates_demand_floor_and_stressed_scale():
    m = chainrt.load_model(str(REF))
    r = topology.rates(m)
    assert r["EuclideanClusterDetector/EuclideanClusterSettings"] == pytest.approx(40.0)
    assert r["NDTLocalizer/PointCloudMapLoader"] == pytest.approx(1e9 / 120e6)
    # working demand: 19 working runs of 2 ms per 100 ms-ish (hand count, see configs docs)
    assert topology.demand(m, working_only=True) == pytest.approx(0.38, abs=1e-9)
    assert 0.35 < topology.demand(m) < 0.45
    assert topology.hot_path_floor(m) == 10 * MS          # PTR + fusion + RGF + ECD + one blocking
    assert topology.hot_path_floor(m, blocking=False) == 8 * MS
    s = configs.load_scale(m, "stressed")
    stressed = configs.scaled(chainrt.load_model(str(REF)), s)
    assert topology.demand(stressed) == pytest.approx(configs.STRESSED_DEMAND, abs=2e-3)
    by = {c.name: c for c in stressed.callbacks}
    assert by["RayGroundFilter/PointCloudFusion"].wcet == round(2 * MS * s)
    assert by["FrontLidarDriver/timer"].wcet == 50_000                      # sensors are not scaled
    assert by["BehaviorPlanner/ObjectCollisionEstimator"].wcet == 20_000   # caching is not scaled


@pytest.mark.parametrize("name", list(configs.CONFIGS))
def test_every_configuration_is_a_valid_variant(name):
    m = configs.variant(str(REF), name, "default", pin_core=1, rt_priority=10)
    assert name.startswith(configs.CONFIGS[name].policy)
    assert {e.policy for e in m.executors} == {configs.CONFIGS[name].policy}
    assert len(m.nodes) == 24
    assert all(t.cores == [1] for e in m.executors for t in e.threads)
    # SCHED_FIFO (at the base priority or above) exactly for the executors that run a chain with a deadline
    critical = {cb for ch in m.chains for cb in ch.callbacks}
    placed = {n.name: n.executor for n in m.nodes}
    for e in m.executors:
        runs_chain = any(c.name in critical for c in m.callbacks if placed[c.node] == e.name)
        for t in e.threads:
            assert t.fifo_priority is None or (t.fifo_priority >= 10 and runs_chain), e.name
            # (upstream's prioritized layout keeps its own: "other" runs planner callbacks at normal priority)
            assert configs.CONFIGS[name].own_priorities or (t.fifo_priority is not None) == runs_chain, e.name
        assert runs_chain or e.priority is None, e.name
    assert m.callback("BehaviorPlanner/timer").offset == 0
    assert configs.variant(str(REF), name, planner_phase_ns=50 * MS).callback("BehaviorPlanner/timer").offset == 50 * MS
    assert [c.name for c in m.chains] == ["hot_path_front", "hot_path_rear", "behavior_planner"]
    # every executor of a layout charges the base model's executor's own time per dispatch
    base = chainrt.load_model(str(REF)).executors[0].dispatch_overhead
    assert base > 0 and {e.dispatch_overhead for e in m.executors} == {base}


def test_creation_phases_follow_upstreams_node_order():
    # rcl starts a timer's period at its creation; upstream creates the nodes in the model's order
    m = configs.variant(str(REF), "ros-default-st", creation_step_ns=2 * MS)
    order = [n.name for n in m.nodes]
    for c in m.callbacks:
        if c.period:
            assert c.offset == (order.index(c.node) * 2 * MS) % c.period, c.name
    assert m.callback("FrontLidarDriver/timer").offset == 0
    assert m.callback("RearLidarDriver/timer").offset == 2 * MS
    assert m.callback("BehaviorPlanner/timer").offset == order.index("BehaviorPlanner") * 2 * MS
    # the planner phase adds to it, modulo the period
    p = configs.variant(str(REF), "ros-default-st", creation_step_ns=2 * MS, planner_phase_ns=90 * MS)
    assert p.callback("BehaviorPlanner/timer").offset == (order.index("BehaviorPlanner") * 2 + 90) * MS % (100 * MS)


def test_simulated_default_executor_with_creation_phases_is_milder():
    # all timers together is the harshest case for the single-threaded default executor
    together = runner.simulate_config(configs.variant(str(REF), "ros-default-st", pin_core=1), 3_000_000_000)
    staggered = runner.simulate_config(
        configs.variant(str(REF), "ros-default-st", pin_core=1, creation_step_ns=2 * MS), 3_000_000_000)
    assert staggered["hot_path_latency"]["mean_ns"] < 0.8 * together["hot_path_latency"]["mean_ns"]


def test_prioritized_layout_is_upstreams():
    m = configs.variant(str(REF), "ros-default-prioritized")
    ex = {e.name: e for e in m.executors}
    nodes = {e: sorted(n.name for n in m.nodes if n.executor == e) for e in ex}
    assert nodes["front"] == ["FrontLidarDriver", "PointsTransformerFront"]
    assert nodes["rear"] == ["PointsTransformerRear", "RearLidarDriver"]
    assert nodes["fusion"] == ["EuclideanClusterDetector", "ObjectCollisionEstimator", "PointCloudFusion",
                               "RayGroundFilter"]
    assert nodes["planner"] == ["BehaviorPlanner"]
    assert len(nodes["other"]) == 24 - 9
    assert [ex[e].threads[0].fifo_priority for e in ("front", "rear", "fusion", "planner", "other")] == [1, 1, 1, 30, None]


def test_picas_multi_executor_priorities_follow_their_most_critical_callback():
    m = configs.variant(str(REF), "picas-multi")
    ex = {e.name: e for e in m.executors}
    assert ex["planner"].priority == 69 and ex["hot_path"].priority == 58
    assert ex["planner"].threads[0].fifo_priority > ex["hot_path"].threads[0].fifo_priority
    assert {n.name for n in m.nodes if n.executor == "planner"} == {
        "BehaviorPlanner", "MPCController", "VehicleInterface", "VehicleDBWSystem"}


@pytest.mark.parametrize("rt", [None, 10])
def test_only_executors_with_a_deadline_chain_get_sched_fifo(rt):
    # the layout rule: SCHED_FIFO where an executor runs a chain with a deadline, SCHED_OTHER elsewhere
    def fifo(config, **kw):
        m = configs.variant(str(REF), config, rt_priority=rt, **kw)
        return {e.name: (e.priority, [t.fifo_priority for t in e.threads]) for e in m.executors}
    base = rt or 0
    for multi in ("picas-multi", "edf-multi"):
        f = fifo(multi)
        assert f["planner"][1] == [base + 3] and f["hot_path"][1] == [base + 2]
        assert f["other"] == (None, [None])   # no chain: neither a FIFO nor an executor priority
    p = fifo("ros-default-prioritized")
    assert [p[e][1] for e in ("front", "rear", "fusion", "planner")] == [[base + 1]] * 3 + [[base + 30]]
    # upstream's layout keeps its own classes: its "other" (which also runs the planner chain's
    # later callbacks) at normal priority, as upstream runs it
    assert p["other"] == (None, [None])
    # one executor holding everything runs the chains: SCHED_FIFO at the base (none without one)
    assert fifo("picas-single")["main"][1] == [rt]
    assert fifo("edf-mt")["main"][1] == [rt, rt]
    # the rule reads the chains, not the layout's names: without deadlines nothing is real-time
    m = chainrt.load_model(str(REF))
    assert configs.needs_fifo(m, ["BehaviorPlanner"]) and configs.needs_fifo(m, ["RayGroundFilter"])
    other = [n.name for n in configs.variant(str(REF), "picas-multi").nodes if n.executor == "other"]
    assert len(other) == 12 and not configs.needs_fifo(m, other)
    chains = m.chains
    for ch in chains:
        ch.deadline = 0  # none
    m.chains = chains
    assert not configs.needs_fifo(m, [n.name for n in m.nodes])


def test_the_other_executor_is_below_every_chain_in_the_simulator():
    # picas-multi's "other" executor without a SCHED_FIFO priority: the simulated hot path and
    # planner are what they were with "other" at the lowest FIFO rank
    m = configs.variant(str(REF), "picas-multi", pin_core=1, rt_priority=10)
    sim = runner.simulate_config(m, 2_000_000_000)
    old = configs.variant(str(REF), "picas-multi", pin_core=1, rt_priority=10)
    exs = old.executors
    for e in exs:
        if e.name == "other":
            e.threads[0].fifo_priority = 11
    old.executors = exs
    before = runner.simulate_config(old, 2_000_000_000)
    assert sim["chains"] == before["chains"]
    assert sim["hot_path_latency"] == before["hot_path_latency"]


def test_unknown_configuration_is_rejected():
    with pytest.raises(ValueError, match="unknown configuration"):
        configs.parse_configs("picas-single,nope")
    assert main(["bench", "reference-system", "--configs", "nope", "--model-only"]) == 1


def _synthetic_runs(base_latency: int, seed: int, n_runs: int = 3) -> list[dict]:
    import random
    rng = random.Random(seed)
    runs = []
    for r in range(n_runs):
        samples = []
        for i in range(40):
            lat = base_latency + rng.randrange(0, 3 * MS)
            samples.append([Entry("FrontLidarDriver", i * 100 * MS, i), Entry("RearLidarDriver", i * 100 * MS + 50_000, i),
                            Entry("ObjectCollisionEstimator", i * 100 * MS + 50_000 + lat, i, 1 if i == 20 else 0),
                            Entry("BehaviorPlanner", i * 100 * MS + 50 * MS + rng.randrange(0, 200_000), i)])
        runs.append({"kpis": kpi.run_kpis({"VehicleDBWSystem": samples, "IntersectionOutput": []}),
                     "usage": {"cpu_percent": 40.0 + r, "rss_max_bytes": 30 * 2 ** 20,
                               "series": [{"t_ns": k * 100 * MS, "cpu_percent": 40.0, "rss_bytes": 30 * 2 ** 20}
                                          for k in range(10)]},
                     "runtime_chains": {"hot_path_rear": {"instances": 40, "mean_ns": base_latency + 2 * MS,
                                                          "wcrt_ns": base_latency + 5 * MS}},
                     "warnings": []})
    return runs


def test_report_from_synthetic_runs(tmp_path):
    result = {"benchmark": "autoware-reference-system", "load": "default", "work_scale": 1.0, "demand": 0.39,
              "duration_ns": 4 * 10 ** 9, "warmup_ns": 10 ** 9, "repeat": 3, "pin_core": 1,
              "hot_path_floor_ns": 10 * MS, "hot_path_floor_no_blocking_ns": 8 * MS, "configs": {}}
    for name, base in (("ros-default-st", 30 * MS), ("picas-single", 10 * MS)):
        result["configs"][name] = runner.aggregate(name, _synthetic_runs(base, len(name)), 10 * MS)
    result["checks"] = runner.checks(result)
    c = result["configs"]["picas-single"]
    assert set(c["hot_path_latency"]) >= {"min_ns", "mean_ns", "max_ns", "std_ns", "p99_ns"}
    assert c["hot_path_drops"] == 3  # one per run, after warm-up
    assert set(c["behavior_planner_period"]) >= {"mean_ns", "std_ns"}
    assert c["spread"]["hot_path_latency_mean_ns"]["runs"] == 3
    assert result["checks"]["picas-single"]["at_most_half_of_ros_default_st"]
    assert not result["checks"]["picas-single"]["zero_drops"]
    out = report.write_report(result, tmp_path)
    assert "picas-single" in out["table"] and "ros-default-st" in out["table"]
    names = {p.name for p in out["images"]}
    assert {"hot_path_latency.png", "hot_path_latency_cdf.png", "behavior_planner_period.png",
            "hot_path_drops.png", "cpu_memory.png"} <= names
    assert all(p.stat().st_size > 1000 for p in out["images"])
    page = (tmp_path / "index.html").read_text()
    assert all(p.name in page for p in out["images"])
    rows = (tmp_path / "kpis.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * (3 + 1)
    md = (tmp_path / "summary.md").read_text()
    assert "| `picas-single` |" in md and "± " in md
    back = json.loads((tmp_path / "result.json").read_text())
    assert back["configs"]["ros-default-st"]["hot_path_latency"]["count"] == 90


def test_cli_model_only_json(tmp_path, capsys):
    rc = main(["bench", "reference-system", "--model-only", "--no-plots", "--json", "--load", "stressed",
               "--configs", "picas-single,edf-mt", "--out", str(tmp_path)])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d["configs"]) == ["picas-single", "edf-mt"]
    assert d["load"] == "stressed" and d["work_scale"] > 2
    assert d["configs"]["edf-mt"]["simulated"]["hot_path"]["instances"] > 0
    assert (tmp_path / "models" / "edf-mt.yaml").is_file()


def _binary_or_skip():
    try:
        return runner.find_binary()
    except runner.WorkloadNotFound as err:
        pytest.skip(str(err))


def test_short_real_run(tmp_path, capsys):
    _binary_or_skip()
    rc = main(["bench", "reference-system", "--duration", "2s", "--warmup", "500ms", "--repeat", "1",
               "--configs", "picas-single", "--no-plots", "--no-analysis", "--json", "--out", str(tmp_path)])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    c = d["configs"]["picas-single"]
    assert c["hot_path_latency"]["count"] > 0
    assert c["hot_path_latency"]["min_ns"] > 0
    assert c["behavior_planner_period"]["count"] > 0
    assert c["cpu"]["mean_percent"]["mean"] > 0
    assert (tmp_path / "kpis.csv").is_file()


def test_gantt_from_executor_trace(tmp_path):
    # [executor, callback, thread, start, finish, deadline, release]; a LiDAR release every 100 ms
    recs = []
    for k in range(40):
        t = 10 ** 9 + k * 100 * MS
        recs += [["main", "FrontLidarDriver/timer", 0, t + 3 * MS, t + 3 * MS + 50_000, 0, t],
                 ["main", "PointsTransformerFront/FrontLidarDriver", 0, t + 4 * MS, t + 6 * MS, 0, t],
                 ["main", "BehaviorPlanner/timer", 1, t + 1 * MS, t + 3 * MS, 0, t]]
    g = runner.gantt_trace(recs, window_ns=250 * MS, skip_ns=2 * 10 ** 9)
    assert g["events"][0][3] >= 0
    lidar = [e for e in g["events"] if g["callbacks"][e[1]] == "FrontLidarDriver/timer"]
    assert lidar[0][3] == 1 * MS + 3 * MS  # 1 ms before the nominal release, started 3 ms late
    assert len(g["threads"]) == 2
    plt = report.pyplot()
    out = report.draw_gantt(g, tmp_path / "g.png", plt, "test")
    assert out.stat().st_size > 1000
    assert runner.gantt_trace([]) is None


def test_simulated_upstream_kpi_from_a_trace():
    m = chainrt.load_model(str(REF))
    names = [c.name for c in m.callbacks]
    f, r, o = (names.index(n) for n in ("FrontLidarDriver/timer", "RearLidarDriver/timer",
                                        "ObjectCollisionEstimator/EuclideanClusterDetector"))
    events = []
    for k in range(20):
        t = k * 100 * MS
        events += [[0, f, t, t + 1 * MS, t + 1 * MS + 50_000], [0, r, t, t + 3 * MS, t + 3 * MS + 50_000],
                   [0, o, t + 12 * MS, t + 3 * MS + 9 * MS + k * 1000, t + 15 * MS]]
    d = runner.simulated_kpi(m, {"callbacks": names, "events": events})
    lat = d["hot_path_latency"]
    assert lat["count"] == 20 - kpi.WARMUP_SAMPLES
    assert lat["min_ns"] == 9 * MS + 10 * 1000 and lat["max_ns"] == 9 * MS + 19 * 1000


def test_simulator_reproduces_the_single_threaded_kpi_order():
    # the simulator on the configurations' models: PiCAS <= EDF < ROS default (stressed, one core).
    # With every timer on one release grid the schedule repeats each hyperperiod, and on one core
    # the hot path's deadlines order its callbacks as PiCAS's chain priorities do: equal there.
    lat = {}
    for name in ("ros-default-st", "picas-single", "edf-st"):
        m = configs.variant(str(REF), name, "stressed", pin_core=0)
        lat[name] = runner.simulate_config(m, 5 * 10 ** 9)["hot_path_latency"]["mean_ns"]
    assert lat["picas-single"] <= lat["edf-st"] < lat["ros-default-st"]
    floor = topology.hot_path_floor(configs.variant(str(REF), "picas-single", "stressed"))
    assert lat["picas-single"] <= floor and lat["edf-st"] <= 1.3 * floor


def test_starved_runs_are_flagged_and_runs_without_samples_do_not_count():
    runs = _synthetic_runs(10 * MS, 5)
    runs[1]["usage"]["cpu_percent"] = 5.0
    runs[2]["kpis"] = kpi.run_kpis({"VehicleDBWSystem": []})
    c = runner.aggregate("picas-single", runs, 10 * MS, demand=0.39)
    assert c["disturbed_runs"] == [{"run": 2, "cpu_percent": 5.0}]
    assert c["spread"]["hot_path_latency_mean_ns"]["runs"] == 2
    result = {"load": "default", "work_scale": 1.0, "demand": 0.39, "duration_ns": 10 ** 9, "repeat": 3,
              "hot_path_floor_ns": 10 * MS, "configs": {"picas-single": c}}
    assert "DISTURBED runs" in report.format_table(result)
    empty = runner.aggregate("edf-st", [runs[2]], 10 * MS)
    assert empty["latency_over_floor"] is None
    assert runner.checks({"load": "default", "configs": {"edf-st": empty}})["edf-st"]["no_samples"]


def test_a_callback_that_lost_the_cpu_is_named_in_the_verdict():
    """A planner callback whose wall time far exceeds its CPU time in one run: the benchmark keeps
    the instance (run, callback, wall, CPU) and the verdict names it as the likely cause of a
    measured response above the bound, instead of "not identified"."""
    from chainrt import verdict
    runs = _synthetic_runs(10 * MS, 7)
    runs[0]["runtime_callbacks"] = {"BehaviorPlanner/timer": {"wall_max_ns": 8_600_000, "cpu_max_ns": 2_200_000},
                                    "MPCController/BehaviorPlanner": {"wall_max_ns": 2_100_000, "cpu_max_ns": 2_000_000}}
    runs[1]["runtime_callbacks"] = {"BehaviorPlanner/timer": {"wall_max_ns": 2_900_000, "cpu_max_ns": 2_000_000}}
    m = configs.variant(str(REF), "picas-multi")
    cbs = runner.chain_callbacks(m)
    assert "BehaviorPlanner/timer" in cbs["behavior_planner"] and "PointCloudFusion/PointsTransformerFront" in cbs["hot_path"]
    c = runner.aggregate("picas-multi", runs, 10 * MS, demand=0.39, chains=cbs)
    # (2.9 ms wall for 2.0 ms CPU is below the rule: 1.5 x CPU + 1 ms)
    assert c["preempted"] == {"behavior_planner": [{"run": 1, "callback": "BehaviorPlanner/timer",
                                                    "wall_ns": 8_600_000, "cpu_ns": 2_200_000}]}
    c["runtime_chains"]["behavior_planner"] = {"wcrt_ns": 15_100_000}
    c["analysis"] = {"behavior_planner_bound_ns": 8_220_000}
    lines = verdict.bench_findings({"rt_priority": 10, "configs": {"picas-multi": c}})
    assert lines == ["picas-multi: behavior_planner measured WCRT 15.10 ms exceeds the analysis bound 8.22 ms (1.8x); "
                     "likely cause: preempted while running (run 1: BehaviorPlanner/timer took 8.60 ms of wall time "
                     "for 2.20 ms of CPU)"]


def test_the_bound_with_the_measured_platform_decides_the_verdict():
    """With the platform measured beside the runs (the hosts' blackout curve), a measured response
    above the model's bound but within the platform bound is reported as the model's assumption
    (no 'analysis bound' line, so --fail-on-miss passes); above the platform bound it is a miss."""
    from chainrt import verdict
    c = {"runtime_chains": {"behavior_planner": {"wcrt_ns": 15_100_000}},
         "analysis": {"behavior_planner_bound_ns": 8_220_000},
         "analysis_platform": {"behavior_planner_bound_ns": 30_000_000}}
    lines = verdict.bench_findings({"rt_priority": 10, "configs": {"picas-multi": c}})
    assert len(lines) == 1 and "analysis bound" not in lines[0]
    assert "the model's bound 8.22 ms, which assumes a CPU that is always there" in lines[0]
    assert "30.00 ms and holds" in lines[0]
    c["analysis_platform"]["behavior_planner_bound_ns"] = 12_000_000
    lines = verdict.bench_findings({"rt_priority": 10, "configs": {"picas-multi": c}})
    assert lines[0].startswith("picas-multi: behavior_planner measured WCRT 15.10 ms exceeds the analysis bound with "
                               "the measured platform 12.00 ms (1.3x)")


def test_platform_curve_from_the_runs_and_the_model_variant():
    """The curve of a configuration is the largest S(Δ) over its runs' CPUs plus the probe's own
    time per wake-up; a run without a probe leaves the configuration without one, with the reason;
    the variant carries the curve on its hosts and picas-st bounds the planner with it."""
    from chainrt.crosslayer import platform
    runs = [{"platform": {"blackouts": {1: [(0, 2 * MS), (50 * MS, 51 * MS)]}, "period_ns": MS // 2, "cost_ns": 10_000,
                          "dropped": 0}},
            {"platform": {"blackouts": {1: [(0, 3 * MS)]}, "period_ns": MS // 2, "cost_ns": 20_000, "dropped": 0}}]
    points, why = runner.platform_curve(runs)
    assert why == ""
    at = dict(points)
    assert at[1 * MS] == 1 * MS                                      # never more than the window
    assert at[5 * MS] == 3 * MS + (10 + 1) * 20_000                  # run 2's 3 ms + 11 wake-ups
    assert at[100 * MS] == 3 * MS + (200 + 1) * 20_000               # run 1 has 3 ms too, run 2 no more
    assert [w for w, _ in points] == [int(w * MS) for w in platform.CURVE_WINDOWS_MS]
    assert all(a[1] <= b[1] for a, b in zip(points, points[1:]))
    # an executor thread's late wake-up of 6 ms (accounting.late_wakeups) is a blackout of its CPU too
    woke = [dict(runs[0], accounting={"wakeups": {1: [(10 * MS, 16 * MS)]}}), runs[1]]
    assert dict(runner.platform_curve(woke)[0])[10 * MS] == 6 * MS + (20 + 1) * 20_000
    assert runner.platform_curve(runs + [{"platform": {"unavailable": "the platform probe needs root"}}]) == \
        (None, "the platform probe needs root")
    m = configs.variant(str(REF), "picas-single", pin_core=0)
    pm = runner.with_platform(m, points)
    assert [(b.window, b.max) for b in pm.hosts[0].blackout] == points and not m.hosts[0].blackout
    plain, plat = runner.analyze_config(m), runner.analyze_config(pm)
    assert plat["behavior_planner_bound_ns"] > plain["behavior_planner_bound_ns"]


def test_the_bench_names_the_analysis_that_gave_each_bound():
    # analyze answers each chain with its tightest bound: on one thread the exact analysis, not
    # the layout's own picas-st
    got = runner.analyze_config(configs.variant(str(REF), "picas-single", pin_core=1))
    assert got["analysis"] == "picas-st"
    assert (got["hot_path_analysis"], got["behavior_planner_analysis"]) == ("sag", "sag")
    assert got["hot_path_bound_ns"] == got["chains"]["hot_path_front"]["wcrt_bound_ns"]
