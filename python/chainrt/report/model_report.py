"""``chainrt report MODEL``: the analysis, the simulation and a real run of the same model side by
side on one HTML page (tables with the definition of the measure they show, plots with captions),
plus the run's verdict (chainrt.verdict).

Measures shown, each defined once where it is used:
* chain response time: completion of the chain's last callback minus the release of its first
  (the timer release), per chain instance -- analysis (bound), simulator, real run alike;
* execution time: thread CPU time of one callback instance (real run), against the model's WCET.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .. import cliargs, output, runtime, tracing, verdict
from .. import profile as pf
from ..analysis import analysis_for_policy, analyze
from ..diagnose import policy_advice
from ..figures import pyplot, save_figure
from ..model import load_model
from ..runtime import merge
from ..simulation import simulate
from . import html as H
from .html import plain

RESPONSE_TIME = ("Chain response time", "completion of the chain's last callback minus the release of its "
                 "first callback (the timer release), per chain instance. The analysis gives an upper bound, "
                 "the simulator and the real run give observed values.")
EXEC_TIME = ("Execution time", "thread CPU time used by one instance of a callback (the executor's own "
             "measurement), compared with the WCET the model gives it.")


MEASURES = {
    "monitor": ("the running system, as its chainrt executors monitor it",
                "The measured columns are the monitoring of the running system: the chainrt executors "
                "that run your nodes publish their statistics on <namespace>/chainrt/chain_stats "
                "(ChainExecutor(stats_period=...), the C++ runtime's ExecutorOptions::stats_period, "
                "chainrt run --stats-period); this report listened for the stated time and shows each "
                "executor's figures as of its last message. A chain's response time is measured by the "
                "executor per instance, from the release of its first callback to the end of its last "
                "(since the executor started, or since record_from_now()); execution time is the thread "
                "CPU time of each callback instance."),
    "trace": ("a recorded LTTng trace of the system",
              "The measured columns come from a trace recorded with chainrt trace record: chain response "
              "times from chainrt's chain events (chain_complete's callback_end minus the instance's "
              "release) where the executor emitted them, execution times from callback_start/callback_end."),
    "replay": ("a replay of the model by chainrt run (not your nodes)",
               "The measured columns are a REPLAY: chainrt run started the model's synthetic nodes, each "
               "callback burning its WCET from the model as thread CPU time and publishing messages of the "
               "model's sizes. It measures how the model's timing behaves on this machine under chainrt's "
               "executor, not how your own nodes behave."),
}


def _agreement(data: dict, an: dict, sim: dict, rc: dict) -> str:
    """What a run that exceeded no bound and missed no deadline shows, saying which comparisons
    could not be made: chains without an analysis bound, without a simulated worst case, or that
    completed no instance."""
    measured = [c for c in data["chains"] if (rc.get(c) or {}).get("instances")]
    if not measured:
        return "No chain completed an instance in the measured time: nothing could be compared."
    unbounded = [c for c in measured if (an.get(c) or {}).get("wcrt_bound_ns") is None]
    unsimulated = [c for c in measured if not ((sim.get(c) or {}).get("instances") or (sim.get(c) or {}).get("wcrt_ns"))]
    if not unbounded and not unsimulated and len(measured) == len(data["chains"]):
        return "Every chain's measured worst case is within its analysis bound and its simulated worst case."
    said = [f"No measured worst case exceeds an analysis bound or a simulated worst case, and no deadline "
            f"was missed, over the {len(measured)} chain(s) that completed an instance."]
    if unbounded and len(unbounded) == len(data["chains"]):
        said.append("No chain has an analysis bound: nothing guarantees any chain's worst case beyond what "
                    "was measured.")
    elif unbounded:
        said.append("Without an analysis bound (nothing guarantees their worst case beyond what was "
                    "measured): " + ", ".join(unbounded) + ".")
    if unsimulated:
        said.append("Without a simulated worst case: " + ", ".join(unsimulated) + ".")
    silent = [c for c in data["chains"] if c not in measured]
    if silent:
        said.append("No instance measured: " + ", ".join(silent) + ".")
    return " ".join(said)


def collect(model_path: str, duration_ns: int, run: bool | str = True, policy: str | None = None, log=None,
            fifo: int | None = None, namespace: str | None = None, run_id: str | None = None,
            trace: str | None = None, model=None) -> dict:
    """Analysis, simulation and the measured columns of the model; each part records why it is
    missing instead of failing the report.

    ``run``: "monitor" (the monitoring of the running system, listened to for ``duration_ns``;
    ``namespace``/``run_id`` select it), "trace" (a recorded trace at ``trace``), "replay"
    (chainrt run of the model's synthetic nodes, threads at SCHED_FIFO ``fifo``), or False (none).
    ``True`` is "replay", the former meaning. ``data["run_failed"]`` says why a requested
    measurement gave nothing. ``model``: the model of ``model_path`` where the caller loaded it
    already (loading one of 10,000 callbacks takes a second)."""
    if run is True:
        run = "replay"
    model = load_model(model_path) if model is None else model
    data = {"model": str(model_path), "name": getattr(model, "name", "") or Path(model_path).stem, "fifo": fifo,
            "duration_ns": duration_ns, "policy": policy, "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "host": {"cpus": os.cpu_count(), "load_average": list(os.getloadavg())},
            "chains": [c.name for c in model.chains],
            "model_chains": {c.name: {"period_ns": c.period, "deadline_ns": c.deadline,
                                      "callbacks": list(c.callbacks)} for c in model.chains},
            "wcet": {cb.name: cb.wcet for cb in model.callbacks}, "notes": []}
    try:
        data["analysis"] = analyze(model) if policy is None else _analysis_for(model, policy)
    except (ValueError, RuntimeError) as e:
        data["analysis"] = None
        data["notes"].append(f"no analysis bound: {e}")
    advice = policy_advice(model, data["analysis"], str(model_path))
    if advice:
        data["notes"].append(advice)
    try:
        data["simulation"], _ = simulate(model, duration_ns, policy=policy)
    except Exception as e:  # shown on the page
        data["simulation"] = None
        data["notes"].append(f"simulation failed: {e}")
    data["run"] = None
    data["measured"] = run or None
    data["run_failed"] = None
    if run == "replay":
        try:
            watch = verdict.RunWatch(model, stream=open(os.devnull, "w"))
            data["start_warnings"] = watch.warnings
            r = runtime.run_model(model_path, duration_ns, policy=policy, fifo=fifo, model=model)
            v = watch.finish(r, data["analysis"], (data["simulation"] or {}).get("chains"))
            data["run"] = r
            data["verdict"] = v.to_json()
            if r.get("failed_processes") or r.get("partial"):
                data["run_failed"] = "the replay did not complete: " + "; ".join(
                    plain(str(x)) for x in (r.get("failed_processes") or ["a process ended early"]))
        except (runtime.RuntimeNotFound, RuntimeError, OSError) as e:
            data["run_failed"] = f"the replay failed: {plain(str(e))}"
    elif run == "monitor":
        try:
            data["run"] = _from_monitoring(model, duration_ns, namespace, run_id)
        except Exception as e:  # no ROS 2, nothing running: said on the page and as the exit status
            data["run_failed"] = plain(str(e))
    elif run == "trace":
        try:
            data["run"] = _from_trace(model, trace)
        except Exception as e:
            data["run_failed"] = plain(str(e))
    if data["run_failed"]:
        data["notes"].append(f"no measurement: {data['run_failed']}")
    return data


def _from_monitoring(model, duration_ns: int, namespace: str | None, run_id: str | None) -> dict:
    """The measured columns from the executors' monitoring topic (chainrt.profile.listen)."""
    topic = (namespace.rstrip("/") + pf.STATS_SUFFIX) if namespace else None
    col = pf.listen(duration_ns / 1e9, topic=topic, run_id=run_id)
    if not col.sources:
        raise RuntimeError(f"no monitoring message in {duration_ns / 1e9:g} s on "
                           f"{topic or '*' + pf.STATS_SUFFIX} (is the system running under a chainrt executor "
                           "with monitoring on, in this ROS_DOMAIN_ID? --replay measures a replay of the model "
                           "instead)")
    parts = [src.last for src in col.sources.values()]
    names = [c.name for c in model.chains]
    chains: dict = {}
    samples: dict = {}
    for name in names:
        rows = [p["chains"][name] for p in parts if name in (p.get("chains") or {})
                and p["chains"][name].get("instances")]
        if len(rows) == 1:   # one executor measured it: its own figures (its p99 is exact)
            chains[name] = {k: v for k, v in rows[0].items() if k != "samples_ns"}
            samples[name] = list(rows[0].get("samples_ns", []))
        elif rows:
            m = merge([{"chains": {name: r}} for r in rows])
            chains[name] = m["chains"][name]
            samples[name] = m["samples_ns"][name]
    callbacks: dict = {}
    for p in parts:
        callbacks.update(p.get("callbacks") or {})
    # the model's names: a callback an executor reports under another name, matched by place
    infos = {cb.name: {"node": cb.node, "kind": cb.kind,
                       "topic": cb.service if cb.kind in ("service", "client") else cb.topic,
                       "period_ns": cb.period} for cb in model.callbacks}
    by_model = {}
    for name, info in infos.items():
        m = pf._match(name, info, callbacks)
        if m is not None:
            by_model[name] = callbacks[m]
    return {"chains": chains, "samples_ns": samples, "callbacks": by_model,
            "warnings": sorted({w for p in parts for w in p.get("warnings", [])}),
            "run_id": ", ".join(sorted({k[0] for k in col.sources if k[0]})),
            "executors": sorted({k[1] for k in col.sources}), "messages": col.messages,
            "listened_ns": duration_ns}


def _from_trace(model, path: str) -> dict:
    """The measured columns from a recorded trace (chainrt.tracing, as trace-report)."""
    rep = tracing.analyze(tracing.read_trace(path), model)
    chains = {n: c for n, c in rep.chains.items()}
    if not chains:
        raise RuntimeError("the trace has no chain events of chainrt's executor: "
                           + "; ".join(rep.not_derivable[:1]))
    cbs = {}
    for name, c in rep.callbacks.items():
        key = name[len("chainrt:"):] if name.startswith("chainrt:") else name
        cbs[key] = {"instances": c["instances"], "cpu_total_ns": c["mean_ns"] * c["instances"],
                    "cpu_max_ns": c["wcrt_ns"], "wall_max_ns": c["wcrt_ns"]}
    return {"chains": chains, "samples_ns": {}, "callbacks": cbs, "warnings": list(rep.notes),
            "trace": str(path), "events": rep.events}


def _analysis_for(model, policy):
    result, why = analysis_for_policy(model, policy)
    if result is None:
        raise ValueError(why)
    return result


# --------------------------------------------------------------------------- plots

# The most chains (or callbacks) one plot shows: a bar per chain of a model with thousands would
# make an image of hundreds of thousands of pixels (minutes and gigabytes to draw, nothing to
# read). A larger model's plots show those closest to their limit, and their captions say so;
# the tables list every chain.
MAX_PLOTTED = 40


def _closest_to_limit(names: list[str], ratio) -> list[str]:
    """At most MAX_PLOTTED of `names`, those of largest ratio(name) (None counts as 0), in their
    given order."""
    if len(names) <= MAX_PLOTTED:
        return list(names)
    keep = set(sorted(names, key=lambda n: -(ratio(n) or 0))[:MAX_PLOTTED])
    return [n for n in names if n in keep]


def plotted_note(shown: int, total: int, what: str) -> str:
    """The caption's sentence for a plot that shows only some of the chains or callbacks."""
    return "" if shown >= total else (f" It shows the {shown} of the {total} {what} closest to their limit "
                                      "(the tables list all).")


def _worst_ratio(data: dict, c: str):
    """A chain's largest worst case (bound, simulated, measured) over its deadline."""
    vals = [((data.get(k) or {}).get("chains", {}).get(c) or {}).get(f) for k, f in
            (("analysis", "wcrt_bound_ns"), ("simulation", "wcrt_ns"), ("run", "wcrt_ns"))]
    vals = [v for v in vals if v]
    return max(vals) / data["model_chains"][c]["deadline_ns"] if vals else None

def plot_worst_cases(data: dict, path: Path):
    """Per chain: bound, simulated and measured worst case as a fraction of the deadline."""
    plt = pyplot()
    chains = _closest_to_limit(data["chains"], lambda c: _worst_ratio(data, c))
    an = (data.get("analysis") or {}).get("chains", {})
    sim = (data.get("simulation") or {}).get("chains", {})
    run = (data.get("run") or {}).get("chains", {})
    series = [("analysis bound", lambda c: (an.get(c) or {}).get("wcrt_bound_ns"), "#4c72b0"),
              ("simulated worst case", lambda c: (sim.get(c) or {}).get("wcrt_ns"), "#55a868"),
              ("measured worst case", lambda c: (run.get(c) or {}).get("wcrt_ns") if (run.get(c) or {}).get("instances")
               else None, "#c44e52")]
    series = [s for s in series if any(s[1](c) for c in chains)]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.75 * len(chains) * max(1, len(series)) / 2))
    h = 0.8 / len(series)
    for i, (label, get, color) in enumerate(series):
        ys = [k + (i - (len(series) - 1) / 2) * h for k in range(len(chains))]
        xs = [(get(c) or 0) / data["model_chains"][c]["deadline_ns"] for c in chains]
        ax.barh(ys, xs, height=h * 0.9, label=label, color=color)
        for y, x, c in zip(ys, xs, chains):
            v = get(c)
            if v:
                ax.text(x, y, f" {v / 1e6:.1f} ms", va="center", fontsize=8)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.text(1.0, len(chains) - 0.45, " deadline", fontsize=8)
    ax.set_yticks(range(len(chains)), chains)
    ax.invert_yaxis()
    ax.set_xlabel("worst-case chain response time / deadline")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, max(1.15, ax.get_xlim()[1] * 1.12))
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


