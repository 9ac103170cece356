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
import time
from pathlib import Path

from . import _build, _core, fastdds
from .fastdds import for_children
from .janitor import guard, remove_stale_shm, shm_entries
from .model import load_model

REPO = Path(__file__).resolve().parents[2]
BINARY = "chainrt-run"
# The run's release epoch (sched/timer.hpp): set for every process of a multi-process run, this
# far after the launch (start-up and discovery of the processes fit in it; a process that starts
# its executors later starts its timers at a later grid index and says so).
RELEASE_EPOCH_ENV = "CHAINRT_RELEASE_EPOCH_NS"
MULTI_PROCESS_EPOCH_MARGIN_NS = 5_000_000_000


class RuntimeNotFound(RuntimeError):
    """The runtime binary was not built (no ROS 2 at build time, or no build yet)."""


def find_built_program(name: str, env_var: str, subdir: str, missing: type[Exception] = RuntimeNotFound) -> Path:
    """A program of the C++ build: ``$<env_var>``, else ``<build>/<subdir>/<name>`` (or the newest
    ``<build>/*/<subdir>/<name>``) of this environment's build (its ROS 2 line's, ``_build.py``),
    else PATH; raises ``missing`` with how to get it."""
    env = os.environ.get(env_var)
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise missing(f"{env_var}={env} is not an executable file")
    build = _build.build_dir()
    if build is not None:
        for pattern in (f"{subdir}/{name}", f"*/{subdir}/{name}"):
            candidates = [p for p in build.glob(pattern) if p.is_file() and os.access(p, os.X_OK)]
            if candidates:
                return max(candidates, key=lambda p: p.stat().st_mtime)
    found = shutil.which(name)
    if found:
        return Path(found)
    raise missing(
        f"{name} is not built: run scripts/setup (it needs ROS 2: the ros-<distro> wheels of the "
        f"virtualenv or a sourced ROS 2 installation), or set {env_var}")


def find_binary() -> Path:
    """``$CHAINRT_RUN_BIN``, else this environment's ``<build>/runtime/chainrt-run``, else PATH."""
    return find_built_program(BINARY, "CHAINRT_RUN_BIN", "runtime")


def ros_environment(binary: Path | None = None) -> dict[str, str]:
    """The environment for the runtime: the current one plus what the build recorded next to
    the binary (AMENT_PREFIX_PATH, RMW_IMPLEMENTATION). LD_LIBRARY_PATH is not needed (RPATH)."""
    env = for_children(dict(os.environ))  # not this process's own loopback participant settings
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


def list_processes(model, binary: Path | None = None) -> list[str]:
    """The OS processes of ``model`` (a loaded model, or its file, then loaded here), in order of
    first appearance among its executors: one ``chainrt-run`` each. ``binary`` is not used (the
    model says it all); kept for callers that pass it."""
    if isinstance(model, (str, os.PathLike)):
        model = load_model(str(model))
    return fastdds.processes(model)


def run_options() -> dict[str, dict]:
    """The options of a run (runtime/run_options.def through chainrt._core), by key, in table
    order: flag, kind, scope ("user": an option of ``chainrt run`` too), default, help."""
    return {o["key"]: o for o in _core.run_options()}


def spec_value(kind: str, value):
    """An option's value as a run specification holds it (what chainrt-run reads with the
    option's kind): durations as ``<n>ns``, flags as booleans, AT:FACTOR steps as a list."""
    if kind in ("Time", "PositiveTime", "OptionalPeriod"):
        return f"{int(value)}ns"
    if kind in ("On", "Off"):
        return bool(value)
    if kind == "WcetSteps":
        return [f"{int(at)}ns:{factor!r}" for at, factor in value]
    if kind in ("ThreadCount", "FifoPriority"):
        return str(int(value))
    return str(value)


