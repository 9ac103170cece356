"""The verdict of a real run: does reality agree with the model? (``chainrt run``, ``chainrt bench``)

A chain is flagged when its measured WCRT exceeds

* its analysis bound (the bound is meant to be safe: exceeding it means the model does not
  describe what ran, or the run was not under the model's assumptions), or
* its simulated worst case (the simulator runs the model's WCETs without OS noise; a real run
  above it spent time the model does not contain: communication, preemption, other load).

For each flagged chain the likely causes are given only when they were measured during the run:

* the model understates execution times: a callback's measured CPU time per instance (the
  executor's own records) exceeded its WCET in the model by more than 10 %, and the overruns add
  up to at least a tenth of the chain's excess over the bound (or the simulation);
* no real-time priority: the executor threads ran under SCHED_OTHER (the model and the command
  line gave them no SCHED_FIFO priority or SCHED_DEADLINE reservation), or setting it failed
  (the runtime's warnings);
* the machine was busy: from /proc/stat over the run, the CPU time of other processes
  (machine busy time minus the run's own callbacks' CPU time), the hypervisor's steal time, and
  the kernel's CPU pressure stall information (/proc/pressure/cpu) when available;
* preemption: a callback's wall time per instance exceeded its CPU time by much (it waited for
  the CPU while running).

``start_warnings`` says before a run when real-time scheduling is not available (a probe that
sets SCHED_FIFO on a short-lived thread and restores it).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from . import output
from .accounting import CAUSES, OVERRUN_RATIO, cause_text
from .model import load_model

BUSY_OTHER_SHARE = 0.20     # other processes used > 20 % of the machine: "busy"
PSI_SHARE = 0.10            # some task waited for a CPU > 10 % of the time
STEAL_SHARE = 0.02          # the hypervisor took > 2 % of the CPU time
PREEMPTED_RATIO = 1.5       # wall time > 1.5 x CPU time (and 1 ms more) for one instance
EXPLAINS_SHARE = 0.10       # ... named as a cause when the overruns add up to >= 10 % of the excess


# --------------------------------------------------------------------------- the machine

@dataclass
class Snapshot:
    """Counters of the machine at one instant."""
    t: float
    cpu: list[int]                 # /proc/stat "cpu" line: user nice system idle iowait irq softirq steal
    psi_some_us: int | None        # /proc/pressure/cpu "some total" (microseconds)

    @classmethod
    def take(cls) -> "Snapshot":
        cpu = []
        try:
            with open("/proc/stat") as f:
                for line in f:
                    if line.startswith("cpu "):
                        cpu = [int(x) for x in line.split()[1:9]]
                        break
        except OSError:
            pass
        psi = None
        try:
            with open("/proc/pressure/cpu") as f:
                for line in f:
                    if line.startswith("some"):
                        psi = int(line.rsplit("total=", 1)[1])
        except (OSError, ValueError, IndexError):
            pass
        return cls(time.monotonic(), cpu, psi)


def machine_load(before: Snapshot, after: Snapshot, own_cpu_ns: int = 0) -> dict:
    """Shares over the interval: busy (all CPUs), other (busy minus the run's own CPU time),
    steal, psi_some (fraction of wall time some task waited for a CPU). None when unknown."""
    out = {"busy": None, "other": None, "steal": None, "psi_some": None,
           "seconds": after.t - before.t, "cpus": os.cpu_count() or 1}
    if len(before.cpu) == 8 and len(after.cpu) == 8:
        d = [a - b for a, b in zip(after.cpu, before.cpu)]
        total = sum(d)
        if total > 0:
            idle = d[3] + d[4]
            out["busy"] = (total - idle - d[7]) / total
            out["steal"] = d[7] / total
            hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
            total_ns = total * 1e9 / hz
            out["other"] = max(0.0, out["busy"] - own_cpu_ns / total_ns)
    if before.psi_some_us is not None and after.psi_some_us is not None and after.t > before.t:
        out["psi_some"] = (after.psi_some_us - before.psi_some_us) / 1e6 / (after.t - before.t)
    return out


def rt_available() -> tuple[bool, str]:
    """Can this process give a thread SCHED_FIFO? Probed on a short-lived thread."""
    if not hasattr(os, "sched_setscheduler"):
        return False, "this platform has no SCHED_FIFO"
    box = {}

    def probe():
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            box["ok"] = True
        except OSError as e:
            box["why"] = e.strerror or str(e)
    th = threading.Thread(target=probe)
    th.start()
    th.join()
    if box.get("ok"):
        return True, ""
    return False, (f"SCHED_FIFO cannot be set here ({box.get('why', 'unknown error')}; needs root, "
                   "CAP_SYS_NICE or an rtprio limit)")


def model_asks_rt(model) -> bool:
    """Does any executor thread of the model have a SCHED_FIFO priority (its own or its
    executor's: Executor.thread_fifo_priority, the executors' rule) or a reservation? The
    threads of a validated model include its thread classes' threads."""
    return any(t.reservation is not None or e.thread_fifo_priority(t) is not None
               for e in model.executors for t in e.threads)


def start_warnings(model, fifo: int | None = None, thread_params: bool = True, probe=rt_available,
                   how: str = "--fifo PRIO") -> list[str]:
    """Warnings to show before a run about its real-time conditions (``how``: the option that
    gives the threads a priority)."""
    out = []
    ok, why = probe()
    wants = (thread_params and model is not None and model_asks_rt(model)) or bool(fifo)
    if not ok:
        out.append(f"real-time scheduling is not available: {why}; the executor threads will run under "
                   "SCHED_OTHER and measured response times can exceed the analysis bounds")
    elif not wants and model is None:
        out.append(f"no real-time priority asked for every executor thread ({how} sets one): threads "
                   "without one share the CPU with other processes")
    elif not wants:
        out.append(f"no executor thread has a real-time priority (the model gives none; {how} sets one): "
                   "other processes can delay the chains")
    return out


# --------------------------------------------------------------------------- the verdict

@dataclass
class Finding:
    chain: str
    measured_wcrt_ns: int
    instances: int
    deadline_ns: int | None = None
    deadline_misses: int = 0
    bound_ns: int | None = None
    simulated_wcrt_ns: int | None = None
    exceeds_bound: bool = False
    exceeds_simulation: bool = False
    causes: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = []
        if self.exceeds_bound:
            parts.append(f"measured WCRT {output.ms(self.measured_wcrt_ns)} ms exceeds the analysis bound "
                         f"{output.ms(self.bound_ns)} ms ({self.measured_wcrt_ns / self.bound_ns:.1f}x)")
        if self.exceeds_simulation:
            parts.append(("" if self.exceeds_bound else f"measured WCRT {output.ms(self.measured_wcrt_ns)} ms ")
                         + f"exceeds the simulated worst case {output.ms(self.simulated_wcrt_ns)} ms")
        if self.deadline_misses:
            parts.append(f"{self.deadline_misses} deadline miss(es) in {self.instances} instance(s)"
                         + (f" (deadline {output.ms(self.deadline_ns)} ms)" if self.deadline_ns else ""))
        why = ("; likely cause: " + "; ".join(self.causes)) if self.causes else \
            "; cause not identified from the measurements"
        return f"chain '{self.chain}': " + ", ".join(parts) + why


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    load: dict = field(default_factory=dict)

    @property
    def negative(self) -> bool:
        """A miss: a bound exceeded or a deadline missed (what --fail-on-miss acts on)."""
        return any(f.exceeds_bound or f.deadline_misses for f in self.findings)

    def lines(self) -> list[str]:
        return [f.text() for f in self.findings]

    def to_json(self) -> dict:
        return {"negative": self.negative, "load": self.load,
                "findings": [dict(f.__dict__, text=f.text()) for f in self.findings]}


def _model_wcets(model) -> dict:
    return {cb.name: cb.wcet for cb in getattr(model, "callbacks", [])} if model is not None else {}


def chain_callbacks(model, chain: str) -> list[str]:
    """The callbacks of `chain` in `model` ([] when it has none)."""
    for c in getattr(model, "chains", []) if model is not None else []:
        if c.name == chain:
            return list(c.callbacks)
    return []


def judge(result: dict, bound: dict | None = None, simulated: dict | None = None, model=None,
          load: dict | None = None, fifo: int | None = None, thread_params: bool = True) -> Verdict:
    """The verdict of a run. ``result``: the run's report (chains, callbacks, warnings);
    ``bound``: the analysis result ({"chains": {NAME: {"wcrt_bound_ns"}}}); ``simulated``: the
    simulator's per-chain result ({NAME: {"wcrt_ns"}}); ``load``: :func:`machine_load` of the run."""
    v = Verdict(load=load or {})
    wcet = _model_wcets(model)
    cbs = result.get("callbacks", {}) or {}
    rt_failed = [w for w in result.get("warnings", []) if any(k in w for k in ("SCHED_FIFO", "SCHED_DEADLINE",
                                                                              "priority", "reservation"))]
    asked_rt = bool(fifo) or (thread_params and model is not None and model_asks_rt(model))
    for name, c in (result.get("chains") or {}).items():
        if not c.get("instances"):
            continue
        b = ((bound or {}).get("chains", {}).get(name) or {}).get("wcrt_bound_ns") if bound else None
        s = ((simulated or {}).get(name) or {}).get("wcrt_ns") if simulated else None
        f = Finding(name, int(c["wcrt_ns"]), int(c["instances"]), c.get("deadline_ns"),
                    int(c.get("deadline_misses", 0)), b, s)
        f.exceeds_bound = b is not None and f.measured_wcrt_ns > b
        f.exceeds_simulation = s is not None and s > 0 and f.measured_wcrt_ns > s
        if not (f.exceeds_bound or f.exceeds_simulation or f.deadline_misses):
            continue
        ref = [x for x in (b if f.exceeds_bound else None, s if f.exceeds_simulation else None) if x]
        excess = f.measured_wcrt_ns - min(ref) if ref else None
        f.causes = _causes(name, model, cbs, wcet, asked_rt, rt_failed, v.load, excess)
        v.findings.append(f)
    return v


def _causes(chain, model, cbs, wcet, asked_rt, rt_failed, load, excess=None) -> list[str]:
    out = []
    members = chain_callbacks(model, chain)
    # the callbacks of the chain first, then any other (blocking by a callback outside the chain)
    over, extra = [], 0
    for cb in members + [n for n in cbs if n not in members]:
        st = cbs.get(cb)
        if st and cb in wcet and st.get("cpu_max_ns", 0) > OVERRUN_RATIO * wcet[cb]:
            extra += st["cpu_max_ns"] - wcet[cb]
            over.append(f"{cb} used up to {output.ms(st['cpu_max_ns'])} ms of CPU per instance, its WCET in the model "
                        f"is {output.ms(wcet[cb])} ms")
    # an overrun is a likely cause only when it accounts for a tenth of the excess or more
    if over and (excess is None or extra >= EXPLAINS_SHARE * excess):
        out.append("the model understates execution times (" + "; ".join(over[:3]) +
                   (f"; and {len(over) - 3} more" if len(over) > 3 else "") + ")")
    if rt_failed:
        out.append("real-time scheduling could not be applied (" + rt_failed[0] + ")")
    elif not asked_rt:
        out.append("no real-time priority: the executor threads ran under SCHED_OTHER (the model gives no "
                   "priority; --fifo PRIO sets one)")
    if load:
        bits = []
        if load.get("other") is not None and load["other"] > BUSY_OTHER_SHARE:
            bits.append(f"other processes used {load['other'] * 100:.0f} % of the machine's "
                        f"{load.get('cpus', '?')} CPUs during the run")
        if load.get("psi_some") is not None and load["psi_some"] > PSI_SHARE:
            bits.append(f"tasks waited for a CPU {load['psi_some'] * 100:.0f} % of the time (CPU pressure)")
        if load.get("steal") is not None and load["steal"] > STEAL_SHARE:
            bits.append(f"the hypervisor took {load['steal'] * 100:.0f} % of the CPU time (steal)")
        if bits:
            out.append("the machine was busy: " + ", ".join(bits))
    pre = []
    for cb in members:
        st = cbs.get(cb)
        if st and lost_cpu(st):
            pre.append(f"{cb} took up to {output.ms(st['wall_max_ns'])} ms of wall time for at most "
                       f"{output.ms(st['cpu_max_ns'])} ms of CPU")
    if pre:
        out.append("preempted while running (" + "; ".join(pre[:2]) + ")")
    return out


def lost_cpu(stats: dict) -> bool:
    """A callback lost the CPU while running (the preemption rule above) in some instance:
    its largest wall time exceeds PREEMPTED_RATIO x its largest CPU time, and 1 ms more."""
    return stats.get("wall_max_ns", 0) > PREEMPTED_RATIO * stats.get("cpu_max_ns", 0) + 1_000_000


def own_cpu_ns(result: dict) -> int:
    """CPU time of the run's callbacks (the part of the machine's load that is the run itself)."""
    return sum(int(c.get("cpu_total_ns", 0)) for c in (result.get("callbacks") or {}).values())


def bench_findings(result: dict) -> list[str]:
    """The verdict lines of a reference-system benchmark: per configuration, the measured worst
    hot-path / planner response time against the analysis bound and the simulated worst case."""
    lines = []
    for name, c in result.get("configs", {}).items():
        rc = c.get("runtime_chains") or {}
        an = c.get("analysis") or {}
        sim = c.get("simulated") or {}
        for chain, bkey in (("hot_path", "hot_path_bound_ns"), ("behavior_planner", "behavior_planner_bound_ns")):
            meas = (rc.get(chain) or {}).get("wcrt_ns")
            if meas is None:
                continue
            b = an.get(bkey)
            # The bound with the platform measured beside the runs (the hosts' blackout curve):
            # the one that claims to cover the real runs; the model's own assumes a CPU that is
            # always there.
            pb = (c.get("analysis_platform") or {}).get(bkey)
            s = (sim.get(chain) or {}).get("wcrt_ns")
            over = []
            if pb is not None and meas > pb:
                over.append(f"the analysis bound with the measured platform {output.ms(pb)} ms ({meas / pb:.1f}x)")
            elif b is not None and meas > b and pb is not None:
                over.append(f"the model's bound {output.ms(b)} ms, which assumes a CPU that is always there (with the "
                            f"platform measured beside the runs the bound is {output.ms(pb)} ms and holds)")
            elif b is not None and meas > b:
                over.append(f"the analysis bound {output.ms(b)} ms ({meas / b:.1f}x)")
            if s and meas > s:
                over.append(f"the simulated worst case {output.ms(s)} ms")
            if over:
                dist = [d for d in c.get("disturbed_runs", [])]
                causes = ["the machine was busy (run(s) " +
                          ", ".join(f"{d['run']} got {d['cpu_percent']:.0f} % CPU" for d in dist) + ")"] if dist else []
                counted = _accounted(c.get("accounting"), chain, "chains" if b is not None and meas > b else "simulated")
                if counted:
                    causes.insert(0, counted)
                lost = (c.get("preempted") or {}).get(chain) or []
                if lost:
                    # (the executor threads' priority: above the process' other threads, so the CPU
                    # went to another process' thread or to the hypervisor)
                    causes.append("preempted while running (" + "; ".join(
                        f"run {x['run']}: {x['callback']} took {output.ms(x['wall_ns'])} ms of wall time for "
                        f"{output.ms(x['cpu_ns'])} ms of CPU" for x in lost[:2]) + ")")
                if result.get("rt_priority") is None and not causes:
                    causes.append("no real-time priority (--rt-priority sets one)")
                cause = "; likely cause: " + "; ".join(causes) if causes else "; cause not identified from the measurements"
                lines.append(f"{name}: {chain} measured WCRT {output.ms(meas)} ms exceeds " + " and ".join(over) + cause)
    return lines


def kpi_accounting(acc: dict | None, chain: str, against: str) -> dict | None:
    """The benchmark's accounting (reference_system.accounting) of a KPI chain ("hot_path": both
    hot-path chains together) against the bounds ("chains") or the simulated worst cases: the
    instances above and each cause's count (None: the chain is not in it)."""
    rows = [r for n, r in ((acc or {}).get(against) or {}).items()
            if n == chain or (chain == "hot_path" and n.startswith("hot_path_"))]
    return {k: sum(r.get(k, 0) for r in rows) for k in ("above", *CAUSES)} if rows else None


def _accounted(acc: dict | None, chain: str, against: str) -> str | None:
    """kpi_accounting as a cause."""
    total = kpi_accounting(acc, chain, against)
    return cause_text(total, "the bound" if against == "chains" else "the simulated worst case") if total else None


class RunWatch:
    """What ``chainrt run`` calls around a run: warnings at the start (printed at once), the
    machine's counters before and after, and the verdict."""

    def __init__(self, model, fifo: int | None = None, thread_params: bool = True, stream=None,
                 probe=rt_available):
        """``model``: the loaded Model, or its file (loaded here; a bad file leaves no warnings:
        the run reports it itself)."""
        import sys
        self.fifo, self.thread_params = fifo, thread_params
        if isinstance(model, (str, os.PathLike)):
            try:
                model = load_model(model)
            except Exception:
                model = None
        self.model = model
        self.warnings = start_warnings(self.model, fifo, thread_params, probe) if self.model is not None else []
        for w in self.warnings:
            print(f"warning: {w}", file=stream or sys.stderr)
        self.before = Snapshot.take()

    def finish(self, result: dict, bound: dict | None = None, simulated: dict | None = None) -> Verdict:
        load = machine_load(self.before, Snapshot.take(), own_cpu_ns(result))
        return judge(result, bound, simulated, self.model, load, self.fifo, self.thread_params)
