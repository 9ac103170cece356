"""LaME Sec. 5.3 (Fig. 7), scaled to 2 cores, in the simulator: the overload scenario of
``lame-overload``; at ``--throttle-at`` (90 s) every execution time grows by 2.3/1.4 (the
paper's 2.3 -> 1.4 GHz switch; this VM cannot change its CPU frequency, so the simulator scales
the execution times). Deadline misses of the RT chains per window of ``--window`` seconds under

- ``ros-default``: the default multi-threaded executor, one thread per core at 100 % budgets;
- ``lame``: LaME with its controller running INSIDE the simulation — the same lame::Controller the
  real executor runs, activated every ``--controller-period`` (10 s) and at once (at most every
  0.5 s) when an RT chain misses its deadline, fed the simulated executor's measurements (the 4
  largest execution times per callback since the last activation) and applied to the running
  simulated executor (new reservations, a ready-queue swap; lame/sim_control.hpp);
- ``lame-plan``: LaME's initial plan without the controller (what the controller saves).

One continuous simulation per configuration and run; run k draws the timers' phases from its
seed, so the same seed gives the same figures. The recovery: the release of the last RT instance
that missed its deadline after the switch, against the target of two controller periods.

``--real`` runs it on real ROS 2 instead, the configurations of lame-overload interleaved
(lame_real.REAL_CONFIGS; default: stock rclcpp MultiThreaded, LaME on chainrt's runtime and on
the rclcpp ChainExecutor): one continuous run per configuration and run; every callback burns
its WCET and, from ``--throttle-at`` on, 2.3/1.4 times it (the frequency drop, emulated: this
VM cannot change its clock); LaME runs with its controller (every ``--controller-period`` and
at once on an RT miss, measured execution times, new budgets and affinities applied to the
running threads); the stock executor's threads are unpinned SCHED_DEADLINE reservations at the
kernel's admission limit (see lame-overload). RT misses per window come from the recorded
executions (the RT chains' last callbacks: finish - chain release > deadline, binned by the
release); every run is accounted (chainrt.accounting: after the switch the callbacks run past
their model WCETs, so LaME's instances above its bounds are overruns unless the platform
took the CPU).
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import sys
from dataclasses import dataclass

import yaml

from .. import _core, cliargs
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import lame_overload as lo
from . import lame_real as lr

PAPER_FACTOR = (23, 14)  # 2.3 GHz -> 1.4 GHz (LaME Sec. 5.3)
# The simulator's default: the simulated plan absorbs the paper's drop (fp-mt's budgets leave the
# RT chains that much slack: no RT miss at x1.64, nor at x2), so the transient is shown for a drop
# it cannot absorb, 2.3 -> 1.0 GHz; --factor 2.3/1.4 runs the paper's.
SIM_FACTOR = (23, 10)


def parse_factor(text: str | None, real: bool) -> tuple[int, int]:
    """'2.3/1.4' or '1.64' -> (num, den) in thousandths; None: the mode's default."""
    if text is None:
        return PAPER_FACTOR if real else SIM_FACTOR
    try:
        a, _, b = str(text).partition("/")
        num, den = round(float(a) * 1000), round(float(b) * 1000) if b else 1000
    except ValueError:
        raise ValueError(f"--factor: '{text}' is not a ratio such as 2.3/1.4") from None
    if num <= 0 or den <= 0 or num < den:
        raise ValueError("--factor must be a slow-down of at least 1 (e.g. 2.3/1.4)")
    return num, den


