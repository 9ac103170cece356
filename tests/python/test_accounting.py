"""The accounting of a real run (chainrt.accounting) on synthetic recorded runs.

The run: examples/two_chains.yaml's shape on one single-threaded executor "main" on CPU 0 — the
high chain (hi_pub -> hi_sub, 2.5 ms each, every 20 ms) and the low chain (lo_pub -> lo_sub,
10 ms each, released at 0). The low chain's lo_sub blocks the high instance released at 20 ms:
in the clean run that instance responds in 10 ms, the run's worst; the high chain's bound is
11 ms. Every callback uses 2 % more CPU than its WCET (the runtime's own cost of a dispatch).
"""

from __future__ import annotations

import json

from chainrt import accounting as acc
from chainrt.accounting import Execution

MS = 1_000_000
CHAINS = {"high": ["hi_pub", "hi_sub"], "low": ["lo_pub", "lo_sub"]}
WCETS = {"hi_pub": int(2.5 * MS), "hi_sub": int(2.5 * MS), "lo_pub": 10 * MS, "lo_sub": 10 * MS}
BOUNDS = {"high": 11 * MS, "low": 40 * MS}


def ex(cb: str, start_ms: float, wall_ms: float, release_ms: float, cpu_ms: float | None = None) -> Execution:
    cpu = int((cpu_ms if cpu_ms is not None else WCETS[cb] / MS * 1.02) * MS)
    return Execution(cb, "main", 0, int(start_ms * MS), int((start_ms + wall_ms) * MS), cpu, int(release_ms * MS))


def run(lo_sub_wall: float = 10, lo_sub_cpu: float | None = None, hi20_start: float | None = None) -> list[Execution]:
    """The recorded run: lo_sub's wall and CPU time, and when the high instance released at
    20 ms starts (by default when lo_sub ends)."""
    out = [ex("lo_pub", 5, 10, 0), ex("lo_sub", 15, lo_sub_wall, 0, lo_sub_cpu)]
    for k in range(10):
        r = 20 * k
        start = r if k != 1 else (hi20_start if hi20_start is not None else 15 + lo_sub_wall)
        out += [ex("hi_pub", start, 2.5, r), ex("hi_sub", start + 2.5, 2.5, r)]
    return out


def account(executions, blackouts=None, bounds=BOUNDS, **kw):
    return acc.account(executions, CHAINS, bounds, WCETS, blackouts, **kw)["chains"]


def test_the_clean_run_has_nothing_above_its_bounds():
    high = account(run(), {0: []})["high"]
    assert (high["above"], high["raw"]["max_ns"], high["raw"]["instances"]) == (0, 10 * MS, 10)


def test_a_callback_at_twice_its_wcet_classifies_the_instance_it_delayed_as_overrun_naming_it():
    high = account(run(lo_sub_wall=20, lo_sub_cpu=20), {0: []})["high"]
    assert (high["above"], high["overrun"], high["platform"], high["unexplained"]) == (1, 1, 0, 0)
    case = high["cases"][0]
    assert case.release == 20 * MS and case.response_ns == 20 * MS
    assert [(o["callback"], o["cpu_ns"], o["wcet_ns"]) for o in case.overruns] == [("lo_sub", 20 * MS, 10 * MS)]
    assert "lo_sub ran 20.00 ms of CPU, its WCET is 10.00 ms" in case.text()


def test_a_bound_lowered_by_30_percent_yields_unexplained_instances():
    lowered = {k: int(v * 0.7) for k, v in BOUNDS.items()}
    high = account(run(), {0: []}, bounds=lowered)["high"]
    # 10 ms > 7.7 ms, with no blackout and every callback within its WCET's tolerance
    assert (high["above"], high["unexplained"], high["platform"], high["overrun"]) == (1, 1, 0, 0)
    assert "unexplained" in high["cases"][0].text()


def test_small_excesses_over_the_wcets_that_add_up_to_the_excess_over_the_bound_are_an_overrun():
    # lo_sub at 1.08x its WCET (below the overrun ratio): with the others' 2 % 1.2 ms beyond the
    # WCETs in the window of the high instance released at 20 ms, 0.6 ms above a bound of 10.2 ms
    execs = run(lo_sub_wall=10.8, lo_sub_cpu=10.8)
    high = account(execs, {0: []}, bounds={"high": int(10.2 * MS), "low": 40 * MS})["high"]
    assert (high["above"], high["overrun"], high["unexplained"]) == (1, 1, 0)
    assert "used 1.20 ms of CPU beyond their WCETs, it is 0.60 ms above the bound" in high["cases"][0].text()
    # 1.5 ms above a bound of 9.3 ms: more than the callbacks' 1.2 ms beyond their WCETs
    high = account(execs, {0: []}, bounds={"high": int(9.3 * MS), "low": 40 * MS})["high"]
    assert (high["overrun"], high["unexplained"]) == (0, 1)


def test_a_blackout_inside_the_window_classifies_the_instance_as_platform():
    high = account(run(hi20_start=29), {0: [(25 * MS, 29 * MS)]})["high"]
    assert (high["above"], high["platform"]) == (1, 1)
    assert high["cases"][0].platform_ns == 4 * MS


def test_a_blackout_explains_an_instance_only_within_the_bound_with_the_measured_platform():
    # 4 ms of platform blackout in the window of the 13.5 ms instance (bound 11 ms)
    with_platform = {"high": 15 * MS}
    high = account(run(hi20_start=29), {0: [(25 * MS, 29 * MS)]}, platform_bounds=with_platform)["high"]
    assert (high["above"], high["platform"]) == (1, 1)
    assert "within the bound with the measured platform, 15.00 ms" in high["cases"][0].text()
    # a bound with the platform of 12 ms: the blackouts the run measured cannot take it to 13.5 ms
    high = account(run(hi20_start=29), {0: [(25 * MS, 29 * MS)]}, platform_bounds={"high": 12 * MS})["high"]
    assert (high["above"], high["platform"], high["unexplained"]) == (1, 0, 1)
    assert "above even the bound with the measured platform, 12.00 ms" in high["cases"][0].text()
    # ... unless a callback overran there too
    high = account(run(lo_sub_wall=14, lo_sub_cpu=14), {0: [(25 * MS, 29 * MS)]},
                   platform_bounds={"high": 12 * MS})["high"]
    assert (high["above"], high["overrun"], high["unexplained"]) == (1, 1, 0)


