"""Case Study 1 of the EDF ready-queue paper (Sec. VI-A, Fig. 3 and 4): the F1Tenth car's driving
chain, two dummy chains and auxiliary fixed-priority tasks (``examples/f1tenth.yaml``) under

- ``default``: ROS 2's default executor (ros-default; with 2 threads the multi-threaded one),
- ``edf``: the EDF ready-queue executor with the auxiliary tasks as fixed-priority callbacks that
  chain callbacks always precede (policy ``mixed``, the paper's configuration),
- ``fp``: the fixed-priority ready-queue executor (driving chain > dummy 1 > dummy 2),

each with 1 and 2 threads (thread k pinned to core k at SCHED_FIFO 99, as the paper's Jetson
runs). Reports, as Fig. 4, the average and the maximum latency of every chain — the driving
chain completes when both drivers (steering and throttle) have run — with the spread over
``--runs`` runs (run k draws every timer's phase from its seed), a CSV, a JSON summary and a
figure next to the paper's numbers.

In the deterministic simulator by default. ``--real`` runs every configuration on real ROS 2, the
repetitions interleaved: the model's nodes generated as plain rclcpp nodes (``chainrt.stock``,
every callback burning its execution time of thread CPU time, one binary) under rclcpp's stock
executor for ``default`` (SingleThreaded on one thread, MultiThreaded on two, as the paper's
baseline) and under chainrt's ChainExecutor for ``edf`` and ``fp``; the stock executors' threads
get the same pinning and SCHED_FIFO priority as the ChainExecutor's (``--no-thread-params``:
none for either). Where chainrt was built without rclcpp, ``--real`` runs chainrt's runtime
(``chainrt-run``) and ``default`` is chainrt's emulation of ROS 2's default executor, labelled so.
Reports the 1-min load and the hypervisor steal beside each run.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import random
import statistics
import sys

import yaml

from .. import _core, cliargs, output, stock
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import lame_real as lr

CONFIGS = {"default": "ros-default", "edf": "mixed", "fp": "fp"}
LABELS = {"default": "ROS 2 default", "edf": "EDF (ready queue)", "fp": "FP (ready queue)"}
# Fig. 4 / Sec. VI-A: maximum latencies (ms) the paper states, by (configuration, threads, chain).
PAPER_MAX_MS = {("default", 2, "driving"): 46.16, ("edf", 2, "driving"): 19.23, ("fp", 2, "driving"): 17.25,
                ("default", 1, "driving"): 208.19, ("edf", 1, "driving"): 66.48, ("fp", 1, "dummy2"): 8660.0}


def _example_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "examples", "f1tenth.yaml"))


def add_parser(esub) -> None:
    p = esub.add_parser("f1tenth", help="EDF ready-queue paper Case Study 1 (Fig. 4): F1Tenth driving chain, "
                                        "default vs EDF vs FP executor on 1 and 2 threads")
    p.add_argument("--model", type=cliargs.model_path, default=_example_path(), help="the case study's model (default examples/f1tenth.yaml)")
    p.add_argument("--duration", type=cliargs.seconds, default=60.0, help="seconds per configuration and run (default 60)")
    p.add_argument("--runs", type=cliargs.positive, default=3, help="runs per configuration, random timer phases (default 3)")
    p.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    p.add_argument("--configs", default="default,edf,fp", help="configurations, comma-separated (default all)")
    p.add_argument("--out", default="out/f1tenth", help="output folder")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--real", action="store_true",
                   help="run on real ROS 2: the model's nodes as rclcpp nodes under rclcpp's stock executor (default) "
                        "and chainrt's ChainExecutor (edf, fp); chainrt's runtime where rclcpp is not built")
    p.add_argument("--no-thread-params", action="store_true",
                   help="--real: leave every thread under normal scheduling (no pinning, no SCHED_FIFO 99)")
    p.add_argument("--lock", default="", type=cliargs.lock_file, metavar="FILE",
                   help="--real: hold an flock on FILE during each run (a machine-wide measurement lock)")
    p.set_defaults(exp_func=run)


def configured(doc: dict, config: str, threads: int) -> dict:
    """The model with the configuration's policy and its first `threads` threads (the paper's one
    thread per core)."""
    d = copy.deepcopy(doc)
    for e in d["executors"]:
        e["policy"] = CONFIGS[config]
        if len(e.get("threads", [])) < threads:
            raise ValueError(f"executor {e['name']} has {len(e.get('threads', []))} threads; {threads} asked")
        e["threads"] = e["threads"][:threads]
    return d


def _phases(model, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    return {cb.name: rng.randrange(0, cb.period) for cb in model.callbacks if cb.kind == "timer" and cb.period > 0}


def _simulate(model, seconds: float, seed: int) -> dict:
    summary, _ = _core._simulate(model, int(seconds * 1e9), seed, None, None, "wcet", "fixed", False, 0,
                                 _phases(model, seed))
    return json.loads(summary)


def _list(text: str, allowed, what: str) -> list:
    out = [x.strip() for x in str(text).split(",") if x.strip()]
    if not out or any(x not in allowed for x in out):
        raise ValueError(f"--{what} takes {', '.join(map(str, allowed))}")
    return out


def _row(config: str, t: int, k: int, name: str, c: dict, lost_key: str) -> dict:
    n = c.get("instances", 0)
    return {"config": config, "threads": t, "run": k, "chain": name,
            "mean_ms": c.get("mean_ns", 0) / 1e6 if n else None,
            "max_ms": c.get("wcrt_ns", c.get("max_ns", 0)) / 1e6 if n else None,
            "instances": n, "released": c.get("released", n), "drops": c.get(lost_key, 0),
            "deadline_misses": c.get("deadline_misses", 0)}


def _measure_sim(args, models: dict, chains: list[str]) -> list[dict]:
    rows = []
    for (config, t), model in models.items():
        for k in range(args.runs):
            r = _simulate(model, args.duration, 1000 + k)
            rows += [_row(config, t, k, name, r["chains"].get(name, {}), "drops") for name in chains]
    return rows


def stock_executor(config: str, threads: int) -> tuple[str, str | None]:
    """The generated nodes' executor of a configuration on real rclcpp, and the ChainExecutor's
    policy: the paper's default is ROS 2's default executor, the multi-threaded one with 2 threads."""
    if config == "default":
        return ("single" if threads == 1 else "multi"), None
    return "chainrt", CONFIGS[config]


def label(config: str, threads: int, backend: str) -> str:
    """How a configuration is named in the table: what actually ran it."""
    if backend == "rclcpp":
        executor, policy = stock_executor(config, threads)
        return stock.LABELS[executor] + (f" {policy}" if policy else "")
    if backend == "chainrt-run" and config == "default":
        return "chainrt's emulation of ROS 2 default"
    return LABELS[config]


def _measure_real(args, doc: dict, configs: list[str], threads: list[int], chains: list[str]):
    """Every configuration on real ROS 2, repetitions interleaved (run k of every configuration
    before run k+1 of any): the model's nodes generated as rclcpp nodes (chainrt.stock) under the
    stock executor or the ChainExecutor, one binary; without rclcpp, chainrt's runtime."""
    backend = "rclcpp" if stock.unavailable() is None else "chainrt-run"
    rows, loads = [], []
    for k in range(args.runs):
        for config in configs:
            for t in threads:
                path = os.path.join(args.out, f"{config}_{t}.yaml")
                with open(path, "w") as f:
                    yaml.safe_dump(configured(doc, config, t), f, sort_keys=False)
                if backend == "chainrt-run":
                    r, load = lr.measured_run(path, int(args.duration * 1e9), args.lock, 1_000_000_000)
                else:
                    executor, policy = stock_executor(config, t)
                    with lr.measurement_lock(args.lock):
                        load0, j0 = lr.loadavg(), lr.cpu_jiffies()
                        # (the ChainExecutor runs the model's t threads with their pinning and
                        # priority; --threads would make them plain threads)
                        r = stock.run(path, executor, duration=args.duration, policy=policy,
                                      threads=t if executor == "multi" else None,
                                      thread_params=not args.no_thread_params)
                        load = {"load_before": load0, "load_after": lr.loadavg(),
                                "steal_percent": lr.steal_percent(j0, lr.cpu_jiffies())}
                loads.append({"config": config, "threads": t, "run": k, **load})
                rows += [_row(config, t, k, name, r["chains"].get(name, {}),
                              "lost" if backend == "rclcpp" else "drops") for name in chains]
    return rows, loads, backend


