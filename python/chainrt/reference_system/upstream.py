"""Upstream's reference system on real rclcpp: ``chainrt bench reference-system --system upstream``.

The nodes are upstream's own (ros-realtime/reference-system v1.1.0, ``reference_system``'s
rclcpp node classes built by ``create_autoware_nodes``), compiled against real rclcpp
(bench/reference_system/upstream/). Two kinds of configuration run them:

- **stock**: upstream's executables, one per stock rclcpp executor (``autoware_default_*``), and
  the EventsExecutor in upstream's single-threaded main (upstream ships no executable for it);
- **chain**: chainrt's ``ChainExecutor`` (an ``rclcpp::Executor``) spinning the same nodes, laid
  out by a model variant of ``examples/autoware_reference.yaml`` (configs.py: picas-single,
  picas-multi, edf-st, ...), in chainrt's main ``chainrt-rs-chain-executor``.

The KPIs are upstream's: its sinks (the Command nodes) print, for every sample after the first
10, the hot-path latency, the hot-path drops and the behaviour-planner period with their running
statistics; upstream's scripts (reference_system_py/std_latency.py) read those lines. This
module reads the same lines (``parse_log``): every printed "current" value is one sample, so the
per-run mean, std, min and max are upstream's (the last line of a run states them: the parser
checks that it agrees), and the p99 and the pooled figures come from the same samples.

Work: every working node runs upstream's number cruncher with one limit; the bench calibrates it
to the load's CPU time per working callback (``calibrate``) and passes it to every process in
``CHAINRT_RS_NUMBER_CRUNCHER_LIMIT`` (number_cruncher_limit.hpp says what that changes).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import runtime as chainrt_runtime
from .kpi import RunKpis

LIMIT_ENV = "CHAINRT_RS_NUMBER_CRUNCHER_LIMIT"
SUBDIR = "bench/reference_system/upstream"
CHAIN_BINARY = "chainrt-rs-chain-executor"
CALIBRATE_BINARY = "chainrt-rs-calibrate"


class UpstreamNotBuilt(RuntimeError):
    """Upstream's executables were not built (no rclcpp, or no vendored sources)."""


@dataclass(frozen=True)
class Stock:
    name: str
    executable: str
    summary: str
    replica: str | None  # the replica configuration with the same executor rule (its model: sim, analysis)
    own_priorities: bool = False  # the executable sets its threads' real-time priorities itself


STOCK: dict[str, Stock] = {s.name: s for s in [
    Stock("rclcpp-single-threaded", "autoware_default_singlethreaded",
          "rclcpp SingleThreadedExecutor (upstream's autoware_default_singlethreaded)", "ros-default-st"),
    Stock("rclcpp-static-single-threaded", "autoware_default_staticsinglethreaded",
          "rclcpp StaticSingleThreadedExecutor, deprecated in rclcpp 29 (upstream's executable)", "ros-default-st"),
    Stock("rclcpp-multi-threaded", "autoware_default_multithreaded",
          "rclcpp MultiThreadedExecutor, one thread per core (upstream's executable)", "ros-default-mt"),
    Stock("rclcpp-prioritized", "autoware_default_prioritized",
          "upstream's prioritized layout: 5 SingleThreadedExecutors, hot path SCHED_RR 1, planner SCHED_RR 30",
          "ros-default-prioritized", own_priorities=True),
    Stock("rclcpp-cbg", "autoware_default_cbg",
          "upstream's callback-group layout (prioritized, EuclideanClusterDetector's hot-path group in the fusion "
          "executor)", None, own_priorities=True),
    Stock("rclcpp-events", "autoware_default_events",
          "rclcpp EventsExecutor (experimental) in upstream's single-threaded main", None),
]}


# chainrt's configurations run on the ChainExecutor by default (any layout of configs.py may be named)
CHAIN_CONFIGS = ["picas-single", "picas-multi", "edf-st", "edf-multi"]


