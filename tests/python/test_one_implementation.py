"""Rules the executors share are written once: one reading of CLOCK_MONOTONIC (runtime::now_ns in
runtime/threads.hpp, the ROS-free accelerator library's header), one chain-instance completion
rule (sched::ChainCompletion) and one monitor hook at the end of a dispatch
(runtime::ChainMonitor::finished) — no backend (the simulator, the rcl runtime, the rclcpp and
the rclpy executors), tool, bench or test keeps its own copy."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_DIRS = ["model", "sched", "sim", "runtime", "rclcpp", "lame", "synth", "python/bindings", "bench",
               "analysis", "fuzz", "examples", "tests/cpp"]
SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".cu"}

NOW = "runtime/include/chainrt/runtime/threads.hpp"
COMPLETION = ("sched/src/chain_completion.cpp", "sched/include/chainrt/sched/chain_completion.hpp")
MONITOR = "runtime/include/chainrt/runtime/chain_track.hpp"
BACKENDS = ["sim/src", "runtime/src", "rclcpp/src", "python/bindings/rclpy"]


def sources(dirs=SOURCE_DIRS):
    for d in dirs:
        for f in sorted((ROOT / d).rglob("*")):
            if f.suffix in SUFFIXES and f.is_file():
                yield f.relative_to(ROOT).as_posix(), f.read_text(errors="replace")


def where(pattern: str, dirs=SOURCE_DIRS) -> list[str]:
    rx = re.compile(pattern)
    out = []
    for rel, text in sources(dirs):
        for n, line in enumerate(text.split("\n"), 1):
            if rx.search(line) and not line.lstrip().startswith("//"):
                out.append(f"{rel}:{n}: {line.strip()}")
    return out


def test_one_reading_of_the_monotonic_clock():
    readings = where(r"clock_gettime\s*\(\s*CLOCK_MONOTONIC\s*,|steady_clock::now\(\)\.time_since_epoch")
    assert [r for r in readings if not r.startswith(NOW + ":")] == [], \
        "read CLOCK_MONOTONIC with chainrt::runtime::now_ns() (runtime/threads.hpp)"
    assert any(r.startswith(NOW + ":") for r in readings)


def test_one_chain_completion_rule():
    # the join of a branching chain's leaves (a bit per leaf per instance) is chain_completion's
    joins = where(r"all_leaves|leaf_bit|joins_\b|leaf_count_")
    assert [j for j in joins if not j.startswith(tuple(c + ":" for c in COMPLETION))] == []
    # no backend keeps its own list of the chains ending at a callback
    assert where(r"\bleaf_of\b", BACKENDS) == []


def test_one_monitor_hook_at_the_end_of_a_dispatch():
    # a callback's figures, a chain's response time: recorded by ChainMonitor::finished only
    for pattern in (r"record_instance\s*\(", r"latency\w*(\[[^]]*\])?\.record\s*\(", r"window\.record\s*\("):
        found = [w for w in where(pattern, BACKENDS + ["runtime/include", "sched"])
                 if not w.startswith(MONITOR + ":") and "runtime/monitor.hpp" not in w]
        assert found == [], pattern