def test_a_blackout_before_the_release_counts_through_the_backlog_it_left():
    # the platform stopped lo_sub (16-19 ms) before the high instance's release at 20 ms; the
    # executor stayed busy, so the delay reached that instance
    high = account(run(lo_sub_wall=13), {0: [(16 * MS, 19 * MS)]})["high"]
    assert (high["above"], high["platform"]) == (1, 1)
    case = high["cases"][0]
    assert case.window[0] < 16 * MS < 20 * MS == case.release


def test_a_blackout_that_delayed_pending_work_before_it_started_counts():
    # lo_pub was released at 0 and pending when the platform took the CPU at 5-9 ms: the trace
    # shows the executor doing nothing then, but lo_pub and lo_sub start 4 ms late and block the
    # high instance released at 20 ms until 29 ms
    executions = [x for x in run() if x.callback.startswith("hi") and x.release != 20 * MS] + \
        [ex("lo_pub", 9, 10, 0), ex("lo_sub", 19, 10, 0), ex("hi_pub", 29, 2.5, 20), ex("hi_sub", 31.5, 2.5, 20)]
    high = account(executions, {0: [(5 * MS, 9 * MS)]})["high"]
    assert (high["above"], high["platform"]) == (1, 1)
    assert high["cases"][0].window == (0, 34 * MS)


def test_a_blackout_while_the_executor_was_idle_is_not_a_cause():
    # the high instance released at 60 ms started 7 ms late with nothing pending before its
    # release: a blackout at 46-47 ms (idle executor) did not delay it
    executions = [x for x in run() if x.release != 60 * MS] + [ex("hi_pub", 67, 2.5, 60), ex("hi_sub", 69.5, 2.5, 60)]
    high = account(executions, {0: [(46 * MS, 47 * MS)]})["high"]
    assert (high["above"], high["unexplained"], high["platform"]) == (1, 1, 0)
    assert high["cases"][0].window == (60 * MS, 72 * MS)


def test_an_overrun_before_the_busy_window_is_not_a_cause():
    # lo_sub overran (20 ms of CPU) and ended at 25 ms; the high instance released at 60 ms,
    # with the executor idle before it, started 7 ms late all the same
    executions = [x for x in run(lo_sub_wall=10, lo_sub_cpu=20) if x.release != 60 * MS] + \
        [ex("hi_pub", 67, 2.5, 60), ex("hi_sub", 69.5, 2.5, 60)]
    high = account(executions, {0: []})["high"]
    assert (high["above"], high["unexplained"], high["overrun"]) == (1, 1, 0)


def test_only_the_chains_cpus_count():
    high = account(run(hi20_start=29), {1: [(25 * MS, 29 * MS)]}, chain_cpus={"high": {0}})["high"]
    assert (high["platform"], high["unexplained"]) == (0, 1)


def test_a_blackout_the_models_own_thread_held_is_not_the_platforms():
    blackouts = {0: [(25 * MS, 29 * MS)]}
    # the probe was woken on time at 25 ms and the model's thread 4242 kept the CPU until 29 ms
    holds = {0: [(29 * MS, 25 * MS, 4242, "chainrt-run", 0)]}
    ours = acc.platform_blackouts(blackouts, holds, {4242})
    theirs = acc.platform_blackouts(blackouts, holds, {1})
    assert account(run(hi20_start=29), ours)["high"]["unexplained"] == 1
    assert account(run(hi20_start=29), theirs)["high"]["platform"] == 1


def test_a_blackout_the_model_held_leaves_no_platform_sliver_below_the_probes_threshold():
    """A model thread that keeps the CPU most of the time (a LaME reservation) holds most of the
    probe's blackouts; the probe's timer fires some µs late on every wake-up. That latency,
    below the probe's threshold, is no platform blackout: the instance stays platform-free."""
    us = 1000
    late = {0: [(29 * MS, 25 * MS + 20 * us, 4242, "chainrt-run", 0)]}  # woken 20 µs late
    ours = acc.platform_blackouts({0: [(25 * MS, 29 * MS)]}, late, {4242})
    assert ours == {0: []}
    high = account(run(hi20_start=29), ours)["high"]
    assert (high["platform"], high["platform_free"]["instances"]) == (0, 10)
    # a timer late by the threshold or more stays the platform's
    later = {0: [(29 * MS, 25 * MS + 150 * us, 4242, "chainrt-run", 0)]}
    assert acc.platform_blackouts({0: [(25 * MS, 29 * MS)]}, later, {4242}) == {0: [(25 * MS, 25 * MS + 150 * us)]}
    # and so does a wait the hypervisor took part of (the steal clock), late and stolen together
    stolen = {0: [(29 * MS, 25 * MS + 20 * us, 4242, "chainrt-run", 200 * us)]}
    assert acc.platform_blackouts({0: [(25 * MS, 29 * MS)]}, stolen, {4242}) == {0: [(25 * MS, 25 * MS + 220 * us)]}


def test_platform_free_statistics_leave_out_the_instances_a_blackout_touched():
    high = account(run(hi20_start=29), {0: [(25 * MS, 29 * MS)]})["high"]
    assert high["raw"]["instances"] == 10 and high["raw"]["max_ns"] == 14 * MS
    assert high["platform_free"]["instances"] == 9 and high["platform_free"]["max_ns"] == 5 * MS
    assert account(run(), None)["high"]["platform_free"] is None  # not measured: not claimed


def test_the_warm_up_is_left_out():
    high = account(run(lo_sub_wall=20, lo_sub_cpu=20), {0: []}, since_ns=21 * MS)["high"]
    assert (high["raw"]["instances"], high["above"]) == (8, 0)


def test_read_traces_aligns_each_process_on_its_start(tmp_path):
    recs = [{"executor": "main", "callback": "hi_pub", "thread": 0, "release": 0, "start": 10, "finish": 20,
             "cpu": 9, "deadline": -1},
            {"executor": "main", "callback": "hi_sub", "thread": 1, "release": -1, "start": 30, "finish": 40,
             "cpu": 9, "deadline": -1},
            {"device": "gpu", "callback": "x", "segment": 0, "issued": 1, "start": 2, "finish": 3}]
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\nnot json\n")
    (tmp_path / "p.jsonl.start").write_text("1000\n")
    (tmp_path / "q.jsonl").write_text(json.dumps(recs[0]) + "\n")  # no .start: cannot be aligned
    got = acc.read_traces(tmp_path)
    assert got == [Execution("hi_pub", "main", 0, 1010, 1020, 9, 1000),
                   Execution("hi_sub", "main", 1, 1030, 1040, 9, None)]


