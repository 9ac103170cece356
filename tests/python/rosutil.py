"""What the ROS 2 tests of discover, profile, the run verdict and the cross-layer path need to know about
this machine."""

import os

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


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (by parent, also those in sessions of their own), from /proc."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _describe(pid: int) -> str:
    """One process's command line and, per thread, its name, state, wait channel and kernel stack."""
    def read(path: str) -> str:
        try:
            with open(path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return "?"
    lines = [f"{pid}: {read(f'/proc/{pid}/cmdline').replace(chr(0), ' ').strip()}"]
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        return lines[0] + " (gone)"
    for tid in tids:
        task = f"/proc/{pid}/task/{tid}"
        state = read(f"{task}/stat").rsplit(")", 1)[-1].split()[:1]
        stack = " < ".join(l.split()[-1] for l in read(f"{task}/stack").splitlines()[:4] if l.strip())
        lines.append(f"  {tid} {read(f'{task}/comm').strip()} {''.join(state)} {read(f'{task}/wchan')} {stack}")
    return "\n".join(lines)


def communicate_or_explain(proc, timeout: float):
    """proc.communicate(timeout); where the process has not exited by then, the test fails with
    what it and every process below it were doing (threads, wait channels, kernel stacks), and
    they are killed, so that a hang is diagnosed rather than only timed out."""
    import signal
    import subprocess
    import pytest
    import shutil
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        below = _descendants(proc.pid)
        described = {p: _describe(p) for p in [proc.pid, *below]}
        report = "\n".join(described.values())
        gdb = shutil.which("gdb")
        for p in below:  # where gdb exists: each runtime process's threads in user space too
            if gdb and "chainrt-run" in described[p].splitlines()[0]:
                try:
                    bt = subprocess.run([gdb, "-p", str(p), "-batch", "-ex", "thread apply all bt 12"],
                                        capture_output=True, text=True, timeout=30).stdout
                except subprocess.TimeoutExpired:
                    bt = "(gdb did not answer)"
                report += f"\n-- {p}, gdb:\n" + "\n".join(l for l in bt.splitlines() if l.startswith(("#", "Thread")))
        for p in [proc.pid, *below]:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        out, err = proc.communicate()
        pytest.fail(f"no exit within {timeout} s; the processes then:\n{report}\nstderr: {err}")
