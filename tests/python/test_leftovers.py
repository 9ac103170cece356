"""kill -9 of any chainrt process — a `chainrt run` child, the `chainrt run` parent, `chainrt
profile --run`, `chainrt bench reference-system` — leaves the process table, /dev/shm, /tmp and
the output folder's parent exactly as they were before the command started. Each scenario
(leftovers_scenario.py) runs in fresh PID, network and mount namespaces with private tmpfs
mounts, so the listings hold only what the scenario started and the comparison is exact even
while other programs run on the machine. Needs root (namespaces) and the built runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt import runtime

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "needs root (PID, network and mount namespaces)"
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "needs unshare (util-linux) and ip (iproute2)"
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--net", "--mount", "true"],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"namespaces unavailable: {r.stderr.strip()}"


# Bash, PID 1's parent in the namespaces: private tmpfs on /mnt, /dev/shm and /tmp; the folders
# of the host's /tmp named in $KEEP (colon-separated: those holding the checkout, its virtual
# environment or its build) are bound back into the new /tmp through /mnt, so that a checkout
# under /tmp still runs.
NAMESPACE_SETUP = (
    "mount -t tmpfs tmpfs /mnt && mkdir /mnt/.host-tmp && mount --bind /tmp /mnt/.host-tmp && "
    "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /tmp && "
    "(IFS=:; for d in $KEEP; do mkdir -p \"/tmp/$d\" && mount --bind \"/mnt/.host-tmp/$d\" \"/tmp/$d\" "
    "|| exit 1; done) && umount /mnt/.host-tmp && rmdir /mnt/.host-tmp && ip link set lo up && exec \"$@\"")


def tmp_folders_needed(paths) -> list[str]:
    """The entries of /tmp that hold any of `paths` (as written, and resolved), by name."""
    out = set()
    for p in paths:
        for q in {os.path.abspath(p), os.path.realpath(p)}:
            parts = Path(q).parts
            if len(parts) > 2 and parts[:2] == ("/", "tmp"):
                out.add(parts[2])
    return sorted(out)


def _scenario(kind: str, repo: Path = REPO, python: str = sys.executable, discovery: str = "LOCALHOST") -> dict:
    """Runs leftovers_scenario.py `kind` from the checkout at `repo` with `python`, under the
    ROS_AUTOMATIC_DISCOVERY_RANGE `discovery`."""
    why = _can_unshare()
    if why:
        pytest.skip(why)
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    here = repo / "tests" / "python"
    pythonpath = [str(repo / "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    keep = tmp_folders_needed([repo, python, sys.prefix, *pythonpath,
                               *(os.environ[v] for v in ("CHAINRT_BUILD_DIR", "VIRTUAL_ENV") if os.environ.get(v))])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath), "KEEP": ":".join(keep)}
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--net", "--mount", "--propagation", "private",
                        "bash", "-c", NAMESPACE_SETUP, "scenario", python, str(here / "leftovers_scenario.py"), kind, discovery],
                       capture_output=True, text=True, timeout=400, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _assert_nothing_left(res: dict) -> None:
    before, after = res["before"], res["after"]
    for key in before:
        gone, new = sorted(set(before[key]) - set(after[key])), sorted(set(after[key]) - set(before[key]))
        assert not gone and not new, f"{key}: left behind {new}, removed {gone}; stderr: {res['stderr']}"


def test_kill9_of_a_run_child_leaves_nothing():
    res = _scenario("run-child")
    assert res["rc"] == 1  # the run noticed the failed process
    _assert_nothing_left(res)


def test_kill9_of_the_run_parent_leaves_nothing():
    _assert_nothing_left(_scenario("run-parent"))


def test_kill9_of_profile_run_leaves_nothing():
    pytest.importorskip("rclpy")
    _assert_nothing_left(_scenario("profile"))


@pytest.mark.parametrize("discovery", ["LOCALHOST", "SUBNET"])
def test_kill9_of_a_profile_run_child_leaves_nothing(discovery):
    # the run's child dies; profile goes on, reports the partial run, and leaves nothing of the
    # child's Fast DDS files (its segment, its port files) behind -- also where chainrt leaves
    # Fast DDS alone (SUBNET) and the listener keeps the dead child's segment mapped until it exits
    pytest.importorskip("rclpy")
    res = _scenario("profile-child", discovery=discovery)
    assert res["rc"] == 1
    _assert_nothing_left(res)


def test_a_checkout_under_tmp_runs_its_scenarios(tmp_path_factory):
    # a clone under /tmp (here: the checkout reached through a link in /tmp) keeps its files
    # and its virtual environment inside the scenario's private /tmp
    link = Path("/tmp") / f"chainrt-checkout-{os.getpid()}"
    link.symlink_to(REPO)
    try:
        venv = link / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        res = _scenario("run-child", repo=link, python=python)
    finally:
        link.unlink()
    assert res["rc"] == 1
    _assert_nothing_left(res)


def test_kill9_of_the_bench_leaves_nothing():
    from chainrt.reference_system import runner
    try:
        runner.find_binary()
    except runner.WorkloadNotFound as e:
        pytest.skip(str(e))
    _assert_nothing_left(_scenario("bench"))