def test_to_json_counts_and_texts():
    js = acc.to_json(acc.account(run(lo_sub_wall=20, lo_sub_cpu=20), CHAINS, BOUNDS, WCETS, {0: []}))
    high = js["chains"]["high"]
    assert (high["overrun"], high["cases"][0]["cause"], high["cases"][0]["window"][1]) == (1, "overrun", 40 * MS)
    json.dumps(js)


def test_model_inputs_take_the_chains_cpus_from_pinned_threads():
    from pathlib import Path
    from chainrt.model import load_model
    model = load_model(str(Path(__file__).resolve().parents[2] / "examples" / "two_chains.yaml"))
    got = acc.model_inputs(model)
    assert got["chains"] == CHAINS and got["wcets"] == WCETS
    assert got["chain_cpus"] == {"high": {0}, "low": {0}} and got["chain_executors"] == {"high": {"main"}, "low": {"main"}}
    assert acc.model_inputs(model, thread_params=False)["chain_cpus"] == {"high": None, "low": None}


def test_real_time_throttling_is_named_when_a_blackout_matches_it():
    long = {0: [(0, 48 * MS)]}
    note = acc.throttling_note(long, (950_000, 1_000_000))
    assert "sched_rt_runtime_us = 950000" in note and "sched_rt_runtime_us=-1" in note
    assert acc.throttling_note({0: [(0, 30 * MS)]}, (950_000, 1_000_000)) is None  # shorter than the cut
    assert acc.throttling_note(long, None) is None  # throttling off
    assert acc.throttling_note({0: [(0, 2000 * MS)]}, (950_000, 1_000_000)) is None  # a stall longer than it can cut


