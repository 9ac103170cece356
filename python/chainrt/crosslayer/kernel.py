"""The kernel part of CROS-RT (C1-C4) on an unmodified kernel: XDP + cpumap + thread policies.

* **C1** :func:`port_classes` turns the model's known participant ports (chainrt.fastdds) into
  the (UDP port -> class, CPU) map the XDP program reads; :class:`Selector` installs it and
  removes it when it ends (one process, ``chainrt-xdp``, owns the map and the XDP links: when it
  exits, however it exits, the kernel detaches and frees them).
* **C2** the message selector (``bpf/crosslayer.bpf.c``): classifies every UDP packet arriving
  on a host's interface and redirects it to its class's cpumap: one queue and one kernel thread
  per class and CPU, so non-RT packets are never processed in the RT class's thread.
* **C3** the RT handler: each RT class's kernel threads run at the class's SCHED_FIFO priority
  (the executor priority of the participants it serves), re-applied every handler period; the
  interface's NAPI threads, where the selector runs, go above every class (the paper's kmond:
  they only classify and enqueue, the stack work is done in the class threads).
* **C4** the non-RT handler: class 0's threads run as a polling server (budget Q every period
  T): the handler raises them just above the highest RT class for Q of every T and drops them
  to SCHED_OTHER for the rest — or keeps them at SCHED_OTHER, below every real-time thread, when
  no server is given. Deviation: SCHED_DEADLINE would be the natural server, but the kernel
  refuses it for cpumap threads (EPERM: a deadline task's affinity must span its root domain and
  these threads are bound to one CPU), so the server is realised by priority switching, which
  bounds the RT interference by Q per T just the same (plus two syscalls per period).

The Preempt-RT-style baseline the paper compares against — every receive-path kernel thread at one
fixed real-time priority, no selector — is :class:`FixedRxThreads`.

Classes: 0 = non-RT (participants without a real-time priority, and every other UDP port);
real-time priorities in descending order get classes 1, 2, 3 (a fourth and lower distinct
priorities share class 3, whose threads then run at the highest of them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import fastdds

REPO = Path(__file__).resolve().parents[3]
BPF_DIR = REPO / "bpf"
RT_CLASSES = 3


class KernelPathUnavailable(RuntimeError):
    """The BPF part cannot be built or loaded here (no clang/libbpf, no privilege, ...)."""


@dataclass(frozen=True)
class PortClass:
    port: int
    cls: int
    cpu: int  # -1: the receiving CPU


def port_classes(model, domain_id: int = 0) -> tuple[list[PortClass], dict[int, int]]:
    """C1: (the port entries, {class: SCHED_FIFO priority of its threads}) for the model's
    participants. The CPU of a port is the first core its executor is pinned to (-1: none)."""
    parts = fastdds.participants(model, domain_id)
    prios = sorted({p.priority for p in parts if p.priority}, reverse=True)
    cls_of = {prio: min(i + 1, RT_CLASSES) for i, prio in enumerate(prios)}
    class_prio: dict[int, int] = {}
    entries = []
    for p in parts:
        cls = cls_of.get(p.priority, 0) if p.priority else 0
        if cls:
            class_prio[cls] = max(class_prio.get(cls, 0), p.priority)
        cpu = (p.affinity & -p.affinity).bit_length() - 1 if p.affinity else -1
        entries += [PortClass(port, cls, cpu) for port in p.ports]
    return entries, class_prio


def _cache_dir() -> Path:
    for d in (REPO / "build" / "bpf", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "chainrt" / "bpf"):
        try:
            d.mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    return Path(tempfile.mkdtemp(prefix="chainrt-bpf-"))


def build() -> tuple[Path, Path]:
    """Builds (when missing or older than its source) the XDP object and the ``chainrt-xdp``
    loader with clang and libbpf; returns (object, loader). Raises KernelPathUnavailable."""
    return build_bpf("crosslayer.bpf.c", "crosslayer_loader.c", "chainrt-xdp", "the kernel part")


def build_bpf(program: str, loader_src: str, loader_name: str, what: str) -> tuple[Path, Path]:
    """Builds (when missing or older than its source) ``bpf/<program>`` into a BPF object and
    ``bpf/<loader_src>`` into the libbpf loader ``loader_name``, in the build cache; returns
    (object, loader). ``what`` names the part in the errors. Raises KernelPathUnavailable."""
    src_prog, src_loader = BPF_DIR / program, BPF_DIR / loader_src
    out = _cache_dir()
    obj, loader = out / program.replace(".c", ".o"), out / loader_name
    clang = shutil.which("clang")
    cc = shutil.which("cc") or shutil.which("gcc") or clang
    if not clang:
        raise KernelPathUnavailable(f"{what} needs clang to build its BPF program (apt package clang)")
    if not Path("/usr/include/bpf/libbpf.h").is_file():
        raise KernelPathUnavailable(f"{what} needs libbpf (apt package libbpf-dev)")
    multiarch = subprocess.run([cc, "-print-multiarch"], capture_output=True, text=True, check=False).stdout.strip()
    steps = [
        (obj, src_prog, [clang, "-O2", "-g", "-target", "bpf", "-Wall"]
         + ([f"-I/usr/include/{multiarch}"] if multiarch else []) + ["-c", str(src_prog), "-o", str(obj)]),
        (loader, src_loader, [cc, "-O2", "-Wall", "-o", str(loader), str(src_loader), "-lbpf"]),
    ]
    for target, src, cmd in steps:
        if target.is_file() and target.stat().st_mtime >= src.stat().st_mtime:
            continue
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise KernelPathUnavailable(f"building {target.name} failed: {r.stderr.strip().splitlines()[-1:]}")
    return obj, loader


class Selector:
    """C1-C4 on the interfaces of one network namespace, for the lifetime of the context.

    ``prefix``: the command prefix entering the namespace (``ip netns exec NS``; [] = here).
    ``server``: (budget_ns, period_ns) of the non-RT handler's SCHED_DEADLINE server, or None
    (non-RT class threads at SCHED_OTHER). ``stats`` (after exit): the counters
    {"classes": [class 0, 1, 2, 3, unclassified], "ports": {port: packets}, "class_threads": ...}.
    """

    def __init__(self, interfaces: list[str], entries: list[PortClass], class_prio: dict[int, int],
                 prefix: list[str] | None = None, server: tuple[int, int] | None = None,
                 period_ms: int = 100):
        self.interfaces, self.entries, self.class_prio = interfaces, entries, class_prio
        self.prefix, self.server, self.period_ms = list(prefix or []), server, period_ms
        self.stats: dict | None = None
        self.map_ids: dict[int, int] = {}  # class -> its cpumap's id (names its kernel threads)
        self._proc: subprocess.Popen | None = None
        self._dir: tempfile.TemporaryDirectory | None = None

    def command(self, obj: Path, loader: Path, stats: Path, ready: Path) -> list[str]:
        cmd = [*self.prefix, str(loader), str(obj)]
        for i in self.interfaces:
            cmd += ["--iface", i]
        for e in self.entries:
            cmd += ["--port", f"{e.port}:{e.cls}:{e.cpu}"]
        for cls, prio in sorted(self.class_prio.items()):
            cmd += ["--class", f"{cls}:fifo:{prio}"]
        if self.server:
            # the non-RT server runs above every RT class thread while its budget lasts
            top = max(self.class_prio.values(), default=0)
            cmd += ["--class", f"0:server:{int(self.server[0])}:{int(self.server[1])}",
                    "--server-priority", str(min(99, top + 1) if top else 1)]
        else:
            cmd += ["--class", "0:other"]
        return cmd + ["--stats", str(stats), "--ready", str(ready), "--period-ms", str(self.period_ms)]

    def __enter__(self) -> "Selector":
        if os.geteuid() != 0:
            raise KernelPathUnavailable("the kernel part (XDP, cpumap, kernel thread policies) needs root")
        obj, loader = build()
        self._dir = tempfile.TemporaryDirectory(prefix="chainrt-xdp-")
        d = Path(self._dir.name)
        self._stats, ready = d / "stats.json", d / "ready"
        self._proc = subprocess.Popen(self.command(obj, loader, self._stats, ready),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while not ready.exists():
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().strip() if self._proc.stderr else ""
                self._cleanup()
                raise KernelPathUnavailable(err or f"chainrt-xdp exited with {self._proc.returncode}")
            if time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise KernelPathUnavailable("chainrt-xdp did not start within 10 s")
            time.sleep(0.02)
        self._raise_selector_threads()
        self.map_ids = {}
        for line in ready.read_text().splitlines()[1:]:
            f = line.split()
            if len(f) == 4 and f[0] == "class" and f[2] == "map":
                self.map_ids[int(f[1])] = int(f[3])
        return self

    @property
    def pid(self) -> int | None:
        """The process id of the handler (``chainrt-xdp``) while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def selector_priority(self) -> int:
        """The priority of the threads that run the XDP selector (the NAPI threads of the
        interfaces): above every class, as the paper's kmond — they only classify and enqueue."""
        return min(99, max(self.class_prio.values(), default=0) + 2)

    def _raise_selector_threads(self) -> None:
        prefixes = [f"napi/{i}"[:15] for i in self.interfaces]
        for tid, comm in _kernel_threads("napi/"):
            if any(comm.startswith(p) for p in prefixes):
                try:
                    os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(self.selector_priority()))
                except OSError:
                    pass

    def selector_threads(self) -> list[dict]:
        """Live: the NAPI threads of the interfaces (where the XDP selector runs) and their policy."""
        prefixes = [f"napi/{i}"[:15] for i in self.interfaces]
        return [{"tid": t, "thread": c, **thread_policy(t)} for t, c in _kernel_threads("napi/")
                if any(c.startswith(p) for p in prefixes)]

    def class_threads(self) -> dict[int, list[dict]]:
        """Live: {class: [{"tid", "thread", "policy", "priority"}]} of the class kernel threads
        (``cpumap/<cpu>/map:<id>``) of the classes in use."""
        used = {0, *self.class_prio}
        ids = {str(mid): cls for cls, mid in self.map_ids.items() if cls in used}
        out: dict[int, list[dict]] = {}
        for tid, comm in _kernel_threads("cpumap/"):
            mid = comm.rsplit("map:", 1)[-1]
            if mid in ids:
                out.setdefault(ids[mid], []).append({"tid": tid, "thread": comm, **thread_policy(tid)})
        return out

    def __exit__(self, *exc) -> None:
        p = self._proc
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p is not None and self._stats.is_file():
            try:
                self.stats = json.loads(self._stats.read_text())
            except ValueError:
                self.stats = None
        self._cleanup()

    def _cleanup(self) -> None:
        if self._proc is not None and self._proc.stderr:
            self._proc.stderr.close()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def _kernel_threads(prefix: str) -> list[tuple[int, str]]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            comm = Path(f"/proc/{d}/comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith(prefix):
            out.append((int(d), comm))
    return out


POLICIES = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}

