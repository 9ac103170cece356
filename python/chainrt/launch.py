"""chainrt in ROS 2 launch files (launch, launch_ros; ``ros2 launch``).

Two actions, each an ordinary launch action with chainrt's program and options filled in:

- :class:`ChainContainer` — chainrt's component container (``chainrt_component_container``:
  rclcpp_components' container on the rclcpp ChainExecutor) with a model; composable nodes
  load into it as into any container (``composable_node_descriptions``, LoadComposableNodes,
  ``ros2 component load``).
- :class:`ChainRun` — one process of a model (or all of it) on chainrt's executor on rcl
  (``chainrt-run``: the model's chains as nodes), until the launch ends.

Both find the programs through the ament index (package ``chainrt``; python/chainrt/ament.py),
as launch_ros finds any package's programs. In an XML or YAML launch file the container is
launch_ros's ``node_container`` with ``pkg="chainrt" exec="chainrt_component_container"`` and a
``chainrt.model`` parameter (examples/rclcpp_components/launch/).
"""

from __future__ import annotations

import os

from launch.actions import ExecuteProcess
from launch_ros.actions import ComposableNodeContainer
from launch_ros.substitutions import ExecutableInPackage

from .ament import PACKAGE

CONTAINER = "chainrt_component_container"
RUNNER = "chainrt-run"
# ChainRun without a duration: chainrt-run runs for a duration; this one (ten years) outlasts
# any launch, which ends it with SIGINT (Ctrl-C) as it ends every process it started.
UNTIL_STOPPED = "5256000min"


def _path(value):
    """A path argument as launch wants it: a str (a Path is converted), substitutions as given."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


class ChainContainer(ComposableNodeContainer):
    """chainrt's component container with a model, as a launch action.

    The keyword arguments ``model`` .. ``report`` are the container's ``chainrt.*`` parameters
    (rclcpp/tools/component_container.cpp; None: the container's default); everything else goes
    to launch_ros's ComposableNodeContainer (``composable_node_descriptions``, ``output``,
    ``parameters``, ``remappings``, ...). Values may be launch substitutions.
    """

    def __init__(self, *, name, namespace="", model=None, executor=None, policy=None, threads=None,
                 stats_period=None, run_id=None, report=None, parameters=None, **kwargs):
        chainrt = {"model": _path(model), "executor": executor, "policy": policy, "threads": threads,
                   "stats_period": stats_period, "run_id": run_id, "report": report}
        params = {f"chainrt.{k}": v for k, v in chainrt.items() if v is not None}
        super().__init__(package=PACKAGE, executable=CONTAINER, name=name, namespace=namespace,
                         parameters=[params, *(parameters or [])], **kwargs)


class ChainRun(ExecuteProcess):
    """One process of a model (``process``; None: every executor of the model) on chainrt's
    executor on rcl, as a launch action: ``chainrt-run MODEL`` with the options given.

    ``duration`` (e.g. ``"30s"``; None: until the launch ends), ``stats_period`` (the monitoring
    topic ``<namespace>/chainrt/chain_stats``; None: not published), ``namespace`` (of the nodes
    and topics), ``policy``, ``run_id``; ``arguments`` are further chainrt-run options. The rest
    goes to launch's ExecuteProcess (``output``, ``name``, ...).
    """

    def __init__(self, *, model, process=None, duration=None, stats_period=None, namespace=None,
                 policy=None, run_id=None, arguments=(), **kwargs):
        cmd = [ExecutableInPackage(executable=RUNNER, package=PACKAGE), _path(model),
               "--duration", duration or UNTIL_STOPPED]
        for flag, value in (("--process", process), ("--stats-period", stats_period),
                            ("--namespace", namespace), ("--policy", policy), ("--run-id", run_id)):
            if value is not None:
                cmd += [flag, value]
        super().__init__(cmd=[*cmd, *arguments], **kwargs)
