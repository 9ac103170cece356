"""LaME Sec. 5.2 (Fig. 5 and 6), scaled to this machine's 2 cores: the Autoware LaME variant
with chains 4 and 5 duplicated and every duplicated callback at 100 ms, under

- ``ros-default``: the default multi-threaded executor, one thread per core, each thread a
  SCHED_DEADLINE reservation of 100 % (10 ms every 10 ms), as the paper's baseline;
- ``lame``: LaME's thread classes, allocation and budgets from ``chainrt lame allocate``
  (Algorithms 1-3 on the overloaded model, the execution times the controller would measure).

Runs in the deterministic simulator, ``--runs`` times with random timer phases (the seed of
run k draws every timer's offset uniformly in [0, period)); reports the worst RT-chain response
time, deadline misses and the BE chains' worst response times per configuration with their
spread over the runs, a CSV, a JSON summary and a figure next to the paper's numbers (850 ms
default -> 175 ms LaME on 3 cores of a Jetson AGX Xavier).

Deviation: 2 cores instead of the paper's 3; the simulator has no DDS threads, no kernel
overheads and no mutex stalls (the paper's RT-mutex problem), so it shows the scheduling effect
alone.

``--real`` runs both configurations on real ROS 2 instead (``chainrt run`` machinery, one
``chainrt-run`` process): LaME with its controller (``--lame-controller``), the default
executor with one unpinned SCHED_DEADLINE thread per core at the largest budget the kernel
admits (``sched_rt_runtime_us / sched_rt_period_us`` of 10 ms, 95 % by default; the kernel
setting is read, never changed; pinned threads cannot be SCHED_DEADLINE on Linux).
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

from .. import _core, cliargs, runtime
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import lame_real as lr

PAPER = {"default_worst_rt_ms": 850.0, "lame_worst_rt_ms": 175.0, "cores": 3}
# The baseline is chainrt's model of the ROS 2 default executor (policy ros-default, on the
# simulator or on chainrt's own runtime), not stock rclcpp: the overloaded LaME workload exists
# only as a chainrt model and LaME only on chainrt's runtime (docs/lame.md, "The baseline").
BASELINE = "ROS 2 default as chainrt emulates it (ros-default)"
DUPLICATED = ("c04_behaviour_vehicle", "c05_visualizer_planner")
EXTRA_WCET = "100ms"


def _example_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "examples", "autoware_lame.yaml"))


def overload_document(doc: dict) -> dict:
    """Chains 4 and 5 duplicated (callbacks, nodes and topics copied with a "_dup" suffix), every
    duplicated callback's WCET set to 100 ms (LaME Sec. 5.2)."""
    d = copy.deepcopy(doc)
    cbs = {c["name"]: c for c in d["callbacks"]}
    chains = {c["name"]: c for c in d["chains"]}
    nodes = {n["name"]: n for n in d["nodes"]}
    topics = {t["name"] for t in d["topics"]}
    for name in DUPLICATED:
        ch = chains[name]
        new_names = {}
        for cb in ch["callbacks"]:
            src = cbs[cb]
            node = src["node"] + "_dup"
            if node not in nodes:
                nodes[node] = {"name": node, "executor": nodes[src["node"]]["executor"]}
                d["nodes"].append(nodes[node])
            dup = copy.deepcopy(src)
            dup["name"] = node + "/" + src["name"].split("/", 1)[1] + "_" + name[:3]
            dup["node"] = node
            dup["wcet"] = EXTRA_WCET
            dup.pop("priority", None)
            dup.pop("fuses", None)
            if dup.get("kind") in ("fusion_input", "fusion_trigger"):
                dup["kind"] = "subscription"
            if "topic" in dup:
                dup["topic"] = new_names.get(dup["topic"], dup["topic"])
            pubs = []
            for t in src.get("publishes", []):
                nt = t + "_dup_" + name[:3]
                new_names[t] = nt
                if nt not in topics:
                    topics.add(nt)
                    d["topics"].append({"name": nt, "size": "4096B"})
                pubs.append(nt)
            if pubs:
                dup["publishes"] = pubs
            else:
                dup.pop("publishes", None)
            d["callbacks"].append(dup)
            cbs[dup["name"]] = dup
            new_names[cb] = dup["name"]
        d["chains"].append({"name": name + "_dup", "callbacks": [new_names[c] for c in ch["callbacks"]],
                            "deadline": ch["deadline"], "class": "be"})
    d["name"] = d.get("name", "autoware_lame") + "_overload"
    return d


