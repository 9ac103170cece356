"""Where a campaign's batches run.

- ``InProcess``: one batch after the other in this process (the reference every other engine
  must reproduce, and the runner of a single batch).
- ``Dask``: Dask distributed. Without an address it starts the embedded local cluster (a host
  process of its own on loopback, one single-threaded worker process per core, mutual TLS with
  credentials made for it and readable only by this user, see ``localcluster``); with
  ``--cluster ADDRESS`` it sends the same batches to a running cluster's scheduler (plain TCP, or
  TLS with the user's Dask TLS configuration). Every batch is one task:
  ``execute(task, identity, batch)``; the task function travels by reference (module and
  name), so every worker runs chainrt itself, and a result made by another build is refused.
  A worker that dies mid-batch (killed, out of memory, its machine gone) loses nothing: the
  scheduler gives the batch to another worker (Dask's ``distributed.scheduler.allowed-failures``,
  3 by default; a batch that ended more workers than that is reported as broken).

An engine's ``run(spec, pending)`` yields ``(batch, record, error)`` as batches finish, in any
order: a record (the task's result, where and how long it ran) or the one-line error of a
batch that raised. Ctrl-C raises KeyboardInterrupt out of ``run``; ``close()`` then stops what
the engine started.
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
from pathlib import Path

from ..cliargs import raise_if_interrupted
from .localcluster import security as local_security
from .plan import Batch, build_id, Spec
from .store import CampaignError


def execute(task, identity: dict, batch: dict) -> dict:
    """One batch on a worker: the task's result and where and how long it ran (``seconds``: wall
    time; ``cpu_seconds``: the CPU time of the thread that ran it; the difference is time the
    thread was off the CPU: waiting for a core that another thread had, or for the GIL)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    result = task(identity, batch)
    return {"result": result, "build": build_id(), "host": socket.gethostname(), "pid": os.getpid(),
            "seconds": round(time.perf_counter() - t0, 6), "cpu_seconds": round(time.thread_time() - c0, 6)}


# The transports a running scheduler is reached by: plain TCP, TLS (Dask's TLS configuration
# gives the client's certificate), and Dask's websockets.
SCHEMES = ("tcp", "tls", "ws", "wss")


