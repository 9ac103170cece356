"""``chainrt experiment {schedulability,predictability,soundness}``: the papers' experiments.

- ``schedulability``: Fig. 7 of the EDF ready-queue paper (Sec. VI-C) — one CSV and one PNG
  per panel (vary U_norm, n, b, g, α one at a time), 2000 systems per point by default.
- ``predictability``: CROS-RT's WCRT − BCRT (bounds) of the highest-priority chain as the
  number of UUniFast chains grows; CSV + PNG.
- ``soundness``: the simulator-versus-analysis check (owned by the sim module,
  ``chainrt.soundness``).

``schedulability``, ``synthesis``, ``soundness`` and ``lame-property`` are campaigns
(``chainrt.campaign``, docs/campaigns.md): deterministic batches on the embedded local Dask
cluster (every core), a running cluster (``--cluster``) or this process (``--in-process``), kept
per batch under ``--out`` so that the same command resumes an interrupted run.
"""

from __future__ import annotations

import os
import sys

from .. import cliargs, soundness
from ..campaign import command
from ..experiments import accelerator, f1tenth, lame_overload, lame_property, lame_throttle
from ..experiments import predictability as pred
from ..experiments import schedulability as sch
from ..experiments import synthesis as syn
from ..experiments.cros_rt_cli import add_parsers as add_cros_rt
from ..model import analysis_names
from . import help_of


def register(sub) -> None:
    p = sub.add_parser("experiment", help=help_of("experiment"))
    esub = p.add_subparsers(dest="experiment", metavar="EXPERIMENT")

    s = esub.add_parser("schedulability", help="Fig. 7 of the EDF ready-queue paper: schedulability ratio per analysis")
    s.add_argument("--sets", type=cliargs.positive, default=2000, help="systems per data point (default 2000)")
    s.add_argument("--panels", default="u_norm,n,b,g,alpha", help="comma-separated panels (u_norm,n,b,g,alpha)")
    s.add_argument("--analyses", default=None, help="comma-separated analyses (default: all five, plus the jiang22 reference curve "
                        "— published, refuted by Teper et al. 2024, never a verdict)")
    s.add_argument("--seed", type=cliargs.seed, default=1, help="base seed (default 1)")
    s.add_argument("--out", type=cliargs.output_dir, default="out/fig7",
                   help="output folder for the CSV, the PNGs and the campaign (default out/fig7)")
    s.add_argument("--no-plot", action="store_true", help="write only the CSV")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    campaign_flags(s, "schedulability", ("--threads",))
    s.set_defaults(exp_func=run_schedulability)

    q = esub.add_parser("predictability", help="CROS-RT: WCRT-BCRT bound of the top chain vs. number of chains")
    q.add_argument("--sets", type=cliargs.positive, default=200, help="systems per chain count (default 200)")
    q.add_argument("--chains", default="2,3,4,5,6,7,8", help="comma-separated chain counts")
    q.add_argument("--seed", type=cliargs.seed, default=1)
    q.add_argument("--out", type=cliargs.output_dir, default="out/predictability", help="output folder")
    q.add_argument("--quiet", action="store_true")
    q.set_defaults(exp_func=run_predictability)

    y = esub.add_parser("synthesis", help="PiCAS synthesis vs. the exhaustive optimum on random small systems")
    y.add_argument("--sets", type=cliargs.positive, default=50, help="systems per data point (default 50)")
    y.add_argument("--chains", default="3,4,5", help="comma-separated maximum chain counts (at most 6)")
    y.add_argument("--u-norm", default="0.3,0.4,0.5,0.6,0.7", help="comma-separated normalised utilisations")
    y.add_argument("--layout", choices=["per-core", "per-chain", "auto"], default="per-core",
                   help="executor layout of both searches (default per-core)")
    y.add_argument("--seed", type=cliargs.seed, default=1)
    y.add_argument("--out", type=cliargs.output_dir, default="out/synthesis",
                   help="output folder for the CSV, the PNG and the campaign (default out/synthesis)")
    y.add_argument("--quiet", action="store_true")
    campaign_flags(y, "synthesis")
    y.set_defaults(exp_func=run_synthesis)
    add_cros_rt(esub)

    d = esub.add_parser("soundness", help="simulate generated systems and check every analysis bound (sim module)")
    soundness.add_arguments(d)
    d.set_defaults(exp_func=run_soundness)

    lame_overload.add_parser(esub)
    lame_throttle.add_parser(esub)
    lame_property.add_parser(esub)
    f1tenth.add_parser(esub)
    accelerator.add_parser(esub)

    def dispatch(args) -> int:
        fn = getattr(args, "exp_func", None)
        if fn is None:
            p.print_help()
            return 1
        return fn(args)

    p.set_defaults(func=dispatch)


