"""The two-chain system (two_chains.yaml) started from launch, its monitoring on /chainrt/chain_stats.

    ros2 launch examples/two_chains.launch.py                  # the model's chains on chainrt's executor on rcl
    ros2 launch examples/two_chains.launch.py executor:=rclpy  # ordinary rclpy nodes under chainrt.rclpy's ChainExecutor

Ctrl-C ends it; each process prints its per-chain report (docs/launch.md).
"""
import sys
from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.conditions import IfCondition
from launch.substitutions import EqualsSubstitution, LaunchConfiguration

from chainrt.launch import ChainRun

HERE = Path(__file__).resolve().parent


def _executor_is(name):
    return IfCondition(EqualsSubstitution(LaunchConfiguration("executor"), name))


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("executor", default_value="runtime", choices=["runtime", "rclpy"],
                              description="chainrt's executor on rcl, or the rclpy nodes of examples/rclpy"),
        ChainRun(model=HERE / "two_chains.yaml", stats_period="1s", output="screen",
                 condition=_executor_is("runtime")),
        # examples/rclpy/launch_two_chains.py: the nodes of two_chains_nodes.py under the
        # ChainExecutor with this model, in the Python that runs the launch
        ExecuteProcess(cmd=[sys.executable, str(HERE / "rclpy" / "launch_two_chains.py")], output="screen",
                       name="two_chains_rclpy", condition=_executor_is("rclpy")),
    ])
