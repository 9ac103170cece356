"""The flags every campaign command shares, and the loop that runs a campaign.

``add_arguments(parser, batch=...)`` adds ``--workers``, ``--cluster``, ``--in-process``,
``--batch``, ``--restart`` and ``--replay-batch``. ``run(args, make_spec, out)`` opens (or
resumes) the campaign folder under `out`, runs the missing batches on the chosen engine with a
progress bar (systems done, rate, time left), keeps each finished batch at once, and returns an
:class:`Outcome` (the records in plan order) for the command to merge and report.

Failures: a batch that raises is reported at once with its seed and the command line that
replays it alone (``--replay-batch K``), the others go on, and the command ends with exit 1 (the
batch runs again on the next run). Ctrl-C keeps every finished batch, says how to resume, and
ends the command with 130 (docs/cli.md); a batch still running in this process is abandoned.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import cliargs
from ..experiments.progress import Progress
from .engine import cluster_address, Dask, execute, InProcess
from .plan import Batch, build_id, default_workers, Spec
from .store import CampaignError, Store

# Flags that choose where a campaign runs, not what it computes (left out of a replay command).
_ENGINE_FLAGS = {"--workers": 1, "--jobs": 1, "--threads": 1, "--cluster": 1, "--in-process": 0, "--restart": 0,
                 "--replay-batch": 1, "--batch": 1, "--quiet": 0}


def add_arguments(parser, batch: int, worker_aliases: tuple[str, ...] = ()) -> None:
    g = parser.add_argument_group("campaign (docs/campaigns.md)")
    g.add_argument("--workers", *worker_aliases, dest="workers", type=cliargs.count(0, 4096, "a worker count"),
                   default=0, metavar="N",
                   help="worker processes of the embedded local Dask cluster (default 0: one per core)")
    g.add_argument("--cluster", metavar="ADDRESS", default=None, type=cluster_address,
                   help="run the batches on a running Dask cluster: its scheduler's address (tcp://HOST:8786, or "
                        "tls://HOST:8786 with Dask's TLS configuration)")
    g.add_argument("--in-process", action="store_true",
                   help="run the batches one after the other in this process, without Dask")
    g.add_argument("--batch", type=cliargs.positive, default=None, metavar="SYSTEMS",
                   help=f"systems per batch (default {batch}; a resumed campaign keeps its own)")
    parser.set_defaults(campaign_default_batch=batch)
    g.add_argument("--restart", action="store_true",
                   help="discard the kept batches of this campaign and start it over")
    g.add_argument("--replay-batch", type=cliargs.count(0, None, "a batch number"), default=None, metavar="K",
                   help="run batch K of the plan alone in this process and print its result (keeps nothing)")


@dataclass
class Outcome:
    spec: Spec
    store: Store
    records: dict[int, dict]                      # finished batches (index -> record)
    failures: list[tuple[Batch, str]] = field(default_factory=list)
    engine: str = ""
    elapsed_s: float = 0.0                        # this run

    @property
    def complete(self) -> bool:
        return len(self.records) == len(self.spec.batches)

    def results(self, group: str) -> list[dict]:
        """The group's batch results in plan order (seed order)."""
        return [self.records[b.index]["result"] for b in self.spec.batches
                if b.group == group and b.index in self.records]

    def missing_systems(self) -> int:
        return sum(b.count for b in self.spec.batches if b.index not in self.records)


def _say(kind: str, text: str) -> None:
    print(f"chainrt experiment {kind}: {text}", file=sys.stderr, flush=True)


def replay_command(kind: str, batch: Batch, size: int) -> str:
    """This command line without its engine flags, plus ``--batch SIZE --replay-batch K``."""
    cli = sys.argv and (os.path.basename(sys.argv[0]) == "chainrt" or sys.argv[0].endswith("chainrt/cli.py"))
    argv = sys.argv[1:] if cli else []
    out, skip = [], 0
    for a in argv:
        if skip:
            skip -= 1
            continue
        name = a.split("=", 1)[0]
        if name in _ENGINE_FLAGS:
            skip = _ENGINE_FLAGS[name] if "=" not in a else 0
            continue
        out.append(a)
    if not out:
        out = ["experiment", kind, "..."]
    return "chainrt " + " ".join(shlex.quote(a) for a in out) + f" --batch {size} --replay-batch {batch.index}"


def _engine_for(args, store: Store, pending: list[Batch]):
    if args.cluster:
        return Dask(address=args.cluster)
    if args.in_process or len(pending) <= 1:
        return InProcess(store.folder)
    workers = args.workers or default_workers()
    return Dask(address=None, workers=min(workers, len(pending)), log_path=store.log_path())


def check_engine_flags(args) -> str | None:
    if args.cluster and args.in_process:
        return "--cluster and --in-process exclude each other"
    if args.cluster and args.workers:
        return "--workers sizes the embedded local cluster; a running cluster (--cluster) has its own workers"
    return None


def batch_size(args) -> int:
    return args.batch or args.campaign_default_batch


def replay(args, spec: Spec) -> int:
    """``--replay-batch K``: batch K alone, in this process (a failure shows as the command's
    one-line error, or with CHAINRT_DEBUG=1 its traceback); nothing is kept."""
    if args.replay_batch >= len(spec.batches):
        _say(spec.kind, f"--replay-batch {args.replay_batch}: the plan has batches 0..{len(spec.batches) - 1}")
        return cliargs.ERROR
    b = spec.batches[args.replay_batch]
    _say(spec.kind, f"replaying {b.describe()} in this process")
    record = execute(spec.task, spec.identity, b.as_dict())
    print(json.dumps({"batch": b.as_dict(), **record}))
    return cliargs.OK


