"""`chainrt lame allocate`: the report, the JSON layout, the written model (validates with
`chainrt check`) and one-line errors for bad input."""

from __future__ import annotations

import json
import pathlib

import pytest

from chainrt.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
AUTOWARE = ROOT / "examples/autoware_lame.yaml"


def test_allocate_autoware_report_and_written_model(tmp_path, capsys):
    out = tmp_path / "planned.yaml"
    assert main(["lame", "allocate", str(AUTOWARE), "--cores", "2", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    for needle in ("thread classes:", "rt0", "be0", "runtime",
                   "c01_front_hot_path", "demoted to best effort: none", "every RT chain meets its deadline"):
        assert needle in text
    assert out.exists()
    assert main(["check", str(out)]) == 0
    planned = out.read_text()
    assert "thread_classes" in planned and "reservation" in planned and "affinity" in planned


def test_allocate_json_layout(capsys):
    assert main(["lame", "allocate", str(AUTOWARE), "--json", "--period", "5ms"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {c["name"] for c in r["rt_classes"]} <= {"rt0", "rt1"}
    for c in r["rt_classes"] + r["be_classes"]:
        assert c["period_ns"] == 5_000_000
        assert 0 <= c["runtime_ns"] <= c["period_ns"]
    # RT and BE budgets on a core add up to the period.
    rt = {tuple(c["cores"]): c["runtime_ns"] for c in r["rt_classes"]}
    for c in r["be_classes"]:
        if tuple(c["cores"]) in rt:
            assert rt[tuple(c["cores"])] + c["runtime_ns"] == 5_000_000
    assert len(r["chains"]) == 13
    rt_chains = [n for n, c in r["chains"].items() if c["class"] == "rt"]
    assert sorted(rt_chains) == ["c01_front_hot_path", "c03_behaviour_control", "c07_rear_lidar"]
    for n in rt_chains:
        assert r["chains"][n]["bound_ns"] <= r["chains"][n]["deadline_ns"]
    assert r["analyses"] > 0


def test_one_core_demotes_with_reason(capsys):
    assert main(["lame", "allocate", str(AUTOWARE), "--cores", "1", "--json"]) == 2
    r = json.loads(capsys.readouterr().out)
    assert r["demotions"] and all(d["reason"] for d in r["demotions"])
    for d in r["demotions"]:
        assert r["chains"][d["chain"]]["class"] == "be"


def test_bad_input_is_one_line_error(tmp_path, capsys):
    assert main(["lame", "allocate", str(AUTOWARE), "--cores", "9"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exceeds" in err[0]
    assert main(["lame", "allocate", str(AUTOWARE), "--period", "soon"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["lame", "allocate", str(tmp_path / "missing.yaml")]) == 1
    assert "Traceback" not in capsys.readouterr().err
    assert main(["lame", "allocate", str(AUTOWARE), "-o", str(tmp_path / "no/such/dir/x.yaml")]) == 1
    assert "does not exist" in capsys.readouterr().err  # refused before the allocation (cliargs)


def test_overload_experiment_small(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["experiment", "lame-overload", "--duration", "3", "--runs", "1", "--no-plot", "--out", str(out)]) == 0
    s = json.loads((out / "lame_overload.json").read_text())
    assert s["lame"]["rt_deadline_misses"]["max"] == 0
    assert s["default"]["rt_deadline_misses"]["min"] > 0
    assert (out / "lame_overload.csv").exists()


def test_throttle_experiment_small(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["experiment", "lame-throttle", "--duration", "20", "--throttle-at", "10", "--window", "5",
                 "--runs", "1", "--warmup", "2", "--no-plot", "--out", str(out)]) == 0
    s = json.loads((out / "lame_throttle.json").read_text())
    assert s["default_rt_misses_after_switch_per_run"][0] > 0
    assert s["lame_recovery_s"][0] <= 2 * s["controller_period_s"]
    assert main(["experiment", "lame-throttle", "--window", "0"]) == 1
    # --configs picks the configurations of --real runs; a bad name is a one-line error
    assert main(["experiment", "lame-throttle", "--real", "--configs", "nope", "--runs", "1",
                 "--out", str(tmp_path / "r")]) == 1
    assert "--configs takes default and/or lame" in capsys.readouterr().err


def test_real_run_helpers_from_a_trace(tmp_path):
    """The --real runs' response times come from the dispatch trace: the last callback's dispatch
    carries the chain's release; response = finish - release; dispatches without a release and
    other callbacks are not instances."""
    from chainrt.experiments import lame_real as lr

    class Chain:
        def __init__(self, name, callbacks, deadline):
            self.name, self.callbacks, self.deadline = name, callbacks, deadline

    class Model:
        chains = [Chain("a", ["x/timer", "y/x"], 100_000_000), Chain("b", ["x/timer", "z/x"], 50_000_000)]

    leaves = lr.leaves_of(Model())
    assert leaves == {"y/x": [("a", 100_000_000)], "z/x": [("b", 50_000_000)]}
    trace = tmp_path / "t.jsonl"
    recs = [("x/timer", 0, 1_000_000), ("y/x", 2_000_000_000, 2_030_000_000), ("z/x", 1_000_000_000, 1_070_000_000),
            ("y/x", 1_000_000_000, 1_150_000_000), ("z/x", -1, 5)]
    trace.write_text("".join(json.dumps({"callback": c, "release": r, "start": r, "finish": f}) + "\n"
                             for c, r, f in recs))
    got = lr.trace_responses(str(trace), leaves)
    assert got == {"a": [(1.0, 150.0), (2.0, 30.0)], "b": [(1.0, 70.0)]}
    acts = [[{"decision": "holds", "decide_cpu_ms": 1.0, "apply_cpu_ms": 0.0},
             {"decision": "reallocated", "decide_cpu_ms": 3.0, "apply_cpu_ms": 1.0}],
            [{"decision": "holds", "decide_cpu_ms": 2.0, "apply_cpu_ms": 0.0}]]
    cost = lr.activation_cost(acts)
    assert cost["all"]["n"] == 3 and cost["all"]["max_ms"] == 4.0 and cost["holds"]["median_ms"] == 1.5
    assert cost["reallocated"]["n"] == 1
    with lr.measurement_lock(str(tmp_path / "lock")):
        assert (tmp_path / "lock").exists()
    png = tmp_path / "r.png"
    lr.plot_responses({"default": got, "lame": {"a": [], "b": [(0.5, 10.0)]}}, {"a": 100.0, "b": 50.0},
                      [("chains", ["a", "b"])], str(png), "t", vlines={"lame": [(1.0, "switch")]})
    assert png.stat().st_size > 0


def test_demotions_over_time_and_steal_from_proc_stat():
    """Which chains the plan in force at a time had demoted (split chains by their origin), and
    the hypervisor steal share between two /proc/stat readings."""
    from chainrt.experiments import lame_real as lr

    acts = [{"at_s": 0.0, "decision": "reallocated", "demoted": []},
            {"at_s": 50.0, "decision": "holds", "demoted": ["c07: ignored, not a re-plan"]},
            {"at_s": 101.5, "decision": "reallocated", "demoted": ["c07_rear_lidar: does not fit", "c02#1: x"]},
            {"at_s": 150.0, "decision": "reallocated", "demoted": ["c02#1: x"]}]
    demoted = lr.demoted_at(acts)
    assert not demoted("c07_rear_lidar", 60.0) and demoted("c07_rear_lidar", 101.5)
    assert demoted("c07_rear_lidar", 149.9) and not demoted("c07_rear_lidar", 150.0)
    assert demoted("c02", 120.0) and demoted("c02", 170.0) and not demoted("c01", 120.0)
    assert lr.steal_percent((10, 1000), (40, 2000)) == 3.0
    assert lr.steal_percent((0, 0), (0, 0)) is None
    steal, total = lr.cpu_jiffies()
    assert 0 <= steal <= total


def test_overload_real_short_run_writes_responses_and_controller_log(tmp_path):
    """A seconds-long `lame-overload --real` on real ROS 2 (own domain id, localhost discovery):
    both configurations run, the LaME run's controller log has its initial activation with its
    own CPU time, and the response-over-time figure is written. No timing is asserted."""
    import os
    import subprocess
    import sys

    from chainrt import runtime
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    env = dict(os.environ, ROS_DOMAIN_ID=str(1 + os.getpid() % 19), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "chainrt.cli", "experiment", "lame-overload", "--real", "--runs", "1",
           "--duration", "2", "--controller-period", "1", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "lame_overload.json").read_text())
    assert s["mode"] == "real ROS 2"
    acts = s["lame_activations"][0]
    assert acts and acts[0]["trigger"] == "initial" and acts[0]["decide_cpu_ms"] > 0
    assert len(s["load_per_run"]["default"]) == 1 and len(s["load_per_run"]["lame"]) == 1
    for config in ("default", "lame"):
        assert sum(1 for _ in open(out / f"{config}_0.trace.jsonl")) > 0
        assert len(s[config]["worst_rt_ms_per_run"]) == 1
    assert (out / "lame_overload_response.png").stat().st_size > 0
