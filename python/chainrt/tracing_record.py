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
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
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


def _lttng(*args: str) -> None:
    r = subprocess.run(["lttng", *args], capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise RecordError(f"lttng {' '.join(args)}: {msg[-1] if msg else f'exit {r.returncode}'}")


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
    _lttng("create", session, f"--output={out}")
    try:
        for ev in events:
            _lttng("enable-event", "--userspace", ev, f"--session={session}")
        _lttng("add-context", "--userspace", f"--session={session}",
               "--type=vpid", "--type=vtid", "--type=procname")
        _lttng("start", session)
        run_env = dict(os.environ if env is None else env)
        pre = preload_list(cfg)
        if run_env.get("LD_PRELOAD"):
            pre.append(run_env["LD_PRELOAD"])
        run_env["LD_PRELOAD"] = ":".join(pre)
        try:
            proc = subprocess.Popen(command, env=run_env)
        except OSError as e:
            raise RecordError(f"{command[0]}: {e.strerror or e}") from None
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            # Ctrl-C at a terminal reached the command too (same process group): let it finish
            # its own way (chainrt run still prints its report); otherwise pass SIGINT on.
            rc = 130
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
        _lttng("stop", session)
    finally:
        subprocess.run(["lttng", "destroy", session], capture_output=True)
    return 128 + (-rc) if rc < 0 else rc
