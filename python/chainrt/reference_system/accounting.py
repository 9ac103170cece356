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
"""

from __future__ import annotations

from .. import accounting as acc
from . import kpi

CAUSES = acc.CAUSES


def executions(trace: list) -> list[acc.Execution]:
    """The executions of the benchmark binary's trace ([executor, callback, thread, start, finish,
    deadline, release, cpu]; release 0: none)."""
    return [acc.Execution(str(r[1]), str(r[0]), int(r[2]), int(r[3]), int(r[4]), int(r[7]) if len(r) > 7 else 0,
                          int(r[6]) or None) for r in trace]


def run_input(trace: list, probe, tids: set[int], since_ns: int, sinks: dict) -> dict:
    """What one run keeps for its accounting: executions, the platform's blackouts (None when
    the probe did not run), the end of the warm-up and the samples the sinks received."""
    blackouts = None
    if probe is not None:
        blackouts = acc.platform_blackouts(probe.blackouts, probe.holds, set(tids) | probe.pids) \
            if not probe.attribution_error else {c: list(iv) for c, iv in probe.blackouts.items()}
    return {"executions": executions(trace), "blackouts": blackouts, "since_ns": since_ns, "sinks": sinks,
            "attribution": probe.attribution_error if probe is not None else "no probe"}


def _window(busy: dict, node_exec: dict, entries, end: int) -> tuple[int, int]:
    begin = end
    for e in entries:
        ex = node_exec.get(e.node)
        begin = min(begin, acc.busy_start(busy.get(ex, []), int(e.timestamp)) if ex else int(e.timestamp))
    return begin, end


def free_kpis(run: dict, node_exec: dict, busy: dict, blackouts: list[tuple[int, int]]) -> kpi.RunKpis:
    """The run's KPIs over its platform-free samples and planner periods."""
    from ..crosslayer.platform import overlap

    def untouched(win):
        return overlap(blackouts, *win) == 0

    def keep_sample(s) -> bool:
        end = kpi.entry(s, kpi.HOT_PATH_END)
        hot = [e for e in s if e.node in kpi.HOT_PATH_NODES]
        return end is None or untouched(_window(busy, node_exec, hot, int(end.timestamp)))

    def keep_period(prev, e) -> bool:
        return untouched(_window(busy, node_exec, [prev], int(e.timestamp)))
    return kpi.run_kpis(run["sinks"], keep_sample=keep_sample, keep_period=keep_period)


def config_accounting(model, runs: list[dict], analysis: dict | None, simulated: dict | None = None) -> dict | None:
    """Per configuration: {"chains": {chain: {"above", "platform", "overrun", "unexplained"}}
    summed over its runs against the analysis bounds, "simulated" the same against the simulated
    worst cases, "hot_path_latency" and "behavior_planner_period" (kpi statistics over the
    platform-free samples, pooled), "runs" (how many were accounted), "notes"}; None when no run
    has its input (no probe)."""
    inputs = [r["accounting"] for r in runs if r.get("accounting") and r["accounting"]["blackouts"] is not None]
    if not inputs:
        return None
    mi = acc.model_inputs(model)
    against = {"chains": {n: (c or {}).get("wcrt_bound_ns") for n, c in ((analysis or {}).get("chains") or {}).items()},
               "simulated": {n: (c or {}).get("wcrt_ns") for n, c in ((simulated or {}).get("chains") or {}).items()}}
    node_exec = {n.name: n.executor for n in model.nodes}
    counts = {key: {n: {k: 0 for k in ("above", *CAUSES)} for n in mi["chains"]} for key in against}
    free, notes = [], sorted({f"attribution: {i['attribution']}" for i in inputs if i["attribution"]})
    for inp in inputs:
        ex = inp["executions"]
        for key, bounds in against.items():
            got = acc.account(ex, mi["chains"], bounds, mi["wcets"], inp["blackouts"], mi["chain_cpus"],
                              mi["chain_executors"], inp["since_ns"])
            for n, row in got["chains"].items():
                for k in ("above", *CAUSES):
                    counts[key][n][k] += row[k]
        busy = acc.busy_periods(ex, acc.ready_times(ex, mi["chains"]))
        every = acc.plat.merge([x for iv in inp["blackouts"].values() for x in iv])
        free.append(free_kpis(inp, node_exec, busy, every))
    pooled = kpi.pooled(free).to_dict()
    return {**counts, "runs": len(inputs), "hot_path_latency": pooled["hot_path_latency"],
            "behavior_planner_period": pooled["behavior_planner_period"], "notes": notes}
