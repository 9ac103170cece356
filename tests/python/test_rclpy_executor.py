"""chainrt.rclpy with real rclpy nodes over Fast DDS: unchanged nodes under every policy,
services/clients/futures, callback groups under several threads, the dispatch order under FP
and EDF, exceptions in user callbacks, model binding and the monitor.

Every test has its own rclpy Context on its own ROS_DOMAIN_ID (LOCALHOST discovery). No test
asserts a wall-clock figure: orders, counts and overlaps only.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("chainrt._rclpy_exec", reason="chainrt.rclpy needs the ROS 2 build (scripts/setup)")

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from chainrt.rclpy import ChainExecutor  # noqa: E402

_ids = itertools.count()


@pytest.fixture
def ctx():
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = Context()
    rclpy.init(context=context, domain_id=200 + (os.getpid() + next(_ids)) % 30)
    yield context
    try:
        rclpy.shutdown(context=context)
    except Exception:
        pass


def spin_until(ex, cond, limit=10.0):
    end = time.monotonic() + limit
    while not cond() and time.monotonic() < end:
        ex.spin_once(timeout_sec=0.05)
    return cond()


class Talker(Node):
    """An ordinary node written for SingleThreadedExecutor."""

    def __init__(self, context):
        super().__init__("talker", context=context)
        self.pub = self.create_publisher(String, "chatter", 10)
        self.sent = 0
        self.create_timer(0.005, self.tick)

    def tick(self):
        self.sent += 1
        self.pub.publish(String(data=f"hello {self.sent}"))


class Listener(Node):
    def __init__(self, context):
        super().__init__("listener", context=context)
        self.heard = []
        self.create_subscription(String, "chatter", lambda m: self.heard.append(m.data), 10)


@pytest.mark.parametrize("policy", ["ros-default", "fp", "edf", "picas", "mixed"])
def test_unchanged_nodes_run_under_each_policy(ctx, policy):
    talker, listener = Talker(ctx), Listener(ctx)
    with ChainExecutor(policy=policy, context=ctx, report=False) as ex:
        ex.add_node(talker)
        ex.add_node(listener)
        assert spin_until(ex, lambda: len(listener.heard) >= 20)
        assert ex.policy == policy
        assert listener.heard[0].startswith("hello ")
        r = ex.report()
        assert r["callbacks"]["talker/timer@5ms"]["instances"] >= 20
        assert r["callbacks"]["listener/sub:/chatter"]["instances"] >= 20
        assert "listener/sub:/chatter" in ex.unmatched
        ex.shutdown()
    talker.destroy_node()
    listener.destroy_node()


def test_spin_with_several_threads_and_shutdown_from_a_callback(ctx):
    talker, listener = Talker(ctx), Listener(ctx)
    ex = ChainExecutor(policy="fp", threads=3, context=ctx, report=False)
    ex.add_node(talker)
    ex.add_node(listener)

    def check():
        if len(listener.heard) >= 30:
            ex.shutdown(timeout_sec=0)
    listener.create_timer(0.01, check)
    done = threading.Event()
    th = threading.Thread(target=lambda: (ex.spin(), done.set()), daemon=True)
    th.start()
    assert done.wait(20), "spin() did not return after shutdown()"
    assert len(listener.heard) >= 30


def test_services_clients_and_futures(ctx):
    from rcl_interfaces.srv import GetParameterTypes

    server = Node("server", context=ctx)

    def handle(request, response):
        response.types = [len(n) for n in request.names]
        return response
    server.create_service(GetParameterTypes, "name_lengths", handle)
    client_node = Node("client", context=ctx)
    client = client_node.create_client(GetParameterTypes, "name_lengths")
    with ChainExecutor(policy="edf", context=ctx, report=False) as ex:
        ex.add_node(server)
        ex.add_node(client_node)
        assert client.wait_for_service(timeout_sec=10)
        for names in (["a", "bcd"], ["hello", "", "xy"]):
            future = client.call_async(GetParameterTypes.Request(names=names))
            ex.spin_until_future_complete(future, timeout_sec=10)
            assert future.done()
            assert list(future.result().types) == [len(n) for n in names]
        # a plain future completed by a timer callback
        fut = ex.create_future()
        tmr = server.create_timer(0.02, lambda: fut.done() or fut.set_result(42))
        ex.spin_until_future_complete(fut, timeout_sec=10)
        assert fut.result() == 42
        tmr.cancel()
        # an async (coroutine) callback awaiting a client call inside the executor
        results = []

        async def ask():
            resp = await client.call_async(GetParameterTypes.Request(names=["four"]))
            results.append(list(resp.types))
        task = ex.create_task(ask)
        ex.spin_until_future_complete(task, timeout_sec=10)
        assert results == [[4]]
        ex.shutdown()


def test_mutually_exclusive_groups_never_overlap_with_several_threads(ctx):
    node = Node("groups", context=ctx)
    mx = MutuallyExclusiveCallbackGroup()
    re_ = ReentrantCallbackGroup()
    lock = threading.Lock()
    state = {"mx": 0, "mx_max": 0, "re": 0, "re_max": 0, "mx_runs": 0, "re_runs": 0}

    def work(group):
        def cb(*_):
            with lock:
                state[group] += 1
                state[group + "_max"] = max(state[group + "_max"], state[group])
                state[group + "_runs"] += 1
            time.sleep(0.002)
            with lock:
                state[group] -= 1
        return cb
    pub = node.create_publisher(String, "load", 50)
    for i in range(3):
        node.create_timer(0.003, work("mx"), callback_group=mx)
        node.create_subscription(String, "load", work("mx"), 50, callback_group=mx)
        node.create_timer(0.003, work("re"), callback_group=re_)
    node.create_timer(0.002, lambda: pub.publish(String(data="x")))
    ex = ChainExecutor(policy="fp", threads=4, context=ctx, report=False)
    ex.add_node(node)

    def stop():
        time.sleep(1.5)
        ex.shutdown(timeout_sec=0)
    threading.Thread(target=stop, daemon=True).start()
    ex.spin()
    assert state["mx_runs"] > 50 and state["re_runs"] > 50
    assert state["mx_max"] == 1, "two callbacks of one mutually exclusive group ran at once"


ORDER_MODEL = """
chainrt: 1
name: order
hosts: [{name: h, cores: 2}]
executors:
  - {name: main, host: h, policy: fp, threads: [{name: t0}]}
