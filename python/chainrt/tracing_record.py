"""Recording an LTTng trace of a ROS 2 program (``chainrt trace record``, docs/tracing.md).

One LTTng session (Debian's lttng-tools) with the userspace events ``ros2:*`` (ros2_tracing)
and ``chainrt:*`` (chainrt's chain instances) and the vpid/vtid/procname contexts, around one
command. The command runs with ``LD_PRELOAD`` set from ``<build>/chainrt_tracing.json``
(written by runtime/tracing/CMakeLists.txt), or in an install prefix from
``<prefix>/share/chainrt/tracing.json`` (cmake/ChainrtInstall.cmake; its paths are relative to it):

* always ``libchainrt_tracing.so`` (provider ``chainrt``; the executor finds it at start);
* with the PyPI wheels, also chainrt's tracetools-compatible ``libtracetools.so`` and empty
  stand-ins for the wheels' vendored LTTng-UST libraries: the wheels' own tracing cannot be
  recorded by an LTTng 2.13 session daemon (see runtime/tracing/tracetools_shim.c).

Children inherit the environment, so ``chainrt trace record -- chainrt run MODEL`` traces every
``chainrt-run`` process of the run.

The session lives in a running session daemon (root's, or the user's), which is used and left
running; where none is reachable, one is started for the recording (``session_daemon``) and
ended, by its PID, when the recording ends in any way: nothing of LTTng stays behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from . import _build


class RecordError(Exception):
    """Recording is not possible here (the reason is the message)."""


AMENT_MARKER = Path("share", "ament_index", "resource_index", "packages", "chainrt")
INSTALLED_CONFIG = Path("share", "chainrt", "tracing.json")


def _install_prefix(package_dir: Path) -> Path | None:
    """The install prefix holding this Python package (``<prefix>/lib/python3.X/site-packages/
    chainrt``): the nearest parent with chainrt's ament index marker; None in a source checkout."""
    for parent in list(package_dir.parents)[:5]:
        if (parent / AMENT_MARKER).is_file():
            return parent
    return None


def _config_file() -> tuple[Path | None, str]:
    """The tracing configuration (first found, in this order), or None and why none is:
    ``$CHAINRT_TRACING_CONFIG``; the install prefix of this package;
    ``<build>/chainrt_tracing.json`` of a source checkout (its ROS 2 line's build); a chainrt prefix of
    ``$AMENT_PREFIX_PATH`` (a sourced workspace, for a Python package installed elsewhere)."""
    env = os.environ.get("CHAINRT_TRACING_CONFIG")
    if env:
        return Path(env), ""
    prefix = _install_prefix(Path(__file__).resolve().parent)
    if prefix is not None:
        if (prefix / INSTALLED_CONFIG).is_file():
            return prefix / INSTALLED_CONFIG, ""
        return None, (f"chainrt in {prefix} was installed without its tracing libraries: install LTTng-UST "
                      "(apt-get install liblttng-ust-dev), rebuild and install again")
    build = _build.build_dir()
    if build is not None and (build / "chainrt_tracing.json").is_file():
        return build / "chainrt_tracing.json", ""
    for d in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if d and (Path(d) / AMENT_MARKER).is_file() and (Path(d) / INSTALLED_CONFIG).is_file():
            return Path(d) / INSTALLED_CONFIG, ""
    return None, ("chainrt's tracing libraries are not built: install LTTng-UST "
                  "(apt-get install liblttng-ust-dev) and rebuild (scripts/setup)")


