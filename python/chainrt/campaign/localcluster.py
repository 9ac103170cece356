"""``python -m chainrt.campaign.localcluster WORKERS``: the embedded local Dask cluster's host.

Started by a campaign in a session of its own (a terminal's Ctrl-C reaches only the chainrt
command, never the workers, which would print their own tracebacks), it runs a Dask
``LocalCluster`` on loopback: the scheduler on a free port and WORKERS single-threaded worker
processes, each under a nanny that restarts it if it dies. It prints the scheduler's address on
stdout and runs until its stdin closes (the command is done, or died) or SIGTERM, then ends
itself and its worker processes at once (by PID): every finished batch is already kept by the
command, and a graceful close of the workers costs seconds. Its log (Dask's warnings: a worker restarted, ...) goes to stderr, which the
campaign sends to its folder's ``cluster.log``.
"""

from __future__ import annotations

import os
import signal
import sys


def _end(*_args) -> None:
    """Ends every process this host started (its workers, by PID), then itself."""
    import psutil  # (a dependency of Dask distributed)
    for child in psutil.Process().children(recursive=True):
        try:
            child.kill()
        except psutil.Error:
            pass
    os._exit(0)


def _inherit_autogroup_nice() -> None:
    """A session of its own is also a scheduling group of its own where the kernel groups tasks
    by session (CONFIG_SCHED_AUTOGROUP): the cluster takes the CPU priority of the command's
    group, as its processes would have had in the command's session. Nothing where the kernel
    has no such groups, or where raising the priority is not allowed."""
    try:
        with open(f"/proc/{os.getppid()}/autogroup") as f:
            nice = int(f.read().split("nice")[1])
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
    except (OSError, ValueError, IndexError):
        pass


def main() -> int:
    _inherit_autogroup_nice()
    signal.signal(signal.SIGTERM, _end)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command's to handle, never ours
    workers = int(sys.argv[1])
    # Workers come from a fork server that has Dask and chainrt's extension loaded already: a
    # worker (the first ones, and one restarted after a crash) starts in a fraction of a second
    # instead of importing them again. Started first, it loads them while this process does.
    import multiprocessing.forkserver
    multiprocessing.set_forkserver_preload(["distributed", "chainrt._core"])
    multiprocessing.forkserver.ensure_running()
    import logging

    import dask
    from distributed import LocalCluster

    # No dashboard (it would take a port and needs bokeh) and none of what feeds it: the worker's
    # statistical profiler (100 stack samples a second, next to the batch's thread) and a system
    # monitor twice a second; no memory manager pausing or restarting workers: a batch's memory is
    # the OS's to limit. The event loops' watchdog (`tick`, which only warns of a loop blocked for
    # seconds) every second instead of every 20 ms: at 20 ms the scheduler, the nannies and the
    # workers of an idle 2-worker cluster take 88 ms of CPU a second between them, 19 ms at 1 s —
    # CPU that the batches need when every core runs one (docs/campaigns.md, "Measured").
    dask.config.set({"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
                     "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": False,
                     "distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.interval": "5s",
                     "distributed.admin.tick.interval": "1s",
                     "distributed.worker.multiprocessing-method": "forkserver"})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           scheduler_port=0, dashboard_address=None, memory_limit=0,
                           silence_logs=logging.WARNING)
    sys.stdout.write(cluster.scheduler_address + "\n")
    sys.stdout.flush()
    while sys.stdin.buffer.read(4096):
        pass
    _end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