def default_document(doc: dict, cores: int, period: str = "10ms") -> dict:
    """The baseline: ros-default, one thread per core, each at a 100 % SCHED_DEADLINE budget."""
    d = copy.deepcopy(doc)
    for e in d["executors"]:
        e["policy"] = "ros-default"
        e.pop("thread_classes", None)
        e["threads"] = [{"name": f"t{k}", "cores": [k], "reservation": {"budget": period, "period": period}}
                        for k in range(cores)]
    for cb in d["callbacks"]:
        cb.pop("affinity", None)
    return d


def deadline_capacity() -> float:
    """The SCHED_DEADLINE share of a core reservations can get: the kernel's admission limit
    (0.95 by default; 1.0: no limit) less the fair-class deadline server's 0.05."""
    try:
        with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
            runtime = int(f.read())
        with open("/proc/sys/kernel/sched_rt_period_us") as f:
            period = int(f.read())
    except (OSError, ValueError):
        return 0.95
    # less the 5 % of every core's fair-class deadline server (Linux >= 6.12), as the runtime
    return 1.0 if runtime < 0 else max(0.01, min(1.0, runtime / period) - 0.05)


def real_default_document(doc: dict, cores: int, period_ns: int = 10_000_000) -> dict:
    """The baseline for real ROS 2: ros-default, one UNPINNED thread per core, each at the
    largest SCHED_DEADLINE budget the kernel admits (Linux refuses SCHED_DEADLINE for a thread
    pinned to fewer cores than its root domain)."""
    d = default_document(doc, cores)
    budget = int(period_ns * deadline_capacity())
    for e in d["executors"]:
        e["threads"] = [{"name": f"t{k}", "reservation": {"budget": f"{budget}ns", "period": f"{period_ns}ns"}}
                        for k in range(cores)]
    return d


def real_run(doc: dict, path: str, seconds: float, extra: list[str] | None = None, warmup: float = 2.0) -> dict:
    """One run of the model `doc` (written to `path`) on real ROS 2 through chainrt-run; the merged
    report (chains as the simulator's summary has them, "lame_controller", "warnings")."""

    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return runtime.run_model(path, int(seconds * 1e9), warmup_ns=int(warmup * 1e9), extra_args=extra or [])


def with_cores(doc: dict, cores: int) -> dict:
    """The model with `cores` cores on every host that runs an executor (``--cores`` overrides the
    model's cores: LaME's allocation and the baseline then see the same machine)."""
    d = copy.deepcopy(doc)
    hosts = {e.get("host") for e in d.get("executors", [])}
    for h in d.get("hosts", []):
        if h["name"] in hosts or None in hosts:
            h["cores"] = cores
    return d


def phases(model, seed: int) -> dict[str, int]:
    """Timer offsets of run `seed`: every timer's phase drawn uniformly in [0, period)."""
    rng = random.Random(seed)
    return {cb.name: rng.randrange(0, cb.period) for cb in model.callbacks if cb.kind == "timer" and cb.period > 0}


def sim_run(model, seconds: float, seed: int, mode: str, cores: int = 0, controller_period: float = 10.0,
            be_placement: str = "capacity", scale_at: float | None = None, factor: tuple[int, int] = (1, 1)) -> dict:
    """One deterministic simulation (chainrt._core.lame_simulate) with the run's random phases:
    mode "controller" (LaME and its controller, lame::Controller on the simulated measurements),
    "plan" (LaME's initial plan, never changed) or "model" (the model as it is: the baseline).
    From `scale_at` seconds on every execution time is x factor[0]/factor[1]. The summary (as
    `chainrt simulate --json`) under "chains", plus "responses" (per chain (release s, response
    ms) of every completed instance), "activations" and the plans."""
    r = _core.lame_simulate(model, int(seconds * 1e9), seed, cores, int(controller_period * 1e9), 10_000_000, 1000,
                            mode, -1 if scale_at is None else int(scale_at * 1e9), factor[0], factor[1], "wcet",
                            phases(model, seed), be_placement)
    out = json.loads(r["summary"])
    out["responses"] = {c: [(t / 1e9, v / 1e6) for t, v in pts] for c, pts in r["responses"].items()}
    out["activations"] = [dict(a, at_s=a["at_ns"] / 1e9) for a in r["activations"]]
    for key in ("initial_plan", "final_plan"):
        if key in r:
            out[key] = r[key]
    return out


