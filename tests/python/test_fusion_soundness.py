"""Implicit fusion (the reference system's Fusion nodes) against every shipped bound: a chain
that passes one input of a fusion node waits for the other inputs. With free phases the
analyses charge that wait for any phase (analysis/src/join_wait.cpp) and no bound may be beaten
by a simulation with other timer phases; with the phases guaranteed (the reference model as
chainrt runs it: every timer on the release grid) the hot paths are bounded by fusion rounds,
within 1.5x of the simulated worst case over the allowed release jitter."""

from __future__ import annotations

import json
import pathlib

from chainrt import _core
from chainrt.reference_system import configs

ROOT = pathlib.Path(__file__).resolve().parents[2]
REF = str(ROOT / "examples" / "autoware_reference.yaml")
MS = 1_000_000
PHASES = [{}, {"RearLidarDriver/timer": 30 * MS}, {"RearLidarDriver/timer": 99 * MS},
          {"FrontLidarDriver/timer": 60 * MS, "BehaviorPlanner/timer": 50 * MS}]


def free_phases(m):
    """The model with every timer's phase free (any phase: the generic join term)."""
    cbs = m.callbacks
    for c in cbs:
        if c.kind == "timer":
            c.phase = "free"
    m.callbacks = cbs
    return m


def test_reference_bounds_hold_for_every_lidar_phase():
    checked = hot_bounded = 0
    for config in configs.CONFIGS:
        m = free_phases(configs.variant(REF, config))
        name, _ = _core._default_analysis(m)
        if name is None or not _core._applicable(m, name)[0]:
            continue
        r = _core._analyze(m, name)
        for chain in ("hot_path_front", "hot_path_rear"):
            # The wait at PointCloudFusion is charged (up to a LiDAR period: above 100 ms).
            b = r["chains"][chain]["wcrt_bound_ns"]
            assert b is None or b > 100 * MS, (config, chain, b)
            hot_bounded += b is not None
        for offsets in PHASES:
            s, _ = _core._simulate(m, 3_000_000_000, offsets=offsets)
            for chain, sim in json.loads(s)["chains"].items():
                b = r["chains"][chain]["wcrt_bound_ns"]
                if b is not None:
                    assert sim["wcrt_ns"] <= b, f"{config} {name}: {chain} simulated {sim['wcrt_ns']} > bound {b} ({offsets})"
                    checked += 1
    assert checked >= 8
    # picas-single and picas-multi bound both hot paths: their fan-out to the lowest-priority
    # localisation and map nodes has no end bound, but it only blocks them (R_work by priority).
    assert hot_bounded >= 4


def test_the_counterexample_that_the_old_bound_missed():
    """The per-LiDAR chain really waits for the other LiDAR: with the rear timer 99 ms behind,
    the front chain takes longer than its period (what a bound ignoring the wait missed)."""
    m = free_phases(configs.variant(REF, "picas-single"))
    s, _ = _core._simulate(m, 3_000_000_000, offsets={"RearLidarDriver/timer": 99 * MS})
    assert json.loads(s)["chains"]["hot_path_front"]["wcrt_ns"] > 100 * MS


def test_fusion_systems_have_no_counterexample(tmp_path):
    """A CI slice of `chainrt experiment soundness --fusion --harsh --climb`: random systems whose
    chains join at fusion nodes fed by several timers (any phases, climbed), every analysis."""
    from chainrt import soundness
    joined = 0
    for analysis in ("picas-st", "fp-mt", "ros-default-st", "edf-mt", "cros-rt"):
        rep = soundness.check(analysis, 60, seed=3, counterexample_dir=str(tmp_path), harsh=True, climb=2, fusion=True)
        assert rep["counterexamples"] == [], (analysis, rep["counterexamples"][:3])
        assert rep["applicable"] > 0, analysis
        joined += rep["fusion_chains_checked"]
        if analysis in ("picas-st", "fp-mt", "ros-default-st"):
            assert rep["fusion_chains_checked"] > 100, (analysis, rep)
    assert joined > 300


GUARANTEED = ("picas-single", "picas-multi", "picas-synth", "edf-st", "edf-multi")


def test_reference_hot_paths_with_guaranteed_phases_are_within_1_5x_of_the_simulated_worst():
    """The reference model's timers are on the release grid (phase: guaranteed): the hot paths of
    every PiCAS and EDF layout get round bounds, never beaten by the adversarial simulations over
    the allowed release jitter and within 1.5x of their worst."""
    from chainrt import tightness
    for config in GUARANTEED:
        m = configs.variant(REF, config)
        name, _ = _core._default_analysis(m)
        r = _core._analyze(m, name)
        bounds = {c: r["chains"][c]["wcrt_bound_ns"] for c in ("hot_path_front", "hot_path_rear")}
        assert all(b is not None for b in bounds.values()), (config, {c: r["chains"][c]["reason"] for c in bounds})
        assert all(b < 100 * MS for b in bounds.values()), (config, bounds)  # no period of waiting
        worst = tightness.worst_case(m, 2_000_000_000, climb=6, bounds=bounds, chains=list(bounds))
        for c, b in bounds.items():
            assert worst[c] <= b, (config, c, worst[c], b)
            assert b <= 1.5 * worst[c], (config, c, b, worst[c])


def test_offsets_family_has_no_counterexample(tmp_path):
    """A CI slice of `chainrt experiment soundness --phases --harsh --climb`: fusion systems whose
    timers have guaranteed phases and declared jitter, simulated at the declared offsets with the
    jitter at its maximum, drawn, zero and climbed; every analysis."""
    from chainrt import soundness
    for analysis in ("picas-st", "fp-mt", "edf-mt", "ros-default-st", "cros-rt"):
        rep = soundness.check(analysis, 40, seed=5, counterexample_dir=str(tmp_path), harsh=True, climb=2, phases=True)
        assert rep["phases"] is True
        assert rep["counterexamples"] == [], (analysis, rep["counterexamples"][:3])
        assert rep["applicable"] > 0, analysis
        if analysis in ("picas-st", "fp-mt"):
            assert rep["fusion_chains_checked"] > 50, (analysis, rep)
            # the chains from fusion sources apart: some of the ratios, not all (background chains)
            joins, every = rep["join_ratios"], rep["ratios"]
            assert 0 < len(joins) < len(every), (analysis, len(joins), len(every))
            rest = list(every)
            for x in joins:
                rest.remove(x)
            merged = soundness.merge_reports([rep])
            assert merged["join_tightness"]["chains"] == len(joins)
            assert merged["join_tightness"]["bound_over_worst"]["median"] >= 1.0
