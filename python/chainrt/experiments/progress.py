"""A small progress bar on stderr (redrawn in place on a terminal, a line per 10 % otherwise):
done / total, the rate over this run and the time left at that rate."""

from __future__ import annotations

import sys
import time


def duration_text(seconds: float) -> str:
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """`initial`: units already done before this run (a resumed campaign): counted in the bar,
    not in the rate."""

    def __init__(self, total: int, label: str = "", stream=None, unit: str = "", initial: int = 0):
        self.total = max(1, total)
        self.done = min(self.total, max(0, initial))
        self.initial = self.done
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self._last_decile = -1

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done = min(self.total, self.done + n)
        frac = self.done / self.total
        elapsed = time.monotonic() - self.start
        ran = self.done - self.initial
        rate = ran / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        unit = f" {self.unit}" if self.unit else ""
        text = (f"{self.label} [{bar}] {self.done}/{self.total}{unit} {100 * frac:5.1f}% "
                f"{rate:.3g}/s {duration_text(elapsed)} eta {duration_text(eta)} {note}").rstrip()
        if self.tty:
            self.stream.write("\r" + text[:120].ljust(120))
            self.stream.flush()
        else:
            decile = int(frac * 10)
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(text + "\n")
                self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
