"""The C++ build this Python environment uses.

A source checkout holds one build per ROS 2 line, side by side (scripts/ros_line.sh): ``build/``
for Kilted with ``.venv``, ``build-jazzy/`` for Jazzy with ``.venv-jazzy``. scripts/setup writes
the build's path into the virtualenv (``<venv>/chainrt-build``), so each virtualenv's chainrt
loads its own extension modules (``<build>/python/chainrt/_core*.so``, ``_rclpy_exec*.so``) and
runs its own ``chainrt-run``. An installed chainrt (``cmake --install``, colcon) has its
extension modules inside the package and no build folder.

Imported by ``chainrt/__init__.py`` before anything else: standard library only, no allocation
worth naming, never raises.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_MARKER = "chainrt-build"


def source_checkout() -> Path | None:
    """The checkout this package is imported from (``<repo>/python/chainrt``), or None when it
    is an installed copy."""
    repo = _PACKAGE.parents[1]
    if _PACKAGE.parent.name == "python" and (repo / "scripts" / "ros_line.sh").is_file():
        return repo
    return None


def build_dir() -> Path | None:
    """The build folder of a source checkout: ``$CHAINRT_BUILD_DIR`` (relative to the checkout,
    or absolute), else the one scripts/setup recorded in this interpreter's virtualenv, else
    ``<repo>/build``; None for an installed package."""
    repo = source_checkout()
    if repo is None:
        return None
    env = os.environ.get("CHAINRT_BUILD_DIR")
    if env:
        return Path(env) if os.path.isabs(env) else repo / env
    try:
        recorded = (Path(sys.prefix) / _MARKER).read_text().strip()
    except OSError:
        recorded = ""
    return Path(recorded) if recorded else repo / "build"


def extension_dir() -> Path | None:
    """Where the build writes chainrt's extension modules (python/bindings/CMakeLists.txt)."""
    b = build_dir()
    return None if b is None else b / "python" / "chainrt"


def version() -> str:
    """chainrt's version: the installed distribution's, else that of the source tree
    (``chainrt --version``, a campaign's build id)."""
    try:
        from importlib.metadata import version as dist_version  # only when asked: 10 ms to import
        return dist_version("chainrt")
    except Exception:
        return "0.1.0"
