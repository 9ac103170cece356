"""The same two-chain measurements on each ROS 2 line chainrt builds on (Kilted, Jazzy), so that
their verdicts can be set side by side (docs/ros_lines.md).

Run once per line, with that line's virtualenv (its chainrt, its build, its ROS 2 wheels):

    /work/bin/isolated .venv/bin/python bench/ros_lines/compare.py --json k.json
    /work/bin/isolated .venv-jazzy/bin/python bench/ros_lines/compare.py --json j.json
    .venv/bin/python bench/ros_lines/compare.py --table k.json j.json --csv docs/ros_lines.csv

Two measurements, each repeated (``--reps``), the lines' runs in separate invocations:
  runtime  ``chainrt run examples/two_chains.yaml --threads 1 --fifo 50`` under fp and under
           ros-default: the high chain's p99 and max (ms). Verdict "as simulated": every
           repetition's p99 within [-0.5, +2] ms of the simulator's p99 for that policy (fp 10 ms:
           own work plus at most one low callback; ros-default 15 ms: it also waits for the
           readySet rebuild).
  rclpy    bench/rclpy/two_chains.py --phase adversarial, chainrt-fp against rclpy's
           SingleThreaded executor (and Events where the line's rclpy has it): the high chain's
           p99. Verdicts: chainrt-fp "within bound" when every run's p99 is within the bound that
           run measured (own work plus one low callback, with rclpy's measured execution times);
           a baseline "waits for both low callbacks" when every run's p99 is at least 25 ms (its
           own 5 ms plus both 10 ms low callbacks, which became ready first).
Each batch records the 1-minute load average and the hypervisor steal over the batch
(/proc/stat), as the machine is shared. No number is asserted here; the table says whether each
line gives the same verdicts.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "two_chains.yaml"
BOUND_MS = 15.0  # the high chain's own work (5 ms) plus one low-priority callback (10 ms)


def _steal() -> tuple[int, int]:
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    vals = [int(x) for x in cpu]
    return vals[7], sum(vals)


def _load1() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def _line() -> dict:
    import importlib.metadata as md
    import rclpy  # noqa: F401  (the line's rclpy)
    names = {d.metadata["Name"]: d.version for d in md.distributions() if d.metadata["Name"]}
    distro = "kilted" if any(n.startswith("ros-kilted-") for n in names) else \
        "jazzy" if any(n.startswith("ros-jazzy-") for n in names) else os.environ.get("ROS_DISTRO", "?")
    pick = lambda n: names.get(f"ros-{distro}-{n}", "?")  # noqa: E731
    return {"distro": distro, "rcl": pick("rcl"), "rclpy": pick("rclpy"),
            "rmw_fastrtps_cpp": pick("rmw-fastrtps-cpp")}


def _chainrt() -> list[str]:
    return [str(Path(sys.executable).parent / "chainrt")]


def runtime_batch(reps: int, seconds: int) -> list[dict]:
    out = []
    for rep in range(reps):
        for policy in ("fp", "ros-default"):
            cmd = _chainrt() + ["run", str(MODEL), "--policy", policy, "--threads", "1", "--fifo", "50",
                                "--duration", f"{seconds}s", "--no-compare", "--json"]
            env = dict(os.environ, ROS_DOMAIN_ID=str(80 + rep % 10), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120, env=env)
            if p.returncode != 0:
                print(f"runtime {policy}: failed: {p.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            r = json.loads(p.stdout)
            hi, lo = r["chains"]["high"], r["chains"]["low"]
            row = {"bench": "runtime", "executor": policy, "rep": rep,
                   "hi_p99_ms": hi["p99_ns"] / 1e6, "hi_max_ms": hi["wcrt_ns"] / 1e6,
                   "hi_mean_ms": hi["mean_ns"] / 1e6, "lo_p99_ms": lo["p99_ns"] / 1e6,
                   "instances": hi["instances"]}
            print(f"runtime rep {rep} {policy:12s} hi p99 {row['hi_p99_ms']:6.2f} max {row['hi_max_ms']:6.2f} ms",
                  file=sys.stderr)
            out.append(row)
    return out


def rclpy_batch(reps: int, seconds: float) -> list[dict]:
    sys.path.insert(0, str(REPO / "bench" / "rclpy"))
    from common import available_executors  # noqa: E402
    kinds = [k for k in ("chainrt-fp", "SingleThreaded", "Events") if k in available_executors()]
    with_json = Path(os.environ.get("TMPDIR", "/tmp")) / f"ros_lines_rclpy_{os.getpid()}.json"
    cmd = [sys.executable, str(REPO / "bench" / "rclpy" / "two_chains.py"), "--seconds", str(seconds),
           "--reps", str(reps), "--phase", "adversarial", "--executors", ",".join(kinds), "--json", str(with_json)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=reps * len(kinds) * (seconds + 60))
    if p.returncode != 0:
        print(f"rclpy bench failed: {p.stderr.strip()[-600:]}", file=sys.stderr)
        return []
    data = json.loads(with_json.read_text())
    with_json.unlink()
    out = []
    for r in data:
        out.append({"bench": "rclpy", "executor": r["executor"],
                    "rep": sum(1 for o in out if o["executor"] == r["executor"]),
                    "hi_p99_ms": r["hi_p99_ms"], "hi_max_ms": r["hi_max_ms"], "hi_p50_ms": r["hi_p50_ms"],
                    "lo_p99_ms": r["lo_p99_ms"], "measured_bound_ms": r.get("measured_bound_ms")})
    return out


def simulated_p99_ms() -> dict[str, float]:
    """The simulator's high-chain p99 for each runtime policy (one thread, WCET)."""
    out = {}
    for policy in ("fp", "ros-default"):
        p = subprocess.run(_chainrt() + ["simulate", str(MODEL), "--policy", policy, "--threads", "1", "--json"],
                           capture_output=True, text=True, timeout=120, check=True)
        out[policy] = json.loads(p.stdout)["chains"]["high"]["p99_ns"] / 1e6
    return out