def add_parser(esub) -> None:
    p = esub.add_parser("lame-throttle",
                        help="LaME Sec. 5.3 on 2 cores: RT deadline misses over time after throttling (simulator)")
    p.add_argument("--model", type=cliargs.model_path, default=lo._example_path(), help="base model (default examples/autoware_lame.yaml)")
    p.add_argument("--cores", type=cliargs.count(1, 1024, "a number of cores"), default=2, help="cores (default 2; the paper used 3); overrides the model's")
    p.add_argument("--duration", type=cliargs.seconds, default=180.0, help="simulated seconds (default 180)")
    p.add_argument("--throttle-at", type=cliargs.seconds, default=90.0, help="switch time in seconds (default 90)")
    p.add_argument("--window", type=cliargs.seconds, default=5.0, help="window length in seconds (default 5)")
    p.add_argument("--controller-period", type=cliargs.seconds, default=10.0, help="seconds (default 10)")
    p.add_argument("--factor", default=None, metavar="F",
                   help="slow-down of every execution time at the switch, e.g. 2.3/1.4 (default 2.3/1.0 in the "
                        "simulator, whose plan absorbs the paper's 2.3/1.4; 2.3/1.4 with --real)")
    p.add_argument("--runs", type=cliargs.positive, default=3)
    p.add_argument("--out", default="out/lame_throttle")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--real", action="store_true", help="run on real ROS 2 (chainrt-run) instead of the simulator")
    p.add_argument("--lock", default="", type=cliargs.lock_file, metavar="FILE",
                   help="--real: hold an flock on FILE during each run (a machine-wide measurement lock)")
    p.add_argument("--configs", default="default,lame,lame_rclcpp",
                   help="--real: the configurations, comma-separated (default: default,lame,lame_rclcpp): " +
                        "; ".join(f"{k} = {v}" for k, v in lr.REAL_CONFIGS.items()))
    p.add_argument("--no-probe", action="store_true",
                   help="--real: no platform probe beside the runs (the accounting then says so)")
    p.set_defaults(exp_func=run)


def _load(doc: dict, name: str):
    return load_model_from_string(yaml.safe_dump(doc, sort_keys=False), name)


@dataclass
class Setup:
    """What every run shares: the slow-down, the overloaded model (document and loaded), the
    baseline's model, LaME's nominal plan, the RT chains and their deadlines (ms), the windows."""
    factor: tuple[int, int]
    over: dict
    nominal_model: object
    default_model: object
    plan0: dict
    rt: list[str]
    deadlines: dict
    n_windows: int


def setup(args) -> Setup:
    """The experiment's models and plan (raises ValueError and what loading and planning raise)."""
    factor = parse_factor(args.factor, args.real)
    with open(args.model) as f:
        over = lo.with_cores(lo.overload_document(yaml.safe_load(f)), args.cores)
    nominal_model = _load(over, "overload.yaml")
    default_model = _load(lo.default_document(over, args.cores), "default.yaml")
    plan0 = _core.lame_allocate(nominal_model, args.cores)
    plan0.pop("model")
    rt = [c.name for c in nominal_model.chains if c.criticality_class == "rt"]
    deadlines = {c.name: c.deadline / 1e6 for c in nominal_model.chains}
    return Setup(factor, over, nominal_model, default_model, plan0, rt, deadlines,
                 int(round(args.duration / args.window)))


def run(args) -> int:
    cliargs.check_order("experiment lame-throttle", args, "--throttle-at", "--duration", strict=True)
    cliargs.check_order("experiment lame-throttle", args, "--window", "--duration")
    try:
        s = setup(args)
        configs = lr.parse_configs(args.configs) if args.real else None
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as err:
        print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
        return 1
    if args.real:
        return run_real(args, s, configs)
    return run_sim(args, s)


SIM_CONFIGS = ("default", "lame", "lame_plan")
SIM_LABELS = {"default": lo.BASELINE, "lame": "LaME + controller", "lame_plan": "LaME, no controller"}


