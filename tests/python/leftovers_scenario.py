"""One kill -9 scenario of test_leftovers.py, run inside fresh namespaces (a PID namespace, a
network namespace with loopback, private tmpfs on /dev/shm, /tmp and /mnt), so that its
listings contain only what this scenario started: the process table, /dev/shm, /tmp and the
output folder's parent (/mnt) are listed before the command starts and after it was killed,
and printed as JSON ({"before": ..., "after": ..., "log": ...}).

    python leftovers_scenario.py run-child|run-parent|profile|profile-child|bench [DISCOVERY_RANGE]

$KEEP names the folders of /tmp bound back from the host (the checkout's): not listed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "tests/cpp/runtime/data/two_processes.yaml"


# LTTng-UST (loaded with the ROS 2 libraries) keeps per-user wait files in /dev/shm
# (lttng-ust-wait-<abi>, lttng-ust-wait-<abi>-<uid>), shared by every traced program of the user and
# never removed by design; its listener threads create them some time after a program starts, so
# whether one exists before or after a scenario is a race with the library, not a leftover.
LTTNG_WAIT = "lttng-ust-wait-"


def listing() -> dict:
    procs = []
    for p in sorted((int(x) for x in os.listdir("/proc") if x.isdigit())):
        try:
            argv = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        procs.append(f"{p} {argv[:160]}")
    tree = {}
    kept = {Path("/tmp", k) for k in os.environ.get("KEEP", "").split(":") if k}
    for root in ("/dev/shm", "/tmp", "/mnt"):
        entries = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if Path(d, x) not in kept]  # the checkout bound back in: not ours
            entries += [str(Path(d, f).relative_to(root)) for f in files + dirs
                        if not (root == "/dev/shm" and f.startswith(LTTNG_WAIT))]
        tree[root] = sorted(entries)
    return {"processes": procs, **tree}


def reap() -> None:
    """PID 1 of the namespace: collect every exited orphan (the watcher, a reparented child)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children(pid: int) -> list[tuple[int, str]]:
    out = []
    for t in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        try:
            kids = Path(f"/proc/{pid}/task/{t}/children").read_text().split()
        except OSError:
            continue
        for k in kids:
            try:
                out.append((int(k), Path(f"/proc/{k}/cmdline").read_bytes().decode(errors="replace")))
            except OSError:
                pass
    return out


def wait_for(cond, timeout: float):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    return cond()


def main(kind: str, discovery: str = "LOCALHOST") -> int:
    env = {**os.environ, "ROS_DOMAIN_ID": "7", "ROS_AUTOMATIC_DISCOVERY_RANGE": discovery, "TMPDIR": "/tmp"}
    chainrt = [sys.executable, "-m", "chainrt.cli"]
    before = listing()
    if kind in ("run-child", "run-parent"):
        cmd = [*chainrt, "run", str(MODEL), "--duration", "60s", "--warmup", "300ms", "--no-compare", "--json"]
    elif kind in ("profile", "profile-child"):
        cmd = [*chainrt, "profile", str(MODEL), "--run", "--duration", "60s", "--warmup", "1s"]
    elif kind == "bench":
        cmd = [*chainrt, "bench", "reference-system", "--configs", "edf-st", "--repeat", "1", "--duration", "60s",
               "--warmup", "1s", "--no-plots", "--no-sim", "--no-analysis", "--out", "/mnt/rs"]
    else:
        raise SystemExit(f"unknown scenario {kind}")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/mnt")
    workers = "--process" if kind != "bench" else "chainrt-reference-system"
    want = 2 if kind != "bench" else 1
    kids = wait_for(lambda: [k for k, argv in children(proc.pid) if workers in argv] if
                    len([1 for _, argv in children(proc.pid) if workers in argv]) >= want else None, 60)
    if not kids:
        proc.kill()
        _, err = proc.communicate()
        print(json.dumps({"error": "the workers did not start", "stderr": err.decode(errors="replace")[-2000:]}))
        return 1
    time.sleep(2.0)  # running, with its shared memory in use
    victim = kids[0] if kind in ("run-child", "profile-child") else proc.pid
    os.kill(victim, signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    # Whatever the command's children and its watcher still do ends by itself; wait (bounded)
    # until the listing is back to the one before, or report the difference.
    after = None
    end = time.monotonic() + 60
    while time.monotonic() < end:
        reap()
        after = listing()
        if after == before:
            break
        time.sleep(0.2)
    print(json.dumps({"before": before, "after": after, "rc": proc.returncode,
                      "stderr": err.decode(errors="replace")[-2000:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
