"""Campaigns (chainrt.campaign, docs/campaigns.md): the same campaign gives the same results in
one process, on the embedded local Dask cluster, on a running cluster and after an interruption
and a resume; a worker killed mid-batch loses nothing and no system is counted twice; a broken
batch is reported with its seed and can be replayed alone; Ctrl-C leaves a resumable campaign
and exits 130 without a traceback."""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from chainrt import soundness
from chainrt.campaign import command
from chainrt.campaign.plan import Spec, merge, split
from chainrt.campaign.store import CampaignError, Store
from chainrt.experiments.progress import Progress

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from campaign_tasks import CHAINRT, ENV, ROOT, numbered, numbered_ok  # noqa: E402  (the workers import it by this name)

# A soundness campaign of every analysis (6) x 240 systems in batches of 80 (18 batches; with
# fewer systems per batch, two workers finish them all within a few milliseconds, before an
# interrupt sent after the third arrives).
SOUND = ["experiment", "soundness", "--sets", "240", "--seed", "4", "--batch", "80", "--variants", "2", "--json",
         "--quiet"]


def _sigint_as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(CHAINRT + list(argv), capture_output=True, text=True, timeout=timeout, env=ENV,
                          cwd=str(ROOT))


def campaign_dir(out: pathlib.Path) -> pathlib.Path:
    (folder,) = out.glob("campaign-*")
    return folder


def result(out: pathlib.Path) -> dict:
    r = json.loads((campaign_dir(out) / "result.json").read_text())
    r.pop("run_id")
    return r


def reports(stdout: str) -> list[dict]:
    out = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    for r in out:
        r.pop("elapsed_s")
        for c in r["counterexamples"]:
            c.pop("file", None)
    return out


def batch_files(out: pathlib.Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((campaign_dir(out) / "batches").glob("b*.json"))]


# --- the plan and the merge ------------------------------------------------------------------

def test_merge_adds_counts_keeps_extremes_concatenates_lists_and_names_what_it_cannot_merge():
    parts = [{"analysis": "x", "systems": 3, "max_ratio": 0.5, "harsh": {"jitter": 1}, "counterexamples": [{"set": 1}],
              "tightness": {"chains": 2, "median": 0.4}},
             {"analysis": "x", "systems": 2, "max_ratio": 0.7, "harsh": {"jitter": 0, "new": 4}, "counterexamples": [],
              "tightness": {"chains": 1, "median": 0.9}}]
    merged, dropped = merge(parts)
    assert merged == {"analysis": "x", "systems": 5, "max_ratio": 0.7, "harsh": {"jitter": 1, "new": 4},
                      "counterexamples": [{"set": 1}], "tightness": {"chains": 3}}
    assert dropped == ["tightness.median"]
    with pytest.raises(ValueError, match="disagree on analysis"):
        merge([{"analysis": "x"}, {"analysis": "y"}])


def test_batches_cover_every_system_once_and_the_folder_ignores_the_batch_size():
    batches = split([("a", 7, 10), ("b", 9, 3)], 4, first=5)
    assert [(b.group, b.first, b.count, b.seed) for b in batches] == [
        ("a", 5, 4, 7), ("a", 9, 4, 7), ("a", 13, 2, 7), ("b", 5, 3, 9)]
    assert [b.index for b in batches] == [0, 1, 2, 3]
    one = Spec("k", {"p": 1}, split([("a", 1, 10)], 3), len, size=3)
    other = Spec("k", {"p": 1}, split([("a", 1, 10)], 5), len, size=5)
    assert one.key() == other.key() and one.key() != Spec("k", {"p": 2}, [], len).key()


def test_soundness_batches_merge_into_the_harness_report_for_all_systems():
    """The merged batch reports are the harness's one report for the same systems: every count,
    the max ratio, the counterexamples and the whole tightness distribution (every ratio)."""
    for name in ("fp-mt", "cros-rt"):
        whole = soundness.check(name, 9, seed=11, variants=2)
        identity = {"variants": 2, "horizon": 20, "u_min": 0.1, "u_max": 0.6, "harsh": False, "climb": 0,
                    "fusion": False, "feature": ""}
        parts = [soundness.batch_task(identity, b.as_dict()) for b in split([(name, 11, 9)], 4)]
        assert len(parts) == 3
        merged = soundness.merge_reports(parts)
        assert merged == whole
        assert merged["tightness"]["chains"] == len(merged["ratios"]) > 0


