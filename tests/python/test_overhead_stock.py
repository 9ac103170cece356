"""The EDF paper's overhead figure on real rclcpp (bench/overhead/stock.py): its workload as a
chainrt model (one timer -> N subscriptions of one topic, a branching chain ending with the last
of them), the figure's table with stock rclcpp's executors as the baselines and chainrt's
emulation of ROS 2's default executor only as a fidelity column, and one short run of the
generated nodes under a stock executor and the ChainExecutor with no instance lost (counts, no
wall-clock figure)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from chainrt import stock
from chainrt.model import load_model_from_string

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("overhead_stock", ROOT / "bench" / "overhead" / "stock.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

US = 1000


def test_the_workload_is_one_timer_fanning_out_to_n_subscriptions_in_one_chain():
    m = load_model_from_string(bench.fanout_model(5, "edf"), "fanout")
    subs = [c for c in m.callbacks if c.kind == "subscription"]
    assert len(subs) == 5 and {c.topic for c in subs} == {"fanout"}
    timer = m.callback("timer")
    assert timer.period == 10_000_000 and timer.publishes == ["fanout"]
    (chain,) = m.chains
    assert chain.deadline == 10_000_000 and sorted(chain.callbacks) == sorted(["timer", *(c.name for c in subs)])
    (ex,) = m.executors
    assert ex.policy == "edf" and len(ex.threads) == 2


def _rep(mean_us: float, p99_us: float, n: int = 100, lost: int = 0) -> dict:
    return {"instances": n, "lost": lost, "mean_ns": mean_us * US, "p99_ns": p99_us * US, "max_ns": p99_us * US}


def test_the_table_compares_with_stock_executors_and_the_emulation_only_as_fidelity():
    single, multi = stock.LABELS["single"], stock.LABELS["multi"]
    edf = f"{stock.LABELS['chainrt']} edf"
    runs = {single: {10: [_rep(200, 300), _rep(220, 320)]}, multi: {10: [_rep(250, 400), _rep(250, 400)]},
            edf: {10: [_rep(150, 200), _rep(170, 220)]}, bench.EMULATION: {10: [_rep(300, 500)]}}
    points = {(p["config"], p["n"]): p for p in bench.summarise(runs)}
    assert points[(single, 10)]["mean_ns"] == 210 * US and points[(single, 10)]["rep_mean_min_ns"] == 200 * US
    assert points[(edf, 10)]["vs_stock_single"] == pytest.approx(160 / 210)
    assert points[(bench.EMULATION, 10)]["vs_stock_multi"] == pytest.approx(300 / 250)
    lines = bench.table(list(points.values()))
    assert not any(ln.strip().startswith(bench.EMULATION) for ln in lines)  # no row of its own
    assert lines[-1] == f"fidelity (not a baseline): {bench.EMULATION} / stock MultiThreaded mean: N=10 1.20"
    assert any(ln.strip().startswith(f"{edf}: N=10 160 [150..170] (0.76)") for ln in lines)


def test_the_configurations_are_stock_executors_first_then_the_chain_executors_policies():
    assert [c[1:] for c in bench.configurations(["edf", "fp"])] == [
        ("single", None), ("multi", None), ("events", None), ("chainrt", "edf"), ("chainrt", "fp")]


@pytest.mark.skipif(stock.unavailable() is not None, reason=f"{stock.unavailable()}")
# 70 subscriptions: more leaves of one chain instance than a 64-bit mask holds (the figure goes
# to N = 200)
@pytest.mark.parametrize("executor,policy,n", [("multi", None, 4), ("chainrt", "edf", 4), ("multi", None, 70)])
def test_a_short_run_of_the_generated_fanout_loses_no_instance(tmp_path, executor, policy, n, monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", str(40 + os.getpid() % 19))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    model = tmp_path / "fanout.yaml"
    model.write_text(bench.fanout_model(n))
    r = bench.measure_stock(model, executor, policy, 2.0, None, None)
    assert r is not None and r["instances"] >= 50 and r["lost"] == 0, r
