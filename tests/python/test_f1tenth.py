"""`chainrt experiment f1tenth`: the EDF ready-queue paper's Case Study 1 (Fig. 4) from
examples/f1tenth.yaml — the shape of the figure in the simulator (deterministic), the written
files, one-line errors, and a seconds-long run on real ROS 2 (no timing asserted)."""

from __future__ import annotations

import json

from chainrt.cli import main


def test_fig4_shape_in_the_simulator(tmp_path):
    out = tmp_path / "f"
    assert main(["experiment", "f1tenth", "--duration", "10", "--runs", "2", "--out", str(out)]) == 0
    s = json.loads((out / "f1tenth.json").read_text())
    t = s["table"]

    def mx(config, threads, chain):
        return t[f"{config}/{threads}/{chain}"]["max_ms"]["mean"]

    def avg(config, threads, chain):
        return t[f"{config}/{threads}/{chain}"]["average_ms"]["mean"]

    # The driving chain does better under EDF than under the default executor, most of all on
    # one (overloaded) thread; there, EDF improves the dummy chains too, and FP starves dummy 2.
    assert mx("edf", 1, "driving") < mx("default", 1, "driving")
    assert avg("edf", 1, "driving") < avg("default", 1, "driving")
    assert mx("edf", 2, "driving") <= mx("default", 2, "driving")
    gain1 = mx("default", 1, "driving") - mx("edf", 1, "driving")
    gain2 = mx("default", 2, "driving") - mx("edf", 2, "driving")
    assert gain1 > gain2
    for chain in ("dummy1", "dummy2"):
        assert mx("edf", 1, chain) < mx("default", 1, chain)
    assert t["fp/1/dummy2"]["starved_runs"] == 2
    assert mx("fp", 1, "driving") <= s["deadlines_ms"]["driving"]
    assert (out / "f1tenth.png").stat().st_size > 0
    rows = (out / "f1tenth.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2 * 3 * 2  # configurations x threads x chains x runs


def test_bad_arguments_are_one_line_errors(tmp_path, capsys):
    assert main(["experiment", "f1tenth", "--configs", "rr", "--out", str(tmp_path)]) == 1
    assert main(["experiment", "f1tenth", "--threads", "3", "--out", str(tmp_path)]) == 1
    assert main(["experiment", "f1tenth", "--model", str(tmp_path / "none.yaml"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("chainrt experiment f1tenth:") for e in err)


def test_real_short_run(tmp_path):
    from rosutil import run_cli_on_ros

    out = tmp_path / "r"
    p = run_cli_on_ros(["experiment", "f1tenth", "--real", "--runs", "1", "--duration", "1", "--threads", "1",
                        "--configs", "default,edf", "--no-plot", "--out", str(out)], domain_base=21)
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "f1tenth.json").read_text())
    assert s["mode"] == "real ROS 2" and len(s["load"]) == 2
    # the baseline is rclcpp's stock executor on the generated nodes where rclcpp is built,
    # chainrt's emulation of it (labelled so) where it is not
    from chainrt import stock
    if stock.unavailable() is None:
        assert s["backend"] == "rclcpp" and s["labels"]["default/1"] == "stock rclcpp SingleThreaded"
        assert s["labels"]["edf/1"] == "chainrt ChainExecutor mixed"
        # the default executor runs the same nodes: its driving chain completes instances too
        assert s["table"]["default/1/driving"]["average_ms"] is not None
    else:
        assert s["labels"]["default/1"] == "chainrt's emulation of ROS 2 default"
    # the driving chain's instances end when both drivers ran; some completed in a second
    assert s["table"]["edf/1/driving"]["average_ms"] is not None


def test_real_runs_keep_the_models_threads(tmp_path, monkeypatch):
    """On rclcpp the ChainExecutor runs the model's threads (their pinning and priority), never
    --threads' plain ones; the stock MultiThreadedExecutor gets the thread count; every
    configuration's run k comes before any run k+1."""
    import argparse

    from chainrt import stock
    from chainrt.experiments import f1tenth

    calls = []

    def fake_run(path, executor, **kw):
        calls.append((executor, kw.get("threads"), kw.get("policy"), kw.get("thread_params")))
        return {"chains": {}}

    monkeypatch.setattr(stock, "unavailable", lambda: None)
    monkeypatch.setattr(stock, "run", fake_run)
    import yaml
    doc = yaml.safe_load(open(f1tenth._example_path()))
    args = argparse.Namespace(runs=2, duration=1.0, out=str(tmp_path), lock="", no_thread_params=False)
    f1tenth._measure_real(args, doc, ["default", "edf"], [1, 2], ["driving"])
    one_round = [("single", None, None, True), ("multi", 2, None, True), ("chainrt", None, "mixed", True),
                 ("chainrt", None, "mixed", True)]
    assert calls == one_round * 2
