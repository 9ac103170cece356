"""The platform's own interference, measured beside a run: the blackouts of each CPU.

CROS-RT's analysis assumes that a CPU is always there for the highest-priority ready thread. A
virtual machine breaks that: the hypervisor takes the CPU (steal), a long non-preemptible kernel
section runs, an interrupt storm is served — stalls of milliseconds that no chain of the model
causes. To bound response times on such a platform, chainrt measures the platform independently
of the chains and gives it to the analyses as the hosts' **blackout curve** (model
``hosts[].blackout``; a deviation from the papers, whose model has no platform; charged by
``edf-mt``, ``fp-mt``, ``picas-st`` and ``cros-rt``, docs/analysis.md "The platform term"):

* :class:`PlatformProbe` runs ``chainrt-platform-probe`` (``bpf/platform_probe.c``) on every
  CPU at SCHED_FIFO 99 during the run: a periodic thread above everything of the model, whose
  late wake-ups are the CPU's blackouts (intervals on CLOCK_MONOTONIC).
* :func:`widen`: the probe sees a blackout from the deadline it delayed on; the part before
  (at most one probe period) is added by widening each interval — both variants are reported.
* :func:`blackout` is the measured blackout function S(Δ): the most blackout time of one CPU in
  any window of length Δ during the run. The CPU supplies at least Δ − S(Δ) in every window of
  length Δ (a supply-bound function, sbf(Δ) = Δ − S(Δ)).
* :func:`curve` samples S at the windows of ``CURVE_WINDOWS_MS`` (the largest over the given
  CPUs, plus the probe's own time) as a model's blackout curve; the analyses take S between and
  beyond the samples from it (analysis/supply.hpp).
* Attribution (``bpf/platform_attrib.bpf.c``, with clang and libbpf): for every probe wake-up
  that waited, when the probe was woken, which task held the CPU until it ran, and how much of
  the wait the hypervisor took (the KVM steal clock). A late wake-up is the vCPU not running
  (hypervisor) or interrupts off; a wait after an on-time wake-up is a task that kept the CPU —
  on this kernel without full preemption, any task in kernel code (a system call, a network poll)
  keeps it until its next scheduling point — or the hypervisor stopping the vCPU meanwhile, or
  the real-time class throttled (``sched_rt_runtime_us``) by another process's real-time load.
  :func:`split` tells the platform's part of each blackout from the part the model's own threads
  held (its processes, its receive-path kernel threads): that part is the model's work.

The probe measures the platform, never the chain under test; a bound with the platform term is
therefore not fitted to the responses it is checked against.
"""

from __future__ import annotations

import bisect
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..runtime import tied_to_this_process
from .kernel import _cache_dir, BPF_DIR, build_bpf, KernelPathUnavailable

PROBE_PRIORITY = 99
PROBE_PERIOD_US = 500
PROBE_THRESHOLD_US = 150


