"""The LaME real experiments' accounting, from a recorded run: the executions one run recorded (in
the format the generated rclcpp nodes and chainrt-run write with --trace) and the platform
probe's blackouts go through the same path as a real run (lame_real.real_config_run, with the
processes' launch and the probe replaced by the recording), and the report's accounting lines
say per cause how many instances were above LaME's bound and the worst response raw and over
the platform-free instances. No process runs, no timing is measured."""

from __future__ import annotations

import contextlib
import json
from types import SimpleNamespace

from chainrt.experiments import lame_overload as lo
from chainrt.experiments import lame_real as lr

MS = 1_000_000
ZERO = 50_000 * MS        # the run's start on CLOCK_MONOTONIC
WARMUP_S = 0.5
BOUND = 4 * MS            # LaME's bound of chain "rt" in this test
DOC = {
    "chainrt": 1, "name": "recorded",
    "hosts": [{"name": "host0", "cores": 2}],
    "executors": [{"name": "main", "host": "host0", "policy": "fp", "threads": [{"name": "t0"}]}],
    "nodes": [{"name": "src", "executor": "main"}, {"name": "snk", "executor": "main"}],
    "topics": [{"name": "data", "size": "4KiB"}],
    "callbacks": [
        {"name": "src/timer", "kind": "timer", "node": "src", "period": "100ms", "wcet": "1ms", "priority": 2,
         "publishes": ["data"]},
        {"name": "snk/data", "kind": "subscription", "node": "snk", "topic": "data", "wcet": "2ms", "priority": 3}],
    "chains": [{"name": "rt", "callbacks": ["src/timer", "snk/data"], "deadline": "100ms", "class": "rt",
                "criticality": 1}],
}


def _instance(k: int, sink_start_ms: float, sink_cpu_ms: float, sink_finish_ms: float) -> list[dict]:
    """One chain instance released at 1 s + k x 100 ms: the timer [r, r + 1 ms], the sink as given
    (ms after the release); times in ns since the run's start, as the traces have them."""
    r = 1000 * MS + k * 100 * MS
    return [{"callback": "src/timer", "executor": "main", "thread": 11, "start": r, "finish": r + MS, "cpu": MS,
             "release": r},
            {"callback": "snk/data", "executor": "main", "thread": 12, "start": r + int(sink_start_ms * MS),
             "finish": r + int(sink_finish_ms * MS), "cpu": int(sink_cpu_ms * MS), "release": r}]


# instance 0 and 4: 3 ms, as the model says; 1: the sink burns 2 x its WCET (5 ms); 2: a 5 ms
# platform blackout while it waits (8 ms); 3: 6 ms with neither (the sink starts late)
RECORDED = (_instance(0, 1, 2, 3) + _instance(1, 1, 4, 5) + _instance(2, 1, 2, 8) + _instance(3, 4, 2, 6)
            + _instance(4, 1, 2, 3))
BLACKOUT = (ZERO + 1200 * MS + int(1.5 * MS), ZERO + 1200 * MS + int(6.5 * MS))  # inside instance 2


def _replay(monkeypatch, blackouts: dict):
    """lame_real's launch and probe replaced by the recording: the launch writes the recorded
    trace where the run's processes would, the probe hands over the recorded blackouts."""
    def launch(config, path, seconds, warmup, traces, cores, controller_ns, scale):
        with open(f"{traces}/nodes.jsonl", "w") as f:
            f.writelines(json.dumps(x) + "\n" for x in RECORDED)
        with open(f"{traces}/nodes.jsonl.start", "w") as f:
            f.write(f"{ZERO}\n")
        return {"warnings": [], "lame_controller": [], "model_tids": [], "report": {}}

    @contextlib.contextmanager
    def probe(seconds, out, held=None):
        yield
        out["longest_blackout_ms"] = max(((e - b) / 1e6 for iv in blackouts.values() for b, e in iv), default=0.0)
        if held is not None:
            held["probe"] = SimpleNamespace(blackouts=blackouts, holds={}, pids=set(), attribution_error=None,
                                            dropped=0)

    monkeypatch.setattr(lr, "_launch", launch)
    monkeypatch.setattr(lr, "platform_probe", probe)


