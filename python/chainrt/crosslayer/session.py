"""Running a multi-host model across network namespaces, with CROS-RT's layers switched on or off.

:func:`run_on_hosts` is what ``chainrt run`` does for a model whose executors live on several
hosts: every host becomes a network namespace (:mod:`.netns`), every process runs in its host's
namespace with its generated Fast DDS profile (chainrt.fastdds: known ports, unicast discovery of
the other hosts' participants over UDP, DDS threads at the executor's priority unless
``dds_priorities`` is off), and with ``kernel`` the XDP message selector and the class threads
(:mod:`.kernel`) run on every host's interface. ``flood`` adds a non-RT UDP load between two
hosts and reports its packet delivery ratio. With ``nodes`` the model's processes run as the
generated rclcpp nodes (chainrt.stock: ``chainrt_rclcpp_nodes``, one program per process) under
rclcpp's stock executor of that name or chainrt's ChainExecutor, instead of chainrt-run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import fastdds, runtime, stock
from ..model import load_model
from . import kernel as kpath
from .netns import HostNetwork

FLOOD_PORT = 9


@dataclass
class Flood:
    """A non-RT UDP flood of ``rate_mbps`` in datagrams of ``size`` bytes from host ``src`` to a
    sink on host ``dst`` (port 9, never a participant's port, so class 0). ``cpu``: pin sender
    and sink to this CPU (e.g. the real-time executor's, to provoke kernel-side interference).
    ``rx_cpu``: pin the receive processing of ``dst``'s interface (its NAPI kernel threads) to
    this CPU for the flood's lifetime, as a NIC whose interrupts are steered to that CPU."""
    src: str
    dst: str
    rate_mbps: float = 60.0
    size: int = 1400
    cpu: int | None = None
    rx_cpu: int | None = None


_SENDER = r"""
import signal, socket, sys, time
addr, rate, size, dur = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
signal.signal(signal.SIGINT, lambda *a: stop.append(1))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"\0" * size
interval = size * 8 / (rate * 1e6)
sent, t0 = 0, time.monotonic()
end = t0 + dur
nxt = t0
while True:
    now = time.monotonic()
    if now >= end or stop:
        break
    if now < nxt:
        time.sleep(min(nxt - now, 0.002))
        continue
    # catch up in bursts of at most 32 datagrams
    for _ in range(32):
        if nxt > now:
            break
        try:
            s.sendto(payload, (addr, %d))
            sent += 1
        except OSError:
            pass
        nxt += interval
print(sent, flush=True)
""" % FLOOD_PORT

_SINK = r"""
import socket, sys, signal
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind(("0.0.0.0", %d))
s.settimeout(0.2)
n = 0
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
signal.signal(signal.SIGINT, lambda *a: stop.append(1))
print("ready", flush=True)
while not stop:
    try:
        s.recv(65536)
        n += 1
    except (socket.timeout, InterruptedError):
        pass
print(n, flush=True)
""" % FLOOD_PORT


class _FloodRun:
    def __init__(self, net: HostNetwork, flood: Flood, duration_s: float):
        self.net, self.flood, self.duration_s = net, flood, duration_s
        self.result: dict = {}

    def _cmd(self, host: str, script: str, *args: str) -> list[str]:
        pin = ["taskset", "-c", str(self.flood.cpu)] if self.flood.cpu is not None else []
        return [*self.net.prefix(host), *pin, sys.executable, "-c", script, *args]

    def __enter__(self):
        f = self.flood
        if f.rx_cpu is not None:
            prefix = f"napi/{self.net.interface[f.dst]}"[:15]
            threads = [tid for tid, comm in kpath._kernel_threads("napi/") if comm.startswith(prefix)]
            if not threads:
                raise kpath.KernelPathUnavailable(f"no NAPI thread of {self.net.interface[f.dst]} to pin")
            for tid in threads:
                os.sched_setaffinity(tid, {f.rx_cpu})
        self.sink = subprocess.Popen(self._cmd(f.dst, _SINK), stdout=subprocess.PIPE, text=True)
        self.sink.stdout.readline()  # "ready"
        self.sender = subprocess.Popen(
            self._cmd(f.src, _SENDER, self.net.address[f.dst], str(f.rate_mbps), str(f.size),
                      str(self.duration_s)), stdout=subprocess.PIPE, text=True)
        return self

    def __exit__(self, *exc):
        if self.sender.poll() is None:
            self.sender.terminate()
        sent = self.sender.communicate()[0].strip()
        time.sleep(0.2)
        self.sink.terminate()
        got = self.sink.communicate()[0].strip().splitlines()
        try:
            s, r = int(sent), int(got[-1])
            self.result = {"sent": s, "received": r, "delivery_ratio": r / s if s else 0.0,
                           "rate_mbps": self.flood.rate_mbps, "size": self.flood.size}
        except (ValueError, IndexError):
            self.result = {"error": "flood counters unavailable"}


# the programs that run a model's processes (their threads are the model's own)
RUN_PROGRAMS = (b"chainrt-run", stock.BINARY.encode())


def host_of_processes(model) -> dict[str, str]:
    return {e.process: e.host for e in model.executors}


def _probe(tag: str, after_s: float, out: dict, selectors: list, done: threading.Event, rx=None,
           interfaces: tuple[str, ...] = ()) -> None:
    """Records, once the run is under way, the scheduling policy of every thread of the run's
    chainrt-run processes (DDS threads included), of the class kernel threads and, with a fixed
    receive path, of its kernel threads."""
    if done.wait(after_s):
        return
    procs = {}
    tids: set[int] = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if tag.encode() in cmd and any(c.endswith(RUN_PROGRAMS) for c in cmd[:1]):
            name = cmd[cmd.index(b"--process") + 1].decode() if b"--process" in cmd else d
            threads = {}
            try:
                for t in os.listdir(f"/proc/{d}/task"):
                    comm = Path(f"/proc/{d}/task/{t}/comm").read_text().strip()
                    threads[f"{comm}#{t}"] = kpath.thread_policy(int(t))
                    tids.add(int(t))
            except OSError:
                continue
            procs[name] = threads
    out["process_threads"] = procs
    out["selector_threads"] = [sel.selector_threads() for sel in selectors]
    out["class_threads"] = [
        {str(c): v for c, v in sel.class_threads().items()} for sel in selectors]
    if rx is not None:
        out["rx_threads"] = rx.threads()
    # the run's own threads: its processes' and its receive path's kernel threads (the hosts' NAPI
    # threads, the selector's class threads; not ksoftirqd, which serves the whole machine)
    tids.update(sel.pid for sel in selectors if sel.pid)  # the selector's handler (chainrt-xdp)
    napi = tuple(f"napi/{i}"[:15] for i in interfaces)
    tids.update(t for t, c in kpath._kernel_threads("napi/") if c.startswith(napi))
    tids.update(t["tid"] for per_host in out["class_threads"] for ts in per_host.values() for t in ts)
    out["model_tids"] = sorted(tids)


def run_on_hosts(model_path: str, duration_ns: int, *, kernel: bool = False,
                 server: tuple[int, int] | None = None, dds_priorities: bool = True,
                 flood: Flood | None = None, probe: bool = False, trace_dir: str | None = None,
                 rx_priority: int | None = None, nodes: str | None = None, **run_kwargs) -> dict:
    """Runs the model with each host in its own network namespace (see the module doc).

    Returns runtime.run_model's merged report plus ``"hosts"`` {host: address}, with ``kernel``
    ``"selector"`` [per host {"host", "classes", "ports", ...}], with ``flood`` ``"flood"``
    {"sent", "received", "delivery_ratio"}, with ``probe`` ``"threads"`` (policies seen mid-run, and
    ``"model_tids"``: the ids of the run's own threads — its processes', its receive path's kernel
    threads', the flood's).
    ``rx_priority``: the Preempt-RT-style receive path instead of the selector — every receive
    kernel thread (the hosts' NAPI threads, ksoftirqd) at this SCHED_FIFO priority for the run
    (kernel.FixedRxThreads); not with ``kernel``.
    ``trace_dir``: every process writes its dispatch trace (chainrt-run ``--trace``) to
    ``trace_dir/<process>.jsonl`` (times relative to that process's own start).
    ``nodes``: run the generated rclcpp nodes under this executor of chainrt.stock (``single``,
    ``multi``, ``static``, ``events``: rclcpp's own; ``chainrt``: the ChainExecutor with the
    model's policy), one program per process (stock.run_processes), instead of chainrt-run.
    Raises NetnsUnavailable / KernelPathUnavailable / fastdds.ProfileError / RuntimeError
    (stock.StockUnavailable / StockRunFailed among them)."""
    import signal

    def _interrupt(signum, frame):
        raise KeyboardInterrupt
    # SIGTERM unwinds like Ctrl-C, so the namespaces and the XDP programs are removed
    if kernel and rx_priority:
        raise ValueError("the fixed receive-path priority and the message selector exclude each other")
    old_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _run_on_hosts(model_path, duration_ns, kernel=kernel, server=server,
                             dds_priorities=dds_priorities and run_kwargs.get("thread_params", True),
                             flood=flood, probe=probe, trace_dir=trace_dir, rx_priority=rx_priority,
                             nodes=nodes, **run_kwargs)
    finally:
        signal.signal(signal.SIGTERM, old_term)


def _trace_prefix(prefix: list[str], path: Path) -> list[str]:
    """``prefix`` followed by a shell that runs the command with ``--trace path`` appended."""
    return [*prefix, "env", f"CHAINRT_TRACE_FILE={path}", "sh", "-c", 'exec "$@" --trace "$CHAINRT_TRACE_FILE"', "sh"]


def _run_on_hosts(model_path, duration_ns, *, kernel, server, dds_priorities, flood, probe, trace_dir=None,
                  rx_priority=None, nodes=None, **run_kwargs):
    model = run_kwargs.get("model")
    if model is None:  # (a caller that has it passes the loaded model: parsed once per command)
        model = run_kwargs["model"] = load_model(str(model_path))
    hosts_of = host_of_processes(model)
    hosts = [h.name for h in model.hosts if h.name in hosts_of.values()]
    env = runtime.ros_environment(runtime.find_binary())
    domain = int(env.get("ROS_DOMAIN_ID", "0") or 0)
    warmup_ns = run_kwargs.get("warmup_ns", 500_000_000)
    with HostNetwork(hosts) as net, tempfile.TemporaryDirectory(prefix="chainrt-dds-") as d:
        paths = fastdds.write_profiles(model, d, domain_id=domain, localhost_only=False,
                                       host_addresses=net.address, thread_priorities=dds_priorities)
        process_env = {p: {**fastdds.profile_environment(path), "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}
                       for p, path in paths.items()}
        process_prefix = {p: net.prefix(h) for p, h in hosts_of.items()}
        if trace_dir and not nodes:  # (the generated nodes take their trace file themselves)
            Path(trace_dir).mkdir(parents=True, exist_ok=True)
            process_prefix = {p: _trace_prefix(pre, Path(trace_dir).resolve() / f"{p}.jsonl")
                              for p, pre in process_prefix.items()}
        selectors: list[kpath.Selector] = []
        threads: dict = {}
        rx = None
        with contextlib.ExitStack() as stack:
            if rx_priority:
                rx = stack.enter_context(kpath.FixedRxThreads([net.interface[h] for h in hosts], rx_priority))
            if kernel:
                entries, class_prio = kpath.port_classes(model, domain)
                for h in hosts:
                    selectors.append(stack.enter_context(kpath.Selector(
                        [net.interface[h]], entries, class_prio, prefix=net.prefix(h), server=server)))
            fl = stack.enter_context(_FloodRun(net, flood, (duration_ns + warmup_ns) / 1e9 + 3)) if flood else None
            done = threading.Event()
            prober = None
            if probe:
                after = (warmup_ns + min(duration_ns / 2, 1e9)) / 1e9 + 1.0
                # the run's chainrt-run processes carry its run id on their command line
                run_kwargs.setdefault("run_id", runtime.new_run_id())
                prober = threading.Thread(target=_probe, args=(run_kwargs["run_id"], after, threads,
                                                               selectors, done, rx,
                                                               tuple(net.interface[h] for h in hosts)),
                                          daemon=True)
                prober.start()
            try:
                if nodes:
                    result = stock.run_processes(model_path, nodes, duration_ns, warmup_ns=warmup_ns,
                                                 thread_params=run_kwargs.get("thread_params", True),
                                                 run_id=run_kwargs.get("run_id"), process_env=process_env,
                                                 process_prefix=process_prefix, trace_dir=trace_dir)
                else:
                    result = runtime.run_model(model_path, duration_ns, process_env=process_env,
                                               process_prefix=process_prefix, **run_kwargs)
            finally:
                done.set()
                if prober:
                    prober.join()
        result["hosts"] = dict(net.address)
        if kernel:
            result["selector"] = [{"host": h, **(s.stats or {})} for h, s in zip(hosts, selectors)]
        if fl is not None:
            result["flood"] = fl.result
        if probe:
            # the threads the run's programs had while they ran (the mid-run look misses later ones)
            threads["model_tids"] = sorted({*threads.get("model_tids", []), *result.get("model_tids", [])})
            if fl is not None:  # the flood's sender and sink are the model's non-RT traffic
                threads.setdefault("model_tids", [])
                threads["model_tids"] = sorted({*threads["model_tids"], fl.sender.pid, fl.sink.pid})
            result["threads"] = threads
    return result
