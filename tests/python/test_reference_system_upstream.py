"""Upstream's reference system on rclcpp (chainrt.reference_system.upstream): the KPIs read from
the lines upstream's sinks print, the calibration, the placement of the processes, the targets
against the best stock executor; with the programs built, a short real run of an upstream
executable and of the ChainExecutor main."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt.reference_system import kpi, runner, upstream

REPO = Path(__file__).resolve().parents[2]


def _stat(values: list[float]) -> str:
    """What upstream's operator<<(statistic_value_t) prints for values already divided by the
    adjustment (C++'s default stream format: 6 significant digits, %g)."""
    n = len(values)
    mean = sum(values) / n
    dev = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    return f"[min={min(values):g}{{u}}, max={max(values):g}{{u}}, average={mean:g}{{u}}, deviation={dev:g}{{u}}]"


def upstream_lines(samples: list[dict]) -> str:
    """A log as upstream's print_sample_path writes it: one block per sample at a sink, the hot
    path's latency and drops where the sample passed the hot path, the behaviour-planner period
    where it carries a BehaviorPlanner entry ("bp period" printed where a new period is recorded)."""
    out, lat, drops, per, latency = [], [], [], [], []
    for s in samples:
        out += ["-" * 58, f"sample path: ({s['sink']}) ",
                "  order timepoint           sequence nr.                  node name     dropped samples"]
        if s.get("period") is not None:
            out.append("bp period")
            per.append(s["period"])
        out.append("latency")
        latency.append(s.get("e2e", 30.0))
        out += ["", "Statistics:", f"  latency:                  {latency[-1]:g}ms " + _stat(latency).format(u="ms")]
        if s.get("hot") is not None:
            out.append("hotpath")
            lat.append(s["hot"])
            drops.append(s.get("drops", 0))
            out.append("  hot path:                 FrontLidarDriver/RearLidarDriver -> ObjectCollisionEstimator")
            out.append(f"  hot path latency:         {lat[-1]:g}ms " + _stat(lat).format(u="ms"))
            out.append(f"  hot path drops:           {drops[-1]} " + _stat(drops).format(u=""))
        if s.get("bp"):
            if per:
                out.append(f"  behavior planner period:  {per[-1]:g}ms " + _stat(per).format(u="ms"))
            else:  # upstream prints the empty statistic of the first BehaviorPlanner sample
                out.append("  behavior planner period:  0ms [min=1.84467e+13ms, max=0ms, average=0ms, deviation=0ms]")
        out += ["-" * 58, ""]
    return "\n".join(out) + "\n"


def test_parse_log_reads_every_sample_as_upstream_prints_it():
    samples = [{"sink": "IntersectionOutput"},
               {"sink": "VehicleDBWSystem", "hot": 10.5, "bp": True},
               {"sink": "IntersectionOutput"},
               {"sink": "VehicleDBWSystem", "hot": 12.25, "drops": 2, "bp": True, "period": 100.012},
               {"sink": "VehicleDBWSystem", "bp": True, "period": 99.988},
               {"sink": "VehicleDBWSystem", "hot": 9.75, "bp": True, "period": 100.5}]
    k, last, every = upstream.parse_log(upstream_lines(samples))
    assert every.hot_path_latencies == k.hot_path_latencies
    assert k.hot_path_latencies == [10_500_000, 12_250_000, 9_750_000]
    assert k.hot_path_drops_per_sample == [0, 2, 0]
    assert k.behavior_planner_periods == pytest.approx([100_012_000, 99_988_000, 100_500_000])
    assert k.sink_samples == {"IntersectionOutput": 2, "VehicleDBWSystem": 4}
    # upstream's own summary is the last line of each KPI, and the samples agree with it
    assert last["hot_path_latency"]["average"] == pytest.approx((10.5 + 12.25 + 9.75) / 3 * 1e6, rel=1e-5)
    assert last["hot_path_latency"]["deviation"] == pytest.approx(
        upstream.upstream_deviation([10.5e6, 12.25e6, 9.75e6]), rel=1e-5)
    assert upstream.check_summary(k, last) == []
    d = k.to_dict()
    assert d["hot_path_drops"] == 2 and d["hot_path_latency"]["max_ns"] == 12_250_000


def test_the_warm_up_is_what_the_program_printed_before_it_ended():
    samples = [{"sink": "VehicleDBWSystem", "hot": 40.0 + i, "bp": True, "period": 130.0 if i == 1 else 100.0}
               for i in range(3)]
    samples += [{"sink": "VehicleDBWSystem", "hot": 10.0 + i, "bp": True, "period": 100.0} for i in range(4)]
    text = upstream_lines(samples)
    cut = len(upstream_lines(samples[:3])) + 100  # inside the 4th block: it started in the warm-up
    k, last, every = upstream.parse_log(text, cut)
    assert len(every.hot_path_latencies) == 7 and upstream.check_summary(every, last) == []
    assert k.hot_path_latencies == [11_000_000, 12_000_000, 13_000_000]
    assert k.behavior_planner_periods == pytest.approx([100e6] * 3)
    assert k.sink_samples == {"VehicleDBWSystem": 3}
    k, _, _ = upstream.parse_log(text, len(text))
    assert k.hot_path_latencies == []
    # what came after the stop signal (the program's shutdown) is not measured either
    k, _, every = upstream.parse_log(text, cut, len(upstream_lines(samples[:6])))
    assert k.hot_path_latencies == [11_000_000, 12_000_000] and len(every.hot_path_latencies) == 7


def test_a_missed_line_disagrees_with_upstreams_summary():
    text = upstream_lines([{"sink": "VehicleDBWSystem", "hot": v, "bp": True} for v in (10.0, 11.0, 30.0)])
    lines = text.splitlines()
    i = max(j for j, line in enumerate(lines) if "hot path latency:" in line)
    # the 30 ms sample misread as 3 ms while its running statistics stay right
    mangled = "\n".join(lines[:i] + [lines[i].replace("30ms [", "3ms [")] + lines[i + 1:])
    _, last, k = upstream.parse_log(mangled)
    problems = upstream.check_summary(k, last)
    assert problems and "hot_path_latency" in problems[0]


def test_unparsable_or_empty_log_has_no_sample():
    k, last, _ = upstream.parse_log("RMW Implementation: rmw_fastrtps_cpp\nsomething else\n")
    assert k.hot_path_latencies == [] and last == {}


def test_stock_configurations_and_their_replica_models():
    assert set(upstream.STOCK) == {"rclcpp-single-threaded", "rclcpp-static-single-threaded", "rclcpp-multi-threaded",
                                   "rclcpp-prioritized", "rclcpp-cbg", "rclcpp-events"}
    assert upstream.STOCK["rclcpp-prioritized"].own_priorities and not upstream.STOCK["rclcpp-single-threaded"].own_priorities
    assert runner._model_config("rclcpp-multi-threaded", "upstream") == "ros-default-mt"
    assert runner._model_config("rclcpp-events", "upstream") is None
    assert runner._model_config("picas-multi", "upstream") == "picas-multi"
    from chainrt.reference_system import configs
    assert configs.parse_configs(None, "upstream")[:6] == list(upstream.STOCK)
    assert ("picas-multi" in configs.parse_configs(None, "upstream")) == (_built(upstream.CHAIN_BINARY) is not None)
    assert configs.parse_configs("rclcpp-events,edf-st", "upstream") == ["rclcpp-events", "edf-st"]
    with pytest.raises(ValueError, match="rclcpp-single-threaded"):
        configs.parse_configs("rclcpp-single-threaded")  # a stock executor is not a replica configuration


def test_chainrt_layouts_on_upstreams_nodes_get_their_bounds_and_stock_executors_none(tmp_path, capsys):
    # the ChainExecutor releases upstream's timers on the model's release grid, so the layout's
    # model bounds its chains (the accounting counts the instances above them); a stock
    # executor's timers start at their nodes' creation: no bound
    from chainrt.cli import main
    assert runner.bounded("upstream", "picas-multi") and runner.bounded("replica", "ros-default-st")
    assert not runner.bounded("upstream", "rclcpp-single-threaded")
    rc = main(["bench", "reference-system", "--system", "upstream", "--model-only", "--no-sim", "--no-plots", "--json",
               "--configs", "rclcpp-single-threaded,picas-multi", "--out", str(tmp_path / "out")])
    assert rc == 0
    import json
    d = json.loads(capsys.readouterr().out)["configs"]
    assert d["picas-multi"]["analysis"]["hot_path_bound_ns"] > 0
    assert "analysis" not in d["rclcpp-single-threaded"]


def test_launcher_places_and_ties_the_process():
    cmd = upstream.launcher(1, 10)
    assert cmd[:4] == ["setpriv", "--pdeathsig", "TERM", "--"]
    assert cmd[4:] == ["chrt", "-f", "10", "taskset", "-c", "1"]
    assert upstream.launcher(None, None) == ["setpriv", "--pdeathsig", "TERM", "--"]


def test_only_stock_executors_run_wholly_sched_fifo(monkeypatch):
    # a stock executor has no per-thread priorities: its whole process at the base priority;
    # upstream's prioritized layouts as upstream starts them; chainrt's configurations not under
    # chrt at all (the ChainExecutor gives SCHED_FIFO to the chains' executor threads itself)
    assert upstream.process_rt_priority("rclcpp-single-threaded", 10) == 10
    assert upstream.process_rt_priority("rclcpp-events", 10) == 10
    assert upstream.process_rt_priority("rclcpp-prioritized", 10) is None
    for name in ("picas-single", "picas-multi", "edf-st", "edf-multi"):
        assert upstream.process_rt_priority(name, 10) is None
    monkeypatch.setattr(upstream, "program", lambda name: Path("/prog/" + name))
    assert upstream.command("rclcpp-events", None, 1, 10)[4:] == ["chrt", "-f", "10", "taskset", "-c", "1",
                                                                  "/prog/rclcpp-events"]
    cmd = upstream.command("picas-multi", Path("m.yaml"), 1, 10, Path("r.json"), 1_000_000_000, Path("t.json"))
    assert "chrt" not in cmd
    assert cmd[4:] == ["taskset", "-c", "1", "/prog/picas-multi", "m.yaml", "--warmup", "1000000000ns",
                       "--report", "r.json", "--trace", "t.json"]


def _result(load, stock: dict, chain: dict) -> dict:
    def c(mean, p99, mx, drops=0, bp_std=20_000):
        return {"hot_path_latency": {"count": 100, "mean_ns": mean, "p99_ns": p99, "max_ns": mx},
                "hot_path_drops": drops, "behavior_planner_period": {"std_ns": bp_std}}
    cfgs = {n: c(*v) for n, v in stock.items()} | {n: c(*v) for n, v in chain.items()}
    return {"load": load, "configs": cfgs}


def test_targets_against_the_best_stock_executor():
    r = _result("stressed", {"rclcpp-single-threaded": (40e6, 60e6, 70e6), "rclcpp-prioritized": (19e6, 29e6, 44e6)},
                {"picas-multi": (17e6, 19e6, 20e6), "picas-single": (18e6, 30e6, 35e6, 1, 2e6)})
    ch = upstream.checks(r)
    assert ch["best_stock"] == "rclcpp-prioritized"
    pm, ps = ch["configs"]["picas-multi"], ch["configs"]["picas-single"]
    assert pm["mean_vs_best_stock"] == pytest.approx(17 / 19) and all(pm["met"].values())
    assert ps["met"] == {"mean": False, "p99": False, "max": False, "drops": False, "planner_std": False}
    # at the default load the mean only has to match the best stock executor
    r = _result("default", {"rclcpp-prioritized": (8e6, 9e6, 10e6)}, {"picas-multi": (8e6, 8.5e6, 5e6)})
    assert upstream.checks(r)["configs"]["picas-multi"]["met"]["mean"]


def _stamped(samples: list[dict], every_ms: int = 100) -> tuple[str, list]:
    """upstream_lines and the stamps the bench's log reader would note: block i read at
    (i + 1) x `every_ms` ms."""
    text = upstream_lines(samples)
    stamps, pos = [], 0
    for i, line in enumerate(ln for ln in text.splitlines(keepends=True)):
        if line.startswith("sample path: "):
            stamps.append((pos, (len(stamps) + 1) * every_ms * 1_000_000, line[len("sample path: ("):].split(")")[0]))
        pos += len(line)
    return text, stamps


def test_platform_free_samples_of_upstreams_log_leave_out_those_a_blackout_touched_by_their_stamped_window():
    from chainrt.reference_system import accounting as bench
    ms = 1_000_000
    samples = [{"sink": "VehicleDBWSystem", "hot": 10.0, "bp": True, "period": 100.0, "e2e": 90.0} for _ in range(12)]
    text, stamps = _stamped(samples)
    assert [s[1] for s in stamps[:2]] == [100 * ms, 200 * ms]
    assert bench.STAMP_MARGIN_NS == 20 * ms
    # a block read at s covers [s - 90 - 20, s] ms for its hot-path sample (every callback of its
    # path started after s - 90 ms) and [s - 100 - 110, s] for its period: a blackout at 545 ms
    # touches the sample read at 600 ms, and the periods read at 600 and 700 ms
    keep = bench.stamped_keep(text, stamps, [(545 * ms, 546 * ms)])
    k, _, every = upstream.parse_log(text, keep=keep)
    assert len(every.hot_path_latencies) == 12 and len(k.hot_path_latencies) == 11
    assert len(k.hot_path_drops_per_sample) == 11  # the drops go with their sample
    # (the first block's period has no window: the block before it is not there)
    assert len(every.behavior_planner_periods) == 12 and len(k.behavior_planner_periods) == 9
    # one that ends where the next window begins touches the sample read at 500 ms only
    keep = bench.stamped_keep(text, stamps, [(480 * ms, 490 * ms)])
    assert len(upstream.parse_log(text, keep=keep)[0].hot_path_latencies) == 11
    # without a blackout everything is kept; a block the reader did not stamp is not
    assert len(upstream.parse_log(text, keep=bench.stamped_keep(text, stamps, []))[0].hot_path_latencies) == 12
    assert len(upstream.parse_log(text, keep=bench.stamped_keep(text, stamps[1:], []))[0].hot_path_latencies) == 11


def test_the_log_reader_stamps_every_sink_block_as_it_arrives(tmp_path):
    script = ("import time\nfor i in range(3):\n    print('sample path: (VehicleDBWSystem) ', flush=True)\n"
              "    print('  hot path latency:         1ms [min=1ms, max=1ms, average=1ms, deviation=0ms]', flush=True)\n"
              "    time.sleep(0.2)\n")
    tids: set[int] = set()
    p = upstream.run_process([sys.executable, "-c", script], dict(os.environ), tmp_path / "x.log", 5.0, None,
                             tids=tids)
    text = (tmp_path / "x.log").read_text()
    assert [text[o:].startswith("sample path: (VehicleDBWSystem)") for o, _, _ in p["stamps"]] == [True] * 3
    gaps = [b[1] - a[1] for a, b in zip(p["stamps"], p["stamps"][1:])]
    assert all(g > 100_000_000 for g in gaps) and {s[2] for s in p["stamps"]} == {"VehicleDBWSystem"}
    assert p["started_ns"] < p["stamps"][0][1] and tids


def test_platform_free_targets_against_every_stock_executors_platform_free_max():
    def acc(mean, p99, mx, bp_std):
        return {"hot_path_latency": {"count": 50, "mean_ns": mean, "p99_ns": p99, "max_ns": mx},
                "behavior_planner_period": {"count": 50, "std_ns": bp_std}}
    r = _result("stressed", {"rclcpp-single-threaded": (40e6, 60e6, 70e6), "rclcpp-prioritized": (19e6, 29e6, 44e6)},
                {"picas-multi": (17e6, 19e6, 30e6), "edf-multi": (17e6, 25e6, 30e6)})
    free = {"rclcpp-single-threaded": acc(39e6, 50e6, 60e6, 1e6), "rclcpp-prioritized": acc(18e6, 25e6, 24e6, 1e6),
            "picas-multi": acc(17e6, 18e6, 20e6, 50_000), "edf-multi": acc(17e6, 20e6, 23e6, 150_000)}
    for n, a in free.items():
        r["configs"][n]["accounting"] = a
    ch = upstream.checks(r)["platform_free"]
    assert ch["least_stock"] == "rclcpp-prioritized" and ch["least_stock_max_ns"] == 24e6
    assert all(ch["configs"]["picas-multi"]["met"].values())
    assert ch["configs"]["edf-multi"]["met"] == {"p99": False, "max": False, "below_every_stock_max": True,
                                                 "planner_std": False}
    assert "rclcpp-prioritized" not in ch["configs"]
    # without the platform measured there is nothing platform-free to check
    assert upstream.free_checks(_result("default", {"rclcpp-prioritized": (8e6, 9e6, 10e6)}, {})) == {}


def test_work_per_callback_is_the_one_limit_of_the_model():
    from chainrt.reference_system import configs, topology
    path = str(REPO / "examples" / "autoware_reference.yaml")
    scale = configs.load_scale(configs.load_model(path), "stressed")
    assert topology.work_per_callback(configs.variant(path, "ros-default-st", "stressed")) == round(2_000_000 * scale)
    assert topology.work_per_callback(configs.variant(path, "picas-multi")) == 2_000_000


# ---------------------------------------------------------------- with the programs built
def _built(name):
    try:
        return upstream.find(name)
    except upstream.UpstreamNotBuilt:
        return None


needs_calibrate = pytest.mark.skipif(_built(upstream.CALIBRATE_BINARY) is None,
                                     reason="upstream's reference system is not built (needs rclcpp)")


@needs_calibrate
def test_calibration_finds_the_limit_that_costs_the_cpu_time():
    a = upstream.calibrate(1_000_000)
    b = upstream.calibrate(3_000_000)
    assert a["limit"] < b["limit"]
    assert 0.7e6 < a["cost_ns"] < 1.4e6 and 2.2e6 < b["cost_ns"] < 4e6
    bad = subprocess.run([str(_built(upstream.CALIBRATE_BINARY)), "x"], capture_output=True, text=True)
    assert bad.returncode == 1 and "usage" in bad.stderr


needs_upstream = pytest.mark.skipif(_built("autoware_default_singlethreaded") is None,
                                    reason="upstream's reference system is not built (needs rclcpp)")


@needs_upstream
def test_short_real_run_of_upstreams_executables(tmp_path, capsys):
    from chainrt.cli import main
    names = ["rclcpp-single-threaded", "rclcpp-prioritized"]
    if _built(upstream.CHAIN_BINARY) is not None:
        names.append("picas-multi")
    rc = main(["bench", "reference-system", "--system", "upstream", "--configs", ",".join(names),
               "--duration", "3s", "--warmup", "500ms", "--repeat", "1", "--no-plots", "--no-analysis", "--no-sim",
               "--no-platform-probe", "--json", "--out", str(tmp_path)])
    assert rc == 0
    import json
    d = json.loads(capsys.readouterr().out)
    assert d["system"] == "upstream" and d["number_cruncher"]["limit"] > 2
    assert d["number_cruncher"]["calibration"]["target_ns"] == 2_000_000
    for n in names:
        c = d["configs"][n]
        assert c["hot_path_latency"]["count"] > 0, n
        assert c["hot_path_latency"]["min_ns"] > 0
        assert c["behavior_planner_period"]["count"] > 0
        assert c["cpu"]["mean_percent"]["mean"] > 0
        assert (tmp_path / "raw" / f"{n}-r1.log").is_file()
    if "picas-multi" in names:  # the executors' per-callback figures come back
        assert (tmp_path / "raw" / "picas-multi-r1.json").is_file()
    assert "rclcpp-single-threaded" in d["checks"]["best_stock"] or d["checks"]["best_stock"] == "rclcpp-prioritized"


def _threads(pid: int) -> dict[int, tuple[str, int, int]]:
    """tid -> (name, scheduling policy, real-time priority) of every thread of `pid`."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        out[int(task.name)] = (comm, int(fields[38]), int(fields[37]))  # stat fields 41, 40
    return out


@pytest.mark.skipif(_built(upstream.CHAIN_BINARY) is None, reason="the ChainExecutor main is not built (needs rclcpp)")
@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root")
def test_chain_executor_gives_sched_fifo_only_to_the_chains_executors(tmp_path):
    # picas-multi on upstream's nodes, started as the bench starts it: the planner and hot-path
    # executor threads SCHED_FIFO at the model's priorities, every other thread (the "other"
    # executor, the middleware, rclcpp's own) SCHED_OTHER
    import signal
    import time
    from chainrt.reference_system import configs
    model = configs.variant(str(REPO / "examples" / "autoware_reference.yaml"), "picas-multi", rt_priority=10)
    path = tmp_path / "picas-multi.yaml"
    model.save(str(path))
    env = dict(runner._environment(upstream.program("picas-multi")), **{upstream.LIMIT_ENV: "16"})
    proc = subprocess.Popen(upstream.command("picas-multi", path, None, 10), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        threads = {}
        while time.monotonic() < deadline and proc.poll() is None:
            threads = _threads(proc.pid)
            if sum(1 for _, pol, _ in threads.values() if pol == 1) >= 2:
                time.sleep(1.0)  # every thread of the run exists by now
                threads = _threads(proc.pid)
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    fifo = sorted(prio for _, pol, prio in threads.values() if pol == 1)
    assert fifo == [12, 13], (threads, err[-1000:])
    assert all(pol in (0, 1) for _, pol, _ in threads.values()), threads  # nothing else (SCHED_RR, ...)
    other = [name for name, pol, _ in threads.values() if pol == 0]
    assert len(other) >= 3 and any(name.startswith("dds.") for name in other), threads


def test_a_bench_that_is_gone_leaves_no_cpuset_to_the_next(tmp_path, monkeypatch):
    # A cpuset folder of a bench whose process no longer exists goes when the next bench makes
    # its own; one of a running bench stays.
    (tmp_path / "cpuset.cpus").write_text("0-1")
    (tmp_path / "cpuset.mems").write_text("0")
    monkeypatch.setattr(upstream, "CPUSET_ROOT", tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f"chainrt-rs-{dead.pid}-1").mkdir()
    (tmp_path / f"chainrt-rs-{os.getppid()}-1").mkdir()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    cpuset = upstream.CpuSet.create(1)
    assert cpuset is not None and cpuset.path.is_dir()
    assert not (tmp_path / f"chainrt-rs-{dead.pid}-1").exists()
    assert (tmp_path / f"chainrt-rs-{os.getppid()}-1").is_dir()
