"""What the ROS 2 tests of discover, profile and the run verdict need to know about this machine."""


def runtime_built() -> bool:
    """Is the C++ runtime (chainrt-run) built?"""
    from chainrt import runtime
    try:
        runtime.find_binary()
        return True
    except runtime.RuntimeNotFound:
        return False


def have_rclpy() -> bool:
    try:
        import rclpy  # noqa: F401
        import std_msgs.msg  # noqa: F401
        return True
    except ImportError:
        return False


def run_cli_on_ros(args: list[str], domain_base: int, timeout: float = 300):
    """`python -m chainrt.cli ARGS` in its own ROS_DOMAIN_ID (domain_base + pid % 19) with
    localhost discovery; skips the calling test when chainrt-run is not built."""
    import os
    import subprocess
    import sys

    import pytest

    if not runtime_built():
        pytest.skip("chainrt-run is not built")
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_base + os.getpid() % 19), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)