def run(args, make_spec: Callable[[int], Spec], out: str) -> Outcome:
    """Runs the campaign `make_spec(batch size)` whose folder is under `out` (resumed when it
    is there). Raises CampaignError (one line for the user) and KeyboardInterrupt."""
    spec = make_spec(batch_size(args))
    build = build_id()
    folder = Store.folder_for(out, spec)
    store = Store.open(folder, spec, build, restart=args.restart)
    kept_size = int(store.manifest["batch_size"])
    if kept_size != spec.batch_size:
        if args.batch is not None:
            _say(spec.kind, f"resuming with the campaign's batches of {kept_size} systems (--restart starts it "
                            f"over with {args.batch})")
        spec = make_spec(kept_size)
    done = store.done(spec.batches)
    pending = [b for b in spec.batches if b.index not in done]
    quiet = getattr(args, "quiet", False)
    outcome = Outcome(spec, store, dict(done))
    if not pending:
        if not quiet:
            _say(spec.kind, f"campaign {store.run_id} in {folder}: complete ({len(done)} batches, "
                            f"{spec.systems} systems), nothing to run (--restart runs it again)")
        return outcome
    engine = _engine_for(args, store, pending)

    def kept(then: str) -> None:  # what an interrupted run leaves, and what the same command then does
        _say(spec.kind, f"{len(outcome.records)} of {len(spec.batches)} batches are kept in {folder}; "
                        f"the same command {then} the campaign")

    t0 = time.monotonic()
    try:
        engine.start()
        if not quiet:
            kept = sum(b.count for b in spec.batches if b.index in done)
            _say(spec.kind, f"campaign {store.run_id} in {folder}: "
                            + (f"resuming, {len(done)} of {len(spec.batches)} batches ({kept} systems) kept; "
                               if done else "")
                            + f"{len(pending)} batches of up to {spec.batch_size} systems on {engine.name}")
        bar = None
        if not quiet:
            bar = Progress(spec.systems, spec.kind, unit="systems",
                           initial=sum(b.count for b in spec.batches if b.index in done))
        for b, record, error in engine.run(spec, pending):
            # a Ctrl-C the interpreter swallowed (in a __del__ or weakref callback of the cluster's
            # client, cli.py's unraisable hook) ends the campaign here, not after its last batch
            cliargs.raise_if_interrupted()
            if error is not None:
                outcome.failures.append((b, error))
                if bar and bar.tty:
                    sys.stderr.write("\n")
                _say(spec.kind, f"{b.describe()} failed: {error}\n  replay it alone: "
                                f"{replay_command(spec.kind, b, spec.batch_size)}")
                continue
            if record.get("build") != build:
                raise CampaignError(f"the worker on {record.get('host')} (pid {record.get('pid')}) runs another "
                                    f"chainrt build ({record.get('build')}; this is {build}): every node needs the "
                                    f"same chainrt (scripts/setup at the same commit)")
            if store.save(b, record):
                outcome.records[b.index] = store.done([b])[b.index]
                if bar:
                    bar.advance(b.count, f"{engine.workers()} workers" if isinstance(engine, Dask) else "")
        if bar:
            bar.close()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # what follows must finish
        busy = engine.busy
        engine.close()
        print(file=sys.stderr)
        kept("resumes")
        if busy:  # a C++ call still runs in this process and cannot be stopped: end here
            print("chainrt: interrupted", file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(cliargs.INTERRUPTED)
        raise
    finally:
        try:
            engine.close()
        except KeyboardInterrupt:  # Ctrl-C while the engine shuts down after the last batch
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            engine.close()
            kept("reports")
            raise
    outcome.engine = engine.name
    outcome.elapsed_s = time.monotonic() - t0
    return outcome


def campaign(args, kind: str, make: Callable[[int], Spec], out: str) -> "Outcome | int":
    """What every campaign command does with its plan: refuses contradicting engine flags,
    replays one batch (``--replay-batch``), or runs the campaign. An int is the command's exit
    code (it is done); an Outcome is for the command to merge and report."""
    problem = check_engine_flags(args)
    if problem:
        _say(kind, problem)
        return cliargs.ERROR
    if args.replay_batch is not None:
        return replay(args, make(batch_size(args)))
    os.makedirs(out, exist_ok=True)
    try:
        return run(args, make, out)
    except CampaignError as err:
        return fail(kind, err)


def finish(outcome: Outcome, result: dict) -> Path | None:
    """Keeps the merged result once the campaign is complete; reports broken batches."""
    spec = outcome.spec
    if outcome.complete:
        return outcome.store.write_result(result)
    _say(spec.kind, f"incomplete: {len(spec.batches) - len(outcome.records)} batches "
                    f"({outcome.missing_systems()} systems) failed (above) and are left out; the finished ones are "
                    f"kept, and the same command runs the failed ones again")
    return None


def fail(kind: str, err: Exception) -> int:
    _say(kind, str(err))
    return cliargs.ERROR


__all__ = ["add_arguments", "campaign", "run", "replay", "finish", "fail", "check_engine_flags", "batch_size", "Outcome", "CampaignError"]