def be_fate(plan: dict, result: dict, be: list[str]) -> dict:
    """Per BE chain (of the model, demoted RT chains included): the BE class of the plan that
    serves its own callbacks, that class's utilisation and supply (threads x budget share), and
    what the run did (instances completed; starved = none)."""
    supply = {c["name"]: c["threads"] * c["runtime_ns"] / c["period_ns"] for c in plan["be_classes"]}
    util = {c["name"]: c["utilisation_per_thread"] * c["threads"] for c in plan["be_classes"]}
    where = {}
    for c in plan["be_classes"]:
        for lin in c["chains"]:
            where.setdefault(lin.split("#")[0], c["name"])
    for lin in plan["linear_chains"]:  # a chain that owns nothing runs in its prefix's class
        where.setdefault(lin["origin"], "(prefix of " + (lin["upstream"] or "?") + ")")
    out = {}
    for name in be:
        k = where.get(name, "")
        ch = result["chains"].get(name, {})
        out[name] = {"class": k, "class_utilisation": round(util.get(k, 0.0), 4),
                     "class_supply": round(supply.get(k, 0.0), 4),
                     "class_overloaded": k in util and util[k] >= supply[k],
                     "instances": ch.get("instances", 0), "starved": ch.get("instances", 0) == 0}
    return out


def add_parser(esub) -> None:
    p = esub.add_parser("lame-overload",
                        help="LaME Sec. 5.2 on 2 cores: worst RT/BE response, default executor vs LaME (simulator)")
    p.add_argument("--model", type=cliargs.model_path, default=_example_path(), help="base model (default examples/autoware_lame.yaml)")
    p.add_argument("--cores", type=cliargs.count(1, 1024, "a number of cores"), default=2,
                   help="cores (default 2; the paper used 3); overrides the model's cores")
    p.add_argument("--duration", type=cliargs.seconds, default=60.0, help="simulated seconds per run (default 60)")
    p.add_argument("--runs", type=cliargs.positive, default=3, help="runs per configuration, random timer phases (default 3)")
    p.add_argument("--out", default="out/lame_overload", help="output folder")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--real", action="store_true",
                   help="run on real ROS 2 (chainrt-run; LaME with its controller) instead of the simulator")
    p.add_argument("--controller-period", type=cliargs.seconds, default=10.0, help="LaME controller period (s, default 10)")
    p.add_argument("--be-placement", choices=("capacity", "paper"), default="capacity",
                   help="where LaME puts best-effort chains (default capacity; paper: Algorithm 2, lines 38-41)")
    p.add_argument("--lock", default="", type=cliargs.lock_file, metavar="FILE",
                   help="--real: hold an flock on FILE during each run (a machine-wide measurement lock)")
    p.set_defaults(exp_func=run)