def _run(tmp_path, bound: int) -> dict:
    return lr.real_config_run("lame", DOC, str(tmp_path), "0", 1.0, WARMUP_S, cores=2, lock=None, probe=True,
                              bounds={"rt": bound})


def test_recorded_run_accounted_by_cause(tmp_path, monkeypatch):
    _replay(monkeypatch, {0: [BLACKOUT]})
    r = _run(tmp_path, BOUND)
    assert r["chains"]["rt"]["instances"] == 5 and r["chains"]["rt"]["wcrt_ns"] == 8 * MS
    row = r["accounting"]["chains"]["rt"]
    assert (row["above"], row["platform"], row["overrun"], row["unexplained"]) == (3, 1, 1, 1)
    overrun = next(c for c in row["cases"] if c["cause"] == "overrun")
    assert overrun["overruns"][0]["callback"] == "snk/data" and "snk/data ran 4.00 ms" in overrun["text"]
    assert row["raw"]["max_ns"] == 8 * MS and row["platform_free"]["max_ns"] == 6 * MS
    summary = lr.accounting_summary([r], ["rt"])
    assert summary["worst_raw_ms"] == [8.0] and summary["worst_free_ms"] == [6.0]
    assert summary["free_instances"] == [4] and summary["instances"] == [5]
    lines = "\n".join(lo.accounting_lines({"lame": summary, "default": summary}))
    assert "lame        above 3: 1 / 1 / 1; worst raw 8.0 ms, platform-free 6.0 ms (4 of 5 instances" in lines
    assert "default     above no bound" in lines
    # the recorded trace is kept beside the experiment's outputs
    assert (tmp_path / "lame_0.nodes.trace.jsonl").read_text().count("\n") == len(RECORDED)


def test_bound_lowered_by_30_percent_leaves_unexplained_instances(tmp_path, monkeypatch):
    _replay(monkeypatch, {0: [BLACKOUT]})
    row = _run(tmp_path, int(0.7 * BOUND))["accounting"]["chains"]["rt"]
    # the instances that met the model (3 ms) are now above the bound with no cause
    assert row["unexplained"] == 3 and row["above"] == 5


def test_without_the_probe_nothing_is_platform(tmp_path, monkeypatch):
    _replay(monkeypatch, {})
    monkeypatch.setattr(lr, "platform_probe", lambda *a, **k: contextlib.nullcontext())
    r = lr.real_config_run("lame", DOC, str(tmp_path), "0", 1.0, WARMUP_S, cores=2, lock=None, probe=False,
                           bounds={"rt": BOUND})
    row = r["accounting"]["chains"]["rt"]
    assert row["platform"] == 0 and row["unexplained"] == 2 and row["platform_free"] is None
    summary = lr.accounting_summary([r], ["rt"])
    assert summary["worst_free_ms"] == [None]
    assert any("platform not measured" in n for n in summary["notes"])


def test_lame_busy_windows_are_per_thread():
    """Under overload the BE thread is never idle: as one executor its backlog reaches the RT
    instance's busy window back to a blackout long before the instance's release; with each
    thread an executor of its own (LaME's thread classes) the RT instance is platform-free."""
    from chainrt import accounting

    be = [accounting.Execution("be/work", "lame", 2, t * MS, (t + 10) * MS, 10 * MS, None) for t in range(0, 200, 10)]
    rt = [accounting.Execution("src/timer", "lame", 1, 150 * MS, 151 * MS, MS, 150 * MS),
          accounting.Execution("snk/data", "lame", 1, 151 * MS, 153 * MS, 2 * MS, 150 * MS)]
    chains = {"rt": ["src/timer", "snk/data"]}
    blackouts = {0: [(20 * MS, 25 * MS)]}

    def free(executions):
        acc = accounting.account(executions, chains, {"rt": None}, {"be/work": 10 * MS, "src/timer": MS,
                                                                    "snk/data": 2 * MS}, blackouts)
        return acc["chains"]["rt"]["platform_free"]["instances"]
    assert free(be + rt) == 0
    assert free(lr.per_thread(be + rt)) == 1
