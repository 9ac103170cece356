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

``--real`` runs on real ROS 2 instead, the configurations interleaved (lame_real.REAL_CONFIGS):
the baseline is stock rclcpp's MultiThreadedExecutor with one thread per core on the model's
nodes generated as rclcpp nodes (chainrt_rclcpp_nodes), each thread an unpinned SCHED_DEADLINE
reservation at the largest budget the kernel admits (``sched_rt_runtime_us /
sched_rt_period_us`` of 10 ms, less the fair server's 5 %; the kernel setting is read, never
changed; pinned threads cannot be SCHED_DEADLINE on Linux); LaME with its controller on
chainrt's runtime (``chainrt-run --lame-controller``) and on the rclcpp ChainExecutor running
the baseline's generated nodes; chainrt's emulation of the default executor beside them as a
fidelity column. Every run is accounted (chainrt.accounting, the platform probe beside it):
LaME's RT instances above LaME's bounds by cause, and every configuration's worst RT response
raw and over the platform-free instances.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import random
import statistics
import sys
from dataclasses import dataclass

import yaml

from .. import _core, cliargs
from ..figures import pyplot, save_figure
from ..model import load_model_from_string
from . import lame_real as lr

PAPER = {"default_worst_rt_ms": 850.0, "lame_worst_rt_ms": 175.0, "cores": 3}
PLOT_COLORS = {"default": "tab:red", "emulated": "tab:orange", "lame": "tab:blue", "lame_rclcpp": "tab:cyan"}
# The simulator's baseline is chainrt's model of the ROS 2 default executor (policy ros-default);
# real runs compare with stock rclcpp (lame_real.REAL_CONFIGS; docs/lame.md, "The baseline").
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
    p.add_argument("--configs", default=",".join(lr.REAL_CONFIGS),
                   help="--real: the configurations, comma-separated (default: all): " +
                        "; ".join(f"{k} = {v}" for k, v in lr.REAL_CONFIGS.items()))
    p.add_argument("--no-probe", action="store_true",
                   help="--real: no platform probe beside the runs (the accounting then says so)")
    p.set_defaults(exp_func=run)


@dataclass
class Setup:
    """What every run of the experiment shares: the overloaded model (its document and loaded),
    the baseline's, LaME's plan of it and the chains by class."""
    over: dict
    over_model: object
    default_model: object
    plan: dict
    rt: list[str]
    be: list[str]


def setup(args) -> Setup:
    """The experiment's models and LaME's plan (raises what loading and planning raise)."""
    with open(args.model) as f:
        base = yaml.safe_load(f)
    over = with_cores(overload_document(base), args.cores)
    over_model = load_model_from_string(yaml.safe_dump(over, sort_keys=False), "overload.yaml")
    default_model = load_model_from_string(yaml.safe_dump(default_document(over, args.cores), sort_keys=False),
                                           "default.yaml")
    plan = _core.lame_allocate(over_model, args.cores, be_placement=args.be_placement)
    plan.pop("model")
    rt = [c.name for c in over_model.chains if c.criticality_class == "rt"]
    be = [c.name for c in over_model.chains if c.criticality_class != "rt"]
    return Setup(over, over_model, default_model, plan, rt, be)


def lame_bounds(plan: dict, rt: list[str]) -> dict:
    """{chain: LaME's bound (ns) in `plan`} of the RT chains, None for the others: what a real
    LaME run's instances are accounted against (a baseline has none)."""
    return {c: (plan["chains"].get(c) or {}).get("bound_ns") if c in rt else None for c in plan["chains"]}


def sim_runs(args, s: Setup) -> tuple[dict, dict]:
    """The simulator's runs: per configuration ("default", "lame") the run summaries and their
    controller activations."""
    results, per_run = {"default": [], "lame": []}, {"default": [], "lame": []}
    for config, model in (("default", s.default_model), ("lame", s.over_model)):
        for k in range(args.runs):
            r = sim_run(model, args.duration, 1000 + k, "model" if config == "default" else "controller",
                        args.cores, args.controller_period, args.be_placement)
            per_run[config].append({"activations": r.get("activations", [])})
            results[config].append(r)
    return results, per_run


