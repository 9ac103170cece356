"""Figures: the one place chainrt draws and writes its plots (matplotlib, headless).

- :func:`pyplot`: matplotlib's ``pyplot`` on the non-interactive Agg backend (every command runs
  without a display: over ssh, in CI, in a container);
- :func:`save_figure`: writes a figure and closes it. A PNG is at most :data:`MAX_WIDTH_PX` pixels wide
  (a wide figure is drawn at a lower dpi rather than scaled afterwards, so its text stays sharp)
  and is stored with an indexed palette when that is smaller than full colour: the plots are flat
  colours, lines and text, which a palette of :data:`PALETTE_COLOURS` holds with no visible
  difference, at a third to a half of the bytes. Other formats (``.svg``, ``.pdf``) are written
  as matplotlib writes them.

Neither is thread-safe (matplotlib's pyplot is not); both allocate freely (off any hot path).
"""

from __future__ import annotations

import io
import os

from . import cliargs

MAX_WIDTH_PX = 1100
PALETTE_COLOURS = 64


def pyplot():
    """matplotlib.pyplot with the Agg backend selected (import on first use: the CLI starts
    without matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _compact_png(raw: bytes) -> bytes:
    """``raw`` (a PNG) with a palette of PALETTE_COLOURS, when that is smaller."""
    from PIL import Image

    with Image.open(io.BytesIO(raw)) as im:
        indexed = im.convert("RGB").quantize(
            colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
        out = io.BytesIO()
        indexed.save(out, "PNG", optimize=True)
    packed = out.getvalue()
    return packed if len(packed) < len(raw) else raw


def save_figure(fig, path, *, dpi: int = 110, tight: bool = False):
    """Write ``fig`` to ``path`` (its folder made if missing), close it and return ``path``.

    ``tight``: crop to the drawn area (matplotlib's ``bbox_inches="tight"``). The file appears
    whole or not at all (:func:`chainrt.cliargs.write_atomic`)."""
    plt = pyplot()
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
    width_in = fig.get_size_inches()[0]
    if width_in * dpi > MAX_WIDTH_PX:
        dpi = max(1, int(MAX_WIDTH_PX / width_in))
    extra = {"bbox_inches": "tight"} if tight else {}
    fmt = os.path.splitext(target)[1].lstrip(".").lower() or "png"
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=fmt, dpi=dpi, **extra)
    finally:
        plt.close(fig)
    data = _compact_png(buf.getvalue()) if fmt == "png" else buf.getvalue()
    cliargs.write_atomic(target, data, durable=False)
    return path