def build_probe() -> Path:
    """Builds ``chainrt-platform-probe`` (when missing or older than its source); returns its path.
    Raises KernelPathUnavailable when no C compiler is found or the build fails."""
    src = BPF_DIR / "platform_probe.c"
    exe = _cache_dir() / "chainrt-platform-probe"
    if exe.is_file() and exe.stat().st_mtime >= src.stat().st_mtime:
        return exe
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise KernelPathUnavailable("the platform probe needs a C compiler (apt package gcc)")
    r = subprocess.run([cc, "-O2", "-Wall", "-o", str(exe), str(src)], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise KernelPathUnavailable(f"building the platform probe failed: {r.stderr.strip().splitlines()[-1:]}")
    return exe


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of (begin, end) intervals as sorted disjoint intervals."""
    out: list[list[int]] = []
    for b, e in sorted(intervals):
        if e <= b:
            continue
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return [(b, e) for b, e in out]


def overlap(intervals: list[tuple[int, int]], begin: int, end: int) -> int:
    """Total length of the (sorted, disjoint) intervals inside [begin, end]."""
    i = max(bisect.bisect_right(intervals, (begin, begin)) - 1, 0)
    total = 0
    while i < len(intervals) and intervals[i][0] < end:
        b, e = intervals[i]
        total += max(0, min(e, end) - max(b, begin))
        i += 1
    return total


def blackout(intervals: list[tuple[int, int]], delta: int) -> int:
    """S(Δ): the most blackout time (sorted, disjoint intervals) in any window of length Δ.
    A window that maximises it can be taken to start at some blackout's beginning."""
    if not intervals or delta <= 0:
        return 0
    begins = [b for b, _ in intervals]
    ends = [e for _, e in intervals]
    lengths = [0]
    for b, e in intervals:
        lengths.append(lengths[-1] + e - b)
    best = 0
    for i, (b, _) in enumerate(intervals):
        w_end = b + delta
        j = bisect.bisect_left(begins, w_end)  # intervals i .. j-1 begin inside the window
        total = lengths[j - 1] - lengths[i] + min(ends[j - 1], w_end) - begins[j - 1] if j - 1 > i else min(ends[i], w_end) - b
        best = max(best, total)
    return best


def clip(intervals: list[tuple[int, int]], begin: int, end: int) -> list[tuple[int, int]]:
    """The parts of the intervals inside [begin, end]."""
    return [(max(b, begin), min(e, end)) for b, e in intervals if e > begin and b < end]


def widen(intervals: list[tuple[int, int]], by_ns: int) -> list[tuple[int, int]]:
    """Every blackout extended by ``by_ns`` before its beginning (the probe's period: the part of
    a blackout before the deadline it delayed is not seen), merged. Covers every blackout
    longer than the probe's threshold plus its period, at the price of counting the probe's
    ordinary late wake-ups as a period of blackout each."""
    return merge([(b - by_ns, e) for b, e in intervals])


class PlatformProbe:
    """One probe per CPU for the lifetime of the context; ``blackouts`` {cpu: sorted disjoint
    (begin, end) intervals, CLOCK_MONOTONIC ns} and ``span`` {cpu: (start, end)} afterwards.
    Needs root (SCHED_FIFO 99); raises KernelPathUnavailable when the probe cannot run."""

    def __init__(self, duration_s: float, cpus: list[int] | None = None, attribute: bool = True):
        self.duration_s, self.attribute = duration_s, attribute
        # {cpu: sorted (switched, woken, holder tid, holder comm, stolen ns)}: who held the CPU when
        # a probe wake-up waited, and how much of the wait the hypervisor took (attribution);
        # ``attribution_error``: why there is none
        self.holds: dict[int, list[tuple[int, int, int, str, int]]] = {}
        self.attribution_error = "" if attribute else "not asked for"
        self._attrib = None
        self.cpus = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
        self.blackouts: dict[int, list[tuple[int, int]]] = {}
        self.period_ns = PROBE_PERIOD_US * 1000
        self.span: dict[int, tuple[int, int]] = {}
        self.dropped = 0
        # {cpu: the probe's own CPU time (ns, /proc/PID/schedstat)}: it runs above everything too
        self.cpu_ns: dict[int, int] = {}

    def __enter__(self):
        exe = build_probe()
        self._procs = []
        # Each probe (and the attribution) writes into an anonymous file it inherits (/dev/fd/N),
        # and ends with this process (CHAINRT_PARENT_PID): a killed chainrt leaves neither a file
        # nor a probe.
        self._env = tied_to_this_process(dict(os.environ))
        self._attrib_out = None
        try:
            for cpu in self.cpus:
                out = tempfile.TemporaryFile()
                self._procs.append((cpu, out, subprocess.Popen(
                    [str(exe), str(cpu), str(PROBE_PRIORITY), str(PROBE_PERIOD_US), str(PROBE_THRESHOLD_US),
                     str(self.duration_s), f"/dev/fd/{out.fileno()}"], stderr=subprocess.PIPE, text=True,
                    pass_fds=(out.fileno(),), env=self._env)))
            if self.attribute:
                self._start_attribution()
        except BaseException:
            self._stop_all()
            raise
        return self

    def _stop_all(self) -> None:
        for _, out, p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.close()
        if self._attrib is not None and self._attrib.poll() is None:
            self._attrib.kill()
            self._attrib.wait()
        if self._attrib_out is not None:
            self._attrib_out.close()

    @property
    def pids(self) -> set[int]:
        """The probe's own processes (one per CPU, and the attribution's)."""
        attrib = self._attrib.pid if self._attrib else getattr(self, "_attrib_pid", None)
        return {p.pid for _, _, p in getattr(self, "_procs", [])} | ({attrib} if attrib else set())

    def _start_attribution(self) -> None:
        import select
        try:
            obj, loader = build_bpf("platform_attrib.bpf.c", "platform_attrib.c", "chainrt-platform-attrib",
                                    "the platform attribution")
        except KernelPathUnavailable as e:
            self.attribution_error = str(e)
            return
        self._attrib_out = tempfile.TemporaryFile()
        self._attrib = subprocess.Popen([str(loader), str(obj), str(PROBE_THRESHOLD_US),
                                         f"/dev/fd/{self._attrib_out.fileno()}",
                                         *(str(p.pid) for _, _, p in self._procs)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        pass_fds=(self._attrib_out.fileno(),), env=self._env)
        ready, _, _ = select.select([self._attrib.stdout], [], [], 10)
        if not ready or self._attrib.stdout.readline().strip() != "ready":
            self._attrib.terminate()
            err = self._attrib.communicate(timeout=10)[1].strip()
            self.attribution_error = err or "the attribution did not start"
            self._attrib = None

    def _stop_attribution(self) -> None:
        a, self._attrib = self._attrib, None
        if a is None:
            return
        if a.poll() is None:
            a.terminate()
        err = a.communicate(timeout=10)[1].strip()
        self._attrib_out.seek(0)
        text = self._attrib_out.read().decode(errors="replace")
        if a.returncode != 0:
            self.attribution_error = err or f"the attribution exited with {a.returncode}"
            return
        for line in text.splitlines():
            f = line.split()
            if line.startswith("#") or len(f) != 6:
                continue
            self.holds.setdefault(int(f[2]), []).append((int(f[1]), int(f[0]), int(f[3]), f[4], int(f[5])))
        for v in self.holds.values():
            v.sort()
        self._attrib_pid = a.pid

    def __exit__(self, *exc):
        try:
            for cpu, _, p in self._procs:
                try:
                    self.cpu_ns[cpu] = int(Path(f"/proc/{p.pid}/schedstat").read_text().split()[0])
                except (OSError, ValueError, IndexError):
                    pass  # (already gone: its own time stays unknown, probe_cost says so)
                if p.poll() is None:
                    p.terminate()
            for _, _, p in self._procs:
                p.wait(timeout=10)
            self._stop_attribution()
            errors = []
            for cpu, out, p in self._procs:
                err = p.communicate(timeout=10)[1]
                out.seek(0)
                text = out.read().decode(errors="replace")
                if p.returncode != 0 or not text.strip():
                    errors.append(f"cpu {cpu}: {err.strip() or p.returncode}")
                    continue
                lines = text.splitlines()
                head = lines[0].split()
                fields = dict(zip(head[1::2], head[2::2]))
                self.span[cpu] = (int(fields["start_ns"]), int(fields["end_ns"]))
                self.dropped += int(fields.get("dropped", 0))
                self.period_ns = int(fields["period_ns"])
                self.blackouts[cpu] = merge([tuple(map(int, ln.split())) for ln in lines[1:] if ln.strip()])
            if errors and exc[0] is None:
                raise KernelPathUnavailable("the platform probe failed: " + "; ".join(errors))
        finally:
            self._stop_all()


# The windows of a blackout curve (model hosts[].blackout), in ms: dense where chains' responses
# lie, up to 2 s; longer windows follow from sub-additivity (analysis/supply.hpp).
CURVE_WINDOWS_MS = (0.25, 0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000)


def probe_cost(probe: "PlatformProbe") -> int | None:
    """The probe's mean CPU time per wake-up (ns) on its busiest CPU, or None when unknown."""
    costs = []
    for cpu, (start, end) in probe.span.items():
        wakes = max(1, (end - start) // probe.period_ns)
        if cpu not in probe.cpu_ns:
            return None
        costs.append(-(-probe.cpu_ns[cpu] // wakes))
    return max(costs) if costs else None


def curve(blackouts: list[list[tuple[int, int]]], probe_period_ns: int = 0, probe_cost_ns: int = 0,
          windows_ms=CURVE_WINDOWS_MS) -> list[tuple[int, int]]:
    """A host's blackout curve [(window ns, max ns)] for the model (hosts[].blackout): at each
    window Δ the largest S(Δ) of the given CPUs' blackouts (one list of sorted disjoint intervals
    per CPU and run), plus the probe's own time, which the model does not contain either: at
    most ⌈Δ/P⌉ + 1 wake-ups of ``probe_cost_ns`` (its mean per wake-up) in a window Δ. Never
    above Δ; non-decreasing by construction."""
    out = []
    for w_ms in windows_ms:
        w = int(w_ms * 1_000_000)
        s = max((blackout(iv, w) for iv in blackouts), default=0)
        if probe_period_ns > 0:
            s += (-(-w // probe_period_ns) + 1) * probe_cost_ns
        s = min(w, max(s, out[-1][1] if out else 0))
        out.append((w, s))
    return out


def holder(holds: list[tuple], begin: int, end: int) -> tuple[int, int, str, int] | None:
    """(woken, tid, comm, stolen ns) of the wait that ended the blackout [begin, end] of one CPU:
    the attribution's last switch to the probe inside it (the probe reads its clock just after
    it gets the CPU); None when there is none (the probe was woken late: nothing held the CPU)."""
    i = bisect.bisect_right(holds, (end + 20_000,)) - 1
    if i >= 0 and holds[i][0] >= begin:
        h = holds[i]
        return h[1], h[2], h[3], (h[4] if len(h) > 4 else 0)
    return None


def split(blackouts: list[tuple[int, int]], holds: list[tuple], model_tids: set[int],
          threshold_ns: int = PROBE_THRESHOLD_US * 1000) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[dict]]:
    """One CPU's blackouts (sorted, disjoint) as (the platform's parts, the model's parts,
    details). A blackout is the platform's unless its holder (:func:`holder`) is one of
    ``model_tids`` (the model's own threads); then the part from the probe's wake-up on, less
    what the hypervisor took meanwhile (the steal clock's advance), was the model's — taken as
    the blackout's end —, the rest the platform's (the probe's timer late, the hypervisor) when
    that rest is ``threshold_ns`` (the probe's threshold) or more, else the model's too: a
    timer that fires a few µs late is every wake-up's latency, which the probe reports as a
    blackout only above its threshold; had the model's thread not held the CPU, there would have
    been no blackout (a run of reservations that keep the CPU most of the time would otherwise
    leave such a sliver in nearly every busy window).
    Details per blackout: {"begin", "end", "late_ns" (timer late), "held_ns", "stolen_ns",
    "holder", "model"}."""
    plat, model, info = [], [], []
    for b, e in blackouts:
        h = holder(holds, b, e)
        woken = min(e, max(b, h[0])) if h else e
        stolen = min(h[3], e - woken) if h else 0
        ours = bool(h) and h[1] in model_tids and e - woken > stolen
        if ours:
            cut = e - (e - woken - stolen)
            if cut - b >= threshold_ns:
                plat.append((b, cut))
            else:
                cut = b
            model.append((cut, e))
        else:
            plat.append((b, e))
        info.append({"begin": b, "end": e, "late_ns": woken - b, "held_ns": e - woken, "stolen_ns": stolen,
                     "holder": h[2] if h else "", "model": ours})
    return plat, model, info
