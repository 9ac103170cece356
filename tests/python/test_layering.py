"""The Python package's layers, checked with `ast` over python/chainrt:

- the command line is a thin layer on top: no module outside ``chainrt.commands`` and
  ``chainrt.cli`` imports ``chainrt.commands`` (what reports, benches and campaigns need from
  analyze and simulate is in the library: ``chainrt.analysis``, ``chainrt.simulation``), and
  nothing imports ``chainrt.cli``;
- no cycle among chainrt's modules (an import of ``a.b`` counts as one of ``a.b``; ``from a
  import b`` as one of ``a.b`` when that is a module, else of ``a``);
- every chainrt-internal import is at module level (also under ``if``/``try``), none inside a
  function (``importlib.import_module`` of a literal chainrt name counts as an import; the
  command line's discovery of ``chainrt.commands.*`` by pkgutil names none), so that a
  module's dependencies are read at its top. The one exception, LAZY:
  modules that may be absent or need an optional third-party dependency at their top, each
  with its reason; the test checks each reason still holds.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "chainrt"
# Only these may be imported inside a function: module -> why, and the third-party modules
# whose top-level import makes it optional ("" for an extension module that may not be built).
# (A chainrt module that imports an optional third-party package at its top, as chainrt.launch
# does launch, would be listed with that package; none is imported lazily now.)
LAZY = {
    "chainrt._rclpy_exec": ("the rclpy executor's extension, built only with ROS 2 (python/bindings/"
                            "CMakeLists.txt): chainrt.rclpy imports it where it is used, so that its "
                            "absence is one clear error (binding._load_loop_module)", ""),
}
EXTENSIONS = {"chainrt._core", "chainrt._rclpy_exec"}  # built by CMake, no .py file


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _dynamic(node) -> str | None:
    """The module of ``importlib.import_module("...")`` or ``__import__("...")`` with a literal name."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    f = node.func
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return node.args[0].value if called in ("import_module", "__import__") else None


def _targets(node, name: str, is_pkg: bool, known: set[str]) -> list[str]:
    """The chainrt modules an import statement (or a call of importlib.import_module with a
    literal name) of module `name` imports."""
    if _dynamic(node) is not None:
        names = [_dynamic(node)]
    elif not isinstance(node, (ast.Import, ast.ImportFrom)):
        return []
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
    return [n for n in names if n == "chainrt" or n.startswith("chainrt.")]


def imports() -> list[tuple[str, str, int, bool]]:
    """(importer, imported, line, inside a function) for every chainrt-internal import."""
    mods = modules()
    known = set(mods) | EXTENSIONS
    out = []
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"

        def walk(node, in_function):
            for child in ast.iter_child_nodes(node):
                out.extend((name, t, child.lineno, in_function) for t in _targets(child, name, is_pkg, known))
                walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

        walk(ast.parse(path.read_text()), False)
    return out


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _is_cli(name: str) -> bool:
    return name == "chainrt.cli" or name == "chainrt.commands" or name.startswith("chainrt.commands.")


def test_only_the_command_line_imports_the_commands():
    bad = [f"{a} (line {n}) imports {b}" for a, b, n, _ in imports() if _is_cli(b) and not _is_cli(a)]
    assert not bad, "the library imports the command-line layer:\n" + "\n".join(bad)


def test_no_import_cycle():
    # A package's __init__ importing its own submodules is how packages are built, not a cycle.
    edges = [(a, b) for a, b, _, _ in imports() if not b.startswith(a + ".")]
    found = cycles(edges)
    assert not found, "import cycles among chainrt modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_chainrt_imports_are_at_module_level():
    bad = [f"{a}:{n} imports {b}" for a, b, n, inside in imports() if inside and b not in LAZY]
    assert not bad, f"chainrt-internal imports inside functions ({len(bad)}; move them to the top):\n" + \
        "\n".join(bad)


def test_each_lazy_module_is_still_optional():
    mods = modules()
    for name, (why, dependency) in LAZY.items():
        assert why
        if not dependency:
            assert name in EXTENSIONS and name not in mods, name
            continue
        tree = ast.parse(mods[name].read_text())
        top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        assert dependency in top, f"{name} no longer imports {dependency} at its top: import it there, not lazily"


def test_the_checks_see_what_they_forbid():
    assert cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]
    assert cycles([("a", "b"), ("b", "c")]) == []
    tree = ast.parse("from ..commands.analyze import x\nfrom .. import _core\nimport chainrt.model\n"
                     "importlib.import_module('chainrt.soundness')\n")
    known = {"chainrt.commands.analyze", "chainrt._core", "chainrt.model"}
    got = [t for node in ast.walk(tree) for t in _targets(node, "chainrt.report.model_report", False, known)]
    assert got == ["chainrt.commands.analyze", "chainrt._core", "chainrt.model", "chainrt.soundness"]