nodes:
  - {name: order_node, executor: main}
  - {name: order_sink, executor: main}
topics:
  - {name: order_topic, size: 64B}
callbacks:
  - {name: first,  kind: timer, node: order_node, period: 300ms, wcet: 1ms, priority: 1}
  - {name: second, kind: timer, node: order_node, period: 300ms, wcet: 1ms, priority: 3}
  - {name: third,  kind: timer, node: order_node, period: 300ms, wcet: 1ms, priority: 2}
  - {name: sink,   kind: subscription, node: order_sink, topic: order_topic, wcet: 1ms, priority: 5}
chains:
  - {name: c_first,  callbacks: [first],  period: 300ms, deadline: 30ms}
  - {name: c_second, callbacks: [second], period: 300ms, deadline: 10ms}
  - {name: c_third,  callbacks: [third],  period: 300ms, deadline: 20ms}
"""


@pytest.mark.parametrize("policy,expected", [
    ("fp", ["second", "third", "first"]),      # priority 3 > 2 > 1
    ("edf", ["second", "third", "first"]),     # deadline 10 < 20 < 30 ms after equal releases
    ("ros-default", ["first", "second", "third"]),  # timers in registration order
])
def test_dispatch_order_on_a_deterministic_scenario(ctx, tmp_path, policy, expected):
    model = tmp_path / "order.yaml"
    text = ORDER_MODEL
    if policy == "edf":  # equal priorities: only the deadlines decide
        text = text.replace("priority: 3", "priority: 1").replace("priority: 2", "priority: 1")
    model.write_text(text)
    node = Node("order_node", context=ctx)
    ran = []
    # created together with one period: the three releases are microseconds apart, their
    # deadlines 10 ms apart
    for name in ("first", "second", "third"):
        node.create_timer(0.3, lambda n=name: ran.append(n))
    # the model's subscription 'sink' has no node here: allowed explicitly
    with ChainExecutor(model=str(model), policy=policy, context=ctx, report=False, allow_unbound=True) as ex:
        ex.add_node(node)
        assert ex.unmatched == [] or all("/service:" in u or "waitable" in u for u in ex.unmatched)
        time.sleep(0.35)  # all three timers are due before the executor looks
        for _ in range(3):
            ex.spin_once(timeout_sec=1)
        assert ran[:3] == expected
        ex.shutdown()


def test_arrival_order_keeps_a_stimulus_place_for_the_work_it_causes(ctx):
    """Model-less ("arrival"), oldest stimulus first: a message a timer's callback sends keeps the
    timer's release as its key, so it runs before an unrelated message that arrived (from another
    thread) while that callback ran -- though it reached the reader later. By arrival time alone
    the unrelated one would run first and a chain's later hops queue behind every input that came
    in while its earlier hops ran."""
    node = Node("stimulus", context=ctx)
    hop_pub = node.create_publisher(String, "hop", 10)
    other_node = Node("elsewhere", context=ctx)
    other_pub = other_node.create_publisher(String, "other", 10)
    ran = []
    in_tick, other_sent = threading.Event(), threading.Event()

    def tick():
        ran.append("tick")
        in_tick.set()
        assert other_sent.wait(5)           # the unrelated message arrives while this runs
        hop_pub.publish(String(data="hop"))

    def sender():
        assert in_tick.wait(10)
        other_pub.publish(String(data="other"))
        other_sent.set()

    timer = node.create_timer(0.05, tick)
    node.create_subscription(String, "hop", lambda m: ran.append("hop"), 10)
    node.create_subscription(String, "other", lambda m: ran.append("other"), 10)
    with ChainExecutor(context=ctx, report=False) as ex:
        ex.add_node(node)
        ex.add_node(other_node)
        threading.Thread(target=sender, daemon=True).start()
        assert spin_until(ex, lambda: "tick" in ran)
        timer.cancel()
        assert spin_until(ex, lambda: "hop" in ran and "other" in ran)
        assert ex.policy == "arrival"
        assert ran[:3] == ["tick", "hop", "other"], ran
        ex.shutdown()


def test_fp_order_of_subscriptions_and_unmatched_callbacks(ctx, tmp_path):
    model = tmp_path / "order.yaml"
    model.write_text(ORDER_MODEL)
    sink = Node("order_sink", context=ctx)
    ran = []
    sink.create_subscription(String, "order_topic", lambda m: ran.append("sink"), 10)
    sink.create_subscription(String, "other_topic", lambda m: ran.append("other"), 10)
    src = Node("source", context=ctx)
    p1 = src.create_publisher(String, "other_topic", 10)
    p2 = src.create_publisher(String, "order_topic", 10)
    with ChainExecutor(model=str(model), context=ctx, report=False, allow_unbound=True) as ex:
        ex.add_node(sink)
        assert ex.policy == "fp"  # the model executor's policy
        assert "order_sink/sub:/other_topic" in ex.unmatched
        assert "first" in ex.unused_model_callbacks
        end = time.monotonic() + 10
        while (p1.get_subscription_count() < 1 or p2.get_subscription_count() < 1) and time.monotonic() < end:
            time.sleep(0.02)
        p1.publish(String(data="x"))  # published first, but unmatched: lowest priority
        p2.publish(String(data="y"))
        time.sleep(0.3)
        ex.spin_once(timeout_sec=1)
        ex.spin_once(timeout_sec=1)
        assert ran == ["sink", "other"]
        ex.shutdown()


def test_exception_in_a_callback_is_reported_with_its_name_and_spin_goes_on(ctx, capfd):
    node = Node("faulty", context=ctx)
    count = {"bad": 0, "good": 0}

    def bad_callback():
        count["bad"] += 1
        raise ValueError("sensor unplugged")
    node.create_timer(0.01, bad_callback)
    node.create_timer(0.01, lambda: count.__setitem__("good", count["good"] + 1))
    with ChainExecutor(context=ctx, report=False) as ex:
        ex.add_node(node)
        assert spin_until(ex, lambda: count["bad"] >= 3 and count["good"] >= 3)
        err = capfd.readouterr().err
        assert "callback 'faulty/timer@10ms' raised ValueError: sensor unplugged" in err
        assert ex.exceptions[0] == ("faulty/timer@10ms", "ValueError: sensor unplugged")
        assert ex.report()["callbacks"]["faulty/timer@10ms"]["exceptions"] >= 3
        ex.shutdown()
    # raise_exceptions=True: rclpy's behaviour (the exception leaves spin_once)
    with ChainExecutor(context=ctx, report=False, raise_exceptions=True) as ex2:
        ex2.add_node(node)
        with pytest.raises(ValueError, match="sensor unplugged"):
            for _ in range(200):
                ex2.spin_once(timeout_sec=0.05)
        ex2.shutdown()


CHAIN_MODEL = """
chainrt: 1
name: chain
hosts: [{name: h, cores: 2}]
executors:
  - {name: main, host: h, policy: edf, threads: [{name: t0}]}