def run_spec(model, model_file: str, options: dict) -> str:
    """The run specification that every chainrt-run of the run reads (``--spec``, runtime/
    run_spec.hpp): the model's text (``model.to_yaml()``: the model parsed once here is the one
    every process parses again) and the options, by the table's keys; None values are left out.
    ValueError names an option the table does not have."""
    table = run_options()
    out = {}
    for key, value in options.items():
        if key not in table:
            raise ValueError(f"unknown run option {key!r} (runtime/run_options.def)")
        if value is None or (table[key]["kind"] in ("On", "Off") and not value):
            continue
        out[key] = spec_value(table[key]["kind"], value)
    return json.dumps({"model_file": str(model_file), "model": model.to_yaml(), "options": out},
                      ensure_ascii=False)


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
              run_id: str | None = None, dds_profiles: bool = True,
              process_env: dict[str, dict[str, str]] | None = None,
              process_prefix: dict[str, list[str]] | None = None,
              trace_dir: str | None = None, model=None, options: dict | None = None) -> dict:
    """Run every process of the model (one chainrt-run each, started together) under the
    Supervisor and return the merged report: {"policy", "threads", "duration_ns", "chains":
    {NAME: {period_ns, deadline_ns, wcrt_ns, bcrt_ns, mean_ns, p99_ns, instances,
    deadline_misses, drops, expected_releases, never_completed}}, "callbacks", "warnings",
    "run_id", "interrupted", "failed_processes", "partial"}. Raises RuntimeError when no
    process left figures.

    ``model``: the model of ``model_path`` when the caller has loaded it (else it is loaded here):
    the run parses it nowhere else in this process, and every chainrt-run parses it once, from
    the run specification (:func:`run_spec`) that carries it with the run's options.
    ``options``: further options of the table (runtime/run_options.def) by key, e.g.
    ``{"lame_controller": period_ns, "scale_wcet": [(at_ns, factor)]}``; ``extra_args``: further
    chainrt-run flags (the same table), given to every process.
    ``dds_profiles``: give every process its generated Fast DDS profile (chainrt.fastdds: known
    ports, DDS threads at the executor's priority, loopback only under localhost discovery).
    ``process_env`` / ``process_prefix``: per process, extra environment and a command prefix
    (e.g. ``ip netns exec NS``), as chainrt.crosslayer uses for hosts in network namespaces.
    ``trace_dir``: every process writes its dispatch trace (chainrt-run ``--trace``) to
    ``trace_dir/<process>.jsonl``; the report's ``"model_tids"`` are then the ids of the run's
    threads seen while it ran (what the platform attribution tells apart from the platform)."""
    binary = find_binary()
    env = ros_environment(binary)
    if model is None:
        model = load_model(str(model_path))
    processes = list_processes(model)
    if len(processes) > 1 and RELEASE_EPOCH_ENV not in env:
        # one release epoch for every process (sched/timer.hpp, ReleaseGrid): the model's timer
        # offsets hold across processes and every timer starts at the same grid index
        env[RELEASE_EPOCH_ENV] = str(time.monotonic_ns() + MULTI_PROCESS_EPOCH_MARGIN_NS)
    # nodes and topics keep the model's names unless a namespace is asked for; the monitoring
    # topic is <namespace>/chainrt/chain_stats and its messages carry the run id
    spec = run_spec(model, model_path, {
        "duration": duration_ns, "warmup": warmup_ns, "policy": policy or None, "threads": threads or None,
        "fifo": fifo or None,
        "no_thread_params": not thread_params, "stats_period": stats_period_ns or None,
        "namespace": namespace or None, **(options or {})})
    # the run id on every command line: a run's processes are found by it (crosslayer.session)
    common = ["--run-id", (run_id := run_id or new_run_id()), *(extra_args or [])]
    if timeout_s is None:
        timeout_s = (duration_ns + warmup_ns) / 1e9 + 120
    with guard() as watcher, tempfile.TemporaryDirectory(prefix="chainrt-dds-") as dds_dir:
        watcher.remove_if_killed(dds_dir)  # a killed chainrt leaves no profile behind either
        if trace_dir:
            watcher.remove_if_killed(trace_dir)  # ... nor the dispatch traces
        if dds_profiles and process_env is None:
            # named files, alive for the run: Fast DDS's XML loader (2.14 and 3.x) takes the file's
            # realpath(), which an anonymous file (/dev/fd/N of an unlinked file) has none of
            try:
                process_env = fastdds.run_environments(model, dds_dir, env, thread_params)
            except (fastdds.ProfileError, ValueError) as e:
                raise RuntimeError(f"Fast DDS profiles: {e}") from None
        result = Supervisor(binary, env, processes, common, timeout_s,
                            expected_s=(duration_ns + warmup_ns) / 1e9, run_id=run_id,
                            process_env=process_env, process_prefix=process_prefix,
                            trace_dir=trace_dir, spec=spec).run()
    _mark_unfinished(result, duration_ns)
    return result


