"""``chainrt demo``: what chainrt does, in a few minutes, on the embedded ROS 2.

1. the two-chain experiment of the CROS-RT paper (examples/two_chains.yaml): for the ROS 2
   default order, fixed priority and EDF, the analysis bound, the simulated worst case and
   what a real run on rcl + Fast DDS measures, side by side;
2. the Autoware reference system benchmark (when ``chainrt bench`` is available), short.

Each step calls the ordinary chainrt commands, so what it prints is what they print.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

from .. import cliargs

ROOT = pathlib.Path(__file__).resolve().parents[3]
POLICY_ANALYSIS = {"ros-default": "ros-default-st", "fp": "fp-mt", "edf": "edf-mt"}


def register(sub) -> None:
    p = sub.add_parser("demo", help="show chainrt on the two-chain example and the Autoware reference system")
    p.add_argument("--duration", type=cliargs.duration_text, default="5s", help="real ROS 2 run time per policy (default 5s)")
    p.add_argument("--bench-duration", type=cliargs.duration_text, default="10s", help="reference-system run time per configuration (default 10s)")
    p.add_argument("--skip-bench", action="store_true", help="only the two-chain part")
    p.set_defaults(func=run)


def chainrt(*args: str, timeout: float = 900) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


FAILED: list[str] = []  # steps that failed; demo exits 1 when there is any


def chains_json(*args: str) -> dict | None:
    rc, out, err = chainrt(*args, "--json")
    if rc not in (0, 2):
        FAILED.append(f"chainrt {' '.join(args[:1])}")
        print(f"  (chainrt {args[0]} failed: {err.strip().splitlines()[-1] if err.strip() else rc})")
        return None
    try:
        return json.loads(out)["chains"]
    except (ValueError, KeyError):
        return None


def ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:.2f}"


def two_chains(duration: str) -> None:
    model = str(ROOT / "examples/two_chains.yaml")
    print("== 1. Two chains (CROS-RT): high T=20ms, 5ms of work; low T=200ms, 20ms of work; one thread")
    print("   Under the ROS 2 default order the high chain waits behind whole low-priority runs;")
    print("   under fixed priority or EDF it waits for at most one low-priority callback.\n")
    rows = []
    for policy, analysis in POLICY_ANALYSIS.items():
        print(f"   {policy}: analysis, simulation, {duration} on real ROS 2 ...", flush=True)
        bound = chains_json("analyze", model, "--analysis", analysis) or {}
        sim = chains_json("simulate", model, "--policy", policy, "--duration", "10s") or {}
        real = chains_json("run", model, "--policy", policy, "--duration", duration, "--no-compare") or {}
        for chain in ("high", "low"):
            b, s, r = bound.get(chain, {}), sim.get(chain, {}), real.get(chain, {})
            bound_text = ms(b.get("wcrt_bound_ns")) if b.get("wcrt_bound_ns") is not None else ("none" if b else "-")
            rows.append((chain, policy, bound_text, ms(s.get("wcrt_ns")), ms(r.get("mean_ns")),
                         ms(r.get("p99_ns")), ms(r.get("wcrt_ns")), str(r.get("deadline_misses", "-"))))
    header = ("chain", "policy", "bound", "sim WCRT", "real mean", "real p99", "real max", "misses")
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(len(header))]
    print()
    print("   " + "  ".join(h.rjust(w) for h, w in zip(header, widths)) + "   (ms)")
    for r in sorted(rows, key=lambda r: (r[0] != "high", r[0])):
        print("   " + "  ".join(v.rjust(w) for v, w in zip(r, widths)))
    print("\n   bound: the analysis' worst-case response time (ros-default-st: Casini et al. 2019, which finds")
    print("   no bound within the period here: it charges every other callback in the busy window);")
    print("   sim: the simulator's worst case over 10 s;")
    print("   real: measured on rcl + Fast DDS (this machine's noise shows in max; compare mean and p99).\n")


def reference_system(duration: str) -> None:
    rc, out, _ = chainrt("--help")
    if " bench " not in out and "\n    bench" not in out:
        print("== 2. Autoware reference system: `chainrt bench` is not available in this build\n")
        return
    print(f"== 2. Autoware reference system ({duration} per configuration, one run each; "
          "the benchmark's default repeats 3 times to show the noise)")
    out_dir = ROOT / "out/demo"
    proc = subprocess.run([sys.executable, "-m", "chainrt.cli", "bench", "reference-system", "--duration", duration,
                           "--repeat", "1", "--out", str(out_dir)], text=True)
    print(f"   report: {out_dir / 'index.html'} (plots and tables; `chainrt bench reference-system --help` for more)")
    if proc.returncode != 0:
        print(f"   (bench exited with {proc.returncode})")
        FAILED.append("chainrt bench")


def run(args) -> int:
    rc, out, err = chainrt("check", str(ROOT / "examples/two_chains.yaml"))
    print(out)
    if rc != 0:
        print(err, file=sys.stderr)
        return 1
    two_chains(args.duration)
    if not args.skip_bench:
        reference_system(args.bench_duration)
    if FAILED:
        print(f"chainrt demo: {len(FAILED)} step(s) failed ({', '.join(sorted(set(FAILED)))}); "
              "see the messages above", file=sys.stderr)
        return cliargs.ERROR
    return 0
