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


def test_cores_override_the_models(capsys):
    """--cores beyond the host's cores plans for that many (the paper's 3 on the 2-core model)."""
    assert main(["lame", "allocate", str(AUTOWARE), "--cores", "3", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert max(k for c in r["be_classes"] for k in c["cores"]) == 2
    assert any("3 cores in this plan" in n for n in r["notes"])


BE_ALONE = """chainrt: 1
name: be_alone
hosts:
  - {name: h, cores: 1}
executors:
  - {name: x, host: h, policy: lame}
nodes:
  - {name: a_node, executor: x}
  - {name: b_node, executor: x}
topics:
  - {name: ta}
callbacks:
  - {name: a, kind: timer, node: a_node, period: 10ms, wcet: 6ms, publishes: [ta]}
  - {name: b, kind: subscription, node: b_node, topic: ta, wcet: 6ms}
chains:
  - {name: B, callbacks: [a, b], deadline: 10ms, class: be}
"""


def test_an_overloaded_be_chain_gets_no_starvation_bound(tmp_path, capsys):
    """One core, one BE chain alone, 6 + 6 ms every 10 ms: its class is overloaded; the report
    says so instead of a bound below what the simulator shows (14 ms and more, drops)."""
    model = tmp_path / "be.yaml"
    model.write_text(BE_ALONE)
    assert main(["lame", "allocate", str(model), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    b = r["chains"]["B"]
    assert b["bound_ns"] is None and not b["starvation_free"] and "overloaded" in b["reason"]
    assert r["be_starvation_free"] is False


def test_soundness_of_lame_plans_small(tmp_path, capsys):
    """`chainrt experiment soundness --analysis lame`: LaME's plans under the harness, its tallies
    in the report, no counterexample; the same seed, the same report."""
    reports = []
    for k in range(2):
        assert main(["experiment", "soundness", "--analysis", "lame", "--sets", "8", "--harsh", "--climb", "2",
                     "--json", "--quiet", "--in-process", "--out", str(tmp_path / f"s{k}"),
                     "--counterexamples", str(tmp_path / "cex")]) == 0
        r = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        r.pop("elapsed_s", None)
        reports.append(r)
    r = reports[0]
    assert r["analysis"] == "lame" and r["systems"] == 8 and r["counterexamples"] == []
    assert r["chains_checked"] > 0 and r["lame"]["systems_bounded"] > 0
    assert {"rt_bounded", "be_bounded", "be_beyond_period", "be_overload_refused"} <= set(r["lame"])
    assert reports[0] == reports[1]


def test_bad_input_is_one_line_error(tmp_path, capsys):
    assert main(["lame", "allocate", str(AUTOWARE), "--cores", "40"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "at most 32 cores" in err[0]
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
    # the baseline says that it is chainrt's emulation, in the summary and the printed report
    assert "chainrt emulates" in s["baseline"]
    assert s["baseline"] in capsys.readouterr().out
    # every BE chain's class, its load against its supply, and whether it starved
    fate = s["lame_be_fate"]
    assert fate and all({"class", "class_utilisation", "class_supply", "starved"} <= set(f) for f in fate.values())
    # the paper's 3 cores from the bundled 2-core model
    out3 = tmp_path / "o3"
    assert main(["experiment", "lame-overload", "--cores", "3", "--duration", "2", "--runs", "1", "--no-plot",
                 "--out", str(out3)]) == 0
    s3 = json.loads((out3 / "lame_overload.json").read_text())
    assert s3["cores"] == 3 and max(k for c in s3["lame_plan"]["be_classes"] for k in c["cores"]) == 2


def test_throttle_experiment_small(tmp_path, capsys):
    """LaME's controller inside the simulation: misses after the switch, none of chains RT in the
    plan two controller periods after it, while the plan without the controller keeps missing;
    the same seed gives the same figures."""
    figures = []
    for k in range(2):
        out = tmp_path / f"t{k}"
        assert main(["experiment", "lame-throttle", "--duration", "24", "--throttle-at", "8", "--window", "2",
                     "--controller-period", "4", "--factor", "3", "--runs", "1", "--no-plot", "--out", str(out)]) == 0
        s = json.loads((out / "lame_throttle.json").read_text())
        figures.append(s)
    s = figures[0]
    assert s["default_rt_misses_after_switch_per_run"][0] > 0
    assert s["lame_rt_class_misses_after_switch_per_run"][0] > 0
    assert s["lame_recovered_within_two_periods"] == [True]
    assert s["lame_plan_rt_misses_after_switch_per_run"][0] > s["lame_rt_misses_after_switch_per_run"][0]
    assert figures[0] == figures[1]
    assert main(["experiment", "lame-throttle", "--window", "0"]) == 1
    assert main(["experiment", "lame-throttle", "--factor", "fast"]) == 1
    assert "--factor" in capsys.readouterr().err
    # --configs picks the configurations of --real runs; a bad name is a one-line error
    assert main(["experiment", "lame-throttle", "--real", "--configs", "nope", "--runs", "1",
                 "--out", str(tmp_path / "r")]) == 1
    assert "--configs takes a comma-separated list of default, lame, lame_rclcpp, emulated" in capsys.readouterr().err


def test_real_run_figures_from_recorded_executions(tmp_path):
    """The --real runs' figures come from the recorded executions: an instance is an execution of
    the chain's last callback carrying a release made by its first; response = finish - release;
    instances released before the warm-up's end are left out; released counts the first
    callback's releases (one lost here); executions without a release are not instances."""
    from chainrt.accounting import Execution
    from chainrt.experiments import lame_real as lr

    class Chain:
        def __init__(self, name, callbacks, deadline):
            self.name, self.callbacks, self.deadline = name, callbacks, deadline

    class Model:
        chains = [Chain("a", ["x/timer", "y/x"], 100_000_000), Chain("b", ["x/timer", "z/x"], 50_000_000)]

    ms = 1_000_000
    zero = 10_000 * ms
    ex = [Execution("x/timer", "e", 1, zero + t, zero + t + ms, ms, zero + t) for t in (0, 1000 * ms, 2000 * ms, 3000 * ms)]
    ex += [Execution("y/x", "e", 1, zero + 2000 * ms, zero + 2030 * ms, ms, zero + 2000 * ms),
           Execution("z/x", "e", 2, zero + 1000 * ms, zero + 1070 * ms, ms, zero + 1000 * ms),
           Execution("y/x", "e", 2, zero + 1000 * ms, zero + 1150 * ms, ms, zero + 1000 * ms),
           Execution("y/x", "e", 2, zero, zero + 20 * ms, ms, zero),  # in the warm-up
           Execution("z/x", "e", 1, zero + 5, zero + 9, 4, None)]
    figures, responses = lr.chain_figures(ex, Model(), zero, zero + 500 * ms)
    assert responses == {"a": [(1.0, 150.0), (2.0, 30.0)], "b": [(1.0, 70.0)]}
    assert figures["a"] == {"instances": 2, "released": 3, "wcrt_ns": 150 * ms, "mean_ns": 90 * ms,
                            "deadline_ns": 100 * ms, "deadline_misses": 1}
    assert figures["b"]["deadline_misses"] == 1 and figures["b"]["instances"] == 1
    acts = [[{"decision": "holds", "decide_cpu_ms": 1.0, "apply_cpu_ms": 0.0},
             {"decision": "reallocated", "decide_cpu_ms": 3.0, "apply_cpu_ms": 1.0}],
            [{"decision": "holds", "decide_cpu_ms": 2.0, "apply_cpu_ms": 0.0}]]
    cost = lr.activation_cost(acts)
    assert cost["all"]["n"] == 3 and cost["all"]["max_ms"] == 4.0 and cost["holds"]["median_ms"] == 1.5
    assert cost["reallocated"]["n"] == 1
    with lr.measurement_lock(str(tmp_path / "lock")):
        assert (tmp_path / "lock").exists()
    png = tmp_path / "r.png"
    lr.plot_responses({"default": responses, "lame": {"a": [], "b": [(0.5, 10.0)]}}, {"a": 100.0, "b": 50.0},
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
    every configuration runs (stock rclcpp MultiThreaded and LaME on the rclcpp ChainExecutor on
    the generated nodes, LaME and the emulated default on chainrt's runtime), each leaves its
    recorded executions and its accounting, both LaME runs' controller logs have their initial
    activation with its own CPU time, and the response-over-time figure is written. No timing is
    asserted."""
    from rosutil import run_cli_on_ros

    out = tmp_path / "o"
    p = run_cli_on_ros(["experiment", "lame-overload", "--real", "--runs", "1", "--duration", "2",
                        "--controller-period", "1", "--out", str(out)], domain_base=1)
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "lame_overload.json").read_text())
    assert s["mode"] == "real ROS 2"
    for config in ("lame", "lame_rclcpp"):
        acts = s["lame_activations"][config][0]
        assert acts and acts[0]["trigger"] == "initial" and acts[0]["decide_cpu_ms"] > 0, config
    for config in ("default", "lame", "lame_rclcpp", "emulated"):
        assert len(s["load_per_run"][config]) == 1
        traces = list(out.glob(f"{config}_0.*.trace.jsonl"))
        assert traces and sum(1 for _ in open(traces[0])) > 0, config
        assert len(s[config]["worst_rt_ms_per_run"]) == 1
        assert set(s["accounting"][config]) >= {"above", "platform", "overrun", "unexplained", "worst_free_ms"}
    assert s["labels"]["default"].startswith("stock rclcpp MultiThreaded")
    assert (out / "lame_overload_response.png").stat().st_size > 0
