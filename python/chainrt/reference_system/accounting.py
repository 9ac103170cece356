"""The reference-system benchmark's accounting (chainrt.accounting on its runs).

For every run of a chainrt configuration with the platform probe beside it, the executors'
dispatch trace gives every callback execution; from it:

* every instance of the model's chains above the analysis bound classified as platform,
  overrun or unexplained (chainrt.accounting.account), counted per configuration;
* the benchmark's own KPIs over the **platform-free** samples: a hot-path sample (upstream's
  latency, the later LiDAR sample's callback start to ObjectCollisionEstimator's) is
  platform-free when no platform blackout touched its busy window — from the start of the busy
  period, on the executor of each node of the sample, that contains the node's callback start,
  to the sample's end; a behaviour-planner period when none touched the window from the busy
  period containing the previous planner start to this one.

On upstream's nodes (``--system upstream``) the KPIs are the lines upstream's sinks print, which
carry no time; every sink block is stamped when the bench reads it (upstream._StampedLog), and
a sample counts as platform-free when no platform blackout touched the **stamped window** of
its block, [s - E - M, s]: s the stamp, E the block's own "latency:" (upstream's end-to-end
latency: the sink's print less the oldest timestamp any node of the sample's path stamped into
it, so every callback of the sample, the hot path's included, started after s - E), M =
``STAMP_MARGIN_NS`` for the reader's delay (it runs at SCHED_FIFO 98 off the run's core) and the
backlog a blackout just before the oldest callback started could leave. A planner period's
window runs from the previous block's window start to s. Without the executor's dispatch trace
the busy period before the oldest callback is not known: M stands for it, where the trace-based
window of chainrt's own runs measures it. The rule is applied to every configuration of the
upstream system — stock executors and chainrt's alike — so that their platform-free figures
compare.
"""

from __future__ import annotations

from .. import accounting as acc
from ..crosslayer.platform import overlap
from . import kpi, upstream
from .upstream import block_latencies

CAUSES = acc.CAUSES
STAMP_MARGIN_NS = 20_000_000
CASES_KEPT = 5  # unexplained instances named per chain (the longest responses)


def _response_of(text: str) -> float:
    """The response (ms) a case's text states ("... responded in 12.34 ms > ...")."""
    try:
        return float(text.split("responded in ", 1)[1].split(" ms", 1)[0])
    except (IndexError, ValueError):
        return 0.0


def stamped_keep(text: str, stamps: list[tuple[int, int, str]], blackouts: list[tuple[int, int]],
                 sink: str = kpi.HOT_PATH_SINK, margin_ns: int = STAMP_MARGIN_NS):
    """upstream.parse_log's ``keep`` for the platform-free samples of the stamped log ``text``
    (the module's stamped window); ``blackouts`` sorted and disjoint. A block without a stamp or
    a latency line is not kept, nor the period of the first block."""
    e2e = block_latencies(text)
    mine = sorted((off, ns) for off, ns, s in stamps if s == sink and off in e2e)
    index = {o: i for i, (o, _) in enumerate(mine)}

    def begin(i: int) -> int:
        return mine[i][1] - e2e[mine[i][0]] - margin_ns

    def keep(key: str, block: int, value) -> bool:
        i = index.get(block)
        if i is None or (key != "hot_path_latency" and i == 0):
            return False
        return overlap(blackouts, begin(i) if key == "hot_path_latency" else begin(i - 1), mine[i][1]) == 0
    return keep


def executions(trace: list) -> list[acc.Execution]:
    """The executions of the benchmark binary's trace ([executor, callback, thread, start, finish,
    deadline, release, cpu, slept_until, woke]; release 0: none; woke > slept_until: the thread's
    late wake-up before it)."""
    return [acc.Execution(str(r[1]), str(r[0]), int(r[2]), int(r[3]), int(r[4]), int(r[7]) if len(r) > 7 else 0,
                          int(r[6]) or None,
                          (int(r[8]), int(r[9])) if len(r) > 9 and int(r[9]) > int(r[8]) else None) for r in trace]


