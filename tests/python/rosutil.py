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


def rclpy_context(domain_id: int):
    """An rclpy Context of its own on `domain_id` with localhost-only discovery, shut down
    afterwards (a generator for a pytest fixture: `yield from rclpy_context(...)`)."""
    import os

    import rclpy
    from rclpy.context import Context

    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = Context()
    rclpy.init(context=context, domain_id=domain_id)
    yield context
    try:
        rclpy.shutdown(context=context)
    except Exception:
        pass


def robot_env(domain: int) -> dict:
    """The environment of a user's robot and of the chainrt commands pointed at it: its own
    ROS_DOMAIN_ID, localhost discovery, this checkout's chainrt first on PYTHONPATH."""
    import os
    from pathlib import Path

    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def chainrt_cli(args: list[str], env: dict, timeout: float = 240):
    """`python -m chainrt.cli ARGS` in `env`, its output captured."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "chainrt.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)
