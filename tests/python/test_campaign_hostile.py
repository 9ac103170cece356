"""Campaigns (chainrt.campaign, docs/campaigns.md) against another local user, damaged folders,
bad cluster addresses and the leftovers of their processes:

- another user's process can neither submit work to a campaign's local cluster nor reach one of
  its workers or nannies (mutual TLS with a key only the campaign's user can read);
- every campaign on the local cluster, ended normally, by SIGINT or SIGTERM, or with its command,
  cluster host or a worker killed with SIGKILL, and one in the command's process interrupted or
  killed, leaves /dev/shm, /tmp and the process table as they were;
- a bad --cluster address, or one that accepts and never answers, is one line, and the connect
  timeout holds;
- a damaged manifest or batch file is one line naming the file, an edited count is never merged,
  and a second command on the same campaign folder is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from chainrt.campaign import command
from chainrt.campaign.plan import Spec, split

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from campaign_tasks import CHAINRT, ENV, HERE, ROOT, numbered  # noqa: E402

# A soundness campaign long enough to be caught mid-run (batches of a few systems each).
LONG = ["experiment", "soundness", "--analysis", "fp-mt", "--sets", "4000", "--batch", "2", "--harsh", "--climb", "2",
        "--quiet"]
NOBODY = 65534


def cli(*argv: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CHAINRT + list(argv), capture_output=True, text=True, timeout=timeout, env=env or ENV,
                          cwd=str(ROOT))


def _one_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    return lines[0]


# --- another local user ---------------------------------------------------------------------

def _cluster_ports(command_pid: int) -> tuple[int, list[int]]:
    """The local cluster's host process under the command, and every TCP port its processes
    listen on (scheduler, nannies, workers)."""
    import psutil
    for child in psutil.Process(command_pid).children():
        if "chainrt.campaign.localcluster" in " ".join(child.cmdline()):
            procs = [child] + child.children(recursive=True)
            ports = sorted({c.laddr.port for p in procs for c in p.net_connections(kind="tcp")
                            if c.status == psutil.CONN_LISTEN})
            return child.pid, ports
    return 0, []


def _attack(ports: list[int], marker: str, write) -> None:
    """In a forked child, as uid/gid 65534 without groups: for every port, over plain TCP and over
    TLS with a certificate of its own, asks the process there to run a function that creates
    `marker` (the scheduler's ``run_function``, a worker's or nanny's ``run``). Writes what each
    attempt gave to `write` (a pipe) as JSON. Everything it uses is imported before the fork."""
    import asyncio

    from distributed.comm import connect
    from distributed.protocol import pickle
    from distributed.security import Security

    own = Security.temporary()
    tls_args = own.get_connection_args("client")  # made here: the child may not write /tmp
    fn = pickle.dumps(lambda: __import__("os").open(marker, os.O_CREAT | os.O_WRONLY, 0o600))  # (by value)
    pid = os.fork()
    if pid:
        return
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

        async def once(address: str, args: dict, op: str) -> str:
            comm = await asyncio.wait_for(connect(address, timeout=3, **args), 5)
            try:
                await asyncio.wait_for(comm.write({"op": op, "function": fn, "reply": True}), 5)
                return f"answered: {str(await asyncio.wait_for(comm.read(), 10))[:200]}"
            finally:
                await comm.close()

        async def attempt(port: int, scheme: str, args: dict, op: str) -> list:
            try:
                got = await once(f"{scheme}://127.0.0.1:{port}", args, op)
            except BaseException as e:  # refused: what it said
                got = f"refused: {type(e).__name__}: {str(e)[:200]}"
            return [port, scheme, op, got]

        async def every() -> list:
            return list(await asyncio.gather(*(attempt(port, scheme, args, op) for port in ports
                                               for scheme, args in (("tcp", {}), ("tls", tls_args))
                                               for op in ("run_function", "run"))))

        report = {"uid": os.getuid(), "attempts": asyncio.run(every())}
    except BaseException as e:
        report = {"error": f"{type(e).__name__}: {e}"}
    os.write(write, json.dumps(report).encode())
    os._exit(0)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (to act as another user)")
def test_another_user_cannot_run_code_through_a_campaigns_local_cluster(tmp_path):
    """While a campaign runs on the embedded local cluster, a process of uid 65534 tries every
    port the cluster listens on, over TCP and over TLS with its own certificate, to have the
    scheduler, a nanny or a worker (all running as this user) create a file in a folder only
    this user may write. Every attempt is refused and no file appears; the campaign goes on."""
    import distributed  # noqa: F401  (loaded before the fork: the other user may not read it)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    marker = private / "written-by-the-cluster"
    run = subprocess.Popen(CHAINRT + [*LONG, "--workers", "2", "--out", str(tmp_path / "out")], env=ENV,
                           cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and run.poll() is None \
                and not list((tmp_path / "out").glob("campaign-*/batches/b*.json")):
            time.sleep(0.05)
        assert run.poll() is None, run.communicate()
        host, ports = _cluster_ports(run.pid)
        assert host and len(ports) >= 3, ports  # the scheduler, and a nanny and a worker per worker process
        r, w = os.pipe()
        _attack(ports, str(marker), w)
        os.close(w)
        with os.fdopen(r) as f:
            report = json.loads(f.read())
        os.wait()
        assert run.poll() is None, ("the campaign ended during the attempts", report)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)
        run.communicate(timeout=120)
    assert "error" not in report and report["uid"] == NOBODY, report
    assert len(report["attempts"]) == 4 * len(ports)
    answered = [a for a in report["attempts"] if not a[3].startswith("refused")]
    assert not answered, answered
    assert not marker.exists()


# --- leftovers -------------------------------------------------------------------------------

def test_campaigns_leave_no_semaphore_file_process_or_credentials_whatever_ends_them():
    """Every case of campaign_leftovers_scenario.py (on the local cluster: normal end; SIGINT,
    SIGTERM; kill -9 of the command, of the cluster's host, of a worker; in the command's process:
    SIGINT mid-batch, kill -9) in fresh namespaces (test_leftovers.py's): /dev/shm, /tmp and the
    process table are as before, and the cluster's credentials and the command's temporary folder
    are gone."""
    from test_leftovers import NAMESPACE_SETUP, _can_unshare, tmp_folders_needed
    why = _can_unshare()
    if why:
        pytest.skip(why)
    pythonpath = ENV["PYTHONPATH"].split(os.pathsep)
    keep = tmp_folders_needed([ROOT, sys.executable, sys.prefix, *pythonpath,
                               *(os.environ[v] for v in ("CHAINRT_BUILD_DIR", "VIRTUAL_ENV") if os.environ.get(v))])
    # long enough that every case is caught mid-run on a quiet machine too (in the command's own
    # process 40 systems could end before the first batch was seen)
    argv = [*LONG[:4], "--sets", "400", "--batch", "2", "--harsh", "--quiet"]
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--net", "--mount", "--propagation", "private",
                        "bash", "-c", NAMESPACE_SETUP, "scenario", sys.executable,
                        str(HERE / "campaign_leftovers_scenario.py"), *argv],
                       capture_output=True, text=True, timeout=1500, env=dict(ENV, KEEP=":".join(keep)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    cases = json.loads(r.stdout.strip().splitlines()[-1])
    for case, res in cases.items():
        assert not res["note"], (case, res["note"], res["stderr"])
        for key in res["before"]:
            gone = sorted(set(res["before"][key]) - set(res["after"][key]))
            new = sorted(set(res["after"][key]) - set(res["before"][key]))
            assert not gone and not new, f"{case}: {key}: left behind {new}, removed {gone}; stderr: {res['stderr']}"
        assert not res["credentials"], (case, res["credentials"])
    assert cases["end"]["rc"] == 0 and cases["kill-worker"]["rc"] == 0, cases
    assert cases["sigint"]["rc"] == 130 and cases["in-process-sigint"]["rc"] == 130, cases


# --- --cluster -------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["bogus", "inproc://x", "tcp://127.0.0.1", "tcp://127.0.0.1:99999",
                                     "tcp://[::1", "udp://127.0.0.1:8786", "tcp://h:1/path"])
def test_a_cluster_address_that_is_no_scheduler_address_is_one_line(address, tmp_path):
    r = cli("experiment", "synthesis", "--sets", "4", "--cluster", address, "--out", str(tmp_path), timeout=60)
    line = _one_line(r)
    assert "--cluster" in line and "tcp://HOST:PORT" in line, line
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_a_scheduler_that_accepts_and_never_answers_is_given_up_after_the_connect_timeout(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []

    def accept():
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    try:
        r = cli("experiment", "synthesis", "--sets", "4", "--cluster", f"tcp://127.0.0.1:{port}", "--out",
                str(tmp_path), timeout=90, env=dict(ENV, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s"))
    finally:
        listener.close()
        for c in held:
            c.close()
    line = _one_line(r)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: no answer within 2 s" in line, line
    assert held  # it did connect


# --- damaged campaign folders ----------------------------------------------------------------

def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--quiet", action="store_true")
    command.add_arguments(p, batch=3)
    return p.parse_args(list(argv) + ["--quiet"])


def _make(size: int) -> Spec:
    return Spec("numbered", {"systems": 12}, split([("all", 5, 12)], size), numbered, size=size)


def _refused(tmp_path, capsys) -> str:
    assert command.campaign(_args("--in-process"), "numbered", _make, str(tmp_path)) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _folder(tmp_path) -> pathlib.Path:
    (folder,) = tmp_path.glob("campaign-*")
    return folder


def _rewrite(path: pathlib.Path, change, keep_checksum: bool = False) -> None:
    from chainrt.campaign.store import checksum
    rec = json.loads(path.read_text())
    change(rec)
    if keep_checksum:
        rec["sha256"] = checksum(rec)
    path.write_text(json.dumps(rec))


@pytest.mark.parametrize("damage,why", [
    (lambda r: r.update(result=None), "checksum"),
    (lambda r: r.update(result="garbage"), "checksum"),
    (lambda r: r["result"].update(total=r["result"]["total"] + 1), "checksum"),  # an edited count
    (lambda r: r.pop("sha256"), "checksum"),
    (lambda r: r["result"].update(systems=r["result"]["systems"] + 1), "systems in a batch of 3"),
    (lambda r: r.update(result=None), "no result"),
], ids=["null", "garbage", "edited-count", "no-checksum", "systems-with-checksum", "null-with-checksum"])
def test_a_damaged_or_edited_batch_file_is_one_line_naming_it_and_never_merged(damage, why, tmp_path, capsys):
    first = command.run(_args("--in-process"), _make, str(tmp_path))
    assert first.complete
    path = _folder(tmp_path) / "batches" / "b000002.json"
    _rewrite(path, damage, keep_checksum=why != "checksum")
    line = _refused(tmp_path, capsys)
    assert str(path) in line and why in line and "Traceback" not in line, line


@pytest.mark.parametrize("manifest,why", [
    ([], "not a JSON object"),
    ("drop run_id", "run_id"),
    ({"batch_size": 0}, "batch_size is not a positive number"),
    ({"batch_size": "abc"}, "batch_size is not a positive number"),
    ({"batches": None}, "batches is not a whole number"),
])
def test_a_damaged_manifest_is_one_line_naming_it(manifest, why, tmp_path, capsys):
    command.run(_args("--in-process"), _make, str(tmp_path))
    path = _folder(tmp_path) / "manifest.json"
    m = json.loads(path.read_text())
    if manifest == "drop run_id":
        del m["run_id"]
    elif isinstance(manifest, dict):
        m.update(manifest)
    else:
        m = manifest
    path.write_text(json.dumps(m))
    line = _refused(tmp_path, capsys)
    assert str(path) in line and why in line and "--restart" in line, line
    again = command.run(_args("--in-process", "--restart"), _make, str(tmp_path))
    assert again.complete


def test_a_second_command_on_a_running_campaign_is_refused(tmp_path):
    """Two commands of the same campaign into one folder: the second is refused with one line
    while the first runs (instead of computing every batch a second time), and runs once the
    first has ended."""
    argv = [*LONG, "--in-process", "--out", str(tmp_path)]
    first = subprocess.Popen(CHAINRT + argv, env=ENV, cwd=str(ROOT), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None and not list(tmp_path.glob("campaign-*/batches/b*")):
            time.sleep(0.05)
        assert first.poll() is None, first.communicate()
        second = cli(*argv)
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    line = _one_line(second)
    assert "another chainrt command is running this campaign" in line and str(_folder(tmp_path)) in line, line
    kept = len(list(_folder(tmp_path).glob("batches/b*.json")))
    third = subprocess.Popen(CHAINRT + argv, env=ENV, cwd=str(ROOT), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)  # the first has ended: this one resumes
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and third.poll() is None \
                and len(list(_folder(tmp_path).glob("batches/b*.json"))) <= kept:
            time.sleep(0.05)
    finally:
        third.send_signal(signal.SIGINT)
        _, err = third.communicate(timeout=120)
    assert third.returncode == 130 and len(list(_folder(tmp_path).glob("batches/b*.json"))) > kept, err


def test_the_same_process_may_open_its_campaign_again(tmp_path):
    """The lock is against other commands: a library caller opening the folder again in the
    process that holds it is not refused."""
    from chainrt.campaign.store import Store
    folder = tmp_path / "c"
    Store.open(folder, _make(3), "build-a")
    assert Store.open(folder, _make(3), "build-a").run_id == Store.open(folder, _make(3), "build-a").run_id


def test_without_cryptography_the_local_cluster_is_one_line(monkeypatch, tmp_path):
    """The local cluster's key is made with the cryptography package: without it the engine
    refuses at once with one line naming it (not a host that fails in cluster.log)."""
    import importlib.util

    from chainrt.campaign.engine import Dask
    from chainrt.campaign.store import CampaignError
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cryptography" else real(name, *a))
    engine = Dask(address=None, workers=1, log_path=tmp_path / "cluster.log")
    with pytest.raises(CampaignError, match="needs the Python package cryptography"):
        engine.start()
    assert engine.host is None
