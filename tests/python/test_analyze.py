"""`chainrt analyze` and the analysis bindings: table and JSON layout, exit codes (0
schedulable, 2 not, 1 error with file:line diagnostics), default analysis per policy, and
property tests of the analyses on generated systems (monotonicity, determinism)."""

from __future__ import annotations

import json
import os
import pathlib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import chainrt
from chainrt import _core
from chainrt.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
TWO_CHAINS = ROOT / "examples" / "two_chains.yaml"
CASE2 = ROOT / "examples" / "case_study_2.yaml"
MS = 1_000_000


def test_json_layout_and_known_answer(capsys):
    assert main(["analyze", str(TWO_CHAINS), "--analysis", "fp-mt", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["analysis"] == "fp-mt" and out["schedulable"] is True
    assert set(out["chains"]) == {"high", "low"}
    high = out["chains"]["high"]
    assert set(high) == {"wcrt_bound_ns", "bcrt_bound_ns", "deadline_ns", "slack_ns", "schedulable", "reason"}
    assert high["wcrt_bound_ns"] == 15 * MS  # hand-computed in tests/cpp/analysis/test_analyses.cpp
    assert high["slack_ns"] == 5 * MS and high["deadline_ns"] == 20 * MS
    assert out["chains"]["low"]["wcrt_bound_ns"] == 30 * MS


def test_default_analysis_is_named_and_table_printed(capsys):
    assert main(["analyze", str(TWO_CHAINS)]) == 0  # policy fp -> fp-mt
    out = capsys.readouterr().out
    assert "analysis fp-mt (chosen from the executors' policy)" in out
    assert "high" in out and "15.000" in out and "schedulable" in out


def test_unschedulable_exits_2(capsys):
    # Table III on two threads: C1 can be blocked by C2 for 60 ms (R = 110 ms > D = 100 ms).
    assert main(["analyze", str(CASE2), "--analysis", "fp-mt"]) == 2
    assert "NOT schedulable" in capsys.readouterr().out


def test_default_multithreaded_executor_has_no_verdict(capsys):
    # case_study_2 uses the default executor with two threads: refuted analyses are not shipped.
    assert main(["analyze", str(CASE2)]) == 1
    assert "Teper" in capsys.readouterr().err


def test_model_error_prints_file_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("chainrt: 1\ncallbacks:\n  - {name: a, kind: timer, node: n, wcet: -1ms}\n")
    assert main(["analyze", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml:" in err


def test_not_applicable_is_an_error(capsys):
    assert main(["analyze", str(CASE2), "--analysis", "ros-default-st"]) == 1
    assert "single-threaded" in capsys.readouterr().err


def test_list(capsys):
    assert main(["analyze", str(TWO_CHAINS), "--list"]) == 0
    out = capsys.readouterr().out
    for n in ("edf-mt", "fp-mt", "picas-st", "cros-rt", "ros-default-st"):
        assert n in out


def test_generator_is_reproducible():
    a = _core.edf_paper_system(seed=3)
    b = _core.edf_paper_system(seed=3)
    assert a.to_yaml() == b.to_yaml() if hasattr(a, "to_yaml") else a == b
    assert len(_core.uunifast_discard(5, 2.0, seed=1)) == 5
    assert abs(sum(_core.randfixedsum(6, 2.4, seed=1)) - 2.4) < 1e-9


def bounds(model, analysis):
    r = _core._analyze(model, analysis)
    return {k: v["wcrt_bound_ns"] for k, v in r["chains"].items()}


def le(a, b):
    """a <= b where None means 'no bound' (infinite)."""
    if b is None:
        return True
    if a is None:
        return False
    return a <= b


# CI runs few examples; for a long local run: CHAINRT_PROPERTY_EXAMPLES=2000 pytest ...
EXAMPLES = int(os.environ.get("CHAINRT_PROPERTY_EXAMPLES", "40"))

MULTI = ["edf-mt", "fp-mt"]
SINGLE = ["picas-st", "ros-default-st", "cros-rt"]


def system(seed, u):
    m = _core.edf_paper_system(m=2, n=4, b=3, u_norm=u, g=1, alpha=0.3, seed=seed)
    return m, _core.partition_single_threaded(m, "picas")


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 10_000), u=st.sampled_from([0.1, 0.2, 0.3, 0.4]), pick=st.integers(0, 1000),
       grow=st.integers(1, 5))
# CI, clean clone: fp-mt chain0 23000001 -> 23000000 ns (the fixed-point search returned a
# non-least point; tests/cpp/analysis/test_sustainability.cpp has it by hand).
@example(seed=631, u=0.3, pick=313, grow=1)
def test_bound_never_decreases_when_a_wcet_grows(seed, u, pick, grow):
    multi, single = system(seed, u)
    for model, names in ((multi, MULTI), (single, SINGLE)):
        before = {a: bounds(model, a) for a in names}
        cb = model.callbacks[pick % len(model.callbacks)]
        cb.wcet = cb.wcet + grow * MS
        chainrt.validate(model)
        for a in names:
            after = bounds(model, a)
            for chain, b in before[a].items():
                assert le(b, after[chain]), (a, chain, b, after[chain])


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 10_000), u=st.sampled_from([0.1, 0.2, 0.3]), pick=st.integers(0, 1000),
       shrink=st.integers(1, 20))
