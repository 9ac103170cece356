#!/usr/bin/env python3
"""Does `chainrt trace-report` agree with the executor's own monitoring? Records REPEAT runs of
a model under `chainrt trace record -- chainrt run MODEL --json` (default
examples/two_chains.yaml) and prints, per chain and run, the instances and the mean, p99 and
worst latency from both, and the relative difference of the trace's figure to the monitor's
(mean and spread over the runs). Both figures come from the same run; the cost of recording
itself is not measured here. Needs LTTng (docs/tracing.md). Start it inside a private
network namespace when others run ROS 2 (e.g. /work/bin/rosiso); it sets its own ROS_DOMAIN_ID.

    bench/tracing/agreement.py [--model M] [--repeat 3] [--duration 10s] [--json OUT]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(REPO / "examples" / "two_chains.yaml"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--json", help="also write the raw figures here")
    a = ap.parse_args()
    sys.path.insert(0, str(REPO / "python"))
    from chainrt import tracing
    from chainrt.model import load_model

    env = dict(os.environ, ROS_DOMAIN_ID=str(90 + os.getpid() % 20), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    model = load_model(a.model)
    rows, diffs = [], {}
    for i in range(a.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace"
            r = subprocess.run([sys.executable, "-m", "chainrt.cli", "trace", "record", "-o", str(trace), "--",
                                sys.executable, "-m", "chainrt.cli", "run", a.model, "--duration", a.duration,
                                "--no-compare", "--json"], env=env, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                return 1
            mon = json.loads(r.stdout)["chains"]
            rep = tracing.analyze(tracing.read_trace(str(trace)), model)
        for name, m in mon.items():
            t = rep.chains.get(name, {})
            row = {"run": i, "chain": name}
            for k in ("instances", "mean_ns", "p99_ns", "wcrt_ns", "deadline_misses"):
                row[f"monitor_{k}"] = m[k]
                row[f"trace_{k}"] = t.get(k)
            for k in ("mean_ns", "p99_ns", "wcrt_ns"):
                if t.get(k) is not None and m[k]:
                    d = (t[k] - m[k]) / m[k]
                    row[f"rel_{k}"] = d
                    diffs.setdefault((name, k), []).append(d)
            rows.append(row)
            print(f"run {i} {name:6} n={m['instances']}/{t.get('instances')}  "
                  f"mean {m['mean_ns']/1e6:.4f}/{(t.get('mean_ns') or 0)/1e6:.4f} ms  "
                  f"p99 {m['p99_ns']/1e6:.4f}/{(t.get('p99_ns') or 0)/1e6:.4f} ms  "
                  f"max {m['wcrt_ns']/1e6:.4f}/{(t.get('wcrt_ns') or 0)/1e6:.4f} ms  (monitor/trace)", flush=True)
    print("\nrelative difference trace vs monitor (mean, spread = stdev over runs, largest |d|):")
    for (name, k), v in sorted(diffs.items()):
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        print(f"  {name:6} {k:8} {statistics.mean(v)*100:+.3f} % +- {sd*100:.3f} %  max |d| {max(abs(x) for x in v)*100:.3f} %")
    print("load:", open("/proc/loadavg").read().strip())
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