def measure(a) -> int:
    line = _line()
    batches = []
    for name, fn, arg in (("runtime", runtime_batch, a.runtime_seconds), ("rclpy", rclpy_batch, a.rclpy_seconds)):
        s0, t0 = _steal()
        start = time.time()
        rows = fn(a.reps, arg)
        s1, t1 = _steal()
        batches.append({"bench": name, "rows": rows, "load1": _load1(),
                        "steal_pct": 100.0 * (s1 - s0) / max(1, t1 - t0), "wall_s": time.time() - start})
    doc = {"line": line, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": os.uname().nodename,
           "cpus": os.cpu_count(), "simulated_p99_ms": simulated_p99_ms(), "batches": batches}
    Path(a.json).write_text(json.dumps(doc, indent=1))
    return 0


def _stats(v: list[float]) -> str:
    if not v:
        return "n/a"
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    return f"{statistics.mean(v):.2f} ± {sd:.2f} [{min(v):.2f}..{max(v):.2f}]"


def verdict(doc: dict, bench: str, executor: str, rows: list[dict]) -> str:
    """The verdict of one executor's repetitions on one line (module docstring)."""
    if not rows:
        return "n/a"
    p99s = [r["hi_p99_ms"] for r in rows]
    if bench == "runtime":
        sim = doc["simulated_p99_ms"][executor]
        ok = all(sim - 0.5 <= p <= sim + 2.0 for p in p99s)
        return f"as simulated ({sim:g} ms)" if ok else f"NOT as simulated ({sim:g} ms)"
    if executor.startswith("chainrt-"):
        ok = all(r["measured_bound_ms"] is not None and r["hi_p99_ms"] <= r["measured_bound_ms"] for r in rows)
        return "within bound" if ok else "ABOVE its measured bound"
    return "waits for both low callbacks" if all(p >= 25.0 for p in p99s) else "mixed"


def table(a) -> int:
    docs = [json.loads(Path(p).read_text()) for p in a.table]
    rows = []
    print("| bench | executor | " + " | ".join(
        f"{d['line']['distro']} (rcl {d['line']['rcl']}, rclpy {d['line']['rclpy']}) high p99 ms / verdict" for d in docs) + " |")
    print("|---|---|" + "---|" * len(docs))
    keys = []
    for d in docs:
        for b in d["batches"]:
            for r in b["rows"]:
                if (r["bench"], r["executor"]) not in keys:
                    keys.append((r["bench"], r["executor"]))
    for bench, ex in keys:
        cells = []
        for d in docs:
            rs = [r for b in d["batches"] for r in b["rows"] if r["bench"] == bench and r["executor"] == ex]
            p99s = [r["hi_p99_ms"] for r in rs]
            cells.append(f"{_stats(p99s)} / {verdict(d, bench, ex, rs)}" if rs else "not available on this line")
            for r in rs:
                rows.append({"line": d["line"]["distro"], "rcl": d["line"]["rcl"], "rclpy": d["line"]["rclpy"],
                             "bench": bench, "executor": ex, "rep": r["rep"], "hi_p99_ms": round(r["hi_p99_ms"], 3),
                             "hi_max_ms": round(r["hi_max_ms"], 3), "lo_p99_ms": round(r["lo_p99_ms"], 3),
                             "measured_bound_ms": round(r["measured_bound_ms"], 3) if r.get("measured_bound_ms") else ""})
        print(f"| {bench} | {ex} | " + " | ".join(cells) + " |")
    print()
    for d in docs:
        for b in d["batches"]:
            print(f"{d['line']['distro']} {b['bench']}: {d['date']}, load1 {b['load1']:.2f}, steal {b['steal_pct']:.2f} %, "
                  f"{b['wall_s']:.0f} s")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="measure this line and write its results here")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="print the side-by-side table of these results")
    ap.add_argument("--csv", help="with --table: write every repetition as CSV")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--runtime-seconds", type=int, default=20)
    ap.add_argument("--rclpy-seconds", type=float, default=8.0)
    a = ap.parse_args()
    if a.table:
        return table(a)
    if not a.json:
        ap.error("--json FILE (measure) or --table FILE... (compare)")
    return measure(a)


if __name__ == "__main__":
    sys.exit(main())