nodes:
  - {name: cam, executor: main}
  - {name: ctl, executor: main}
topics:
  - {name: image, size: 64B}
callbacks:
  - {name: capture, kind: timer, node: cam, period: 10ms, wcet: 1ms, publishes: [image]}
  - {name: control, kind: subscription, node: ctl, topic: image, wcet: 1ms}
chains:
  - {name: loop, callbacks: [capture, control], period: 10ms, deadline: 8ms}
"""


def _camera_and_control(ctx, tmp_path, on_image):
    """CHAIN_MODEL's nodes: cam's 10 ms timer publishes to ctl's subscription (on_image)."""
    model = tmp_path / "chain.yaml"
    model.write_text(CHAIN_MODEL)
    cam, ctl = Node("cam", context=ctx), Node("ctl", context=ctx)
    pub = cam.create_publisher(String, "image", 10)
    cam.create_timer(0.01, lambda: pub.publish(String(data="img")))
    ctl.create_subscription(String, "image", on_image, 10)
    return model, cam, ctl


def test_chain_monitor_report_and_topic(ctx, tmp_path):
    model, cam, ctl = _camera_and_control(ctx, tmp_path, lambda m: None)
    watcher = Node("watcher", context=ctx)
    seen = []
    from chainrt import monitor_msg
    typed = []
    watcher.create_subscription(monitor_msg.message_type(), "/chainrt/chain_stats", typed.append, 10)
    ex = ChainExecutor(model=str(model), context=ctx, stats_period=0.2, report=False)
    for n in (cam, ctl, watcher):
        ex.add_node(n)

    def stop():
        time.sleep(1.5)
        ex.shutdown(timeout_sec=0)
    threading.Thread(target=stop, daemon=True).start()
    ex.spin()
    r = ex.last_report
    # the typed message (chainrt_msgs/msg/ChainStats) with its chain's verdict
    assert typed and typed[-1].run.policy == r["policy"]
    loop = next(c for c in typed[-1].chains if c.name == "loop")
    assert loop.deadline_ns == 8_000_000 and loop.verdict in (loop.VERDICT_MET, loop.VERDICT_MISSED)
    assert (loop.verdict == loop.VERDICT_MISSED) == (loop.deadline_misses > 0)
    seen = [monitor_msg.to_dict(m) for m in typed]
    assert set(r) >= {"policy", "threads", "duration_ns", "dispatches", "chains", "callbacks", "warnings"}
    c = r["chains"]["loop"]
    assert set(c) >= {"period_ns", "deadline_ns", "wcrt_ns", "bcrt_ns", "mean_ns", "p99_ns", "instances",
                      "deadline_misses", "drops"}
    assert c["instances"] > 20 and c["deadline_ns"] == 8_000_000
    assert 0 < c["bcrt_ns"] <= c["p99_ns"] <= c["wcrt_ns"]
    assert r["callbacks"]["capture"]["cpu_total_ns"] > 0
    assert seen and "loop" in seen[-1]["chains"]
    # the monitoring message is the C++ runtime's (what `chainrt profile` reads): per callback the
    # CPU and wall time extremes and totals, where it lives, and the dispatches since the last one
    # (its plain form, monitor_msg.to_dict)
    ctl_stats = seen[-1]["callbacks"]["control"]
    assert set(ctl_stats) == {"instances", "cpu_total_ns", "cpu_max_ns", "cpu_min_ns", "wall_total_ns",
                              "wall_max_ns", "wall_min_ns", "exceptions", "drops", "node", "kind", "topic"}
    assert (ctl_stats["node"], ctl_stats["kind"], ctl_stats["topic"]) == ("/ctl", "subscription", "/image")
    assert 0 < ctl_stats["cpu_min_ns"] <= ctl_stats["cpu_max_ns"] <= ctl_stats["cpu_total_ns"]
    assert 0 < ctl_stats["wall_min_ns"] <= ctl_stats["wall_max_ns"] <= ctl_stats["wall_total_ns"]
    assert [m["seq"] for m in seen] == list(range(len(seen)))
    assert len({(m["run_id"], m["executor"]) for m in seen}) == 1
    cap = [m["samples"]["capture"] for m in seen if "capture" in m["samples"]]
    # every dispatch up to the last message is in its samples, once
    assert seen[-1]["callbacks"]["capture"]["instances"] <= sum(len(c["start_ns"]) for c in cap) \
        <= r["callbacks"]["capture"]["instances"]
    assert all(len(c["cpu_ns"]) == len(c["wall_ns"]) == len(c["release_ns"]) == len(c["start_ns"]) for c in cap)
    assert all(rel > 0 for c in cap for rel in c["release_ns"])    # a timer's release


