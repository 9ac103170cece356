#!/usr/bin/env python3
"""Large models for the scale bench (bench/scale/bench_scale.py): N callbacks in one of several
shapes, written as a model YAML file.

Shapes:
  many-short   chains of CHAIN_LENGTH callbacks (a timer, then subscriptions), N / CHAIN_LENGTH chains
  single       N chains of one timer each
  few-long     LONG_CHAINS chains of N / LONG_CHAINS callbacks each
Each shape spreads its chains over EXECUTORS single-threaded executors (one host, one core each;
one node per executor; a chain stays on one executor), with the given policy; callback priorities follow the chains' periods (rate monotonic) where the policy
uses them. Periods come from a fixed harmonic set, WCETs are small enough that the model stays
schedulable-looking at any N (each executor's utilisation about UTILISATION). Topics take
the default message size: a 10,000-callback model stays below the loader's limit of 200,000
YAML nodes (docs/model.md, "Limits").

    .venv/bin/python bench/scale/generate.py --shape many-short --callbacks 10000 --executors 8 -o m.yaml
"""

from __future__ import annotations

import argparse
import sys

SHAPES = ("many-short", "single", "few-long")
PERIODS_MS = (10, 20, 50, 100, 200)
CHAIN_LENGTH = 4
LONG_CHAINS = 10


def chains_of(shape: str, callbacks: int) -> list[int]:
    """The number of callbacks of each chain of the shape (their sum is `callbacks`)."""
    if shape == "many-short":
        n, rest = divmod(callbacks, CHAIN_LENGTH)
        return [CHAIN_LENGTH] * n + ([rest] if rest else [])
    if shape == "single":
        return [1] * callbacks
    if shape == "few-long":
        k = min(LONG_CHAINS, callbacks)
        base, rest = divmod(callbacks, k)
        return [base + (1 if i < rest else 0) for i in range(k)]
    raise ValueError(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")


def model_text(shape: str, callbacks: int, executors: int = 1, policy: str = "fp",
               utilisation: float = 0.5) -> str:
    """The model YAML of `callbacks` callbacks in the given shape."""
    lengths = chains_of(shape, callbacks)
    executors = max(1, min(executors, len(lengths)))
    lines = [f"chainrt: 1", f"name: scale_{shape.replace('-', '_')}_{callbacks}",
             "hosts:", f"  - {{name: h, cores: {executors}}}", "executors:"]
    for x in range(executors):
        lines.append(f"  - {{name: x{x}, host: h, policy: {policy}, threads: [{{name: t, cores: [{x}]}}]}}")
    # the chains of each executor share its utilisation evenly; a chain's WCET is split over its callbacks
    per_executor = [0] * executors
    for i in range(len(lengths)):
        per_executor[i % executors] += 1
    nodes = [f"  - {{name: n{x}, executor: x{x}}}" for x in range(executors)]
    cbs, chains = [], []
    for i, n in enumerate(lengths):
        x = i % executors
        period_ms = PERIODS_MS[i % len(PERIODS_MS)]
        chain_budget_us = utilisation * period_ms * 1000 / per_executor[x]
        wcet_us = max(1, int(chain_budget_us / n))
        priority = 1 + PERIODS_MS[::-1].index(period_ms)  # shorter period, higher priority
        node = f"n{x}"
        names = []
        for j in range(n):
            name = f"c{i}_{j}"
            names.append(name)
            out = f", publishes: [t{i}_{j}]" if j + 1 < n else ""
            if j == 0:
                cbs.append(f"  - {{name: {name}, kind: timer, node: {node}, period: {period_ms}ms, wcet: {wcet_us}us, "
                           f"priority: {priority}{out}}}")
            else:
                cbs.append(f"  - {{name: {name}, kind: subscription, node: {node}, topic: t{i}_{j - 1}, "
                           f"wcet: {wcet_us}us, priority: {priority}{out}}}")
        chains.append(f"  - {{name: chain{i}, callbacks: [{', '.join(names)}]}}")
    lines += ["nodes:", *nodes]
    lines += ["callbacks:", *cbs, "chains:", *chains]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", choices=SHAPES, default="many-short")
    p.add_argument("--callbacks", type=int, default=10_000)
    p.add_argument("--executors", type=int, default=1)
    p.add_argument("--policy", default="fp")
    p.add_argument("--utilisation", type=float, default=0.5)
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args(argv)
    if a.callbacks < 1 or a.executors < 1 or not 0 < a.utilisation <= 1:
        p.error("--callbacks and --executors at least 1, --utilisation in (0, 1]")
    with open(a.out, "w") as f:
        f.write(model_text(a.shape, a.callbacks, a.executors, a.policy, a.utilisation))
    return 0


if __name__ == "__main__":
    sys.exit(main())
