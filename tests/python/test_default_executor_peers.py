"""chainrt's `ros-default` against the default executors of the ROS 2 client libraries, on a
deterministic scenario: at one wait, two nodes each have a ready timer and a ready subscription
(N1: t1, s1; N2: t2, s2).

- chainrt `ros-default` takes every ready timer before any subscription, in registration order:
  t1, t2, s1, s2. rclcpp 29's SingleThreadedExecutor also takes all timers first
  (Executor::get_next_ready_executable: timers, subscriptions, services, clients, waitables),
  but in the wait set's order, which since rclcpp 28 follows hash maps keyed by handle addresses
  (rclcpp#2532): t1/t2 in either order, then s1/s2 in either order.
- rclpy's SingleThreadedExecutor (installed here) goes node by node (per node: timers,
  subscriptions, guard conditions, clients, services; waitables of all nodes first), and its
  nodes are a Python set, so their order is unspecified too: t1, s1, t2, s2 or t2, s2, t1, s1.
  Unlike rclcpp and chainrt, a node's subscription can run before another node's timer.
The rclpy side runs real rclpy in a subprocess (own ROS_DOMAIN_ID, localhost only); no timing is
asserted, only the order of the callbacks."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chainrt.simulation import simulate
from chainrt.model import load_model_from_string

MODEL = """
chainrt: 1
name: peers_order
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: ros-default, threads: 1}]
nodes: [{name: P, executor: e}, {name: N1, executor: e}, {name: N2, executor: e}]
topics: [{name: x, size: 16B}, {name: y, size: 16B}]
callbacks:
  - {name: src, kind: timer, node: P, period: 100ms, wcet: 1ms, publishes: [x, y]}
  - {name: s1, kind: subscription, node: N1, topic: x, wcet: 1ms}
  - {name: t1, kind: timer, node: N1, period: 100ms, offset: 500us, wcet: 1ms}
  - {name: s2, kind: subscription, node: N2, topic: y, wcet: 1ms}
  - {name: t2, kind: timer, node: N2, period: 100ms, offset: 500us, wcet: 1ms}
chains:
  - {name: C, callbacks: [src, s1], deadline: 100ms}
"""

RCLPY = r"""
import json, time
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String
rclpy.init()
order = []
p, n1, n2 = rclpy.create_node("P"), rclpy.create_node("N1"), rclpy.create_node("N2")
px, py = p.create_publisher(String, "peers_x", 10), p.create_publisher(String, "peers_y", 10)
n1.create_subscription(String, "peers_x", lambda m: order.append("s1"), 10)
n2.create_subscription(String, "peers_y", lambda m: order.append("s2"), 10)
ex = SingleThreadedExecutor()
for n in (p, n1, n2):
    ex.add_node(n)
deadline = time.monotonic() + 60
def matched():
    return (px.get_subscription_count() >= 1 and py.get_subscription_count() >= 1 and
            n1.count_publishers("peers_x") >= 1 and n2.count_publishers("peers_y") >= 1)
while not matched() and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)            # let both sides of the matches settle
px.publish(String(data="x"))
py.publish(String(data="y"))
timers = [n1.create_timer(0.05, lambda: order.append("t1")), n2.create_timer(0.05, lambda: order.append("t2"))]
time.sleep(1.0)            # the messages have arrived and the timers are due: all ready at one wait
for _ in range(4):
    ex.spin_once(timeout_sec=5)
for t in timers:
    t.cancel()
print(json.dumps(order[:4]))
rclpy.shutdown()
"""


def test_chainrt_ros_default_takes_timers_before_subscriptions_as_rclcpp():
    model = load_model_from_string(MODEL, "<peers>")
    _, trace = simulate(model, 50_000_000, trace=True)
    names = trace["callbacks"]
    order = [names[e[1]] for e in trace["events"]]
    # src publishes at 1 ms; at that polling point t1, t2 (released at 0.5 ms), s1, s2 are ready
    assert order[:5] == ["src", "t1", "t2", "s1", "s2"]


def test_rclpy_single_threaded_executor_goes_node_by_node_in_unspecified_node_order():
    pytest.importorskip("rclpy")
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(200 + os.getpid() % 30)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    out = subprocess.run([sys.executable, "-c", RCLPY], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    if out.returncode != 0 and "rclpy" in out.stderr and "ImportError" in out.stderr:
        pytest.skip("rclpy cannot be loaded here: " + out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, out.stderr
    order = json.loads(out.stdout.strip().splitlines()[-1])
    # rclpy: node by node (in an unspecified node order): one node's subscription runs before
    # the other node's timer — never so in rclcpp or chainrt's ros-default (timers first).
    assert order in (["t1", "s1", "t2", "s2"], ["t2", "s2", "t1", "s1"])