def tracing_config() -> dict:
    """The libraries to preload, as absolute paths: from ``$CHAINRT_TRACING_CONFIG``, this
    package's install prefix, the source checkout's build, or ``$AMENT_PREFIX_PATH``."""
    path, why = _config_file()
    if path is None:
        raise RecordError(why)
    try:
        cfg = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: unreadable ({e})") from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("chainrt"), str) \
            or not isinstance(cfg.get("ros2_preload", []), list):
        raise RecordError(f"{path}: not a chainrt tracing configuration")
    # relative paths (an install prefix) are relative to the configuration's folder
    here = path.resolve().parent
    cfg["chainrt"] = os.path.normpath(here / cfg["chainrt"])
    cfg["ros2_preload"] = [os.path.normpath(here / str(p)) for p in cfg.get("ros2_preload", [])]
    missing = [p for p in [cfg["chainrt"]] + cfg["ros2_preload"] if not Path(p).is_file()]
    if missing:
        raise RecordError(f"{missing[0]} is missing: rebuild (cmake --build build)"
                          + (" and install again" if _install_prefix(here) else ""))
    return cfg


def preload_list(cfg: dict) -> list[str]:
    """What the traced command preloads: the wheels' replacements first, then chainrt's provider."""
    return list(cfg.get("ros2_preload", [])) + [cfg["chainrt"]]


def lttng_available() -> str | None:
    """None when an LTTng session can be created here, else the reason."""
    if shutil.which("lttng") is None:
        return "lttng-tools is not installed (apt-get install lttng-tools)"
    if shutil.which("lttng-sessiond") is None:
        return "lttng-sessiond is not installed (apt-get install lttng-tools)"
    return None


# How long a session daemon started here may take to answer, and to end after SIGTERM (it ends
# its consumer daemons first) before SIGKILL.
DAEMON_START_S = 10.0
DAEMON_STOP_S = 10.0


def _lttng(*args: str, env: dict | None = None) -> None:
    # --no-sessiond: the client never spawns a session daemon of its own (session_daemon() does,
    # and ends it); without one it fails instead.
    r = subprocess.run(["lttng", "--no-sessiond", *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise RecordError(f"lttng {' '.join(args)}: {msg[-1] if msg else f'exit {r.returncode}'}")


def session_daemon_reachable(env: dict) -> bool:
    """Whether the lttng client reaches a session daemon in the environment ``env`` (root's, or
    the user's under ``$LTTNG_HOME``; lttng(1), "Session daemon connection")."""
    r = subprocess.run(["lttng", "--no-sessiond", "list"], capture_output=True, env=env)
    return r.returncode == 0


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent PID, start time) of a process from /proc, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[19])


