"""A chainrt model's nodes on real rclcpp: under rclcpp's own executors or chainrt's ChainExecutor.

``chainrt_rclcpp_nodes`` (rclcpp/tools/model_nodes.cpp) generates one rclcpp node per model node
(timers, subscriptions, services, clients; each callback burning its WCET of thread CPU time and
publishing along the model's chains), runs them under one executor and measures every chain the
same way under each: from the source timer's expected call time, carried in the messages, to the
end of the chain's last leaf. This module builds its arguments, runs it and reads its JSON.

    result = stock.run("examples/two_chains.yaml", "single", duration=5.0)
    result["chains"]["high"]  # released, instances, lost, mean_ns, p99_ns, max_ns, deadline_misses

Run it where no other ROS 2 process is discovered (a ROS_DOMAIN_ID of its own; the environment
of ``runtime.ros_environment`` keeps discovery on localhost).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from . import runtime

BINARY = "chainrt_rclcpp_nodes"
# The executors the generated nodes run under, with how tables name them.
LABELS = {
    "single": "stock rclcpp SingleThreaded",
    "multi": "stock rclcpp MultiThreaded",
    "static": "stock rclcpp StaticSingleThreaded",
    "events": "stock rclcpp Events",
    "chainrt": "chainrt ChainExecutor",
}
EXECUTORS = tuple(LABELS)


class StockUnavailable(RuntimeError):
    """chainrt was built without rclcpp (no chainrt_rclcpp_nodes)."""


class StockRunFailed(RuntimeError):
    """A run of the generated nodes ended without its result (the program's one-line reason)."""


def find_binary() -> Path:
    """``$CHAINRT_RCLCPP_NODES_BIN``, else this environment's ``<build>/rclcpp/chainrt_rclcpp_nodes``."""
    return runtime.find_built_program(BINARY, "CHAINRT_RCLCPP_NODES_BIN", "rclcpp", StockUnavailable)


def unavailable() -> str | None:
    """Why the generated rclcpp nodes cannot run here, or None when they can."""
    try:
        find_binary()
    except StockUnavailable as err:
        return str(err)
    return None


def arguments(model: str | os.PathLike, executor: str, *, duration: float = 10.0, threads: int | None = None,
              policy: str | None = None, drain: float | None = None, thread_params: bool = True,
              trace_dir: str | os.PathLike | None = None, scale_wcet: tuple[int, float] | None = None,
              lame_controller_ns: int = 0) -> list[str]:
    """The program's command line after its name (ValueError for an executor it does not know).
    ``trace_dir``: every callback execution written there (chainrt.accounting.read_traces reads
    it); ``scale_wcet``: (ns after the start, factor) from when every callback burns factor x its
    WCET; ``lame_controller_ns``: LaME's controller in the ChainExecutor every that many ns."""
    if executor not in LABELS:
        raise ValueError(f"executor {executor!r}: one of {', '.join(EXECUTORS)}")
    args = ["--model", str(model), "--executor", executor, "--duration", f"{duration:g}"]
    if threads:
        args += ["--threads", str(int(threads))]
    if policy:
        args += ["--policy", policy]
    if drain is not None:
        args += ["--drain", f"{drain:g}"]
    if not thread_params:
        args.append("--no-thread-params")
    if trace_dir is not None:
        args += ["--trace", str(trace_dir)]
    if scale_wcet is not None:
        args += ["--scale-wcet", f"{int(scale_wcet[0])}:{float(scale_wcet[1])!r}"]
    if lame_controller_ns:
        args += ["--lame-controller", str(int(lame_controller_ns))]
    return args


def run(model: str | os.PathLike, executor: str, *, duration: float = 10.0, threads: int | None = None,
        policy: str | None = None, drain: float | None = None, thread_params: bool = True,
        env: dict[str, str] | None = None, preexec_fn=None, **more) -> dict:
    """One run of the model's generated nodes under `executor`; its JSON result. `env` adds to the
    ROS 2 environment (e.g. a ROS_DOMAIN_ID); `preexec_fn` runs in the child before it starts
    (pinning, a priority); `more`: arguments()'s trace_dir, scale_wcet, lame_controller_ns.
    Raises StockUnavailable or StockRunFailed with one line."""
    binary = find_binary()
    full_env = runtime.ros_environment(binary)
    full_env.update(env or {})
    cmd = [str(binary), *arguments(model, executor, duration=duration, threads=threads, policy=policy, drain=drain,
                                   thread_params=thread_params, **more)]
    limit = duration + 120 + (drain or 0)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=limit, preexec_fn=preexec_fn)
    except subprocess.TimeoutExpired:
        raise StockRunFailed(f"{BINARY} --executor {executor}: no result within {limit:.0f} s") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    reason = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else f"exit status {proc.returncode}"
    raise StockRunFailed(reason)
