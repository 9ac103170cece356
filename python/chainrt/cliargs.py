"""The one validation layer of chainrt's command line (docs/cli.md).

Every command declares its durations, counts, priorities, seeds and paths with these argparse
types, so that a bad value is refused before any work starts, with the same one-line error in
every command (``chainrt CMD: error: argument --duration: ...``, exit 1), and output paths are
checked before a long simulation or run rather than after it. Results are written with
:func:`write_atomic` (temporary file, fsync, rename: a report is whole or absent).

Exit codes, shared by every command (the constants below):
0 success; 1 error (bad input, invalid model, a run whose processes failed, a report that could
not be written); 2 a negative verdict (not schedulable, a deadline missed with ``--fail-on-miss``);
130 interrupted (Ctrl-C or SIGTERM; the figures until then are still reported).
"""

from __future__ import annotations

import argparse
import os
import stat
import tempfile
from pathlib import Path

from . import _cli_interrupt_state, _core
from ._core import MAX_DURATION_NS, MIN_PERIOD_NS, parse_duration, pretty_duration
from .model import load_model_or_report

OK, ERROR, NEGATIVE, INTERRUPTED = 0, 1, 2, 130


class ArgumentError(Exception):
    """A bad command line, as one line (``chainrt CMD: error: ...``): raised by argparse's error
    and by a command that checks its arguments against each other; the CLI prints it, exit 1."""

# A duration on the command line: at most one day (a run or a simulation longer than that is a
# typo; the model's own limit for a single duration is 1 h, docs/model.md).
MAX_CLI_DURATION_NS = 86_400 * 1_000_000_000
# Seeds are unsigned 64-bit in the C++ core; chainrt takes 0..2^63-1.
MAX_SEED = 2**63 - 1