def test_bad_arguments_are_one_line_errors(ctx, tmp_path):
    with pytest.raises(ValueError, match="unknown policy"):
        ChainExecutor(policy="fifo", context=ctx)
    with pytest.raises(ValueError, match="threads"):
        ChainExecutor(threads=0, context=ctx)
    bad = tmp_path / "bad.yaml"
    bad.write_text("chainrt: 1\nname: x\nexecutors: [{name: a, policy: nope}]\n")
    node = Node("n", context=ctx)
    ex = ChainExecutor(model=str(bad), context=ctx, report=False)
    ex.add_node(node)
    with pytest.raises(ValueError):
        ex.spin_once(timeout_sec=0)


STAMP_MODEL = """
chainrt: 1
name: stamp
hosts: [{name: h, cores: 2}]
executors:
  - {name: main, host: h, policy: edf, threads: [{name: t0, cores: [0], priority: 10}]}
nodes:
  - {name: far_sink, executor: main}
topics:
  - {name: remote, size: 64B}
callbacks:
  - {name: sink, kind: subscription, node: far_sink, topic: remote, wcet: 1ms}
chains:
  - {name: across, callbacks: [sink], period: 100ms, deadline: 20ms}
"""


def test_release_from_header_stamp_across_processes(ctx, tmp_path):
    from std_msgs.msg import Header

    model = tmp_path / "stamp.yaml"
    model.write_text(STAMP_MODEL)
    sink = Node("far_sink", context=ctx)
    got = []
    sink.create_subscription(Header, "remote", got.append, 10)
    upstream = Node("upstream", context=ctx)  # stands for another process's last callback
    pub = upstream.create_publisher(Header, "remote", 10)
    with ChainExecutor(model=str(model), context=ctx, header_stamp=True, report=False) as ex:
        ex.add_node(sink)
        end = time.monotonic() + 10
        while pub.get_subscription_count() < 1 and time.monotonic() < end:
            time.sleep(0.02)
        for _ in range(3):  # released 50 ms before it is sent: every instance misses its 20 ms
            now = time.time_ns() - 50_000_000
            pub.publish(Header(stamp=rclpy.time.Time(nanoseconds=now).to_msg()))
            time.sleep(0.02)
        assert spin_until(ex, lambda: len(got) >= 3)
        c = ex.report()["chains"]["across"]
        assert c["instances"] == 3 and c["deadline_misses"] == 3
        assert c["bcrt_ns"] >= 50_000_000
        ex.shutdown()