def _descendants(pid: int) -> dict[int, int]:
    """The living processes below ``pid`` (a session daemon's consumer daemons and their helper
    processes): PID -> start time, which tells them from a later process of the same PID."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None and st[0] != "Z":
                table[int(entry)] = st
    found: dict[int, int] = {}
    parents = [pid]
    while parents:
        p = parents.pop()
        for child, (_, ppid, start) in table.items():
            if ppid == p and child not in found:
                found[child] = start
                parents.append(child)
    return found


_LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    """In the daemon's child process before exec: SIGTERM when chainrt ends without its cleanup
    (SIGKILL, an unhandled signal), so that the daemon never outlives the recording."""
    _LIBC.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG


def _start_daemon(env: dict, home: str) -> subprocess.Popen:
    """Starts ``lttng-sessiond`` as this process's child (its own session: Ctrl-C at the
    terminal does not reach it before the session is stopped) and waits until it answers."""
    log_path = Path(home, "lttng-sessiond.log")
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(["lttng-sessiond", "--no-kernel"], env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=_die_with_parent)
        except OSError as e:
            raise RecordError(f"lttng-sessiond: {e.strerror or e}") from None
    try:
        deadline = time.monotonic() + DAEMON_START_S
        while not session_daemon_reachable(env):
            if proc.poll() is not None:
                lines = log_path.read_text(errors="replace").strip().splitlines()
                raise RecordError("lttng-sessiond did not start: "
                                  + (lines[-1] if lines else f"exit status {proc.returncode}"))
            if time.monotonic() > deadline:
                raise RecordError(f"lttng-sessiond did not answer within {DAEMON_START_S:.0f} s")
            time.sleep(0.02)
    except BaseException:
        _stop_daemon(proc)
        raise
    return proc


def _alive(pid: int, start: int) -> bool:
    st = _proc_stat(pid)
    return st is not None and st[0] != "Z" and st[2] == start


def _stop_daemon(proc: subprocess.Popen) -> None:
    """Ends the session daemon started here, by its PID: SIGTERM, on which it ends its consumer
    daemons and exits; SIGKILL when it has not within DAEMON_STOP_S. Processes of its own that
    outlive it (after SIGKILL) are ended by their PIDs too. Ctrl-C meanwhile is held back until
    this is done, then raised."""
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        below = _descendants(proc.pid)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            proc.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=DAEMON_STOP_S)
        for sig in (None, signal.SIGTERM, signal.SIGKILL):  # None: 2 s to end on their own
            if sig is not None:
                for pid in below:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
            deadline = time.monotonic() + 2.0
            below = {pid: start for pid, start in below.items() if _alive(pid, start)}
            while below and time.monotonic() < deadline:
                time.sleep(0.02)
                below = {pid: start for pid, start in below.items() if _alive(pid, start)}
            if not below:
                break
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


@contextlib.contextmanager
def session_daemon(env: dict):
    """The environment in which lttng and the traced command reach a session daemon. A daemon
    already reachable (the user's) is used and left alone. Otherwise one is started for the
    block, with a private ``$LTTNG_HOME`` (a non-root daemon's sockets and configuration are
    there: no other lttng client reaches it), and ended by its PID when the block ends,
    whichever way: an error, Ctrl-C, a failed ``lttng create``."""
    if session_daemon_reachable(env):
        yield env
        return
    home = tempfile.mkdtemp(prefix="chainrt-lttng-")
    try:
        own = dict(env, LTTNG_HOME=home)
        proc = _start_daemon(own, home)
        try:
            yield own
        finally:
            _stop_daemon(proc)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run_traced(command: list[str], env: dict) -> int:
    """Runs the command to its end; its exit status (130 when interrupted)."""
    try:
        proc = subprocess.Popen(command, env=env)
    except OSError as e:
        raise RecordError(f"{command[0]}: {e.strerror or e}") from None
    try:
        return proc.wait()
    except KeyboardInterrupt:
        # Ctrl-C at a terminal reached the command too (same process group): let it finish
        # its own way (chainrt run still prints its report); otherwise pass SIGINT on.
        for action in (None, signal.SIGINT, signal.SIGKILL):
            if action is not None:
                proc.send_signal(action)
            try:
                proc.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue
            except KeyboardInterrupt:
                continue
        return 130


def record(command: list[str], output: str, session: str | None = None,
           events: tuple[str, ...] = ("ros2:*", "chainrt:*"), env: dict | None = None) -> int:
    """Record ``command`` into the folder ``output`` (created; must not hold a trace yet).
    Returns the command's exit status (130 when interrupted). Raises RecordError."""
    why = lttng_available()
    if why:
        raise RecordError(why)
    cfg = tracing_config()
    out = Path(output).resolve()
    if out.exists() and any(out.iterdir()):
        raise RecordError(f"{out}: exists and is not empty (choose a new folder)")
    session = session or f"chainrt-{os.getpid()}-{int(time.time())}"
    with session_daemon(dict(os.environ if env is None else env)) as lenv:
        _lttng("create", session, f"--output={out}", env=lenv)
        try:
            for ev in events:
                _lttng("enable-event", "--userspace", ev, f"--session={session}", env=lenv)
            _lttng("add-context", "--userspace", f"--session={session}",
                   "--type=vpid", "--type=vtid", "--type=procname", env=lenv)
            _lttng("start", session, env=lenv)
            run_env = dict(lenv)
            pre = preload_list(cfg)
            if run_env.get("LD_PRELOAD"):
                pre.append(run_env["LD_PRELOAD"])
            run_env["LD_PRELOAD"] = ":".join(pre)
            rc = _run_traced(command, run_env)
            _lttng("stop", session, env=lenv)
        finally:
            subprocess.run(["lttng", "--no-sessiond", "destroy", session], capture_output=True, env=lenv)
    return 128 + (-rc) if rc < 0 else rc