#: PREEMPT_RT runs threaded interrupt handlers at SCHED_FIFO 50 (MAX_RT_PRIO / 2): the fixed
#: priority of the Preempt-RT-style receive path unless another is asked for.
PREEMPT_RT_PRIORITY = 50
SOFTIRQ_THREADS = "ksoftirqd/"


def _state_dir() -> Path:
    return Path(os.environ.get("CHAINRT_STATE_DIR", "/run/chainrt"))


def _set_policy(tid: int, policy: int, priority: int) -> None:
    os.sched_setscheduler(tid, policy, os.sched_param(priority))


def _get_policy(tid: int) -> tuple[int, int]:
    return os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority


class FixedRxThreads:
    """The Preempt-RT-style receive path, CROS-RT's "fixed kernel-thread priority" baseline
    (the paper's Preempt-RT: a static priority on ksoftirqd), on this unmodified kernel: every
    kernel thread of the receive path — the NAPI threads of ``interfaces`` (where a threaded-NAPI
    interface does its whole receive processing: GRO, IP, UDP, delivery to the socket) and every
    CPU's ksoftirqd (softirq work deferred from interrupt exits) — at one SCHED_FIFO
    ``priority``, the same for every packet whatever chain it serves. There is no selector: the
    packets of every chain and of the non-RT traffic share these threads in arrival order.

    For the lifetime of the context. The ksoftirqd threads are the machine's: their policies are
    recorded in a state file (``/run/chainrt/rx-threads.<pid>.json``) before they change and
    restored on exit, and ``chainrt crosslayer --cleanup`` restores them after a chainrt that
    could not (killed). The NAPI threads go with their interfaces' namespaces.
    ``threads``/``set_policy``/``get_policy``: the kernel-thread lister and the scheduler calls
    (replaced in tests). Raises KernelPathUnavailable when a thread's policy cannot be set."""

    def __init__(self, interfaces: list[str], priority: int = PREEMPT_RT_PRIORITY, *,
                 threads=None, set_policy=None, get_policy=None):
        if not 1 <= int(priority) <= 99:
            raise ValueError(f"receive-path priority {priority}: want 1..99")
        self.interfaces, self.priority = list(interfaces), int(priority)
        self._list = threads or _kernel_threads
        self._set = set_policy or _set_policy
        self._get = get_policy or _get_policy
        self.saved: dict[int, tuple[str, int, int]] = {}  # tid -> (comm, policy, priority) before
        self._state: Path | None = None

    def _napi_prefixes(self) -> list[str]:
        return [f"napi/{i}"[:15] for i in self.interfaces]

    def receive_threads(self) -> list[tuple[int, str]]:
        """(tid, comm) of the receive path's kernel threads: the interfaces' NAPI threads, then
        every ksoftirqd."""
        pre = self._napi_prefixes()
        napi = [(t, c) for t, c in self._list("napi/") if any(c.startswith(p) for p in pre)]
        return sorted(napi) + sorted(self._list(SOFTIRQ_THREADS))

    def __enter__(self) -> "FixedRxThreads":
        found = self.receive_threads()
        if not any(c.startswith("napi/") for _, c in found) and self.interfaces:
            raise KernelPathUnavailable(f"no NAPI thread of {', '.join(self.interfaces)} "
                                        "(threaded NAPI is off)")
        for tid, comm in found:
            if comm.startswith(SOFTIRQ_THREADS):
                try:
                    self.saved[tid] = (comm, *self._get(tid))
                except OSError:
                    continue
        self._write_state()
        try:
            for tid, comm in found:
                try:
                    self._set(tid, os.SCHED_FIFO, self.priority)
                except ProcessLookupError:
                    continue
                except OSError as e:
                    raise KernelPathUnavailable(f"cannot give {comm} SCHED_FIFO {self.priority}: {e.strerror}") from None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _write_state(self) -> None:
        if not self.saved:
            return
        try:
            d = _state_dir()
            d.mkdir(parents=True, exist_ok=True)
            self._state = d / f"rx-threads.{os.getpid()}.json"
            self._state.write_text(json.dumps({"pid": os.getpid(), "priority": self.priority, "threads": {
                str(t): list(v) for t, v in self.saved.items()}}))
        except OSError:
            self._state = None  # (restored on exit all the same; only a kill -9 would leave them)

    def threads(self) -> list[dict]:
        """Live: the receive path's kernel threads and their policy."""
        return [{"tid": t, "thread": c, **thread_policy(t)} for t, c in self.receive_threads()]

    def __exit__(self, *exc) -> None:
        for tid, (comm, policy, prio) in self.saved.items():
            try:
                self._set(tid, policy, prio)
            except OSError:
                pass
        self.saved = {}
        if self._state is not None:
            self._state.unlink(missing_ok=True)
            self._state = None


