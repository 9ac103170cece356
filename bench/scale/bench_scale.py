#!/usr/bin/env python3
"""Scale of `chainrt analyze` and `chainrt report --no-run` on models of 10,000 callbacks.

For each shape of bench/scale/generate.py (chains of four callbacks, chains of one timer, ten
long chains) on one executor and on eight, generates the model, then runs each command REPEAT
times as a child process and measures its wall time, its CPU time (user + system: less
sensitive to other load on the machine than the wall time) and its peak resident memory
(the child's ru_maxrss). Prints, per model and command, the median and the range over the
repetitions against the targets (at most TARGET_S seconds and TARGET_MB MB), what the analysis
said (chains bounded, or why not), and the load average before and after.

    .venv/bin/python bench/scale/bench_scale.py [--callbacks 10000] [--repeat 3] [--only many-short-1]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

TARGET_S = 10.0
TARGET_MB = 1024.0
CHAINRT = [sys.executable, "-m", "chainrt.cli"]
MODELS = [(shape, executors) for shape in generate.SHAPES for executors in (1, 8)]


def measured(cmd: list[str]) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS MB, exit status, stdout) of one run of `cmd`."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, p.returncode, out


def outcome(analysis_json: str) -> str:
    """What the analysis said: how many chains have a bound, and the first reason of one without."""
    try:
        r = json.loads(analysis_json)
    except ValueError:
        return "no result"
    chains = r["chains"].values()
    bounded = sum(1 for c in chains if c["wcrt_bound_ns"] is not None)
    why = next((c["reason"] for c in chains if c["wcrt_bound_ns"] is None and c.get("reason")), "")
    return f"{r['analysis']}: {bounded}/{len(chains)} chains bounded" + (f" ({why[:90]}...)" if why else "")


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.2f} [{min(xs):.2f}-{max(xs):.2f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--callbacks", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policy", default="fp")
    ap.add_argument("--only", action="append", help="a model SHAPE-EXECUTORS, e.g. many-short-1 (repeatable)")
    a = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}; targets: <= {TARGET_S:g} s and <= {TARGET_MB:g} MB")
    print(f"{'model':16} {'command':16} {'wall s median [range]':>24} {'CPU s median [range]':>24} "
          f"{'peak MB':>8}  within")
    over = 0
    with tempfile.TemporaryDirectory() as tmp:
        for shape, executors in MODELS:
            name = f"{shape}-{executors}"
            if a.only and name not in a.only:
                continue
            path = pathlib.Path(tmp) / f"{name}.yaml"
            path.write_text(generate.model_text(shape, a.callbacks, executors, a.policy))
            said = ""
            for label, cmd in (("analyze", CHAINRT + ["analyze", "--json", str(path)]),
                               ("report --no-run", CHAINRT + ["report", "--no-run", "-o", f"{tmp}/report-{name}",
                                                              str(path)])):
                runs = [measured(cmd) for _ in range(a.repeat)]
                walls, cpus, rss = [r[0] for r in runs], [r[1] for r in runs], max(r[2] for r in runs)
                if label == "analyze":
                    said = outcome(runs[0][4])
                failed = [r[3] for r in runs if r[3] not in (0, 2)]  # 2: some chain not schedulable
                ok = max(walls) <= TARGET_S and rss <= TARGET_MB and not failed
                over += not ok
                print(f"{name:16} {label:16} {spread(walls):>24} {spread(cpus):>24} {rss:8.0f}  "
                      f"{'yes' if ok else 'NO'}{f' (exit {failed[0]})' if failed else ''}", flush=True)
            print(f"{'':16} {said}")
    print(f"load average after: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