def real_runs(args, s: Setup, configs: list[str]) -> tuple[dict, dict, list[str]]:
    """The real runs, interleaved (run k of every configuration before run k + 1): per
    configuration the runs (lame_real.real_config_run), their load records and the notes."""
    results = {c: [] for c in configs}
    per_run = {c: [] for c in configs}
    notes = []
    docs = {"lame": s.over, "lame_rclcpp": s.over, "default": real_default_document(s.over, args.cores),
            "emulated": real_default_document(s.over, args.cores)}
    bounds = lame_bounds(s.plan, s.rt)
    none = {c: None for c in bounds}
    for k in range(args.runs):
        for config in configs:
            r = lr.real_config_run(config, docs[config], args.out, str(k), args.duration, 2.0, cores=args.cores,
                                   lock=args.lock, probe=not args.no_probe,
                                   bounds=bounds if config in lr.LAME_CONFIGS else none,
                                   controller_ns=int(args.controller_period * 1e9))
            notes += [f"{config} run {k}: {w}" for w in r["warnings"]]
            notes += [f"{config} run {k}: controller +{a['at_s']:.1f} s {a['trigger']}: {a['decision']} "
                      f"({'; '.join(a['classes'])})" for a in r["activations"] if a["decision"] != "holds"]
            per_run[config].append({**r["load"], "activations": r["activations"], "responses": r["responses"]})
            results[config].append(r)
    return results, per_run, notes


def csv_rows(results: dict, rt: list[str]) -> list[dict]:
    """One row per configuration, run and chain."""
    rows = []
    for config, runs in results.items():
        for k, r in enumerate(runs):
            for name, c in r["chains"].items():
                rows.append({"config": config, "run": k, "chain": name,
                             "class": "rt" if name in rt else "be", "wcrt_ms": c["wcrt_ns"] / 1e6,
                             "mean_ms": c["mean_ns"] / 1e6, "deadline_ms": c["deadline_ns"] / 1e6,
                             "instances": c["instances"], "released": c["released"] if "released" in c else "",
                             "deadline_misses": c["deadline_misses"]})
    return rows


def stat(values):
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values),
            "stdev": statistics.pstdev(values)}


def config_summary(runs: list[dict], rt: list[str], be: list[str], seconds: float) -> dict:
    """One configuration over its runs: worst RT response and RT misses (spread), per chain."""
    worst_rt = [max(r["chains"][c]["wcrt_ns"] for c in rt) / 1e6 for r in runs]
    misses = [sum(r["chains"][c]["deadline_misses"] for c in rt) for r in runs]

    # A chain that completed no instance in a run starved: its response time is at least the
    # run's length (reported as that, and counted).
    def worst(r, c):
        ch = r["chains"][c]
        return ch["wcrt_ns"] / 1e6 if ch["instances"] > 0 else seconds * 1e3
    worst_be = {c: stat([worst(r, c) for r in runs]) for c in be}
    starved = {c: sum(1 for r in runs if r["chains"][c]["instances"] == 0) for c in be}
    return {"worst_rt_ms": stat(worst_rt), "rt_deadline_misses": stat(misses),
            "worst_rt_ms_per_run": worst_rt, "rt_deadline_misses_per_run": misses,
            "rt_chains": {c: stat([r["chains"][c]["wcrt_ns"] / 1e6 for r in runs]) for c in rt},
            "be_chains_worst_ms": worst_be, "be_starved_runs": starved}


def summarise(args, s: Setup, results: dict, per_run: dict, notes: list[str]) -> dict:
    """The JSON summary of every run."""
    summary = {"deadlines_ms": {c.name: c.deadline / 1e6 for c in s.over_model.chains}, "cores": args.cores,
               "runs": args.runs, "seconds": args.duration, "paper": PAPER,
               "mode": "real ROS 2" if args.real else "simulator", "real_notes": notes,
               "baseline": lr.REAL_CONFIGS["default"] if args.real else BASELINE,
               "deadline_capacity": deadline_capacity(),
               "lame_plan": {"rt_classes": s.plan["rt_classes"], "be_classes": s.plan["be_classes"],
                             "demotions": s.plan["demotions"]}}
    if args.real:
        summary["labels"] = {c: lr.REAL_CONFIGS[c] for c in results}
        summary["load_per_run"] = {c: [(p["load_before"], p["load_after"]) for p in per_run[c]] for c in per_run}
        acts = [p["activations"] for c in lr.LAME_CONFIGS if c in per_run for p in per_run[c]]
        summary["lame_activations"] = {c: [p["activations"] for p in per_run[c]] for c in lr.LAME_CONFIGS
                                       if c in per_run}
        summary["lame_activation_cpu_ms"] = lr.activation_cost(acts)
        summary["accounting"] = {c: lr.accounting_summary(results[c], s.rt) for c in results}
        summary["platform"] = {c: [{k: p.get(k) for k in ("steal_percent", "longest_blackout_ms", "probe_error")}
                                   for p in per_run[c]] for c in per_run}
    for config in results:
        summary[config] = config_summary(results[config], s.rt, s.be, args.duration)
    # The BE chains' fate and the rule that decides it: the class each one's own callbacks run
    # in, that class's utilisation against its supply (the plan the LaME run started with).
    lame = results.get("lame") or []
    used = lame[0].get("initial_plan", s.plan) if lame else s.plan
    summary["lame_plan"] = {"rt_classes": used["rt_classes"], "be_classes": used["be_classes"],
                            "demotions": used["demotions"], "be_placement": args.be_placement}
    fate = be_fate(used, lame[0], s.be) if lame else {}
    for c in fate:
        fate[c]["starved_runs"] = summary["lame"]["be_starved_runs"][c]
    summary["lame_be_fate"] = fate
    if not args.real:
        summary["lame_activations"] = [[{k: a[k] for k in ("at_s", "trigger", "decision", "kind", "why", "demoted")}
                                        for a in p["activations"]] for p in per_run["lame"]]
    return summary