def test_thread_parameters_from_the_model_with_fallback(ctx, tmp_path):
    model = tmp_path / "stamp.yaml"
    model.write_text(STAMP_MODEL)
    node = Node("far_sink", context=ctx)
    seen = []
    ex = ChainExecutor(model=str(model), context=ctx, report=False, allow_unbound=True)

    def probe():
        seen.append((os.sched_getscheduler(0), os.sched_getaffinity(0)))
        ex.shutdown(timeout_sec=0)
    node.create_timer(0.01, probe)
    ex.add_node(node)
    before = (os.sched_getscheduler(0), os.sched_getaffinity(0))
    ex.spin()
    policy, cores = seen[0]
    warnings = " ".join(ex.last_report["warnings"])
    assert policy == os.SCHED_FIFO or "SCHED_FIFO" in warnings
    assert cores == {0} or "pinning" in warnings
    assert (os.sched_getscheduler(0), os.sched_getaffinity(0)) == before  # restored after spin


def test_entities_created_while_spinning_on_several_threads(ctx):
    talker = Talker(ctx)
    late = Node("late", context=ctx)
    heard = []
    ex = ChainExecutor(policy="edf", threads=3, context=ctx, report=False)
    ex.add_node(talker)
    ex.add_node(late)

    def create_once():
        if not list(late.subscriptions):
            late.create_subscription(String, "chatter", heard.append, 10)
        if len(heard) >= 20:
            ex.shutdown(timeout_sec=0)
    late.create_timer(0.02, create_once)
    done = threading.Event()
    threading.Thread(target=lambda: (ex.spin(), done.set()), daemon=True).start()
    assert done.wait(20), "spin() did not return"
    assert len(heard) >= 20
    assert "late/sub:/chatter" in ex.unmatched


