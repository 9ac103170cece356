"""The analysis engine stays one function per term: no function in analysis/ longer than about
120 lines (scripts/function_lengths), and the scanner itself measures what it should."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _scanner():
    path = ROOT / "scripts" / "function_lengths"
    loader = importlib.machinery.SourceFileLoader("function_lengths", str(path))
    spec = importlib.util.spec_from_loader("function_lengths", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_no_function_in_analysis_is_longer_than_120_lines():
    rows = _scanner().lengths([str(ROOT / "analysis")])
    assert rows, "no function found"
    n, f, line, head = rows[0]
    assert n <= 120, f"{f}:{line} ({head}) has {n} lines"


def test_the_scanner_counts_a_function_with_lambdas_and_braces_in_strings():
    text = 'int f(int x) {\n  auto g = [&](int y) {\n    return y + 1;\n  };\n  const char* s = "}{";\n  // }\n' \
           '  if (x) {\n    x = g(x);\n  }\n  return x;\n}\n\nstruct S {\n  int h() const { return 1; }\n};\n'
    assert _scanner().functions(text) == [(1, 11), (14, 14)]
