"""What the ROS 2 tests of discover, profile, the run verdict and the cross-layer path need to know about
this machine."""


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


def crosslayer_unavailable() -> str | None:
    """Why the cross-layer tests cannot run here (no built runtime, no network namespaces, no
    BPF toolchain), or None when they can."""
    from chainrt import runtime
    from chainrt.crosslayer import kernel, netns
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        return str(e)
    why = netns.available()
    if why:
        return why
    try:
        kernel.build()
    except kernel.KernelPathUnavailable as e:
        return str(e)
    return None


def require_crosslayer(capsys) -> None:
    """Skips the calling test, saying why on the terminal, unless the cross-layer path can run."""
    import pytest
    why = crosslayer_unavailable()
    if why:
        with capsys.disabled():
            print(f"\nskipped: the cross-host test needs it: {why}")
        pytest.skip(why)