def sim_one(args, s: Setup, model, mode: str, seed: int) -> tuple[list[int], dict]:
    """One simulation: the RT misses per window and the run's record (misses before and after
    the switch, the recovery, the controller's activations, the responses)."""
    r = lo.sim_run(model, args.duration, seed, mode, args.cores, args.controller_period,
                   scale_at=args.throttle_at, factor=s.factor)
    resp = {c: r["responses"].get(c, []) for c in s.rt}
    late = [t for c, pts in resp.items() for t, ms in pts if t >= args.throttle_at and ms > s.deadlines[c]]
    # LaME demotes the least critical RT chain when no plan keeps them all (Sec. 4.3): a
    # chain's miss counts (per window and against the recovery) while the plan in force at
    # its release has it real-time.
    demoted = lr.demoted_at(r.get("activations", []))
    as_rt = {c: [(t, ms) for t, ms in pts if not demoted(c, t)] for c, pts in resp.items()}
    windows = _window_misses(as_rt, {c: s.deadlines[c] for c in s.rt}, args.window, s.n_windows)
    late_rt = [t for c, pts in as_rt.items() for t, ms in pts if t >= args.throttle_at and ms > s.deadlines[c]]
    return windows, {
        "initial_plan": r.get("initial_plan"),
        "rt_class_misses_after_switch": len(late_rt),
        "last_rt_class_miss_after_switch_s": (max(late_rt) - args.throttle_at) if late_rt else None,
        "rt_misses_before_switch": sum(windows[w] for w in range(s.n_windows) if w * args.window < args.throttle_at),
        "rt_misses_after_switch": len(late),
        "last_miss_after_switch_s": (max(late) - args.throttle_at) if late else None,
        "rt_drops": sum(r["chains"][c]["drops"] for c in s.rt),
        "worst_rt_ms_after_switch": max((ms for pts in resp.values() for t, ms in pts if t >= args.throttle_at),
                                        default=None),
        "activations": [{key: a[key] for key in ("at_s", "trigger", "decision", "kind", "why", "demoted",
                                                 "supply_permille", "analyses")}
                        for a in r.get("activations", []) if a["trigger"] != "initial"],
        "responses": resp}


def sim_summary(args, s: Setup, results: dict) -> dict:
    target = 2 * args.controller_period
    lame = results["lame"]
    replans = [[a for a in x["activations"] if a["decision"] == "reallocated" and a["at_s"] >= args.throttle_at]
               for x in lame]
    return {
        "mode": "simulator", "cores": args.cores, "runs": args.runs, "window_s": args.window,
        "duration_s": args.duration, "throttle_at_s": args.throttle_at, "controller_period_s": args.controller_period,
        "factor": s.factor[0] / s.factor[1], "paper_factor": PAPER_FACTOR[0] / PAPER_FACTOR[1],
        "plan_nominal": {"rt_classes": (lame[0]["initial_plan"] or s.plan0)["rt_classes"],
                         "demotions": (lame[0]["initial_plan"] or s.plan0)["demotions"]},
        **{f"{c}_rt_misses_after_switch_per_run": [x["rt_misses_after_switch"] for x in results[c]] for c in SIM_CONFIGS},
        **{f"{c}_rt_misses_before_switch_per_run": [x["rt_misses_before_switch"] for x in results[c]]
           for c in SIM_CONFIGS},
        "lame_last_miss_after_switch_s": [x["last_miss_after_switch_s"] for x in lame],
        "lame_rt_class_misses_after_switch_per_run": [x["rt_class_misses_after_switch"] for x in lame],
        "lame_last_rt_class_miss_after_switch_s": [x["last_rt_class_miss_after_switch_s"] for x in lame],
        "lame_recovered_within_two_periods": [x["last_rt_class_miss_after_switch_s"] is None
                                              or x["last_rt_class_miss_after_switch_s"] < target for x in lame],
        "lame_plan_last_miss_after_switch_s": [x["last_miss_after_switch_s"] for x in results["lame_plan"]],
        "lame_worst_rt_ms_after_switch": [x["worst_rt_ms_after_switch"] for x in lame],
        "lame_replans_after_switch": [[{k: a[k] for k in ("at_s", "trigger", "kind", "demoted")} for a in r]
                                      for r in replans],
        "lame_activations": [x["activations"] for x in lame],
    }