def restore_stale_rx_threads() -> list[str]:
    """Gives the ksoftirqd threads back the policies a killed chainrt's FixedRxThreads recorded
    (state files of processes that no longer run); returns the threads restored. A thread is
    left alone unless it still runs at the priority that chainrt gave it."""
    done = []
    d = _state_dir()
    for f in sorted(d.glob("rx-threads.*.json")) if d.is_dir() else []:
        try:
            st = json.loads(f.read_text())
            pid, prio = int(st["pid"]), int(st["priority"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if os.path.exists(f"/proc/{pid}"):
            continue
        for tid, (comm, policy, old) in st.get("threads", {}).items():
            try:
                if Path(f"/proc/{tid}/comm").read_text().strip() != comm or _get_policy(int(tid)) != (os.SCHED_FIFO, prio):
                    continue
                _set_policy(int(tid), int(policy), int(old))
                done.append(comm)
            except (OSError, ValueError):
                continue
        f.unlink(missing_ok=True)
    return done


def thread_policy(tid: int) -> dict:
    """{"policy": "fifo"|"deadline"|"other"|..., "priority": rt priority} of a thread."""
    try:
        pol = os.sched_getscheduler(tid)
        prio = os.sched_getparam(tid).sched_priority
    except OSError:
        return {"policy": "gone", "priority": 0}
    return {"policy": POLICIES.get(pol, str(pol)), "priority": prio}
