"""``python -m chainrt.campaign.localcluster WORKERS CREDENTIALS``: the embedded local Dask
cluster's host.

Started by a campaign in a session of its own (a terminal's Ctrl-C reaches only the chainrt
command, never the workers, which would print their own tracebacks), it runs a Dask
``LocalCluster`` on loopback: the scheduler on a free port and WORKERS single-threaded worker
processes, each under a nanny that restarts it if it dies. It prints the scheduler's address on
stdout and runs until its stdin closes (the command is done, or died) or SIGTERM, then ends
itself and its worker processes at once (by PID): every finished batch is already kept by the
command, and a graceful close of the workers costs seconds. Its log (Dask's warnings: a worker
restarted, ...) goes to stderr, which the campaign sends to its folder's ``cluster.log``.

Private to the user who runs it: every listener of the cluster (scheduler, nannies, workers)
speaks mutual TLS only, with a key and a self-signed certificate made for this one cluster and
written into CREDENTIALS, a folder only the user can enter (mode 0700, made by the command). A
process that cannot read the key (another local user) cannot complete a connection, so it can
neither submit work nor reach a worker. The folder is also the temporary folder of the cluster
and its batches (TMPDIR), and is removed when the cluster ends.

The worker processes are forked from this process (Dask's ``fork`` method), which has Dask and
chainrt's extension loaded: a worker starts in a fraction of a second, and the queues between a
nanny and its worker are anonymous. (A fork server or spawned workers would share them as named
POSIX semaphores in /dev/shm, which outlive a host that is killed or that ends without Python's
exit handlers, as this one does.)
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import stat
import sys
from pathlib import Path

from .. import _core  # noqa: F401  (loaded before the workers are forked from this process)

KEY, CERT = "key.pem", "cert.pem"  # in the credentials folder
_credentials: Path | None = None   # removed by _end
_host_pid = os.getpid()            # the workers forked from it inherit _end as their SIGTERM handler


def _end(*_args) -> None:
    """Ends every process this host started (its workers, by PID), removes the cluster's
    credentials, then ends itself."""
    if os.getpid() != _host_pid:  # a forked worker that got the host's handler: only itself
        os._exit(0)
    import psutil  # (a dependency of Dask distributed)
    for child in psutil.Process().children(recursive=True):
        try:
            child.kill()
        except psutil.Error:
            pass
    if _credentials is not None:
        shutil.rmtree(_credentials, ignore_errors=True)
    os._exit(0)


def write_credentials(folder: Path) -> None:
    """A new key (EC P-256) and a self-signed certificate for it in `folder`, readable only by
    this user: the cluster's only trust anchor, so only a holder of the key can connect."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "chainrt campaign cluster")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=3650)).sign(key, hashes.SHA256()))
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    for name_, data in ((KEY, pem_key), (CERT, cert.public_bytes(serialization.Encoding.PEM))):
        fd = os.open(folder / name_, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)


def security(folder: Path):
    """Dask's TLS settings for every role (scheduler, worker, client) from the credentials in
    `folder`: mutual TLS, nothing unencrypted accepted."""
    from distributed.security import Security
    key, cert = str(folder / KEY), str(folder / CERT)
    return Security(require_encryption=True, tls_ca_file=cert, tls_client_cert=cert, tls_client_key=key,
                    tls_scheduler_cert=cert, tls_scheduler_key=key, tls_worker_cert=cert, tls_worker_key=key)


def _private_folder(text: str) -> Path:
    """The credentials folder the command made: ours, a real folder, no one else's to enter."""
    folder = Path(text)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SystemExit(f"{folder}: not a folder of this user's that only it can enter (mode 0700)")
    return folder


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
    global _credentials
    _inherit_autogroup_nice()
    signal.signal(signal.SIGTERM, _end)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command's to handle, never ours
    workers = int(sys.argv[1])
    _credentials = _private_folder(sys.argv[2])
    write_credentials(_credentials)
    # Every temporary file of the cluster and its batches (a worker killed mid-batch leaves its
    # batch's) goes into the same folder, and with it.
    import tempfile
    os.environ["TMPDIR"] = tempfile.tempdir = str(_credentials)
    # Loaded here (chainrt._core at the top), before the workers are forked from this process, so
    # that each starts with them.
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
                     "distributed.worker.multiprocessing-method": "fork"})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           scheduler_port=0, dashboard_address=None, memory_limit=0,
                           silence_logs=logging.WARNING, protocol="tls://", security=security(_credentials))
    sys.stdout.write(cluster.scheduler_address + "\n")
    sys.stdout.flush()
    while sys.stdin.buffer.read(4096):
        pass
    _end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
