"""index.html of ``chainrt bench reference-system``: the KPI tables (each with the one named
definition of the latency it shows), the verdict of the measured worst cases against the
analysis and the simulator, and every plot with a caption saying what to look at."""

from __future__ import annotations

from pathlib import Path

from . import html as H
from .. import output

HOT_PATH_KPI = ("Hot-path latency (upstream KPI)",
                "start of ObjectCollisionEstimator minus the later of the two LiDAR samples it fuses, per message "
                "reaching the sink, as ros-realtime/reference-system v1.1.0 computes it; the first 10 samples at "
                "the sink are skipped.")
HOT_PATH_CHAIN = ("Hot-path response time (chainrt chain)",
                  "completion of ObjectCollisionEstimator minus the release of the LiDAR timer that started the "
                  "chain instance -- the chain response time that the analysis bounds and the simulator reproduces; "
                  "longer than the upstream KPI by the work before the sink's start.")
CAPTIONS = {
    "hot_path_latency": "Hot-path latency per configuration: the box spans mean ± std, whiskers min and max, dots "
                        "the per-run means. Look for configurations whose box sits low and whose dots agree (small "
                        "spread between runs).",
    "hot_path_latency_cdf": "Distribution of the hot-path latency over all samples of all runs. A curve further left "
                            "is faster; a steep curve is predictable; a long tail to the right shows rare long waits.",
    "behavior_planner_period": "Period of the behaviour planner as observed at its output. The nominal period is "
                               "the target: a wide box means the planner's timer is delayed by other callbacks.",
    "hot_path_drops": "Hot-path messages dropped per run (overwritten in a full queue before they were taken). "
                      "Zero is the target.",
    "cpu_memory": "CPU use and resident memory of the benchmark process over the first run: a flat line means "
                  "steady state; a CPU share well below the model's demand means another load took the core.",
    "model_vs_measured": "The same hot-path chain in the real run, the simulator and the analysis bound. A measured "
                         "value above the bound means the run did not follow the model's assumptions (see the "
                         "verdict above).",
}


def _caption(p: Path) -> str:
    stem = p.stem
    if stem.startswith("gantt"):
        return ("Executor threads over a 250 ms window of the first run, one row per thread, bars coloured by chain "
                "(hot path red). Look for hot-path bars waiting behind other callbacks.")
    return CAPTIONS.get(stem, stem.replace("_", " "))


