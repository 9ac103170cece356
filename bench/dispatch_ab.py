"""Per-dispatch cost of this tree against another build of chainrt (an earlier commit in its own
worktree and build folder), in one session: the measurements of bench/rclcpp/dispatch.py (the
rclcpp ChainExecutor) and bench/rclpy/dispatch.py (chainrt.rclpy), each a fresh process, the two
trees alternating within every round. Per bench, executor and N: the CPU time per callback of
each tree (mean ± stdev [min..max] over the rounds) and the ratio mine / other within each round.

    .venv/bin/python bench/dispatch_ab.py --other /path/to/other/worktree [--rounds 3]
        [--seconds 3] [--n 1,50] [--rclcpp-kinds chainrt,chainrt-fp] [--rclpy-kinds chainrt-fp]
        [--cpu 1] [--fifo 10] [--lock /work/measure.lock] [--json out.json]

The other tree is used as built: its build/bench/rclcpp/bench_rclcpp_dispatch, and its
python/ with its build/ for chainrt.rclpy (PYTHONPATH, CHAINRT_BUILD_DIR).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "rclpy"))

from common import spread  # noqa: E402


def tree_env(root: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root / "python")
    env["CHAINRT_BUILD_DIR"] = str(root / "build")
    env.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    return env


def one(bench: str, root: Path, kind: str, n: int, a) -> dict | None:
    """One measurement of `bench` ("rclcpp" or "rclpy") with the build of `root`."""
    if bench == "rclcpp":
        cmd = [str(root / "build" / "bench" / "rclcpp" / "bench_rclcpp_dispatch"), kind, str(n), str(a.seconds)]
    else:
        cmd = [sys.executable, str(HERE / "rclpy" / "dispatch.py"), "--one", kind, str(n), "--seconds", str(a.seconds)]
    if a.fifo:
        cmd = ["chrt", "-f", str(a.fifo)] + cmd
    if a.cpu is not None:
        cmd = ["taskset", "-c", str(a.cpu)] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.seconds + 120, env=tree_env(root))
    if p.returncode != 0:
        print(f"{bench} {kind} N={n} ({root}): failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def measure_all(a, trees: dict[str, Path], ns: list[int]) -> list[dict]:
    rows = []
    for rnd in range(a.rounds):
        for bench, kinds in (("rclcpp", a.rclcpp_kinds), ("rclpy", a.rclpy_kinds)):
            for n in ns:
                for kind in [k for k in kinds.split(",") if k]:
                    order = ("mine", "other") if rnd % 2 == 0 else ("other", "mine")
                    for tree in order:
                        r = one(bench, trees[tree], kind, n, a)
                        if r is None:
                            continue
                        rows.append({"round": rnd, "bench": bench, "kind": kind, "n": n, "tree": tree,
                                     "us_per_callback": r["us_per_callback"], "callbacks": r["callbacks"],
                                     "expected": r["expected"]})
                        print(f"round {rnd} {bench:6s} {kind:10s} N={n:3d} {tree:5s} "
                              f"{r['us_per_callback']:8.2f} us/cb", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> None:
    keys = sorted({(r["bench"], r["kind"], r["n"]) for r in rows})
    print("| bench | executor | N | mine µs/callback | other µs/callback | mine / other per round |")
    print("|---|---|---|---|---|---|")
    for bench, kind, n in keys:
        sel = [r for r in rows if (r["bench"], r["kind"], r["n"]) == (bench, kind, n)]
        by = {t: [r["us_per_callback"] for r in sel if r["tree"] == t] for t in ("mine", "other")}
        per_round: dict[int, dict[str, float]] = {}
        for r in sel:
            per_round.setdefault(r["round"], {})[r["tree"]] = r["us_per_callback"]
        ratios = [v["mine"] / v["other"] for v in per_round.values() if "mine" in v and "other" in v]
        print(f"| {bench} | {kind} | {n} | {spread(by['mine']).strip()} | {spread(by['other']).strip()} | "
              f"{spread(ratios).strip()} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", required=True, help="the other worktree (built)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--n", default="1,50", help="subscription counts (0, the lone 1 kHz timer, is always run)")
    ap.add_argument("--rclcpp-kinds", default="chainrt,chainrt-fp")
    ap.add_argument("--rclpy-kinds", default="chainrt-fp")
    ap.add_argument("--cpu", type=int, help="pin each measured process to this core")
    ap.add_argument("--fifo", type=int, help="run each measured process under SCHED_FIFO at this priority")
    ap.add_argument("--lock", help="hold this lock file (flock) while measuring")
    ap.add_argument("--json")
    a = ap.parse_args()
    trees = {"mine": ROOT, "other": Path(a.other).resolve()}
    for t in trees.values():
        if not (t / "build" / "bench" / "rclcpp" / "bench_rclcpp_dispatch").exists():
            print(f"dispatch_ab.py: {t} has no build/bench/rclcpp/bench_rclcpp_dispatch", file=sys.stderr)
            return 2
    ns = [0] + [int(x) for x in a.n.split(",") if x.strip()]
    lock = open(a.lock, "w") if a.lock else None
    if lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
    load0, t0 = os.getloadavg(), time.monotonic()
    try:
        rows = measure_all(a, trees, ns)
    finally:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_UN)
    load1 = os.getloadavg()
    print(f"dispatch cost, mine ({trees['mine']}) vs other ({trees['other']}): {a.rounds} rounds, "
          f"{a.seconds:g} s per run, {time.monotonic() - t0:.0f} s in all, {os.cpu_count()} CPUs, "
          f"load average (1/5/15 min) {'/'.join(f'{x:.1f}' for x in load0)} -> "
          f"{'/'.join(f'{x:.1f}' for x in load1)}; N=0: a lone 1 kHz timer, N>0: a 50 Hz timer publishing "
          f"to N subscriptions")
    table(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
