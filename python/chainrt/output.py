"""The one output layer of chainrt: text tables, units and ``--json`` (docs/cli.md).

Every command, report and tool formats what it prints through these functions, so that a
duration, a percentage or a table reads the same wherever it appears:

- units: :func:`ms`, :func:`us` (a figure in a column, unit in its header), :func:`duration`
  (the shortest readable form, ``20 ms``), :func:`exact_duration` (the coarsest exact unit, as a
  model file writes it), :func:`pct`, :func:`spread` (``median [min..max]`` over runs);
  a missing value (``None``) is ``-`` everywhere;
- :func:`table`: aligned text columns (first column left, figures right);
- :func:`emit_json`: the ``--json`` form of a result (indented, keys as given).

None of these allocate more than the string they return; none touch global state.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence

from ._core import pretty_duration

MISSING = "-"


def _number(value: float, digits: int | str) -> str:
    spec = f".{digits}f" if isinstance(digits, int) else digits
    return format(value, spec)


def ms(ns, digits: int | str = 2, *, unit: bool = False, missing: str = MISSING) -> str:
    """``ns`` nanoseconds as milliseconds: ``digits`` decimals (or a format spec such as
    ``".6g"``), `` ms`` appended when ``unit``; ``missing`` for None."""
    if ns is None:
        return missing
    return _number(ns / 1e6, digits) + (" ms" if unit else "")


def us(ns, digits: int | str = 0, *, unit: bool = False, missing: str = MISSING) -> str:
    """``ns`` nanoseconds as microseconds (as :func:`ms`)."""
    if ns is None:
        return missing
    return _number(ns / 1e3, digits) + (" us" if unit else "")


def seconds(ns, digits: int | str = "g", *, unit: bool = False, missing: str = MISSING) -> str:
    """``ns`` nanoseconds as seconds (as :func:`ms`; ``g`` by default: ``10``, ``2.5``)."""
    if ns is None:
        return missing
    return _number(ns / 1e9, digits) + (" s" if unit else "")


def pct(fraction, digits: int = 0, *, missing: str = MISSING) -> str:
    """A fraction as a percentage: ``0.125`` -> ``12.5 %`` (``digits`` decimals)."""
    if fraction is None:
        return missing
    return f"{fraction * 100:.{digits}f} %"


def spread(st: dict | None, digits: int = 2, *, missing: str = MISSING) -> str:
    """A statistic over runs ({n, median, min, max}) as ``median [min..max]`` (the median alone
    for one run)."""
    if not st:
        return missing
    if st["n"] == 1:
        return f"{st['median']:.{digits}f}"
    return f"{st['median']:.{digits}f} [{st['min']:.{digits}f}..{st['max']:.{digits}f}]"


def duration(ns, *, missing: str = MISSING) -> str:
    """The shortest readable form of a duration (``20 ms``, ``1.5 s``), as the model's messages write it."""
    if ns is None:
        return missing
    return pretty_duration(int(ns))


def exact_duration(ns: int) -> str:
    """A duration in the coarsest unit that states it exactly (``33333us``, ``20ms``, ``1s``), as
    chainrt writes it into a model file."""
    for unit, f in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % f == 0:
            return f"{ns // f}{unit}"
    return f"{ns}ns"


def red(text: str, color: bool) -> str:
    """``text`` in red when ``color`` (a terminal that asked for no NO_COLOR: :func:`color_wanted`)."""
    return f"\033[31m{text}\033[0m" if color else text


def color_wanted(stream=None) -> bool:
    """Whether to color what goes to ``stream`` (stdout by default): a terminal, NO_COLOR unset."""
    import os
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")


def table(rows: Iterable[Sequence], *, left: Iterable[int] | str = (0,), indent: str = "", sep: str = "  ",
          rstrip: bool = False) -> list[str]:
    """Aligned text columns, one string a row (the first row is the header, if any). Cells are
    turned to text with ``str``; the columns in ``left`` are left-aligned (``"all"``: every
    column), the others right-aligned; ``rstrip`` drops trailing blanks of each row."""
    text = [[str(v) for v in r] for r in rows]
    if not text:
        return []
    ncol = max(len(r) for r in text)
    for r in text:
        r.extend([""] * (ncol - len(r)))
    widths = [max(len(r[i]) for r in text) for i in range(ncol)]
    lefts = set(range(ncol)) if left == "all" else set(left)
    out = []
    for r in text:
        line = indent + sep.join(v.ljust(w) if i in lefts else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
        out.append(line.rstrip() if rstrip else line)
    return out


def emit_json(result, *, indent: int | None = 2, file=None) -> None:
    """Print a result as a command's ``--json`` output: one JSON document on stdout."""
    print(json.dumps(result, indent=indent), file=file or sys.stdout)


def emit(result, text, *, as_json: bool, wrote: Sequence[str | None] = ()) -> None:
    """A command's result: with ``--json`` the JSON document alone, else ``text()`` (called only
    then) and a ``wrote PATH`` line for each file written (None: not asked for)."""
    if as_json:
        emit_json(result)
        return
    print(text())
    for path in wrote:
        if path:
            print(f"wrote {path}")