def fidelity(summary: dict) -> dict | None:
    """chainrt's emulation of the default executor against stock rclcpp in the same run: the
    ratio of their worst RT responses per run (None without both)."""
    if "emulated" not in summary or "default" not in summary:
        return None
    ratios = [e / d for e, d in zip(summary["emulated"]["worst_rt_ms_per_run"], summary["default"]["worst_rt_ms_per_run"])
              if d > 0]
    return stat(ratios) if ratios else None


def print_header(args, summary: dict) -> None:
    print(f"LaME overload experiment, {summary['mode']}, {args.cores} cores, {args.runs} runs x {args.duration:g} s "
          f"(paper: 3 cores, Jetson AGX Xavier)")
    if args.real:
        print(f"  default: {lr.REAL_CONFIGS['default']} on the model's nodes generated as rclcpp nodes, each thread "
              f"an unpinned SCHED_DEADLINE reservation of {deadline_capacity() * 100:.0f} % (the kernel's admission "
              f"limit; the paper: 100 %); LaME with its controller; configurations interleaved")
    else:
        print(f"  default: {BASELINE}, not stock rclcpp; {args.cores} threads at 100 % budgets")
    if args.real:
        for n in summary["real_notes"]:
            print(f"  note: {n}")


def print_configs(args, summary: dict, configs: list[str]) -> None:
    """Worst RT response and RT misses per configuration, then its BE chains."""
    for config in configs:
        s = summary[config]
        w = s["worst_rt_ms"]
        m = s["rt_deadline_misses"]
        paper = PAPER.get(config + "_worst_rt_ms")
        print(f"  {config:8s} worst RT response {w['mean']:8.1f} ms (min {w['min']:.1f}, max {w['max']:.1f}); "
              f"RT deadline misses per run {m['mean']:.1f} (min {m['min']}, max {m['max']})"
              + (f"; paper {paper:.0f} ms" if paper is not None else ""))
    for config in configs:
        st = summary[config]["be_chains_worst_ms"]
        starved = [c for c, n in summary[config]["be_starved_runs"].items() if n]
        fed = [st[c]["mean"] for c in st if c not in starved]
        print(f"  {config:8s} BE chains: worst response (mean over runs) of the chains that completed instances: "
              f"median {statistics.median(fed) if fed else float('nan'):.1f} ms, max {max(fed) if fed else float('nan'):.1f} ms; "
              f"starved (no instance completed in some run): {', '.join(starved) or 'none'}")


def print_be_side(args, summary: dict) -> None:
    """LaME's BE classes: utilisation against supply, and which chains starved."""
    used, fate = summary["lame_plan"], summary["lame_be_fate"]
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


def print_real(args, summary: dict, per_run: dict) -> None:
    """The real runs: labels, per-run figures and load, the accounting, the fidelity column and
    the controller's cost."""
    for config in per_run:
        loads = [f"{p['load_before'][0]:.2f}-{p['load_after'][0]:.2f}" for p in per_run[config] if p["load_before"]]
        print(f"  {config:8s} = {lr.REAL_CONFIGS[config]}; per run: worst RT "
              f"{', '.join(f'{v:.1f}' for v in summary[config]['worst_rt_ms_per_run'])} ms; "
              f"RT misses {summary[config]['rt_deadline_misses_per_run']}; 1-min load before-after {', '.join(loads)}")
    for line in accounting_lines(summary["accounting"]):
        print(line)
    fid = fidelity(summary)
    if fid:
        print(f"  fidelity: chainrt's emulation of the default executor / stock rclcpp MultiThreaded, worst RT response "
              f"in the same run: {fid['mean']:.2f} (min {fid['min']:.2f}, max {fid['max']:.2f})")
    cost = summary["lame_activation_cpu_ms"].get("all")
    if cost:
        print(f"  LaME controller CPU time per activation (decide + apply, {cost['n']} activations): median "
              f"{cost['median_ms']:.2f} ms, p90 {cost['p90_ms']:.2f} ms, max {cost['max_ms']:.2f} ms")


