"""Shared accelerators (PiCAS Sec. IV; the server after Kim et al., JSA 2018): a high-priority
perception chain and two lower-priority chains share one device, reached directly (first come,
first served: the calling thread blocks) or through the chain-priority server. Per access mode,
the perception chain's worst and p99 response, its deadline misses and the analysis bound
(``picas-st``), in the simulator and on real ROS 2 (``chainrt run``: the executors on rcl, the
emulated device or, with ``--device cuda``, a CUDA GPU; ``--runs`` runs).

The scenario (:func:`scenario_yaml`, two cores): ``perception`` (core 0, SCHED_FIFO 30) runs the
detector, 1 ms of CPU, a segment of copy-in 1 ms + kernel 6 ms + copy-out 1 ms, then 2 ms; on
core 1 ``planning`` (priority 20) asks for 20 ms of kernel at 1 ms and ``mapping`` (priority 10)
for 25 ms at 2 ms; the detector asks at 6 ms, every 100 ms. Under direct access it waits behind
both lower-priority kernels (the priority inversion) and misses its 40 ms deadline; the server
(SCHED_FIFO 90 on core 1, ``--overhead`` per request) serves it right after the kernel in
service.

The verdict (:func:`verdict`): the inversion is shown when the perception chain's worst
response under direct access exceeds its worst under the server; it is removed when, under the
server, the worst is at most the analysis bound and no deadline is missed.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import sys

from .. import _core, accounting, cliargs, output
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import lame_real as lr

MODES = ("direct", "server")
DEVICES = ("emulated", "cuda")
HIGH = "perception"
ANALYSIS = "picas-st"


def scenario_yaml(access: str, overhead_ms: float = 0.2, period_ms: int = 100, device: str = "emulated") -> str:
    """The experiment's model for one access mode ('direct' or 'server') on the emulated device
    or a CUDA GPU (``device: cuda``: the segments run on the GPU's streams, docs/accelerator.md)."""
    if access not in MODES:
        raise ValueError(f"access must be one of {', '.join(MODES)}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}")
    kind = "" if device == "emulated" else f", device: {device}"
    acc = (f"{{name: gpu, access: direct{kind}}}" if access == "direct" else
           f"{{name: gpu, access: server, priority: 90, cores: [1], overhead: {overhead_ms:g}ms{kind}}}")
    p = f"{period_ms}ms"
    return f"""name: accelerator-{access}
hosts: [{{name: h, cores: 2, accelerators: [{acc}]}}]
executors:
  - {{name: perception, host: h, process: app, policy: picas, threads: [{{name: t, cores: [0], priority: 30}}]}}
  - {{name: planning, host: h, process: app, policy: picas, threads: [{{name: t, cores: [1], priority: 20}}]}}
  - {{name: mapping, host: h, process: app, policy: picas, threads: [{{name: t, cores: [1], priority: 10}}]}}
nodes: [{{name: camera, executor: perception}}, {{name: planner, executor: planning}}, {{name: mapper, executor: mapping}}]
callbacks:
  - {{name: detect, kind: timer, node: camera, period: {p}, offset: 5ms, wcet: 3ms, priority: 30,
     accelerator_segments: [{{accelerator: gpu, after: 1ms, copy_in: 1ms, kernel: 6ms, copy_out: 1ms}}]}}
  - {{name: plan, kind: timer, node: planner, period: {p}, wcet: 2ms, priority: 20,
     accelerator_segments: [{{accelerator: gpu, after: 1ms, kernel: 20ms}}]}}
  - {{name: map, kind: timer, node: mapper, period: {p}, offset: 1ms, wcet: 2ms, priority: 10,
     accelerator_segments: [{{accelerator: gpu, after: 1ms, kernel: 25ms}}]}}
chains:
  - {{name: perception, callbacks: [detect], priority: 3, deadline: 40ms}}
  - {{name: planning, callbacks: [plan], priority: 2, deadline: {p}}}
  - {{name: mapping, callbacks: [map], priority: 1, deadline: {p}}}
"""


def add_parser(esub) -> None:
    p = esub.add_parser("accelerator", help="shared accelerator: priority inversion under direct access and its "
                                            "removal by the chain-priority server (simulator and real ROS 2)")
    p.add_argument("--duration", type=cliargs.seconds, default=10.0, help="seconds per run (default 10)")
    p.add_argument("--runs", type=cliargs.positive, default=3, help="real runs per access mode (default 3)")
    p.add_argument("--overhead", type=cliargs.number(0, 100, "a number of milliseconds"), default=0.2,
                   help="the server's overhead per request in ms, at most the 100 ms period (default 0.2)")
    p.add_argument("--device", choices=DEVICES, default="emulated",
                   help="what runs the segments in the real runs: the emulated device (default) or a CUDA GPU "
                        "(needs chainrt built with a CUDA toolkit, ROS 2 and a GPU on the machine)")
    p.add_argument("--out", type=cliargs.output_dir, default="out/accelerator", help="output folder")
    p.add_argument("--no-real", action="store_true", help="the simulator and the analysis only")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--lock", default="", type=cliargs.lock_file, metavar="FILE",
                   help="hold an flock on FILE during each real run (a machine-wide measurement lock)")
    p.add_argument("--no-probe", action="store_true",
                   help="do not run the platform probe beside the real runs (it reports each run's longest CPU "
                        "blackout: time the platform, not the model, kept a CPU; needs root)")
    p.set_defaults(exp_func=run)


