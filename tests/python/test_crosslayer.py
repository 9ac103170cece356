"""CROS-RT's cross-layer path across hosts (chainrt.crosslayer): two network namespace hosts,
a remote two-hop chain between them, and checks from the kernel side that the XDP selector
classified the chain's packets (its BPF counters) and that the DDS threads and the class kernel
threads ran at the chain's priority. Needs root, clang and libbpf: otherwise skipped with the
reason. The pure parts (C1 map, command line, netns names) run everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rosutil import crosslayer_unavailable, require_crosslayer

from chainrt import fastdds
from chainrt.crosslayer import kernel, netns
from chainrt.model import load_model

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples/two_hosts.yaml"


def test_port_classes_rank_priorities_and_pin_to_the_executor_core():
    m = load_model(str(MODEL))
    entries, prio = kernel.port_classes(m, domain_id=4)
    ports = fastdds.participant_ports(m, 4)
    assert prio == {1: 60}
    by_port = {e.port: e for e in entries}
    assert set(by_port) == set(ports["robot_proc"]) | set(ports["server_proc"])
    assert {by_port[p].cpu for p in ports["robot_proc"]} == {0}
    assert {by_port[p].cpu for p in ports["server_proc"]} == {1}
    assert all(e.cls == 1 for e in entries)


def test_selector_command_carries_map_classes_and_server():
    sel = kernel.Selector(["eth9"], [kernel.PortClass(7570, 1, 0), kernel.PortClass(9000, 0, -1)],
                          {1: 70}, prefix=["ip", "netns", "exec", "x"], server=(2_000_000, 10_000_000))
    cmd = sel.command(Path("o.o"), Path("ld"), Path("s.json"), Path("r"))
    assert cmd[:6] == ["ip", "netns", "exec", "x", "ld", "o.o"]
    s = " ".join(cmd)
    assert "--iface eth9" in s and "--port 7570:1:0" in s and "--port 9000:0:-1" in s
    assert "--class 1:fifo:70" in s and "--class 0:server:2000000:10000000" in s
    assert "--server-priority 71" in s


def test_namespace_names_are_unique_per_process_and_short():
    net = netns.HostNetwork(["a", "b", "c"], tag="crt4194303")
    assert len(set(net.namespace.values())) == 3 and net.switch == "crt4194303sw"
    assert all(len(i) <= 15 for i in net.interface.values())


def test_crosslayer_map_command():
    out = subprocess.run([sys.executable, "-m", "chainrt.cli", "crosslayer", str(MODEL), "--map", "--json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["map"]
    assert {r["process"] for r in rows} == {"robot_proc", "server_proc"} and all(r["priority"] == 60 for r in rows)
    bad = subprocess.run([sys.executable, "-m", "chainrt.cli", "crosslayer", str(MODEL), "--iface", "lo",
                          "--nonrt-server", "5ms/1ms"], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_remote_two_hop_chain_is_classified_and_runs_at_its_priority(capsys):
    require_crosslayer(capsys)
    from chainrt.crosslayer import session
    os.environ.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    before = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
    res = session.run_on_hosts(str(MODEL), 2_000_000_000, kernel=True, probe=True, warmup_ns=1_000_000_000)
    after = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
    assert not {n for n in after - before if n.startswith(f"crt{os.getpid()}")}, "namespaces left behind"
    chain = res["chains"]["control"]
    # (in full: which topic did not match, and what each host's selector saw of the traffic)
    assert chain["instances"] > 0, "\n".join([*res.get("warnings", []), json.dumps(res.get("selector"))])
    m = load_model(str(MODEL))
    ports = fastdds.participant_ports(m, int(os.environ["ROS_DOMAIN_ID"]))
    sel = {s["host"]: s for s in res["selector"]}
    # kernel side: each host's XDP selector saw the chain's data on the receiving participant's
    # known user port, and classified it as the real-time class (1)
    n = chain["instances"]
    assert sel["server"]["ports"][str(ports["server_proc"][1])] >= n
    assert sel["robot"]["ports"][str(ports["robot_proc"][1])] >= n
    assert sel["server"]["classes"][1] >= n and sel["robot"]["classes"][1] >= n
    # DDS threads (reception, events) of both processes at the executor's priority (60)
    threads = res["threads"]["process_threads"]
    assert set(threads) == {"robot_proc", "server_proc"}
    for proc, ts in threads.items():
        udp = {k: v for k, v in ts.items() if k.startswith("dds.udp.") or k.startswith("dds.ev.")}
        assert udp, proc
        assert all(v == {"policy": "fifo", "priority": 60} for v in udp.values()), (proc, udp)
    # the NAPI threads running the selector above every class (62), like the paper's kmond
    for per_host in res["threads"]["selector_threads"]:
        assert per_host and all(t["policy"] == "fifo" and t["priority"] == 62 for t in per_host), per_host
    # kernel threads: the real-time class's cpumap threads at 60, the non-RT class's below
    for per_host in res["threads"]["class_threads"]:
        assert per_host["1"] and all(t["policy"] == "fifo" and t["priority"] == 60 for t in per_host["1"])
        assert per_host["0"] and all(t["policy"] == "other" for t in per_host["0"])


def test_without_privilege_hosts_run_here_with_a_note(monkeypatch, capsys):
    """No root: `chainrt run` of a multi-host model says why in one line and runs every host on
    this machine; --crosslayer / --hosts netns fail with that reason instead."""
    import argparse
    from chainrt import runtime
    from chainrt.crosslayer import cli
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    calls = []
    monkeypatch.setattr(runtime, "run_model", lambda path, d, **kw: calls.append(path) or {"chains": {}})
    from chainrt.model import load_model
    model = load_model(str(MODEL))
    args = argparse.Namespace(model=str(MODEL), hosts="auto", crosslayer=False, nonrt_server=None)
    assert cli.wanted(args, model)  # several hosts: the namespaces are tried first
    assert cli.run_model(args, 1_000_000, model=model) == {"chains": {}}
    assert calls == [str(MODEL)]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "need root" in err
    for a in (dict(crosslayer=True), dict(hosts="netns")):
        with pytest.raises(RuntimeError, match="need root"):
            cli.run_model(argparse.Namespace(**{**vars(args), **a}), 1_000_000, model=model)


def test_interrupted_run_removes_its_namespaces():
    """SIGINT and SIGTERM during a namespace run: exit 0/130 with the figures so far, and no
    namespace, no chainrt-xdp left behind."""
    why = crosslayer_unavailable()
    if why:
        pytest.skip(why)
    import signal
    import time
    env = dict(os.environ, ROS_DOMAIN_ID=str(100 + os.getpid() % 40))
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([sys.executable, "-m", "chainrt.cli", "run", str(MODEL), "--duration", "30s",
                              "--crosslayer", "--no-compare", "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as from a terminal
        time.sleep(4)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        assert p.returncode in (0, 130), (err, out[-2000:])  # out: the failed processes and why
        assert "Traceback" not in err
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"crt{p.pid}h" not in left
        # the selector's loader runs with --iface crt<pid>h<i>: none may survive the run
        xdp = subprocess.run(["pgrep", "-f", f"iface crt{p.pid}h"], capture_output=True, text=True).stdout
        assert not xdp.split(), xdp


def test_experiment_models_and_server_budget_from_the_analysis():
    from chainrt.experiments import cros_rt_kernel as x
    from chainrt.model import load_model_from_string
    m = load_model_from_string(x.two_chain_model("16KiB"))
    assert {c.name for c in m.chains} == {"high", "low"}
    assert len({e.process for e in m.executors}) == 4  # P3: one chain per executor and process
    bounds, _ = x.cros_rt_bounds(x.two_chain_model())
    assert bounds["high"] == 5_000_000  # no communication cost declared: its two callbacks
    q, t = x.server_budget()
    assert 0 < q < t
    # the largest budget: one step more makes a chain unschedulable
    _, res = x.cros_rt_bounds(x.two_chain_model(server=(q + 100_000, t)))
    assert not all(res["chains"][c]["schedulable"] for c in ("high", "low"))
    rows = [dict(load="paper", run=r, config=c, hi_p99_ms=p, hi_p99_excess_ms=p - 5, hi_jitter_ms=p - 5,
                 hi_wcrt_ms=p + 1 + r, lo_wcrt_ms=30.0, pdr=1.0, hi_misses=0)
            for r in range(2) for c, p in (("vanilla", 60.0), ("app-dds", 9.0), ("full", 6.0))]
    # a flood's worst case in another load and configuration must not leak into the full setup's fit
    rows.append(dict(rows[0], load="overload", config="app-dds", hi_wcrt_ms=390.0))
    s = x.summarize(rows)
    assert abs(s["loads"]["paper"]["ratios"]["p99_vanilla_over_full"] - 10.0) < 1e-9
    assert abs(s["loads"]["paper"]["per_run_ratios"]["p99_appdds_over_full"]["mean"] - 1.5) < 1e-9
    full = s["cros_rt"]["loads"]["paper"]["full"]
    # C^R from the fit run (run 0) only: WCRT 7 ms − 5 ms of work; checked on run 1 (8 ms)
    assert full["fit_runs"] == [0] and full["check_runs"] == [1]
    assert abs(full["fitted_remote_ms"] - 2.0) < 1e-9
    assert full["max_check_ms"]["high"] == 8.0
    # bound: 5 ms of work + C^R + the selection blocking (bounded by the fixed part of C^R)
    assert abs(full["bound_ms"]["high"] - 9.0) < 1e-6
    assert full["holds_on_check_runs"] is True
    app = s["cros_rt"]["loads"]["paper"]["app-dds"]
    assert abs(app["fitted_remote_ms"] - 5.0) < 1e-9 and app["max_check_ms"]["high"] == 11.0
    # C^R = 385 ms > T: the level-i busy period (the high chain is pipelined: its hop and the
    # selection blocking once, 5 ms of work per instance): 385 + 385 + 5 = 775 ms; the low chain
    # sees 2.5 ms + 385 ms of the high chain every 20 ms on each CPU: no bound
    bound = s["cros_rt"]["loads"]["overload"]["app-dds"]["bound_ms"]
    assert abs(bound["high"] - 775.0) < 1e-6 and bound["low"] is None


def test_chain_components_from_traces_and_summary_from_csv(tmp_path):
    import csv
    import json
    import math
    from chainrt.experiments import cros_rt_kernel as x
    ms = 1_000_000
    # instance k released at 20k ms: publisher starts 0.1 ms late and runs 2.5 ms; the message
    # is dispatched at the subscriber 1 ms after that (instance 3: 10 ms); it runs 2.5 ms
    pub = [dict(executor="high_pub_x", callback="high_pub", thread=0, release=20 * k * ms,
                start=20 * k * ms + ms // 10, finish=20 * k * ms + 26 * ms // 10, cpu=0, deadline=-1) for k in range(5)]
    sub = [dict(executor="high_sub_x", callback="high_sub", thread=0, release=20 * k * ms + 7 * ms,  # other clock origin
                start=20 * k * ms + 7 * ms + (36 if k != 3 else 126) * ms // 10,
                finish=20 * k * ms + 7 * ms + (61 if k != 3 else 151) * ms // 10, cpu=0, deadline=-1) for k in range(5)]
    (tmp_path / "high_pub.jsonl").write_text("".join(json.dumps(d) + "\n" for d in pub))
    (tmp_path / "high_sub.jsonl").write_text("".join(json.dumps(d) + "\n" for d in sub) + "not json\n")
    c = x.chain_components(str(tmp_path))
    assert abs(c["pub_start"]["max"] - 0.1) < 1e-9 and abs(c["pub_done"]["p50"] - 2.6) < 1e-9
    assert abs(c["sub_start"]["p50"] - 3.6) < 1e-9 and abs(c["sub_start"]["max"] - 12.6) < 1e-9
    assert abs(c["sub_wall"]["max"] - 2.5) < 1e-9 and abs(c["response"]["max"] - 15.1) < 1e-9
    assert math.isnan(x.chain_components(str(tmp_path / "none"))["response"]["max"])  # no trace: no figure
    rows = [dict(load="paper", run=r, config=cf, hi_p99_ms=p, hi_p99_excess_ms=p - 5, hi_jitter_ms=p - 5,
                 hi_wcrt_ms=p + 1, lo_wcrt_ms=30.0, pdr=1.0, hi_misses=0)
            for r in range(3) for cf, p in (("vanilla", 60.0), ("app-dds", 9.0), ("full", 6.0))]
    with open(tmp_path / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    s = x.summarize_csv(str(tmp_path / "runs.csv"), str(tmp_path / "out"))
    assert (tmp_path / "out" / "two_chains.png").is_file() and (tmp_path / "out" / "summary.json").is_file()
    assert s["cros_rt"]["loads"]["paper"]["full"]["fit_runs"] == [0, 2]
    assert s["cros_rt"]["loads"]["paper"]["full"]["holds_on_check_runs"] is True
    import gzip  # the stored series in docs/ are gzipped: the same rows read from a .csv.gz
    with open(tmp_path / "runs.csv", "rb") as f, gzip.open(tmp_path / "runs.csv.gz", "wb") as g:
        g.write(f.read())
    assert x.summarize_csv(str(tmp_path / "runs.csv.gz"), str(tmp_path / "out_gz")) == s


def test_platform_blackout_function_and_curve():
    from chainrt.crosslayer import platform as plat
    ms = 1_000_000
    iv = plat.merge([(20 * ms, 25 * ms), (0, 10 * ms), (100 * ms, 150 * ms), (8 * ms, 9 * ms)])
    assert iv == [(0, 10 * ms), (20 * ms, 25 * ms), (100 * ms, 150 * ms)]
    # S(Δ): the most blackout in any window of length Δ
    assert plat.blackout(iv, 5 * ms) == 5 * ms
    assert plat.blackout(iv, 25 * ms) == 25 * ms       # inside the 50 ms blackout
    assert plat.blackout(iv, 200 * ms) == 65 * ms      # all of it
    assert plat.blackout([], 10 * ms) == 0
    assert plat.overlap(iv, 5 * ms, 22 * ms) == 7 * ms
    assert plat.clip(iv, 5 * ms, 22 * ms) == [(5 * ms, 10 * ms), (20 * ms, 22 * ms)]
    # the model's curve: S at each window, the largest over the CPUs, plus the probe's own time
    # (at most ⌈Δ/P⌉ + 1 wake-ups of its cost)
    c = dict(plat.curve([iv, [(0, 60 * ms)]], probe_period_ns=ms // 2, probe_cost_ns=1000))
    assert c[10 * ms] == 10 * ms                                   # never above the window
    assert c[100 * ms] == 60 * ms + (200 + 1) * 1000               # the other CPU's 60 ms
    assert c[2000 * ms] == 65 * ms + (4000 + 1) * 1000
    assert list(c) == [int(w * ms) for w in plat.CURVE_WINDOWS_MS]
    assert plat.widen([(10 * ms, 11 * ms), (12 * ms, 13 * ms)], ms) == [(9 * ms, 13 * ms)]


def test_platform_term_bounds_and_fit_without_the_blackouts(tmp_path):
    import json
    from chainrt.crosslayer import platform as plat
    from chainrt.experiments import cros_rt_kernel as x
    ms = 1_000_000

    def row(run, wcrt, hop, q_ms):
        # (the low chain at 25 ms: its 20 ms of work and a hop, as in the full setup's runs); the
        # run's platform: one blackout of q_ms on CPU 0, as the hosts' curve
        r = dict(load="paper", run=run, config="full", hi_p99_ms=wcrt, hi_p99_excess_ms=wcrt - 5,
                 hi_jitter_ms=wcrt - 5, hi_wcrt_ms=wcrt, lo_wcrt_ms=25.0, pdr=1.0, hi_misses=0,
                 hi_hop_destalled_max_ms=hop, plat_stall_max0_ms=q_ms, plat_stall_max1_ms=0.0)
        for w, x in plat.curve([[(0, int(q_ms * ms))], []]):
            r[f"plat_s_{w // 1000}us_ns"] = float(x)
        return r
    # fit run 0: a 9 ms stall made its WCRT 16 ms, the hop without the stall is 1 ms;
    # check run 1 (7.5 ms, its own 1 ms of blackout), check run 3 (12 ms with a 5 ms blackout)
    rows = [row(0, 16.0, 1.0, 9.0), row(1, 7.5, 0.8, 1.0), row(2, 6.5, 1.0, 0.5), row(3, 12.0, 0.9, 5.0)]
    plain = x.cros_rt_check(rows)["loads"]["paper"]["full"]
    # C^R = 11 ms from the stalled fit run: 5 + 2·11 = 27 ms, beyond the period (the next
    # instance ends at 22 + 2·5 = 32 <= 40 ms: the busy period ends there)
    assert abs(plain["bound_ms"]["high"] - 27.0) < 1e-6
    p = plain["platform"]
    assert p["fitted_remote_ms"] == 1.0
    by_run = {r["run"]: r for r in p["runs"]}
    # the analysis' bound with no blackout is 5 ms + 2·C^R = 7 ms; each run's curve adds
    # Σ_h n_h·S(w): the high chain's hop may run on both cores of both hosts, 4·S(w). Run 1:
    # S = 1 ms for every window from 1 ms on: 7 + 4 = 11 ms
    assert abs(by_run[1]["bound_ms"]["high"] - 11.0) < 1e-6
    # run 3: 7 + 4·5 = 27 ms > T = 20 ms. The non-pipelined busy period gives 2·7 + 20 = 34 ms;
    # the chain is pipelined, and the whole-chain form pays the hop and message selection once:
    # w = 2 + 5 (q+1) + 4·Ŝ(w), Ŝ(w) = σ + ⌈ρw⌉ with ρ = 5 ms / 2 s and σ = 5 − 5ρ ms (the
    # curve's 5 ms window): q = 0: w = (7 + 19.95)/0.99 = 27.22 ms; q = 1: 32.27 <= 40: R = 27.22
    assert abs(by_run[3]["bound_ms"]["high"] - 26.95 / 0.99) < 1e-3 and by_run[3]["holds"]
    assert p["check_runs"] == 2 and p["check_runs_covered"] == 2 and p["holds_on_check_runs"] is True
    assert p["check_verdicts"] == {"covered": 4, "beaten": 0, "miss": 0, "pessimistic": 0} and p["sound_on_all_runs"]
    # the stalled fit run itself: its 9 ms blackout in the platform term covers its 16 ms
    assert by_run[0]["verdict"]["high"] == "covered" and by_run[0]["bound_ms"]["high"] >= 16.0
    # a platform gone for 2 s (S(Δ) = Δ at every window): no finite bound; a run that
    # still met its deadline is "pessimistic", one that missed it a "miss" the analysis foresaw
    big = row(5, 25.0, 1.0, 2000.0)
    v = x.platform_check([rows[0], big], [rows[0]], [big], "4KiB", None)["runs"][1]["verdict"]
    assert v == {"high": "miss", "low": "pessimistic"}
    # rows without probe columns: no platform term
    assert "platform" not in x.cros_rt_check([{k: v for k, v in r.items() if not k.startswith(("plat", "hi_hop"))}
                                              for r in rows])["loads"]["paper"]["full"]


def test_platform_columns_align_traces_with_the_probe(tmp_path):
    import json
    from chainrt.experiments import cros_rt_kernel as x
    ms = 1_000_000
    start = 1_000 * ms  # both processes started at 1 s on CLOCK_MONOTONIC
    for proc in ("high_pub", "high_sub"):
        (tmp_path / f"{proc}.jsonl.start").write_text(f"{start}\n")
    # instances released at 20k ms (k ≥ 1), each 6 ms long; instance 2 is 4 ms longer, and the
    # probe saw a 4 ms blackout on CPU 0 inside it
    sub = [dict(callback="high_sub", release=20 * k * ms, start=20 * k * ms + 3 * ms,
                finish=20 * k * ms + (10 if k == 2 else 6) * ms) for k in range(1, 5)]
    (tmp_path / "high_sub.jsonl").write_text("".join(json.dumps(d) + "\n" for d in sub))

    class Probe:
        blackouts = {0: [(start + 41 * ms, start + 45 * ms)], 1: []}
        period_ns = ms // 2
        dropped = 0
        # 2000 wake-ups each over its 1 s: its own 20 ms of CPU are 10 µs per wake-up
        span = {0: (start, start + 1000 * ms), 1: (start, start + 1000 * ms)}
        cpu_ns = {0: 20 * ms, 1: 20 * ms}
    cols = x.platform_columns(Probe(), str(tmp_path), warmup_ns=10 * ms, duration_ns=100 * ms)
    assert abs(cols["hi_hop_destalled_max_ms"] - 1.0) < 1e-9  # 6 ms − 5 ms of work, stall taken out
    assert cols["plat_stall_max0_ms"] == 4.0 and cols["plat_stall_total1_ms"] == 0.0
    # the hosts' curve: the 4 ms blackout and ⌈Δ/P⌉ + 1 of the probe's 10 µs wake-ups
    assert cols["plat_s_5000us_ns"] == 4 * ms + (10 + 1) * 10_000
    assert cols["plat_s_1000us_ns"] == 1 * ms  # never above the window
    # the probe's own time unknown: no curve (the bound would miss it)
    Probe.cpu_ns = {}
    assert not [k for k in x.platform_columns(Probe(), str(tmp_path), warmup_ns=10 * ms, duration_ns=100 * ms)
                if k.startswith("plat_s_")]
    Probe.cpu_ns = {0: 20 * ms, 1: 20 * ms}
    # widened by the probe's period: 4.5 ms of blackout (instance 2's hop 0.5 ms; the others' 1 ms)
    w = x.platform_columns(Probe(), str(tmp_path), warmup_ns=10 * ms, duration_ns=100 * ms, widened=True)
    assert w["platw_stall_max0_ms"] == 4.5 and abs(w["hi_hopw_destalled_max_ms"] - 1.0) < 1e-9


def test_flood_pins_the_receive_processing_to_the_given_cpu(capsys):
    # the rx-* loads of experiment (a): the receiving interface's NAPI thread on one CPU
    why = netns.available()
    if why:
        with capsys.disabled():
            print(f"\nskipped: the flood test needs network namespaces: {why}")
        pytest.skip(why)
    import time
    from chainrt.crosslayer import session
    cpu = max(os.sched_getaffinity(0))
    with netns.HostNetwork(["a", "b"]) as net:
        prefix = f"napi/{net.interface['b']}"[:15]
        with session._FloodRun(net, session.Flood("a", "b", rate_mbps=5.0, rx_cpu=cpu), 1.0) as fl:
            napi = [tid for tid, comm in kernel._kernel_threads("napi/") if comm.startswith(prefix)]
            assert napi and all(os.sched_getaffinity(t) == {cpu} for t in napi)
            time.sleep(0.5)  # (the flood runs: its datagrams cross the pinned receive path)
    assert fl.result.get("received", 0) > 0, fl.result
