"""``chainrt experiment accelerator`` at CI size: the simulator and the analysis over a short
duration (no real ROS 2 run), and the verdict logic on given rows. Never a wall-clock number."""

from __future__ import annotations

import json

from chainrt.experiments import accelerator as acc
from chainrt.model import load_model_from_string


def _row(mode, where, worst, misses=0, bound=35.0):
    return {"mode": mode, "where": where, "run": 0, "instances": 10, "worst_ms": worst, "p99_ms": worst,
            "misses": misses, "bound_ms": bound}


def test_verdict_needs_the_inversion_and_the_server_within_its_bound():
    ok = acc.verdict([_row("direct", "real", 51.0), _row("server", "real", 26.0)])["real"]
    assert ok["inversion_shown"] and ok["removed_by_server"]
    # the server no better than direct: no inversion shown
    assert not acc.verdict([_row("direct", "real", 26.0), _row("server", "real", 26.0)])["real"]["inversion_shown"]
    # the server beyond its bound, or missing a deadline: not removed
    assert not acc.verdict([_row("direct", "real", 51.0), _row("server", "real", 36.0)])["real"]["removed_by_server"]
    assert not acc.verdict([_row("direct", "real", 51.0), _row("server", "real", 26.0, misses=1)])["real"][
        "removed_by_server"]
    # no bound: never "removed"; a run with no completed instance is unbounded
    assert not acc.verdict([_row("direct", "real", 51.0), _row("server", "real", 26.0, bound=None)])["real"][
        "removed_by_server"]
    assert acc.verdict([_row("direct", "real", None), _row("server", "real", 26.0)])["real"]["inversion_shown"]


def test_the_simulated_scenario_shows_the_inversion_and_its_removal(tmp_path, capsys):
    class Args:
        duration, runs, overhead, out, no_real, no_plot, lock, device = 0.5, 1, 0.2, str(tmp_path), True, True, "", \
            "emulated"

    assert acc.run(Args) == 0
    summary = json.loads((tmp_path / "accelerator.json").read_text())
    v = summary["verdict"]["simulator"]
    assert v["inversion_shown"] and v["removed_by_server"]
    direct = next(r for r in summary["rows"] if r["mode"] == "direct")
    server = next(r for r in summary["rows"] if r["mode"] == "server")
    # direct: behind both lower-priority kernels, past the 40 ms deadline; the server: after the
    # kernel in service only (the scenario's arithmetic, scenario_yaml)
    assert direct["misses"] > 0 and direct["worst_ms"] > 40
    assert server["misses"] == 0 and server["worst_ms"] <= server["bound_ms"] < 40
    assert "inversion under direct access shown" in capsys.readouterr().out


def test_both_scenarios_are_valid_models():
    for mode in acc.MODES:
        m = load_model_from_string(acc.scenario_yaml(mode), f"{mode}.yaml")
        assert [c.name for c in m.chains] == ["perception", "planning", "mapping"]


def test_real_runs_report_the_accounting_of_chainrt_run():
    """Each real run's accounting is printed as `chainrt run` prints it: per chain the instances
    above the bound by cause and raw beside platform-free statistics, then what limits it — here
    from recorded executions: one instance within the bound, one above it in a platform
    blackout, one above it with neither blackout nor overrun."""
    from chainrt import accounting
    from chainrt.experiments import accelerator

    ms = 1_000_000

    def inst(r, finish):
        return accounting.Execution("detect", "perception", 1, r, r + finish, 3 * ms, r)
    ex = [inst(0, 20 * ms), inst(100 * ms, 50 * ms), inst(200 * ms, 45 * ms)]
    acc = accounting.to_json(accounting.account(ex, {"perception": ["detect"]}, {"perception": 40 * ms},
                                                {"detect": 3 * ms}, {0: [(110 * ms, 120 * ms)]}))
    acc["notes"] = ["the platform attribution did not run (test)"]
    text = "\n".join(accelerator.accounting_lines([("server", 0, acc)]))
    assert "server run 0:" in text and "note: the platform attribution did not run (test)" in text
    row = next(ln for ln in text.splitlines() if ln.strip().startswith("perception"))
    # bound, above, platform, overrun, unexplained | raw mean p99 max | platform-free n mean p99 max
    assert row.split()[1:6] == ["40.00", "2", "1", "0", "1"]
    assert row.split()[-4:] == ["2", "32.50", "45.00", "45.00"]
    assert "unexplained (no platform blackout" in text


def test_cuda_device_is_the_same_model_on_a_gpu(tmp_path, capsys):
    """--device cuda: the same scenario with `device: cuda` (the simulator and the analysis do not
    depend on the device, so the simulated rows are the emulated scenario's)."""
    for mode in acc.MODES:
        text = acc.scenario_yaml(mode, device="cuda")
        assert "device: cuda" in text
        load_model_from_string(text, f"{mode}.yaml")
    rows = {}
    for device in acc.DEVICES:
        class Args:
            duration, runs, overhead, out, no_real, no_plot, lock = 0.5, 1, 0.2, str(tmp_path / device), True, True, ""

        Args.device = device
        assert acc.run(Args) == 0
        summary = json.loads((tmp_path / device / "accelerator.json").read_text())
        assert summary["device"] == device
        rows[device] = [(r["mode"], r["worst_ms"], r["bound_ms"]) for r in summary["rows"]]
    assert rows["cuda"] == rows["emulated"]