def cluster_address(text: str) -> str:
    """``--cluster``: a scheduler's address, SCHEME://HOST:PORT (HOST:PORT means tcp://)."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    hint = "give the scheduler's address as tcp://HOST:PORT, or tls://HOST:PORT (docs/campaigns.md)"
    if scheme not in SCHEMES:
        raise argparse.ArgumentTypeError(f"{text!r}: not the address of a running Dask scheduler; {hint}")
    try:
        parts = urllib.parse.urlsplit(f"{scheme}://{rest}")
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or not parts.hostname or port is None or port == 0 or parts.path or parts.query \
            or parts.fragment or parts.username is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: no host and port; {hint}")
    return f"{scheme}://{rest}"


def _group_running(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs. Ended ones that only wait to be reaped
    (zombies: the host's workers, orphaned when it exits, are reaped by init, which may take a
    second on a busy machine) do not count: they hold no CPU, memory or port."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: any member counts
        try:
            os.killpg(pgid, 0)
            return True
        except OSError:
            return False
    for pid in entries:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def _line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def describe(err: BaseException, tb: str = "") -> str:
    text = (str(err).strip().splitlines() or [""])[0]
    line = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if os.environ.get("CHAINRT_DEBUG") and tb:
        line += "\n" + tb.rstrip()
    return line


def _private_temporary(home: Path | None, prefix: str) -> Path:
    """A new folder of mode 0700 in `home` (the campaign folder), after removing what a killed
    command left there under the same prefix (the campaign folder is locked: none is in use)."""
    if home is not None:
        for stale in home.glob(prefix + "*"):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=home))


class InProcess:
    """Batches one after the other in this process. Each runs in a thread of its own so that
    Ctrl-C is noticed at once: a batch still running then (``busy``) cannot be stopped, and
    the command ends the process once the finished batches are kept. The batches' temporary
    files go into a folder of the campaign's own (`home`), removed by ``close()``, so that a
    batch abandoned mid-way leaves nothing in /tmp."""

    name = "this process"

    def __init__(self, home: Path | None = None):
        self.busy = False
        self.home = home
        self._temporary: Path | None = None
        self._saved_tempdir: str | None = None

    def start(self) -> None:
        if self.home is not None:
            self._temporary = _private_temporary(self.home, ".tmp-")
            self._saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(self._temporary)

    def workers(self) -> int:
        return 1

    def run(self, spec: Spec, pending: list[Batch]):
        for b in pending:
            box: dict = {}

            def work(b=b, box=box):
                try:
                    box["record"] = execute(spec.task, spec.identity, b.as_dict())
                except BaseException as e:  # handed to the caller's thread
                    box["error"] = describe(e, traceback.format_exc())

            t = threading.Thread(target=work, name=f"chainrt-batch-{b.index}", daemon=True)
            self.busy = True
            t.start()
            while t.is_alive():
                t.join(0.1)
                raise_if_interrupted()
            self.busy = False
            yield b, box.get("record"), box.get("error")

    def close(self) -> None:
        if self._temporary is not None:
            tempfile.tempdir = self._saved_tempdir
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None


class Dask:
    """Batches as Dask tasks: on the embedded local cluster (`address` None) or on a running
    cluster's scheduler."""

    START_TIMEOUT_S = 120

    def __init__(self, address: str | None = None, workers: int = 1, log_path: Path | None = None):
        self.address = address
        self.local_workers = workers
        self.log_path = log_path
        self.host: subprocess.Popen | None = None
        self.credentials: Path | None = None  # the local cluster's key and certificate (a 0700 folder)
        self.client = None
        self.busy = False
        self._futures: dict = {}

    @property
    def name(self) -> str:
        if self.host is not None:
            return f"a local Dask cluster of {self.local_workers} worker process" + \
                ("es" if self.local_workers != 1 else "")
        return f"the Dask cluster at {self.address}"

    def start(self) -> None:
        if self.address is None:
            import importlib.util
            if importlib.util.find_spec("cryptography") is None:  # the host makes the cluster's key with it
                raise CampaignError("the embedded local cluster needs the Python package cryptography (its TLS key); "
                                    "scripts/setup installs it, or use --in-process")
            self._spawn_host()  # first: it boots while this process imports Dask
        try:
            import dask
            from distributed import Client
        except ImportError as e:
            raise CampaignError(f"Dask distributed is not installed ({e}); scripts/setup installs it") from None
        # Dask's own log lines (a worker lost, a result fetched again) are not for the user: what
        # matters is reported by the campaign; the local cluster's go to cluster.log.
        import logging
        for name in ["distributed", "tornado"] + [n for n in logging.root.manager.loggerDict
                                                  if n.startswith(("distributed.", "tornado."))]:
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        security = None  # a running cluster: Dask's configuration (distributed.comm.tls.*)
        if self.host is not None:
            self.address = self._await_address()
            security = local_security(self.credentials)
        from dask.utils import parse_timedelta
        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")
        self._probe(security, timeout)
        try:
            self.client = Client(self.address, set_as_default=False, security=security, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as e:
            raise CampaignError(f"cannot reach the Dask scheduler at {self.address}: {_line(e)}") from None

    def _probe(self, security, timeout: float) -> None:
        """One connection to the scheduler, closed again, within `timeout` (Dask's
        distributed.comm.timeouts.connect, 30 s unless configured): Dask's own connect waits for
        the scheduler's handshake without a limit, so an address that accepts and never answers
        would hold the command forever. Raises CampaignError."""
        import asyncio

        from distributed.comm import connect
        from distributed.security import Security

        args = (security or Security()).get_connection_args("client")

        async def once():
            comm = await asyncio.wait_for(connect(self.address, timeout=timeout, **args), timeout)
            await comm.close()

        try:
            asyncio.run(once())
        except (asyncio.TimeoutError, TimeoutError):
            raise CampaignError(f"cannot reach the Dask scheduler at {self.address}: no answer within {timeout:g} s "
                                f"(distributed.comm.timeouts.connect)") from None
        except (OSError, ValueError, TypeError) as e:
            raise CampaignError(f"cannot reach the Dask scheduler at {self.address}: {_line(e)}") from None

    def workers(self) -> int:
        try:
            return len(self.client.scheduler_info().get("workers", {}))
        except Exception:
            return 0

    def run(self, spec: Spec, pending: list[Batch]):
        from distributed import as_completed

        tag = os.urandom(4).hex()
        for b in pending:
            f = self.client.submit(execute, spec.task, spec.identity, b.as_dict(), pure=False,
                                   key=f"chainrt-{spec.kind}-{b.index}-{tag}")
            self._futures[f] = b
        pending = as_completed(list(self._futures), loop=self.client.loop)
        for f in pending:
            b = self._futures.get(f)
            if b is None:
                continue
            if f.status == "cancelled":  # the scheduler forgot the task: the connection to it was lost
                raise CampaignError(f"the Dask scheduler at {self.address} dropped the campaign's tasks "
                                    f"(connection lost?); the finished batches are kept: run the command again")
            if f.status == "error":
                del self._futures[f]
                yield b, None, self._error(f)
                f.release()
                continue
            if f.status != "finished":  # its result went with a worker that died: computed again
                pending.add(f)
                continue
            try:
                record = f.result()
            except Exception:  # the same, noticed while fetching it
                pending.add(f)
                continue
            del self._futures[f]
            yield b, record, None
            f.release()

    @staticmethod
    def _error(f) -> str:
        err = f.exception()
        if type(err).__name__ == "KilledWorker":
            return ("it ended every worker process that ran it (a crash in the C++ code, or out of memory); "
                    "replay it alone to see the crash")
        tb = ""
        try:
            tb = "".join(traceback.format_tb(f.traceback()))
        except Exception:
            pass
        return describe(err, tb)

    def close(self) -> None:
        if self.client is not None:
            try:
                if self._futures:
                    self.client.cancel(list(self._futures), force=True)
                self.client.close(timeout=5)
            except Exception:
                pass  # the scheduler is gone or going: nothing left to tell it
            self.client = None
            self._futures.clear()
        self._stop_local()

    # --- the embedded local cluster -----------------------------------------------------------
    def _spawn_host(self) -> None:
        self.credentials = _private_temporary(self.log_path.parent if self.log_path else None, ".cluster-")
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        try:
            self.host = subprocess.Popen(
                [sys.executable, "-m", "chainrt.campaign.localcluster", str(self.local_workers), str(self.credentials)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()

    def _await_address(self) -> str:
        deadline = time.monotonic() + self.START_TIMEOUT_S
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or self.host.poll() is not None:
                where = f" (see {self.log_path})" if self.log_path else ""
                raise CampaignError(f"the local Dask cluster did not start{where}")
            ready, _, _ = select.select([self.host.stdout], [], [], min(left, 0.2))
            raise_if_interrupted()
            if ready:
                chunk = os.read(self.host.stdout.fileno(), 512)
                if not chunk:
                    continue
                line += chunk
        return line.decode().strip()

    def _stop_local(self) -> None:
        """Closes the host's stdin (it closes its cluster and exits); whatever of its process
        group (the session it was started in: only processes it started) is left 2 s after it
        exited, or 15 s after it was asked to, is killed. The credentials go last (the host
        removes them too: it outlives a command killed with SIGKILL). Interrupted, it may be
        called again: the host is forgotten only once it is stopped."""
        host = self.host
        if host is None:
            if self.credentials is not None:
                shutil.rmtree(self.credentials, ignore_errors=True)
            return
        try:
            host.stdin.close()
        except OSError:
            pass
        try:
            host.wait(15)
        except subprocess.TimeoutExpired:
            pass
        # Its workers are gone with it; any left behind (the host killed) go with the group.
        deadline = time.monotonic() + 2
        try:
            while time.monotonic() < deadline:
                if not _group_running(host.pid):
                    break
                time.sleep(0.05)
            else:
                os.killpg(host.pid, signal.SIGKILL)
        except OSError:
            pass  # the group is empty
        host.wait()
        self.host = None
        if host.stdout:
            host.stdout.close()
        if self.credentials is not None:
            shutil.rmtree(self.credentials, ignore_errors=True)
