"""The campaign cases of test_campaign_hostile.py's leftovers test, run inside fresh namespaces (a
PID namespace, a network namespace with loopback, private tmpfs on /dev/shm, /tmp and /mnt), so
that its listings contain only what this scenario started. For each case the process table,
/dev/shm and /tmp are listed before a campaign on the embedded local cluster starts and after it
ended, and printed as one JSON object ({case: {"before", "after", "rc", "stderr", "credentials"}}):

- ``end``: the campaign runs to its end;
- ``sigint``, ``sigterm``: the command gets the signal mid-run;
- ``kill-command``, ``kill-host``, ``kill-worker``: kill -9 of the command, of its cluster's host
  process, of one worker process, mid-run;
- ``in-process-sigint``, ``in-process-kill``: the same campaign in the command's process, SIGINT
  mid-batch, and kill -9 (then the command again, which resumes it).

    python campaign_leftovers_scenario.py CAMPAIGN-ARGUMENTS...
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from leftovers_scenario import children, listing, reap, wait_for  # noqa: E402

CASES = ("end", "sigint", "sigterm", "kill-command", "kill-host", "kill-worker", "in-process-sigint",
         "in-process-kill")


def _tables() -> dict:
    t = listing()
    return {k: t[k] for k in ("processes", "/dev/shm", "/tmp")}


def _host(command: int) -> int | None:
    for pid, argv in children(command):
        if "chainrt.campaign.localcluster" in argv:
            return pid
    return None


def _mid_run(out: Path, command: subprocess.Popen) -> bool:
    """Waits until the campaign has kept a batch (its cluster is up and working)."""
    return bool(wait_for(lambda: command.poll() is not None or list(out.glob("campaign-*/batches/b*.json")), 120)) \
        and command.poll() is None


def run_case(case: str, argv: list[str]) -> dict:
    out = Path("/mnt") / case
    env = {**os.environ, "TMPDIR": "/tmp"}
    before = _tables()
    engine = ["--in-process"] if case.startswith("in-process") else ["--workers", "2"]
    cmd = [sys.executable, "-m", "chainrt.cli", *argv, *engine, "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/mnt")
    note = ""
    if case != "end":
        if not _mid_run(out, proc):
            note = "the campaign ended before it could be interrupted"
        elif case in ("sigint", "in-process-sigint"):
            proc.send_signal(signal.SIGINT)
        elif case == "sigterm":
            proc.send_signal(signal.SIGTERM)
        elif case in ("kill-command", "in-process-kill"):
            proc.kill()
        else:
            host = _host(proc.pid)
            workers = [pid for pid, _ in children(host)] if host else []
            victim = host if case == "kill-host" else (workers[0] if workers else None)
            if victim is None:
                note = "no cluster process found"
            else:
                os.kill(victim, signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        note += " (the command did not end within 180 s)"
    after = None
    end = time.monotonic() + 60  # whatever still ends by itself (a host whose command was killed)
    while time.monotonic() < end:
        reap()
        after = _tables()
        if after == before:
            break
        time.sleep(0.2)
    credentials = [str(p) for p in out.glob("campaign-*/.cluster-*")]
    if case == "in-process-kill":  # the command's own temporary folder: removed by the next command
        again = subprocess.run(cmd, env=env, capture_output=True, timeout=300, cwd="/mnt")
        note += "" if again.returncode == 0 else f" (the resumed campaign failed: {again.stderr[-500:]!r})"
    credentials += [str(p) for p in out.glob("campaign-*/.tmp-*")]
    return {"before": before, "after": after, "rc": proc.returncode, "note": note,
            "stderr": err.decode(errors="replace")[-2000:], "credentials": credentials}


def main(argv: list[str]) -> int:
    print(json.dumps({case: run_case(case, argv) for case in CASES}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
