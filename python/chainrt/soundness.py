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
files. Exit status: 0 no counterexample, 2 counterexamples found, 1 error.

``add_arguments(parser)`` and ``run(args) -> int`` are called by the ``experiment`` command.
"""

from __future__ import annotations

import json
import os
import sys
import time


FEATURES = ("shared-cores", "shared-callbacks", "branch-join", "fan-out", "fan-out-tail", "platform")


def add_arguments(parser) -> None:
    parser.add_argument("--analysis", default="all",
                        help="analysis name from the registry, 'all' (default), or 'lame': LaME's plans (RT chains by "
                             "fp-mt, BE chains by its best-effort check) on random LaME systems")
    parser.add_argument("--sets", type=int, default=200, help="generated systems per analysis (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="base seed of the generated systems")
    parser.add_argument("--variants", type=int, default=4, choices=[1, 2, 3, 4],
                        help="adversarial simulations per system (default 4: synchronous WCET, offsets WCET, "
                             "synchronous BCET/WCET mix, offsets uniform)")
    parser.add_argument("--jobs", type=int, default=1, help="worker threads (default 1)")
    parser.add_argument("--horizon", type=int, default=20, metavar="PERIODS",
                        help="simulated time in longest chain periods (default 20)")
    parser.add_argument("--u-min", type=float, default=0.1, help="lowest U_norm drawn per system (default 0.1)")
    parser.add_argument("--u-max", type=float, default=0.6, help="highest U_norm drawn per system (default 0.6)")
    parser.add_argument("--counterexamples", default="soundness-counterexamples", metavar="DIR",
                        help="where counterexample models are written (default ./soundness-counterexamples)")
    parser.add_argument("--harsh", action="store_true",
                        help="also perturb every system outside the papers' assumptions: contradicting and tied "
                             "priorities, execution below WCET, constrained deadlines, timer jitter, overload, "
                             "deadlines equal to the bounds, offsets clustered within nanoseconds")
    parser.add_argument("--climb", type=int, default=0, metavar="STEPS",
                        help="hill-climbing simulations per system over timer offsets and per-callback execution "
                             "times, from the worst simulation (default 0)")
    parser.add_argument("--fusion", action="store_true",
                        help="generate systems whose chains join at fusion nodes fed by several timers (periods "
                             "alike, harmonic or unrelated; some inputs on no declared chain) instead of the "
                             "papers' workloads")
    parser.add_argument("--feature", choices=FEATURES, default=None,
                        help="draw only systems with this feature: executors sharing a core under SCHED_FIFO "
                             "priorities (shared-cores), a callback on two chains (shared-callbacks: merges and "
                             "forks), a chain branching onto another executor and joining at a fusion node "
                             "(branch-join), fan-out (fan-out; fan-out-tail: at the lowest priorities), a platform "
                             "that takes the CPU from every thread at times, analysed from its blackout curve "
                             "(platform)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per analysis")


def _inv(ratio: float) -> str:
    """bound / worst simulated from worst simulated / bound (a chain never simulated to any
    response is left out of the tightness figures)."""
    return f"{1 / ratio:.2f}" if ratio > 0 else "inf"


def analysis_names() -> list[str]:
    from . import _core
    names = getattr(_core, "analysis_names", None)
    if callable(names):  # (name, summary, policy) tuples
        return [n[0] if isinstance(n, (tuple, list)) else n for n in names()]
    return ["edf-mt", "fp-mt", "picas-st", "cros-rt", "ros-default-st"]


def check(analysis: str, sets: int, seed: int = 1, variants: int = 4, jobs: int = 1, counterexample_dir: str = "",
          horizon: int = 20, u_min: float = 0.1, u_max: float = 0.6, harsh: bool = False, climb: int = 0,
          fusion: bool = False, feature: str = "") -> dict:
    from . import _core
    if analysis == "lame" and (fusion or feature):  # LaME's plans on LaME's systems (lame/soundness.hpp)
        raise ValueError("--analysis lame draws LaME's own systems; --fusion and --feature do not apply")
    fn = getattr(_core, "_soundness", None)
    if fn is None:
        raise RuntimeError("the soundness harness is not built (chainrt_analysis missing when _core was built)")
    return json.loads(fn(analysis, sets, seed, variants, jobs, counterexample_dir, horizon, u_min, u_max, harsh, climb,
                         fusion, feature or ""))


def run(args) -> int:
    if args.sets < 1:
        print("chainrt experiment soundness: --sets must be at least 1", file=sys.stderr)
        return 1
    if args.climb < 0:
        print("chainrt experiment soundness: --climb must be at least 0", file=sys.stderr)
        return 1
    if getattr(args, "fusion", False) and getattr(args, "feature", None):
        print("chainrt experiment soundness: --fusion and --feature draw different systems; give one of them",
              file=sys.stderr)
        return 1
    names = analysis_names() if args.analysis == "all" else [args.analysis]
    found = 0
    for name in names:
        t0 = time.perf_counter()
        try:
            rep = check(name, args.sets, args.seed, args.variants, max(1, args.jobs),
                        os.path.abspath(args.counterexamples), args.horizon, args.u_min, args.u_max,
                        args.harsh, args.climb, getattr(args, "fusion", False),
                        getattr(args, "feature", None) or "")
        except (ValueError, RuntimeError) as err:
            print(f"chainrt experiment soundness: {err}", file=sys.stderr)
            return 1
        elapsed = time.perf_counter() - t0
        found += len(rep["counterexamples"])
        h = rep.get("harsh", {})
        if args.json:
            rep["elapsed_s"] = round(elapsed, 3)
            print(json.dumps(rep))
            continue
        print(f"{rep['analysis']}: {rep['systems']} systems, {rep['applicable']} applicable, "
              f"{rep['schedulable']} schedulable, {rep['chains_checked']} chain bounds checked"
              + (f" ({rep.get('fusion_chains_checked', 0)} through a fusion join)" if getattr(args, "fusion", False) else "")
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
                 f"{_inv(rep['tightness']['median'])}, p90 {_inv(rep['tightness']['p10'])}; "
                 if rep["tightness"]["chains"] else "")
              + (f"climb: {h['climb_simulations']} simulations, raised the worst ratio in {h['climb_raised']} "
                 f"systems; " if args.climb else "") +
              (f"LaME: {rep['lame']['rt_bounded']} RT and {rep['lame']['be_bounded']} BE bounds reported "
                 f"({rep['lame']['be_beyond_period']} BE bounds above the period), {rep['lame']['be_overload_refused']} "
                 f"BE chains refused as overloaded; " if "lame" in rep else "")
              + f"max observed/bound {rep['max_ratio']:.3f}; counterexamples: {len(rep['counterexamples'])}")
        for c in rep["counterexamples"][:20]:
            print(f"  set {c['set']} ({c['variant']}): chain {c['chain']} {c['kind']} bound {c['bound_ns']} ns, "
                  f"simulated {c['observed_ns']} ns" + (f" -> {c['file']}" if c["file"] else ""))
    return 2 if found else 0
