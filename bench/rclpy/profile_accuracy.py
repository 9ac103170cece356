"""How closely `chainrt profile` recovers the execution times of plain rclpy nodes that spin under
chainrt.rclpy: the graph of tests/python/ros_nodes/graph.py (two processes, six callbacks, each
burning a known amount of thread CPU time) is started with --chainrt, `chainrt discover` writes
the skeleton, `chainrt profile --json` measures; repeated with fresh processes. Prints per
callback the configured work and, over the repetitions, the measured mean's error (mean
[min..max]), the measured minimum and maximum.

The error includes rclpy's own cost inside each callback instance (the take, the publish, the
Python call), which the executor rightly counts as the callback's execution time.

    /work/bin/rosiso .venv/bin/python bench/rclpy/profile_accuracy.py [--reps 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NODES = REPO / "tests" / "python" / "ros_nodes" / "graph.py"


def one_run(domain: int, seconds: float) -> dict:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    model = Path(tempfile.mkdtemp()) / "discovered.yaml"
    procs = [subprocess.Popen([sys.executable, str(NODES), p, "--chainrt"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for p in ("front", "back")]
    try:
        for p in procs:
            p.stdout.readline()
        cli = [sys.executable, "-m", "chainrt.cli"]
        r = subprocess.run([*cli, "discover", "--duration", "3s", "--settle", "10s", "--expect-nodes", "4",
                            "-o", str(model)], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"discover failed: {r.stderr.strip()}")
        r = subprocess.run([*cli, "profile", str(model), "--duration", f"{seconds}s", "--json"], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"profile failed: {r.stderr.strip()}")
        return json.loads(r.stdout)["callbacks"]
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--domain", type=int, default=81)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("ros_graph", NODES)
    graph = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph)
    runs = [one_run(args.domain + i, args.seconds) for i in range(args.reps)]
    print(f"{'callback':22s} {'work':>8s} {'mean error':>26s} {'min (ms)':>16s} {'max (ms)':>16s}")
    for name, work in graph.WORK_NS.items():
        errs = [100.0 * (r[name]["cpu_ns"]["mean"] - work) / work for r in runs]
        mins = [r[name]["cpu_ns"]["min"] / 1e6 for r in runs]
        maxs = [r[name]["cpu_ns"]["max"] / 1e6 for r in runs]
        print(f"{name:22s} {work / 1e6:6.2f}ms {sum(errs) / len(errs):+7.1f} % [{min(errs):+.1f}..{max(errs):+.1f}]"
              f"   {min(mins):6.3f}..{max(mins):6.3f}   {min(maxs):6.3f}..{max(maxs):6.3f}")


if __name__ == "__main__":
    main()
