"""A chainrt model's nodes on real rclcpp: under rclcpp's own executors or chainrt's ChainExecutor.

``chainrt_rclcpp_nodes`` (rclcpp/tools/model_nodes.cpp) generates one rclcpp node per model node
(timers, subscriptions, services, clients; each callback burning its WCET of thread CPU time and
publishing along the model's chains), runs them under one executor and measures every chain the
same way under each: from the source timer's expected call time, carried in the messages, to the
end of the chain's last leaf. This module builds its arguments, runs it and reads its JSON.

    result = stock.run("examples/two_chains.yaml", "single", duration=5.0)
    result["chains"]["high"]  # released, instances, lost, mean_ns, p99_ns, max_ns, deadline_misses

:func:`run_processes` runs a multi-process model as one program per model process (each with a
command prefix and environment of its own: a host's network namespace, its Fast DDS profile), the
chains measured across the programs from their execution traces (CROS-RT's hosts).

Run it where no other ROS 2 process is discovered (a ROS_DOMAIN_ID of its own; the environment
of ``runtime.ros_environment`` keeps discovery on localhost).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from . import accounting, fastdds, runtime
from .model import load_model

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
              process: str | None = None, trace: str | os.PathLike | None = None,
              run_id: str | None = None, scale_wcet: tuple[int, float] | None = None,
              lame_controller_ns: int = 0) -> list[str]:
    """The program's command line after its name (ValueError for an executor it does not know).
    ``process``: only that process's nodes; ``trace``: every callback execution into that file
    (and ``.start``), chainrt-run's trace format (chainrt.accounting.read_traces reads a
    directory of them); ``run_id``: a tag on the command line; ``scale_wcet``: (ns after the
    start, factor) from when every callback burns factor x its WCET; ``lame_controller_ns``:
    LaME's controller in the ChainExecutor every that many ns."""
    if executor not in LABELS:
        raise ValueError(f"executor {executor!r}: one of {', '.join(EXECUTORS)}")
    args = ["--model", str(model), "--executor", executor, "--duration", f"{duration:g}"]
    if process:
        args += ["--process", process]
    if trace:
        args += ["--trace", str(trace)]
    if run_id:
        args += ["--run-id", run_id]
    if threads:
        args += ["--threads", str(int(threads))]
    if policy:
        args += ["--policy", policy]
    if drain is not None:
        args += ["--drain", f"{drain:g}"]
    if not thread_params:
        args.append("--no-thread-params")
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
    (pinning, a priority); `more`: arguments()'s process, trace, run_id, scale_wcet,
    lame_controller_ns.
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
    raise StockRunFailed(failure_reason(proc.stderr, proc.returncode))


# A ROS 2 log line below ERROR ("[WARN] [1796007303.989291780] [rmw_fastrtps_shared_cpp]: ..."):
# the middleware's notices (Kilted's rmw_fastrtps logs that one of the two profile variables set
# for both lines is deprecated), never why a program failed.
_ROS_NOTICE = re.compile(r"^\[(DEBUG|INFO|WARN)\] \[[0-9.]+\] ")


