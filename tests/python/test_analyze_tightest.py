"""`chainrt analyze` without --analysis: per chain the smallest bound of the analyses whose
bounds hold for the executors' policy (and which one gave it); the user's robot with drifting
periods gets its finite worst case and the verdict "misses" with the blocking callback and the
time the drift takes to reach it; a simulation of it warns that it saw a small part of the
phase cycle."""

from __future__ import annotations

import json
import pathlib

from chainrt import _core
from chainrt.cli import main
from chainrt.analysis import tightest
from chainrt.model import load_model, load_model_from_string

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALIGNED = ROOT / "examples" / "robot_aligned.yaml"
DRIFTING = ROOT / "examples" / "robot_drifting.yaml"
TWO_CHAINS = ROOT / "examples" / "two_chains.yaml"


def _json(capsys, *argv) -> tuple[int, dict]:
    rc = main(["analyze", *map(str, argv), "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_aligned_robot_takes_the_exact_bound(capsys):
    rc, out = _json(capsys, ALIGNED)
    assert rc == 0 and out["schedulable"] is True
    p = out["chains"]["perception"]
    assert p["analysis"] == "sag" and p["verdict"] == "meets"
    assert 21_750_667 <= p["wcrt_bound_ns"] <= 1.05 * 21_750_667
    assert out["analyses"]["edf-mt"] == "applied" and out["analyses"]["sag"] == "applied"
    edf = _core._analyze(load_model(str(ALIGNED)), "edf-mt")["chains"]["perception"]["wcrt_bound_ns"]
    assert edf > p["wcrt_bound_ns"]  # the policy's own analysis alone: 30.042 ms
    assert main(["analyze", str(ALIGNED)]) == 0
    text = capsys.readouterr().out
    assert "bound from" in text and "sag" in text and "meets" in text


def test_each_chain_gets_the_smallest_applicable_bound():
    for path in (ALIGNED, TWO_CHAINS, ROOT / "examples" / "case_study_2.yaml"):
        model = load_model(str(path))
        try:
            out = tightest(model)
        except ValueError:
            continue
        for name, ran in out["analyses"].items():
            if ran != "applied":
                continue
            for chain, c in _core._analyze(model, name)["chains"].items():
                if c["wcrt_bound_ns"] is not None:
                    assert out["chains"][chain]["wcrt_bound_ns"] <= c["wcrt_bound_ns"], (path, name, chain)


def test_only_analyses_of_the_policy_are_candidates():
    out = tightest(load_model(str(TWO_CHAINS)))  # fp: fp-mt and sag's job-level fixed priorities
    assert "edf-mt" not in out["analyses"] and "ros-default-st" not in out["analyses"]
    assert list(out["analyses"])[0] == "fp-mt"


def test_drifting_robot_misses_with_a_finite_worst_case(capsys):
    rc, out = _json(capsys, DRIFTING)
    assert rc == 2 and out["schedulable"] is False
    p = out["chains"]["perception"]
    assert p["verdict"] == "misses" and p["analysis"] == "sag"
    assert 36_660_000 <= p["wcrt_bound_ns"] <= 1.1 * 36_660_000
    assert "'logger/log' may hold the thread" in p["reason"]
    assert "first reaching it after" in p["reason"] and "days" in p["reason"]
    logging = out["chains"]["logging"]  # from the drifting timer: bounded over every phase of its window
    assert logging["verdict"] == "meets" and logging["analysis"] == "sag" and logging["wcrt_bound_ns"] <= 200_000_000
    assert any("drifts by 2 ns every 200.000 ms" in d for d in out["phase_drift"])
    assert main(["analyze", str(DRIFTING)]) == 2
    text = capsys.readouterr().out
    assert "misses" in text and "logger/log" in text


def test_overload_stays_unbounded_and_names_the_term(capsys, tmp_path):
    over = tmp_path / "over.yaml"
    over.write_text(DRIFTING.read_text().replace("wcet: 9800us", "wcet: 29ms"))
    rc, out = _json(capsys, over)
    assert rc == 2
    p = out["chains"]["perception"]
    assert p["verdict"] == "UNBOUNDED" and p["wcrt_bound_ns"] is None
    assert "sag: analysis not applicable: overload" in p["reason"] and "utilisation 1" in p["reason"]


def test_simulate_warns_when_it_covers_little_of_the_phase_cycle(capsys):
    assert main(["simulate", str(DRIFTING), "--duration", "10s"]) == 0
    captured = capsys.readouterr()
    assert "warning" in captured.err and "phase cycle of timers 'camera/capture' and 'logger/log'" in captured.err
    assert "77.2 days" in captured.err
    assert main(["simulate", str(ALIGNED), "--duration", "10s"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_aligned_groups_and_drift():
    from chainrt.release_grid import aligned_groups, phase_drift
    assert aligned_groups(load_model(str(ALIGNED))) == [["camera/capture", "logger/log"]]
    assert sorted(map(sorted, aligned_groups(load_model(str(DRIFTING))))) == [["camera/capture"], ["logger/log"]]
    d = phase_drift(load_model(str(DRIFTING)))
    assert d == [{"timers": ["camera/capture", "logger/log"], "step_ns": 2, "every_ns": 200_000_000,
                  "cycle_ns": 33_333_333 * 200_000_000}]
    ten_and_hundred = load_model_from_string(
        ALIGNED.read_text().replace("period: 30 Hz", "period: 10ms").replace("period: 5 Hz", "period: 100ms")
        .replace("deadline: 33333333ns", "deadline: 10ms").replace("deadline: 200ms", "deadline: 100ms"), "<aligned>")
    assert phase_drift(ten_and_hundred) == []


def test_rates_given_exactly_keep_the_robots_timers_aligned(capsys, tmp_path):
    # the user's remedy for the drifting robot: the periods written as rates, released on the grid
    # at round(k·P) — commensurate, so no drift, a bound that meets, no coverage warning
    rates = tmp_path / "rates.yaml"
    rates.write_text(DRIFTING.read_text().replace("period: 33333333ns", "period: 30 Hz")
                     .replace("period: 200ms", "period: 1/5 s"))
    model = load_model(str(rates))
    assert model.callbacks[0].exact_period == (100_000_000, 3) and model.callbacks[0].period == 33_333_333
    from chainrt.release_grid import aligned_groups, phase_drift
    assert phase_drift(model) == [] and aligned_groups(model) == [["camera/capture", "logger/log"]]
    rc, out = _json(capsys, rates)
    p = out["chains"]["perception"]
    assert p["analysis"] == "sag" and p["verdict"] == "meets", p
    assert p["wcrt_bound_ns"] < 33_333_333 and "phase_drift" not in out
    assert main(["simulate", str(rates), "--duration", "10s"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_malformed_period_is_one_located_line(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(ALIGNED.read_text().replace("period: 30 Hz", "period: 1/0 s"))
    assert main(["check", str(bad)]) != 0
    err = capsys.readouterr().err
    located = [line for line in err.splitlines() if "bad.yaml:" in line]
    assert len(located) == 1 and "bad.yaml:46:63: callbacks[0].period: '1/0 s' divides by zero" in located[0], err
    assert "Traceback" not in err


def test_sag_bounds_the_reference_system_beside_its_fusion_sets_of_different_periods():
    # The reference system's NDT localizer joins the downsampled LiDAR cloud (100 ms timers) with
    # the point-cloud map (a 120 ms timer), and two sets after it join its output with other
    # timers: every input of such a set may complete it, so the fused message's jobs may not
    # exist. The hot paths do not pass those sets: on one thread sag bounds them with those jobs
    # as interference, never below the simulated worst case and the tightest answer; so on the
    # synthesized partitions (two cores, every timer released at once) and on the multi-executor
    # layouts, whose three threads the kernel schedules on the two cores (the hot path's thread,
    # second of three, always has one; the rest waits only while both others run). The
    # two-thread executor's graph outgrows its limit: sag declines there.
    from chainrt import tightness
    from chainrt.reference_system import configs
    ref = str(ROOT / "examples" / "autoware_reference.yaml")
    hot = ("hot_path_front", "hot_path_rear")
    for name in ("edf-st", "picas-single", "picas-synth", "picas-multi", "edf-multi"):
        m = configs.variant(ref, name)
        chains = _core._analyze(m, "sag")["chains"]
        bounds = {c: chains[c]["wcrt_bound_ns"] for c in hot}
        assert all(bounds.values()), (name, chains)
        worst = tightness.worst_case(m, 5_000_000_000, climb=24, bounds=bounds, chains=list(bounds))
        assert all(worst[c] <= bounds[c] <= 1.05 * worst[c] for c in hot), (name, bounds, worst)
        best = tightest(m)["chains"]
        assert all(best[c]["analysis"] == "sag" and best[c]["wcrt_bound_ns"] == bounds[c] for c in hot), best
    for c in _core._analyze(configs.variant(ref, "edf-mt"), "sag")["chains"].values():
        assert "grew beyond its limits (100000 states" in c["reason"], c["reason"]