def test_bound_never_decreases_when_a_period_shrinks(seed, u, pick, shrink):
    multi, single = system(seed, u)
    for model, names in ((multi, MULTI), (single, SINGLE)):
        before = {a: bounds(model, a) for a in names}
        chain = model.chains[pick % len(model.chains)]
        timer = next(cb for cb in model.callbacks if cb.name == chain.callbacks[0])
        new_t = max(timer.period - shrink * MS, 1 * MS)
        wcet_sum = sum(cb.wcet for cb in model.callbacks if cb.name in chain.callbacks)
        if new_t < wcet_sum:
            return
        timer.period = new_t
        chain.period = new_t
        old_deadline = chain.deadline
        chain.deadline = min(chain.deadline, new_t)  # constrained deadlines
        deadline_changed = chain.deadline != old_deadline
        chainrt.validate(model)
        for a in names:
            after = bounds(model, a)
            for c, b in before[a].items():
                if a == "edf-mt" and deadline_changed:
                    continue  # EDF priorities depend on deadlines; only the period is the property
                assert le(b, after[c]), (a, c, b, after[c])


def reserved(budget_ms):
    return f"""chainrt: 1
name: r
hosts: [{{name: h, cores: 2}}]
executors:
  - name: e
    host: h
    policy: fp
    threads:
      - {{name: t0, cores: [0], reservation: {{budget: {budget_ms}ms, period: 10ms}}}}
      - {{name: t1, cores: [1], reservation: {{budget: {budget_ms}ms, period: 10ms}}}}
nodes: [{{name: n, executor: e}}]
callback_groups: [{{name: r, type: reentrant, node: n}}]
topics: [{{name: x}}, {{name: y}}]
callbacks:
  - {{name: a1, kind: timer, node: n, group: r, period: 200ms, wcet: 3ms, publishes: [x], priority: 10}}
  - {{name: a2, kind: subscription, node: n, group: r, topic: x, wcet: 4ms, priority: 11}}
  - {{name: b1, kind: timer, node: n, group: r, period: 300ms, wcet: 5ms, publishes: [y], priority: 5}}
  - {{name: b2, kind: subscription, node: n, group: r, topic: y, wcet: 6ms, priority: 6}}
chains:
  - {{name: A, callbacks: [a1, a2], priority: 2}}
  - {{name: B, callbacks: [b1, b2], priority: 1}}
"""


def test_larger_reservation_budget_never_raises_fp_mt_bound():
    prev = None
    for budget in range(2, 11):
        m = chainrt.load_model_from_string(reserved(budget), "r.yaml")
        b = bounds(m, "fp-mt")
        if prev is not None:
            for c in b:
                assert le(b[c], prev[c]), (budget, c, b[c], prev[c])
        prev = b
    assert prev["A"] is not None  # full budget: bounded


def test_results_are_deterministic():
    for seed in range(5):
        multi, single = system(seed, 0.3)
        for a in MULTI:
            assert _core._analyze(multi, a) == _core._analyze(multi, a)
        for a in SINGLE:
            assert _core._analyze(single, a) == _core._analyze(single, a)


def test_analyze_entry_point_for_other_modules():
    m = chainrt.load_model(str(TWO_CHAINS))
    assert _core.analyze(m)["analysis"] == "fp-mt"
    assert _core.analyze(m, policy="edf")["analysis"] == "edf-mt"
    assert _core.analyze(m, policy="ros-default")["analysis"] == "ros-default-st"
    assert _core.analyze(m, analysis="cros-rt")["chains"]["high"]["wcrt_bound_ns"] == 15 * MS
    with pytest.raises(ValueError):
        _core.analyze(chainrt.load_model(str(CASE2)))  # default multi-threaded executor: no analysis


CROS_TWO_EXECUTORS = """chainrt: 1
name: cros_rt_two_chains_p3
hosts: [{name: h, cores: 1}]
executors:
  - {name: hi, host: h, policy: picas, priority: 2, threads: [{name: t0, cores: [0], priority: 2}]}
  - {name: lo, host: h, policy: picas, priority: 1, threads: [{name: t0, cores: [0], priority: 1}]}
nodes: [{name: hn, executor: hi}, {name: ln, executor: lo}]
topics: [{name: hx}, {name: lx}]
callbacks:
  - {name: hp, kind: timer, node: hn, period: 20ms, wcet: 2500us, publishes: [hx], priority: 3}
  - {name: hs, kind: subscription, node: hn, topic: hx, wcet: 2500us, priority: 4}
  - {name: lp, kind: timer, node: ln, period: 200ms, wcet: 10ms, publishes: [lx], priority: 1}
  - {name: ls, kind: subscription, node: ln, topic: lx, wcet: 10ms, priority: 2}
chains:
  - {name: high, callbacks: [hp, hs], priority: 2}
  - {name: low, callbacks: [lp, ls], priority: 1}
"""


def test_cros_rt_two_chains_one_executor_per_chain():
    # CROS-RT's two-chain experiment with its principle P3 (one executor per chain, the executor
    # inheriting the chain's SCHED_FIFO priority): the high chain is never blocked, R = C = 5 ms
    # ("ideal ≈ 5 ms"); low: R = 20 + ⌈(R + 0)/20⌉·5 = 30 ms ("≈ 30 ms"). The simulator agrees.
    import json
    m = chainrt.load_model_from_string(CROS_TWO_EXECUTORS, "p3.yaml")
    r = _core.analyze(m, analysis="cros-rt")
    assert r["chains"]["high"]["wcrt_bound_ns"] == 5 * MS
    assert r["chains"]["low"]["wcrt_bound_ns"] == 30 * MS
    sim = json.loads(_core._simulate(m, 4_000_000_000, 1, "picas", None, "wcet", "fixed", False, 0, {})[0])["chains"]
    assert sim["high"]["wcrt_ns"] <= 5 * MS and sim["low"]["wcrt_ns"] <= 30 * MS
    assert sim["low"]["wcrt_ns"] >= 25 * MS  # preempted by the high chain at least once