def find(name: str) -> Path:
    """One of the programs of bench/reference_system/upstream in the newest build."""
    var = "CHAINRT_RS_UPSTREAM_" + re.sub(r"\W", "_", name).upper()
    try:
        return chainrt_runtime.find_built_program(name, var, SUBDIR, UpstreamNotBuilt)
    except UpstreamNotBuilt:
        needs = ("rclcpp, upstream's reference_system package and chainrt's ChainExecutor" if name == CHAIN_BINARY
                 else "rclcpp and upstream's reference_system package")
        raise UpstreamNotBuilt(f"{name} is not built: it needs {needs}, which scripts/setup builds from the ROS 2 "
                               f"sources in ../shared/vendor/ros2-src (or CHAINRT_ROS2_SRC); or set {var}") from None


def default_configs() -> list[str]:
    """Every stock executor, and chainrt's configurations where the ChainExecutor main is built."""
    try:
        find(CHAIN_BINARY)
        return list(STOCK) + list(CHAIN_CONFIGS)
    except UpstreamNotBuilt:
        return list(STOCK)


# ------------------------------------------------------------------------------------ the log
_NUM = r"([-+0-9.eE]+|[-+]?(?:inf|nan))"
_STATS = rf"{_NUM}(ms)? \[min={_NUM}(?:ms)?, max={_NUM}(?:ms)?, average={_NUM}(?:ms)?, deviation={_NUM}(?:ms)?\]"
_HOT_LATENCY = re.compile(rf"^ *hot path latency: *{_STATS}$")
_HOT_DROPS = re.compile(rf"^ *hot path drops: *{_STATS}$")
_BP_PERIOD = re.compile(rf"^ *behavior planner period: *{_STATS}$")
_SAMPLE_PATH = re.compile(r"^sample path: \((.*)\) *$")
_E2E_LATENCY = re.compile(rf"^ *latency: *{_STATS}$")
# (line, unit in ns or 1, RunKpis list, summary key, value type)
_KPI_LINES = ((_HOT_LATENCY, 1e6, "hot_path_latencies", "hot_path_latency", lambda v: int(round(v))),
              (_HOT_DROPS, 1.0, "hot_path_drops_per_sample", "hot_path_drops", lambda v: int(round(v))),
              (_BP_PERIOD, 1e6, "behavior_planner_periods", "behavior_planner_period", float))


def _summary(m: re.Match, scale: float) -> dict:
    cur, _unit, lo, hi, avg, dev = m.groups()
    return {"current": float(cur) * scale, "min": float(lo) * scale, "max": float(hi) * scale,
            "average": float(avg) * scale, "deviation": float(dev) * scale}


def parse_log(text: str, warmup_chars: int = 0, stop_chars: int | None = None,
              keep=None) -> tuple[RunKpis, dict, RunKpis]:
    """The KPIs of one run from the lines upstream's sinks print (sample_management.hpp,
    print_sample_path): per sample the hot-path latency and drops ("hot path latency:", "hot
    path drops:", each printed for every sample that passed the hot path) and, where a new
    behaviour-planner period was recorded (upstream prints "bp period" just before it does), the
    period. Times in ns.

    Returns the measured samples — those of the blocks whose "sample path" line starts after
    the first `warmup_chars` characters of the log (what the program had printed when the warm-up
    ended) and before `stop_chars` (what it had printed when it was told to stop) —, upstream's own summary (the last line of each KPI, with its running min, max,
    average and deviation over every sample it printed: what upstream's report shows), and every
    sample (to check against that summary). ``keep(key, block, value)``: the measured samples
    only where it accepts them — key "hot_path_latency" (the sample's drops go with it) or
    "behavior_planner_period", block the offset of the sample's "sample path" line, value in ns."""
    k, every = RunKpis(), RunKpis()
    last: dict[str, dict] = {}
    sink = None
    new_period = False
    pos = 0
    cur = [every] if warmup_chars > 0 else [every, k]
    block, hot_kept = 0, True
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        line = line.rstrip("\r\n")
        m = _SAMPLE_PATH.match(line)
        if m:
            sink, block = m.group(1), start
            cur = [every] if start < warmup_chars or (stop_chars is not None and start >= stop_chars) else [every, k]
            for r in cur:
                r.sink_samples[sink] = r.sink_samples.get(sink, 0) + 1
            new_period = False
            continue
        if line == "bp period":
            new_period = True
            continue
        for rx, scale, attr, key, conv in _KPI_LINES:
            m = rx.match(line)
            if not m:
                continue
            # a behaviour-planner line repeats the last period unless a new one was recorded
            if key != "behavior_planner_period" or new_period:
                stat = _summary(m, scale)
                value = conv(stat["current"])
                if key != "hot_path_drops":
                    kept = keep is None or keep(key, block, value)
                    hot_kept = kept if key == "hot_path_latency" else hot_kept
                else:
                    kept = hot_kept
                for r in cur:
                    if r is every or kept:
                        getattr(r, attr).append(value)
                last[key] = stat
            if key == "behavior_planner_period":
                new_period = False
            break
    return k, last, every