def test_a_run_that_real_time_throttling_cut_says_so_with_the_remedy(tmp_path, monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    from chainrt.model import load_model
    model = load_model(str(Path(__file__).resolve().parents[2] / "examples" / "two_chains.yaml"))
    # the probe's 48 ms blackout was held by one of the model's own threads (a real-time thread of
    # the run, then throttled with the probe): not the platform's, but the throttling all the same
    probe = SimpleNamespace(blackouts={0: [(10 * MS, 58 * MS)]}, holds={0: [(57 * MS, 10 * MS, 7, "exec", 0)]},
                            attribution_error="", pids=set(), dropped=0)
    monkeypatch.setattr(acc, "rt_throttling", lambda: (950_000, 1_000_000))
    got = acc.after_run(model, tmp_path, probe, None, {"high": None, "low": None}, {}, {7})
    said = [n for n in got["notes"] if n.startswith("real-time throttling cut the run")]
    assert len(said) == 1 and "sysctl -w kernel.sched_rt_runtime_us=-1" in said[0]
    monkeypatch.setattr(acc, "rt_throttling", lambda: None)
    got = acc.after_run(model, tmp_path, probe, None, {"high": None, "low": None}, {}, {7})
    assert not any(n.startswith("real-time throttling") for n in got["notes"])


def dispatched_late(gap_ms: float = 0.4, lost_ms: float = 0.3) -> list[Execution]:
    """The clean run with the blocked high instance (released at 20 ms) dispatched `gap_ms` after
    lo_sub ended and its hi_sub losing the CPU for `lost_ms` while running (2.5 ms of CPU in
    2.5 + `lost_ms` of wall time): a response of 10 ms + gap + lost, the rest the model's work."""
    return [x for x in run() if x.release != 20 * MS] + [
        ex("hi_pub", 25 + gap_ms, 2.5, 20), ex("hi_sub", 27.5 + gap_ms, 2.5 + lost_ms, 20, cpu_ms=2.5)]


def test_the_runtimes_own_time_explains_an_instance_above_the_simulated_worst_case():
    # the simulation (callbacks at their WCET, dispatches free) gives the blocked instance 10 ms;
    # the run 10.7 ms: 0.4 ms with no callback running, 0.3 ms hi_sub ran without the CPU
    for cpus in ({"high": {0}}, None):
        high = account(dispatched_late(), {0: []}, bounds={"high": 10 * MS}, chain_cpus=cpus, simulated=True)["high"]
        assert (high["above"], high["runtime"], high["unexplained"]) == (1, 1, 0), cpus
        case = high["cases"][0]
        assert (case.idle_ns, case.excess_ns) == (int(0.4 * MS), int(0.3 * MS)), cpus
        assert "runtime (0.40 ms of it with no callback running" in case.text() and "without them 10.00 ms" in case.text()


def test_the_runtimes_own_time_is_no_cause_against_an_analysis_bound():
    high = account(dispatched_late(), {0: []}, bounds={"high": 10 * MS})["high"]
    assert (high["above"], high["runtime"], high["unexplained"]) == (1, 0, 1)


def test_more_model_work_than_the_simulated_worst_case_stays_unexplained():
    # a simulated worst case 30 % lower: less the runtime's 0.7 ms the response is still 10 ms
    high = account(dispatched_late(), {0: []}, bounds={"high": 7 * MS}, simulated=True)["high"]
    assert (high["above"], high["runtime"], high["unexplained"]) == (1, 0, 1)
    assert "less the runtime's own time, 0.70 ms, it still exceeds the simulated worst case" in high["cases"][0].text()


def test_above_the_simulated_worst_case_but_within_the_analysis_bound_is_a_schedule_the_run_did_not_reach():
    sim = {"high": 7 * MS}
    high = account(dispatched_late(), {0: []}, bounds=sim, simulated=True, analysis_bounds={"high": 11 * MS})["high"]
    assert (high["above"], high["bounded"], high["unexplained"]) == (1, 1, 0)
    assert "within the analysis bound, 11.00 ms" in high["cases"][0].text()
    full = acc.to_json(acc.account(dispatched_late(), CHAINS, sim, WCETS, {0: []}, simulated=True,
                                   analysis_bounds={"high": 11 * MS}))
    assert "1 within the analysis bound" in acc.cause_text(full["chains"]["high"], "the simulated worst case")
    # above the analysis bound too: unexplained
    high = account(dispatched_late(), {0: []}, bounds=sim, simulated=True, analysis_bounds={"high": 9 * MS})["high"]
    assert (high["bounded"], high["unexplained"]) == (0, 1)


def test_work_in_parallel_on_another_cpu_is_not_the_runtimes_time():
    # another executor's callback ran on the other CPU the whole time: it covers the high chain's
    # wait and hi_sub's lost time where the CPUs are not known (on one CPU it would have delayed)
    wcets = dict(WCETS, other=50 * MS)
    runs = dispatched_late() + [Execution("other", "side", 1, 0, 54 * MS, 50 * MS, None)]
    high = acc.account(runs, CHAINS, {"high": 10 * MS}, wcets, {0: []}, simulated=True)["chains"]["high"]
    assert (high["above"], high["runtime"], high["unexplained"]) == (1, 0, 1)
    assert high["cases"][0].idle_ns == 0 and high["cases"][0].excess_ns == 0
    # known to run on another CPU than the chain's executor, it hides none of the chain's time
    high = acc.account(runs, CHAINS, {"high": 10 * MS}, wcets, {0: []}, simulated=True,
                       executor_cpus={"main": {0}, "side": {1}})["chains"]["high"]
    assert (high["runtime"], high["cases"][0].idle_ns, high["cases"][0].excess_ns) == (1, int(0.4 * MS), int(0.3 * MS))


def test_the_benchmark_accounts_against_its_simulated_worst_cases_with_the_runtimes_time():
    from pathlib import Path

    from chainrt.model import load_model
    from chainrt.reference_system import accounting as bench
    model = load_model(str(Path(__file__).resolve().parents[2] / "examples" / "two_chains.yaml"))  # CHAINS, WCETS
    inp = {"executions": dispatched_late(), "blackouts": {0: []}, "since_ns": 0, "sinks": {}, "attribution": "",
           "probe_blackouts": {}, "rt_throttling": None}
    got = bench.config_accounting(model, [{"accounting": inp}], {"chains": {"high": {"wcrt_bound_ns": 11 * MS}}},
                                  {"chains": {"high": {"wcrt_ns": 10 * MS}}})
    assert got["chains"]["high"]["above"] == 0
    assert (got["simulated"]["high"]["above"], got["simulated"]["high"]["runtime"]) == (1, 1)
    text = acc.cause_text(got["simulated"]["high"], "the simulated worst case")
    assert text.startswith("accounted: of the 1 instances above the simulated worst case, 1 within the runtime's own time")
    assert got["simulated"]["high"]["unexplained_cases"] == []
    # an analysis bound the instance exceeds: the unexplained instance is named with its run
    got = bench.config_accounting(model, [{"accounting": inp}] * 2, {"chains": {"high": {"wcrt_bound_ns": 10 * MS}}})
    assert got["chains"]["high"]["unexplained"] == 2
    assert [t.split(": an instance")[0] for t in got["chains"]["high"]["unexplained_cases"]] == [
        "run 1: chain 'high'", "run 2: chain 'high'"]


def test_a_stock_executors_accounting_is_its_platform_free_split_and_the_bench_names_throttling():
    from chainrt.reference_system import accounting as bench
    from chainrt.reference_system import kpi, report
    free = kpi.RunKpis(hot_path_latencies=[10 * MS, 12 * MS], behavior_planner_periods=[100 * MS, 100 * MS])
    raw = kpi.RunKpis(hot_path_latencies=[10 * MS, 12 * MS, 60 * MS], behavior_planner_periods=[100 * MS, 150 * MS])
    # the stock executor ran real-time as a whole: the kernel throttled it (and the probe) for 48 ms
    inp = {"executions": [], "blackouts": {1: [(500 * MS, 548 * MS)]}, "since_ns": 0, "sinks": {}, "attribution": "",
           "probe_blackouts": {1: [(500 * MS, 548 * MS)]}, "rt_throttling": (950_000, 1_000_000), "free_kpis": free}
    analysis = {"chains": {"hot_path_front": {"wcrt_bound_ns": 20 * MS}}}
    a = bench.config_accounting(None, [{"accounting": inp}], analysis)
    assert a["chains"] == {} and not a["bounded"] and a["runs"] == 1
    assert a["hot_path_latency"]["count"] == 2 and a["hot_path_latency"]["max_ns"] == 12 * MS
    assert len(a["notes"]) == 1 and a["notes"][0].startswith("real-time throttling cut the run: 1 blackout(s)")
    assert "sysctl -w kernel.sched_rt_runtime_us=-1" in a["notes"][0]
    # without throttling set, or without a blackout that matches it, nothing is said
    assert bench.config_accounting(None, [{"accounting": dict(inp, rt_throttling=None)}], analysis)["notes"] == []
    assert bench.config_accounting(None, [{"accounting": dict(inp, probe_blackouts={1: [(0, MS)]})}],
                                   analysis)["notes"] == []
    result = {"configs": {"rclcpp-single-threaded": dict(raw.to_dict(), accounting=a)}, "system": "upstream"}
    lines = report.accounting_lines(result, color=False)
    row = next(ln for ln in lines if ln.startswith("rclcpp-single-threaded"))
    assert row.split()[1:4] == ["27.33", "60.00", "60.00"] and "no bound" in row
    assert row.split("|")[1].split() == ["2", "11.00", "12.00", "12.00", "1.09", "1.09"]
    assert any("rclcpp-single-threaded: real-time throttling cut the run" in ln for ln in lines)
    assert any("'no bound'" in ln for ln in lines)


def test_the_report_prints_the_counts_and_unexplained_in_red():
    lowered = {k: int(v * 0.7) for k, v in BOUNDS.items()}
    js = acc.to_json(acc.account(run(), CHAINS, lowered, WCETS, {0: []}))
    plain, colored = acc.report_lines(js), acc.report_lines(js, color=True)
    assert not any("\033[31m" in ln for ln in plain)
    red = [ln for ln in colored if "\033[31m" in ln]
    assert len(red) == 2 and "high" in red[0] and "unexplained" in red[1]  # the chain's row, its case
    assert [ln.split()[:6] for ln in plain if ln.split()[:1] == ["high"]] == [["high", "7.70", "1", "0", "0", "1"]]


def test_a_shared_last_callback_serves_the_chain_whose_first_callback_made_the_release():
    # two chains fuse into "fuse": its execution carries the release of chain a's timer only
    chains = {"a": ["ta", "fuse"], "b": ["tb", "fuse"]}
    run_ = [Execution("ta", "e", 0, 0, MS, MS, 0), Execution("tb", "e", 0, MS, 2 * MS, MS, int(0.5 * MS)),
            Execution("fuse", "e", 0, 2 * MS, 3 * MS, MS, 0)]
    got = acc.instances(run_, chains)
    assert [(i.release, i.finish) for i in got["a"]] == [(0, 3 * MS)] and got["b"] == []


def test_the_benchmarks_platform_free_kpis_leave_out_the_samples_a_blackout_touched():
    from chainrt.reference_system import accounting as bench
    from chainrt.reference_system import kpi
    from chainrt.reference_system.message import Entry
    nodes = ("FrontLidarDriver", "RearLidarDriver", "ObjectCollisionEstimator")
    # one sample every 100 ms: both LiDARs at k*100 ms, the end 10 ms later; the planner 5 ms after
    samples = [[Entry(n, k * 100 * MS + (10 * MS if n == kpi.HOT_PATH_END else 0), k) for n in nodes] +
               [Entry(kpi.BEHAVIOR_PLANNER, k * 100 * MS + 5 * MS + (3 * MS if k == 15 else 0), k)]
               for k in range(20)]
    node_exec = {n: "main" for n in (*nodes, kpi.BEHAVIOR_PLANNER)}
    # the executor busy from each LiDAR release to the end of its sample
    busy = {"main": [(k * 100 * MS, k * 100 * MS + 10 * MS) for k in range(20)]}
    run_ = {"sinks": {kpi.HOT_PATH_SINK: samples}}
    # a blackout inside sample 12's window, and one just before the planner's late start in 15
    blackouts = [(1204 * MS, 1206 * MS), (1506 * MS, 1507 * MS)]
    free = bench.free_kpis(run_, node_exec, busy, blackouts)
    raw = kpi.run_kpis(run_["sinks"])
    assert len(raw.hot_path_latencies) == 10 and len(free.hot_path_latencies) == 8  # samples 12 and 15 out
    # a period's window runs from the busy period of the previous planner start to this one: each
    # blackout touches the period that ends after it and the one that begins before it (11->12,
    # 12->13, 14->15 and 15->16, the last two the 103 ms and 97 ms ones)
    assert sorted(raw.behavior_planner_periods) == [97 * MS] + [100 * MS] * 7 + [103 * MS]
    assert free.behavior_planner_periods == [100 * MS] * 5


def test_the_verdict_names_the_accounting_as_the_cause():
    from chainrt.verdict import Finding
    js = acc.to_json(acc.account(run(lo_sub_wall=20, lo_sub_cpu=20), CHAINS, BOUNDS, WCETS, {0: []}))
    js["simulated"] = acc.to_json(acc.account(run(hi20_start=29), CHAINS, {"high": 6 * MS}, WCETS,
                                              {0: [(25 * MS, 29 * MS)]}))["chains"]
    over_bound = Finding("high", 20 * MS, 10, bound_ns=11 * MS, exceeds_bound=True)
    over_sim = Finding("high", 14 * MS, 10, simulated_wcrt_ns=6 * MS, exceeds_simulation=True)
    acc.attribute([over_bound, over_sim], js)
    assert over_bound.causes == ["accounted: of the 1 instances above the bound, 1 a callback over its WCET (lo_sub up to "
                                 "20.00 ms of CPU, WCET 10.00 ms)"]
    assert over_sim.causes == ["accounted: of the 1 instances above the simulated worst case, 1 had a platform blackout in "
                               "their busy window"]
    assert "cause not identified" not in over_sim.text()


def test_the_benchmarks_verdict_names_its_accounting_instead_of_no_cause():
    from chainrt import verdict
    counts = {"above": 3, "platform": 2, "overrun": 0, "unexplained": 1}
    none = {k: 0 for k in counts}
    cfg = {"runtime_chains": {"hot_path": {"wcrt_ns": 30 * MS}}, "analysis": {"hot_path_bound_ns": 20 * MS},
           "simulated": {}, "accounting": {"chains": {"hot_path_front": counts, "hot_path_rear": counts,
                                                      "behavior_planner": none}}}
    lines = verdict.bench_findings({"configs": {"picas-single": cfg}, "rt_priority": 10})
    assert len(lines) == 1 and "cause not identified" not in lines[0]
    assert "accounted: of the 6 instances above the bound, 4 had a platform blackout in their busy window, 2 unexplained" in lines[0]
    del cfg["accounting"]
    assert "cause not identified" in verdict.bench_findings({"configs": {"picas-single": cfg}, "rt_priority": 10})[0]


def test_instances_the_trace_no_longer_held_are_said():
    js = acc.to_json(acc.account(run(), CHAINS, BOUNDS, WCETS, {0: []}))
    assert acc.coverage_notes(js, {"high": {"instances": 10}, "low": {"instances": 1}}) == []
    assert acc.coverage_notes(js, {"high": {"instances": 12}}) == [
        "chain high: 10 of its 12 instances were accounted (the dispatch trace keeps the latest 65,536 executions "
        "per executor)"]


def test_the_benchmarks_trace_records_carry_their_cpu_time():
    from chainrt.reference_system import accounting as bench
    got = bench.executions([["hot_path", "A/timer", 0, 10, 30, -1, 10, 18], ["other", "B/x", 1, 40, 50, -1, 0, 9]])
    assert got == [Execution("A/timer", "hot_path", 0, 10, 30, 18, 10), Execution("B/x", "other", 1, 40, 50, 9, None)]


def test_the_benchmarks_trace_records_carry_the_threads_late_wake_up():
    from chainrt.reference_system import accounting as bench
    got = bench.executions([["hot_path", "A/timer", 0, 10, 30, -1, 10, 18, 5, 9], ["other", "B/x", 1, 40, 50, -1, 0, 9, 0, 0]])
    assert [g.slept for g in got] == [(5, 9), None]


def late(cb: str, start_ms: float, release_ms: float, slept_ms: tuple[float, float], executor: str = "main") -> Execution:
    e = ex(cb, start_ms, 2.5, release_ms)
    return Execution(e.callback, executor, 0, e.start, e.finish, e.cpu, e.release,
                     (int(slept_ms[0] * MS), int(slept_ms[1] * MS)))


def test_a_real_time_threads_late_wake_up_is_a_platform_blackout_of_its_cpu():
    # the high timer released at 20 ms; its thread, asleep until then, ran only at 24 ms (lo_sub
    # ended at 19 ms: no model thread ran meanwhile)
    execs = [e for e in run(lo_sub_wall=4) if not (e.release == 20 * MS and e.callback.startswith("hi"))]
    execs += [late("hi_pub", 24, 20, (20, 24)), ex("hi_sub", 26.5, 2.5, 20)]
    assert acc.late_wakeups(execs, None, {1}) == {1: [(20 * MS, 24 * MS)]}
    # the accounting then calls the instance's 9 ms > a 7 ms bound the platform's
    got = account(execs, acc.platform_blackouts({1: []}, {}, set(), acc.late_wakeups(execs, None, {1})),
                  bounds={"high": 7 * MS, "low": 40 * MS})["high"]
    assert (got["above"], got["platform"], got["unexplained"]) == (1, 1, 0)
    # without it, the same instance is unexplained
    got = account(execs, {1: []}, bounds={"high": 7 * MS, "low": 40 * MS})["high"]
    assert (got["above"], got["unexplained"]) == (1, 1)


def test_a_late_wake_up_while_a_model_thread_ran_or_below_the_threshold_or_on_an_unknown_cpu_is_not_the_platforms():
    base = [e for e in run() if not (e.release == 20 * MS and e.callback.startswith("hi"))]
    # lo_sub ran 15-25 ms: the high thread's wake-up in 20-24 ms may have waited for it
    assert acc.late_wakeups(base + [late("hi_pub", 25, 20, (20, 24))], None, {1}) == {}
    # below the probe's threshold (150 µs): every wake-up's latency
    quiet = [e for e in base if e.callback != "lo_sub"]
    assert acc.late_wakeups(quiet + [late("hi_pub", 20.2, 20, (20, 20.1))], None, {1}) == {}
    # the executor's threads not pinned to one core and the run not on one CPU: no CPU to charge
    assert acc.late_wakeups(quiet + [late("hi_pub", 24, 20, (20, 24))], None, None) == {}
    # pinned through the model: that core
    assert acc.late_wakeups(quiet + [late("hi_pub", 24, 20, (20, 24))], {"main": {3}}, None) == {3: [(20 * MS, 24 * MS)]}


def test_a_late_wake_up_the_probe_saw_a_model_thread_hold_is_the_models():
    wake = {1: [(20 * MS, 24 * MS)]}
    holds = {1: [(21 * MS, 21 * MS, 4242, "model-thread", 0)]}  # the probe woken at 21 ms, 4242 held the CPU
    assert acc.platform_blackouts({1: []}, holds, {4242}, wake) == {1: [(20 * MS, 21 * MS)]}
    assert acc.platform_blackouts({1: []}, holds, {1}, wake) == {1: [(20 * MS, 24 * MS)]}


def test_read_traces_keep_the_late_wake_up(tmp_path):
    (tmp_path / "p.jsonl").write_text(
        '{"executor": "main", "callback": "hi_pub", "thread": 0, "release": 100, "start": 400, "finish": 500, '
        '"cpu": 90, "deadline": -1, "slept_until": 100, "woke": 350}\n'
        '{"executor": "main", "callback": "hi_sub", "thread": 0, "release": 100, "start": 500, "finish": 600, '
        '"cpu": 90, "deadline": -1}\n')
    (tmp_path / "p.jsonl.start").write_text("1000\n")
    got = acc.read_traces(tmp_path)
    assert [g.slept for g in got] == [(1100, 1350), None]


def test_a_server_mode_request_ends_the_instance_at_the_chains_last_piece_not_at_the_request(tmp_path):
    """The accelerator experiment's server mode: the detector runs as two pieces, ``detect`` up
    to its device request (1 ms) and ``detect#1`` after the segment (2 ms), both traced with the
    instance's release. The instance ends with detect#1, and each piece has its own WCET."""
    from chainrt.experiments.accelerator import scenario_yaml
    from chainrt.model import load_model_from_string
    model = load_model_from_string(scenario_yaml("server"), "server.yaml")
    mi = acc.model_inputs(model)
    assert mi["chains"]["perception"] == ["detect", "detect#1"]
    assert (mi["wcets"]["detect"], mi["wcets"]["detect#1"]) == (1 * MS, 2 * MS)

    def rec(cb, release_ms, start_ms, wall_ms, cpu_ms):
        return {"executor": "perception", "callback": cb, "thread": 0, "release": int(release_ms * MS),
                "start": int(start_ms * MS), "finish": int((start_ms + wall_ms) * MS), "cpu": int(cpu_ms * MS),
                "deadline": -1}
    recs = []
    for k in range(5):  # every 100 ms: 1 ms to the request, the device 26 ms, then 2 ms (4 ms of CPU in the last)
        r = 5 + 100 * k
        recs += [rec("detect", r, r, 1, 1),
                 {"device": "gpu", "callback": "detect", "segment": 0, "issued": int((r + 1) * MS),
                  "start": int((r + 1) * MS), "finish": int((r + 27) * MS)},
                 rec("detect#1", r, r + 27, 2 if k < 4 else 4, 2 if k < 4 else 4)]
    (tmp_path / "app.jsonl").write_text("\n".join(json.dumps(x) for x in recs) + "\n")
    (tmp_path / "app.jsonl.start").write_text("0\n")
    got = acc.after_run(model, tmp_path, None, "not measured", {"perception": 29 * MS, "planning": None,
                                                                 "mapping": None}, {}, set())
    high = got["chains"]["perception"]
    assert (high["raw"]["instances"], high["raw"]["max_ns"], high["raw"]["min_ns"]) == (5, 31 * MS, 29 * MS)
    assert (high["above"], high["overrun"]) == (1, 1)
    assert high["cases"][0]["overruns"][0]["callback"] == "detect#1"


def test_on_two_cpus_a_thread_being_woken_beside_a_busy_one_is_the_runtimes_time():
    """One executor, two threads on two CPUs (edf-mt unpinned): thread 1 runs lo_pub all along;
    hi_sub waits 0.4 ms after hi_pub on thread 0 (its wake-up and the delivery), or runs 0.4 ms
    past its CPU time. A thread and a CPU were there for it: the runtime's own time, not work of
    the other thread — which, with the CPUs not known (one assumed), could have taken its CPU."""
    pubs = {"hi_sub": {"hi_pub"}, "lo_sub": {"lo_pub"}}
    lo = Execution("lo_pub", "main", 1, 0, 10 * MS, 10 * MS, 0)
    for late_start, wall in ((0.4, 2.5), (0.0, 2.9)):
        runs = [Execution("hi_pub", "main", 0, 0, int(2.5 * MS), int(2.5 * MS), 0),
                Execution("hi_sub", "main", 0, int((2.5 + late_start) * MS), int((2.5 + late_start + wall) * MS),
                          int(2.5 * MS), 0), lo]
        two = acc.account(runs, CHAINS, {"high": 5 * MS}, WCETS, {0: []}, simulated=True, chain_ncpu={"high": 2},
                          publishers=pubs)["chains"]["high"]
        assert (two["above"], two["runtime"], two["unexplained"]) == (1, 1, 0), late_start
        assert two["cases"][0].idle_ns + two["cases"][0].excess_ns == int(0.4 * MS)
        one = acc.account(runs, CHAINS, {"high": 5 * MS}, WCETS, {0: []}, simulated=True,
                          publishers=pubs)["chains"]["high"]
        assert (one["runtime"], one["unexplained"]) == (0, 1), late_start


def test_a_fusions_wait_for_its_other_input_is_model_work_not_the_runtimes():
    """hi_sub takes what lo_sub publishes (a fusion's trigger): from hi_pub's end to lo_sub's the
    instance waits for model work on thread 1, though thread 0 is free — not the runtime's."""
    pubs = {"hi_sub": {"lo_sub"}}
    runs = [Execution("hi_pub", "main", 0, 0, int(2.5 * MS), int(2.5 * MS), 0),
            Execution("lo_sub", "main", 1, 0, 6 * MS, 6 * MS, None),
            Execution("hi_sub", "main", 0, 6 * MS, int(8.5 * MS), int(2.5 * MS), 0)]
    high = acc.account(runs, CHAINS, {"high": 5 * MS}, WCETS, {0: []}, simulated=True, chain_ncpu={"high": 2},
                       publishers=pubs)["chains"]["high"]
    assert (high["runtime"], high["unexplained"], high["cases"][0].idle_ns) == (0, 1, 0)
    from pathlib import Path

    from chainrt.model import load_model
    mi = acc.model_inputs(load_model(str(Path(__file__).resolve().parents[2] / "examples" / "two_chains.yaml")))
    assert mi["publishers"] == {"hi_sub": {"hi_pub"}, "lo_sub": {"lo_pub"}} and mi["chain_ncpu"] == {"high": 1, "low": 1}


def test_a_cache_only_run_of_a_fused_callback_counts_beyond_the_bcet_the_simulation_charges_it():
    """fa and fb form an implicit fusion set (the simulator charges a member's run that does not
    complete the set its BCET, 0.02 ms). fa runs between hi_pub and hi_sub for 0.5 ms of CPU, within
    its 2 ms WCET: with fb not yet fresh the simulation charged it 0.02 ms, so 0.48 ms of the
    5.5 ms response is beyond the simulation's trajectory; against a simulated worst case of
    5.1 ms the rest (5.02 ms) is within it. When fb finished before fa started, fa completes the
    set and works: the simulation charged it up to its WCET, and the instance stays unexplained."""
    wcets = dict(WCETS, fa=2 * MS, fb=2 * MS)
    sets = [{"fa": int(0.02 * MS), "fb": int(0.02 * MS)}]

    def runs(fb_before: bool) -> list[Execution]:
        fb = [Execution("fb", "main", 0, 0, int(0.5 * MS), int(0.5 * MS), None)] if fb_before else []
        start = 0.5 if fb_before else 0.0
        return fb + [Execution("hi_pub", "main", 0, int(start * MS), int((start + 2.5) * MS), int(2.5 * MS), 0),
                     Execution("fa", "main", 0, int((start + 2.5) * MS), int((start + 3) * MS), int(0.5 * MS), None),
                     Execution("hi_sub", "main", 0, int((start + 3) * MS), int((start + 5.5) * MS), int(2.5 * MS), 0)]

    def high(executions, bound_ms: float, cache_only=sets):
        return acc.account(executions, CHAINS, {"high": int(bound_ms * MS)}, wcets, {0: []}, chain_cpus={"high": {0}},
                           simulated=True, cache_only=cache_only)["chains"]["high"]
    got = high(runs(False), 5.1)
    assert (got["above"], got["runtime"], got["unexplained"]) == (1, 1, 0)
    case = got["cases"][0]
    assert case.excess_ns == case.cache_only_ns == int(0.48 * MS)
    assert "0.48 ms of it cache-only runs of fused callbacks beyond the BCET the simulation charges them" in case.text()
    # not a fusion set (what the accounting did before): fa's 0.5 ms is the model's work
    assert (high(runs(False), 5.1, cache_only=None)["unexplained"], high(runs(False), 5.1, [])["runtime"]) == (1, 0)
    # fa completes the set: a working run, charged up to its WCET
    assert high(runs(True), 5.1)["unexplained"] == 1
    # the extra time does not cover the excess: it stays unexplained, the cache-only part named
    low = high(runs(False), 4.9)
    assert (low["runtime"], low["unexplained"]) == (0, 1)
    assert "0.48 ms of it cache-only runs" in low["cases"][0].text()


def test_the_cache_only_rule_is_the_simulators():
    """A run of a fusion member is cache-only until every other member has finished since the set
    last published; the charges are the simulator's (each member's BCET)."""
    sets = [{"a": 10, "b": 20}]
    xs = [Execution(cb, "e", 0, s, s + 5, 5, None) for cb, s in (("a", 0), ("a", 10), ("b", 20), ("b", 30), ("a", 40))]
    got = acc.cache_only_runs(xs, sets)
    # a@0, a@10 (b not fresh), b@20 completes (a fresh), b@30 (a not fresh again), a@40 completes
    assert got == {id(xs[0]): 10, id(xs[1]): 10, id(xs[3]): 20}
    from pathlib import Path

    from chainrt.model import load_model
    root = Path(__file__).resolve().parents[2]
    model = load_model(str(root / "examples" / "autoware_reference.yaml"))
    charges = acc.model_inputs(model)["cache_only"]
    assert charges and all(len(s) >= 2 for s in charges)
    bcet = {c.name: min(c.bcet if c.bcet is not None else c.wcet, c.wcet) for c in model.callbacks}
    assert all(v == bcet[k] for s in charges for k, v in s.items())


def test_dispatch_gaps_count_the_backlogged_gaps_and_leave_the_idle_ones_out():
    us = 1000
    xs = [
        # thread 0: hi_pub released at 0 runs 0..2.5 ms; hi_sub is ready when it finishes and
        # starts 30 us later: backlogged, the executor's own 30 us
        Execution("hi_pub", "main", 0, 0, int(2.5 * MS), 0, 0),
        Execution("hi_sub", "main", 0, int(2.5 * MS) + 30 * us, 5 * MS, 0, 0),
        # lo_pub released at 4 ms (before hi_sub finished): backlogged, 12 us
        Execution("lo_pub", "main", 0, 5 * MS + 12 * us, 6 * MS, 0, 4 * MS),
        # hi_pub released at 20 ms, long after the thread went idle at 6 ms: idle, not counted
        Execution("hi_pub", "main", 0, 20 * MS + 50 * us, 21 * MS, 0, 20 * MS),
        # a callback whose readiness the records do not show (no release): never backlogged
        Execution("other", "main", 0, 21 * MS + 5 * us, 22 * MS, 0, None),
        # another thread of the executor keeps its own order: its gap is its own
        Execution("lo_pub", "main", 1, 0, 1 * MS, 0, 0),
        Execution("lo_sub", "main", 1, 1 * MS + 7 * us, 2 * MS, 0, 0),
        Execution("lo_pub", "side", 0, 0, 1 * MS, 0, 0),
        Execution("lo_sub", "side", 0, 1 * MS + 9 * us, 2 * MS, 0, 0),
    ]
    gaps = acc.dispatch_gaps(xs, CHAINS)
    assert sorted(gaps["main"]) == [7 * us, 12 * us, 30 * us]
    assert gaps["side"] == [9 * us]

    class Ex:  # the model's executors (accounting reads name and dispatch_overhead)
        def __init__(self, name, o):
            self.name, self.dispatch_overhead = name, o

    class Model:
        executors = [Ex("main", 20 * us), Ex("side", 10 * us)]
    notes = []
    got = acc.dispatch_overhead_json(Model, gaps, notes)
    assert got["main"] == {"dispatches": 3, "max_ns": 30 * us, "p99_ns": 30 * us, "model_ns": 20 * us}
    assert got["side"]["max_ns"] == 9 * us
    (note,) = notes  # only main's measured maximum is above its model's overhead
    assert note.startswith("executor main:") and "30.0 us" in note


def test_a_dispatch_gap_a_platform_blackout_overlaps_is_the_platforms():
    xs = [Execution("hi_pub", "main", 0, 0, 2 * MS, 0, 0), Execution("hi_sub", "main", 0, 3 * MS, 4 * MS, 0, 0),
          Execution("lo_pub", "main", 0, 4 * MS + 10_000, 5 * MS, 0, 3 * MS)]
    assert sorted(acc.dispatch_gaps(xs, CHAINS)["main"]) == [10_000, MS]
    assert acc.dispatch_gaps(xs, CHAINS, [(2 * MS + 100_000, 2 * MS + 900_000)])["main"] == [10_000]


def test_the_run_report_shows_each_executors_measured_dispatch_overhead_beside_the_models():
    acc_json = {"chains": {}, "dispatch_overhead": {"main": {"dispatches": 12, "max_ns": 41_000, "p99_ns": 30_000,
                                                             "model_ns": 39_000}}}
    (line,) = [ln for ln in acc.report_lines(acc_json) if "own time per dispatch" in ln]
    assert "max 41.0 us" in line and "p99 30.0 us" in line and "dispatch_overhead 39.0 us" in line


def test_irq_time_accounting_is_read_from_the_kernels_configuration(tmp_path):
    import gzip
    on, off, gz = tmp_path / "on", tmp_path / "off", tmp_path / "config.gz"
    on.write_text("CONFIG_HZ=250\nCONFIG_IRQ_TIME_ACCOUNTING=y\n")
    off.write_text("CONFIG_HZ=250\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n")
    gz.write_bytes(gzip.compress(on.read_bytes()))
    assert acc.irq_time_accounting((on,)) is True
    assert acc.irq_time_accounting((off,)) is False
    assert acc.irq_time_accounting((gz,)) is True
    # the first readable one decides; a broken or missing file is skipped; none: unknown
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    assert acc.irq_time_accounting((tmp_path / "missing", tmp_path / "bad.gz", off)) is False
    assert acc.irq_time_accounting((tmp_path / "missing",)) is None


def test_overruns_on_a_kernel_without_irq_time_accounting_are_said_to_include_interrupts():
    note = acc.irq_note(3, False)
    assert note.startswith("3 instance(s) had a callback over its WCET") and "CONFIG_IRQ_TIME_ACCOUNTING" in note
    assert acc.irq_note(0, False) is None and acc.irq_note(3, True) is None and acc.irq_note(3, None) is None


def test_the_irq_note_counts_an_instance_above_both_the_bound_and_the_simulation_once(monkeypatch):
    monkeypatch.setattr(acc, "irq_time_accounting", lambda: False)
    bound = {"a": {"overrun": 2}, "b": {"overrun": 1}}
    simulated = {"a": {"overrun": 3}, "b": {"overrun": 1, "unexplained_cases": []}}
    assert acc.irq_note_for(bound, simulated).startswith("4 instance(s)")
    assert acc.irq_note_for({"a": {"overrun": 0}}) is None and acc.irq_note_for() is None


def test_unpinned_threads_of_one_priority_in_different_executors_are_named_as_swapped_by_the_probe():
    from chainrt.model import load_model_from_string

    def model(cores: int, pins: tuple[str, str, str], prios: tuple[int, int, int]) -> str:
        execs = "\n".join(f"  - {{name: {n}, host: h, policy: ros-default, threads: [{{name: t, priority: {p}{c}}}]}}"
                          for n, p, c in zip(("front", "rear", "plan"), prios, pins))
        return (f"name: m\nhosts: [{{name: h, cores: {cores}}}]\nexecutors:\n{execs}\n"
                "nodes: [{name: a, executor: front}, {name: b, executor: rear}, {name: c, executor: plan}]\n"
                "callbacks:\n"
                "  - {name: x, kind: timer, node: a, period: 10ms, wcet: 1ms}\n"
                "  - {name: y, kind: timer, node: b, period: 10ms, wcet: 1ms}\n"
                "  - {name: z, kind: timer, node: c, period: 10ms, wcet: 1ms}\n"
                "chains: [{name: X, callbacks: [x], deadline: 10ms}]\n")
    note = acc.swapped_by_probe(load_model_from_string(model(2, ("", "", ""), (11, 11, 40)), "m.yaml"))
    assert note is not None and "front/t, rear/t" in note and "plan/t" not in note and "--pin-core" in note
    pinned = (", cores: [0]", ", cores: [1]", "")
    assert acc.swapped_by_probe(load_model_from_string(model(2, pinned, (11, 11, 40)), "m.yaml")) is None
    assert acc.swapped_by_probe(load_model_from_string(model(1, ("", "", ""), (11, 11, 40)), "m.yaml")) is None
    assert acc.swapped_by_probe(load_model_from_string(model(2, ("", "", ""), (11, 12, 40)), "m.yaml")) is None
