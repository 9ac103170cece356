"""Loading and saving chainrt models (the format is documented in docs/model.md).

The parser and validator are the C++ core's (``chainrt._core``); this module turns their
diagnostics into a Python exception that names file, line, column and field.
"""

from __future__ import annotations

from . import _core
from ._core import Model  # noqa: F401


class ModelError(ValueError):
    """A model file (or a model built in code) is invalid.

    ``diagnostics`` is a list of dicts with ``file``, ``line``, ``column``, ``field``,
    ``message`` and ``text`` (the one-line ``file:line:col: field: message`` form).
    """

    def __init__(self, diagnostics: list[dict]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d["text"] for d in diagnostics))


def policies() -> list[dict]:
    """The executor policies (the C++ descriptors, sched/policy.hpp): name, description,
    admission rule and default analyses, in their canonical order."""
    return _core.policies()


def policy_names() -> list[str]:
    """The names a model's ``policy`` and every ``--policy`` accept."""
    return [p["name"] for p in _core.policies()]


def analyses() -> list[dict]:
    """The analysis registry (analysis/analysis.hpp): name, summary, the policy it bounds,
    and whether it bounds single-threaded executors only."""
    return _core.analyses()


def analysis_names() -> list[str]:
    return [a["name"] for a in _core.analyses()]


def load_model(path: str) -> Model:
    model, diags = _core._load_model(str(path))
    if diags:
        raise ModelError(diags)
    return model


def load_model_or_report(path: str, command: str) -> Model | None:
    """Loads a model for a CLI command: on failure prints every diagnostic (``file:line:col:
    field: message``) or the OS error to stderr and returns None."""
    import sys

    try:
        return load_model(path)
    except ModelError as err:
        for d in err.diagnostics:
            print(d["text"], file=sys.stderr)
    except OSError as err:
        print(f"chainrt {command}: {err}", file=sys.stderr)
    return None


def load_model_from_string(text: str, file_name: str = "<string>") -> Model:
    model, diags = _core._load_model_from_string(text, file_name)
    if diags:
        raise ModelError(diags)
    return model


def validate(model: Model, file_name: str = "<model>") -> None:
    """Validates (and completes) a model built in code; raises ModelError."""
    diags = model._validate(file_name)
    if diags:
        raise ModelError(diags)
