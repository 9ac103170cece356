"""CROS-RT's evaluation as the paper runs it (chainrt.crosslayer.stacks, chainrt.experiments.
cros_rt_paper): the configurations' descriptors, the Preempt-RT-style receive path (every receive
kernel thread at one fixed priority, restored afterwards), the UUniFast chain sets, the summary
(stalled runs apart, paired ratios, the sweep's spread), the cros-rt bounds beside the measured
WCRT, and the CSV/plot writing. The parts that need root, the BPF toolchain and the built runtime
run a few seconds of the real thing, or are skipped with the reason."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rosutil import require_crosslayer

from chainrt.crosslayer import kernel, stacks
from chainrt.experiments import cros_rt_kernel as k
from chainrt.experiments import cros_rt_paper as x

REPO = Path(__file__).resolve().parents[2]


def test_each_configuration_carries_priorities_as_far_as_its_name_says():
    # vanilla and the Preempt-RT-style baseline: rclcpp's stock executor on the generated nodes
    v = stacks.run_arguments(stacks.stack("vanilla"))
    assert v == {"kernel": False, "dds_priorities": False, "nodes": "single", "thread_params": False}
    assert stacks.run_arguments(stacks.stack("vanilla"), stock_executor="multi")["nodes"] == "multi"
    p = stacks.run_arguments(stacks.stack("preempt-rt"))
    assert p == {"kernel": False, "dds_priorities": True, "nodes": "single", "rx_priority": kernel.PREEMPT_RT_PRIORITY}
    assert stacks.run_arguments(stacks.stack("preempt-rt"), rx_priority=30)["rx_priority"] == 30
    # CROS-RT's layers: chainrt's ChainExecutor on the same generated nodes
    assert stacks.run_arguments(stacks.stack("app-dds")) == {"kernel": False, "dds_priorities": True, "nodes": "chainrt"}
    assert stacks.run_arguments(stacks.stack("full")) == {"kernel": True, "dds_priorities": True, "nodes": "chainrt"}
    assert stacks.run_arguments(stacks.stack("full-server"), server=(1, 10))["server"] == (1, 10)
    # chainrt's emulation of the default executor: chainrt-run (no generated nodes), vanilla's setting
    assert stacks.run_arguments(stacks.stack("emulated")) == {"kernel": False, "dds_priorities": False,
                                                              "thread_params": False, "policy": "ros-default"}
    with pytest.raises(ValueError, match="non-RT server"):
        stacks.run_arguments(stacks.stack("full-server"))
    with pytest.raises(ValueError, match="known: vanilla, preempt-rt, app-dds, full, full-server, emulated"):
        stacks.stack("preempt")
    # the paper's baselines, in the order the experiments report them, then the fidelity column
    assert list(stacks.STACKS) == ["vanilla", "preempt-rt", "app-dds", "full", "full-server", "emulated"]


def _fake_kernel(threads: dict[int, str], policies: dict[int, tuple[int, int]]):
    def lister(prefix):
        return [(t, c) for t, c in threads.items() if c.startswith(prefix)]

    def setter(tid, pol, prio):
        policies[tid] = (pol, prio)
    return dict(threads=lister, set_policy=setter, get_policy=lambda tid: policies[tid])


def test_preempt_rt_style_gives_every_receive_thread_one_priority_and_restores_softirqs(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINRT_STATE_DIR", str(tmp_path))
    fifo, other = os.SCHED_FIFO, os.SCHED_OTHER
    threads = {10: "napi/crt4242h0-9", 11: "napi/crt4242h1-9", 12: "napi/eth0-3", 14: "ksoftirqd/0",
               22: "ksoftirqd/1", 30: "cpumap/0/map:7"}
    policies = {t: (other, 0) for t in threads}
    policies[22] = (fifo, 1)  # already real-time before: given back as it was
    rx = kernel.FixedRxThreads(["crt4242h0", "crt4242h1"], 50, **_fake_kernel(threads, policies))
    assert [c for _, c in rx.receive_threads()] == ["napi/crt4242h0-9", "napi/crt4242h1-9", "ksoftirqd/0",
                                                    "ksoftirqd/1"]
    with rx:
        # the NAPI threads of the run's interfaces and every ksoftirqd: one SCHED_FIFO priority
        assert {policies[t] for t in (10, 11, 14, 22)} == {(fifo, 50)}
        assert policies[12] == (other, 0) and policies[30] == (other, 0)  # not this run's / not receive
        state = json.loads((tmp_path / f"rx-threads.{os.getpid()}.json").read_text())
        assert state["priority"] == 50 and state["threads"]["22"] == ["ksoftirqd/1", fifo, 1]
    assert policies[14] == (other, 0) and policies[22] == (fifo, 1)
    assert not list(tmp_path.glob("rx-threads.*"))
    with pytest.raises(kernel.KernelPathUnavailable, match="threaded NAPI"):
        with kernel.FixedRxThreads(["crt9h0"], 50, **_fake_kernel(threads, policies)):
            pass
    with pytest.raises(ValueError):
        kernel.FixedRxThreads(["crt4242h0"], 100)


def test_cleanup_leaves_threads_that_are_not_at_the_recorded_priority(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINRT_STATE_DIR", str(tmp_path))
    dead = 4_194_304 + 17  # above pid_max's limit: no such process
    me = threading_native_id()
    (tmp_path / f"rx-threads.{dead}.json").write_text(json.dumps(
        {"pid": dead, "priority": 50, "threads": {str(me): ["not-my-comm", os.SCHED_OTHER, 0]}}))
    (tmp_path / "rx-threads.junk.json").write_text("{")
    assert kernel.restore_stale_rx_threads() == []
    assert not (tmp_path / f"rx-threads.{dead}.json").exists()


def threading_native_id() -> int:
    import threading
    return threading.get_native_id()


def test_platform_part_of_a_blackout_leaves_out_what_the_model_held():
    from chainrt.crosslayer import platform as plat
    us = 1000
    blackouts = [(0, 900 * us), (2000 * us, 4000 * us), (6000 * us, 6300 * us)]
    # (switched, woken, holder tid, comm, stolen): the first wait ended at 900 µs after a wake-up
    # at 100 µs (the timer was 100 µs late) with our NAPI thread (tid 7) holding the CPU, 200 µs
    # of it taken by the hypervisor; the second was another process's system call (tid 99) from
    # 2500 µs on; the third has no record: the probe's timer was late all along
    holds = [(895 * us, 100 * us, 7, "napi/crt1h1-9", 200 * us), (3995 * us, 2500 * us, 99, "cc1plus", 0)]
    assert plat.holder(holds, 2000 * us, 4000 * us) == (2500 * us, 99, "cc1plus", 0)
    assert plat.holder(holds, 6000 * us, 6300 * us) is None
    platform_part, model_part, info = plat.split(blackouts, holds, {7})
    assert platform_part == [(0, 300 * us), (2000 * us, 4000 * us), (6000 * us, 6300 * us)]
    assert model_part == [(300 * us, 900 * us)]
    assert [(d["late_ns"], d["held_ns"], d["stolen_ns"], d["holder"], d["model"]) for d in info] == [
        (100 * us, 800 * us, 200 * us, "napi/crt1h1-9", True), (500 * us, 1500 * us, 0, "cc1plus", False),
        (300 * us, 0, 0, "", False)]
    # a wait behind one of ours that the hypervisor took entirely stays the platform's
    assert plat.split([(0, 900 * us)], [(895 * us, 100 * us, 7, "x", 800 * us)], {7})[1] == []
    # nothing of the model's: every blackout is the platform's
    assert plat.split(blackouts, holds, set())[0] == blackouts


def test_chain_sets_put_the_papers_high_chain_on_uunifast_chains():
    s = x.chain_set(8, 0.3, seed=7)
    assert len(s) == 8 and s[0] == k.PAPER_CHAINS[0]
    assert [c["prio"] for c in s] == list(range(80, 72, -1))  # rate-monotonic below the top chain
    assert all(c["period_ms"] in x.OTHER_PERIODS_MS for c in s[1:])
    assert [c["period_ms"] for c in s[1:]] == sorted(c["period_ms"] for c in s[1:])
    u = sum(c["wcet_us"] / 1000 / c["period_ms"] for c in s[1:])
    assert abs(u - 0.3) < 8 * 0.1 / 40  # UUniFast's sum, up to the 0.1 ms floor and rounding
    assert x.chain_set(8, 0.3, seed=7) == s and x.chain_set(8, 0.3, seed=8) != s
    assert len(x.chain_set(2, 0.3, 1)) == 2
    us = x.uunifast(5, 0.7, __import__("random").Random(3))
    assert len(us) == 5 and abs(sum(us) - 0.7) < 1e-12 and min(us) >= 0
    # every run measures at least the asked instances of the top chain
    p = x.Point("base", "two-chains")
    assert p.duration_s(10_000) >= 10_000 * 0.020
    from chainrt.model import load_model_from_string
    m = load_model_from_string(x.chain_points([6])[0].model())
    assert len(m.chains) == 6 and len({e.process for e in m.executors}) == 12


def _row(value, run, config, jitter, *, stalled=0, pdr=1.0, sweep="size", wcrt=None, curve_ms=None, hop=0.3):
    r = dict(experiment="cros_rt_size", sweep=sweep, value=value, run=run, config=config, order=0,
             started_utc="2026-01-01T00:00:00Z", loadavg=2.0, loadavg_end=2.0, steal_ms=10.0, duration_s=202.5,
             size=value if sweep == "size" else "4KiB", chains=2, flood_mbps=60.0, rx_priority="",
             server_budget_ms="", server_period_ms="", top="high", top_instances=10_050,
             top_wcrt_ms=wcrt if wcrt is not None else 5.2 + jitter, top_bcrt_ms=5.2, top_p99_ms=5.5,
             top_mean_ms=5.3, top_jitter_ms=jitter, top_p99_excess_ms=jitter / 3, top_misses=0,
             top_unstalled_instances=10_050, top_unstalled_jitter_ms=jitter, top_hop_destalled_max_ms=hop,
             stalled=stalled, blackout_max_ms=3.0 if stalled else 0.4, blackouts_long=2 if stalled else 0,
             blackout_total_ms=20.0, flood_sent=1000, flood_received=int(1000 * pdr), pdr=pdr,
             rt_class_packets=0, nonrt_class_packets=0, threads_checked="",
             chain_figures=json.dumps({"high": {"wcrt_ms": wcrt if wcrt is not None else 5.2 + jitter,
                                                "bcrt_ms": 5.2, "p99_ms": 5.5, "instances": 10_050, "misses": 0},
                                       "low": {"wcrt_ms": 26.0, "bcrt_ms": 20.5, "p99_ms": 25.0,
                                               "instances": 1005, "misses": 0}}),
             chain_set=json.dumps(list(k.PAPER_CHAINS)))
    if config == "full-server":
        r.update(server_budget_ms=1.0, server_period_ms=10.0)
    if curve_ms is not None:
        from chainrt.crosslayer import platform as plat
        for w, s in plat.curve([[(0, int(curve_ms * 1e6))]]):
            r[f"plat_s_{w // 1000}us_ns"] = s
    return r


def test_summary_keeps_stalled_runs_apart_and_pairs_ratios_per_run():
    rows = []
    for run, (van, prt, full) in enumerate(((20.0, 2.0, 0.5), (30.0, 3.0, 9.0), (10.0, 1.5, 0.25))):
        rows += [_row("4KiB", run, "vanilla", van, pdr=1.0), _row("4KiB", run, "preempt-rt", prt, pdr=1.0),
                 _row("4KiB", run, "full", full, stalled=int(run == 1), pdr=0.99)]
    rows += [_row("64KiB", 0, "full", 0.6), _row("64KiB", 0, "vanilla", 25.0)]
    s = x.summarize(rows)
    full = s["points"]["4KiB"]["configs"]["full"]
    assert full["clean"]["top_jitter_ms"] == {"median": 0.375, "min": 0.25, "max": 0.5, "n": 2}
    assert full["clean"]["runs"] == [0, 2] and full["stalled"]["runs"] == [1]
    assert full["stalled"]["top_jitter_ms"]["median"] == 9.0  # reported, never mixed in
    r = s["points"]["4KiB"]["ratios"]["vanilla/full"]
    assert r["clean_pairs"] == {"median": 40.0, "min": 40.0, "max": 40.0, "n": 2}  # 20/0.5 and 10/0.25
    assert r["all_pairs"]["n"] == 3 and r["all_pairs"]["min"] == pytest.approx(30 / 9)
    assert s["points"]["4KiB"]["ratios"]["preempt-rt/full"]["clean_pairs"]["median"] == 5.0
    assert s["points"]["4KiB"]["pdr_over_vanilla"]["full"]["median"] == pytest.approx(0.99)
    # the sweep's spread of each configuration's clean medians: 0.6 / 0.375
    assert s["sweep_spread"]["full"]["largest_over_smallest"] == pytest.approx(1.6)
    assert x.point_values(rows) == ["4KiB", "64KiB"]


def test_bounds_beside_the_measured_wcrt_with_reasons():
    # full: C^R fitted on run 0 (0.3 ms hop), checked on run 1; vanilla: no model, with the reason
    rows = [_row("4KiB", r, c, 0.4, curve_ms=0.5) for r in range(2) for c in ("vanilla", "full")]
    rows.append(_row("4KiB", 0, "app-dds", 40.0, hop=30.0))
    b = x.bounds(x.Point("size", "4KiB"), rows)
    assert "default executor" in b["vanilla"]["reason"]
    full = b["full"]
    assert full["fit_runs"] == [0] and not full["in_sample"] and full["fitted_remote_ms"] == 0.3
    # 5 ms of work + C^R + the selection blocking (bounded by the fixed part of C^R)
    assert full["bound_ms"]["high"] == pytest.approx(5.6, abs=1e-6)
    check = [r for r in full["runs"] if r["role"] == "check"]
    assert len(check) == 1 and check[0]["measured_wcrt_ms"]["high"] == pytest.approx(5.6)
    # with the run's platform (0.5 ms of blackout charged on the cores the chain may use): larger
    assert check[0]["platform_bound_ms"]["high"] > 5.6 and check[0]["verdict"]["high"] == "covered"
    # app-dds with one run: fitted on it (in-sample); a 30 ms hop fills the high chain's period
    # on each CPU: the low chain gets no bound, and the analysis says why
    app = b["app-dds"]
    assert app["in_sample"] and app["bound_ms"]["low"] is None and app["reasons"]["low"]


def _write_csv(path: Path, rows: list[dict]) -> None:
    fields = x.FIELDS + x._curve_fields()
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)


def test_sweep_csv_summary_and_figure_from_earlier_runs(tmp_path):
    rows = [_row(v, 0, c, j) for v, js in (("1KiB", (12.0, 2.0, 0.4)), ("16KiB", (20.0, 2.5, 0.5)),
                                          ("256KiB", (40.0, 3.0, 0.6)))
            for c, j in zip(("vanilla", "preempt-rt", "full"), js)]
    rows[-1]["stalled"] = 1
    # a run in which no instance of the top chain completed: no figure, no ratio, no crash
    rows.append(dict(_row("1KiB", 0, "app-dds", float("nan")), top_instances=0, top_wcrt_ms=float("nan"),
                     top_p99_excess_ms=float("nan")))
    _write_csv(tmp_path / "runs.csv", rows)
    out = subprocess.run([sys.executable, "-m", "chainrt.cli", "experiment", "cros-rt-size", "--from-csv",
                          str(tmp_path / "runs.csv"), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "o" / "cros_rt_size.png").stat().st_size > 10_000
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert list(s["points"]) == ["1KiB", "16KiB", "256KiB"]
    assert s["points"]["256KiB"]["configs"]["full"]["clean"]["top_jitter_ms"] is None
    assert s["sweep_spread"]["full"]["largest_over_smallest"] == pytest.approx(1.25)
    # the tables on the terminal: the paired ratio, the bounds beside the measured WCRT
    assert "| 1KiB | vanilla/full | 30.0 (n=1) |" in out.stdout
    assert "| 1KiB | full | 0.30 | in-sample | 5.6 / 5.6 |" in out.stdout
    # the traffic and chain sweeps' figures have their third panel
    for sweep, val in (("rate", "30"), ("chains", "2")):
        r2 = [dict(r, sweep=sweep, value=val if r["value"] == "1KiB" else r["value"]) for r in rows[:3]]
        _write_csv(tmp_path / f"{sweep}.csv", r2)
        rr = x.read_rows([str(tmp_path / f"{sweep}.csv")])
        x.finish(f"t_{sweep}", rr, str(tmp_path / sweep))
        assert (tmp_path / sweep / f"t_{sweep}.png").is_file()
    # not a runs.csv of these experiments: one line, exit 1
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    bad = subprocess.run([sys.executable, "-m", "chainrt.cli", "experiment", "cros-rt-chains", "--from-csv",
                          str(tmp_path / "bad.csv"), "--out", str(tmp_path / "b")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "missing columns" in bad.stderr
    flag = subprocess.run([sys.executable, "-m", "chainrt.cli", "experiment", "cros-rt-traffic", "--configs",
                           "vanilla,preempt", "--out", str(tmp_path / "c")], capture_output=True, text=True, check=False)
    assert flag.returncode == 1 and "unknown configuration 'preempt'" in flag.stderr and "Traceback" not in flag.stderr


def test_short_interleaved_run_writes_rows_with_the_fixed_receive_path(tmp_path, capsys):
    """A few seconds of the real experiment: two configurations, 25 instances each; the
    Preempt-RT-style run's receive threads were at the fixed priority mid-run, the machine's
    ksoftirqd policies are back afterwards, and the rows carry the probe's view."""
    require_crosslayer(capsys)
    from chainrt.crosslayer.kernel import _get_policy, _kernel_threads
    os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 40))
    before = {t: _get_policy(t) for t, _ in _kernel_threads("ksoftirqd/")}
    rows = x.run_points("t", x.predictability_points(rate_mbps=20.0), ["preempt-rt", "vanilla"], 1,
                        str(tmp_path), instances=25, log=lambda *a: None)
    assert {t: _get_policy(t) for t, _ in _kernel_threads("ksoftirqd/")} == before
    by = {r["config"]: r for r in rows}
    assert set(by) == {"preempt-rt", "vanilla"}
    n = len(_kernel_threads("ksoftirqd/")) + 2  # both hosts' NAPI threads
    assert by["preempt-rt"]["threads_checked"] == f"receive threads at fifo 50: {n}/{n}"
    for r in rows:
        # both baselines: rclcpp's stock SingleThreadedExecutor spun every model executor
        classes = json.loads(r["executor_class"])
        assert len(classes) == 4 and set(classes.values()) == {"rclcpp::executors::SingleThreadedExecutor"}, classes
        assert r["executor"] == "stock rclcpp SingleThreaded"
        # accounted: every instance above its bound has its cause; vanilla has no bound
        assert r["acc_above"] == r["acc_platform"] + r["acc_overrun"] + r["acc_unexplained"]
        assert r["top_free_instances"] <= r["top_instances"]
        assert (r["top_bound_ms"] == r["top_bound_ms"]) == (r["config"] == "preempt-rt")  # NaN: none
        assert r["top_instances"] >= 25 and r["top_jitter_ms"] >= 0 and r["stalled"] in (0, 1)
        # the platform's part never exceeds what the probe saw
        assert r["blackout_max_ms"] <= r["probe_blackout_max_ms"] and r["attribution"] == "held/late"
        assert r["pdr"] > 0 and r["blackout_max_ms"] >= 0 and r["plat_s_1000us_ns"] >= 0
    assert (tmp_path / "runs.csv").is_file() and list((tmp_path / "raw").iterdir())
