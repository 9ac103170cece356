"""Locate and launch the chainrt runtime (the ``chainrt-run`` executable built from runtime/).

``chainrt-run`` runs the executors of ONE process of a model on real ROS 2 (rcl + Fast DDS);
:func:`run_model` starts one per process of the model (executors with different ``process``
values are separate processes, as on a robot), with the ROS 2 run-time environment that the
build recorded (``<build>/chainrt_ros2_env.json``, written by cmake/ChainrtROS2.cmake), and
merges their per-chain results (response-time samples are merged before the p99 is taken).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BINARY = "chainrt-run"


class RuntimeNotFound(RuntimeError):
    """The runtime binary was not built (no ROS 2 at build time, or no build yet)."""


def find_built_program(name: str, env_var: str, subdir: str, missing: type[Exception] = RuntimeNotFound) -> Path:
    """A program of the C++ build: ``$<env_var>``, else the newest ``<repo>/build*/**/<subdir>/<name>``,
    else PATH; raises ``missing`` with how to get it."""
    env = os.environ.get(env_var)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise missing(f"{env_var}={env} is not an executable file")
    candidates = []
    for pattern in (f"build/{subdir}/{name}", f"build/*/{subdir}/{name}", f"build*/{subdir}/{name}"):
        candidates += [p for p in REPO.glob(pattern) if p.is_file() and os.access(p, os.X_OK)]
    if candidates:
        return max(candidates, key=lambda p: p.stat().st_mtime)
    found = shutil.which(name)
    if found:
        return Path(found)
    raise missing(
        f"{name} is not built: run scripts/setup (it needs ROS 2: the ros-kilted wheels in .venv "
        f"or a sourced ROS 2 installation), or set {env_var}")


def find_binary() -> Path:
    """``$CHAINRT_RUN_BIN``, else the newest ``<repo>/build*/**/runtime/chainrt-run``, else PATH."""
    return find_built_program(BINARY, "CHAINRT_RUN_BIN", "runtime")


def ros_environment(binary: Path | None = None) -> dict[str, str]:
    """The environment for the runtime: the current one plus what the build recorded next to
    the binary (AMENT_PREFIX_PATH, RMW_IMPLEMENTATION). LD_LIBRARY_PATH is not needed (RPATH)."""
    env = dict(os.environ)
    recorded = None
    if binary is not None:
        for parent in binary.resolve().parents:
            f = parent / "chainrt_ros2_env.json"
            if f.is_file():
                recorded = json.loads(f.read_text())
                break
    if recorded:
        env.update(recorded.get("env", {}))
    else:  # the wheels of this interpreter's environment
        env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
        env.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return env


def list_processes(model_path: str, binary: Path | None = None) -> list[str]:
    binary = binary or find_binary()
    out = subprocess.run([str(binary), str(model_path), "--list-processes"], env=ros_environment(binary),
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or f"{binary} --list-processes failed")
    return [line for line in out.stdout.splitlines() if line.strip()]


def new_run_id() -> str:
    """A run id unique on this host: time and process id."""
    import time
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"


def quantile(samples: list[int], p: float) -> int:
    """Nearest-rank quantile (the same rule as the C++ monitor)."""
    if not samples:
        return 0
    s = sorted(samples)
    rank = max(1, math.ceil(p * len(s)))
    return s[min(rank, len(s)) - 1]


def merge(parts: list[dict]) -> dict:
    """Merge the per-process reports of chainrt-run (same chains, in model order)."""
    if not parts:
        return {"chains": {}, "callbacks": {}, "warnings": []}
    out = {"policy": parts[0].get("policy"), "threads": sum(p.get("threads", 0) for p in parts),
           "duration_ns": max(p.get("duration_ns", 0) for p in parts),
           "dispatches": sum(p.get("dispatches", 0) for p in parts),
           "chains": {}, "callbacks": {}, "warnings": []}
    for p in parts:
        out["callbacks"].update(p.get("callbacks", {}))
        out["warnings"] += p.get("warnings", [])
        if "lame_controller" in p:  # the process that ran LaME's controller (--lame-controller)
            out["lame_controller"] = p["lame_controller"]
    for name in parts[0]["chains"]:
        rows = [p["chains"][name] for p in parts if name in p["chains"]]
        done = [r for r in rows if r["instances"] > 0]
        samples = [s for r in rows for s in r.get("samples_ns", [])]
        n = sum(r["instances"] for r in done)
        out["chains"][name] = {
            "period_ns": rows[0]["period_ns"],
            "deadline_ns": rows[0]["deadline_ns"],
            "wcrt_ns": max((r["wcrt_ns"] for r in done), default=0),
            "bcrt_ns": min((r["bcrt_ns"] for r in done), default=0),
            "mean_ns": (sum(r["mean_ns"] * r["instances"] for r in done) / n) if n else 0.0,
            "p99_ns": quantile(samples, 0.99),
            "instances": n,
            "deadline_misses": sum(r["deadline_misses"] for r in rows),
            "drops": sum(r["drops"] for r in rows),
        }
        out.setdefault("samples_ns", {})[name] = samples  # the retained response times (reports)
    return out


def run_model(model_path: str, duration_ns: int, policy: str | None = None, threads: int | None = None,
              warmup_ns: int = 500_000_000, fifo: int | None = None, thread_params: bool = True,
              stats_period_ns: int = 0, extra_args: list[str] | None = None,
              timeout_s: float | None = None, namespace: str | None = None,
              run_id: str | None = None) -> dict:
    """Run every process of the model (one chainrt-run each, started together) and return the
    merged report: {"policy", "threads", "duration_ns", "chains": {NAME: {period_ns, deadline_ns,
    wcrt_ns, bcrt_ns, mean_ns, p99_ns, instances, deadline_misses, drops}}, "callbacks", "warnings"}."""
    binary = find_binary()
    env = ros_environment(binary)
    processes = list_processes(model_path, binary)
    # nodes and topics keep the model's names unless a namespace is asked for; the monitoring
    # topic is <namespace>/chainrt/chain_stats and its messages carry the run id
    common = [str(model_path), "--duration", f"{int(duration_ns)}ns", "--warmup", f"{int(warmup_ns)}ns",
              "--run-id", (run_id := run_id or new_run_id())]
    if namespace:
        common += ["--namespace", namespace]
    if policy:
        common += ["--policy", policy]
    if threads:
        common += ["--threads", str(threads)]
    if fifo:
        common += ["--fifo", str(fifo)]
    if not thread_params:
        common += ["--no-thread-params"]
    if stats_period_ns:
        common += ["--stats-period", f"{int(stats_period_ns)}ns"]
    common += extra_args or []
    if timeout_s is None:
        timeout_s = (duration_ns + warmup_ns) / 1e9 + 120
    def _raise_interrupt(signum, frame):
        raise KeyboardInterrupt
    # SIGTERM stops the run like Ctrl-C: the chainrt-run processes are stopped cleanly and
    # the figures so far are returned
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        result = _run_processes(binary, env, processes, common, timeout_s)
        result["run_id"] = run_id
        return result
    finally:
        signal.signal(signal.SIGTERM, old_term)


def _run_processes(binary, env, processes, common, timeout_s) -> dict:
    with tempfile.TemporaryDirectory(prefix="chainrt-run-") as tmp:
        procs = []
        for i, proc in enumerate(processes):
            out = Path(tmp) / f"p{i}.json"
            cmd = [str(binary), *common, "--process", proc, "--json", str(out)]
            procs.append((proc, out, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                                      stderr=subprocess.PIPE, text=True)))
        parts, errors = [], []
        interrupted = False
        for proc, out, p in procs:
            try:
                stdout, stderr = p.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                p.terminate()
                stdout, stderr = p.communicate()
                errors.append(f"process {proc}: timed out")
            except KeyboardInterrupt:
                # Ctrl-C: every chainrt-run stops cleanly on SIGINT and still writes its report
                interrupted = True
                for _, _, q in procs:
                    if q.poll() is None:
                        q.send_signal(signal.SIGINT)
                stdout, stderr = p.communicate()
            # 130: stopped by a signal, the report covers the time run so far
            if p.returncode not in (0, 130) or not out.is_file():
                errors.append(f"process {proc}: exit {p.returncode}: {stderr.strip()}")
                continue
            interrupted = interrupted or p.returncode == 130
            parts.append(json.loads(out.read_text()))
        if errors:
            raise RuntimeError("; ".join(errors))
    result = merge(parts)
    result["processes"] = processes
    if interrupted:
        result["interrupted"] = True
    return result