def campaign_flags(parser, kind: str, worker_aliases: tuple[str, ...] = ()) -> None:
    batch = {"schedulability": sch.BATCH, "synthesis": syn.BATCH}[kind]
    command.add_arguments(parser, batch=batch, worker_aliases=worker_aliases)


def run_soundness(args) -> int:
    return int(soundness.run(args) or 0)


def run_schedulability(args) -> int:

    panels = [x.strip() for x in args.panels.split(",") if x.strip()]
    bad = [x for x in panels if x not in sch.PANELS]
    if bad:
        print(f"chainrt experiment schedulability: unknown panel(s) {', '.join(bad)} "
              f"(known: {', '.join(sch.PANELS)})", file=sys.stderr)
        return 1
    known = analysis_names() + sch.REFERENCE
    analyses = sch.ANALYSES + sch.REFERENCE if not args.analyses else [x.strip() for x in args.analyses.split(",") if x.strip()]
    bad = [x for x in analyses if x not in known]
    if bad:
        print(f"chainrt experiment schedulability: unknown analysis {', '.join(bad)} (known: {', '.join(known)})",
              file=sys.stderr)
        return 1
    if args.sets < 1:
        print("chainrt experiment schedulability: --sets must be >= 1", file=sys.stderr)
        return 1
    points = sch.plan(panels, args.seed)
    make = sch.make_spec(points, args.sets, analyses,
                         {"panels": panels, "analyses": analyses, "sets": args.sets, "seed": args.seed})
    outcome = command.campaign(args, "schedulability", make, args.out)
    if isinstance(outcome, int):
        return outcome
    sch.apply(points, outcome.results)
    command.finish(outcome, {"points": [{"panel": p.panel, "value": p.value, "sets": p.sets, "schedulable": p.counts}
                                        for p in points]})
    if not outcome.complete:
        return 1
    csv_path = os.path.join(args.out, "fig7.csv")
    with cliargs.atomic_path(csv_path) as tmp:
        sch.write_csv(points, tmp)
    print(f"{len(points)} points x {args.sets} systems x {len(analyses)} analyses "
          f"({outcome.elapsed_s:.1f} s on {outcome.engine or 'no engine: kept results'}) -> {csv_path}")
    if not args.no_plot:
        for f in sch.plot(points, args.out):
            print(f"  {f}")
    return 0


def run_predictability(args) -> int:

    try:
        counts = [int(x) for x in args.chains.split(",") if x.strip()]
    except ValueError:
        print("chainrt experiment predictability: --chains takes integers", file=sys.stderr)
        return 1
    if not counts or min(counts) < 1 or args.sets < 1:
        print("chainrt experiment predictability: need chain counts >= 1 and --sets >= 1", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    result = pred.run(counts, args.sets, args.seed, progress=not args.quiet)
    csv_path = os.path.join(args.out, "predictability.csv")
    with cliargs.atomic_path(csv_path) as tmp:
        pred.write_csv(result, tmp)
    png = pred.plot(result, os.path.join(args.out, "predictability_cros_rt.png"))
    print(f"{csv_path}\n  {png}")
    return 0


def run_synthesis(args) -> int:

    try:
        counts = [int(x) for x in args.chains.split(",") if x.strip()]
        us = [float(x) for x in args.u_norm.split(",") if x.strip()]
    except ValueError:
        print("chainrt experiment synthesis: --chains takes integers and --u-norm numbers", file=sys.stderr)
        return 1
    if not counts or min(counts) < 2 or max(counts) > 6 or not us or min(us) <= 0 or args.sets < 1:
        print("chainrt experiment synthesis: need 2 <= chains <= 6, U_norm > 0 and --sets >= 1", file=sys.stderr)
        return 1
    ident = syn.identity(counts, us, args.sets, args.seed, layout=args.layout)
    outcome = command.campaign(args, "synthesis", syn.make_spec(ident), args.out)
    if isinstance(outcome, int):
        return outcome
    rows = syn.rows_from(ident, outcome.results)
    command.finish(outcome, {"rows": rows})
    if not outcome.complete:
        return 1
    csv_path = os.path.join(args.out, "synthesis.csv")
    with cliargs.atomic_path(csv_path) as tmp:
        syn.write_csv(rows, tmp)
    png = syn.plot(rows, os.path.join(args.out, "synthesis.png"))
    print(syn.format_table(rows))
    print(f"{csv_path}\n  {png}")
    return 0
