"""No function of chainrt's own sources longer than about 120 lines: C/C++ measured by
scripts/function_lengths (lambdas count as part of their enclosing function), Python by `ast`
(end_lineno - lineno + 1 of every def, methods and nested defs each on their own). Tests are
excepted. The functions still over the limit are listed in LONG below, each by file and name:
the test fails on any other long function, and on a listed one that is gone or has become
short, so the list is exactly the debt left."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 120
# Everything that is not a test: the C/C++ libraries, tools, bindings and benches, and the
# Python package, benches and scripts.
CPP_DIRS = ["model", "sched", "sim", "runtime", "rclcpp", "lame", "synth", "python/bindings", "bpf", "bench",
            "analysis", "fuzz", "examples"]
PY_DIRS = ["python", "bench", "scripts"]

# Functions over LIMIT lines still to split, by "file:function" (a C++ function by the name
# before its parameter list, a Python one by its qualified name); none is left.
LONG: set[str] = set()


def _scanner():
    path = ROOT / "scripts" / "function_lengths"
    loader = importlib.machinery.SourceFileLoader("function_lengths", str(path))
    spec = importlib.util.spec_from_loader("function_lengths", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def _is_test(path: pathlib.Path) -> bool:
    rel = path.relative_to(ROOT)
    return any(p in ("tests", "test") for p in rel.parts[:-1]) or rel.name.startswith("test_")


def _cpp_name(lines: list[str], start: int) -> str:
    """The name before the parameter list of the function whose body opens on line `start`."""
    head = " ".join(lines[max(0, start - 4):start])
    head = re.split(r"[;}]", head)[-1]  # this declaration only
    m = re.search(r"([A-Za-z_~][\w:~]*)\s*\(", head)
    return m.group(1) if m else head.strip()[:60]


def cpp_functions() -> list[tuple[int, str]]:
    """(lines, "file:name") of every C/C++ function outside tests."""
    fl = _scanner()
    out = []
    for d in CPP_DIRS:
        for f in sorted((ROOT / d).rglob("*")):
            if f.suffix not in fl.SUFFIXES or _is_test(f):
                continue
            text = f.read_text()
            lines = text.split("\n")
            for start, end in fl.functions(text):
                out.append((end - start + 1, f"{f.relative_to(ROOT)}:{_cpp_name(lines, start)}"))
    return out


def _py_files(d: pathlib.Path):
    for f in sorted(d.rglob("*")):
        if not f.is_file() or _is_test(f) or "__pycache__" in f.parts:
            continue
        if f.suffix == ".py" or (f.suffix == "" and f.read_bytes()[:64].startswith(b"#!/usr/bin/env python")):
            yield f


def python_functions(text: str, rel: str) -> list[tuple[int, str]]:
    """(lines, "file:qualified name") of every def in `text`."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((child.end_lineno - child.lineno + 1, f"{rel}:{prefix}{child.name}"))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(text), "")
    return out


def all_functions() -> list[tuple[int, str]]:
    rows = cpp_functions()
    for d in PY_DIRS:
        for f in _py_files(ROOT / d):
            rows += python_functions(f.read_text(), str(f.relative_to(ROOT)))
    return rows


def test_no_function_outside_the_list_is_longer_than_120_lines():
    rows = all_functions()
    assert len(rows) > 1000, "the scan found too few functions"
    new = sorted((n, key) for n, key in rows if n > LIMIT and key not in LONG)
    assert not new, "functions over %d lines (split them along their stages): %s" % (
        LIMIT, ", ".join(f"{key} ({n})" for n, key in new))


def test_every_listed_long_function_is_still_long():
    longest: dict[str, int] = {}
    for n, key in all_functions():
        longest[key] = max(n, longest.get(key, 0))
    stale = sorted(key for key in LONG if longest.get(key, 0) <= LIMIT)
    assert not stale, "no longer over %d lines (or gone): drop from LONG: %s" % (LIMIT, ", ".join(stale))


def test_the_scanner_counts_a_function_with_lambdas_and_braces_in_strings():
    text = 'int f(int x) {\n  auto g = [&](int y) {\n    return y + 1;\n  };\n  const char* s = "}{";\n  // }\n' \
           '  if (x) {\n    x = g(x);\n  }\n  return x;\n}\n\nstruct S {\n  int h() const { return 1; }\n};\n'
    assert _scanner().functions(text) == [(1, 11), (14, 14)]


def test_the_names_are_those_of_the_functions():
    lines = ["namespace a {", "}  // namespace", "std::vector<int> Foo::bar(const std::vector<int>& x,",
             "                           int y) {"]
    assert _cpp_name(lines, 4) == "Foo::bar"
    py = "class C:\n    def m(self):\n        def inner():\n            pass\n\n\ndef f():\n    pass\n"
    assert python_functions(py, "x.py") == [(3, "x.py:C.m"), (2, "x.py:C.m.inner"), (2, "x.py:f")]
