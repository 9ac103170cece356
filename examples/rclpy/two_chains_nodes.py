"""The two chains of examples/two_chains.yaml as ordinary rclpy nodes (no chainrt inside).

high: hi_sensor's 20 ms timer (2.5 ms of work) publishes hi_data; hi_control's subscription
      (2.5 ms of work) ends the chain.
low:  lo_sensor's 200 ms timer (10 ms of work) publishes lo_data; lo_logger's subscription
      (10 ms of work) ends the chain.
Each message carries the nominal release of its chain instance (the timer's expected call time,
system clock) so that the last callback can record the end-to-end response time under any
executor: ``latencies_ns`` of the two sink nodes. Kilted's rclpy hands the timer callback that
time (TimerInfo); Jazzy's rclpy has no TimerInfo, so there the sensor reads it from the timer
itself: the next call time read after the previous call is this call's expected time (rcl moves
it past every skipped release at that call); a reset between two calls is not followed.
"""

import time

from rclpy.node import Node
from std_msgs.msg import String

try:
    from rclpy.timer import TimerInfo
except ImportError:  # Jazzy's rclpy 7
    TimerInfo = None

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
        self.period_ns = round(period_s * 1e9)
        self.due_ns = None  # without TimerInfo: the next call time read after the previous call
        self.timer = self.create_timer(period_s, self.tick if TimerInfo is not None else self.tick_without_info)

    def tick(self, info: TimerInfo) -> None:
        self.work(info.expected_call_time.nanoseconds)

    def tick_without_info(self) -> None:
        due = self.get_clock().now().nanoseconds + self.timer.time_until_next_call()
        expected = self.due_ns if self.due_ns is not None else due - self.period_ns
        self.due_ns = due
        self.work(expected)

    def work(self, expected_ns: int) -> None:
        burn(self.work_ns)
        self.pub.publish(String(data=f"{expected_ns}|{PAYLOAD}"))


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