def accounting_lines(acc: dict) -> list[str]:
    """The accounting of the RT chains per configuration: instances above LaME's bounds by cause
    (a baseline has no bound), the worst response raw and platform-free per run."""
    def ms(values):
        return ", ".join("-" if v is None else f"{v:.1f}" for v in values)
    lines = ["  accounting of the RT chains (above LaME's bounds: platform / overrun / unexplained; worst response "
             "raw and over the platform-free instances, per run):"]
    for config, a in acc.items():
        above = f"{a['above']}: {a['platform']} / {a['overrun']} / {a['unexplained']}" \
            if config in lr.LAME_CONFIGS else "no bound"
        lines.append(f"    {config:11s} above {above}; worst raw {ms(a['worst_raw_ms'])} ms, platform-free "
                     f"{ms(a['worst_free_ms'])} ms ({'/'.join('-' if v is None else str(v) for v in a['free_instances'])}"
                     f" of {'/'.join(map(str, a['instances']))} instances platform-free)")
        lines += [f"      note: {n}" for n in a["notes"]]
    return lines


def write_outputs(args, rows: list[dict], summary: dict) -> None:
    with open(os.path.join(args.out, "lame_overload.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "lame_overload.json"), "w") as f:
        json.dump(summary, f, indent=2)


def figures(args, s: Setup, summary: dict, per_run: dict) -> None:
    _plot(summary, s.rt, s.be, os.path.join(args.out, "lame_overload.png"), summary["mode"])
    print(f"  wrote {os.path.join(args.out, 'lame_overload.png')}")
    if not args.real:
        return
    series = {c: per_run[c][0]["responses"] for c in per_run}
    marks = {c: [(a["at_s"], "replan") for a in per_run[c][0]["activations"]
                 if a["decision"] != "holds" and a["trigger"] != "initial"] for c in per_run}
    out = os.path.join(args.out, "lame_overload_response.png")
    lr.plot_responses(series, summary["deadlines_ms"], [("RT chains", s.rt), ("BE chains", s.be)], out,
                      f"LaME overload, real ROS 2, {args.cores} cores, run 0: response time of every chain "
                      f"instance (dashed: deadlines; dotted: controller re-plans)",
                      vlines=marks, labels=summary["labels"])
    print(f"  wrote {out}")


def run(args) -> int:
    try:
        configs = lr.parse_configs(args.configs) if args.real else ["default", "lame"]
        s = setup(args)
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as err:
        print(f"chainrt experiment lame-overload: {err}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    try:
        if args.real:
            results, per_run, notes = real_runs(args, s, configs)
        else:
            (results, per_run), notes = sim_runs(args, s), []
    except Exception as err:  # the simulator's, the runtime's and the generated nodes' one-line errors
        print(f"chainrt experiment lame-overload: {err}", file=sys.stderr)
        return 1
    summary = summarise(args, s, results, per_run, notes)
    write_outputs(args, csv_rows(results, s.rt), summary)
    print_header(args, summary)
    print_configs(args, summary, configs)
    if "lame" in results:
        print_be_side(args, summary)
    if not args.real:
        for k, acts in enumerate(summary["lame_activations"]):
            changes = [f"{a['at_s']:.1f} s {a['kind']}" for a in acts if a["decision"] == "reallocated"
                       and a["trigger"] != "initial"]
            if changes:
                print(f"  LaME controller run {k}: {', '.join(changes)}")
    else:
        print_real(args, summary, per_run)
    if not args.no_plot:
        figures(args, s, summary, per_run)
    print(f"  wrote {os.path.join(args.out, 'lame_overload.csv')} and lame_overload.json")
    return 0


def _plot(summary, rt, be, path, mode="simulator") -> None:

    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [1, 3]})
    for ax, names, key, title in ((axes[0], rt, "rt_chains", "RT chains (cf. paper Fig. 5)"),
                                  (axes[1], be, "be_chains_worst_ms", "BE chains (cf. paper Fig. 6)")):
        xs = range(len(names))
        configs = [c for c in PLOT_COLORS if c in summary]
        width = 0.8 / len(configs)
        for i, config in enumerate(configs):
            st = summary[config][key]
            means = [st[n]["mean"] for n in names]
            lo = [st[n]["mean"] - st[n]["min"] for n in names]
            hi = [st[n]["max"] - st[n]["mean"] for n in names]
            if mode == "simulator":
                label = "LaME" if config == "lame" else f"{BASELINE}, 100 % budgets"
            else:
                label = summary["labels"][config] + ("" if config in lr.LAME_CONFIGS else
                                                     f", {summary['deadline_capacity'] * 100:.0f} % budgets")
            ax.bar([x + (i - (len(configs) - 1) / 2) * width for x in xs], means, width, yerr=[lo, hi],
                   color=PLOT_COLORS[config], capsize=2, label=label)
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
