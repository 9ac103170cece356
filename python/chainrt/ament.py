"""chainrt in ROS 2's package index (the ament index), for ``ros2 run``, ``ros2 launch`` and launch_ros.

ROS 2's tools find a package through the prefixes of ``AMENT_PREFIX_PATH``: a prefix holding
``share/ament_index/resource_index/packages/<name>`` has the package, its programs in
``<prefix>/lib/<name>/``. chainrt is such a package in two places:

- a build folder: ``<build>/ament_prefix`` (cmake/ChainrtAmentPrefix.cmake links the build's
  programs there: ``chainrt_component_container``, ``chainrt-run``, the ``chainrt`` CLI);
- an install prefix (``cmake --install``, colcon): the prefix itself.

A virtualenv with the ROS 2 wheels sets no ``AMENT_PREFIX_PATH``; a sourced ROS 2 sets its own.
:func:`ros2_environment` adds what this environment's ROS 2 needs (the prefixes the build
recorded: rclcpp's and the wheels') and chainrt's prefix, after what is already there (a sourced
workspace's packages keep precedence). The virtualenv's ``ros2`` command (scripts/ros2_tools)
runs :func:`ros2_main`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import _build

PACKAGE = "chainrt"
_INDEX_ENTRY = Path("share/ament_index/resource_index/packages") / PACKAGE
BUILD_PREFIX = "ament_prefix"  # <build>/ament_prefix (cmake/ChainrtAmentPrefix.cmake)
_RESTARTED = "_CHAINRT_ROS2_RESTARTED"  # ros2_main started the command again


def prefix() -> Path | None:
    """chainrt's ament prefix in this environment: the build's, or the install prefix of an
    installed package (``<prefix>/lib/python3.X/site-packages/chainrt``); None when neither has
    chainrt's index entry (the build predates it, or chainrt was installed by pip alone)."""
    build = _build.build_dir()
    if build is not None:
        candidates = [build / BUILD_PREFIX]
    else:
        candidates = [Path(__file__).resolve().parents[4]]
    for p in candidates:
        if (p / _INDEX_ENTRY).is_file():
            return p
    return None


def _recorded_environment() -> dict[str, str]:
    """The ROS 2 run-time environment the build recorded (``<build>/chainrt_ros2_env.json``:
    AMENT_PREFIX_PATH, RMW_IMPLEMENTATION, its library folders as LD_LIBRARY_PATH, and the
    Python folder of chainrt_msgs, the executors' monitoring messages, as PYTHONPATH), else this
    interpreter's wheels."""
    build = _build.build_dir()
    if build is not None:
        try:
            recorded = json.loads((build / "chainrt_ros2_env.json").read_text())
            env = dict(recorded.get("env", {}))
            if recorded.get("library_path"):
                env["LD_LIBRARY_PATH"] = recorded["library_path"]
            if recorded.get("python_path"):
                env["PYTHONPATH"] = recorded["python_path"]
            return env
        except (OSError, ValueError):
            pass
    return {"AMENT_PREFIX_PATH": sys.prefix, "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}


def _extend(current: str, more: list[str]) -> str:
    """The path list `current` with the entries of `more` it lacks appended, in order."""
    paths = [p for p in current.split(os.pathsep) if p]
    paths += [p for p in dict.fromkeys(more) if p and p not in paths]
    return os.pathsep.join(paths)


def ros2_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with the ament index path ROS 2's tools need here:
    the prefixes already named first, then those of this environment's ROS 2 (and of this
    virtualenv, where ROS 2's tools are), then chainrt's; the library folders of this ROS 2
    appended to LD_LIBRARY_PATH (rosidl loads an interface's type support by library name:
    composition_interfaces' is in rclcpp's prefix); RMW_IMPLEMENTATION as the build recorded it
    unless set."""
    out = dict(os.environ if env is None else env)
    recorded = _recorded_environment()
    ours = recorded.pop("AMENT_PREFIX_PATH", "").split(os.pathsep)
    if (Path(sys.prefix) / "share" / "ament_index").is_dir():  # ROS 2's tools of this virtualenv
        ours.append(sys.prefix)
    own = prefix()
    if own is not None:
        ours.append(str(own))
    out["AMENT_PREFIX_PATH"] = _extend(out.get("AMENT_PREFIX_PATH", ""), ours)
    for var in ("LD_LIBRARY_PATH", "PYTHONPATH"):
        paths = recorded.pop(var, "")
        if paths:
            out[var] = _extend(out.get(var, ""), paths.split(os.pathsep))
    for key, value in recorded.items():
        out.setdefault(key, value)
    return out


def ros2_main() -> int:
    """The ``ros2`` command of a virtualenv with the wheels: ros2cli, in :func:`ros2_environment`
    (its programs and launched processes inherit it). The dynamic loader reads LD_LIBRARY_PATH
    once, at the start: when it lacks a folder, the command starts again with it (once)."""
    env = ros2_environment()
    if env.get("LD_LIBRARY_PATH", "") != os.environ.get("LD_LIBRARY_PATH", "") and not os.environ.get(_RESTARTED):
        os.execve(sys.executable, sys.orig_argv, {**env, _RESTARTED: "1"})
    os.environ.update(env)
    for p in env.get("PYTHONPATH", "").split(os.pathsep):  # read at the start only, as above
        if p and p not in sys.path:
            sys.path.append(p)
    try:
        from ros2cli.cli import main
    except ImportError:
        print("ros2: ROS 2's command line tools are not installed in this environment "
              "(scripts/setup installs them)", file=sys.stderr)
        return 1
    return main()