def plot_cdf(data: dict, path: Path):
    """CDF of the measured response times of each chain, with the simulated worst case and the
    bound marked; one panel per chain (their scales differ)."""
    samples = (data.get("run") or {}).get("samples_ns", {})
    chains = _closest_to_limit([c for c in data["chains"] if samples.get(c)],
                               lambda c: max(samples[c]) / data["model_chains"][c]["deadline_ns"])
    if not chains:
        return None
    plt = pyplot()
    an = (data.get("analysis") or {}).get("chains", {})
    sim = (data.get("simulation") or {}).get("chains", {})
    cols = min(2, len(chains))
    rows = (len(chains) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3 * rows), squeeze=False)
    for ax, c in zip(axes.flat, chains):
        s = sorted(samples[c])
        ax.step([x / 1e6 for x in s], [(i + 1) / len(s) for i in range(len(s))], where="post", color="#c44e52",
                label=f"measured ({len(s)} instances)")
        b = (an.get(c) or {}).get("wcrt_bound_ns")
        if b:
            ax.axvline(b / 1e6, color="#4c72b0", linestyle="--", label=f"analysis bound {b / 1e6:.1f} ms")
        w = (sim.get(c) or {}).get("wcrt_ns")
        if w:
            ax.axvline(w / 1e6, color="#55a868", linestyle=":", label=f"simulated worst {w / 1e6:.1f} ms")
        d = data["model_chains"][c]["deadline_ns"]
        ax.axvline(d / 1e6, color="black", linewidth=1, label=f"deadline {d / 1e6:.0f} ms")
        ax.set_title(c, fontsize=10)
        ax.set_xlabel("chain response time (ms)")
        ax.set_ylabel("fraction of instances")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(chains):]:
        ax.axis("off")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