def block_latencies(text: str) -> dict[int, int]:
    """{offset of a block's "sample path" line: its "latency:" in ns}: upstream's end-to-end
    latency of the sample, the sink's print time less the oldest timestamp any node of its path
    stamped into it."""
    out, pos, block = {}, 0, None
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        line = line.rstrip("\r\n")
        if _SAMPLE_PATH.match(line):
            block = start
            continue
        m = _E2E_LATENCY.match(line)
        if m and block is not None and block not in out:
            out[block] = int(round(_summary(m, 1e6)["current"]))
    return out


def check_summary(k: RunKpis, last: dict) -> list[str]:
    """Where the samples read from the lines disagree with upstream's own running statistics
    of the same run (its last line): a line the parser missed or misread. Empty when they agree
    (within the printed precision: 6 significant digits)."""
    out = []
    pairs = (("hot_path_latency", k.hot_path_latencies), ("behavior_planner_period", k.behavior_planner_periods),
             ("hot_path_drops", k.hot_path_drops_per_sample))
    for key, values in pairs:
        s = last.get(key)
        if not values or s is None:
            continue
        mean = sum(values) / len(values)
        tol = 1e-5 * max(abs(s["average"]), abs(s["max"]), 1.0) + 1e-3 * (1e6 if key != "hot_path_drops" else 1)
        if abs(mean - s["average"]) > tol or abs(max(values) - s["max"]) > tol or abs(min(values) - s["min"]) > tol:
            out.append(f"{key}: {len(values)} samples read (mean {mean:.6g}, min {min(values):.6g}, max "
                       f"{max(values):.6g}) but upstream's summary says average {s['average']:.6g}, min {s['min']:.6g}, "
                       f"max {s['max']:.6g}")
    return out


def upstream_deviation(values: list[float]) -> float:
    """Upstream's deviation: the sample standard deviation (Welford, M2 / (n - 1))."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


# ------------------------------------------------------------------------------ calibration
def calibrate(cpu_time_ns: int, pin_core: int | None = None, rt_priority: int | None = None) -> dict:
    """The number-cruncher limit whose run costs `cpu_time_ns` of CPU time here (thread CPU
    time, median of 7 runs per probe), measured where the runs will run (same core, same
    priority)."""
    cmd = launcher(pin_core, rt_priority) + [str(find(CALIBRATE_BINARY)), str(int(cpu_time_ns))]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{CALIBRATE_BINARY} failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)


# ------------------------------------------------------------------------- process placement
CPUSET_ROOT = Path("/sys/fs/cgroup/cpuset")


def launcher(pin_core: int | None, rt_priority: int | None) -> list[str]:
    """The command prefix that starts a program SCHED_FIFO at `rt_priority` (every thread it
    creates inherits the policy) on core `pin_core` (affinity; the cpuset, when there is one,
    is applied by the caller), tied to this process (SIGTERM when it dies)."""
    cmd = ["setpriv", "--pdeathsig", "TERM", "--"]
    if rt_priority is not None:
        cmd += ["chrt", "-f", str(rt_priority)]
    if pin_core is not None:
        cmd += ["taskset", "-c", str(pin_core)]
    return cmd


class CpuSet:
    """A cpuset cgroup (v1) holding only `core`, so that no thread of a run leaves that core —
    not even one that sets its own affinity (upstream's prioritized layout pins its planner
    thread to core 0 and its hot-path threads to cores 1-3: inside the cpuset, a mask without
    the core fails and the thread stays). None when cgroups cannot be used (not root, no v1
    cpuset); then affinity alone pins, and a thread that sets its own may leave."""

    def __init__(self, core: int):
        self.path = CPUSET_ROOT / f"chainrt-rs-{os.getpid()}-{core}"
        self.path.mkdir(exist_ok=True)
        (self.path / "cpuset.cpus").write_text(str(core))
        (self.path / "cpuset.mems").write_text((CPUSET_ROOT / "cpuset.mems").read_text().strip())

    @classmethod
    def create(cls, core: int | None) -> "CpuSet | None":
        if core is None or os.geteuid() != 0 or not (CPUSET_ROOT / "cpuset.cpus").is_file():
            return None
        cls.sweep()
        try:
            return cls(core)
        except OSError:
            return None

    @staticmethod
    def sweep() -> None:
        """Removes the cpusets of benches whose process is gone (one killed, or interrupted while
        its programs were still exiting); a cpuset that still holds a task is left alone (the
        kernel refuses to remove it)."""
        for d in CPUSET_ROOT.glob("chainrt-rs-*-*"):
            try:
                pid = int(d.name.split("-")[2])
                os.kill(pid, 0)
                continue  # its bench is running
            except ProcessLookupError:
                pass
            except (ValueError, IndexError, PermissionError):
                continue
            try:
                d.rmdir()
            except OSError:
                pass

    def wrap(self, cmd: list[str]) -> list[str]:
        """`cmd` started by a shell that first moves itself into the cpuset (before any thread exists)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs")] + cmd

    def remove(self) -> None:
        for _ in range(50):  # the cgroup empties when its last task has been reaped
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