def run(args) -> int:
    try:
        configs = _list(args.configs, CONFIGS, "configs")
        threads = [int(t) for t in _list(args.threads, ("1", "2"), "threads")]
        if args.runs < 1 or args.duration <= 0:
            raise ValueError("--runs and --duration must be positive")
        with open(args.model) as f:
            doc = yaml.safe_load(f)
        models = {(c, t): load_model_from_string(yaml.safe_dump(configured(doc, c, t), sort_keys=False),
                                                 f"f1tenth_{c}_{t}.yaml") for c in configs for t in threads}
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError, IndexError) as err:
        print(f"chainrt experiment f1tenth: {err}", file=sys.stderr)
        return 1
    chains = [c.name for c in next(iter(models.values())).chains]
    os.makedirs(args.out, exist_ok=True)
    try:
        rows, loads, backend = (_measure_real(args, doc, configs, threads, chains) if args.real
                                else (_measure_sim(args, models, chains), [], "simulator"))
    except Exception as err:  # the runs' one-line errors
        print(f"chainrt experiment f1tenth: {err}", file=sys.stderr)
        return 1
    with open(os.path.join(args.out, "f1tenth.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    def stat(values):
        v = [x for x in values if x is not None]
        if not v:
            return None
        return {"mean": statistics.fmean(v), "min": min(v), "max": max(v)}

    # A chain that completed no instance in a run starved: its latency is at least the run.
    starved_ms = args.duration * 1e3
    table = {}
    for config in configs:
        for t in threads:
            for name in chains:
                rs = [r for r in rows if r["config"] == config and r["threads"] == t and r["chain"] == name]
                table[f"{config}/{t}/{name}"] = {
                    "config": config, "threads": t, "chain": name,
                    "average_ms": stat([r["mean_ms"] for r in rs]),
                    "max_ms": stat([r["max_ms"] if r["instances"] else starved_ms for r in rs]),
                    "starved_runs": sum(1 for r in rs if not r["instances"]),
                    "drops": sum(r["drops"] for r in rs), "deadline_misses": sum(r["deadline_misses"] for r in rs),
                    "instances": sum(r["instances"] for r in rs), "released": sum(r["released"] for r in rs),
                    "paper_max_ms": PAPER_MAX_MS.get((config, t, name))}
    summary = {"mode": "real ROS 2" if args.real else "simulator", "backend": backend,
               "labels": {f"{c}/{t}": label(c, t, backend) for c in configs for t in threads}, "runs": args.runs, "seconds": args.duration,
               "threads": threads, "configs": configs, "chains": chains,
               "deadlines_ms": {c.name: c.deadline / 1e6 for c in next(iter(models.values())).chains},
               "table": table, "load": loads}
    with open(os.path.join(args.out, "f1tenth.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"EDF ready-queue paper, Case Study 1 (F1Tenth), {summary['mode']}{f' ({backend})' if args.real else ''}, {args.runs} runs x "
          f"{args.duration:g} s "
          f"per configuration (paper: Jetson AGX Xavier, threads pinned, SCHED_FIFO 99)")
    rows = [("threads", "configuration", *(f"{c} avg / max ms" for c in chains))]
    for t in threads:
        for config in configs:
            cells = []
            for name in chains:
                e = table[f"{config}/{t}/{name}"]
                avg = "-" if e["average_ms"] is None else f"{e['average_ms']['mean']:.1f}"
                m = e["max_ms"]
                mx = f"{m['mean']:.1f}" + (f" ({m['min']:.1f}-{m['max']:.1f})" if args.runs > 1 else "")
                mx += " (starved)" if e["starved_runs"] else ""
                if backend == "rclcpp" and e["drops"]:  # released instances that never completed
                    mx += f" ({e['drops']} of {e['released']} lost)"
                paper = f" [paper {e['paper_max_ms']:g}]" if e["paper_max_ms"] else ""
                cells.append(f"{avg} / {mx}{paper}")
            rows.append((t, label(config, t, backend), *cells))
    print("\n".join(output.table(rows, left=(1,), indent="  ")))
    lr.report_tail(args.out, "f1tenth", loads, lambda x: f"{x['config']} {x['threads']} thread(s) run {x['run']}",
                   None if args.no_plot else lambda path: _plot(summary, path))
    return 0


def _plot(summary: dict, path: str) -> None:
    """Fig. 4's layout: one panel per thread count; per chain a group of bars (one per
    configuration) with the average latency as the bar and the maximum as a marker above it;
    log scale (the overloaded single thread spans orders of magnitude)."""

    plt = pyplot()

    threads, configs, chains = summary["threads"], summary["configs"], summary["chains"]
    fig, axes = plt.subplots(1, len(threads), figsize=(6 * len(threads), 4.2), squeeze=False)
    colors = {"default": "tab:red", "edf": "tab:blue", "fp": "tab:green"}
    width = 0.8 / len(configs)
    for ax, t in zip(axes[0], threads):
        for j, config in enumerate(configs):
            xs = [i + (j - (len(configs) - 1) / 2) * width for i in range(len(chains))]
            avg = [(summary["table"][f"{config}/{t}/{c}"]["average_ms"] or {"mean": 0})["mean"] for c in chains]
            mx = [summary["table"][f"{config}/{t}/{c}"]["max_ms"]["mean"] for c in chains]
            ax.bar(xs, avg, width, color=colors[config], alpha=0.75, label=f"{summary['labels'][f'{config}/{t}']}: average")
            ax.plot(xs, mx, "v", color=colors[config], mec="k", label=f"{summary['labels'][f'{config}/{t}']}: maximum")
            for x, c in zip(xs, chains):
                paper = summary["table"][f"{config}/{t}/{c}"]["paper_max_ms"]
                if paper:
                    ax.plot([x], [paper], "x", color=colors[config], ms=8)
        for i, c in enumerate(chains):
            ax.hlines(summary["deadlines_ms"][c], i - 0.45, i + 0.45, colors="magenta", lw=1.5)
        ax.set_xticks(range(len(chains)))
        ax.set_xticklabels(chains)
        ax.set_yscale("log")
        ax.set_ylabel("latency [ms]")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''} ({'overloaded, U = 1.59' if t == 1 else 'U = 1.59 on 2'})")
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"F1Tenth case study (EDF ready-queue paper Fig. 4), {summary['mode']}, {summary['runs']} runs x "
                 f"{summary['seconds']:g} s; magenta: deadlines; x: the paper's maxima", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