def plot_exec(data: dict, path: Path):
    """Measured CPU time per callback (mean and max) relative to the model's WCET."""
    cbs = (data.get("run") or {}).get("callbacks", {})
    names = _closest_to_limit([n for n in data["wcet"] if n in cbs and cbs[n].get("instances")],
                              lambda n: cbs[n]["cpu_max_ns"] / data["wcet"][n])
    if not names:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.4 * len(names)))
    mean = [cbs[n]["cpu_total_ns"] / cbs[n]["instances"] / data["wcet"][n] for n in names]
    mx = [cbs[n]["cpu_max_ns"] / data["wcet"][n] for n in names]
    ys = range(len(names))
    ax.barh([y + 0.2 for y in ys], mean, height=0.38, label="mean", color="#8172b2")
    ax.barh([y - 0.2 for y in ys], mx, height=0.38, label="max", color="#c44e52")
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(list(ys), names)
    ax.invert_yaxis()
    ax.set_xlabel("measured CPU time per instance / WCET in the model")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


# --------------------------------------------------------------------------- the page

def render(data: dict, images: dict) -> str:
    an = (data.get("analysis") or {}).get("chains", {})
    sim = (data.get("simulation") or {}).get("chains", {})
    run = data.get("run") or {}
    rc = run.get("chains", {})
    rows, cls = [], []
    for c in data["chains"]:
        m = data["model_chains"][c]
        b = (an.get(c) or {}).get("wcrt_bound_ns")
        s = sim.get(c) or {}
        r = rc.get(c) or {}
        has = bool(r.get("instances"))
        rows.append([c, output.ms(m["deadline_ns"]), output.ms(b), output.ms(s.get("wcrt_ns")), output.ms(s.get("mean_ns")),
                     output.ms(r.get("wcrt_ns")) if has else "-", output.ms(r.get("mean_ns")) if has else "-",
                     output.ms(r.get("p99_ns")) if has else "-", r.get("instances", "-") if run else "-",
                     r.get("deadline_misses", "-") if run else "-"])
        over_b = has and b is not None and r["wcrt_ns"] > b
        cls.append("bad" if over_b or (has and r.get("deadline_misses")) else
                   ("warn" if has and s.get("wcrt_ns") and r["wcrt_ns"] > s["wcrt_ns"] else ""))
    analysis_name = (data.get("analysis") or {}).get("analysis", "none")
    parts = [_measured_section(data)]
    v = data.get("verdict") or {}
    if run and not v:  # the running system or a trace: the bound and the deadline, as measured
        v = {"findings": [{"text": f"chain {c}: measured worst case {output.ms(rc[c]['wcrt_ns'])} ms"
                           + (f" exceeds its analysis bound {output.ms((an.get(c) or {}).get('wcrt_bound_ns'))} ms"
                              if (an.get(c) or {}).get("wcrt_bound_ns") is not None
                              and rc[c]["wcrt_ns"] > an[c]["wcrt_bound_ns"] else "")
                           + (f"; {rc[c]['deadline_misses']} deadline miss(es)" if rc[c].get("deadline_misses") else "")}
                          for c in data["chains"] if (rc.get(c) or {}).get("instances")
                          and ((an.get(c) or {}).get("wcrt_bound_ns") is not None
                               and rc[c]["wcrt_ns"] > an[c]["wcrt_bound_ns"] or rc[c].get("deadline_misses"))]}
    if run:
        if v.get("findings"):
            parts.append(H.section("Verdict: the run disagrees with the model",
                                   H.para("Each chain whose measured worst case exceeds its analysis bound or its "
                                          "simulated worst case, with the causes measured during the run:"),
                                   H.items([f["text"] for f in v["findings"]])))
        else:
            parts.append(H.section("Verdict", H.para(_agreement(data, an, sim, rc))))
    measured = [c for c in data["chains"] if (run.get("samples_ns") or {}).get(c)]
    parts.append(H.section(
        "Chains: analysis, simulation and real run side by side",
        H.table(["chain", "deadline", "analysis bound", "simulated worst", "simulated mean", "measured worst",
                 "measured mean", "measured p99", "instances", "deadline misses"], rows,
                f"Chain response times in ms (analysis {analysis_name}; simulation and run of "
                f"{data['duration_ns'] / 1e9:g} s). Red: above the bound or a missed deadline; yellow: above "
                "the simulated worst case.", RESPONSE_TIME, cls),
        H.figure(images["worst"].name, "Worst-case response time of each chain as a fraction of its deadline. "
                 "Look for a measured bar longer than the analysis bound (the model does not describe the run) "
                 "and for any bar beyond the dashed line (a missed deadline)."
                 + plotted_note(min(MAX_PLOTTED, len(data["chains"])), len(data["chains"]), "chains"),
                 "worst cases per chain")
        if images.get("worst") else "",
        H.figure(images["cdf"].name, "Distribution of the measured response times per chain. The steeper and "
                 "further left the curve, the more predictable the chain; the dashed line is the bound it must "
                 "stay left of." + plotted_note(min(MAX_PLOTTED, len(measured)), len(measured), "measured chains"),
                 "response time distributions") if images.get("cdf") else ""))
    cbs = run.get("callbacks", {})
    if cbs:
        crow = []
        for n, w in data["wcet"].items():
            st = cbs.get(n)
            if not st or not st.get("instances"):
                continue
            crow.append([n, output.ms(w, 3), output.ms(st["cpu_total_ns"] / st["instances"], 3), output.ms(st["cpu_max_ns"], 3),
                         output.ms(st["wall_max_ns"], 3), st["instances"]])
        parts.append(H.section(
            "Callbacks: execution times",
            H.table(["callback", "WCET in the model", "measured mean", "measured max", "wall-time max", "instances"],
                    crow, "Execution time per callback instance in ms (real run).", EXEC_TIME),
            H.figure(images["exec"].name, "Measured CPU time per instance relative to the model's WCET: bars "
                     "beyond 1.0 mean the model understates the callback (run chainrt profile to measure it)."
                     + plotted_note(min(MAX_PLOTTED, len(crow)), len(crow), "callbacks"), "execution times") if images.get("exec") else ""))
    notes = list(data.get("notes", [])) + list(data.get("start_warnings", [])) + list(run.get("warnings", []))
    if notes:
        parts.append(H.section("Notes", H.items(notes)))
    la = data["host"].get("load_average") or [0]
    sub = (f"{data['model']} - {data['when']} - {data['host']['cpus']} CPUs, load average {la[0]:.2f} at the start"
           + (f" - run id {run.get('run_id')}" if run.get("run_id") else ""))
    return H.page(f"chainrt report: {data['name']}", "\n".join(parts), sub)


