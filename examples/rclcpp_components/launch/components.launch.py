"""The demo components in chainrt's component container, scheduled by their model (system.yaml).

    ros2 launch chainrt_demo_components components.launch.py

(the package built and its prefix on AMENT_PREFIX_PATH; docs/launch.md). The container starts
with the model, both nodes load into it, and its monitoring appears on /chainrt/chain_stats;
Ctrl-C ends it.
"""
from pathlib import Path

from launch import LaunchDescription
from launch_ros.descriptions import ComposableNode

from chainrt.launch import ChainContainer

# next to this file's folder: in the source tree and in the package's installed share/ folder
MODEL = Path(__file__).resolve().parents[1] / "system.yaml"


def generate_launch_description():
    return LaunchDescription([
        ChainContainer(
            name="container", model=MODEL, stats_period=0.5, output="screen",
            composable_node_descriptions=[
                ComposableNode(package="chainrt_demo_components", plugin="chainrt_demo::Sensor", name="sensor"),
                ComposableNode(package="chainrt_demo_components", plugin="chainrt_demo::Filter", name="filter"),
            ]),
    ])
