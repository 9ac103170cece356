"""Fault injection on real ROS 2 (`chainrt run` of a two-process model): a child killed with
SIGKILL, the parent killed with SIGKILL, SIGINT twice, a full disk on stdout. Each ends with the
documented exit code (docs/cli.md), the figures that exist, and nothing left behind: no
chainrt-run process, no Fast DDS shared-memory file in /dev/shm that no process uses, no temporary
file in /tmp. Skipped when the runtime is not built. No wall-clock figure is asserted; waits
are generous upper bounds (a child's death is noticed within the 20 ms poll, not at the end of
the 60 s run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainrt import janitor, runtime
from rosutil import communicate_or_explain

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "tests/cpp/runtime/data/two_processes.yaml"
LONG = "60s"  # the run's length: every fault ends it long before
WARMUP_NS = 300_000_000


@pytest.fixture(autouse=True)
def _binary():
    try:
        runtime.find_binary()
    except runtime.RuntimeNotFound as e:
        pytest.skip(str(e))
    yield
    import shutil
    shutil.rmtree(TMP, ignore_errors=True)


TMP = Path(os.environ.get("CHAINRT_FAULT_TMP", "/tmp")) / f"chainrt-faults-{os.getpid()}"


def _env() -> dict:
    TMP.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["TMPDIR"] = str(TMP)  # the run's own temporary folder: must stay empty
    env["ROS_DOMAIN_ID"] = str(200 + (os.getpid() % 30))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return env


def _start(*extra: str, stdout=subprocess.PIPE) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "chainrt.cli", "run", str(MODEL), "--duration", LONG, "--warmup", f"{WARMUP_NS}ns",
           "--json", "--no-compare", *extra]
    # the run's release epoch, set here as a launcher may (sched/timer.hpp): the processes
    # measure from it on, so a test knows when they have measured something
    epoch = time.monotonic_ns() + 1_500_000_000
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                            env={**_env(), runtime.RELEASE_EPOCH_ENV: str(epoch)})
    proc.measuring_from = (epoch + WARMUP_NS) / 1e9
    return proc


def _children(pid: int) -> dict[str, int]:
    """The chainrt-run children of `pid` by their --process name."""
    out = {}
    try:
        kids = [int(k) for t in os.listdir(f"/proc/{pid}/task")
                for k in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
    except OSError:
        return out
    for k in kids:
        try:
            argv = Path(f"/proc/{k}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--process" in argv:
            out[argv[argv.index(b"--process") + 1].decode()] = k
    return out


def _running(chainrt_pid: int) -> list[int]:
    """The chainrt-run processes of the run that chainrt process `chainrt_pid` started (its run id
    ends with that pid), wherever they were reparented; zombies are gone."""
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                argv = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if b"--run-id" in argv and state != "Z":
                i = argv.index(b"--run-id")
                if i + 1 < len(argv) and argv[i + 1].endswith(f"-{chainrt_pid}".encode()):
                    found.append(int(p))
    return found


def _wait_for(cond, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _wait_children(proc: subprocess.Popen, n: int = 2) -> dict[str, int]:
    assert _wait_for(lambda: len(_children(proc.pid)) == n, 30), "the chainrt-run processes did not start"
    start = getattr(proc, "measuring_from", time.monotonic())
    time.sleep(max(0.0, start - time.monotonic()) + 1.5)  # let both measure something
    return _children(proc.pid)


def _nothing_left(before_shm: set[str], chainrt_pid: int) -> None:
    assert _wait_for(lambda: not _running(chainrt_pid), 30), f"processes left: {_running(chainrt_pid)}"
    fresh = janitor.shm_entries() - before_shm
    assert not (fresh - janitor.shm_in_use(fresh)), f"shared memory left behind: {sorted(fresh)}"
    assert not list(TMP.iterdir()), list(TMP.iterdir())  # reports live in anonymous files


def test_child_killed_stops_the_run_and_keeps_the_survivors_figures():
    before = janitor.shm_entries()
    proc = _start()
    kids = _wait_children(proc)
    t_kill = time.monotonic()
    os.kill(kids["sensing"], signal.SIGKILL)
    out, err = communicate_or_explain(proc, 60)
    # noticed at once: far sooner than the 60 s run (a bound, not a timing assertion)
    assert time.monotonic() - t_kill < 30
    assert proc.returncode == 1, err
    res = json.loads(out)
    assert res["partial"] is True and res["exit_code"] == 1
    assert [f["process"] for f in res["failed_processes"]] == ["sensing"]
    assert "SIGKILL" in res["failed_processes"][0]["reason"]
    assert res["chains"]["local"]["instances"] > 0  # the survivor's figures are kept
    _nothing_left(before, proc.pid)


def test_parent_killed_takes_its_children_along():
    before = janitor.shm_entries()
    proc = _start()
    kids = _wait_children(proc)
    assert sorted(kids.values()) == sorted(_running(proc.pid))  # the check below sees them
    os.kill(proc.pid, signal.SIGKILL)
    communicate_or_explain(proc, 30)
    _nothing_left(before, proc.pid)


def test_sigint_twice_keeps_the_report():
    before = janitor.shm_entries()
    proc = _start()
    _wait_children(proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = communicate_or_explain(proc, 60)
    assert proc.returncode == 130, (err, out[-3000:])  # the report names a failed process
    assert "Traceback" not in err
    res = json.loads(out)
    assert res["interrupted"] is True and res["partial"] is True and res["failed_processes"] == []
    assert res["chains"]["local"]["instances"] > 0
    _nothing_left(before, proc.pid)


def test_full_disk_on_stdout_is_an_error():
    before = janitor.shm_entries()
    with open("/dev/full", "w") as full:
        cmd = [sys.executable, "-m", "chainrt.cli", "run", str(MODEL), "--duration", "500ms", "--warmup", "200ms",
               "--json", "--no-compare"]
        proc = subprocess.Popen(cmd, stdout=full, stderr=subprocess.PIPE, text=True, env=_env())
        _, err = communicate_or_explain(proc, 120)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert lines and "cannot write the output" in lines[-1] and "Traceback" not in err
    _nothing_left(before, proc.pid)


def test_a_child_whose_parent_is_already_gone_exits_at_once():
    # The pid chainrt-run is told to die with is not its parent (as when the parent died between
    # fork and the child's start-up): it must do nothing (here: not even list the processes).
    env = {**_env(), runtime.PARENT_PID_ENV: str(os.getppid())}
    cmd = [str(runtime.find_binary()), str(MODEL), "--list-processes"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    env[runtime.PARENT_PID_ENV] = str(os.getpid())  # its real parent
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0 and "sensing" in r.stdout, (r.returncode, r.stdout, r.stderr)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_child_stopped_from_outside_makes_the_run_partial(sig):
    # A child that ends cleanly on a signal chainrt did not send has figures for part of the
    # run only: a failed process, exit 1, partial — not a normal end with exit 0.
    before = janitor.shm_entries()
    proc = _start()
    kids = _wait_children(proc)
    os.kill(kids["sensing"], sig)
    out, err = communicate_or_explain(proc, 60)
    assert proc.returncode == 1, err
    res = json.loads(out)
    assert res["partial"] is True and res["exit_code"] == 1
    assert [f["process"] for f in res["failed_processes"]] == ["sensing"]
    assert "signal chainrt did not send" in res["failed_processes"][0]["reason"]
    _nothing_left(before, proc.pid)


def test_a_trace_that_cannot_be_written_is_an_error_before_the_run(tmp_path):
    cmd = [str(runtime.find_binary()), str(MODEL), "--process", "acting", "--duration", "100ms",
           "--trace", str(tmp_path / "missing-folder" / "trace.jsonl")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=60)
    assert r.returncode == 1 and "cannot write the trace" in r.stderr, (r.returncode, r.stderr)


def test_an_accelerator_shared_by_two_processes_runs_on_one_server(tmp_path):
    # The two processes' callbacks use one accelerator: the process of the first executor serves
    # it through shared memory (runtime/accelerator_shm.hpp), the other is its client; both
    # chains complete, the server's trace holds both processes' requests, /dev/shm keeps nothing.
    model = tmp_path / "gpu.yaml"
    model.write_text("hosts: [{name: h, accelerators: [{name: gpu, access: server, priority: 50}]}]\n"
                     "executors: [{name: ea, host: h, process: pa}, {name: eb, host: h, process: pb}]\n"
                     "nodes: [{name: na, executor: ea}, {name: nb, executor: eb}]\n"
                     "callbacks:\n"
                     "  - {name: a, kind: timer, node: na, period: 10ms, wcet: 1ms,\n"
                     "     accelerator_segments: [{accelerator: gpu, kernel: 2ms}]}\n"
                     "  - {name: b, kind: timer, node: nb, period: 10ms, wcet: 1ms,\n"
                     "     accelerator_segments: [{accelerator: gpu, kernel: 2ms}]}\n"
                     "chains: [{name: ca, callbacks: [a]}, {name: cb, callbacks: [b]}]\n")
    traces = tmp_path / "traces"
    traces.mkdir()
    old_env = dict(os.environ)
    os.environ.update(_env())
    try:
        result = runtime.run_model(str(model), 500_000_000, warmup_ns=200_000_000, thread_params=False,
                                   trace_dir=str(traces))
    finally:
        os.environ.clear()
        os.environ.update(old_env)
    assert not result.get("failed_processes"), result
    assert result["chains"]["ca"]["instances"] > 0 and result["chains"]["cb"]["instances"] > 0, result["chains"]
    assert not [w for w in result.get("warnings", []) if "accelerator" in w], result["warnings"]
    served = {}
    for proc in ("pa", "pb"):
        for line in (traces / f"{proc}.jsonl").read_text().splitlines():
            row = json.loads(line)
            if "device" in row:
                served.setdefault(proc, set()).add(row["callback"])
    assert served == {"pa": {"a", "b"}}, served  # pa serves; pb's requests are in its trace
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"chainrt-acc-{result['run_id']}")]


def test_profile_write_interrupted_leaves_the_model_as_it_was(tmp_path):
    # Ctrl-C during `profile --run --write`: exit 130, says the measurements are partial, and the
    # model and its percentiles file are exactly as before (nothing written from a partial run).
    pytest.importorskip("rclpy")
    model = tmp_path / "model.yaml"
    model.write_bytes(MODEL.read_bytes())
    before = model.read_bytes()
    cmd = [sys.executable, "-m", "chainrt.cli", "profile", str(model), "--run", "--write", "--duration", LONG,
           "--warmup", "300ms"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    _wait_children(proc)
    proc.send_signal(signal.SIGINT)
    out, err = communicate_or_explain(proc, 90)
    assert proc.returncode == 130, err
    assert "interrupted" in err and ("not written" in err or "nothing written" in err), err
    assert "Traceback" not in err
    assert model.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.yaml"]


def test_a_run_that_does_not_end_is_explained_and_ended():
    # The waits above fail a hang with what every process of the run was doing, and end them.
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 61"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    from rosutil import _descendants
    time.sleep(0.3)
    below = _descendants(proc.pid)
    assert below  # the backgrounded sleep (and the foreground one, where the shell forks it)
    with pytest.raises(pytest.fail.Exception) as failed:
        communicate_or_explain(proc, 1)
    message = str(failed.value)
    assert "no exit within 1 s" in message and "sleep 60" in message
    assert proc.returncode == -signal.SIGKILL

    def running(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False
    deadline = time.monotonic() + 10
    while any(running(p) for p in below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(p) for p in below)
