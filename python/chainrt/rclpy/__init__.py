"""chainrt.rclpy: run unchanged rclpy nodes under chainrt's chain-aware scheduling.

    import rclpy
    from chainrt.rclpy import ChainExecutor

    rclpy.init()
    executor = ChainExecutor(model="system.yaml", policy="edf")  # instead of SingleThreadedExecutor()
    executor.add_node(my_node)
    executor.spin()

See docs/rclpy.md. The ready queue, the policies (those of chainrt._core.policies(), and arrival), the
thread setup and the monitor are the C++ runtime's, through chainrt._rclpy_exec.
"""

from chainrt.rclpy import accelerator
from chainrt.rclpy.binding import UnboundModelCallbacks
from chainrt.rclpy.executor import POLICIES, ChainExecutor

__all__ = ["ChainExecutor", "POLICIES", "UnboundModelCallbacks", "accelerator"]