def print_sim(args, s: Setup, summary: dict, results: dict) -> None:
    factor = s.factor
    target = 2 * args.controller_period
    lame = results["lame"]
    print(f"LaME throttling experiment, simulator, {args.cores} cores, {args.runs} runs x {args.duration:g} s, execution "
          f"times x {factor[0] / factor[1]:.3f} from {args.throttle_at:g} s (paper: x{PAPER_FACTOR[0] / PAPER_FACTOR[1]:.3f}, "
          f"2.3 -> 1.4 GHz on a Jetson, 3 cores)")
    first = lame[0]["initial_plan"] or s.plan0
    print(f"  LaME's controller inside the simulation every {args.controller_period:g} s and on RT misses; "
          f"initial RT budgets {lr.budgets(first['rt_classes'])} (its plan for the model's times + 5 %)")
    for c, label in SIM_LABELS.items():
        print(f"  {label:18s} RT misses per run before the switch {summary[f'{c}_rt_misses_before_switch_per_run']}, "
              f"after {summary[f'{c}_rt_misses_after_switch_per_run']}")
    for k, x in enumerate(lame):
        acts = ", ".join(f"{a['at_s']:.1f} s {a['trigger']}: {a['kind']}" + (f" (demoted {', '.join(a['demoted'])})"
                                                                          if a["demoted"] else "")
                         for a in x["activations"] if a["at_s"] >= args.throttle_at and a["decision"] == "reallocated")
        last = x["last_rt_class_miss_after_switch_s"]
        print(f"  run {k}: {x['rt_class_misses_after_switch']} misses of chains RT in the plan at their release, the "
              f"last {'none' if last is None else f'{last:.2f} s'} after the switch (target < {target:g} s: "
              f"{'met' if last is None or last < target else 'NOT met'}); re-plans after the switch: {acts or 'none'}")


