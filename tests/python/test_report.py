"""Tests of the HTML reports: ``chainrt report`` (analysis, simulation and run side by side) and
the reference-system bench's index.html. Structure: real tables with a caption, each preceded by
exactly one named definition of the measure it shows; every plot a figure with a caption; no
pasted terminal text. When a headless Chromium is installed (scripts/setup installs it as root),
the page is rendered to a screenshot and the image is checked to show content; otherwise that
test is skipped."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chainrt import verdict
from chainrt.report import bench_page, model_report

REPO = Path(__file__).resolve().parents[2]


class Outline(HTMLParser):
    """The sequence of structural elements of a page."""

    def __init__(self):
        super().__init__()
        self.seq, self.stack, self.text = [], [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("table", "figure", "figcaption", "caption", "img", "pre", "h2", "script"):
            self.seq.append(tag)
        if tag == "p" and a.get("class") == "def":
            self.seq.append("def")
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] in ("caption", "figcaption"):
            self.text.setdefault(self.stack[-1], []).append(data)


def outline(page: str) -> Outline:
    o = Outline()
    o.feed(page)
    return o


def check_structure(page: str) -> Outline:
    o = outline(page)
    assert "pre" not in o.seq and "script" not in o.seq
    for i, tag in enumerate(o.seq):
        if tag == "table":
            assert o.seq[i - 1] == "def", "a table without its definition"
            assert o.seq[i + 1] == "caption"
        if tag == "figure":
            assert o.seq[i + 1:i + 3] == ["img", "figcaption"]
    for cap in o.text.get("figcaption", []):
        assert len(cap) > 40       # says what to look at, not just a title
    return o


def _run_data():
    return {
        "model": "m.yaml", "name": "m", "duration_ns": 2_000_000_000, "policy": None, "when": "now",
        "measured": "replay",
        "host": {"cpus": 2, "load_average": [0.5]}, "chains": ["high", "low"],
        "model_chains": {"high": {"period_ns": 20_000_000, "deadline_ns": 20_000_000, "callbacks": ["a", "b"]},
                         "low": {"period_ns": 200_000_000, "deadline_ns": 200_000_000, "callbacks": ["c"]}},
        "wcet": {"a": 2_000_000, "b": 2_000_000, "c": 10_000_000}, "notes": [],
        "analysis": {"analysis": "fp-mt", "chains": {"high": {"wcrt_bound_ns": 14_000_000},
                                                     "low": {"wcrt_bound_ns": 30_000_000}}},
        "simulation": {"chains": {"high": {"wcrt_ns": 10_000_000, "mean_ns": 5_000_000},
                                  "low": {"wcrt_ns": 25_000_000, "mean_ns": 25_000_000}}},
        "run": {"run_id": "r1", "warnings": [],
                "chains": {"high": {"wcrt_ns": 16_000_000, "mean_ns": 6_000_000, "p99_ns": 15_000_000,
                                    "instances": 100, "deadline_misses": 0},
                           "low": {"wcrt_ns": 27_000_000, "mean_ns": 26_000_000, "p99_ns": 27_000_000,
                                   "instances": 10, "deadline_misses": 0}},
                "samples_ns": {"high": list(range(5_000_000, 16_000_001, 110_000)), "low": [26_000_000] * 10},
                "callbacks": {n: {"instances": 10, "cpu_total_ns": 10 * w, "cpu_max_ns": w + 100_000,
                                  "wall_max_ns": w + 200_000} for n, w in
                              (("a", 2_000_000), ("b", 2_000_000), ("c", 10_000_000))}},
        "verdict": {"findings": [{"text": "chain 'high': measured WCRT 16.00 ms exceeds the analysis bound 14.00 ms"}]},
    }


def test_model_report_page(tmp_path):
    page = model_report.write(_run_data(), tmp_path)
    text = page.read_text()
    o = check_structure(text)
    assert o.seq.count("table") == 2 and o.seq.count("figure") == 3
    from PIL import Image

    for png in ("worst_cases.png", "response_cdf.png", "execution_times.png"):
        with Image.open(tmp_path / png) as im:  # a drawn plot, not a blank canvas
            assert im.width >= 400 and im.height >= 150
            assert len(im.convert("RGB").getcolors(maxcolors=1 << 16) or ()) >= 8
    assert "Chain response time</b>:" in text and "Execution time</b>:" in text
    assert "exceeds the analysis bound 14.00 ms" in text
    assert '<tr class="bad"><td>high</td>' in text and '<tr class="warn"><td>low</td>' in text


def test_model_report_without_a_run_has_no_empty_plots(tmp_path):
    d = _run_data()
    d["run"], d["verdict"], d["measured"] = None, None, None
    text = model_report.write(d, tmp_path).read_text()
    o = check_structure(text)
    assert o.seq.count("figure") == 1          # only the worst cases: bound and simulation
    assert "Verdict" not in text


def test_plots_of_a_large_model_show_the_chains_closest_to_their_deadline_and_say_so(tmp_path, monkeypatch):
    # (a plot with a bar per chain of a 2,500-chain model was an image over the PIL limit and
    # 1.6 GB to draw: the plots are bounded, the tables keep every chain)
    monkeypatch.setattr(model_report, "MAX_PLOTTED", 1)
    d = _run_data()
    drawn = {}
    monkeypatch.setattr(model_report, "save_figure",
                        lambda fig, path, dpi: drawn.setdefault(path.name, [t.get_text() for ax in fig.axes
                                                                                for t in ax.get_yticklabels()]
                                                                 + [ax.get_title() for ax in fig.axes]))
    text = model_report.write(d, tmp_path).read_text()
    assert drawn["worst_cases.png"][:1] == ["high"]   # 16 ms of 20 (0.8) beats 30 ms of 200
    assert "high" in drawn["response_cdf.png"] and "low" not in drawn["response_cdf.png"]
    assert drawn["execution_times.png"][:1] == ["a"]  # (2.1 ms of 2 ms: a is the first of the largest)
    assert text.count("It shows the 1 of the 2 chains closest to their limit") == 1
    assert "It shows the 1 of the 2 measured chains closest" in text
    assert "It shows the 1 of the 3 callbacks closest" in text
    assert '<td>low</td>' in text and '<td>c</td>' in text  # the tables list all


def _bench_result():
    cfg = {"policy": "edf", "summary": "", "hot_path_latency": {"mean_ns": 9e6, "min_ns": 8e6, "max_ns": 30e6,
                                                               "p99_ns": 20e6, "std_ns": 1e6, "count": 100},
           "behavior_planner_period": {"mean_ns": 100e6, "std_ns": 50e3}, "hot_path_drops": 0,
           "spread": {"hot_path_latency_mean_ns": {"std": 2e5}}, "latency_over_floor": 1.1,
           "cpu": {"mean_percent": {"mean": 40.0}}, "memory": {"rss_max_bytes": {"mean": 3e7}},
           "runtime_chains": {"hot_path": {"mean_ns": {"mean": 12e6}, "wcrt_ns": 35_000_000}},
           "simulated": {"hot_path": {"mean_ns": 11e6, "wcrt_ns": 14_000_000}},
           "analysis": {"analysis": "edf-mt", "hot_path_bound_ns": 25_000_000}}
    return {"load": "default", "work_scale": 1.0, "demand": 0.39, "duration_ns": 10e9, "repeat": 3, "pin_core": None,
            "rt_priority": None, "hot_path_floor_ns": 8e6, "host": {"cpus": 2, "load_average": [1.0]},
            "configs": {"edf-st": cfg},
            "checks": {"edf-st": {"latency_over_floor": 1.1, "floor_limit": 1.15, "within_floor": True,
                                  "zero_drops": True, "planner_period_std_below_0.1ms": True}}}


def test_bench_page_names_one_definition_per_table():
    r = _bench_result()
    r["verdict"] = verdict.bench_findings(r)
    assert r["verdict"] == ["edf-st: hot_path measured WCRT 35.00 ms exceeds the analysis bound 25.00 ms (1.4x) and "
                            "the simulated worst case 14.00 ms; likely cause: no real-time priority "
                            "(--rt-priority sets one)"]
    text = bench_page.render(r, [Path("hot_path_latency.png"), Path("gantt_edf-st.png")])
    o = check_structure(text)
    assert o.seq.count("table") == 3
    defs = re.findall(r'<p class="def"><b>([^<]+)</b>', text)
    assert defs == ["Hot-path latency (upstream KPI)", "Hot-path response time (chainrt chain)",
                    "Hot-path latency (upstream KPI)"]
    assert "done-when" not in text.lower()


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(not _chromium(), reason="no headless Chromium (scripts/setup installs it when run as root)")
def test_report_renders_in_a_headless_browser(tmp_path):
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "chainrt.cli", "report", str(REPO / "examples" / "two_chains.yaml"),
                        "--no-run", "--duration", "1s", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    check_structure((out / "index.html").read_text())
    shot = tmp_path / "shot.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1200,1400", f"--screenshot={shot}", (out / "index.html").as_uri()],
                   capture_output=True, timeout=120)
    assert shot.is_file()
    import matplotlib.image as mpimg
    img = mpimg.imread(str(shot))
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    # the page shows something: dark text pixels and the plot's colours, not a blank or error page
    gray = img[..., :3].mean(axis=2)
    assert (gray < 0.3).mean() > 0.002
    colored = (abs(img[..., 0] - img[..., 2]) > 0.2).mean()
    assert colored > 0.001


def test_the_page_says_what_was_measured_and_how(tmp_path):
    d = _run_data()
    text = model_report.write(d, tmp_path).read_text()
    assert "Measured: a replay of the model by chainrt run (not your nodes)" in text
    d["measured"], d["verdict"] = "monitor", None
    d["run"].update(messages=12, listened_ns=3_000_000_000, executors=["main"])
    text = model_report.write(d, tmp_path).read_text()
    assert "Measured: the running system, as its chainrt executors monitor it" in text
    assert "12 monitoring message(s) in 3 s from executor(s) main" in text
    # the monitor's figures are judged against the bound as well
    assert "chain high: measured worst case 16.00 ms exceeds its analysis bound 14.00 ms" in text


def test_a_failed_measurement_is_text_on_the_page_and_a_non_zero_exit(tmp_path, monkeypatch, capsys):
    from chainrt import runtime
    from chainrt.cli import main

    def fail(*a, **kw):  # what a Fast DDS XML error on the terminal looks like
        raise RuntimeError("process main failed: \x1b[31;1m[XMLPARSER Error]\x1b[0m bad profile\x07")
    monkeypatch.setattr(runtime, "run_model", fail)
    out = tmp_path / "rep"
    rc = main(["report", str(REPO / "examples" / "two_chains.yaml"), "--replay", "--duration", "1s",
               "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    assert "\x1b" not in err and "[XMLPARSER Error] bad profile" in err
    page = (out / "index.html").read_text()
    assert "\x1b" not in page and "\x07" not in page and "[XMLPARSER Error] bad profile" in page
    # the replay's SCHED_FIFO priority reaches chainrt run; --rt-priority only with --replay
    seen = {}
    monkeypatch.setattr(runtime, "run_model", lambda *a, **kw: seen.update(kw) or fail())
    assert main(["report", str(REPO / "examples" / "two_chains.yaml"), "--replay", "--rt-priority", "70",
                 "--duration", "1s", "-o", str(out)]) == 1
    assert seen["fifo"] == 70
    assert main(["report", str(REPO / "examples" / "two_chains.yaml"), "--rt-priority", "70", "-o", str(out)]) == 1
    assert "--rt-priority applies to --replay" in capsys.readouterr().err


def test_report_of_a_running_system_that_is_not_there_fails(tmp_path, monkeypatch, capsys):
    from chainrt import profile
    from chainrt.cli import main
    monkeypatch.setattr(profile, "listen", lambda *a, **kw: profile.Collection())
    out = tmp_path / "rep"
    assert main(["report", str(REPO / "examples" / "two_chains.yaml"), "--duration", "1s", "-o", str(out)]) == 1
    assert "no monitoring message" in capsys.readouterr().err
    assert "no monitoring message" in (out / "index.html").read_text()
