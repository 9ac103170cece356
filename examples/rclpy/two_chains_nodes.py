"""The two chains of examples/two_chains.yaml as ordinary rclpy nodes (no chainrt inside).

high: hi_sensor's 20 ms timer (2.5 ms of work) publishes hi_data; hi_control's subscription
      (2.5 ms of work) ends the chain.
low:  lo_sensor's 200 ms timer (10 ms of work) publishes lo_data; lo_logger's subscription
      (10 ms of work) ends the chain.
Each message carries the nominal release of its chain instance (the timer's expected call time,
system clock) so that the last callback can record the end-to-end response time under any
executor: ``latencies_ns`` of the two sink nodes.
"""

import time

from rclpy.node import Node
from rclpy.timer import TimerInfo
from std_msgs.msg import String

PAYLOAD = "x" * 4096  # the model's 4 KiB messages


def burn(ns: int) -> None:
    """Busy work of `ns` nanoseconds of this thread's CPU time."""
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


class Sensor(Node):
    def __init__(self, name: str, topic: str, period_s: float, work_ns: int, **kw):
        super().__init__(name, **kw)
        self.work_ns = work_ns
        self.pub = self.create_publisher(String, topic, 10)
        self.timer = self.create_timer(period_s, self.tick)

    def tick(self, info: TimerInfo) -> None:
        burn(self.work_ns)
        self.pub.publish(String(data=f"{info.expected_call_time.nanoseconds}|{PAYLOAD}"))


class Sink(Node):
    def __init__(self, name: str, topic: str, work_ns: int, **kw):
        super().__init__(name, **kw)
        self.work_ns = work_ns
        self.latencies_ns = []
        self.create_subscription(String, topic, self.on_data, 10)

    def on_data(self, msg: String) -> None:
        burn(self.work_ns)
        released = int(msg.data.split("|", 1)[0])
        self.latencies_ns.append(self.get_clock().now().nanoseconds - released)


def make_nodes(**kw) -> list[Node]:
    """hi_sensor, hi_control, lo_sensor, lo_logger (the model's node names)."""
    return [Sensor("hi_sensor", "hi_data", 0.020, 2_500_000, **kw),
            Sink("hi_control", "hi_data", 2_500_000, **kw),
            Sensor("lo_sensor", "lo_data", 0.200, 10_000_000, **kw),
            Sink("lo_logger", "lo_data", 10_000_000, **kw)]
