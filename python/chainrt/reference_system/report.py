"""Report of the reference-system benchmark: the KPI table (text), JSON, CSV, per KPI the
summary plot upstream draws (one box per configuration: mean ± std as the box, min/max as
whiskers; the per-run means as dots show the spread over runs), the hot-path latency CDF, CPU
and memory over time, the measured chains next to the simulator and the analysis, and one HTML
page that shows them all.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .. import output
from ..figures import pyplot, save_figure
from ..report import bench_page
from .accounting import STAMP_MARGIN_NS

MS = 1e6


def has_measurements(result: dict) -> bool:
    return any("hot_path_latency" in c for c in result["configs"].values())


def accounting_lines(result: dict, color: bool | None = None) -> list[str]:
    """The hot-path KPI and the planner period's std raw beside the same over the platform-free
    samples, and the instances of the model's chains above their analysis bound by cause (a
    configuration with unexplained ones in red; a stock executor has no model bound: its
    platform-free split alone)."""
    acc = {n: c["accounting"] for n, c in result["configs"].items() if c.get("accounting")}
    if not acc:
        return []
    color = output.color_wanted() if color is None else color
    rows = [("config", "raw mean", "p99", "max", "|", "free samples", "mean", "p99", "max", "p99/mean", "max/mean",
             "|", "BP std raw", "free", "|", "above bound", "platform", "overrun", "unexplained")]
    bad = [False]
    for name, a in acc.items():
        c = result["configs"][name]
        raw, lat = c.get("hot_path_latency") or {}, a["hot_path_latency"]
        bp_raw, bp = c.get("behavior_planner_period") or {}, a["behavior_planner_period"]
        counted, stats = bool(lat["count"]), ("mean_ns", "p99_ns", "max_ns")
        total = {k: sum(ch[k] for ch in a["chains"].values()) for k in ("above", "platform", "overrun", "unexplained")}
        causes = tuple(total.values()) if a.get("bounded", bool(a["chains"])) else ("no bound", "-", "-", "-")
        rows.append((name, *(output.ms(raw.get(k) if raw.get("count") else None) for k in stats),
                     "|", lat["count"], *(output.ms(lat[k] if counted else None) for k in stats),
                     f"{lat['p99_ns'] / lat['mean_ns']:.2f}" if counted else "-",
                     f"{lat['max_ns'] / lat['mean_ns']:.2f}" if counted else "-", "|",
                     output.ms(bp_raw.get("std_ns") if bp_raw.get("count") else None, 3),
                     output.ms(bp["std_ns"] if bp["count"] else None, 3), "|", *causes))
        bad.append(total["unexplained"] > 0)
    out = ["hot-path latency and planner period std (ms), raw and over the platform-free samples (no platform "
           "blackout in their busy window), and the chains' instances above their analysis bound by cause:"]
    out += [output.red(ln, color and b) for ln, b in zip(output.table(rows), bad)]
    if any(not a.get("bounded", bool(a["chains"])) for a in acc.values()):
        out.append("  'no bound': a stock executor (or a layout without an analysis bound) has no model bound to "
                   "account against; its accounting is the platform-free split")
    if result.get("system") == "upstream":
        out.append("  (upstream's nodes: a sample is platform-free when no platform blackout touched its stamped "
                   f"window, from its end-to-end latency plus {STAMP_MARGIN_NS / 1e6:g} ms before the sink printed "
                   "it to the print; every configuration alike)")
    for name, a in acc.items():
        un = [f"{ch} {v['unexplained']}" for ch, v in a["chains"].items() if v["unexplained"]]
        if un:
            out.append(output.red(f"  {name}: unexplained instances (no platform blackout, no callback over its WCET in "
                                  f"their busy window): " + ", ".join(un), color))
            for ch, v in a["chains"].items():
                out += [output.red(f"    {name}: {t}", color) for t in v.get("unexplained_cases", [])[:2]]
        for n in a.get("notes", []):
            out.append(f"  {name}: {n}")
    return out


def format_table(result: dict) -> str:
    """The KPI table printed by `chainrt bench reference-system` (times in ms)."""
    lines = []
    floor = result.get("hot_path_floor_ns")
    system = ("upstream's nodes on rclcpp 29 (stock executors and chainrt's ChainExecutor)"
              if result.get("system") == "upstream" else "chainrt's replica on the chainrt runtime")
    lines.append(f"Autoware reference system ({system}), load {result['load']} (work x{result['work_scale']:.2f}, model demand "
                 f"{result['demand'] * 100:.0f} % of one core), {result['duration_ns'] / 1e9:g} s x {result['repeat']} "
                 f"run(s) per configuration" + (f", pinned to core {result['pin_core']}" if result.get('pin_core') is not None
                                               else ", not pinned")
                 + (" (a cpuset: no thread leaves it)" if result.get("cpuset") else "")
                 + (f", SCHED_FIFO base {result['rt_priority']}" if result.get("rt_priority") is not None else ""))
    step, phase = result.get("creation_step_ns"), result.get("planner_phase_ns") or 0
    if result.get("system") == "upstream":
        nc = result.get("number_cruncher") or {}
        lines.append("timer phases: stock executors upstream's (each timer starts when its node is created, one node "
                     "after another); the ChainExecutor the model's on the release grid ("
                     + (f"BehaviorPlanner +{phase / 1e6:g} ms, the rest together)" if phase else "all together)")
                     + (f"; number-cruncher limit {nc['limit']} ({nc['work_ns'] / 1e6:.2f} ms of CPU time per working "
                        "callback" + (", calibrated here)" if nc.get("calibration") else ", given)") if nc else ""))
    else:
        lines.append("timer phases: " + (f"sequential node creation, {step / 1e6:g} ms per node" if step is not None
                                         else "all timers together")
                     + (f", BehaviorPlanner +{phase / 1e6:g} ms" if phase else ""))
    if result.get("host"):
        la = result["host"].get("load_average", [])
        if la:
            lines.append(f"host: {result['host'].get('cpus')} CPUs, load average before the runs {la[0]:.2f}"
                         + (f", after {result['host']['load_average_after'][0]:.2f}"
                            if result['host'].get('load_average_after') else ""))
    lines.append(f"hot-path floor {output.ms(floor)} ms (work after the later LiDAR sample {output.ms(result.get('hot_path_floor_no_blocking_ns'))}"
                 " ms + one blocking callback)")
    if has_measurements(result):
        rows = [("config", "hot-path mean", "±runs", "min", "max", "std", "p99", "/floor", "sim mean", "drops",
                 "BP period", "BP std", "CPU %", "RSS MiB")]
        for name, c in result["configs"].items():
            if "hot_path_latency" not in c:
                continue
            lat, bp = c["hot_path_latency"], c["behavior_planner_period"]
            sp = c["spread"]["hot_path_latency_mean_ns"]
            rows.append((name, output.ms(lat["mean_ns"]), output.ms(sp["std"]), output.ms(lat["min_ns"]), output.ms(lat["max_ns"]),
                         output.ms(lat["std_ns"]), output.ms(lat["p99_ns"]),
                         "-" if c.get("latency_over_floor") is None else f"{c['latency_over_floor']:.2f}",
                         output.ms(c.get("simulated", {}).get("hot_path_latency", {}).get("mean_ns")),
                         str(c["hot_path_drops"]), output.ms(bp["mean_ns"]), output.ms(bp["std_ns"], 3),
                         f"{c['cpu']['mean_percent']['mean']:.1f}",
                         f"{c['memory']['rss_max_bytes']['mean'] / 2 ** 20:.1f}"))
        lines.append("\n".join(output.table(rows)))
        lines.append("(times in ms; '±runs' is the std of the per-run means; min/max/std/p99 over all samples of all runs;"
                     " 'sim mean': the same KPI in the simulator)")
        lines += accounting_lines(result)
        disturbed = [f"{n} run {d['run']} ({d['cpu_percent']:.0f} %)" for n, c in result["configs"].items()
                     for d in c.get("disturbed_runs", [])]
        if disturbed:
            lines.append("DISTURBED runs (process CPU below 75 % of the model's demand: another load took the core; "
                         "their figures are included): " + ", ".join(disturbed))
    with_platform = any(c.get("analysis_platform") for c in result["configs"].values())
    for chain, title in (("hot_path", "hot path, release of the LiDAR timer -> end of ObjectCollisionEstimator (ms):"),
                         ("behavior_planner", "behavior planner chain, release -> end (ms):")):
        head = ["config", "measured mean", "measured worst", "simulated mean", "simulated WCRT", "analysis", "bound"]
        model_rows = [tuple(head + (["bound, measured platform"] if with_platform else []))]
        key = f"{chain}_bound_ns"
        for name, c in result["configs"].items():
            sim = c.get("simulated", {}).get(chain, {})
            an = c.get("analysis", {})
            rc = c.get("runtime_chains", {}).get(chain, {})
            meas = rc.get("mean_ns", {})
            row = [name, output.ms(meas.get("mean")) if meas and meas.get("runs") else "-", output.ms(rc.get("wcrt_ns")), output.ms(sim.get("mean_ns")),
                   output.ms(sim.get("wcrt_ns")), an.get(f"{chain}_analysis") or an.get("analysis") or "-",
                   output.ms(an.get(key)) if an.get("analysis") else "-"]
            if with_platform:
                ap = c.get("analysis_platform") or {}
                row.append(output.ms(ap.get(key)) if ap.get("analysis") else "-")
            model_rows.append(tuple(row))
        lines.append(title)
        lines.append("\n".join(output.table(model_rows)))
    notes = [(n, c["analysis"]) for n, c in result["configs"].items()
             if c.get("analysis") and c["analysis"].get("hot_path_bound_ns") is None and c["analysis"].get("reason")]
    for n, an in notes:
        why = an["reason"]  # whole: a cut reason hides what to fix
        lines.append(f"  no bound for {n}: {why}")
    for n, c in result["configs"].items():
        ap, pl = c.get("analysis_platform") or {}, c.get("platform") or {}
        if ap and ap.get("hot_path_bound_ns") is None and ap.get("reason"):
            lines.append(f"  no bound with the measured platform for {n}: {ap['reason']}")
        if pl.get("reason"):
            lines.append(f"  no platform bound for {n}: {pl['reason']}")
        runs = [r for r in pl.get("runs", []) if "cpus" in r]
        if runs:
            lines.append(f"  platform beside {n} (SCHED_FIFO 99 probe): " + "; ".join(
                f"run {i + 1}: " + ", ".join(f"cpu {cpu} {v['blackout_ms']:.1f} ms lost, longest {v['longest_ms']:.1f} ms"
                                             for cpu, v in r["cpus"].items()) for i, r in enumerate(runs)))
    if with_platform:
        lines.append("('bound, measured platform': the same analysis with the hosts' blackout curve measured beside the "
                     "runs — CPU time the hypervisor, interrupts or the kernel took above every thread, and the probe's own)")
    if result.get("checks") and result.get("system") == "upstream":
        lines += upstream_checks_lines(result["checks"], result["load"])
    elif result.get("checks"):
        lines.append("targets met (PiCAS / EDF configurations):")
        for name, ch in result["checks"].items():
            if ch.get("no_samples"):
                lines.append(f"  {name}: no hot-path sample reached the sink")
                continue
            parts = [f"latency/floor {ch['latency_over_floor']:.2f} (<= {ch['floor_limit']}: {'yes' if ch['within_floor'] else 'no'})"]
            if "vs_ros_default_st" in ch:
                parts.append(f"vs ros-default-st {ch['vs_ros_default_st']:.2f} (<= 0.5: "
                             f"{'yes' if ch['at_most_half_of_ros_default_st'] else 'no'})")
            parts.append(f"zero drops: {'yes' if ch['zero_drops'] else 'no'}")
            parts.append(f"BP std < 0.1 ms: {'yes' if ch['planner_period_std_below_0.1ms'] else 'no'}")
            lines.append(f"  {name}: " + ", ".join(parts))
    return "\n".join(lines)


def upstream_checks_lines(ch: dict, load: str) -> list[str]:
    """The chainrt configurations against the best stock rclcpp executor of the same run."""
    yes = {True: "yes", False: "no"}
    lines = [f"against the best stock rclcpp executor, {ch['best_stock']} (mean {output.ms(ch['best_stock_mean_ns'])} ms, "
             f"max {output.ms(ch['best_stock_max_ns'])} ms; smallest stock max {output.ms(ch['least_stock_max_ns'])} ms):"]
    for name, r in ch["configs"].items():
        m = r["met"]
        mx = "-" if r["max_vs_best_stock_max"] is None else f"{r['max_vs_best_stock_max']:.2f}"
        lines.append(f"  {name}: mean {r['mean_vs_best_stock']:.2f}x (<= {r['mean_target']}: {yes[m['mean']]}), "
                     f"p99/mean {r['p99_over_mean']:.2f} (<= 1.15: {yes[m['p99']]}), max {mx}x (<= 0.6: {yes[m['max']]}), "
                     f"drops {r['drops']}, BP std {r['planner_period_std_ns'] / 1e6:.3f} ms (< 0.1: {yes[m['planner_std']]})")
    free = ch.get("platform_free") or {}
    if free.get("configs"):
        lines.append("over the platform-free samples" + (
            f" (smallest stock max: {free['least_stock']}, {output.ms(free['least_stock_max_ns'])} ms):"
            if free.get("least_stock") else " (no stock executor measured):"))
        for name, r in free["configs"].items():
            m, std = r["met"], r["planner_period_std_ns"]
            lines.append(f"  {name}: p99/mean {r['p99_over_mean']:.2f} (<= 1.15: {yes[m['p99']]}), max/mean "
                         f"{r['max_over_mean']:.2f} (<= 1.3: {yes[m['max']]}), max {output.ms(r['max_ns'])} ms (below every "
                         f"stock max: {yes[m['below_every_stock_max']]}), BP std "
                         + ("-" if std is None else f"{std / 1e6:.3f} ms") + f" (< 0.1: {yes[m['planner_std']]})")
    return lines



def public_json(result: dict, with_samples: bool = False) -> dict:
    """The result without the bulky sample lists (unless asked) and usage series."""
    out = json.loads(json.dumps(result))
    for c in out["configs"].values():
        c.pop("gantt", None)
        if not with_samples:
            c.pop("samples", None)
            c.pop("usage_series", None)
    return out


def write_csv(result: dict, path: Path) -> None:
    fields = ["config", "run", "hot_path_latency_min_ns", "hot_path_latency_mean_ns", "hot_path_latency_max_ns",
              "hot_path_latency_std_ns", "hot_path_latency_p99_ns", "hot_path_samples", "hot_path_drops",
              "behavior_planner_period_mean_ns", "behavior_planner_period_std_ns", "behavior_planner_period_min_ns",
              "behavior_planner_period_max_ns", "cpu_percent", "rss_max_bytes"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for name, c in result["configs"].items():
            rows = [(str(i + 1), r) for i, r in enumerate(c.get("runs", []))]
            if "hot_path_latency" in c:
                rows.append(("all", dict(c, cpu_percent=c["cpu"]["mean_percent"]["mean"],
                                         rss_max_bytes=c["memory"]["rss_max_bytes"]["max"])))
            for run, r in rows:
                lat, bp = r["hot_path_latency"], r["behavior_planner_period"]
                w.writerow([name, run, lat["min_ns"], f"{lat['mean_ns']:.0f}", lat["max_ns"], f"{lat['std_ns']:.0f}",
                            lat["p99_ns"], lat["count"], r["hot_path_drops"], f"{bp['mean_ns']:.0f}",
                            f"{bp['std_ns']:.0f}", bp["min_ns"], bp["max_ns"], f"{r['cpu_percent']:.2f}",
                            int(r["rss_max_bytes"])])


# ------------------------------------------------------------------------------------ plots
def _title(result: dict, what: str) -> str:
    pin = f", core {result['pin_core']}" if result.get("pin_core") is not None else ""
    return f"{what} — {result['load']} load, {result['duration_ns'] / 1e9:g} s x {result['repeat']} runs{pin}"


def summary_plot(ax, names: list[str], stats: list[dict], run_means: list[list[float]], unit: float = MS) -> None:
    """Upstream's summary plot: per configuration a box from mean - std to mean + std, a line
    at the mean, whiskers from min to max; dots: the mean of each run."""
    from matplotlib.patches import Rectangle
    for i, (s, runs) in enumerate(zip(stats, run_means)):
        mean, std = s["mean_ns"] / unit, s["std_ns"] / unit
        lo, hi = s["min_ns"] / unit, s["max_ns"] / unit
        ax.add_patch(Rectangle((i - 0.3, mean - std), 0.6, 2 * std, facecolor=f"C{i % 10}", alpha=0.35,
                               edgecolor=f"C{i % 10}"))
        ax.plot([i - 0.3, i + 0.3], [mean, mean], color=f"C{i % 10}", lw=2)
        ax.plot([i, i], [lo, mean - std], color="k", lw=1)
        ax.plot([i, i], [mean + std, hi], color="k", lw=1)
        ax.plot([i - 0.12, i + 0.12], [lo, lo], color="k", lw=1)
        ax.plot([i - 0.12, i + 0.12], [hi, hi], color="k", lw=1)
        if runs:
            ax.plot([i + 0.38] * len(runs), [r / unit for r in runs], "k.", ms=4)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=25, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.grid(axis="y", alpha=0.3)


def plot_all(result: dict, out_dir: Path) -> list[Path]:
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    measured = {n: c for n, c in result["configs"].items() if "hot_path_latency" in c and c["hot_path_latency"]["count"]}
    names = list(measured)
    if names:
        # hot-path latency summary
        fig, ax = plt.subplots(figsize=(8, 4.5))
        summary_plot(ax, names, [measured[n]["hot_path_latency"] for n in names],
                     [[r["hot_path_latency"]["mean_ns"] for r in measured[n]["runs"] if r["hot_path_latency"]["count"]]
                      for n in names])
        floor = result.get("hot_path_floor_ns")
        if floor:
            ax.axhline(floor / MS, color="green", ls="--", lw=1, label=f"floor {floor / MS:.1f} ms")
            limit = 1.3 if result["load"] == "stressed" else 1.15
            ax.axhline(limit * floor / MS, color="green", ls=":", lw=1, label=f"{limit} x floor")
            ax.legend(loc="upper right", fontsize=8)
        ax.set_ylabel("hot-path latency [ms]")
        ax.set_title(_title(result, "Hot-path latency (mean ± std, min/max, • run means)"), fontsize=9)
        files.append(_save(fig, out_dir / "hot_path_latency.png", plt))
        # latency CDF
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for i, n in enumerate(names):
            xs = sorted(measured[n].get("samples", {}).get("hot_path_latency_ns", []))
            if xs:
                ax.step([x / MS for x in xs], [(k + 1) / len(xs) for k in range(len(xs))], where="post",
                        label=n, color=f"C{i % 10}")
        if floor:
            ax.axvline(floor / MS, color="green", ls="--", lw=1, label="floor")
        ax.set_xlabel("hot-path latency [ms]")
        ax.set_ylabel("fraction of samples")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(_title(result, "Hot-path latency CDF"), fontsize=9)
        files.append(_save(fig, out_dir / "hot_path_latency_cdf.png", plt))
        # behaviour planner period
        fig, ax = plt.subplots(figsize=(8, 4.5))
        summary_plot(ax, names, [measured[n]["behavior_planner_period"] for n in names],
                     [[r["behavior_planner_period"]["mean_ns"] for r in measured[n]["runs"]
                       if r["behavior_planner_period"]["count"]] for n in names])
        ax.axhline(100, color="green", ls="--", lw=1, label="100 ms")
        ax.set_ylabel("behaviour-planner period [ms]")
        ax.legend(fontsize=8)
        ax.set_title(_title(result, "Behaviour-planner period (mean ± std, min/max, • run means)"), fontsize=9)
        files.append(_save(fig, out_dir / "behavior_planner_period.png", plt))
        # drops (no plot when no run dropped anything: an axis of zeros says less than the table)
        if any(r["hot_path_drops"] for n in names for r in measured[n]["runs"]):
            fig, ax = plt.subplots(figsize=(8, 4))
            for i, n in enumerate(names):
                sp = measured[n]["spread"]["hot_path_drops"]
                ax.bar(i, sp["mean"], yerr=sp["std"], color=f"C{i % 10}", alpha=0.7, capsize=4)
                ax.plot([i] * len(measured[n]["runs"]), [r["hot_path_drops"] for r in measured[n]["runs"]], "k.", ms=4)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=25, ha="right")
            ax.set_ylabel("hot-path drops per run")
            ax.grid(axis="y", alpha=0.3)
            ax.set_title(_title(result, "Hot-path drops (mean ± std over runs, • each run)"), fontsize=9)
            files.append(_save(fig, out_dir / "hot_path_drops.png", plt))
        # CPU and memory over time (first run of each configuration)
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for i, n in enumerate(names):
            series = measured[n].get("usage_series", [])
            if not series:
                continue
            t = [s["t_ns"] / 1e9 for s in series]
            a1.plot(t, [s["cpu_percent"] for s in series], color=f"C{i % 10}", lw=0.8, label=n)
            a2.plot(t, [s["rss_bytes"] / 2 ** 20 for s in series], color=f"C{i % 10}", lw=0.8, label=n)
        a1.set_ylabel("process CPU [% of one core]")
        a2.set_ylabel("resident memory [MiB]")
        a2.set_xlabel("time since start [s]")
        a1.grid(alpha=0.3)
        a2.grid(alpha=0.3)
        a1.legend(fontsize=7, ncol=2)
        a1.set_title(_title(result, "CPU and memory of the process (first run)"), fontsize=9)
        files.append(_save(fig, out_dir / "cpu_memory.png", plt))
    # executor traces: one Gantt chart per configuration (first run)
    for n, c in result["configs"].items():
        g = c.get("gantt")
        if g and g["events"]:
            files.append(draw_gantt(g, out_dir / f"gantt_{n}.png", plt,
                                    f"{n}: executor threads from 1 ms before a LiDAR release ({result['load']} load)"))
    # measured chains vs simulator vs analysis
    allnames = list(result["configs"])
    series = []
    for n in allnames:
        c = result["configs"][n]
        meas = c.get("runtime_chains", {}).get("hot_path", {}).get("mean_ns", {})
        series.append((meas.get("mean") if meas and meas.get("runs") else None,
                       c.get("runtime_chains", {}).get("hot_path", {}).get("wcrt_ns"),
                       c.get("simulated", {}).get("hot_path", {}).get("mean_ns"),
                       c.get("simulated", {}).get("hot_path", {}).get("wcrt_ns"),
                       c.get("analysis", {}).get("hot_path_bound_ns"),
                       (c.get("analysis_platform") or {}).get("hot_path_bound_ns")))
    labels = ["measured mean (runtime)", "measured worst", "simulated mean", "simulated WCRT", "analysis bound",
              "bound, measured platform"]
    # only the series that have a value somewhere (no bars of zeros)
    keep = [k for k in range(len(labels)) if any(s[k] is not None for s in series)]
    series = [tuple(s[k] for k in keep) for s in series]
    labels = [labels[k] for k in keep]
    if keep:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        w = 0.8 / len(labels)
        for k, lab in enumerate(labels):
            xs = [i + (k - (len(labels) - 1) / 2) * w for i in range(len(allnames))]
            ys = [s[k] / MS if s[k] is not None else 0 for s in series]
            ax.bar(xs, ys, w, label=lab, color=f"C{keep[k]}")
            for x, s in zip(xs, series):
                if s[k] is None:
                    ax.text(x, 0.5, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(allnames)))
        ax.set_xticklabels(allnames, rotation=25, ha="right")
        ax.set_ylabel("hot path, LiDAR release -> end [ms]")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title(_title(result, "Hot path: real run vs simulator vs analysis"), fontsize=9)
        files.append(_save(fig, out_dir / "model_vs_measured.png", plt))
    return files


HOT_PATH_CALLBACKS = ("PointsTransformerFront/", "PointsTransformerRear/", "PointCloudFusion/", "RayGroundFilter/",
                      "EuclideanClusterDetector/RayGroundFilter", "ObjectCollisionEstimator/")
PLANNER_CALLBACKS = ("BehaviorPlanner/timer", "MPCController/", "VehicleInterface/", "VehicleDBWSystem/")


def _group(name: str) -> tuple[str, str]:
    if name.endswith("/timer") and name.startswith(("FrontLidarDriver", "RearLidarDriver")):
        return "LiDAR timers", "black"
    if name.startswith(HOT_PATH_CALLBACKS):
        return "hot path", "tab:red"
    if name.startswith(PLANNER_CALLBACKS):
        return "behaviour-planner chain", "tab:blue"
    return "other callbacks", "0.7"


def draw_gantt(g: dict, path: Path, plt, title: str) -> Path:
    """One row per executor thread; bars coloured by chain (hot path red, planner chain blue,
    LiDAR timers black ticks, the rest grey)."""
    threads, names = g["threads"], g["callbacks"]
    fig, ax = plt.subplots(figsize=(12, 1.4 + 0.5 * len(threads)))
    seen = {}
    for th, cb, _rel, s, f in g["events"]:
        label, colour = _group(names[cb])
        w = max(f - s, 300_000) / MS  # ticks for the short callbacks
        bar = ax.broken_barh([(s / MS, w)], (th - 0.38, 0.76), facecolors=colour, edgecolors="white", linewidth=0.3)
        seen.setdefault(label, bar)
    period = g.get("lidar_period_ns")
    if period:  # the LiDARs' nominal releases (the window starts 1 ms before one)
        k = 0
        while MS + k * period <= g["window_ns"]:
            ax.axvline((MS + k * period) / MS, color="black", ls=":", lw=0.8)
            k += 1
    ax.set_yticks(range(len(threads)))
    ax.set_yticklabels([f"{t['executor']}/{t['name']}" for t in threads], fontsize=8)
    ax.set_xlim(0, g["window_ns"] / MS)
    ax.set_ylim(-0.6, len(threads) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("time [ms]")
    ax.set_title(title, fontsize=9)
    order = ["LiDAR timers", "hot path", "behaviour-planner chain", "other callbacks"]
    ax.legend([seen[k] for k in order if k in seen], [k for k in order if k in seen], fontsize=7, loc="upper left",
              bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    return _save(fig, path, plt)


def _save(fig, path: Path, plt) -> Path:
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


def write_html(result: dict, out_dir: Path, images: list[Path], table: str) -> Path:
    """index.html: the KPI tables (each with the one definition of the latency it shows), the
    verdict, and every plot with a caption saying what to look at (chainrt.report.html)."""
    path = out_dir / "index.html"
    path.write_text(bench_page.render(result, images))
    return path


def markdown_summary(result: dict) -> str:
    """A Markdown table of the KPIs with their spread over runs (for docs and READMEs)."""
    if not has_measurements(result):
        return ""
    pin = f", pinned to core {result['pin_core']}" if result.get("pin_core") is not None else ""
    rt = f", SCHED_FIFO base {result['rt_priority']}" if result.get("rt_priority") is not None else ""
    head = (f"Load **{result['load']}** (model demand {result['demand'] * 100:.0f} % of one core), "
            f"{result['duration_ns'] / 1e9:g} s x {result['repeat']} runs per configuration{pin}{rt}; "
            f"hot-path floor {output.ms(result['hot_path_floor_ns'])} ms. Mean ± std over the runs' means; "
            f"max and p99 over all samples.\n\n")
    rows = ["| configuration | hot-path latency mean [ms] | max [ms] | p99 [ms] | mean / floor | simulated mean [ms] "
            "| hot-path drops | planner period std [ms] | CPU [%] |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in result["configs"].items():
        if "hot_path_latency" not in c:
            continue
        sp = c["spread"]
        lat = c["hot_path_latency"]
        bp = sp["behavior_planner_period_std_ns"]
        cpu = c["cpu"]["mean_percent"]
        sim = c.get("simulated", {}).get("hot_path_latency", {}).get("mean_ns")
        rows.append(f"| `{name}` | {output.ms(sp['hot_path_latency_mean_ns']['mean'])} ± "
                    f"{output.ms(sp['hot_path_latency_mean_ns']['std'])} | {output.ms(lat['max_ns'])} | {output.ms(lat['p99_ns'])} | "
                    f"{'-' if c['latency_over_floor'] is None else format(c['latency_over_floor'], '.2f')} | {output.ms(sim)} | {sp['hot_path_drops']['mean']:.1f} ± "
                    f"{sp['hot_path_drops']['std']:.1f} | {output.ms(bp['mean'], 3)} ± {output.ms(bp['std'], 3)} | "
                    f"{cpu['mean']:.1f} ± {cpu['std']:.1f} |")
    return head + "\n".join(rows) + "\n"


def write_report(result: dict, out_dir: Path, plots: bool = True) -> dict:
    """Everything into out_dir: result.json (with samples), kpis.csv, PNGs, index.html."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "result.json").write_text(json.dumps(public_json(result, with_samples=True)))
    if has_measurements(result):
        write_csv(result, out_dir / "kpis.csv")
    table = format_table(result)
    md = markdown_summary(result)
    if md:
        (out_dir / "summary.md").write_text(md)
    images = plot_all(result, out_dir) if plots else []
    page = write_html(result, out_dir, images, table)
    return {"json": out_dir / "result.json", "csv": out_dir / "kpis.csv", "html": page, "images": images,
            "table": table}