def failure_reason(stderr: str, returncode: int | None) -> str:
    """Why a program of a run gave no result, in one line: its own last message
    ("chainrt_rclcpp_nodes: ..."), else the last line of its stderr that is not a middleware
    notice, else how it ended."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not _ROS_NOTICE.match(line.strip())]
    own = [line for line in lines if line.startswith(f"{BINARY}: ")]
    if own or lines:
        return (own or lines)[-1]
    if returncode is not None and returncode < 0:
        try:
            return f"ended by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"ended by signal {-returncode}"
    return f"exit status {returncode}"


def _result_of(out: str) -> dict | None:
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def chain_figures(executions: list, chains: dict, deadlines: dict, periods: dict, since_ns: int) -> dict:
    """Per chain the figures of runtime.run_model's report (wcrt_ns, bcrt_ns, mean_ns, p99_ns,
    instances, deadline_misses, ...) over the instances in ``executions`` released from
    ``since_ns`` on (accounting.instances: release at the first callback, end at the last)."""
    out = {}
    for name, insts in accounting.instances(executions, chains).items():
        rt = [i.response for i in insts if i.release >= since_ns]
        n = len(rt)
        out[name] = {"period_ns": periods.get(name, 0), "deadline_ns": deadlines.get(name, 0),
                     "wcrt_ns": max(rt, default=0), "bcrt_ns": min(rt, default=0),
                     "mean_ns": sum(rt) / n if n else 0.0, "p99_ns": runtime.quantile(rt, 0.99), "instances": n,
                     "deadline_misses": sum(1 for x in rt if deadlines.get(name) and x > deadlines[name]),
                     "drops": 0}
    return out


def run_processes(model_path: str | os.PathLike, executor: str, duration_ns: int, *, warmup_ns: int = 500_000_000,
                  thread_params: bool = True, run_id: str | None = None,
                  process_env: dict[str, dict[str, str]] | None = None,
                  process_prefix: dict[str, list[str]] | None = None, trace_dir: str | os.PathLike | None = None,
                  env: dict[str, str] | None = None) -> dict:
    """The model's generated nodes under `executor`, one program per model process (each with its
    ``process_prefix`` — a host's network namespace — and ``process_env`` — its Fast DDS
    profile), measured together from their traces (``trace_dir``, a temporary one when None):
    the report of runtime.run_model ({"chains": {name: {wcrt_ns, bcrt_ns, mean_ns, p99_ns,
    instances, deadline_misses, ...}}}, instances released ``warmup_ns`` after the first program
    started) plus "processes" (each program's own result), "executor_class" {model executor:
    the class of the executor object that spun it}, "run_id" and "model_tids" (the programs'
    threads seen while they ran). A process with timers runs ``warmup_ns + duration_ns``; the
    others (they only react) are stopped (SIGINT) when those have ended and their last
    messages had time to arrive. Raises StockUnavailable or StockRunFailed with one line."""
    binary = find_binary()
    model = load_model(str(model_path))
    run_id = run_id or runtime.new_run_id()
    full_env = runtime.ros_environment(binary)
    full_env.update(env or {})
    node_exec = {n.name: n.executor for n in model.nodes}
    proc_of = {e.name: e.process for e in model.executors}
    timed = {proc_of[node_exec[c.node]] for c in model.callbacks if c.kind == "timer"}
    longest = max((c.deadline for c in model.chains), default=0) / 1e9
    active_s = (warmup_ns + duration_ns) / 1e9
    with tempfile.TemporaryDirectory(prefix="chainrt-stock-") as tmp:
        traces = Path(trace_dir or tmp)
        traces.mkdir(parents=True, exist_ok=True)
        shm_before = runtime.shm_entries()
        children, outputs = {}, {}
        try:
            for proc in fastdds.processes(model):
                dur = active_s if proc in timed else active_s + 600
                cmd = [*(process_prefix or {}).get(proc, []), str(binary),
                       *arguments(model_path, executor, duration=dur, thread_params=thread_params, process=proc,
                                  trace=traces / f"{proc}.jsonl", run_id=run_id, drain=0.5 + 2 * longest)]
                outputs[proc] = (tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+"))
                children[proc] = subprocess.Popen(
                    cmd, env=runtime.tied_to_this_process({**full_env, **(process_env or {}).get(proc, {})}),
                    stdin=subprocess.DEVNULL,
                    stdout=outputs[proc][0], stderr=outputs[proc][1], text=True)
            tids = _supervise(children, timed, active_s, 1.0 + 2 * longest)
        finally:
            for p in children.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
            runtime.remove_stale_shm(shm_before)
        results, failed = {}, []
        for proc, p in children.items():
            out, err = (_read(f).strip() for f in outputs[proc])
            res = _result_of(out)
            if res is None:
                failed.append((getattr(p, "asked", False), proc, failure_reason(err, p.returncode)))
            else:
                results[proc] = res
        if failed:
            # the programs that failed by themselves first (the others were asked to stop then)
            failed.sort(key=lambda f: f[0])
            raise StockRunFailed("; ".join(f"{BINARY} --process {proc}: {why}" for _, proc, why in failed))
        executions = accounting.read_traces(traces)
        starts = _starts(traces)
    since = (min(starts) if starts else 0) + warmup_ns
    chains = {c.name: list(c.callbacks) for c in model.chains}
    figures = chain_figures(executions, chains, {c.name: c.deadline for c in model.chains},
                            {c.name: c.period for c in model.chains}, since)
    for name, f in figures.items():
        f["released"] = sum(r.get("releases", {}).get(name, 0) for r in results.values())
    classes = {ex: cls for r in results.values() for ex, cls in r.get("executor_class", {}).items()}
    return {"executor": executor, "chains": figures, "processes": results, "executor_class": classes,
            "run_id": run_id, "model_tids": sorted(tids),
            "warnings": [w for r in results.values() for w in r.get("warnings", [])]}


def _read(f) -> str:
    with f:
        f.seek(0)
        return f.read()


def _starts(trace_dir: Path) -> list[int]:
    out = []
    for f in trace_dir.glob("*.jsonl.start"):
        try:
            out.append(int(f.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def _demand_ns(pid: int) -> int:
    """The time (ns) the process's threads have run or waited runnable for a CPU so far
    (schedstat), 0 when it is gone: it stops growing only when none of them has work, also on a
    machine that starves them."""
    total = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                total += sum(int(v) for v in Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[:2])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return total


# a reactive program counts as done with the run's last messages when its threads ran or waited
# for a CPU less than IDLE_DEMAND_NS in IDLE_S (DDS's own housekeeping), at most STOP_LIMIT_S after
# the timers
IDLE_S, IDLE_DEMAND_NS, STOP_LIMIT_S = 0.5, 2_000_000, 20.0


def _supervise(children: dict, timed: set[str], active_s: float, grace_s: float) -> set[int]:
    """Waits for the programs: those with timers end by themselves, the others get SIGINT once
    those have ended, ``grace_s`` has passed and they have been idle for IDLE_S (_demand_ns: the
    last messages served; at most STOP_LIMIT_S); any program failing (or the run overrunning by 120 s)
    stops every other at once. Returns the thread ids seen while they ran."""
    tids: set[int] = set()
    limit = time.monotonic() + active_s + 120
    stop_at = timers_end = None
    cpu: dict[int, tuple[float, int]] = {}
    while any(p.poll() is None for p in children.values()):
        now = time.monotonic()
        for p in children.values():
            try:
                tids.update(int(t) for t in os.listdir(f"/proc/{p.pid}/task"))
            except OSError:
                pass
        failed = any(p.returncode not in (None, 0) for p in children.values())
        if stop_at is None and (failed or now > limit):
            stop_at = now
        elif stop_at is None and all(children[x].poll() is not None for x in timed if x in children):
            timers_end = timers_end or now
            busy = False
            for p in children.values():
                used = _demand_ns(p.pid)
                since, last = cpu.get(p.pid, (now, -1))
                if last < 0 or used - last > IDLE_DEMAND_NS:
                    cpu[p.pid] = (now, used)
                    busy = True
                elif now - since < IDLE_S:
                    busy = True
            if now - timers_end >= STOP_LIMIT_S or (now - timers_end >= grace_s and not busy):
                stop_at = now
        if stop_at is not None and now >= stop_at:
            for p in children.values():
                if p.poll() is None and not getattr(p, "asked", False):
                    p.send_signal(signal.SIGINT)
                    p.asked = True
            if now > stop_at + 30:
                break  # the caller kills what is left
        time.sleep(0.1)
    return tids
