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