def run_input(trace: list, probe, tids: set[int], since_ns: int, sinks: dict) -> dict:
    """What one run keeps for its accounting: executions, the platform's blackouts (None when
    the probe did not run), the end of the warm-up, the samples the sinks received, and for the
    kernel's real-time throttling every blackout the probe saw with the throttling then set."""
    blackouts, ex, wakeups = None, executions(trace), {}
    if probe is not None:  # (the run is pinned to the probe's CPU: the late wake-ups go there)
        blackouts, wakeups = acc.run_blackouts(probe, ex, None, set(tids) | probe.pids, not probe.attribution_error)
    return {"executions": ex, "blackouts": blackouts, "since_ns": since_ns, "sinks": sinks,
            "wakeups_note": acc.wakeups_note(wakeups), "wakeups": {c: list(iv) for c, iv in wakeups.items()},
            "attribution": probe.attribution_error if probe is not None else "no probe",
            "probe_blackouts": {c: list(iv) for c, iv in probe.blackouts.items()} if probe is not None else {},
            "rt_throttling": acc.rt_throttling()}


def upstream_input(trace: list, probe, tids: set[int], log: dict, warmup_ns: int) -> dict:
    """run_input for a run of upstream's nodes (upstream.run_config): the executions of its
    dispatch trace (none for a stock executor) and its platform-free KPIs by the stamped window
    (``free_kpis``)."""
    inp = run_input(trace, probe, tids, log["started_ns"] + warmup_ns, {})
    every = acc.plat.merge([x for iv in (inp["blackouts"] or {}).values() for x in iv])
    keep = stamped_keep(log["text"], log["stamps"], every)
    inp["free_kpis"] = upstream.parse_log(log["text"], log["warmup_chars"], log["stop_chars"], keep=keep)[0]
    return inp


def _window(busy: dict, node_exec: dict, entries, end: int) -> tuple[int, int]:
    begin = end
    for e in entries:
        ex = node_exec.get(e.node)
        begin = min(begin, acc.busy_start(busy.get(ex, []), int(e.timestamp)) if ex else int(e.timestamp))
    return begin, end


def free_kpis(run: dict, node_exec: dict, busy: dict, blackouts: list[tuple[int, int]]) -> kpi.RunKpis:
    """The run's KPIs over its platform-free samples and planner periods."""

    def untouched(win):
        return overlap(blackouts, *win) == 0

    def keep_sample(s) -> bool:
        end = kpi.entry(s, kpi.HOT_PATH_END)
        hot = [e for e in s if e.node in kpi.HOT_PATH_NODES]
        return end is None or untouched(_window(busy, node_exec, hot, int(end.timestamp)))

    def keep_period(prev, e) -> bool:
        return untouched(_window(busy, node_exec, [prev], int(e.timestamp)))
    return kpi.run_kpis(run["sinks"], keep_sample=keep_sample, keep_period=keep_period)


