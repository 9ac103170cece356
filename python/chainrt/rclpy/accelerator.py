"""Shared accelerators from rclpy callbacks, with the priority of the chain whose callback runs.

A callback that chainrt.rclpy's ChainExecutor dispatches calls :func:`run`; the request carries
that callback's effective priority (the model's: the callback's own priority, else its
chain's, ranked by position in the chain), which the executor supplies — the callback passes
none (PiCAS Sec. IV; the server after Kim et al., JSA 2018)::

    from chainrt.rclpy import accelerator

    gpu = accelerator.SharedAccelerator("gpu", access="server")   # once, before spinning

    def on_image(msg):                       # any callback of any node
        accelerator.run("gpu", copy_in=0.001, kernel=0.008, copy_out=0.001)   # emulated device
        result = accelerator.run("gpu", job=lambda: infer(msg))               # real work

A call blocks the callback until its request is done, in both modes: ``direct`` serves
requests first come, first served; ``server`` runs the most urgent queued request next (a
running one is never preempted). The caller waits without the GIL, so the executor's other
threads and the user's own threads go on. A ``job`` runs on the accelerator's thread (with the
GIL, after the emulated parts); its return value is returned, what it raises is raised in the
caller, and the accelerator goes on serving.

Outside a chainrt dispatch (a plain thread, rclpy's own executors) and for a callback the
model does not describe, a request has no priority: it is served after every prioritized
request, first come, first served among those (the lowest priority; never an error).
:func:`dispatch_priority` says which case a caller is in.

The device is the emulated one (copy-in, kernel and copy-out as waits of their durations on the
accelerator's own thread, one request at a time); no GPU backend is built into chainrt.rclpy.
"""

from __future__ import annotations

import atexit
import weakref
from typing import Any, Callable, Iterable

from chainrt.rclpy.binding import _load_loop_module

__all__ = ["SharedAccelerator", "run", "dispatch_priority"]


# Accelerators not closed by their owner are closed before the interpreter goes away: a queued
# Python job needs the interpreter on the accelerator's thread.
_open: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for a in list(_open):
        a.close()


def _mod():
    return _load_loop_module()


def _ns(seconds: float, what: str) -> int:
    if not isinstance(seconds, (int, float)) or seconds != seconds or seconds < 0 or seconds > 1e6:
        raise ValueError(f"{what} must be a duration in seconds, 0..1e6, not {seconds!r}")
    return int(round(seconds * 1e9))


class SharedAccelerator:
    """One device of this process, registered under ``name`` until :meth:`close`.

    :param access: ``"server"`` (chain-priority order) or ``"direct"`` (first come, first served).
    :param overhead: the server thread's CPU time per request, in seconds.
    :param fifo_priority: SCHED_FIFO priority of the accelerator's thread (None: unchanged).
    :param cores: its pinning (empty: any core).
    :param capacity: requests queued at once (a full queue is an error for the caller).
    :param trace_capacity: served requests kept for :meth:`trace`.
    :param shared: share the device with other processes under this name (shared memory,
        docs/accelerator.md); every user gives the same name, access and capacity.
    :param serve: with ``shared``, whether this process runs the server (exactly one should);
        the others' requests, and their jobs' turns, are served in chain-priority order by it.
    """

    def __init__(self, name: str, access: str = "server", *, overhead: float = 0.0,
                 fifo_priority: int | None = None, cores: Iterable[int] = (), capacity: int = 256,
                 trace_capacity: int = 4096, shared: str | None = None, serve: bool = True) -> None:
        self.name = name
        _mod().accelerator_add(name, access, _ns(overhead, "overhead"), fifo_priority, list(cores),
                               int(capacity), int(trace_capacity), shared or "", bool(serve))
        self._open = True
        _open.add(self)

    def run(self, copy_in: float = 0.0, kernel: float = 0.0, copy_out: float = 0.0, *,
            job: Callable[[], Any] | None = None, site: int | None = None) -> Any:
        """:func:`run` on this accelerator."""
        return run(self.name, copy_in, kernel, copy_out, job=job, site=site)

    def requests(self) -> int:
        """Requests issued so far."""
        return _mod().accelerator_requests(self.name)

    def trace(self) -> list[dict]:
        """Served requests in completion order: site, issued, start, finish (ns, CLOCK_MONOTONIC)."""
        return [{"site": s, "issued": i, "start": b, "finish": f}
                for s, _seg, i, b, f in _mod().accelerator_trace(self.name)]

    def close(self) -> None:
        """Serve what is queued, stop the accelerator's thread and unregister it."""
        if self._open:
            self._open = False
            _mod().accelerator_remove(self.name)

    def __enter__(self) -> SharedAccelerator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run(accelerator: str, copy_in: float = 0.0, kernel: float = 0.0, copy_out: float = 0.0, *,
        job: Callable[[], Any] | None = None, site: int | None = None) -> Any:
    """Run one request on the accelerator named ``accelerator`` and return when it is done.

    ``copy_in``, ``kernel``, ``copy_out``: the emulated device's durations in seconds. ``job``: a
    callable run on the accelerator's thread after them; its result is returned. ``site``: the
    request's tag in the accelerator's trace (default: the dispatching callback's id).
    Thread-safe; the caller waits without the GIL.
    """
    result: list[Any] = []
    wrapped = None if job is None else (lambda: result.append(job()))
    _mod().accelerator_run(accelerator, _ns(copy_in, "copy_in"), _ns(kernel, "kernel"),
                           _ns(copy_out, "copy_out"), wrapped, site)
    return result[0] if result else None


def dispatch_priority() -> tuple[bool, int | None]:
    """(whether this thread runs a chainrt.rclpy dispatch now, that callback's priority or None)."""
    return _mod().dispatch_priority()