def _mark_unfinished(result: dict, duration_ns: int) -> None:
    """A chain that completed no instance is reported as such, not as "0 misses": its expected
    releases over the measured time (duration / period) are set beside the instances, and a
    chain with releases due but no completion is flagged ``never_completed`` with a warning."""
    for name, c in result.get("chains", {}).items():
        period = c.get("period_ns") or 0
        expected = int(duration_ns // period) if period > 0 else None
        c["expected_releases"] = expected
        c["never_completed"] = bool(c.get("instances", 0) == 0 and (expected is None or expected > 0))
        if c["never_completed"]:
            result.setdefault("warnings", []).append(
                f"chain {name} completed no instance"
                + (f" in {expected} expected releases" if expected else "")
                + ": starved or broken; its response times are unknown, not 0")


PARENT_PID_ENV = "CHAINRT_PARENT_PID"


def tied_to_this_process(env: dict[str, str]) -> dict[str, str]:
    """``env`` plus the variable with which chainrt's programs (chainrt-run, the reference-system
    bench) tie themselves to this process at start-up: SIGTERM when it dies (PR_SET_PDEATHSIG), so
    that no child outlives a killed chainrt (runtime/supervised.hpp). Not a preexec_fn: Python
    code between fork and exec can deadlock the child of a process with other threads (rclpy's
    and Fast DDS's run beside the supervisor in ``chainrt profile --run``)."""
    return {**env, PARENT_PID_ENV: str(os.getpid())}


class Supervisor:
    """Runs the chainrt-run processes of one run and watches them.

    - each child runs in its own session (a terminal's Ctrl-C reaches only chainrt, which stops
      the children exactly once) and gets SIGTERM if chainrt dies (PR_SET_PDEATHSIG);
    - a child that dies or fails is noticed at once (polled every 20 ms): the others are stopped
      cleanly (SIGINT) and their figures kept, the failed one named in ``failed_processes``;
    - SIGINT/SIGTERM are caught as flags, never as an exception in the middle of the bookkeeping:
      the first stops the children, later ones only say that the report is being written; a child
      that does not stop within STOP_GRACE_S is killed;
    - reports, stdout and stderr of the children are anonymous temporary files (passed as file
      descriptors), so nothing is left in /tmp even when chainrt is killed; the Fast DDS
      shared-memory files the run leaves behind are removed on every exit path.
    """

    POLL_S = 0.02
    STOP_GRACE_S = 15.0

    def __init__(self, binary: Path, env: dict, processes: list[str], common: list[str], timeout_s: float,
                 expected_s: float | None = None, run_id: str | None = None,
                 process_env: dict[str, dict[str, str]] | None = None,
                 process_prefix: dict[str, list[str]] | None = None, trace_dir: str | None = None,
                 spec: str | None = None):
        self.binary, self.env, self.processes, self.common, self.timeout_s = binary, env, processes, common, timeout_s
        self.spec = spec  # the run specification every child reads (``--spec``), or None
        self.expected_s = expected_s
        self.run_id = run_id or new_run_id()
        # per process: extra environment (its Fast DDS profile) and a command prefix (a host's
        # network namespace)
        self.process_env, self.process_prefix = process_env or {}, process_prefix or {}
        self.trace_dir = trace_dir
        self.tids: set[int] = set()  # the children's threads seen while they ran (with trace_dir)
        self.signals = 0

    def _on_signal(self, signum, frame) -> None:
        self.signals += 1
        if self.signals > 1:
            try:
                os.write(2, b"chainrt: stopping; the report of the time run so far is being written\n")
            except OSError:
                pass

    def run(self) -> dict:
        with guard():  # a killed chainrt: the watcher removes what the run left in /dev/shm
            return self._run()

    def _run(self) -> dict:
        import time
        import threading
        shm_before = shm_entries()
        old = {}
        if threading.current_thread() is threading.main_thread():
            old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        children = []
        spec = None
        try:
            if self.spec is not None:  # one anonymous file; each child opens its own /dev/fd/N
                spec = tempfile.TemporaryFile()
                spec.write(self.spec.encode())
                spec.flush()
            for proc in self.processes:
                report = tempfile.TemporaryFile()
                log = tempfile.TemporaryFile()
                cmd = [*self.process_prefix.get(proc, []), str(self.binary),
                       *(["--spec", f"/dev/fd/{spec.fileno()}"] if spec else []), *self.common, "--process", proc,
                       "--json", f"/dev/fd/{report.fileno()}"]
                if self.trace_dir:
                    cmd += ["--trace", str(Path(self.trace_dir) / f"{proc}.jsonl")]
                env = tied_to_this_process({**self.env, **self.process_env.get(proc, {})})
                p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     pass_fds=(report.fileno(), *([spec.fileno()] if spec else [])),
                                     start_new_session=True)
                children.append({"process": proc, "popen": p, "report": report, "log": log})
            started = time.monotonic()
            deadline = started + self.timeout_s
            shown = 0
            stopping_since = None
            timed_out = False
            while any(c["popen"].poll() is None for c in children):
                for c in children:  # stopped by a signal chainrt did not send: its figures are partial
                    if c["popen"].returncode == 130 and not c.get("asked") and "outside_s" not in c:
                        c["outside_s"] = time.monotonic() - started
                failed = [c for c in children if c["popen"].returncode not in (None, 0, 130) or "outside_s" in c]
                want_stop = self.signals > 0 or bool(failed) or time.monotonic() > deadline
                if want_stop and stopping_since is None:
                    timed_out = time.monotonic() > deadline and not self.signals and not failed
                    stopping_since = time.monotonic()
                    for c in children:
                        if c["popen"].poll() is None:
                            c["asked"] = True
                            c["popen"].send_signal(signal.SIGINT)
                shown = self._progress(time.monotonic() - started, shown, stopping_since is not None)
                if self.trace_dir and int((time.monotonic() - started) / self.POLL_S) % 25 == 0:
                    self._note_threads(children)
                if stopping_since is not None and time.monotonic() - stopping_since > self.STOP_GRACE_S:
                    for c in children:
                        if c["popen"].poll() is None:
                            c["popen"].kill()
                time.sleep(self.POLL_S)
            self._progress(None, shown, True)
            for c in children:  # one that ended by an outside signal in the last poll interval
                if c["popen"].returncode == 130 and not c.get("asked") and "outside_s" not in c:
                    c["outside_s"] = time.monotonic() - started
            return self._collect(children, timed_out)
        finally:
            for c in children:  # every exit path: no child left running
                if c["popen"].poll() is None:
                    c["popen"].kill()
                    c["popen"].wait()
                c["report"].close()
                c["log"].close()
            if spec is not None:
                spec.close()
            for s, h in old.items():
                signal.signal(s, h)
            remove_stale_shm(shm_before)

    def _note_threads(self, children) -> None:
        """Adds the running children's thread ids to ``tids`` (about every half second: threads
        that DDS or an executor starts later are seen too)."""
        for c in children:
            try:
                self.tids.update(int(t) for t in os.listdir(f"/proc/{c['popen'].pid}/task"))
            except OSError:
                pass  # (ended meanwhile)

    def _progress(self, elapsed: float | None, shown: int, stopping: bool) -> int:
        """On a terminal, a one-line progress display of a long run (every second); cleared at
        the end. Returns the last second shown."""
        if not self.expected_s or self.expected_s < 5 or not sys.stderr.isatty():
            return shown
        try:
            if elapsed is None:
                if shown:
                    sys.stderr.write("\r\033[K")
                    sys.stderr.flush()
                return shown
            if int(elapsed) > shown:
                shown = int(elapsed)
                what = "stopping" if stopping else f"{shown} s of {self.expected_s:.0f} s"
                sys.stderr.write(f"\rchainrt run: {what} ({len(self.processes)} process(es))\033[K")
                sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return shown

    def _collect(self, children, timed_out: bool) -> dict:
        parts, failed = [], []
        for c in children:
            rc = c["popen"].returncode
            c["log"].seek(0)
            log = c["log"].read().decode(errors="replace").strip()
            c["report"].seek(0)
            text = c["report"].read().decode(errors="replace")
            report = None
            if "outside_s" in c:  # interrupted from outside: the figures cover only part of the run
                last = log.splitlines()[-1] if log else ""
                failed.append({"process": c["process"], "exit": rc, "stderr": last,
                               "reason": f"interrupted by a signal chainrt did not send (SIGINT or SIGTERM) "
                                         f"after {c['outside_s']:.1f} s"
                                         + (f" of {self.expected_s:.1f} s" if self.expected_s else "")
                                         + "; its figures are left out"})
                continue
            if rc in (0, 130) and text.strip():
                try:
                    report = json.loads(text)
                except ValueError:
                    report = None
            if report is None:
                why = (f"killed by signal {signal.Signals(-rc).name}" if rc is not None and rc < 0
                       else f"exit {rc}")
                last = log.splitlines()[-1] if log else ""
                failed.append({"process": c["process"], "exit": rc, "reason": why, "stderr": last})
                continue
            parts.append(report)
        if not parts:
            raise RuntimeError("; ".join(f"process {f['process']}: {f['reason']}"
                                         + (f": {f['stderr']}" if f["stderr"] else "") for f in failed)
                               or "no process ran")
        result = merge(parts)
        result["processes"] = self.processes
        result["run_id"] = self.run_id
        result["interrupted"] = self.signals > 0
        result["timed_out"] = timed_out
        result["failed_processes"] = failed
        result["partial"] = bool(failed) or result["interrupted"] or timed_out
        if self.trace_dir:
            result["model_tids"] = sorted(self.tids | {c["popen"].pid for c in children})
        if failed:
            for f in failed:
                result["warnings"].append(f"process {f['process']} failed ({f['reason']})"
                                          + (f": {f['stderr']}" if f["stderr"] else "")
                                          + "; the other processes were stopped and their figures kept")
        return result