def duration(text: str, *, allow_zero: bool = False, max_ns: int = MAX_CLI_DURATION_NS) -> int:
    """A duration with a unit (``10s``, ``500ms``, ``250us``, ``100ns``, ``2min``) in nanoseconds."""

    try:
        d = parse_duration(str(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: {e}") from None
    if d is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (a number and a unit: ns, us, ms, s, min)")
    d = int(d)
    if d < 0 or (d == 0 and not allow_zero):
        raise argparse.ArgumentTypeError(f"{text!r}: must be {'zero or ' if allow_zero else ''}positive")
    if d > max_ns:
        raise argparse.ArgumentTypeError(f"{text!r}: longer than chainrt's limit of {max_ns // 3_600_000_000_000} h")
    return d


def period(text: str) -> int:
    """A period that goes into a model (a reservation, a timer): within the model's limits
    (docs/model.md "Limits": at least 10 us, at most 1 h), so that no command writes a model
    that ``chainrt check`` then refuses."""
    d = duration(text)
    if d < MIN_PERIOD_NS:
        raise argparse.ArgumentTypeError(f"{text!r}: shorter than a model's minimum period of {pretty_duration(MIN_PERIOD_NS)}")
    if d > MAX_DURATION_NS:
        raise argparse.ArgumentTypeError(f"{text!r}: longer than a model's limit of 1 h")
    return d


def duration_or_zero(text: str) -> int:
    return duration(text, allow_zero=True)


def duration_text(text: str) -> str:
    """A duration checked as :func:`duration` but kept as written (passed on to another command)."""
    duration(text)
    return str(text).strip()


def count(lo: int, hi: int | None = None, what: str = "a whole number"):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            v = int(str(text), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if v < lo or (hi is not None and v > hi):
            bound = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
            raise argparse.ArgumentTypeError(f"{text!r}: must be {bound}")
        return v

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


def percentage(lo: float, hi: float, *, bare: str = "fraction"):
    """An argparse type: a percentage ``20%`` within [lo %, hi %], as a fraction. A number without
    ``%`` is a fraction (``0.2``), or with ``bare="percent"`` a percentage (``20``)."""
    scale = 100.0 if bare == "percent" else 1.0

    def parse(text: str) -> float:
        t = str(text).strip()
        try:
            v = float(t[:-1]) / 100.0 if t.endswith("%") else float(t) / scale
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 20%)") from None
        if not lo / 100.0 <= v <= hi / 100.0:  # (NaN fails too)
            raise argparse.ArgumentTypeError(f"{text!r}: must be {lo:g}%..{hi:g}%")
        return v

    parse.__name__ = "percentage"
    return parse


def number(lo: float, hi: float, what: str = "a number", *, above: bool = False):
    """An argparse type: a finite number in [lo, hi] (``above=True``: in (lo, hi]); NaN, infinities
    and numbers out of the range are refused with the range in the message."""

    def parse(text: str) -> float:
        try:
            v = float(str(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        inside = (lo < v if above else lo <= v) and v <= hi  # NaN is outside
        if not inside:
            raise argparse.ArgumentTypeError(f"{text!r}: must be {'above' if above else 'at least'} {lo:g} "
                                             f"and at most {hi:g}")
        return v

    parse.__name__ = "number"
    return parse


#: Seconds given as a plain number (an experiment's run length): above 0, at most one day.
seconds = number(0, MAX_CLI_DURATION_NS / 1e9, "a number of seconds", above=True)


def check_order(command: str, args, low: str, high: str, *, strict: bool = False) -> None:
    """Raises ArgumentError when the flag `low` (e.g. ``--u-min``) is above the flag `high` (or,
    `strict`, not below it): flags that bound a range together."""
    a, b = (getattr(args, f.lstrip("-").replace("-", "_")) for f in (low, high))
    if a > b or (strict and a == b):
        raise ArgumentError(f"chainrt {command}: error: {low} {a:g} must be {'below' if strict else 'at most'} "
                            f"{high} {b:g}")


def lock_file(text: str) -> str:
    """A measurement lock (an flock(2) file): a regular file, or one that can be created; empty for
    none. A FIFO, device or folder is refused (opening a FIFO waits forever for a reader)."""
    if not text:
        return ""
    try:
        st = os.stat(text)
    except FileNotFoundError:
        problem = output_file_problem(text)
        if problem:
            raise argparse.ArgumentTypeError(problem) from None
        return text
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise argparse.ArgumentTypeError(f"{text}: not a regular file (a lock file must be one)")
    return text


threads = count(1, 64, "a thread count")        # threads per executor (sched::kMaxThreads)
fifo_priority = count(1, 99, "a SCHED_FIFO priority")
seed = count(0, MAX_SEED, "a seed")
ros_domain = count(0, 232, "a ROS domain id")  # DDS: 0..232 with the default port mapping
positive = count(1, None, "a positive whole number")


def time_factor(text: str) -> tuple[int, float]:
    """``AT:FACTOR``: from AT (a duration, zero allowed) on, a positive factor (``2s:1.5``)."""
    at, sep, factor = str(text).rpartition(":")
    try:
        f = float(factor)
    except ValueError:
        f = 0.0
    if not sep or not 0 < f < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: want AT:FACTOR with a positive FACTOR, e.g. 2s:1.5")
    return duration(at, allow_zero=True), f


# The command-line form of each kind of run option (runtime/run_options.def; run_spec.hpp's
# RunOptionKind checks the same in chainrt-run): argparse keyword arguments.
RUN_OPTION_ARGUMENTS = {
    "Text": lambda o: {"metavar": o["key"].upper()},
    "Time": lambda o: {"type": duration_or_zero},
    "PositiveTime": lambda o: {"type": duration},
    "OptionalPeriod": lambda o: {"type": duration, "nargs": "?", "const": duration(o["default"]),
                                 "default": None, "metavar": "PERIOD"},
    "PolicyName": lambda o: {"choices": [p["name"] for p in _core.policies()]},
    "ThreadCount": lambda o: {"type": threads},
    "FifoPriority": lambda o: {"type": fifo_priority, "metavar": "PRIO"},
    "On": lambda o: {"action": "store_true", "default": False},
    "Off": lambda o: {"action": "store_true", "default": False},
    "WcetSteps": lambda o: {"type": time_factor, "action": "append", "default": [], "metavar": "AT:FACTOR"},
}


def add_run_options(parser) -> list[str]:
    """Adds the options of a run that a user gives (runtime/run_options.def, scope "user") to
    ``parser``, each as ``--key`` with its kind's type and the table's help and default; returns
    their keys (the argparse destinations: :func:`run_option_values` reads them back)."""
    keys = []
    for o in _core.run_options():
        if o["scope"] != "user":
            continue
        kw = {"default": o["default"], **RUN_OPTION_ARGUMENTS[o["kind"]](o)}
        shown = f" (default {o['default']})" if o["default"] and o["kind"] != "OptionalPeriod" else ""
        parser.add_argument(o["flag"], dest=o["key"], help=o["help"] + shown, **kw)
        keys.append(o["key"])
    return keys


def run_option_values(args, keys: list[str]) -> dict:
    """The run options ``keys`` (:func:`add_run_options`) as parsed into ``args``, by key."""
    return {k: getattr(args, k) for k in keys}


def cpu_core(text: str) -> int:
    n = os.cpu_count() or 1
    return count(0, n - 1, "a CPU core number")(text)


def input_file(text: str) -> str:
    """An existing, readable regular file (a model, a trace)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a directory, not a file")
    if not os.access(p, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text}: not readable")
    if is_pipe(text):  # reading one could wait forever for a writer
        raise argparse.ArgumentTypeError(f"{text}: is a FIFO or socket, not a file")
    return text


def open_text(path: str | os.PathLike):
    """A text file opened for reading as CSV (``newline=""``), gunzipped when its name ends in
    ``.gz`` (the measured series kept in ``docs/`` are stored compressed)."""
    if os.fspath(path).endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def input_dir(text: str) -> str:
    """An existing folder (a recorded trace)."""
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder")
    return text


def model_path(text: str) -> str:
    """A model file that the command reads with its own loader (whose messages say what is wrong
    with it): kept as written, and known as an input, so that no output of the command may be
    the same file (:func:`same_file_problem`)."""
    return text


def budget_period(text: str) -> tuple[int, int]:
    """A reservation ``BUDGET/PERIOD`` (``2ms/10ms``) as (budget, period) in ns, 0 < budget <= period."""
    if isinstance(text, tuple):  # already parsed (a default given as a pair)
        return text
    parts = str(text).split("/")
    try:
        budget, per = (duration(x) for x in parts) if len(parts) == 2 else (0, 0)
    except argparse.ArgumentTypeError:
        budget, per = 0, 0
    if not 0 < budget <= per:
        raise argparse.ArgumentTypeError(f"{text!r}: want BUDGET/PERIOD with 0 < budget <= period, e.g. 2ms/10ms")
    return budget, per


def is_pipe(path: str | os.PathLike) -> bool:
    """Is `path` a FIFO or a socket (whose reading can wait forever)?"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def output_file(text: str) -> str:
    """A file chainrt may write: its folder exists and is writable, and it is not a directory.
    Checked when the arguments are parsed, so that nothing is computed for an unwritable path."""
    problem = output_file_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _cannot_write_in(folder: Path) -> str | None:
    """Why no file can be created in `folder` (a real probe: permission bits say nothing for
    root, nor for read-only or pseudo filesystems), or None."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".chainrt-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
        return None
    except OSError as e:
        return e.strerror or str(e)


def output_file_problem(text: str) -> str | None:
    if not text:
        return "an empty path"
    p = Path(text)
    if p.is_dir():
        return f"{text}: is a directory"
    parent = p.parent if str(p.parent) else Path(".")
    if p.exists():
        if not os.access(p, os.W_OK):
            return f"{text}: not writable"
        if p.is_file():  # written by rename from a temporary file next to it
            why = _cannot_write_in(parent)
            return f"{text}: cannot write in {parent} ({why})" if why else None
        return None
    if not parent.is_dir():
        return f"{text}: the folder {parent} does not exist"
    why = _cannot_write_in(parent)
    return f"{text}: cannot write in {parent} ({why})" if why else None


def output_dir(text: str) -> str:
    """A folder chainrt will write into: an existing writable folder, or one that can be created
    (its nearest existing parent is a writable folder). Nothing is created while parsing."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    p = Path(text)
    if p.exists():
        if not p.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: exists and is not a folder")
        why = _cannot_write_in(p)
        if why:
            raise argparse.ArgumentTypeError(f"{text}: cannot write in the folder ({why})")
        return text
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    why = _cannot_write_in(parent) if parent.is_dir() else "not a folder"
    if why:
        raise argparse.ArgumentTypeError(f"{text}: cannot be created in {parent} ({why})")
    return text


#: The argparse types whose values a command reads, and those it writes: every command's paths are
#: told apart by the type they are declared with, so that no command keeps a list of its own.
INPUT_TYPES = (input_file, input_dir, model_path)
OUTPUT_TYPES = (output_file, output_dir)


def path_roles(actions) -> dict[str, str]:
    """{dest: "input" | "output"} of the argparse actions declared with a path type."""
    roles = {}
    for a in actions:
        if a.type in INPUT_TYPES:
            roles[a.dest] = "input"
        elif a.type in OUTPUT_TYPES:
            roles[a.dest] = "output"
    return roles


def same_file_problem(args, roles: dict[str, str]) -> str | None:
    """Why the command may not run because an output path names the same file as an input (or as
    another output): it would destroy the input before or while reading it. Symbolic and hard
    links count (same device and inode). None when every path is distinct."""
    def paths(role):
        for dest, r in roles.items():
            if r != role:
                continue
            value = getattr(args, dest, None)
            for v in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(v, str) and v:
                    yield v

    def key(path):
        try:
            st = os.stat(path)
        except OSError:  # not there yet: the path it will be created at
            return ("new", os.path.realpath(path))
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            return None  # /dev/null, /dev/stdout: writing there destroys nothing
        return ("file", st.st_dev, st.st_ino)

    seen = {}
    for path in paths("input"):
        k = key(path)
        if k is not None:
            seen.setdefault(k, ("input", path))
    for path in paths("output"):
        k = key(path)
        if k is None:
            continue
        if k in seen:
            role, other = seen[k]
            what = "an input" if role == "input" else "another output"
            same = f"is both {what} and an output" if path == other else f"is the same file as {other}, {what}"
            return f"{path}: {same} of this command; writing it would destroy it (give the output another path)"
        seen[k] = ("output", path)
    return None


def with_model(command: str):
    """Decorates a command's ``run(args, model)``: the command's MODEL argument is loaded once,
    here, and passed down; an invalid model is reported (every diagnostic, file:line:column) and
    the command ends with ERROR before any work."""

    def wrap(run):
        def run_with_model(args) -> int:
            model = load_model_or_report(args.model, command)
            return ERROR if model is None else run(args, model)

        run_with_model.__doc__ = run.__doc__
        return run_with_model

    return wrap


def fail(command: str, message) -> int:
    """Report a command's error in its one line on stderr (``chainrt CMD: message``); ERROR."""
    import sys
    print(f"chainrt {command}: {message}", file=sys.stderr)
    return ERROR


def write_outputs(command: str, files: dict) -> bool:
    """Write every {path: text} asked for (a None path: not asked for) with :func:`write_atomic`;
    False after reporting the first that cannot be written (the others are not tried)."""
    for path, make in files.items():
        if not path:
            continue
        try:
            write_atomic(path, make() if callable(make) else make)
        except (OSError, RuntimeError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else e
            fail(command, f"cannot write {path}: {why}")
            return False
    return True


def write_atomic(path: str | os.PathLike, data: str | bytes, durable: bool = True) -> None:
    """Writes `data` to `path` whole or not at all: a temporary file in the same folder, fsync,
    rename over `path` (then the folder is fsynced). A special file (``/dev/stdout``,
    ``/dev/null``, ``/dev/full``) is written directly, and every write is checked. Raises OSError
    (the caller reports it and exits 1); a failed write leaves no temporary file behind.
    `durable=False` leaves out the fsyncs (tens of ms on a busy disk): the file is still whole or
    absent for every reader and after a crash of the process, but a power loss may leave it
    empty — for files whose loss only costs recomputing them (a campaign's batches)."""
    p = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    try:
        special = p.exists() and not stat.S_ISREG(p.stat().st_mode)
    except OSError:
        special = False
    if special:
        fd = os.open(p, os.O_WRONLY)
        try:
            _write_all(fd, raw)
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(p)) from None
        finally:
            os.close(fd)
        return
    folder = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            _write_all(fd, raw)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if not durable:
        return
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass  # the rename is done; a folder that cannot be fsynced (some filesystems) is no error


class atomic_path:
    """``with atomic_path(path) as tmp: writer(tmp)``: for writers that take a path (CSV, PNG
    libraries). `tmp` is in the same folder; on success it is fsynced and renamed over `path`,
    on any failure removed — `path` is whole or untouched."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def __enter__(self) -> str:
        folder = self.path.parent if str(self.path.parent) else Path(".")
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=self.path.suffix, dir=folder)
        os.close(fd)
        return self.tmp

    def __exit__(self, kind, value, tb) -> bool:
        if kind is None:
            try:
                fd = os.open(self.tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(self.tmp, self.path)
                return False
            except BaseException:
                self._drop()
                raise
        self._drop()
        return False

    def _drop(self) -> None:
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


def _write_all(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError("short write")
        view = view[n:]


def raise_if_interrupted() -> None:
    """Raises the KeyboardInterrupt of a Ctrl-C that the interpreter swallowed (inside a weakref
    callback or __del__; chainrt/__init__.py remembers every Ctrl-C of the command line)."""
    if _cli_interrupt_state["interrupted"]:
        raise KeyboardInterrupt


def interruptible(fn, *args, **kwargs):
    """Calls `fn` (a long C++ call that releases the GIL: a simulation, an analysis sweep) in a
    daemon thread and waits for it, so that Ctrl-C still ends the command at once (exit 130)
    instead of after the call returns. Exceptions of `fn` are raised here. Only for a call whose
    command has nothing left to write when interrupted."""
    import threading
    box: dict = {}

    def work():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    t = threading.Thread(target=work, name="chainrt-work", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.1)
            raise_if_interrupted()
    except KeyboardInterrupt:
        # The C++ call cannot be stopped and still holds Python objects: end the process here
        # (nothing of the command is left to write) rather than at interpreter exit.
        import sys
        print("chainrt: interrupted", file=sys.stderr)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED)
    if "error" in box:
        raise box["error"]
    return box["value"]