def test_entities_destroyed_while_spinning(ctx):
    talker, listener = Talker(ctx), Listener(ctx)
    with ChainExecutor(policy="fp", context=ctx, report=False) as ex:
        ex.add_node(talker)
        ex.add_node(listener)
        assert spin_until(ex, lambda: len(listener.heard) >= 5)
        for sub in list(listener.subscriptions):
            listener.destroy_subscription(sub)
        for tmr in list(talker.timers):
            talker.destroy_timer(tmr)
        for _ in range(20):  # the loop lets the destroyed entities go; nothing runs them
            ex.spin_once(timeout_sec=0.01)
        n = len(listener.heard)
        listener.create_subscription(String, "chatter", listener.heard.append, 10)
        talker.create_timer(0.005, talker.tick)
        assert spin_until(ex, lambda: len(listener.heard) >= n + 5)
        ex.shutdown()
    listener.destroy_node()
    talker.destroy_node()


def test_late_timer_periods_are_counted_as_drops(ctx):
    node = Node("late_timer", context=ctx)
    ticks = []
    node.create_timer(0.01, lambda: ticks.append(1))
    blocked = []

    def block_once():
        if not blocked:
            blocked.append(1)
            time.sleep(0.08)  # the 10 ms timer misses several periods meanwhile
    node.create_timer(0.02, block_once)
    with ChainExecutor(context=ctx, report=False) as ex:
        ex.add_node(node)
        assert spin_until(ex, lambda: len(ticks) >= 10)
        assert ex.report()["callbacks"]["late_timer/timer@10ms"]["drops"] >= 3
        ex.shutdown()


# --------------------------------------------------------------------------- binding rule, services, exit

CAMERA_MODEL = """
chainrt: 1
executors: [{name: main, policy: edf}]
nodes: [{name: camera, executor: main}]
callbacks:
  - {name: capture, kind: timer, node: camera, period: PERIOD, wcet: 1ms}
  - {name: slow, kind: timer, node: camera, period: 34ms, period_tolerance: 10us, wcet: 1ms}
chains:
  - {name: c, callbacks: [capture]}
"""


def test_an_unbound_model_callback_is_an_error_at_start_unless_allowed(ctx, tmp_path):
    from chainrt.rclpy import UnboundModelCallbacks
    model = tmp_path / "camera.yaml"
    model.write_text(CAMERA_MODEL.replace("PERIOD", "33ms"))   # a 30 Hz camera written as 33 ms
    node = Node("camera", context=ctx)
    node.create_timer(1 / 30, lambda: None)
    node.create_timer(0.034, lambda: None)
    ex = ChainExecutor(model=str(model), context=ctx, report=False)
    ex.add_node(node)
    with pytest.raises(UnboundModelCallbacks) as e:
        ex.spin_once(timeout_sec=0)
    msg = str(e.value)
    assert "capture (timer, period 33 ms" in msg and "33.3333 ms" in msg and "1.01 % off" in msg
    assert "slow" not in msg                     # 34 ms binds its timer exactly
    ex.shutdown()
    ex = ChainExecutor(model=str(model), context=ctx, report=False, allow_unbound=True)
    ex.add_node(node)
    ex.spin_once(timeout_sec=0)
    assert ex.unused_model_callbacks == ["capture"] and "camera/timer@33.3333ms" in ex.unmatched
    assert any("capture" in w for w in ex.report()["warnings"])
    ex.shutdown()


def test_a_timer_binds_within_its_period_tolerance_to_the_nearest_period(ctx, tmp_path):
    model = tmp_path / "camera.yaml"
    # what discover writes for a 30 Hz timer: the period to a microsecond, its measurement's tolerance
    model.write_text(CAMERA_MODEL.replace("PERIOD", "33333us, period_tolerance: 8us"))
    node = Node("camera", context=ctx)
    node.create_timer(0.0334, lambda: None)       # 33.4 ms: outside 8 us, inside a 1 % rule
    node.create_timer(1 / 30, lambda: None)
    node.create_timer(0.034, lambda: None)
    with ChainExecutor(model=str(model), context=ctx, report=False) as ex:
        ex.add_node(node)
        ex.spin_once(timeout_sec=0)
        names = [e[3] for e in ex._ents]
        assert names[:3] == ["camera/timer@33.4ms", "capture", "slow"]
        ex.shutdown()


SERVICE_MODEL = """
chainrt: 1
executors: [{name: main, policy: edf}]
services: [{name: lookup, request_size: 64B, response_size: 64B}]
callbacks:
  - {name: tick, kind: timer, node: asker, period: 50ms, wcet: 1ms, calls: [lookup]}
  - {name: answer, kind: service, node: oracle, service: lookup, wcet: 1ms}
  - {name: on_answer, kind: client, node: asker, service: lookup, wcet: 1ms, publishes: [result]}
  - {name: use, kind: subscription, node: user, topic: result, wcet: 1ms}
chains:
  - {name: ask, callbacks: [tick, answer, on_answer, use]}
"""


