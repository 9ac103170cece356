"""CROS-RT's configurations on real rclcpp (chainrt.crosslayer.stacks, chainrt.stock,
chainrt.experiments.cros_rt_paper): the baselines run rclcpp's stock executor and CROS-RT's layers
chainrt's ChainExecutor, on the same generated nodes, one program per model process; and every
run's accounting table comes from what the run recorded (its traces and its platform probe).

The real runs here are a few seconds of the generated nodes without thread priorities (no
SCHED_FIFO), across processes on this host; they check which executor class spun each model
executor and that no chain instance was lost between the processes — counts only, no wall-clock
figure."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from chainrt import accounting, stock
from chainrt.crosslayer import session, stacks
from chainrt.experiments import cros_rt_kernel as k
from chainrt.experiments import cros_rt_paper as x

DATA = Path(__file__).resolve().parent / "data" / "cros_rt_kept"
SECONDS = 3.0
CLASSES = {"single": "rclcpp::executors::SingleThreadedExecutor",
           "multi": "rclcpp::executors::MultiThreadedExecutor",
           "chainrt": "chainrt::rclcpp::ChainExecutor"}


def _env() -> dict:
    return {"ROS_DOMAIN_ID": str(80 + os.getpid() % 19), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


class _Hosts:
    """Stands in for session.HostNetwork: every host here, no namespace (records what it is given)."""

    def __init__(self, hosts):
        self.address = {h: f"10.77.0.{i + 1}" for i, h in enumerate(hosts)}
        self.interface = {h: f"crt0h{i}" for i, h in enumerate(hosts)}

    def prefix(self, host):
        return ["ns-of", host]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Nothing:
    """Stands in for the kernel path's context managers (the fixed receive path, a selector)."""
    stats: dict = {}

    def __init__(self, *a, **kw):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("config, nodes, params", [("vanilla", "single", False), ("preempt-rt", "single", True),
                                                   ("full", "chainrt", True)])
def test_each_configuration_runs_its_executor_on_the_generated_nodes_per_host(tmp_path, monkeypatch, config, nodes,
                                                                              params):
    """session.run_on_hosts with a configuration's arguments starts the generated rclcpp nodes
    (not chainrt-run) under the configuration's executor, one program per process, each in its
    host's namespace with its Fast DDS profile."""
    model = tmp_path / "m.yaml"
    model.write_text(k.chains_model(list(k.PAPER_CHAINS)))
    seen = {}

    def fake_stock(model_path, executor, duration_ns, **kw):
        seen.update(kw, executor=executor)
        return {"chains": {}, "model_tids": [1, 2]}

    def no_runtime(*a, **kw):
        raise AssertionError("chainrt-run started for a configuration on the generated nodes")
    monkeypatch.setattr(session, "HostNetwork", _Hosts)
    monkeypatch.setattr(session.stock, "run_processes", fake_stock)
    monkeypatch.setattr(session.runtime, "run_model", no_runtime)
    monkeypatch.setattr(session.kpath, "FixedRxThreads", _Nothing)
    monkeypatch.setattr(session.kpath, "Selector", _Nothing)
    monkeypatch.setattr(session.kpath, "port_classes", lambda *a, **kw: ({}, {}))
    kw = stacks.run_arguments(stacks.stack(config))
    session.run_on_hosts(str(model), 1_000_000, trace_dir=str(tmp_path / "t"), **kw)
    assert seen["executor"] == nodes and seen["thread_params"] is params
    assert seen["process_prefix"] == {"high_pub": ["ns-of", "A"], "high_sub": ["ns-of", "B"],
                                      "low_pub": ["ns-of", "A"], "low_sub": ["ns-of", "B"]}
    assert set(seen["process_env"]) == set(seen["process_prefix"]) and seen["trace_dir"] == str(tmp_path / "t")
    assert x.executor_label(config) == (stock.LABELS["single"] if nodes == "single" else stock.LABELS["chainrt"])


@pytest.mark.skipif(stock.unavailable() is not None, reason=f"{stock.unavailable()}")
@pytest.mark.parametrize("config", ["vanilla", "full"])
def test_cros_rt_processes_run_the_configurations_executor_and_lose_no_instance(tmp_path, config):
    """The CROS-RT chains' four processes (publishers on host A, subscribers on host B) as
    separate programs: every model executor spun by the configuration's executor class, and every
    release of a chain made by its publisher's program completed by its subscriber's program
    (queues of 10 messages: without thread priorities a loaded machine may keep a subscriber
    from its queue for longer than a period, and a queue of one then drops by design)."""
    model = tmp_path / "m.yaml"
    model.write_text(k.chains_model(list(k.PAPER_CHAINS)).replace("kind: subscription,", "kind: subscription, queue_depth: 10,"))
    nodes = stacks.run_arguments(stacks.stack(config))["nodes"]
    result = stock.run_processes(model, nodes, int(SECONDS * 1e9), warmup_ns=0, thread_params=False,
                                 trace_dir=tmp_path / "traces", env=_env())
    assert set(result["processes"]) == {"high_pub", "high_sub", "low_pub", "low_sub"}
    assert result["executor_class"] == {f"{c}_{side}_x": CLASSES[nodes] for c in ("high", "low")
                                        for side in ("pub", "sub")}
    for proc, r in result["processes"].items():
        assert r["executor"] == nodes and r["process"] == proc and r["run_id"] == result["run_id"]
        assert all((rep is None) == (nodes != "chainrt") for rep in r["reports"].values()), r["reports"]
    executions = accounting.read_traces(tmp_path / "traces")
    for chain, period_s in (("high", 0.020), ("low", 0.200)):
        released = [e.release for e in executions if e.callback == f"{chain}_pub"]
        done = [e.release for e in executions if e.callback == f"{chain}_sub"]
        # at most one release per period (a machine that starves the timer skips some, rclcpp's rule)
        assert 1 <= len(released) <= SECONDS / period_s + 2, (chain, len(released))
        assert sorted(done) == sorted(released), chain  # none lost between the programs, none twice
        f = result["chains"][chain]
        assert f["instances"] == len(released) == f["released"], (chain, f)


