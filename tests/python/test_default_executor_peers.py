"""chainrt's `ros-default` against the default executors of the ROS 2 client libraries, on a
deterministic scenario: at one wait, a subscription of an earlier node (N1) and a timer of a
later node (N2) are both ready.

- chainrt `ros-default` and rclcpp 29's SingleThreadedExecutor take every ready timer before any
  subscription (rclcpp Executor::get_next_ready_executable: timers, subscriptions, services,
  clients, waitables): t2, then s1.
- rclpy's SingleThreadedExecutor (installed here) goes node by node in the order the nodes were
  added (per node: timers, subscriptions, guard conditions, clients, services; waitables of all
  nodes first): s1, then t2. So rclpy's order differs from rclcpp's and chainrt's: a later
  node's timer does not overtake an earlier node's subscription.
The rclpy side runs real rclpy in a subprocess (own ROS_DOMAIN_ID, localhost only); no timing is
asserted, only the order of the callbacks."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chainrt.commands.simulate import simulate
from chainrt.model import load_model_from_string

MODEL = """
chainrt: 1
name: peers_order
hosts: [{name: h, cores: 1}]
executors: [{name: e, host: h, policy: ros-default, threads: 1}]
nodes: [{name: P, executor: e}, {name: N1, executor: e}, {name: N2, executor: e}]
topics: [{name: x, size: 16B}]
callbacks:
  - {name: src, kind: timer, node: P, period: 100ms, wcet: 1ms, publishes: [x]}
  - {name: s1, kind: subscription, node: N1, topic: x, wcet: 1ms}
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
pub = p.create_publisher(String, "peers_x", 10)
n1.create_subscription(String, "peers_x", lambda m: order.append("s1"), 10)
ex = SingleThreadedExecutor()
for n in (p, n1, n2):
    ex.add_node(n)
deadline = time.monotonic() + 60
while (pub.get_subscription_count() < 1 or n1.count_publishers("peers_x") < 1) and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)            # let both sides of the match settle
pub.publish(String(data="x"))
timer = n2.create_timer(0.05, lambda: order.append("t2"))
time.sleep(1.0)            # the message has arrived and the timer is due: both ready at one wait
ex.spin_once(timeout_sec=5)
ex.spin_once(timeout_sec=5)
timer.cancel()
print(json.dumps(order[:2]))
rclpy.shutdown()
"""


def test_chainrt_ros_default_takes_timers_before_subscriptions_as_rclcpp():
    model = load_model_from_string(MODEL, "<peers>")
    _, trace = simulate(model, 50_000_000, trace=True)
    names = trace["callbacks"]
    order = [names[e[1]] for e in trace["events"]]
    # src publishes at 1 ms; at that polling point s1 and t2 (released at 0.5 ms) are ready
    assert order[:3] == ["src", "t2", "s1"]


def test_rclpy_single_threaded_executor_goes_node_by_node():
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
    # rclpy: node N1 (added before N2) first, its subscription before N2's timer — unlike
    # rclcpp and chainrt's ros-default, which take the timer first.
    assert order == ["s1", "t2"]