def test_a_chain_through_a_service_is_bound_and_monitored_through_the_continuation(ctx, tmp_path):
    from rcl_interfaces.srv import GetParameterTypes
    model = tmp_path / "service.yaml"
    model.write_text(SERVICE_MODEL)
    asker, oracle, user = Node("asker", context=ctx), Node("oracle", context=ctx), Node("user", context=ctx)
    oracle.create_service(GetParameterTypes, "lookup", lambda req, res: res)
    cli = asker.create_client(GetParameterTypes, "lookup")
    pub = asker.create_publisher(String, "result", 10)
    used, inside = [], []
    ex = ChainExecutor(model=str(model), context=ctx, report=False)

    def done(future):
        # the continuation runs in the client callback's dispatch, with the chain's instance
        inside.append(ex._loop.current_stamp(0)[0] > 0)
        pub.publish(String(data="ok"))
    asker.create_timer(0.05, lambda: cli.call_async(GetParameterTypes.Request(names=["x"])).add_done_callback(done))
    user.create_subscription(String, "result", used.append, 10)
    for n in (asker, oracle, user):
        ex.add_node(n)
    assert cli.wait_for_service(timeout_sec=10)
    assert spin_until(ex, lambda: len(used) >= 10)
    r = ex.report()
    assert not ex.unmatched and not ex.unused_model_callbacks
    assert set(r["callbacks"]) >= {"tick", "answer", "on_answer", "use"}
    assert inside and all(inside)
    assert r["chains"]["ask"]["instances"] >= 8
    ex.shutdown()


