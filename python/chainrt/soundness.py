"""Soundness harness: ``chainrt experiment soundness --analysis NAME --sets N``.

For each analysis (or the one named), the C++ harness (sim/soundness.hpp) generates systems
with the analysis module's generators, simulates each under the analysis's policy with
adversarial choices (synchronous and random offsets, WCET, BCET/WCET mixes, uniform execution
times) and reports every chain whose simulated response time exceeds its bound (or falls
below its best-case bound, or misses a deadline the analysis calls met). ``--harsh`` also pushes
every system outside the papers' assumptions (contradicting and tied priorities, execution below
WCET, constrained deadlines, executors sharing cores, jitter, overload, deadlines equal to the
bounds, offsets clustered within nanoseconds) and ``--climb N`` hill-climbs over timer offsets and
per-callback execution times (docs/analysis.md, "Soundness"). Counterexamples are saved as model
files. Exit status: 0 no counterexample, 2 counterexamples found, 1 error (a batch that failed
included), 130 interrupted.

The systems are a campaign (chainrt.campaign, docs/campaigns.md): batches of ``--batch`` systems
(systems FIRST .. FIRST + n - 1 of the seed, the harness's ``first``), run on the embedded local
Dask cluster (every core), on a running cluster (``--cluster``) or in this process
(``--in-process``), kept per batch in ``<out>/campaign-soundness-<key>/``; the same command
resumes an interrupted campaign. The merged report is the harness's own for all the systems at
once: counts add up, the tightness figures are recomputed from every batch's ratios, and the
counterexamples are listed in system order.

``add_arguments(parser)`` and ``run(args) -> int`` are called by the ``experiment`` command.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from . import _core, cliargs
from .campaign import command
from .campaign.plan import merge, quantile, Spec, split
from .model import analysis_names, policy_names

#: A normalised utilisation drawn per system: above 0, at most 1 (the cores full).
U_NORM = cliargs.number(0, 1, "a normalised utilisation", above=True)


# Systems per batch: a system takes 1.6 ms here (a harsh one climbing 8 steps 2.4-3 ms), so a
# batch takes 0.6-2 s, far above what a Dask task costs (10-16 ms of CPU here, taken from the
# batches when every core runs one: docs/campaigns.md, "Measured").
BATCH = 400
# Where a worker's counterexample files stood, in their text: the folder they are written to.
CX_DIR = "@COUNTEREXAMPLES@/"
FEATURES = ("shared-cores", "shared-callbacks", "branch-join", "fan-out", "fan-out-tail", "platform", "accelerator",
            "accelerator-block")


def add_arguments(parser) -> None:
    parser.add_argument("--analysis", default="all",
                        help="analysis name from the registry, 'all' (default), or 'lame': LaME's plans (RT chains by "
                             "fp-mt, BE chains by its best-effort check) on random LaME systems")
    parser.add_argument("--sets", type=cliargs.positive, default=200, help="generated systems per analysis (default 200)")
    parser.add_argument("--seed", type=cliargs.seed, default=1, help="base seed of the generated systems")
    parser.add_argument("--first", type=cliargs.count(0, 2**31 - 1, "a system index"), default=0, metavar="INDEX",
                        help="index of the first system: systems INDEX .. INDEX + SETS - 1 of the seed (default 0)")
    parser.add_argument("--variants", type=int, default=4, choices=[1, 2, 3, 4],
                        help="adversarial simulations per system (default 4: synchronous WCET, offsets WCET, "
                             "synchronous BCET/WCET mix, offsets uniform)")
    parser.add_argument("--horizon", type=cliargs.count(1, 10_000, "a number of periods"), default=20, metavar="PERIODS",
                        help="simulated time in longest chain periods (default 20)")
    parser.add_argument("--u-min", type=U_NORM, default=0.1, help="lowest U_norm drawn per system (default 0.1)")
    parser.add_argument("--u-max", type=U_NORM, default=0.6, help="highest U_norm drawn per system (default 0.6)")
    parser.add_argument("--counterexamples", default="soundness-counterexamples", metavar="DIR",
                        help="where counterexample models are written (default ./soundness-counterexamples)")
    parser.add_argument("--harsh", action="store_true",
                        help="also perturb every system outside the papers' assumptions: contradicting and tied "
                             "priorities, execution below WCET, constrained deadlines, timer jitter, overload, "
                             "deadlines equal to the bounds, offsets clustered within nanoseconds")
    parser.add_argument("--climb", type=cliargs.count(0, 1_000_000, "a number of steps"), default=0, metavar="STEPS",
                        help="hill-climbing simulations per system over timer offsets and per-callback execution "
                             "times, from the worst simulation (default 0)")
    parser.add_argument("--fusion", action="store_true",
                        help="generate systems whose chains join at fusion nodes fed by several timers (periods "
                             "alike, harmonic or unrelated; some inputs on no declared chain) instead of the "
                             "papers' workloads")
    parser.add_argument("--phases", action="store_true",
                        help="the offsets/fusion family: fusion systems whose timers have guaranteed phases and "
                             "declared release jitter, simulated at the declared offsets with the jitter drawn, at "
                             "its maximum, at zero and hill-climbed (the analyses use the phases: fusion rounds)")
    parser.add_argument("--feature", choices=FEATURES, default=None,
                        help="draw only systems with this feature: executors sharing a core under SCHED_FIFO "
                             "priorities (shared-cores), a callback on two chains (shared-callbacks: merges and "
                             "forks), a chain branching onto another executor and joining at a fusion node "
                             "(branch-join), fan-out (fan-out; fan-out-tail: at the lowest priorities), a platform "
                             "that takes the CPU from every thread at times, analysed from its blackout curve "
                             "(platform), shared accelerators reached directly or through the chain-priority server "
                             "(accelerator), the server with block-level preemption (accelerator-block)")
    parser.add_argument("--policy", choices=policy_names(), default=None,
                        help="generate and simulate the systems under this policy, where the analysis bounds several "
                             "(sag bounds every policy it can schedule exactly; default: the analysis's own)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per analysis")
    parser.add_argument("--out", type=cliargs.output_dir, default="out/soundness", metavar="DIR",
                        help="folder of the campaign (its kept batches and merged result; default out/soundness)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    command.add_arguments(parser, batch=BATCH, worker_aliases=("--jobs",))


def _histogram(tightness: dict) -> str:
    """The bound / worst simulated distribution as 'below 1.05: N, 1.05-1.1: N, ...'."""
    b = tightness["bound_over_worst"]
    ends = b["bucket_upper_ends"]
    labels = [f"<{ends[0]:g}"] + [f"{lo:g}-{hi:g}" for lo, hi in zip(ends, ends[1:])] + [f">={ends[-1]:g}"]
    return ", ".join(f"{lab}: {n}" for lab, n in zip(labels, b["histogram"]))


def _harness(name: str):
    """A function of the soundness harness in chainrt._core."""
    fn = getattr(_core, name, None)
    if fn is None:
        raise RuntimeError("the soundness harness is not built (chainrt_analysis missing when _core was built)")
    return fn


def check(analysis: str, sets: int, seed: int = 1, variants: int = 4, jobs: int = 1, counterexample_dir: str = "",
          horizon: int = 20, u_min: float = 0.1, u_max: float = 0.6, harsh: bool = False, climb: int = 0,
          fusion: bool = False, feature: str = "", phases: bool = False, first: int = 0, policy: str = "") -> dict:
    """One batch of the harness: systems first .. first + sets - 1 of `seed` (each system
    depends only on the seed and its number, so batches give the results of one run)."""
    if analysis == "lame" and (fusion or feature):  # LaME's plans on LaME's systems (lame/soundness.hpp)
        raise ValueError("--analysis lame draws LaME's own systems; --fusion and --feature do not apply")
    fn = _harness("_soundness")
    return json.loads(fn(analysis, sets, seed, variants, jobs, counterexample_dir, horizon, u_min, u_max, harsh, climb,
                         fusion, feature or "", phases, first, policy or ""))


def batch_task(identity: dict, batch: dict) -> dict:
    """One campaign batch on a worker: the harness on systems first .. first + count - 1 of the
    analysis (the batch's group). Counterexample models come back in the report (``model``),
    their folder written as CX_DIR, so that they reach the campaign from any machine."""
    i = identity
    with tempfile.TemporaryDirectory(prefix="chainrt-soundness-") as folder:
        rep = check(batch["group"], batch["count"], batch["seed"], i["variants"], 1, folder, i["horizon"], i["u_min"],
                    i["u_max"], i["harsh"], i["climb"], i["fusion"], i["feature"], i.get("phases", False),
                    first=batch["first"], policy=i.get("policy", ""))
        for c in rep["counterexamples"]:
            if c.get("file"):
                with open(c["file"]) as f:
                    c["model"] = f.read().replace(folder + "/", CX_DIR)
                c["file"] = os.path.basename(c["file"])
    return rep


def make_spec(args, names: list[str]):
    identity = {"analyses": names, "sets": args.sets, "first": args.first, "seed": args.seed,
                "variants": args.variants, "horizon": args.horizon, "u_min": args.u_min, "u_max": args.u_max,
                "harsh": bool(args.harsh), "climb": args.climb, "fusion": bool(getattr(args, "fusion", False)),
                "feature": getattr(args, "feature", None) or "",
                "phases": bool(getattr(args, "phases", False))}
    if getattr(args, "policy", None):  # (absent from the identity otherwise: earlier campaigns resume)
        identity["policy"] = args.policy

    def make(size: int) -> Spec:
        return Spec("soundness", identity, split([(n, args.seed, args.sets) for n in names], size, args.first),
                    batch_task, size=size)

    return make


def merge_reports(reports: list[dict]) -> dict:
    """One analysis' batch reports (in system order) as the harness's report for all of them:
    counts summed, counterexamples in system order, the tightness figures from every ratio
    (the harness's percentiles and mean, sim/src/soundness.cpp; its six decimals)."""
    rep, _dropped = merge(reports)
    ratios = sorted(rep.get("ratios", []))
    rep["ratios"] = ratios
    six = lambda x: float(f"{x:.6f}")  # noqa: E731  (the harness prints %.6f)
    rep["tightness"] = {"chains": len(ratios),
                        "median": six(quantile(ratios, 0.5)) if ratios else 0.0,
                        "p90": six(quantile(ratios, 0.9)) if ratios else 0.0,
                        "p10": six(quantile(ratios, 0.1)) if ratios else 0.0,
                        "mean": six(sum(ratios) / len(ratios)) if ratios else 0.0,
                        "bound_over_worst": bound_over_worst(ratios)}
    if "join_ratios" in rep:  # the fusion families: the chains from a fusion node's sources alone
        joins = sorted(rep["join_ratios"])
        rep["join_ratios"] = joins
        rep["join_tightness"] = {"chains": len(joins), "bound_over_worst": bound_over_worst(joins)}
    if "multi_threaded_ratios" in rep:  # the chains of systems with a multi-threaded executor alone
        multi = sorted(rep["multi_threaded_ratios"])
        rep["multi_threaded_ratios"] = multi
        rep["multi_threaded_tightness"] = {"chains": len(multi), "bound_over_worst": bound_over_worst(multi)}
    return rep


def bound_over_worst(ratios: list[float]) -> dict:
    """The bound / worst simulated distribution from the worst / bound ratios: the harness's own
    (sim::bound_over_worst, as its report writes it)."""
    return json.loads(_harness("_bound_over_worst")(ratios))


def run(args) -> int:
    cliargs.check_order("experiment soundness", args, "--u-min", "--u-max")
    families = [f for f in ("fusion", "phases", "feature") if getattr(args, f, None)]
    if len(families) > 1:
        print(f"chainrt experiment soundness: --{families[0]} and --{families[1]} draw different systems; give one "
              f"of them", file=sys.stderr)
        return 1
    names = analysis_names() if args.analysis == "all" else [args.analysis]
    if args.analysis not in ("all", "lame") and args.analysis not in analysis_names():
        print(f"chainrt experiment soundness: unknown analysis '{args.analysis}' (known: "
              f"{', '.join(analysis_names())}, lame)", file=sys.stderr)
        return 1
    if getattr(args, "policy", None):
        if args.analysis in ("all", "lame"):
            print("chainrt experiment soundness: --policy needs one --analysis that bounds it", file=sys.stderr)
            return 1
        try:  # no system: only the check that the analysis bounds the policy
            check(args.analysis, 0, policy=args.policy)
        except ValueError as e:
            print(f"chainrt experiment soundness: {e}", file=sys.stderr)
            return 1
    outcome = command.campaign(args, "soundness", make_spec(args, names), args.out)
    if isinstance(outcome, int):
        return outcome
    found = 0
    merged = {}
    for name in names:
        parts = outcome.results(name)
        if not parts:
            continue
        rep = merged[name] = merge_reports(parts)
        _write_counterexamples(rep, args.counterexamples)
        found += len(rep["counterexamples"])
        elapsed = sum(outcome.records[b.index]["seconds"] for b in outcome.spec.batches
                      if b.group == name and b.index in outcome.records)
        _print_report(args, rep, elapsed)
    command.finish(outcome, {"analyses": merged})
    if not outcome.complete:
        return 1
    return 2 if found else 0


def _write_counterexamples(rep: dict, folder: str) -> None:
    """Writes the counterexamples' models into `folder` (created only when there is one)."""
    root = os.path.abspath(folder)
    for c in rep["counterexamples"]:
        text = c.get("model")
        if text is None:
            continue
        os.makedirs(root, exist_ok=True)
        c["file"] = os.path.join(root, c["file"])
        cliargs.write_atomic(c["file"], text.replace(CX_DIR, root + "/"))


def _print_report(args, rep: dict, elapsed: float) -> None:
    h = rep.get("harsh", {})
    if args.json:
        shown = {k: v for k, v in rep.items() if k not in ("ratios", "join_ratios", "multi_threaded_ratios")}
        shown["counterexamples"] = [{k: v for k, v in c.items() if k != "model"} for c in rep["counterexamples"]]
        shown["elapsed_s"] = round(elapsed, 3)
        print(json.dumps(shown))
        return
    print(f"{rep['analysis']}: {rep['systems']} systems, {rep['applicable']} applicable, "
          f"{rep['schedulable']} schedulable, {rep['chains_checked']} chain bounds checked"
          + (f" ({rep.get('fusion_chains_checked', 0)} through a fusion join)" if getattr(args, "fusion", False) or getattr(args, "phases", False) else "")
          + f" in "
          f"{rep['simulations']} simulations ({rep['executions']} callback executions, {elapsed:.1f} s); "
          + (f"harsh: {h['shuffled_priorities']} with shuffled priorities, {h['below_wcet']} below WCET, "
             f"{h['constrained_deadlines']} constrained deadlines, {h['jitter']} with jitter, "
             f"{h['overloaded']} overloaded, {h['tight_deadlines']} with deadlines = bounds; "
             if args.harsh else "")
          + (f"feature {rep['feature']}: {rep['feature_systems']} systems, "
             f"{rep['feature_chains_checked']} bounds of chains with it checked (bounded in "
             f"{rep['feature_bounded_systems']} systems)"
             + (f" ({rep['merges']} merges, {rep['forks']} forks)" if rep['feature'] == "shared-callbacks" else "")
             + (f" ({rep['leaf_branches']} branches without a join)" if rep['feature'] == "branch-join" else "")
             + "; " if rep.get("feature") else "")
          + (f"tightness over {rep['tightness']['chains']} bounded chains: bound / worst simulated median "
             f"{rep['tightness']['bound_over_worst']['median']:.2f}, "
             f"p90 {rep['tightness']['bound_over_worst']['p90']:.2f} ({_histogram(rep['tightness'])}); "
             if rep["tightness"]["chains"] else "")
          + (f"of them the {rep['join_tightness']['chains']} from a fusion node's sources: median "
             f"{rep['join_tightness']['bound_over_worst']['median']:.2f}, "
             f"p90 {rep['join_tightness']['bound_over_worst']['p90']:.2f}; "
             if rep.get("join_tightness", {}).get("chains") else "")
          + (f"of them the {rep['multi_threaded_tightness']['chains']} of systems with a multi-threaded executor: "
             f"median {rep['multi_threaded_tightness']['bound_over_worst']['median']:.2f}, "
             f"p90 {rep['multi_threaded_tightness']['bound_over_worst']['p90']:.2f}; "
             if rep.get("multi_threaded_tightness", {}).get("chains") else "")
          + (f"climb: {h['climb_simulations']} simulations, raised the worst ratio in {h['climb_raised']} "
             f"systems; " if args.climb else "")
          + (f"LaME: {rep['lame']['rt_bounded']} RT and {rep['lame']['be_bounded']} BE bounds reported "
             f"({rep['lame']['be_beyond_period']} BE bounds above the period), {rep['lame']['be_overload_refused']} "
             f"BE chains refused as overloaded; " if "lame" in rep else "")
          + f"max observed/bound {rep['max_ratio']:.3f}; counterexamples: {len(rep['counterexamples'])}")
    for c in rep["counterexamples"][:20]:
        print(f"  set {c['set']} ({c['variant']}): chain {c['chain']} {c['kind']} bound {c['bound_ns']} ns, "
              f"simulated {c['observed_ns']} ns" + (f" -> {c['file']}" if c["file"] else ""))
