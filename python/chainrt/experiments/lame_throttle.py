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

``--real`` runs it on real ROS 2 instead: one continuous ``chainrt-run`` per configuration and
run; every callback burns its WCET and, from ``--throttle-at`` on, 2.3/1.4 times it (the
frequency drop, emulated: this VM cannot change its clock); LaME runs with its controller thread
(``--lame-controller``: every ``--controller-period`` and at once on an RT miss, measured
execution times, new budgets and affinities applied to the running threads); the default
executor with unpinned SCHED_DEADLINE threads at the kernel's admission limit (see
lame-overload). RT misses per window come from the dispatch trace (the RT chains' last
callbacks: finish - chain release > deadline, binned by the release).
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import sys

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
    p.add_argument("--configs", default="default,lame",
                   help="--real: which configurations to run, comma-separated (default: default,lame)")
    p.set_defaults(exp_func=run)


def _load(doc: dict, name: str):
    return load_model_from_string(yaml.safe_dump(doc, sort_keys=False), name)


def run(args) -> int:
    cliargs.check_order("experiment lame-throttle", args, "--throttle-at", "--duration", strict=True)
    cliargs.check_order("experiment lame-throttle", args, "--window", "--duration")
    try:
        factor = parse_factor(args.factor, args.real)
    except ValueError as err:
        print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
        return 1
    try:
        with open(args.model) as f:
            over = lo.with_cores(lo.overload_document(yaml.safe_load(f)), args.cores)
        nominal_model = _load(over, "overload.yaml")
        default_model = _load(lo.default_document(over, args.cores), "default.yaml")
        plan0 = _core.lame_allocate(nominal_model, args.cores)
        plan0.pop("model")
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as err:
        print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
        return 1
    rt = [c.name for c in nominal_model.chains if c.criticality_class == "rt"]
    if args.real:
        measured = [(cb.name, cb.wcet * factor[0] // factor[1]) for cb in nominal_model.callbacks]
        plan1 = _core.lame_allocate(nominal_model, args.cores, measured=measured)
        plan1.pop("model")
        return run_real(args, over, nominal_model, rt, plan0, plan1, factor)
    n_windows = int(round(args.duration / args.window))
    deadlines = {c.name: c.deadline / 1e6 for c in nominal_model.chains}
    rt_deadlines = {c: deadlines[c] for c in rt}
    configs = (("default", default_model, "model"), ("lame", nominal_model, "controller"),
               ("lame_plan", nominal_model, "plan"))
    rows, results = [], {c: [] for c, _, _ in configs}
    for k in range(args.runs):
        seed = 1000 * (k + 1)
        per = {}
        for config, model, mode in configs:
            try:
                r = lo.sim_run(model, args.duration, seed, mode, args.cores, args.controller_period,
                               scale_at=args.throttle_at, factor=factor)
            except ValueError as err:
                print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
                return 1
            resp = {c: r["responses"].get(c, []) for c in rt}
            late = [t for c, pts in resp.items() for t, ms in pts if t >= args.throttle_at and ms > deadlines[c]]
            # LaME demotes the least critical RT chain when no plan keeps them all (Sec. 4.3): a
            # chain's miss counts (per window and against the recovery) while the plan in force at
            # its release has it real-time.
            demoted = lr.demoted_at(r.get("activations", []))
            as_rt = {c: [(t, ms) for t, ms in pts if not demoted(c, t)] for c, pts in resp.items()}
            per[config] = _window_misses(as_rt, rt_deadlines, args.window, n_windows)
            late_rt = [t for c, pts in as_rt.items() for t, ms in pts if t >= args.throttle_at and ms > deadlines[c]]
            results[config].append({
                "initial_plan": r.get("initial_plan"),
                "rt_class_misses_after_switch": len(late_rt),
                "last_rt_class_miss_after_switch_s": (max(late_rt) - args.throttle_at) if late_rt else None,
                "rt_misses_before_switch": sum(per[config][w] for w in range(n_windows)
                                               if w * args.window < args.throttle_at),
                "rt_misses_after_switch": len(late),
                "last_miss_after_switch_s": (max(late) - args.throttle_at) if late else None,
                "rt_drops": sum(r["chains"][c]["drops"] for c in rt),
                "worst_rt_ms_after_switch": max((ms for pts in resp.values() for t, ms in pts if t >= args.throttle_at),
                                                default=None),
                "activations": [{key: a[key] for key in ("at_s", "trigger", "decision", "kind", "why", "demoted",
                                                         "supply_permille", "analyses")}
                                for a in r.get("activations", []) if a["trigger"] != "initial"],
                "responses": resp})
        for w in range(n_windows):
            rows.append({"run": k, "t_s": w * args.window, "throttled": w * args.window >= args.throttle_at,
                         **{f"{c}_rt_misses": per[c][w] for c, _, _ in configs}})
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "lame_throttle.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    target = 2 * args.controller_period
    lame = results["lame"]
    replans = [[a for a in x["activations"] if a["decision"] == "reallocated" and a["at_s"] >= args.throttle_at]
               for x in lame]
    summary = {
        "mode": "simulator", "cores": args.cores, "runs": args.runs, "window_s": args.window,
        "duration_s": args.duration, "throttle_at_s": args.throttle_at, "controller_period_s": args.controller_period,
        "factor": factor[0] / factor[1], "paper_factor": PAPER_FACTOR[0] / PAPER_FACTOR[1],
        "plan_nominal": {"rt_classes": (lame[0]["initial_plan"] or plan0)["rt_classes"],
                         "demotions": (lame[0]["initial_plan"] or plan0)["demotions"]},
        **{f"{c}_rt_misses_after_switch_per_run": [x["rt_misses_after_switch"] for x in results[c]] for c, _, _ in configs},
        **{f"{c}_rt_misses_before_switch_per_run": [x["rt_misses_before_switch"] for x in results[c]]
           for c, _, _ in configs},
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
    with open(os.path.join(args.out, "lame_throttle.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"LaME throttling experiment, simulator, {args.cores} cores, {args.runs} runs x {args.duration:g} s, execution "
          f"times x {factor[0] / factor[1]:.3f} from {args.throttle_at:g} s (paper: x{PAPER_FACTOR[0] / PAPER_FACTOR[1]:.3f}, "
          f"2.3 -> 1.4 GHz on a Jetson, 3 cores)")
    first = lame[0]["initial_plan"] or plan0
    print(f"  LaME's controller inside the simulation every {args.controller_period:g} s and on RT misses; "
          f"initial RT budgets {lr.budgets(first['rt_classes'])} (its plan for the model's times + 5 %)")
    for c, label in (("default", lo.BASELINE), ("lame", "LaME + controller"), ("lame_plan", "LaME, no controller")):
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
    if not args.no_plot:
        _plot(rows, summary, n_windows, args, os.path.join(args.out, "lame_throttle.png"))
        print(f"  wrote {os.path.join(args.out, 'lame_throttle.png')}")
        marks = {"lame": [(args.throttle_at, "switch")] + [(a["at_s"], "replan") for a in replans[0]],
                 "lame_plan": [(args.throttle_at, "switch")], "default": [(args.throttle_at, "switch")]}
        out = os.path.join(args.out, "lame_throttle_response.png")
        lr.plot_responses({c: results[c][0]["responses"] for c, _, _ in configs}, deadlines, [("RT chains", rt)], out,
                          f"LaME throttling, simulator, run 0: RT response times (dashed: deadlines; --: x"
                          f"{factor[0] / factor[1]:.2f} at {args.throttle_at:g} s; dotted: controller re-plans)",
                          vlines=marks, labels={"default": f"{lo.BASELINE}, 100 % budgets",
                                                "lame": "LaME + controller", "lame_plan": "LaME, no controller"})
        print(f"  wrote {out}")
    return 0


def _window_misses(responses: dict[str, list[tuple[float, float]]], deadlines_ms: dict[str, float],
                   window: float, n: int) -> list[int]:
    """RT deadline misses per window: instances (lame_real.trace_responses) whose response time
    exceeds their chain's deadline, binned by the chain's release."""
    out = [0] * n
    for chain, pts in responses.items():
        for t, ms in pts:
            w = int(t // window)
            if ms > deadlines_ms[chain] and 0 <= w < n:
                out[w] += 1
    return out


def _total(values):
    """Sum of per-window counts; None when the configuration did not run."""
    v = list(values)
    return None if any(x is None for x in v) else sum(v)


def run_real(args, over: dict, nominal_model, rt: list[str], plan0: dict, plan1: dict,
             ratio: tuple[int, int] = PAPER_FACTOR) -> int:
    factor = ratio[0] / ratio[1]
    n_windows = int(round(args.duration / args.window))
    leaves = lr.leaves_of(nominal_model, set(rt))
    os.makedirs(args.out, exist_ok=True)
    rows, recovery, replans, notes = [], [], [], []
    last_miss_s, acts_per_run, loads, responses = [], [], [], []
    settled_misses, settled_rt_class, settled_steal = [], [], []
    step = ["--scale-wcet", f"{int(args.throttle_at * 1e9)}ns:{factor!r}"]
    deadlines = {c: d / 1e6 for v in leaves.values() for c, d in v}
    configs = [c.strip() for c in str(args.configs).split(",") if c.strip()]
    if not configs or any(c not in ("default", "lame") for c in configs):
        print("chainrt experiment lame-throttle: --configs takes default and/or lame", file=sys.stderr)
        return 1
    for k in range(args.runs):
        per, resp = {c: [None] * n_windows for c in ("default", "lame")}, {}
        for config in configs:
            trace = os.path.join(args.out, f"{config}_{k}.trace.jsonl")
            extra = step + ["--trace", trace]
            if config == "lame":
                extra += ["--lame-controller", f"{int(args.controller_period * 1e9)}ns"]
                doc = over
            else:
                doc = lo.real_default_document(over, args.cores)
            try:
                with lr.measurement_lock(args.lock), lr.StealSampler() as sampler:
                    load0, jiffies0 = lr.loadavg(), lr.cpu_jiffies()
                    r = lo.real_run(doc, os.path.join(args.out, f"{config}.yaml"), args.duration, extra, warmup=0.5)
                    load1, jiffies1 = lr.loadavg(), lr.cpu_jiffies()
            except Exception as err:  # the runtime's one-line errors
                print(f"chainrt experiment lame-throttle: {err}", file=sys.stderr)
                return 1
            # the monitor's own count over the whole run (warm-up excluded), next to the trace's
            monitor = {"rt_deadline_misses": sum(r["chains"][c]["deadline_misses"] for c in rt if c in r["chains"]),
                       "rt_drops": sum(r["chains"][c].get("drops", 0) for c in rt if c in r["chains"])}
            loads.append({"run": k, "config": config, "load_before": load0, "load_after": load1,
                          "steal_percent": lr.steal_percent(jiffies0, jiffies1), "monitor": monitor})
            notes += [f"{config} run {k}: {w}" for w in r.get("warnings", [])]
            resp[config] = lr.trace_responses(trace, leaves)
            per[config] = _window_misses(resp[config], deadlines, args.window, n_windows)
            # every RT miss after the switch with the hypervisor steal during it (a failed recovery
            # is the controller's only when the platform took nothing)
            loads[-1]["misses_after_switch"] = lr.misses_with_steal(resp[config], deadlines, lr.trace_start_ns(trace),
                                                                    sampler, since_s=args.throttle_at)
            if config == "lame":
                acts = lr.activations(r)
                acts_per_run.append(acts)
                notes += [f"lame run {k}: controller +{a['at_s']:.1f} s demoted {', '.join(a['demoted'])}"
                          for a in acts if a["demoted"]]
                replans.append([{"at_s": a["at_s"], "trigger": a["trigger"], "classes": a["classes"],
                                 "demoted": a["demoted"],
                                 "cpu_ms": a["decide_cpu_ms"] + a["apply_cpu_ms"], "errors": a["errors"]}
                                for a in acts if a["decision"] == "reallocated"])
        responses.append(resp)
        if "lame" not in configs:
            replans.append([])
        for w in range(n_windows):
            rows.append({"run": k, "t_s": w * args.window, "throttled": w * args.window >= args.throttle_at,
                         "default_rt_misses": per["default"][w], "lame_rt_misses": per["lame"][w],
                         "lame_replanned_at_s": ";".join(f"{a['at_s']:.1f}" for a in replans[-1])})
        if "lame" not in configs:
            continue
        last_miss = max((w * args.window + args.window for w in range(n_windows)
                         if per["lame"][w] > 0 and w * args.window >= args.throttle_at), default=args.throttle_at)
        recovery.append(last_miss - args.throttle_at)
        # the same at instance resolution: release of the last RT instance after the switch that
        # missed its deadline (None: no miss after the switch)
        late = [t for c, pts in resp["lame"].items() for t, ms in pts if t >= args.throttle_at and ms > deadlines[c]]
        last_miss_s.append(max(late) - args.throttle_at if late else None)
        # The target: no RT miss once the controller had 2 periods after the switch (releases
        # from throttle_at + 2 periods on); counted for every chain that is RT in the model, and
        # for those the plan in force at the release kept RT (a demoted chain is best effort)
        settled = args.throttle_at + 2 * args.controller_period
        demoted = lr.demoted_at(acts_per_run[-1])
        late = [(c, t) for c, pts in resp["lame"].items() for t, ms in pts if t >= settled and ms > deadlines[c]]
        settled_misses.append(len(late))
        settled_rt_class.append(sum(1 for c, t in late if not demoted(c, t)))
        mine = [m for x in loads if x["run"] == k and x["config"] == "lame" for m in x["misses_after_switch"]
                if m["release_s"] >= settled]
        settled_steal.append({"with_steal": sum(1 for m in mine if m["steal_ms"]),
                              "without_steal": sum(1 for m in mine if m["steal_ms"] == 0),
                              "unknown": sum(1 for m in mine if m["steal_ms"] is None)})
    with open(os.path.join(args.out, "lame_throttle.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    after = [r for r in rows if r["throttled"]]
    before = [r for r in rows if not r["throttled"]]
    summary = {
        "mode": "real ROS 2", "cores": args.cores, "runs": args.runs, "window_s": args.window,
        "duration_s": args.duration, "throttle_at_s": args.throttle_at, "controller_period_s": args.controller_period,
        "factor": factor, "deadline_capacity": lo.deadline_capacity(),
        "default_rt_misses_before_switch_per_run": [_total(r["default_rt_misses"] for r in before if r["run"] == k)
                                                    for k in range(args.runs)],
        "lame_rt_misses_before_switch_per_run": [_total(r["lame_rt_misses"] for r in before if r["run"] == k)
                                                 for k in range(args.runs)],
        "default_rt_misses_after_switch_per_run": [_total(r["default_rt_misses"] for r in after if r["run"] == k)
                                                   for k in range(args.runs)],
        "lame_rt_misses_after_switch_per_run": [_total(r["lame_rt_misses"] for r in after if r["run"] == k)
                                                for k in range(args.runs)],
        "lame_recovery_s": recovery, "lame_last_miss_after_switch_s": last_miss_s,
        "lame_rt_misses_after_two_periods_per_run": settled_misses,
        "lame_rt_class_misses_after_two_periods_per_run": settled_rt_class,
        "lame_misses_after_two_periods_by_steal_per_run": settled_steal, "lame_replans": replans,
        "lame_activations": acts_per_run, "lame_activation_cpu_ms": lr.activation_cost(acts_per_run),
        "load": loads, "notes": notes,
    }
    with open(os.path.join(args.out, "lame_throttle.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"LaME throttling experiment, real ROS 2, {args.cores} cores, {args.runs} runs x {args.duration:g} s, "
          f"every callback burns x {factor:.3f} its WCET from {args.throttle_at:g} s (emulated frequency drop; "
          f"paper: 2.3 -> 1.4 GHz on a Jetson, 3 cores)")
    print(f"  default: {lo.BASELINE}, not stock rclcpp; {args.cores} unpinned SCHED_DEADLINE threads at {lo.deadline_capacity() * 100:.0f} % "
          f"(kernel admission limit); LaME with its controller every {args.controller_period:g} s and on RT misses")
    for key, label in (("default", "default"), ("lame", "lame")):
        b = summary[f"{key}_rt_misses_before_switch_per_run"]
        a = summary[f"{key}_rt_misses_after_switch_per_run"]
        print(f"  {label:8s} RT misses per run before the switch {b}, after {a}")
    print(f"  LaME re-plans (s since start): {[[round(a['at_s'], 1) for a in r] for r in replans]}")
    if recovery:
        print(f"  LaME back to zero misses {statistics.fmean(recovery):.1f} s after the switch (min {min(recovery):g}, "
              f"max {max(recovery):g}; {args.window:g}-s windows)")
    print(f"  LaME last RT miss after the switch, per run (s after the switch; none: no miss): "
          f"{', '.join('none' if v is None else f'{v:.1f}' for v in last_miss_s)}")
    if settled_misses:
        print(f"  LaME RT misses from {args.throttle_at + 2 * args.controller_period:g} s on (2 controller periods "
              f"after the switch), per run: {settled_misses}; of chains RT in the plan at their release: "
              f"{settled_rt_class}")
    if settled_steal:
        print("  of those, per run: with hypervisor steal during the instance / without / steal unknown: "
              + "; ".join(f"{x['with_steal']}/{x['without_steal']}/{x['unknown']}" for x in settled_steal)
              + " (every miss after the switch with its steal: lame_throttle.json, load[].misses_after_switch)")
    cost = summary["lame_activation_cpu_ms"]
    for key in ("holds", "reallocated"):
        if key in cost:
            c = cost[key]
            print(f"  LaME controller CPU time per activation ({key}, {c['n']} activations): median {c['median_ms']:.2f} ms, "
                  f"p90 {c['p90_ms']:.2f} ms, min-max {c['min_ms']:.2f}-{c['max_ms']:.2f} ms")
    print("  1-min load before-after each run: " + "; ".join(
        f"{x['config']} {x['run']}: {x['load_before'][0]:.2f}-{x['load_after'][0]:.2f}" for x in loads if x["load_before"]))
    steal = ["?" if x["steal_percent"] is None else f"{x['steal_percent']:.1f} %" for x in loads]
    print("  hypervisor steal during each run: " + "; ".join(
        f"{x['config']} {x['run']}: {v}" for x, v in zip(loads, steal)))
    for n in notes[:20]:
        print(f"  note: {n}")
    if not args.no_plot and len(configs) == 2:
        _plot(rows, summary, n_windows, args, os.path.join(args.out, "lame_throttle.png"))
        print(f"  wrote {os.path.join(args.out, 'lame_throttle.png')}")
    if not args.no_plot and "lame" in configs:
        out = os.path.join(args.out, "lame_throttle_controller.png")
        lr.plot_activations(acts_per_run, out, f"LaME controller on real ROS 2: its own CPU time per activation "
                            f"(every {args.controller_period:g} s and on RT misses; cf. paper Fig. 8a)", args.throttle_at)
        print(f"  wrote {out}")
        for k, resp in enumerate(responses):
            marks = {"default": [(args.throttle_at, "switch")],
                     "lame": [(args.throttle_at, "switch")] + [(a["at_s"], "replan") for a in replans[k]
                                                               if a["trigger"] != "initial"]}
            out = os.path.join(args.out, f"lame_throttle_response_run{k}.png")
            lr.plot_responses(resp, deadlines, [("RT chains", rt)], out,
                              f"LaME throttling, real ROS 2, run {k}: RT response times (dashed: deadlines; "
                              f"--: x{factor:.2f} at {args.throttle_at:g} s; dotted: controller re-plans)",
                              vlines=marks, labels={"default": f"{lo.BASELINE}, {lo.deadline_capacity() * 100:.0f} % budgets",
                                                    "lame": "LaME + controller"})
            print(f"  wrote {out}")
    return 0


def _plot(rows, summary, n_windows, args, path) -> None:

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(10, 4))
    ts = [w * args.window for w in range(n_windows)]
    budgets = "100 %" if "deadline_capacity" not in summary else f"{summary['deadline_capacity'] * 100:.0f} %"
    series = [("default_rt_misses", "tab:red", f"{lo.BASELINE}, {budgets} budgets"),
              ("lame_rt_misses", "tab:blue", "LaME + controller" if summary.get("mode") == "simulator" else "LaME")]
    if "lame_plan_rt_misses" in rows[0]:
        series.append(("lame_plan_rt_misses", "tab:green", "LaME, no controller"))
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