def bound_ns(model) -> int | None:
    """The perception chain's WCRT bound (None: the analysis gives none)."""
    ok, why = _core._applicable(model, ANALYSIS)
    if not ok:
        return None
    return _core._analyze(model, ANALYSIS)["chains"][HIGH]["wcrt_bound_ns"]


def simulate(model, seconds: float) -> dict:
    summary, _ = _core._simulate(model, int(seconds * 1e9), 1, None, None, "wcet", "fixed", False, 0, {})
    return json.loads(summary)


def row(mode: str, where: str, run: int, result: dict, bound: int | None, extra: dict | None = None) -> dict:
    c = result["chains"].get(HIGH, {})
    n = c.get("instances", 0)
    r = {"mode": mode, "where": where, "run": run, "instances": n,
         "worst_ms": c.get("wcrt_ns", 0) / 1e6 if n else None, "p99_ms": c.get("p99_ns", 0) / 1e6 if n else None,
         "misses": c.get("deadline_misses", 0), "bound_ms": None if bound is None else bound / 1e6}
    a = ((result.get("accounting") or {}).get("chains") or {}).get(HIGH)
    if a:  # a real run's accounting: the instances above the bound by cause, the platform-free worst
        free = a["platform_free"] or {}
        r.update({k: a[k] for k in ("above", "platform", "overrun", "unexplained")},
                 free_worst_ms=None if free.get("max_ns") is None else free["max_ns"] / 1e6)
    r.update(extra or {})
    return r


def verdict(rows: list[dict]) -> dict:
    """Per place ('simulator', 'real'): inversion shown (direct's worst > the server's worst),
    removed (the server's worst <= its bound, no miss) — each True/False, None without data.
    A run that completed no instance counts as unbounded."""
    out = {}
    for where in sorted({r["where"] for r in rows}):
        worst = {}
        for mode in MODES:
            rs = [r for r in rows if r["where"] == where and r["mode"] == mode]
            if rs:
                worst[mode] = max(float("inf") if r["worst_ms"] is None else r["worst_ms"] for r in rs)
        server = [r for r in rows if r["where"] == where and r["mode"] == "server"]
        bound = server[0]["bound_ms"] if server else None
        shown = worst["direct"] > worst["server"] if len(worst) == 2 else None
        removed = (None if not server else
                   bound is not None and worst["server"] <= bound and all(r["misses"] == 0 for r in server))
        out[where] = {"inversion_shown": shown, "removed_by_server": removed,
                      "worst_direct_ms": worst.get("direct"), "worst_server_ms": worst.get("server"),
                      "server_bound_ms": bound}
    return out


def _spread(values: list[float]) -> str:
    v = [x for x in values if x is not None]
    if not v:
        return "-"
    if len(v) == 1:
        return f"{v[0]:.2f}"
    return f"{statistics.fmean(v):.2f} ± {statistics.stdev(v):.2f} ({min(v):.2f}..{max(v):.2f})"


def table(rows: list[dict]) -> list[str]:
    """One line per (place, mode): worst and p99 (mean ± std (min..max) over runs), misses,
    instances, the bound."""
    lines = [("where", "access", "runs", "worst ms", "p99 ms", "misses", "instances", "bound ms",
              "above: platform/overrun/unexplained", "platform-free worst ms")]
    for where in ("simulator", "real"):
        for mode in MODES:
            rs = [r for r in rows if r["where"] == where and r["mode"] == mode]
            if not rs:
                continue
            b = rs[0]["bound_ms"]
            counted = [r for r in rs if "above" in r]
            split = "/".join(str(sum(r[k] for r in counted)) for k in ("platform", "overrun", "unexplained"))
            lines.append((where, mode, len(rs), _spread([r["worst_ms"] for r in rs]), _spread([r["p99_ms"] for r in rs]),
                          sum(r["misses"] for r in rs), sum(r["instances"] for r in rs),
                          "none" if b is None else f"{b:.2f}",
                          f"{sum(r['above'] for r in counted)}: {split}" if counted else "-",
                          _spread([r.get("free_worst_ms") for r in counted])))
    return output.table(lines, left=(0, 1), indent="  ")


def accounting_lines(accounts: list[tuple[str, int, dict]], color: bool = False) -> list[str]:
    """Each real run's accounting as ``chainrt run`` reports it (chainrt.accounting.report_lines:
    per chain the instances above the bound by cause, raw and platform-free mean / p99 / max),
    with what limits it."""
    lines = []
    for mode, k, acc in accounts:
        lines.append(f"  {mode} run {k}:")
        lines += ["  " + ln for ln in accounting.report_lines(acc, color)]
        lines += [f"    note: {n}" for n in acc.get("notes", [])]
    return lines


