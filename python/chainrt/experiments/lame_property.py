"""``chainrt experiment lame-property``: LaME's Algorithms 1-3 and the BE check against the
simulator on random LaME systems (lame/property.hpp; docs/lame.md, "Checked against the
simulator"). System i is ``lame::random_system`` of index SEED + i (BE chains slow enough to overlap
their next instance, overloaded BE classes); every RT and BE chain bound the allocation reports is
compared with the simulator running the plan under the soundness harness's adversarial search
(harsh perturbations, a hill climb of 4 steps) — the check of ``chainrt experiment soundness
--analysis lame``, with a short report. A campaign (chainrt.campaign): batches of ``BATCH`` seeds
on the embedded local Dask cluster, a running cluster or in this process, kept per batch under
``--out``. A bound beaten by the simulator is a violation: its model (the plan with the
simulation's timer phases) is written to ``<out>/violations/``, and the exit status is 2.
"""

from __future__ import annotations

import os

from .. import _core, cliargs
from ..campaign import command
from ..campaign.plan import merge, Spec, split

BATCH = 20  # seeds per batch: ~0.1-0.3 s each (a dozen adversarial simulations of a system)


def add_parser(esub) -> None:
    p = esub.add_parser("lame-property", help="LaME's allocations and BE check against the simulator on random systems")
    p.add_argument("--sets", type=cliargs.positive, default=1500, help="systems (default 1500)")
    p.add_argument("--seed", type=cliargs.seed, default=1, help="seed of the first system (default 1)")
    p.add_argument("--out", type=cliargs.output_dir, default="out/lame-property",
                   help="folder of the campaign and the violations' models (default out/lame-property)")
    p.add_argument("--json", action="store_true", help="print the merged report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    command.add_arguments(p, batch=BATCH)
    p.set_defaults(exp_func=run)


def batch_task(identity: dict, batch: dict) -> dict:
    """Seeds seed + first .. seed + first + count - 1."""
    fn = getattr(_core, "_lame_property", None)
    if fn is None:
        raise RuntimeError("the LaME property check is not built (lame/ or sim/ missing when _core was built)")
    return fn(batch["seed"] + batch["first"], batch["count"])


def make_spec(sets: int, seed: int):

    def make(size: int) -> Spec:
        return Spec("lame-property", {"sets": sets, "seed": seed}, split([("lame", seed, sets)], size), batch_task,
                    size=size)

    return make


def run(args) -> int:
    import json

    outcome = command.campaign(args, "lame-property", make_spec(args.sets, args.seed), args.out)
    if isinstance(outcome, int):
        return outcome
    parts = outcome.results("lame")
    rep, _ = merge(parts) if parts else ({"systems": 0, "accepted": 0, "checked": 0, "be_checked": 0,
                                          "violations": []}, [])
    folder = os.path.join(args.out, "violations")
    for v in rep["violations"]:
        os.makedirs(folder, exist_ok=True)
        v["file"] = os.path.join(folder, f"seed{v['seed']}-{v['chain']}-{v['exec']}.yaml")
        cliargs.write_atomic(v["file"], f"# LaME property violation: chain {v['chain']} ({v['class']}) bound "
                                        f"{v['bound_ns']} ns, simulated {v['observed_ns']} ns ({v['exec']})\n"
                                        + v["model"])
    command.finish(outcome, {"report": rep})
    if args.json:
        shown = dict(rep, violations=[{k: x for k, x in v.items() if k != "model"} for v in rep["violations"]])
        print(json.dumps(shown))
    else:
        print(f"lame-property: {rep['systems']} systems, {rep['accepted']} with a bounded chain, "
              f"{rep['checked']} chain bounds checked ({rep['be_checked']} best-effort bounds); "
              f"violations: {len(rep['violations'])}")
        for v in rep["violations"][:20]:
            print(f"  seed {v['seed']} ({v['exec']}): chain {v['chain']} ({v['class']} on {v['thread_class']}) bound "
                  f"{v['bound_ns']} ns, simulated {v['observed_ns']} ns -> {v['file']}")
    if not outcome.complete:
        return 1
    return 2 if rep["violations"] else 0