def test_merge_takes_the_harness_distribution_of_bound_over_worst():
    """The merge's bound / worst distribution is the harness's (chainrt._core): worst / bound
    ratios 0.2, 0.5, 0.9, 1.0 are bounds 5, 2, 1.11 and 1 times the worst; element n/2 and 0.9 n
    of those in ascending order; one per bucket below 1.05, from 1.1, from 2 and from 3."""
    assert soundness.bound_over_worst([0.2, 0.5, 0.9, 1.0]) == {
        "median": 2.0, "p90": 5.0, "histogram": [1, 0, 1, 0, 0, 1, 1],
        "bucket_upper_ends": [1.05, 1.1, 1.3, 1.5, 2.0, 3.0]}
    assert soundness.bound_over_worst([]) == {"median": 0.0, "p90": 0.0, "histogram": [0] * 7,
                                              "bucket_upper_ends": [1.05, 1.1, 1.3, 1.5, 2.0, 3.0]}
    # six decimals, as the report prints them: 1 / 0.7 = 1.428571...
    assert soundness.bound_over_worst([0.7])["median"] == 1.428571


# --- one campaign, every runner --------------------------------------------------------------

def test_in_process_local_cluster_and_interrupted_resume_agree(tmp_path):
    """The soundness campaign in this process, on the embedded local cluster (2 workers), and
    interrupted with Ctrl-C mid-run (as from a terminal: the whole process group) then resumed:
    the same reports, the same result file."""
    a = cli(*SOUND, "--in-process", "--out", str(tmp_path / "a"))
    assert a.returncode == 0, a.stderr
    b = cli(*SOUND, "--workers", "2", "--out", str(tmp_path / "b"))
    assert b.returncode == 0, b.stderr
    assert reports(a.stdout) == reports(b.stdout) and len(reports(a.stdout)) == 6
    assert result(tmp_path / "a") == result(tmp_path / "b")
    pids = {f["pid"] for f in batch_files(tmp_path / "b")}
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes did the work

    c_out = tmp_path / "c"
    proc = subprocess.Popen(CHAINRT + [*SOUND, "--workers", "2", "--out", str(c_out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=str(ROOT), start_new_session=True,
                            preexec_fn=_sigint_as_from_a_terminal)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        kept = list(c_out.glob("campaign-*/batches/b*.json"))
        if len(kept) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)  # the group this test started: chainrt (its cluster has its own)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "chainrt: interrupted", err
    kept = len(batch_files(c_out))
    assert 3 <= kept <= 18
    # the last batches may finish before the interrupt arrives: it then stops the cluster's shutdown
    assert "the same command resumes the campaign" in err or (
        kept == 18 and "18 of 18 batches are kept" in err and "the same command reports the campaign" in err), err
    c = cli(*SOUND, "--workers", "2", "--out", str(c_out))
    assert c.returncode == 0, c.stderr
    assert reports(c.stdout) == reports(a.stdout)
    assert result(c_out) == result(tmp_path / "a")
    assert len(batch_files(c_out)) == 18


def test_in_process_ctrl_c_mid_batch_and_resume(tmp_path):
    """Ctrl-C while this process runs a batch (the LaME property campaign): exit 130 at once, the
    finished batches kept; the resumed campaign equals one run without interruption."""
    args = ["experiment", "lame-property", "--sets", "24", "--batch", "4", "--json", "--quiet", "--in-process"]
    whole = cli(*args, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    out_dir = tmp_path / "cut"
    proc = subprocess.Popen(CHAINRT + [*args, "--out", str(out_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV, cwd=str(ROOT), preexec_fn=_sigint_as_from_a_terminal)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and not list(out_dir.glob("campaign-*/batches/b*")):
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "chainrt: interrupted", err
    assert 1 <= len(batch_files(out_dir)) < 6
    again = cli(*args, "--out", str(out_dir))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(whole.stdout)
    assert result(out_dir) == result(tmp_path / "whole")
    rep = json.loads(whole.stdout)
    assert rep["systems"] == 24 and rep["accepted"] > 0 and rep["checked"] > 0 and rep["violations"] == []


class RunningCluster:
    """A running cluster's address and the Dask TLS configuration that reaches it (as a user
    gives it: DASK_* variables for a command, dask.config for this process)."""

    def __init__(self, address: str, credentials: pathlib.Path):
        self.address = address
        cert, key = str(credentials / "cert.pem"), str(credentials / "key.pem")
        self.config = {"distributed.comm.require-encryption": True, "distributed.comm.tls.ca-file": cert,
                       "distributed.comm.tls.client.cert": cert, "distributed.comm.tls.client.key": key}
        self.env = dict(ENV, **{"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v)
                                for k, v in self.config.items()})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A running local cluster (the embedded one's host, 2 workers, mutual TLS with credentials
    of its own) that the tests reach with --cluster tls://... and Dask's TLS configuration, as a
    lab's; its workers import this folder's task module."""
    credentials = tmp_path_factory.mktemp("credentials")
    credentials.chmod(0o700)
    host = subprocess.Popen([sys.executable, "-m", "chainrt.campaign.localcluster", "2", str(credentials)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
                            start_new_session=True)
    address = host.stdout.readline().decode().strip()
    assert address.startswith("tls://127.0.0.1:"), address
    yield RunningCluster(address, credentials)
    host.stdin.close()
    host.wait(30)


@pytest.mark.parametrize("argv,files", [
    (["experiment", "schedulability", "--sets", "40", "--panels", "n,g", "--batch", "15", "--no-plot", "--quiet"],
     ["fig7.csv"]),
    (["experiment", "synthesis", "--sets", "4", "--chains", "3", "--u-norm", "0.5,0.8", "--batch", "3", "--quiet"],
     ["synthesis.csv"]),
    (["experiment", "lame-property", "--sets", "12", "--batch", "5", "--json", "--quiet"], []),
], ids=["schedulability", "synthesis", "lame-property"])
def test_every_campaign_is_the_same_on_a_running_cluster(argv, files, cluster, tmp_path):
    here = cli(*argv, "--in-process", "--out", str(tmp_path / "here"))
    there = subprocess.run(CHAINRT + [*argv, "--cluster", cluster.address, "--out", str(tmp_path / "there")],
                           capture_output=True, text=True, timeout=300, env=cluster.env, cwd=str(ROOT))
    assert here.returncode == 0 and there.returncode == 0, (here.stderr, there.stderr)
    assert result(tmp_path / "here") == result(tmp_path / "there")
    for f in files:
        assert (tmp_path / "here" / f).read_text() == (tmp_path / "there" / f).read_text()
    assert {r["pid"] for r in batch_files(tmp_path / "there")}.isdisjoint({os.getpid()})
    if argv[1] == "lame-property":
        assert json.loads(here.stdout) == json.loads(there.stdout)


# --- failures, resume, exactly once ----------------------------------------------------------

def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--quiet", action="store_true")
    command.add_arguments(p, batch=3)
    return p.parse_args(list(argv) + ["--quiet"])


def _numbered(systems: int, fail=()):

    def make(size: int) -> Spec:
        return Spec("numbered", {"systems": systems, "fail": list(fail)}, split([("all", 5, systems)], size),
                    numbered, size=size)

    return make


@pytest.mark.parametrize("engine", ["in-process", "cluster"])
def test_broken_batch_is_reported_with_its_seed_and_the_rest_is_kept(engine, cluster, tmp_path, capsys):
    import dask
    import distributed  # noqa: F401  (its defaults in dask's configuration before set() below adds to it)
    flags = ["--in-process"] if engine == "in-process" else ["--cluster", cluster.address]
    make = _numbered(20, fail=[6, 15])
    with dask.config.set(cluster.config if engine == "cluster" else {}):
        first = command.run(_args(*flags), make, str(tmp_path))
    err = capsys.readouterr().err
    assert not first.complete and len(first.failures) == 2
    assert "batch 2 (all, systems 6..8 of seed 5) failed: ValueError: system 6 is broken on purpose" in err
    assert "--batch 3 --replay-batch 2" in err and "--replay-batch 5" in err
    assert len(first.records) == 5
    # Fixed (the same campaign must not fail: its identity names the broken batches, so fix them
    # in place), the next run computes only the two missing batches.
    manifest = json.loads((campaign_dir(tmp_path) / "manifest.json").read_text())
    with dask.config.set(cluster.config if engine == "cluster" else {}):
        second = command.run(_args(*flags), lambda size: Spec("numbered", manifest["identity"],
                                                              make(size).batches, numbered_ok, size=size),
                             str(tmp_path))
    assert second.complete and not second.failures
    numbers = [n for part in second.results("all") for n in part["numbers"]]
    assert numbers == list(range(20))  # every system once, in system order
    assert {r["run_id"] for r in batch_files(tmp_path)} == {manifest["run_id"]}


def test_resume_never_counts_a_batch_twice_and_ignores_foreign_files(tmp_path, capsys):
    make = _numbered(12)
    command.run(_args("--in-process"), make, str(tmp_path))
    folder = campaign_dir(tmp_path)
    files = sorted((folder / "batches").glob("b*.json"))
    assert len(files) == 4
    files[1].unlink()                                  # lost: runs again
    bad = json.loads(files[2].read_text())
    bad["run_id"] = "0000"                            # another run's file: not counted, runs again
    files[2].write_text(json.dumps(bad))
    files[3].write_text("")                            # emptied by a power loss (not fsynced): runs again
    again = command.run(_args("--in-process"), make, str(tmp_path))
    assert again.complete
    numbers = [n for part in again.results("all") for n in part["numbers"]]
    assert numbers == list(range(12))
    store = again.store
    assert not store.save(again.spec.batches[0], {"result": {"numbers": [99]}})  # kept already: not again
    done = command.run(_args("--in-process"), make, str(tmp_path))
    assert done.complete and len(done.records) == 4
    assert "complete" not in capsys.readouterr().err  # (--quiet)


def test_a_folder_of_other_parameters_or_another_build_is_refused(tmp_path):
    spec = _spec_of(3)
    folder = tmp_path / "c"
    Store.open(folder, spec, "build-a")
    with pytest.raises(CampaignError, match="another chainrt build"):
        Store.open(folder, spec, "build-b")
    with pytest.raises(CampaignError, match="other parameters"):
        Store.open(folder, _spec_of(4), "build-a")
    assert Store.open(folder, _spec_of(4), "build-a", restart=True).manifest["identity"] == {"systems": 4}
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x").write_text("x")
    with pytest.raises(CampaignError, match="not a campaign folder"):
        Store.open(tmp_path / "junk", spec, "build-a")


def _spec_of(n: int) -> Spec:
    return Spec("numbered", {"systems": n}, split([("all", 1, n)], 2), len, size=2)


def test_replay_batch_prints_the_batch_alone(tmp_path):
    base = ["experiment", "soundness", "--analysis", "edf-mt", "--sets", "6", "--batch", "2", "--variants", "1",
            "--quiet", "--out", str(tmp_path)]
    full = cli(*base, "--in-process")
    assert full.returncode == 0, full.stderr
    one = cli(*base, "--replay-batch", "1")
    assert one.returncode == 0, one.stderr
    replayed = json.loads(one.stdout)
    kept = batch_files(tmp_path)[1]
    assert replayed["batch"] == kept["batch"] == {"index": 1, "group": "edf-mt", "first": 2, "count": 2, "seed": 1}
    assert replayed["result"] == kept["result"]
    bad = cli(*base, "--replay-batch", "3")
    assert bad.returncode == 1 and "batches 0..2" in bad.stderr and "Traceback" not in bad.stderr


def test_engine_flags_that_exclude_each_other(tmp_path):
    r = cli("experiment", "soundness", "--sets", "2", "--in-process", "--cluster", "tcp://127.0.0.1:1",
            "--out", str(tmp_path))
    assert r.returncode == 1 and "exclude each other" in r.stderr
    r = subprocess.run(CHAINRT + ["experiment", "synthesis", "--sets", "20", "--cluster", "tcp://127.0.0.1:9", "--out",
                                  str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=str(ROOT),
                       env=dict(ENV, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s"))
    assert r.returncode == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_progress_shows_systems_rate_and_time_left():
    stream = io.StringIO()
    bar = Progress(100, "soundness", stream=stream, unit="systems", initial=40)
    bar.advance(30)
    line = stream.getvalue().splitlines()[-1]
    assert "70/100 systems" in line and "/s" in line and "eta" in line


# --- a real cluster that loses a worker -------------------------------------------------------

def test_a_worker_killed_mid_batch_loses_nothing_and_no_system_counts_twice(tmp_path):
    """A Dask scheduler and two worker processes on loopback (as a lab starts them); while the
    soundness campaign runs on them, one worker is killed with SIGKILL (by its PID) in the middle
    of a batch. The campaign completes; the batch it was running was computed by the other
    worker; every system is counted exactly once; the results equal the in-process run."""
    from distributed import Client
    dask = str(pathlib.Path(sys.executable).parent / "dask")
    sched_file = tmp_path / "scheduler.json"
    client = None
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], env=ENV, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        workers = [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                     "--host", "127.0.0.1"], env=ENV, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True) for _ in range(2)]
        procs += workers
        client = Client(address, timeout="30s")
        client.wait_for_workers(2, timeout=60)
        pid_of = client.run(os.getpid)  # worker address -> its process
        assert sorted(pid_of.values()) == sorted(w.pid for w in workers)

        argv = ["experiment", "soundness", "--analysis", "fp-mt", "--sets", "24", "--batch", "2", "--harsh",
                "--climb", "2", "--json", "--quiet"]
        out = tmp_path / "cluster"
        run = subprocess.Popen(CHAINRT + [*argv, "--cluster", address, "--out", str(out)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENV, cwd=str(ROOT))
        victim, lost = None, set()
        deadline = time.monotonic() + 240
        while victim is None and time.monotonic() < deadline and run.poll() is None:
            if list(out.glob("campaign-*/batches/b*.json")):  # the campaign is under way
                for addr, keys in client.processing().items():
                    if keys:
                        victim, lost = pid_of[addr], {int(str(k).rsplit("-", 2)[1]) for k in keys}
                        os.kill(victim, signal.SIGKILL)
                        break
            time.sleep(0.01)
        assert victim is not None, run.communicate()
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
        assert "Traceback" not in stderr and "distributed" not in stderr, stderr  # no Dask log for the user
    finally:
        if client is not None:
            client.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    files = batch_files(out)
    assert [f["batch"]["index"] for f in files] == list(range(12))
    covered = [s for f in files for s in range(f["batch"]["first"], f["batch"]["first"] + f["batch"]["count"])]
    assert covered == list(range(24))                                  # each system in exactly one batch
    for f in files:
        if f["batch"]["index"] in lost:
            assert f["pid"] != victim                                  # re-run on the other worker
    (rep,) = reports(stdout)
    assert rep["systems"] == 24
    here = cli(*argv, "--in-process", "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    assert reports(here.stdout) == [rep]
    assert result(tmp_path / "here") == result(out)


def test_a_resumed_campaign_keeps_its_batches_whatever_batch_size_is_asked(tmp_path, capsys):
    make = _numbered(10)
    first = command.run(_args("--in-process"), make, str(tmp_path))
    assert first.complete and len(first.records) == 4  # batches of 3
    (campaign_dir(tmp_path) / "batches" / "b000003.json").unlink()
    p = argparse.ArgumentParser()
    command.add_arguments(p, batch=3)
    again = command.run(p.parse_args(["--in-process", "--batch", "5"]), make, str(tmp_path))
    assert "resuming with the campaign's batches of 3 systems" in capsys.readouterr().err
    assert again.complete and [b.count for b in again.spec.batches] == [3, 3, 3, 1]
    assert [n for part in again.results("all") for n in part["numbers"]] == list(range(10))