def run(args) -> int:
    os.makedirs(args.out, exist_ok=True)
    rows, loads, accounts = [], [], []
    for mode in MODES:
        text = scenario_yaml(mode, args.overhead, device=args.device)
        model = load_model_from_string(text, f"accelerator_{mode}.yaml")
        bound = bound_ns(model)
        rows.append(row(mode, "simulator", 0, simulate(model, args.duration), bound))
        if args.no_real:
            continue
        path = os.path.join(args.out, f"accelerator_{mode}.yaml")
        with open(path, "w") as f:
            f.write(text)
        for k in range(args.runs):
            try:
                r, load = lr.measured_run(path, int(args.duration * 1e9), args.lock, 500_000_000,
                                           probe=not args.no_probe, bounds={HIGH: bound})
            except Exception as err:  # the runtime's one-line errors
                print(f"chainrt experiment accelerator: {err}", file=sys.stderr)
                return 1
            loads.append({"mode": mode, "run": k, **load})
            rows.append(row(mode, "real", k, r, bound, load))
            accounts.append((mode, k, r["accounting"]))
            for w in r.get("warnings", []):
                print(f"  {mode} run {k}: {w}", file=sys.stderr)
    v = verdict(rows)
    summary = {"seconds": args.duration, "runs": args.runs, "overhead_ms": args.overhead, "analysis": ANALYSIS,
               "device": args.device, "rows": rows, "verdict": v,
               "accounting": [{"mode": m, "run": k, **acc} for m, k, acc in accounts]}
    with open(os.path.join(args.out, "accelerator.json"), "w") as f:
        json.dump(summary, f, indent=2)
    with open(os.path.join(args.out, "accelerator.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["mode", "where", "run", "instances", "worst_ms", "p99_ms", "misses", "bound_ms",
                                          "above", "platform", "overrun", "unexplained", "free_worst_ms",
                                          "load_before", "load_after", "steal_percent", "longest_blackout_ms"],
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print(f"Shared accelerator: the {HIGH} chain under direct access and under the chain-priority server "
          f"({args.duration:g} s per run; bound: {ANALYSIS}; device: {args.device})")
    print("\n".join(table(rows)))
    if accounts:
        print("\n".join(accounting_lines(accounts, output.color_wanted())))
    for where, x in v.items():
        print(f"  {where}: inversion under direct access {'shown' if x['inversion_shown'] else 'NOT shown'}; "
              f"server {'removes it (worst <= bound, no miss)' if x['removed_by_server'] else 'does NOT remove it'}")
    lr.report_tail(args.out, "accelerator", loads, lambda x: f"{x['mode']} run {x['run']}",
                   None if args.no_plot else lambda path: plot(summary, path))
    ok = all(x["inversion_shown"] and x["removed_by_server"] for x in v.values())
    return 0 if ok else 2


def plot(summary: dict, path: str) -> None:
    """Per place, the perception chain's worst (bar) and p99 (marker) per access mode, every run
    a dot, the analysis bound as a line per mode and the deadline in magenta."""

    plt = pyplot()
    rows = summary["rows"]
    places = [w for w in ("simulator", "real") if any(r["where"] == w for r in rows)]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    colors = {"direct": "tab:red", "server": "tab:blue"}
    for i, where in enumerate(places):
        for j, mode in enumerate(MODES):
            rs = [r for r in rows if r["where"] == where and r["mode"] == mode and r["worst_ms"] is not None]
            if not rs:
                continue
            x = i + (j - 0.5) * 0.38
            ax.bar(x, statistics.fmean(r["worst_ms"] for r in rs), 0.34, color=colors[mode], alpha=0.7,
                   label=f"{mode}: worst (mean over runs)" if i == 0 else None)
            ax.plot([x] * len(rs), [r["worst_ms"] for r in rs], "o", color="k", ms=3)
            ax.plot([x] * len(rs), [r["p99_ms"] for r in rs], "_", color="w", ms=10, mew=2)
            b = rs[0]["bound_ms"]
            if b is not None:
                ax.hlines(b, x - 0.17, x + 0.17, colors="k", linestyles="--",
                          label="analysis bound" if i == 0 and j == 1 else None)
    ax.axhline(40, color="magenta", lw=1, label="deadline 40 ms")
    ax.set_xticks(range(len(places)))
    device = "a CUDA GPU" if summary.get("device") == "cuda" else "emulated device"
    ax.set_xticklabels(["simulator" if w == "simulator" else f"real ROS 2 ({device})" for w in places])
    ax.set_ylabel("perception chain response [ms]")
    ax.set_title(f"Shared accelerator: direct access vs chain-priority server ({summary['runs']} runs x "
                 f"{summary['seconds']:g} s; dots: runs, white: p99)", fontsize=9)
    top = max([r["worst_ms"] for r in rows if r["worst_ms"] is not None] + [40.0])
    ax.set_ylim(0, top * 1.5)  # room for the legend above every run's dot
    ax.legend(fontsize=7, loc="upper center", ncol=2)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