def _measured_section(data: dict) -> str:
    """What the measured columns are and how they were measured (the first thing on the page)."""
    mode = data.get("measured")
    run = data.get("run") or {}
    if not mode:
        return H.section("What was measured", H.para("Nothing: this report shows the analysis and the simulation "
                                                     "of the model only (--no-run)."))
    what, how = MEASURES[mode]
    bits = [f"Measured: {what}."]
    if mode == "monitor" and run:
        bits.append(f"{run.get('messages', 0)} monitoring message(s) in {run.get('listened_ns', 0) / 1e9:g} s from "
                    f"executor(s) {', '.join(run.get('executors') or ['?'])}"
                    + (f" (run id {run['run_id']})" if run.get("run_id") else "") + ".")
    elif mode == "trace" and run:
        bits.append(f"Trace {run.get('trace')}: {run.get('events', 0)} events.")
    elif mode == "replay":
        bits.append(f"chainrt run of the model for {data['duration_ns'] / 1e9:g} s"
                    + (f", executor threads at SCHED_FIFO {data['fifo']}" if data.get("fifo") else
                       ", executor threads with the model's own priorities (none given: normal scheduling)") + ".")
    if data.get("run_failed"):
        bits.append(f"The measurement failed: {data['run_failed']}")
    return H.section("What was measured", H.para(" ".join(bits)), H.para(how))


# Every file write() may put into its folder (and nothing else): the command names them.
FILES = ("index.html", "report.json", "worst_cases.png", "response_cdf.png", "execution_times.png")


def write(data: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    images = {"worst": plot_worst_cases(data, out_dir / "worst_cases.png"),
              "cdf": plot_cdf(data, out_dir / "response_cdf.png"),
              "exec": plot_exec(data, out_dir / "execution_times.png")}
    cliargs.write_atomic(out_dir / "report.json", json.dumps(data, indent=1, default=str))
    page = out_dir / "index.html"
    cliargs.write_atomic(page, render(data, images))
    return page