def _kept_rows(tmp_path: Path, probe_edit=None) -> tuple[list[dict], list[dict]]:
    """The accounting of the kept runs in DATA (each a real run's traces and probe), as the rows'
    accounting columns; ``probe_edit`` changes each kept probe first."""
    rows, accs = [], []
    point = x.predictability_points()[0]
    for d in sorted(p for p in DATA.iterdir() if p.is_dir()):
        value, run, config = d.name.rsplit("_", 2)
        probe, tids = x.read_kept(d, tmp_path / d.name)
        if probe_edit:
            probe_edit(probe)
        acc = x.account_run(point, config, None, tmp_path / d.name, probe, tids)
        accs.append(acc)
        figs = acc["chains"]["high"]["raw"]
        rows.append(dict(sweep="base", value=value, run=int(run), config=config, stalled=0, loadavg=1.0, steal_ms=0.0,
                         top_instances=figs["instances"], top_jitter_ms=(figs["max_ns"] - figs["min_ns"]) / 1e6,
                         top_p99_excess_ms=(figs["p99_ns"] - figs["min_ns"]) / 1e6, top_wcrt_ms=figs["max_ns"] / 1e6,
                         top_unstalled_jitter_ms=float("nan"), pdr=1.0, blackout_max_ms=0.0,
                         executor=x.executor_label(config), **x.accounting_columns(acc, "high")))
        shutil.rmtree(tmp_path / d.name)
    return rows, accs


def test_accounting_table_comes_from_the_recorded_runs(tmp_path):
    rows, accs = _kept_rows(tmp_path)
    configs = {r["config"] for r in rows}
    assert {"vanilla", "full"} <= configs
    for r, acc in zip(rows, accs):
        assert r["acc_above"] == r["acc_platform"] + r["acc_overrun"] + r["acc_unexplained"]
        assert 0 < r["top_free_instances"] <= r["top_instances"]
        per = json.loads(r["acc_chains"])
        assert set(per) == {"high", "low"}
        if r["config"] == "vanilla":  # no chain priorities: no bound, only the platform-free split
            assert r["acc_above"] == 0 and per["high"]["bound_ms"] is None
        else:
            assert per["high"]["bound_ms"] == pytest.approx(r["top_bound_ms"]) and r["top_bound_ms"] > 5.0
    table = x.tables(x.summarize(rows), rows)
    lines = [ln for ln in table.splitlines() if ln.startswith("| two-chains | full (chainrt ChainExecutor) | ")]
    acc_line = next(ln for ln in lines if "(" in ln.split("|")[3])  # the accounting table's row
    full = [r for r in rows if r["config"] == "full"]
    cells = [c.strip() for c in acc_line.split("|")]
    assert cells[3] == f"{sum(r['top_instances'] for r in full):,} ({sum(r['top_free_instances'] for r in full):,})"
    causes = ("above", *accounting.CAUSES)
    assert cells[5:5 + len(causes)] == [str(sum(r[f"acc_{c}"] for r in full)) for c in causes]
    assert any(ln.startswith("| two-chains | vanilla (stock rclcpp SingleThreaded) | ") for ln in table.splitlines())


def test_below_the_responses_a_bound_leaves_unexplained_instances_unless_the_platform_covers_them(tmp_path,
                                                                                                   monkeypatch):
    """The recorded runs against a bound of 5 ms for the top chain (its work alone, below every
    response, as a wrong analysis would give): every instance is above it, and those that no
    platform blackout touched are unexplained (the accounting can fail). With the probe's record
    replaced by one platform blackout over the whole run on every CPU, no instance is
    platform-free and every one above the bound is the platform's."""
    monkeypatch.setattr(x, "accounting_bounds", lambda point, config, server: {"high": 5_000_000, "low": 20_000_000})
    rows, _ = _kept_rows(tmp_path)
    for r in rows:
        assert r["acc_above"] >= r["top_instances"] > 0
        assert r["acc_unexplained"] > 0 and r["acc_platform"] < r["acc_above"]

    def everything(probe):
        probe.blackouts = {c: [(0, 1 << 62)] for c in (0, 1)}
        probe.holds = {}
    rows, _ = _kept_rows(tmp_path, everything)
    for r in rows:
        assert r["top_free_instances"] == 0
        assert r["acc_platform"] == r["acc_above"] >= r["top_instances"] > 0 and r["acc_unexplained"] == 0