def run(args) -> int:
    try:
        with open(args.model) as f:
            base = yaml.safe_load(f)
        over = with_cores(overload_document(base), args.cores)
        over_model = load_model_from_string(yaml.safe_dump(over, sort_keys=False), "overload.yaml")
        default_model = load_model_from_string(yaml.safe_dump(default_document(over, args.cores), sort_keys=False),
                                               "default.yaml")
        plan = _core.lame_allocate(over_model, args.cores, be_placement=args.be_placement)
        plan.pop("model")
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as err:
        print(f"chainrt experiment lame-overload: {err}", file=sys.stderr)
        return 1
    rt = [c.name for c in over_model.chains if c.criticality_class == "rt"]
    be = [c.name for c in over_model.chains if c.criticality_class != "rt"]
    os.makedirs(args.out, exist_ok=True)
    rows, results = [], {"default": [], "lame": []}
    real_warnings = []
    per_run = {"default": [], "lame": []}  # --real: load, controller activations, trace
    leaves = lr.leaves_of(over_model)
    for config, model in (("default", default_model), ("lame", over_model)):
        for k in range(args.runs):
            if args.real:
                trace = os.path.join(args.out, f"{config}_{k}.trace.jsonl")
                try:
                    with lr.measurement_lock(args.lock):
                        load0 = lr.loadavg()
                        if config == "default":
                            r = real_run(real_default_document(over, args.cores), os.path.join(args.out, "default.yaml"),
                                         args.duration, ["--trace", trace])
                        else:
                            r = real_run(over, os.path.join(args.out, "overload.yaml"), args.duration,
                                         ["--lame-controller", f"{int(args.controller_period * 1e9)}ns", "--trace", trace])
                        load1 = lr.loadavg()
                except Exception as err:  # the runtime's one-line errors
                    print(f"chainrt experiment lame-overload: {err}", file=sys.stderr)
                    return 1
                real_warnings += [f"{config} run {k}: {w}" for w in r.get("warnings", [])]
                if "lame_controller" in r:
                    real_warnings += [f"lame run {k}: controller +{a['at_ns'] / 1e9:.1f} s {a['trigger']}: "
                                      f"{a['decision']} ({'; '.join(a['classes'])})"
                                      for a in r["lame_controller"] if a["decision"] != "holds"]
                per_run[config].append({"load_before": load0, "load_after": load1, "trace": trace,
                                        "activations": lr.activations(r)})
            else:
                try:
                    r = sim_run(model, args.duration, 1000 + k, "model" if config == "default" else "controller",
                                args.cores, args.controller_period, args.be_placement)
                except ValueError as err:
                    print(f"chainrt experiment lame-overload: {err}", file=sys.stderr)
                    return 1
                per_run[config].append({"activations": r.get("activations", [])})
            results[config].append(r)
            for name, c in r["chains"].items():
                rows.append({"config": config, "run": k, "chain": name,
                             "class": "rt" if name in rt else "be", "wcrt_ms": c["wcrt_ns"] / 1e6,
                             "mean_ms": c["mean_ns"] / 1e6, "deadline_ms": c["deadline_ns"] / 1e6,
                             "instances": c["instances"], "released": c["released"] if "released" in c else "",
                             "deadline_misses": c["deadline_misses"]})
    with open(os.path.join(args.out, "lame_overload.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    def stat(values):
        return {"mean": statistics.fmean(values), "min": min(values), "max": max(values),
                "stdev": statistics.pstdev(values)}

    summary = {"deadlines_ms": {c.name: c.deadline / 1e6 for c in over_model.chains}, "cores": args.cores, "runs": args.runs, "seconds": args.duration, "paper": PAPER,
               "mode": "real ROS 2" if args.real else "simulator", "real_notes": real_warnings, "baseline": BASELINE,
               "deadline_capacity": deadline_capacity(),
               "lame_plan": {"rt_classes": plan["rt_classes"], "be_classes": plan["be_classes"],
                             "demotions": plan["demotions"]}}
    if args.real:
        summary["load_per_run"] = {c: [(p["load_before"], p["load_after"]) for p in per_run[c]] for c in per_run}
        acts = [p["activations"] for p in per_run["lame"]]
        summary["lame_activations"] = acts
        summary["lame_activation_cpu_ms"] = lr.activation_cost(acts)
    for config in results:
        worst_rt = [max(r["chains"][c]["wcrt_ns"] for c in rt) / 1e6 for r in results[config]]
        misses = [sum(r["chains"][c]["deadline_misses"] for c in rt) for r in results[config]]
        # A chain that completed no instance in a run starved: its response time is at least the
        # run's length (reported as that, and counted).
        def worst(r, c):
            ch = r["chains"][c]
            return ch["wcrt_ns"] / 1e6 if ch["instances"] > 0 else args.duration * 1e3
        worst_be = {c: stat([worst(r, c) for r in results[config]]) for c in be}
        starved = {c: sum(1 for r in results[config] if r["chains"][c]["instances"] == 0) for c in be}
        summary[config] = {"worst_rt_ms": stat(worst_rt), "rt_deadline_misses": stat(misses),
                           "worst_rt_ms_per_run": worst_rt, "rt_deadline_misses_per_run": misses,
                           "rt_chains": {c: stat([r["chains"][c]["wcrt_ns"] / 1e6 for r in results[config]]) for c in rt},
                           "be_chains_worst_ms": worst_be, "be_starved_runs": starved}
    # The BE chains' fate and the rule that decides it: the class each one's own callbacks run
    # in, that class's utilisation against its supply (the plan the LaME run started with).
    used = results["lame"][0].get("initial_plan", plan) if results["lame"] else plan
    summary["lame_plan"] = {"rt_classes": used["rt_classes"], "be_classes": used["be_classes"],
                            "demotions": used["demotions"], "be_placement": args.be_placement}
    fate = be_fate(used, results["lame"][0], be) if results["lame"] else {}
    for c in fate:
        fate[c]["starved_runs"] = summary["lame"]["be_starved_runs"][c]
    summary["lame_be_fate"] = fate
    if not args.real:
        summary["lame_activations"] = [[{k: a[k] for k in ("at_s", "trigger", "decision", "kind", "why", "demoted")}
                                        for a in p["activations"]] for p in per_run["lame"]]
    with open(os.path.join(args.out, "lame_overload.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"LaME overload experiment, {summary['mode']}, {args.cores} cores, {args.runs} runs x {args.duration:g} s "
          f"(paper: 3 cores, Jetson AGX Xavier)")
    print(f"  default: {BASELINE}, not stock rclcpp; " + (
        f"{args.cores} unpinned SCHED_DEADLINE threads at {deadline_capacity() * 100:.0f} % (the kernel's admission "
        f"limit), LaME with its controller" if args.real else f"{args.cores} threads at 100 % budgets"))
    if args.real:
        for n in real_warnings:
            print(f"  note: {n}")
    for config in ("default", "lame"):
        s = summary[config]
        w = s["worst_rt_ms"]
        m = s["rt_deadline_misses"]
        print(f"  {config:8s} worst RT response {w['mean']:8.1f} ms (min {w['min']:.1f}, max {w['max']:.1f}); "
              f"RT deadline misses per run {m['mean']:.1f} (min {m['min']}, max {m['max']}); "
              f"paper {PAPER[config + '_worst_rt_ms']:.0f} ms")
    for config in ("default", "lame"):
        st = summary[config]["be_chains_worst_ms"]
        starved = [c for c, n in summary[config]["be_starved_runs"].items() if n]
        fed = [st[c]["mean"] for c in be if c not in starved]
        print(f"  {config:8s} BE chains: worst response (mean over runs) of the chains that completed instances: "
              f"median {statistics.median(fed) if fed else float('nan'):.1f} ms, max {max(fed) if fed else float('nan'):.1f} ms; "
              f"starved (no instance completed in some run): {', '.join(starved) or 'none'}")
    print(f"  LaME best-effort side ({args.be_placement} placement; RT budgets "
          f"{lr.budgets(used['rt_classes'])}):")
    for k in used["be_classes"]:
        members = [c for c, f in fate.items() if f["class"] == k["name"]]
        if not members and not k["chains"]:
            continue
        u = k["utilisation_per_thread"] * k["threads"]
        cap = k["threads"] * k["runtime_ns"] / k["period_ns"]
        print(f"    {k['name']} (cores {','.join(map(str, k['cores']))}): utilisation {u:.2f} of supply {cap:.2f}"
              f"{' - OVERLOADED' if u >= cap else ''}; chains "
              + ", ".join(f"{c}{' (starved)' if fate[c]['starved_runs'] else ''}" for c in members))
    if not args.real:
        for k, acts in enumerate(summary["lame_activations"]):
            changes = [f"{a['at_s']:.1f} s {a['kind']}" for a in acts if a["decision"] == "reallocated"
                       and a["trigger"] != "initial"]
            if changes:
                print(f"  LaME controller run {k}: {', '.join(changes)}")
    if args.real:
        for config in ("default", "lame"):
            loads = [f"{p['load_before'][0]:.2f}-{p['load_after'][0]:.2f}" for p in per_run[config] if p["load_before"]]
            print(f"  {config:8s} per run: worst RT {', '.join(f'{v:.1f}' for v in summary[config]['worst_rt_ms_per_run'])} ms; "
                  f"RT misses {summary[config]['rt_deadline_misses_per_run']}; 1-min load before-after {', '.join(loads)}")
        cost = summary["lame_activation_cpu_ms"].get("all")
        if cost:
            print(f"  LaME controller CPU time per activation (decide + apply, {cost['n']} activations): median "
                  f"{cost['median_ms']:.2f} ms, p90 {cost['p90_ms']:.2f} ms, max {cost['max_ms']:.2f} ms")
    if not args.no_plot:
        _plot(summary, rt, be, os.path.join(args.out, "lame_overload.png"), summary["mode"])
        print(f"  wrote {os.path.join(args.out, 'lame_overload.png')}")
        if args.real:
            series = {c: lr.trace_responses(per_run[c][0]["trace"], leaves) for c in per_run}
            marks = {"lame": [(a["at_s"], "replan") for a in per_run["lame"][0]["activations"]
                              if a["decision"] != "holds" and a["trigger"] != "initial"]}
            out = os.path.join(args.out, "lame_overload_response.png")
            lr.plot_responses(series, summary["deadlines_ms"], [("RT chains", rt), ("BE chains", be)], out,
                              f"LaME overload, real ROS 2, {args.cores} cores, run 0: response time of every chain "
                              f"instance (dashed: deadlines; dotted: controller re-plans)",
                              vlines=marks, labels={"default": f"{BASELINE}, {deadline_capacity() * 100:.0f} % budgets",
                                                    "lame": "LaME + controller"})
            print(f"  wrote {out}")
    print(f"  wrote {os.path.join(args.out, 'lame_overload.csv')} and lame_overload.json")
    return 0


def _plot(summary, rt, be, path, mode="simulator") -> None:

    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [1, 3]})
    for ax, names, key, title in ((axes[0], rt, "rt_chains", "RT chains (cf. paper Fig. 5)"),
                                  (axes[1], be, "be_chains_worst_ms", "BE chains (cf. paper Fig. 6)")):
        xs = range(len(names))
        for off, config, color in ((-0.2, "default", "tab:red"), (0.2, "lame", "tab:blue")):
            st = summary[config][key]
            means = [st[n]["mean"] for n in names]
            lo = [st[n]["mean"] - st[n]["min"] for n in names]
            hi = [st[n]["max"] - st[n]["mean"] for n in names]
            ax.bar([x + off for x in xs], means, 0.4, yerr=[lo, hi], color=color, capsize=2,
                   label=("LaME" if config == "lame" else f"{BASELINE}, " +
                          (f"{summary['deadline_capacity'] * 100:.0f} % budgets" if mode != "simulator" else "100 % budgets")))
        if key == "rt_chains":  # deadlines (pink lines in the paper's Fig. 5)
            for x, n in zip(xs, names):
                ax.hlines(summary["deadlines_ms"][n], x - 0.45, x + 0.45, colors="magenta", lw=2)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([n.split("_")[0] + ("*" if n.endswith("_dup") else "") for n in names], rotation=45)
        ax.set_ylabel("worst response time [ms]")
        ax.set_title(title)
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    axes[0].axhline(summary["paper"]["default_worst_rt_ms"], color="tab:red", ls=":", lw=1)
    axes[0].axhline(summary["paper"]["lame_worst_rt_ms"], color="tab:blue", ls=":", lw=1)
    axes[0].text(0.02, 0.98, "dotted: paper (3 cores)", transform=axes[0].transAxes, va="top", fontsize=7)
    fig.suptitle(f"LaME overload, {mode}, {summary['cores']} cores, {summary['runs']} runs "
                 f"(bars: mean, whiskers: min-max); * = duplicated 100 ms chain")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