def render(result: dict, images: list[Path]) -> str:
    parts = []
    meta = (f"load {result['load']} (work x{result['work_scale']:.2f}, model demand {result['demand'] * 100:.0f} % "
            f"of one core), {result['duration_ns'] / 1e9:g} s x {result['repeat']} run(s) per configuration, "
            + (f"pinned to core {result['pin_core']}" if result.get("pin_core") is not None else "not pinned")
            + (f", SCHED_FIFO base {result['rt_priority']}" if result.get("rt_priority") is not None else ""))
    host = result.get("host") or {}
    if host.get("load_average"):
        meta += f"; host: {host.get('cpus')} CPUs, load average {host['load_average'][0]:.2f} before the runs"
        if host.get("load_average_after"):
            meta += f", {host['load_average_after'][0]:.2f} after"
    if result.get("verdict"):
        parts.append(H.section("Verdict: measured worst cases above the model",
                               H.items(result["verdict"])))
    measured = [(n, c) for n, c in result["configs"].items() if "hot_path_latency" in c]
    if measured:
        rows = []
        for name, c in measured:
            lat, bp = c["hot_path_latency"], c["behavior_planner_period"]
            sp = c["spread"]["hot_path_latency_mean_ns"]
            rows.append([name, output.ms(lat["mean_ns"]), output.ms(sp["std"]), output.ms(lat["min_ns"]), output.ms(lat["max_ns"]),
                         output.ms(lat["p99_ns"]),
                         "-" if c.get("latency_over_floor") is None else f"{c['latency_over_floor']:.2f}",
                         output.ms(c.get("simulated", {}).get("hot_path_latency", {}).get("mean_ns")),
                         c["hot_path_drops"], output.ms(bp["mean_ns"]), output.ms(bp["std_ns"], 3),
                         f"{c['cpu']['mean_percent']['mean']:.1f}",
                         f"{c['memory']['rss_max_bytes']['mean'] / 2 ** 20:.1f}"])
        parts.append(H.section(
            "Upstream KPIs per configuration",
            H.table(["configuration", "mean", "± std of run means", "min", "max", "p99", "mean / floor",
                     "simulated mean", "drops", "planner period mean", "planner period std", "CPU %", "RSS MiB"],
                    rows, f"Hot-path latency and behaviour-planner period in ms (hot-path floor "
                          f"{output.ms(result.get('hot_path_floor_ns'))} ms: the work after the later LiDAR sample plus "
                          "one blocking callback). min/max/p99 over all samples of all runs.", HOT_PATH_KPI)))
        disturbed = [f"{n} run {d['run']}: the process got {d['cpu_percent']:.0f} % CPU" for n, c in measured
                     for d in c.get("disturbed_runs", [])]
        if disturbed:
            parts.append(H.para("Disturbed runs (process CPU below 75 % of the model's demand: another load took "
                                "the core; their figures are included): " + "; ".join(disturbed) + "."))
    mrows = []
    for name, c in result["configs"].items():
        sim = c.get("simulated", {}).get("hot_path", {})
        an = c.get("analysis", {}) or {}
        rc = c.get("runtime_chains", {}).get("hot_path", {})
        mean = (rc.get("mean_ns") or {}).get("mean") if rc else None
        mrows.append([name, output.ms(mean), output.ms(rc.get("wcrt_ns") if rc else None), output.ms(sim.get("mean_ns")),
                      output.ms(sim.get("wcrt_ns")), an.get("analysis") or "none",
                      output.ms(an.get("hot_path_bound_ns")) if an.get("analysis") else "-"])
    parts.append(H.section(
        "Real run, simulation and analysis side by side",
        H.table(["configuration", "measured mean", "measured worst", "simulated mean", "simulated worst", "analysis",
                 "bound"], mrows, "Hot-path response time in ms, the same model in the three views.", HOT_PATH_CHAIN)))
    reasons = [f"{n}: {c['analysis']['reason']}" for n, c in result["configs"].items()
               if c.get("analysis") and c["analysis"].get("hot_path_bound_ns") is None and c["analysis"].get("reason")]
    if reasons:
        parts.append(H.para("Configurations without an analysis bound, and why:"))
        parts.append(H.items(reasons))
    if result.get("checks") and result.get("system") == "upstream":
        ch = result["checks"]
        yes = {True: "yes", False: "no"}
        crow = [[n, f"{r['mean_vs_best_stock']:.2f} (<= {r['mean_target']}: {yes[r['met']['mean']]})",
                 f"{r['p99_over_mean']:.2f} ({yes[r['met']['p99']]})",
                 "-" if r["max_vs_best_stock_max"] is None else
                 f"{r['max_vs_best_stock_max']:.2f} ({yes[r['met']['max']]})",
                 str(r["drops"]), f"{r['planner_period_std_ns'] / 1e6:.3f} ({yes[r['met']['planner_std']]})"]
                for n, r in ch["configs"].items()]
        parts.append(H.section(
            f"chainrt against the best stock rclcpp executor ({ch['best_stock']}, mean "
            f"{output.ms(ch['best_stock_mean_ns'])} ms, max {output.ms(ch['best_stock_max_ns'])} ms)", H.table(
                ["configuration", "mean / best stock mean", "p99 / own mean (<= 1.15)",
                 "max / best stock's max (<= 0.6)", "drops", "planner period std [ms] (< 0.1)"], crow,
                "Each target measured in this run.", HOT_PATH_KPI)))
    elif result.get("checks"):
        crow = []
        for name, ch in result["checks"].items():
            if ch.get("no_samples"):
                crow.append([name, "no sample", "-", "-", "-"])
                continue
            crow.append([name, f"{ch['latency_over_floor']:.2f} (target <= {ch['floor_limit']})",
                         f"{ch['vs_ros_default_st']:.2f} (target <= 0.5)" if "vs_ros_default_st" in ch else "-",
                         "yes" if ch["zero_drops"] else "no",
                         "yes" if ch["planner_period_std_below_0.1ms"] else "no"])
        parts.append(H.section("Targets of the PiCAS and EDF configurations", H.table(
            ["configuration", "hot-path latency / floor", "vs ros-default-st", "zero drops",
             "planner period std < 0.1 ms"], crow, "Each target measured in this run (hot-path latency as defined "
                                                   "above: the upstream KPI).", HOT_PATH_KPI)))
    figs = [H.figure(p.name, _caption(p), p.stem.replace("_", " ")) for p in images]
    if figs:
        parts.append(H.section("Plots", *figs))
    parts.append(H.para("Raw data: result.json (every sample), kpis.csv (one row per configuration)."))
    return H.page("Autoware reference system on chainrt", "\n".join(parts), meta)
