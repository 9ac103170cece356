"""What a chainrt command leaves behind when it is killed (SIGKILL: no handler, no ``finally``).

A command that starts ROS 2 (``chainrt run``, ``profile``, ``bench``) creates Fast DDS
shared-memory files in /dev/shm — its own participant's and its children's — and sometimes a
staging folder of its output. Its normal exit paths remove them (remove_stale_shm); a
killed process cannot. :func:`guard` therefore starts a small watcher process (this module run
as ``python -m chainrt.janitor``) that holds a pipe to the command: when the pipe closes without
the command having said "done", the command died, and the watcher

1. waits (at most ``GRACE_S``) until no live process maps or holds the Fast DDS files created
   since the guard began (the command's children end by themselves: they are tied to it with
   PR_SET_PDEATHSIG, runtime.tied_to_this_process),
2. removes those files (never older ones, nor files still in use: other ROS 2 programs keep
   theirs), and the paths the command registered with :meth:`Guard.remove_if_killed`,
3. exits.

The watcher runs in its own session (a terminal's Ctrl-C to the command's process group does not
reach it) and has no work to do while the command lives. Guards nest: only the outermost starts
a watcher.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import subprocess
import sys
import time

GRACE_S = 30.0

_active: list["Guard"] = []
_sweeping: list[subprocess.Popen] = []  # watchers that remove what is left when this process exits

# Fast DDS' shared-memory transport files in /dev/shm (segments, port queues, their locks, data
# sharing pools): "fastdds_*" since Fast DDS 3 (kilted), "fastrtps_*" before (jazzy); and the
# segments of accelerators shared by a run's processes, "chainrt-acc-*"
# (runtime/accelerator_shm.hpp: the last user removes one; users all killed cannot).
SHM_PATTERNS = ("fastdds_*", "fastrtps_*", "fast_datasharing*", "sem.fastdds_*", "sem.fastrtps_*", "chainrt-acc-*")


def shm_entries() -> set[str]:
    """The shared-memory files (SHM_PATTERNS) in /dev/shm now."""
    out = set()
    for pat in SHM_PATTERNS:
        out.update(glob.glob(os.path.join("/dev/shm", pat)))
    return out


def shm_in_use(paths: set[str]) -> set[str]:
    """The paths of `paths` that a live process has open or mapped (/proc/*/fd, /proc/*/maps)."""
    used = set()
    if not paths:
        return used
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    for p in paths:
                        if p in line:
                            used.add(p)
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target in paths:
                    used.add(target)
        except (OSError, UnicodeDecodeError):
            continue
    return used


def remove_stale_shm(before: set[str]) -> list[str]:
    """Removes the shared-memory files (SHM_PATTERNS) created since `before` that no live process
    uses any more (a killed child cannot remove its own); returns what was removed. Files of
    other ROS 2 programs (older, or still in use) are never touched."""
    fresh = shm_entries() - before
    stale = fresh - shm_in_use(fresh)
    removed = []
    for p in sorted(stale):
        try:
            os.unlink(p)
            removed.append(p)
        except OSError:
            pass
    return removed


class Guard:
    """The command side: a pipe to the watcher (or nothing when it could not be started)."""

    def __init__(self) -> None:
        self.before = shm_entries()
        self.proc: subprocess.Popen | None = None
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "chainrt.janitor", "--for", str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                env={**os.environ, "PYTHONPATH": _package_root() + os.pathsep + os.environ.get("PYTHONPATH", "")})
            self._send({"before": sorted(self.before)})
        except OSError:
            self.proc = None  # no watcher: the normal exit paths still clean up

    def _send(self, msg: dict) -> None:
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass

    def remove_if_killed(self, path: str | os.PathLike) -> None:
        """`path` (a file or folder this command created) is removed if the command is killed."""
        self._send({"remove": os.path.abspath(path)})

    def keep(self, path: str | os.PathLike) -> None:
        """`path` was handed to the user after all (e.g. a partial output named in a message)."""
        self._send({"keep": os.path.abspath(path)})

    def done(self, sweep_at_exit: bool = False) -> None:
        """The command ends normally: the watcher exits without touching anything, or, with
        `sweep_at_exit`, stays until this process exits and then removes the Fast DDS files
        created since the guard began that nothing uses any more (never the registered paths:
        the command's outputs are the user's)."""
        self._send({"done": True, "sweep": sweep_at_exit})
        if sweep_at_exit and self.proc is not None:
            _sweeping.append(self.proc)  # its pipe stays open until this process exits
            return
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def guard():
    """``with guard() as g:`` around the part of a command that starts ROS 2 processes or
    participants; ``g.remove_if_killed(path)`` registers more to remove on a kill."""
    if _active:
        yield _active[0]
        return
    g = Guard()
    _active.append(g)
    try:
        yield g
    finally:
        _active.pop()
        # What a child killed during the command left (its segment, its port files) goes now where
        # nothing uses it any more; a file still held -- a listener of this process keeps a dead
        # peer's segment mapped until the process exits -- goes when the process exits (the watcher)
        remove_stale_shm(g.before)
        g.done(sweep_at_exit=bool(shm_entries() - g.before))


def current() -> Guard | None:
    return _active[0] if _active else None


def _watch() -> int:
    """The watcher: reads the command's messages until "done" (exit) or end of file (killed)."""
    import shutil
    before: set[str] = set()
    remove: list[str] = []
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("done"):
            if not msg.get("sweep"):
                return 0
            remove = []  # a normal end: the outputs stay; only the shared memory is swept
            continue
        if "before" in msg:
            before = set(msg["before"])
        if "remove" in msg and msg["remove"] not in remove:
            remove.append(msg["remove"])
        if "keep" in msg and msg["keep"] in remove:
            remove.remove(msg["keep"])
    # The command died, or ended asking for a sweep at its exit. Its children stop on their own
    # (SIGTERM from the kernel): wait for them to let go of the shared memory, then remove what
    # is left of this run.
    end = time.monotonic() + GRACE_S
    while True:
        fresh = shm_entries() - before
        used = shm_in_use(fresh)
        if not used or time.monotonic() > end:
            break
        time.sleep(0.1)
    for p in sorted(fresh - used):
        with contextlib.suppress(OSError):
            os.unlink(p)
    for p in remove:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(p)
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command's Ctrl-C is the command's
    sys.exit(_watch())