# ------------------------------------------------------------------------------------ one run
def _proc_cpu_ns(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _proc_rss(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return None


STAMP_PRIORITY = 98  # the log reader, below the platform probe (99), on CPUs the run does not use


class _StampedLog:
    """The program's stdout copied into its log by a thread that notes when each sink's block
    began (``stamps``: (character offset of its "sample path" line, CLOCK_MONOTONIC ns when it was
    read, sink)): upstream's lines carry no time, and the platform-free samples need one
    (reference_system.accounting.stamped_keep). ``chars``: what has been copied."""

    def __init__(self, stream, out, quiet_cpus: set[int] | None):
        self.stream, self.out, self.quiet_cpus = stream, out, quiet_cpus
        self.stamps: list[tuple[int, int, str]] = []
        self.chars = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._copy, daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        if self.quiet_cpus:  # read at once, off the run's core (best effort: root only)
            try:
                tid = threading.get_native_id()
                os.sched_setaffinity(tid, self.quiet_cpus)
                os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(STAMP_PRIORITY))
            except (OSError, AttributeError):
                pass
        for raw in iter(self.stream.readline, b""):
            now = time.monotonic_ns()
            line = raw.decode(errors="replace")
            with self.lock:
                m = _SAMPLE_PATH.match(line.rstrip("\r\n"))
                if m:
                    self.stamps.append((self.chars, now, m.group(1).strip()))
                self.out.write(line)
                self.out.flush()
                self.chars += len(line)

    def length(self) -> int:
        with self.lock:
            return self.chars

    def finish(self) -> None:
        self.thread.join(timeout=30)


def run_process(cmd: list[str], env: dict[str, str], log_path: Path, duration_s: float, cpuset: CpuSet | None,
                progress=None, stop_grace_s: float = 15.0, warmup_s: float = 0.0, run_cpus: set[int] | None = None,
                tids: set[int] | None = None) -> dict:
    """Runs one upstream-style program for `duration_s`, its stdout into `log_path`; then SIGINT
    (rclcpp's handler shuts it down; upstream's prioritized main then aborts on a thread it never
    joins — its log is complete by then), SIGKILL after `stop_grace_s`. Samples the process' CPU
    time and resident memory every 100 ms, and adds its threads' ids to `tids` (the platform
    attribution tells them apart). Returns the usage series [t_ns, cpu_ns, rss] from
    start, the exit code, stderr's tail, how much of the log was written when `warmup_s`
    had passed and when it was told to stop (``warmup_chars``, ``stop_chars``: the program
    flushes every line, so what it printed by then), and when each sink's block was read
    (``stamps``, _StampedLog; the reader runs off `run_cpus`, the CPUs the run is confined to,
    when there are others)."""
    full = cpuset.wrap(cmd) if cpuset else cmd
    err_path = log_path.with_suffix(".stderr")
    usage = []
    quiet = (set(os.sched_getaffinity(0)) - set(run_cpus)) if run_cpus else None
    with open(log_path, "w") as out, open(err_path, "w") as err:
        t0 = time.monotonic_ns()
        proc = subprocess.Popen(full, env=env, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        reader = _StampedLog(proc.stdout, out, quiet)
        stop_at = t0 + int(duration_s * 1e9)
        warm_at = t0 + int(warmup_s * 1e9)
        warm_chars = stop_chars = None
        killed = False
        while proc.poll() is None:
            now = time.monotonic_ns()
            if warm_chars is None and now >= warm_at:
                warm_chars = reader.length()
            cpu, rss = _proc_cpu_ns(proc.pid), _proc_rss(proc.pid)
            if cpu is not None and rss is not None:
                usage.append([now - t0, cpu, rss])
            if tids is not None:
                try:
                    tids.update(int(t) for t in os.listdir(f"/proc/{proc.pid}/task"))
                except OSError:
                    pass
            if progress:
                progress(min((now - t0) / 1e9, duration_s))
            if now >= stop_at and not killed:
                stop_chars = reader.length()
                proc.send_signal(signal.SIGINT)
                killed = True
                try:
                    proc.wait(timeout=stop_grace_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                break
            time.sleep(0.1)
        reader.finish()
        proc.stdout.close()
    return {"returncode": proc.returncode, "usage": usage, "stopped": killed, "warmup_chars": warm_chars,
            "stop_chars": stop_chars, "stop_ns": stop_at - t0, "stamps": reader.stamps, "started_ns": t0,
            "stderr": err_path.read_text(errors="replace")[-2000:]}


# ------------------------------------------------------------------------------- configurations
def is_stock(name: str) -> bool:
    return name in STOCK


def program(name: str) -> Path:
    """The program of a configuration: upstream's executable, or chainrt's main on the ChainExecutor."""
    return find(STOCK[name].executable if is_stock(name) else CHAIN_BINARY)


_RCLCPP_SERVICES = ("describe_parameters", "get_parameters", "get_parameter_types", "set_parameters",
                    "set_parameters_atomically", "list_parameters", "get_type_description")


def _rclcpp_own(label: str) -> bool:
    """An entity every rclcpp node has (its parameter and type-description services; the
    parameter-event publisher has no callback)."""
    return label.rsplit("/", 1)[-1] in _RCLCPP_SERVICES or any(label.endswith("/" + s) for s in _RCLCPP_SERVICES)


def process_rt_priority(name: str, rt_priority: int | None) -> int | None:
    """The SCHED_FIFO priority a configuration's process is started with (every thread it
    creates inherits it), or None (SCHED_OTHER):

    - a stock executor without priorities of its own: ``rt_priority`` for the whole process
      (rclcpp's stock executors have no per-thread priorities; its middleware threads inherit it);
    - upstream's prioritized and callback-group layouts: None, started as upstream starts them
      (they set SCHED_RR 1 on the hot path, 30 on the planner and leave the rest and the
      middleware at normal priority);
    - chainrt's configurations: None. The ChainExecutor sets the model's SCHED_FIFO priorities on
      its own executor threads, which the model gives only to executors that run a chain with a
      deadline (configs.needs_fifo); the executor without one and the middleware threads stay
      SCHED_OTHER, so that the real-time part of the process is its chains and stays inside the
      kernel's real-time bandwidth (configs.py's module docstring)."""
    if is_stock(name) and not STOCK[name].own_priorities:
        return rt_priority
    return None


def command(name: str, model_path: Path | None, pin_core: int | None, rt_priority: int | None,
            report: Path | None = None, warmup_ns: int = 0, trace_path: Path | None = None) -> list[str]:
    """The command line of one run of a configuration (process_rt_priority says its scheduling)."""
    cmd = launcher(pin_core, process_rt_priority(name, rt_priority)) + [str(program(name))]
    if not is_stock(name):
        cmd += [str(model_path), "--warmup", f"{int(warmup_ns)}ns"]
        if report is not None:
            cmd += ["--report", str(report)]
        if trace_path is not None:
            cmd += ["--trace", str(trace_path)]
    return cmd


def run_config(name: str, model_path: Path | None, opts, tag: str, limit: int, cpuset: CpuSet | None,
               env: dict[str, str], progress=None, trace: bool = False, tids: set[int] | None = None) -> dict:
    """One run of one configuration on upstream's nodes: its log parsed into upstream's KPIs,
    the process' CPU and memory, and (ChainExecutor) the executors' per-callback figures and,
    with `trace`, their dispatch records (the Gantt chart, the accounting). ``log``: what the
    platform-free samples need (the log's text, its warm-up and stop offsets, the blocks' stamps,
    when the program started); `tids` gets the process' threads."""
    raw = opts.out_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    log, report = raw / f"{tag}.log", raw / f"{tag}.json"
    trace_path = raw / f"{tag}.trace.json"
    cmd = command(name, model_path, opts.pin_core, opts.rt_priority, report, opts.warmup_ns,
                  trace_path if trace else None)
    run_env = dict(env, **{LIMIT_ENV: str(limit)})
    duration_s = (opts.duration_ns + opts.warmup_ns) / 1e9
    t0 = time.monotonic()
    run_cpus = {opts.pin_core} if opts.pin_core is not None else None
    p = run_process(cmd, run_env, log, duration_s, cpuset, progress, warmup_s=opts.warmup_ns / 1e9,
                    run_cpus=run_cpus, tids=tids)
    text = log.read_text(errors="replace")
    # a run that ended before its warm-up did has nothing measured
    k, last, every = parse_log(text, p["warmup_chars"] if p["warmup_chars"] is not None else len(text),
                               p["stop_chars"])
    if not k.hot_path_latencies:
        raise RuntimeError(f"{tag}: no hot-path sample after the warm-up in upstream's log {log} (exit "
                           f"{p['returncode']}): {p['stderr'].strip()[-1500:]}")
    warnings = [f"{tag}: {w}" for w in check_summary(every, last)]
    # The executors' per-callback figures (CPU and wall time: who lost the CPU while running) are
    # kept; their chain response times are not reported here (the KPIs above are upstream's own;
    # the accounting takes the chain instances from the dispatch trace).
    chains, callbacks = {}, {}
    if not is_stock(name):
        if not report.is_file():
            raise RuntimeError(f"{tag}: {CHAIN_BINARY} wrote no report (exit {p['returncode']}): "
                               f"{p['stderr'].strip()[-1500:]}")
        rep = json.loads(report.read_text())
        for ex_name, ex in rep["executors"].items():
            r = ex["report"]
            callbacks.update(r.get("callbacks") or {})
            warnings += [f"{tag} {ex_name}: {w}" for w in ex.get("warnings", [])]
            # rclcpp's own entities (every node's parameter and type-description services) are not
            # in the model: they run last; anything else unmatched is a binding problem worth a look
            odd = [u for u in ex.get("unmatched", []) if not _rclcpp_own(u)]
            if odd:
                warnings.append(f"{tag} {ex_name}: {len(odd)} entities the model does not describe run last: "
                                + ", ".join(odd[:8]) + (" ..." if len(odd) > 8 else ""))
    # CPU and memory over the measured window only (not the shutdown)
    usage = [u for u in p["usage"] if u[0] <= p["stop_ns"]]
    records = json.loads(trace_path.read_text()) if trace and trace_path.is_file() else []
    return {"kpis": k, "upstream_summary": last, "returncode": p["returncode"], "usage": usage,
            "runtime_chains": chains, "runtime_callbacks": callbacks, "warnings": warnings, "records_lost": 0,
            "wall_s": time.monotonic() - t0, "stderr": p["stderr"], "trace": records,
            "log": {"text": text, "warmup_chars": p["warmup_chars"] if p["warmup_chars"] is not None else len(text),
                    "stop_chars": p["stop_chars"], "stamps": p["stamps"], "started_ns": p["started_ns"]}}


# ---------------------------------------------------------------------------------- targets
MEAN_TARGET = {"stressed": 0.9, "default": 1.0}  # PiCAS mean / best stock mean
P99_OVER_MEAN = 1.15
MAX_TARGET = 0.6                                   # PiCAS max / best stock executor's max
PLANNER_STD_NS = 100_000


def checks(result: dict) -> dict:
    """Every chainrt configuration against the best stock rclcpp executor of the same run (the
    lowest hot-path mean): mean ratio (<= 0.9 at the stressed load, <= 1.0 at the default), its
    own p99 over its own mean (<= 1.15), its maximum against the best stock executor's maximum
    (<= 0.6; also against the smallest maximum of any stock executor), zero hot-path drops, and
    the behaviour-planner period's std (< 0.1 ms). Information, not a test."""
    cfgs = {n: c for n, c in result["configs"].items() if c.get("hot_path_latency", {}).get("count")}
    stock = {n: c for n, c in cfgs.items() if is_stock(n)}
    if not stock:
        return {}
    best = min(stock, key=lambda n: stock[n]["hot_path_latency"]["mean_ns"])
    b = stock[best]["hot_path_latency"]
    least_max = min(c["hot_path_latency"]["max_ns"] for c in stock.values())
    target = MEAN_TARGET.get(result["load"], 1.0)
    out = {"best_stock": best, "best_stock_mean_ns": b["mean_ns"], "best_stock_max_ns": b["max_ns"],
           "least_stock_max_ns": least_max, "configs": {}}
    for n, c in cfgs.items():
        if is_stock(n):
            continue
        lat = c["hot_path_latency"]
        row = {"mean_vs_best_stock": lat["mean_ns"] / b["mean_ns"], "mean_target": target,
               "p99_over_mean": lat["p99_ns"] / lat["mean_ns"],
               "max_vs_best_stock_max": lat["max_ns"] / b["max_ns"] if b["max_ns"] else None,
               "max_vs_least_stock_max": lat["max_ns"] / least_max if least_max else None,
               "drops": c["hot_path_drops"], "planner_period_std_ns": c["behavior_planner_period"]["std_ns"]}
        row["met"] = {"mean": row["mean_vs_best_stock"] <= target, "p99": row["p99_over_mean"] <= P99_OVER_MEAN,
                      "max": row["max_vs_best_stock_max"] is not None and row["max_vs_best_stock_max"] <= MAX_TARGET,
                      "drops": row["drops"] == 0, "planner_std": row["planner_period_std_ns"] < PLANNER_STD_NS}
        out["configs"][n] = row
    out["platform_free"] = free_checks(result)
    return out


FREE_P99_OVER_MEAN = 1.15
FREE_MAX_OVER_MEAN = 1.3  # a non-preemptive executor's tail: its own work plus one blocking callback


def free_checks(result: dict) -> dict:
    """The same run's figures over the platform-free samples (reference_system.accounting): every
    chainrt configuration's p99 and max over its own mean (<= 1.15, <= 1.3), its max against
    every stock executor's platform-free max (below the smallest), its planner period std
    (< 0.1 ms); {} when the platform was not measured."""
    free = {n: c["accounting"] for n, c in result["configs"].items()
            if c.get("accounting") and c["accounting"]["hot_path_latency"]["count"]}
    stock = {n: a["hot_path_latency"]["max_ns"] for n, a in free.items() if is_stock(n)}
    least = min(stock, key=stock.get) if stock else None
    out = {"least_stock": least, "least_stock_max_ns": stock.get(least), "stock_max_ns": stock, "configs": {}}
    for n, a in free.items():
        if is_stock(n):
            continue
        lat, bp = a["hot_path_latency"], a["behavior_planner_period"]
        row = {"samples": lat["count"], "mean_ns": lat["mean_ns"], "p99_over_mean": lat["p99_ns"] / lat["mean_ns"],
               "max_over_mean": lat["max_ns"] / lat["mean_ns"], "max_ns": lat["max_ns"],
               "planner_period_std_ns": bp["std_ns"] if bp["count"] else None}
        row["met"] = {"p99": row["p99_over_mean"] <= FREE_P99_OVER_MEAN, "max": row["max_over_mean"] <= FREE_MAX_OVER_MEAN,
                      "below_every_stock_max": least is not None and lat["max_ns"] < stock[least],
                      "planner_std": row["planner_period_std_ns"] is not None
                      and row["planner_period_std_ns"] < PLANNER_STD_NS}
        out["configs"][n] = row
    return out if free else {}
