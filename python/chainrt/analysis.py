"""Response-time analysis as a library: the analyses that cover a model, the tightest bound of
each chain among them, the analysis of a policy, and the model with its executors' policy or
threads overridden. ``chainrt analyze``, ``chainrt run``, reports, benches and campaigns use it;
the command-line layer (chainrt.commands) formats what it returns."""

from __future__ import annotations

from . import _core
from ._core import Thread
from .model import analyses, validate


def override(model, policy: str | None = None, threads: int | None = None):
    """The model with every executor's policy and/or threads replaced (validated again)."""
    if policy is None and threads is None:
        return model
    executors = model.executors
    for e in executors:
        if policy is not None:
            e.policy = policy
        if threads is not None:
            plain = []
            for i in range(threads):
                t = Thread()
                t.name = f"t{i}"
                plain.append(t)
            e.threads = plain
            e.thread_classes = []
    model.executors = executors
    if threads is not None:
        callbacks = model.callbacks
        for cb in callbacks:
            cb.affinity = []
        model.callbacks = callbacks
    validate(model)
    return model


def covering_analyses(model) -> tuple[list[str], str | None]:
    """The analyses whose bounds hold for this model's executors: the one of the executors'
    policy first (when there is one), then every other analysis that bounds the policy of each
    executor (``policies`` in the registry); with why the policy has no analysis of its own."""
    default, why = _core._default_analysis(model)
    used = {e.policy for e in model.executors}
    names = [default] if default else []
    names += [a["name"] for a in analyses()
              if a["name"] not in names and used and used <= set(a.get("policies", [a["policy"]]))]
    return names, why


def tightest(model) -> dict:
    """Every covering analysis that applies, and per chain the smallest bound among them: the
    result of the executors' policy's analysis (else the first that applied) with each chain
    taken from the analysis bounding it lowest (``analysis`` per chain), ``analyses`` listing
    each one tried with why it did not apply. ValueError when none applies."""
    names, why_none = covering_analyses(model)
    results, tried = [], {}
    for name in names:
        ok, why = _core._applicable(model, name)
        tried[name] = "applied" if ok else f"does not apply: {why}"
        if ok:
            results.append(_core._analyze(model, name))
    if not results:
        detail = "; ".join(([why_none] if why_none else []) + [f"{n}: {w}" for n, w in tried.items()])
        raise ValueError(f"no analysis fits this model: {detail}")
    out = results[0]
    for name, chain in out["chains"].items():
        best, by = chain, out["analysis"]
        for r in results[1:]:
            c = r["chains"].get(name)
            if c and c["wcrt_bound_ns"] is not None and (best["wcrt_bound_ns"] is None
                                                         or c["wcrt_bound_ns"] < best["wcrt_bound_ns"]):
                best, by = c, r["analysis"]
        if best["wcrt_bound_ns"] is None and len(results) > 1:  # what each analysis found unbounded
            best = {**best, "reason": "; ".join(f"{r['analysis']}: {r['chains'][name]['reason']}" for r in results
                                                if name in r["chains"] and r["chains"][name]["reason"])}
        out["chains"][name] = {**best, "analysis": by, "verdict": verdict_of(best)}
    out["schedulable"] = bool(out["chains"]) and all(c["schedulable"] for c in out["chains"].values())
    out["analyses"] = tried
    return out


def analyze(model, analysis: str | None = None) -> dict:
    """The analysis result as the JSON-ready dict: the analysis named, or when None the tightest
    answer of the analyses covering the model (``tightest``)."""
    if analysis is None:
        return tightest(model)
    ok, why = _core._applicable(model, analysis)
    if not ok:
        raise ValueError(f"analysis {analysis} does not apply: {why}")
    return _core._analyze(model, analysis)


def analysis_for_policy(model, policy: str | None) -> tuple[dict | None, str | None]:
    """The result of the first registry analysis that bounds ``policy`` (any policy when None)
    and applies to the model, or (None, why none does)."""
    tried = []
    for a in analyses():
        if policy and a["policy"] != policy:
            continue
        ok, why = _core._applicable(model, a["name"])
        if ok:
            return _core._analyze(model, a["name"]), None
        tried.append(f"{a['name']}: {why}")
    return None, f"no analysis for policy {policy} applies to this model" + (f" ({'; '.join(tried)})" if tried else "")


def verdict_of(chain: dict) -> str:
    """A chain's verdict: "meets" (its bound within the deadline), "misses" (a finite worst case
    beyond it) or "UNBOUNDED" (no bound: the reason names the term that grows)."""
    if chain["schedulable"]:
        return "meets"
    return "misses" if chain["wcrt_bound_ns"] is not None else "UNBOUNDED"