def _run_program(code: str, tmp_path, timeout=60, sigint_after=None):
    import signal
    import subprocess
    import sys
    prog = tmp_path / "prog.py"
    prog.write_text(code)
    env = dict(os.environ, ROS_DOMAIN_ID=str(200 + (os.getpid() + next(_ids)) % 30),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    p = subprocess.Popen([sys.executable, str(prog)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if sigint_after is not None:
        assert p.stdout.readline().strip() == "spinning"
        time.sleep(sigint_after)
        p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def test_no_weakmethod_left_in_the_context_to_print_at_exit(ctx):
    """rclpy's Executor registers its bound `wake` with the context as a WeakMethod whose finaliser
    removes it from the context's list. A shutdown empties that list while the WeakMethods it
    iterated are still alive; an executor that dies then makes the finaliser remove from the new
    list: "Exception ignored in: <function WeakMethod...>" ValueError at exit. The executor leaves
    no WeakMethod there (a plain function with a weak reference does the wake-up)."""
    import gc
    import sys
    import weakref
    ex = ChainExecutor(context=ctx, report=False)
    ours = [w for w in ctx._callbacks if isinstance(w, weakref.WeakMethod) and w() == ex.wake]
    assert not ours
    # the sequence that printed the traceback: the list iterated by a shutdown is kept alive
    # while the context's list is replaced, and the executor dies meanwhile
    raised = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = raised.append
    try:
        held = list(ctx._callbacks)
        ctx._callbacks = []
        del ex
        gc.collect()
        del held
    finally:
        sys.unraisablehook = old_hook
    assert not raised, [str(r.exc_value) for r in raised]


def test_nothing_is_dispatched_once_the_context_is_shut_down(ctx):
    """After Ctrl-C (rclpy's handler shuts the context down) or rclpy.shutdown() from another
    thread, a thread that was already handed a due timer does not run it (its take would raise
    RCLError, its callback would run after shutdown)."""
    node = Node("after_shutdown", context=ctx)
    ran = []
    node.create_timer(0.001, lambda: ran.append(1))
    ex = ChainExecutor(threads=3, context=ctx, report=False)
    ex.add_node(node)
    ex.spin_once(timeout_sec=0)     # built; the timer's handle is held by the loop
    time.sleep(0.01)                # due
    n = len(ran)
    rclpy.shutdown(context=ctx)
    for _ in range(3):
        try:
            ex.spin_once(timeout_sec=0.05)
        except Exception as err:    # rclpy's own shutdown exceptions end a spin; nothing else
            assert type(err).__name__ in ("ExternalShutdownException", "ShutdownException"), repr(err)
    assert len(ran) == n and not ex.exceptions


def test_summary_after_rclpy_shutdown_from_another_thread(tmp_path):
    rc, out, err = _run_program("""
import threading, time
import rclpy
from chainrt.rclpy import ChainExecutor
rclpy.init()
import tempfile
node = rclpy.create_node("summary_test")
node.create_timer(0.005, lambda: None)
model = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
model.write("chainrt: 1\\ncallbacks: [{name: tick, kind: timer, node: summary_test, period: 5ms, wcet: 1ms}]\\n"
            "chains: [{name: c, callbacks: [tick]}]\\n")
model.close()
ex = ChainExecutor(model=model.name)
ex.add_node(node)
threading.Thread(target=lambda: (time.sleep(1.0), rclpy.shutdown()), daemon=True).start()
try:
    ex.spin()
except Exception as e:
    print(type(e).__name__)
r = ex.last_report
print("dispatches", r["dispatches"], "duration", r["duration_ns"])
""", tmp_path)
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.startswith("dispatches"))
    assert int(line.split()[1]) > 50 and int(line.split()[3]) > 500_000_000, out
    summary = next(x for x in err.splitlines() if x.startswith("chainrt.rclpy: policy"))
    assert " 0 callbacks" not in summary and "in 0.0 s" not in summary, err
    assert "without a real counterpart" not in err, err
    assert "chain c:" in err and " 0 instances" not in err, err


def test_no_leak_report_at_exit_while_a_thread_holds_the_executor(tmp_path):
    """A program's daemon thread that still references the executor when the interpreter exits
    (a run clock, a watchdog) keeps it alive to the end: that is no leak of the user's, and the
    exit prints nothing of the bindings' internals."""
    rc, out, err = _run_program("""
import threading, time
import rclpy
from chainrt.rclpy import ChainExecutor
rclpy.init()
node = rclpy.create_node("exit_test")
node.create_timer(0.01, lambda: None)
ex = ChainExecutor(report=False)
ex.add_node(node)
def clock():
    time.sleep(0.5)
    rclpy.try_shutdown()
    time.sleep(60)      # still holding ex when the main thread ends
    print(ex)
threading.Thread(target=clock, daemon=True).start()
ex.spin()
print("ended")
""", tmp_path)
    assert rc == 0 and "ended" in out, err
    assert "leaked" not in err and "nanobind" not in err, err


def test_record_from_now_starts_the_chain_statistics_afresh(ctx, tmp_path):
    seen = []
    model, cam, ctl = _camera_and_control(ctx, tmp_path, seen.append)
    with ChainExecutor(model=str(model), context=ctx, report=False) as ex:
        ex.add_node(cam)
        ex.add_node(ctl)
        ex.spin_once(timeout_sec=0)
        assert spin_until(ex, lambda: ex.report()["chains"]["loop"]["instances"] >= 5)
        ex.record_from_now()
        assert ex.report()["chains"]["loop"]["instances"] == 0   # the warm-up's are dropped
        n = len(seen)
        assert spin_until(ex, lambda: len(seen) >= n + 5)
        assert 0 < ex.report()["chains"]["loop"]["instances"] <= len(seen) - n
        ex.shutdown()


@pytest.mark.parametrize("threads", [1, 3])
def test_a_program_exits_cleanly_while_a_daemon_thread_spins(tmp_path, threads):
    """A daemon thread still inside the executor (spin's wait for work: next() without the GIL)
    when the interpreter exits. CPython before 3.14 ends a thread that takes the GIL back during
    finalization with pthread_exit, whose unwinding through the binding's C++ aborted the process
    ("terminate called without an active exception", exit 134). Such a thread is parked until the
    process ends; the exiting thread itself (here: an atexit handler registered before chainrt
    was imported, so it runs after chainrt's) still uses the executor."""
    rc, out, err = _run_program(f"""
import atexit, threading, time
import rclpy

def at_exit():  # runs on the exiting thread after chainrt's own exit hook
    print("dispatched", ex.report(with_samples=False)["dispatches"] > 0, flush=True)

atexit.register(at_exit)
from chainrt.rclpy import ChainExecutor
rclpy.init()
node = rclpy.create_node("exit_while_spinning")
node.create_timer(0.01, lambda: None)
ex = ChainExecutor(threads={threads}, report=False)
ex.add_node(node)
threading.Thread(target=ex.spin, daemon=True).start()
time.sleep(0.5)


class SlowFinalizer:  # finalization outlasts spin's wait slice, so the spinning thread wakes in it
    def __del__(self, sleep=time.sleep):
        sleep(0.3)


keep = SlowFinalizer()
print("main ends", flush=True)
""", tmp_path)
    assert "terminate called" not in err, err
    assert rc == 0, (rc, err)
    assert out.splitlines() == ["main ends", "dispatched True"], out