def run_sim(args, s: Setup) -> int:
    configs = (("default", s.default_model, "model"), ("lame", s.nominal_model, "controller"),
               ("lame_plan", s.nominal_model, "plan"))
    rows, results = [], {c: [] for c, _, _ in configs}
    for k in range(args.runs):
        seed = 1000 * (k + 1)
        per = {}
        for config, model, mode in configs:
            try:
                per[config], record = sim_one(args, s, model, mode, seed)
            except ValueError as err:
                print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
                return 1
            results[config].append(record)
        for w in range(s.n_windows):
            rows.append({"run": k, "t_s": w * args.window, "throttled": w * args.window >= args.throttle_at,
                         **{f"{c}_rt_misses": per[c][w] for c, _, _ in configs}})
    os.makedirs(args.out, exist_ok=True)
    _write_csv(os.path.join(args.out, "lame_throttle.csv"), rows)
    summary = sim_summary(args, s, results)
    with open(os.path.join(args.out, "lame_throttle.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print_sim(args, s, summary, results)
    if not args.no_plot:
        _plot(rows, summary, s.n_windows, args, os.path.join(args.out, "lame_throttle.png"))
        print(f"  wrote {os.path.join(args.out, 'lame_throttle.png')}")
        replans = summary["lame_replans_after_switch"]
        marks = {"lame": [(args.throttle_at, "switch")] + [(a["at_s"], "replan") for a in replans[0]],
                 "lame_plan": [(args.throttle_at, "switch")], "default": [(args.throttle_at, "switch")]}
        out = os.path.join(args.out, "lame_throttle_response.png")
        lr.plot_responses({c: results[c][0]["responses"] for c, _, _ in configs}, s.deadlines, [("RT chains", s.rt)],
                          out, f"LaME throttling, simulator, run 0: RT response times (dashed: deadlines; --: x"
                          f"{s.factor[0] / s.factor[1]:.2f} at {args.throttle_at:g} s; dotted: controller re-plans)",
                          vlines=marks, labels={"default": f"{lo.BASELINE}, 100 % budgets",
                                                "lame": "LaME + controller", "lame_plan": "LaME, no controller"})
        print(f"  wrote {out}")
    return 0


def _write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def _window_misses(responses: dict[str, list[tuple[float, float]]], deadlines_ms: dict[str, float],
                   window: float, n: int) -> list[int]:
    """RT deadline misses per window: instances (release s, response ms) whose response time
    exceeds their chain's deadline, binned by the chain's release."""
    out = [0] * n
    for chain, pts in responses.items():
        for t, ms in pts:
            w = int(t // window)
            if ms > deadlines_ms[chain] and 0 <= w < n:
                out[w] += 1
    return out


def real_one(args, s: Setup, config: str, k: int) -> dict:
    """One real run of `config` with the emulated frequency drop: its RT misses per window, the
    LaME recovery figures, the accounting, the controller's activations and the load."""
    ratio = s.factor[0] / s.factor[1]
    doc = s.over if config in lr.LAME_CONFIGS else lo.real_default_document(s.over, args.cores)
    bounds = lo.lame_bounds(s.plan0, s.rt)
    r = lr.real_config_run(config, doc, args.out, str(k), args.duration, 0.5, cores=args.cores, lock=args.lock,
                           probe=not args.no_probe,
                           bounds=bounds if config in lr.LAME_CONFIGS else {c: None for c in bounds},
                           controller_ns=int(args.controller_period * 1e9),
                           scale=(int(args.throttle_at * 1e9), ratio))
    resp = {c: r["responses"].get(c, []) for c in s.rt}
    rec = {"config": config, "run": k, **r["load"], "warnings": r["warnings"], "activations": r["activations"],
           "accounting": r["accounting"], "responses": resp,
           "windows": _window_misses(resp, s.deadlines, args.window, s.n_windows)}
    late = [t for c, pts in resp.items() for t, ms in pts if t >= args.throttle_at and ms > s.deadlines[c]]
    rec["last_miss_after_switch_s"] = max(late) - args.throttle_at if late else None
    # The target: no RT miss once the controller had 2 periods after the switch (releases from
    # throttle_at + 2 periods on); counted for every chain that is RT in the model, and for those
    # the plan in force at the release kept RT (a demoted chain is best effort)
    settled = args.throttle_at + 2 * args.controller_period
    demoted = lr.demoted_at(r["activations"])
    after = [(c, t) for c, pts in resp.items() for t, ms in pts if t >= settled and ms > s.deadlines[c]]
    rec["settled_misses"] = len(after)
    rec["settled_rt_class_misses"] = sum(1 for c, t in after if not demoted(c, t))
    rec["replans"] = [{"at_s": a["at_s"], "trigger": a["trigger"], "classes": a["classes"], "demoted": a["demoted"],
                       "cpu_ms": a["decide_cpu_ms"] + a["apply_cpu_ms"], "errors": a["errors"]}
                      for a in r["activations"] if a["decision"] == "reallocated"]
    return rec


def real_summary(args, s: Setup, configs: list[str], runs: list[dict]) -> dict:
    def of(config):
        return [x for x in runs if x["config"] == config]

    def split(x, after):
        return sum(n for w, n in enumerate(x["windows"]) if (w * args.window >= args.throttle_at) == after)
    lame = of("lame")
    summary = {
        "mode": "real ROS 2", "cores": args.cores, "runs": args.runs, "window_s": args.window,
        "duration_s": args.duration, "throttle_at_s": args.throttle_at, "controller_period_s": args.controller_period,
        "factor": s.factor[0] / s.factor[1], "deadline_capacity": lo.deadline_capacity(), "configs": configs,
        "labels": {c: lr.REAL_CONFIGS[c] for c in configs},
        **{f"{c}_rt_misses_before_switch_per_run": [split(x, False) for x in of(c)] for c in configs},
        **{f"{c}_rt_misses_after_switch_per_run": [split(x, True) for x in of(c)] for c in configs},
        **{f"{c}_last_miss_after_switch_s": [x["last_miss_after_switch_s"] for x in of(c)] for c in lr.LAME_CONFIGS},
        **{f"{c}_rt_misses_after_two_periods_per_run": [x["settled_misses"] for x in of(c)] for c in lr.LAME_CONFIGS},
        **{f"{c}_rt_class_misses_after_two_periods_per_run": [x["settled_rt_class_misses"] for x in of(c)]
           for c in lr.LAME_CONFIGS},
        "lame_replans": [x["replans"] for x in lame],
        "lame_activations": {c: [x["activations"] for x in of(c)] for c in lr.LAME_CONFIGS if c in configs},
        "lame_activation_cpu_ms": lr.activation_cost([x["activations"] for c in lr.LAME_CONFIGS for x in of(c)]),
        "accounting": {c: lr.accounting_summary(of(c), s.rt) for c in configs},
        "load": [{k: x.get(k) for k in ("config", "run", "load_before", "load_after", "steal_percent",
                                        "longest_blackout_ms", "probe_error")} for x in runs],
        "notes": [f"{x['config']} run {x['run']}: {w}" for x in runs for w in x["warnings"]]
                 + [f"{x['config']} run {x['run']}: controller +{a['at_s']:.1f} s demoted {', '.join(a['demoted'])}"
                    for x in runs for a in x["activations"] if a["demoted"]],
    }
    return summary


def print_real(args, s: Setup, summary: dict, configs: list[str]) -> None:
    print(f"LaME throttling experiment, real ROS 2, {args.cores} cores, {args.runs} runs x {args.duration:g} s, "
          f"every callback burns x {summary['factor']:.3f} its WCET from {args.throttle_at:g} s (emulated frequency drop; "
          f"paper: 2.3 -> 1.4 GHz on a Jetson, 3 cores); configurations interleaved")
    for c in configs:
        print(f"  {c:11s} = {lr.REAL_CONFIGS[c]}: RT misses per run before the switch "
              f"{summary[f'{c}_rt_misses_before_switch_per_run']}, after {summary[f'{c}_rt_misses_after_switch_per_run']}")
    print(f"  default: each stock thread an unpinned SCHED_DEADLINE reservation of {lo.deadline_capacity() * 100:.0f} % "
          f"(the kernel's admission limit); LaME with its controller every {args.controller_period:g} s and on RT misses")
    print(f"  LaME re-plans (s since start): {[[round(a['at_s'], 1) for a in r] for r in summary['lame_replans']]}")
    for c in (c for c in lr.LAME_CONFIGS if c in configs):
        last = summary[f"{c}_last_miss_after_switch_s"]
        print(f"  {c}: last RT miss after the switch, per run (s after the switch; none: no miss): "
              f"{', '.join('none' if v is None else f'{v:.1f}' for v in last)}; RT misses from "
              f"{args.throttle_at + 2 * args.controller_period:g} s on (2 controller periods after the switch): "
              f"{summary[f'{c}_rt_misses_after_two_periods_per_run']}, of chains RT in the plan at their release: "
              f"{summary[f'{c}_rt_class_misses_after_two_periods_per_run']}")
    for line in lo.accounting_lines(summary["accounting"]):
        print(line)
    cost = summary["lame_activation_cpu_ms"]
    for key in ("holds", "reallocated"):
        if key in cost:
            c = cost[key]
            print(f"  LaME controller CPU time per activation ({key}, {c['n']} activations): median {c['median_ms']:.2f} ms, "
                  f"p90 {c['p90_ms']:.2f} ms, min-max {c['min_ms']:.2f}-{c['max_ms']:.2f} ms")
    for x in summary["load"]:
        print(f"  {x['config']} run {x['run']}: {lr.load_text(x)}")
    for n in summary["notes"][:20]:
        print(f"  note: {n}")


def real_figures(args, s: Setup, summary: dict, rows: list[dict], runs: list[dict], configs: list[str]) -> None:
    _plot(rows, summary, s.n_windows, args, os.path.join(args.out, "lame_throttle.png"))
    print(f"  wrote {os.path.join(args.out, 'lame_throttle.png')}")
    acts = [x["activations"] for x in runs if x["config"] == "lame"]
    if acts:
        out = os.path.join(args.out, "lame_throttle_controller.png")
        lr.plot_activations(acts, out, f"LaME controller on real ROS 2: its own CPU time per activation "
                            f"(every {args.controller_period:g} s and on RT misses; cf. paper Fig. 8a)", args.throttle_at)
        print(f"  wrote {out}")
    ratio = summary["factor"]
    for k in range(args.runs):
        mine = {x["config"]: x for x in runs if x["run"] == k}
        marks = {c: [(args.throttle_at, "switch")] + [(a["at_s"], "replan") for a in mine[c]["activations"]
                                                     if a["decision"] == "reallocated" and a["trigger"] != "initial"]
                 for c in mine}
        out = os.path.join(args.out, f"lame_throttle_response_run{k}.png")
        lr.plot_responses({c: mine[c]["responses"] for c in configs}, s.deadlines, [("RT chains", s.rt)], out,
                          f"LaME throttling, real ROS 2, run {k}: RT response times (dashed: deadlines; "
                          f"--: x{ratio:.2f} at {args.throttle_at:g} s; dotted: controller re-plans)",
                          vlines=marks, labels=summary["labels"])
        print(f"  wrote {out}")


def run_real(args, s: Setup, configs: list[str]) -> int:
    """Real ROS 2: every configuration once per run, interleaved."""
    os.makedirs(args.out, exist_ok=True)
    runs = []
    try:
        for k in range(args.runs):
            for config in configs:
                runs.append(real_one(args, s, config, k))
    except Exception as err:  # the runtime's and the generated nodes' one-line errors
        print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
        return 1
    rows = []
    for k in range(args.runs):
        mine = {x["config"]: x for x in runs if x["run"] == k}
        for w in range(s.n_windows):
            rows.append({"run": k, "t_s": w * args.window, "throttled": w * args.window >= args.throttle_at,
                         **{f"{c}_rt_misses": mine[c]["windows"][w] for c in configs},
                         "lame_replanned_at_s": ";".join(f"{a['at_s']:.1f}" for a in (mine.get("lame") or {}).get("replans", []))})
    _write_csv(os.path.join(args.out, "lame_throttle.csv"), rows)
    summary = real_summary(args, s, configs, runs)
    with open(os.path.join(args.out, "lame_throttle.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print_real(args, s, summary, configs)
    if not args.no_plot:
        real_figures(args, s, summary, rows, runs, configs)
    return 0


def _plot(rows, summary, n_windows, args, path) -> None:

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(10, 4))
    ts = [w * args.window for w in range(n_windows)]
    if summary.get("mode") == "simulator":
        series = [("default_rt_misses", "tab:red", f"{lo.BASELINE}, 100 % budgets"),
                  ("lame_rt_misses", "tab:blue", "LaME + controller"),
                  ("lame_plan_rt_misses", "tab:green", "LaME, no controller")]
    else:
        budgets = f"{summary['deadline_capacity'] * 100:.0f} % budgets"
        series = [(f"{c}_rt_misses", lo.PLOT_COLORS[c],
                   summary["labels"][c] + ("" if c in lr.LAME_CONFIGS else f", {budgets}")) for c in summary["configs"]]
    for key, color, label in series:
        per_run = [[r[key] for r in rows if r["run"] == k] for k in range(args.runs)]
        mean = [statistics.fmean(v[w] for v in per_run) for w in range(n_windows)]
        lo_ = [min(v[w] for v in per_run) for w in range(n_windows)]
        hi = [max(v[w] for v in per_run) for w in range(n_windows)]
        ax.step(ts, mean, where="post", color=color, label=label)
        ax.fill_between(ts, lo_, hi, step="post", color=color, alpha=0.2)
    ax.axvline(args.throttle_at, color="k", ls="--", lw=1)
    ax.axvspan(args.throttle_at, args.throttle_at + 2 * args.controller_period, color="0.9", zorder=0)
    ax.text(args.throttle_at, ax.get_ylim()[1] * 0.9, f" x{summary['factor']:.2f}", fontsize=8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel(f"RT deadline misses per {args.window:g} s")
    ax.set_title(f"LaME throttling, {summary.get('mode', 'simulator')}, {summary['cores']} cores, {args.runs} runs "
                 f"(line: mean, band: min-max; grey: two controller periods after the switch)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