def config_accounting(model, runs: list[dict], analysis: dict | None, simulated: dict | None = None,
                      analysis_platform: dict | None = None) -> dict | None:
    """Per configuration: {"chains": {chain: {"above", "platform", "overrun", "runtime",
    "unexplained", "unexplained_cases" (the longest CASES_KEPT, each named with its run)}} summed
    over its runs against the analysis bounds, "simulated" the same against
    the simulated worst cases (runtime: only there; both empty without a model: a stock executor has no bound, only its
    platform-free split), "hot_path_latency" and "behavior_planner_period" (kpi statistics over
    the platform-free samples, pooled), "runs" (how many were accounted), "dispatch_overhead"
    (accounting.dispatch_overhead_json over the runs' executions, pooled), "notes" (the
    attribution's failures, the kernel's real-time throttling); None when no run has its input
    (no probe)."""
    inputs = [r["accounting"] for r in runs if r.get("accounting") and r["accounting"]["blackouts"] is not None]
    if not inputs:
        return None
    mi = acc.model_inputs(model) if model is not None else {"chains": {}}
    against = {"chains": {n: (c or {}).get("wcrt_bound_ns") for n, c in ((analysis or {}).get("chains") or {}).items()},
               "simulated": {n: (c or {}).get("wcrt_ns") for n, c in ((simulated or {}).get("chains") or {}).items()}}
    # a platform blackout explains an instance only within the bound with the measured platform
    with_platform = {n: (c or {}).get("wcrt_bound_ns") for n, c in ((analysis_platform or {}).get("chains") or {}).items()}
    node_exec = {n.name: n.executor for n in model.nodes} if model is not None else {}
    counts = {key: {n: {k: 0 for k in ("above", *CAUSES)} for n in mi["chains"]} for key in against}
    free, notes = [], sorted({f"attribution: {i['attribution']}" for i in inputs if i["attribution"]})
    gaps: dict[str, list[int]] = {}  # the executors' own time per dispatch, pooled over the runs
    for i, inp in enumerate(inputs):
        ex = inp["executions"]
        every = acc.plat.merge([x for iv in inp["blackouts"].values() for x in iv])
        if model is not None and ex:
            for e, g in acc.dispatch_gaps(ex, mi["chains"], every).items():
                gaps.setdefault(e, []).extend(g)
            for key, bounds in against.items():
                got = acc.account(ex, mi["chains"], bounds, mi["wcets"], inp["blackouts"], mi["chain_cpus"],
                                  mi["chain_executors"], inp["since_ns"], simulated=key == "simulated",
                                  executor_cpus=mi["executor_cpus"], chain_ncpu=mi["chain_ncpu"],
                                  publishers=mi["publishers"], cache_only=mi["cache_only"],
                                  platform_bounds=with_platform if key == "chains" else None,
                                  analysis_bounds=against["chains"] if key == "simulated" else None)
                for n, row in got["chains"].items():
                    for k in ("above", *CAUSES):
                        counts[key][n][k] += row[k]
                    # each unexplained instance named (the run, its response, its window's figures)
                    cases = counts[key][n].setdefault("unexplained_cases", [])
                    cases += [f"run {i + 1}: " + c.text() for c in row["cases"] if c.cause == acc.UNEXPLAINED]
                    cases.sort(key=_response_of, reverse=True)
                    del cases[CASES_KEPT:]
        if "free_kpis" in inp:
            free.append(inp["free_kpis"])
            continue
        busy = acc.busy_periods(ex, acc.ready_times(ex, mi["chains"]))
        free.append(free_kpis(inp, node_exec, busy, every))
    notes += [f"run {i + 1}: {inp['wakeups_note']}" for i, inp in enumerate(inputs) if inp.get("wakeups_note")]
    notes += throttling_notes(inputs)
    if model is not None and (note := acc.swapped_by_probe(model)):
        notes.append(note)
    if (note := acc.irq_note_for(*counts.values())):
        notes.append(note)
    overhead = acc.dispatch_overhead_json(model, gaps, notes) if model is not None else {}
    pooled = kpi.pooled(free).to_dict()
    return {**counts, "runs": len(inputs), "dispatch_overhead": overhead, "hot_path_latency": pooled["hot_path_latency"],
            "behavior_planner_period": pooled["behavior_planner_period"], "notes": notes,
            "bounded": model is not None and any(b is not None for b in against["chains"].values())}


def throttling_notes(inputs: list[dict]) -> list[str]:
    """The line naming the kernel's real-time throttling where the probe's blackouts of the
    runs match it (accounting.throttling_note), with the remedy."""
    by_setting: dict = {}
    for inp in inputs:
        if inp.get("rt_throttling"):
            got = by_setting.setdefault(tuple(inp["rt_throttling"]), {})
            for iv in (inp.get("probe_blackouts") or {}).values():
                got[len(got)] = list(iv)  # (one entry per run and CPU)
    return [n for setting, bl in by_setting.items() if (n := acc.throttling_note(bl, setting))]
