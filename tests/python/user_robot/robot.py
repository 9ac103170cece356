"""A small robot written as a team would write it with plain rclpy -- not one of chainrt's
examples. chainrt's end-to-end tests and bench/rclpy/user_robot.py run it as a user would.

    camera   timer 30 Hz, publishes /camera/image (100 KiB), stamped with the timer's release
    detector /camera/image -> 8 ms of work -> /detections
    planner  /detections -> 4 ms of work -> request to the /map/query service; the response's
             done callback publishes /cmd
    map      serves /map/query (1 ms of work)
    logger   timer 5 Hz, 25 ms of work -> /log (1 KiB)
    uploader /log -> 15 ms of work

All nodes in one process, spun by one executor on one thread. The program measures its own
command latency: the time from the camera timer's release (TimerInfo.expected_call_time, which
it writes into the image) to the publication of the command that answers it. ``--out FILE``
writes those latencies (and the executor's report, for chainrt's executor) as JSON at exit.

    python robot.py --executor chain [--model M --policy edf] [--stats-period 0.2]
    python robot.py --executor events|single
"""

# no "from __future__ import annotations": rclpy passes TimerInfo to a timer callback whose
# parameter is annotated with the class itself, not with its name as a string
import argparse
import json
import os
import signal
import struct
import sys
import threading
import time

import rclpy
import rclpy.executors
from rcl_interfaces.msg import ParameterValue
from rcl_interfaces.srv import GetParameters
from rclpy.node import Node
from rclpy.timer import TimerInfo
from std_msgs.msg import UInt8MultiArray

IMAGE_BYTES = 100 * 1024
WORK_NS = {"detector": 8_000_000, "planner": 4_000_000, "map": 1_000_000, "logger": 25_000_000,
           "uploader": 15_000_000}


def burn(ns: int) -> None:
    """Busy for ns of this thread's CPU time (preemption does not shorten the work)."""
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


def stamp_of(data) -> int:
    return struct.unpack_from("<q", bytes(data[:8]))[0]


def stamped(stamp: int, size: int) -> UInt8MultiArray:
    buf = bytearray(size)
    struct.pack_into("<q", buf, 0, stamp)
    return UInt8MultiArray(data=buf)


class Camera(Node):
    def __init__(self):
        super().__init__("camera")
        self.pub = self.create_publisher(UInt8MultiArray, "/camera/image", 5)
        self.create_timer(1.0 / 30.0, self.capture)

    def capture(self, info: TimerInfo) -> None:
        self.pub.publish(stamped(info.expected_call_time.nanoseconds, IMAGE_BYTES))


class Detector(Node):
    def __init__(self):
        super().__init__("detector")
        self.pub = self.create_publisher(UInt8MultiArray, "/detections", 5)
        self.create_subscription(UInt8MultiArray, "/camera/image", self.detect, 5)

    def detect(self, msg: UInt8MultiArray) -> None:
        burn(WORK_NS["detector"])
        self.pub.publish(stamped(stamp_of(msg.data), 64))


class Planner(Node):
    def __init__(self):
        super().__init__("planner")
        self.cmd = self.create_publisher(UInt8MultiArray, "/cmd", 5)
        self.map = self.create_client(GetParameters, "/map/query")
        self.create_subscription(UInt8MultiArray, "/detections", self.plan, 5)
        self.latencies_ns: list[int] = []

    def plan(self, msg: UInt8MultiArray) -> None:
        stamp = stamp_of(msg.data)
        burn(WORK_NS["planner"])
        future = self.map.call_async(GetParameters.Request(names=[str(stamp)]))
        future.add_done_callback(lambda f: self.command(f, stamp))

    def command(self, future, stamp: int) -> None:
        self.cmd.publish(stamped(stamp, 16))
        self.latencies_ns.append(time.time_ns() - stamp)


class MapServer(Node):
    def __init__(self):
        super().__init__("map")
        self.create_service(GetParameters, "/map/query", self.query)

    def query(self, request, response):
        burn(WORK_NS["map"])
        response.values = [ParameterValue(type=4, string_value="free")]
        return response


class Logger(Node):
    def __init__(self):
        super().__init__("logger")
        self.pub = self.create_publisher(UInt8MultiArray, "/log", 5)
        self.create_timer(0.2, self.log)

    def log(self) -> None:
        burn(WORK_NS["logger"])
        self.pub.publish(UInt8MultiArray(data=bytes(1024)))


class Uploader(Node):
    def __init__(self):
        super().__init__("uploader")
        self.create_subscription(UInt8MultiArray, "/log", self.upload, 5)

    def upload(self, msg) -> None:
        burn(WORK_NS["uploader"])


def make_executor(args):
    if args.executor == "events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    if args.executor == "single":
        from rclpy.executors import SingleThreadedExecutor
        return SingleThreadedExecutor()
    from chainrt.rclpy import ChainExecutor
    return ChainExecutor(model=args.model, policy=args.policy, stats_period=args.stats_period,
                         report=False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--executor", choices=["chain", "events", "single"], default="chain")
    ap.add_argument("--model")
    ap.add_argument("--policy")
    ap.add_argument("--stats-period", type=float)
    ap.add_argument("--duration", type=float, default=0.0, help="seconds (0: until SIGINT/SIGTERM)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds of latencies left out at the start")
    ap.add_argument("--out")
    args = ap.parse_args()

    rclpy.init()
    nodes = [Camera(), Detector(), Planner(), MapServer(), Logger(), Uploader()]
    ex = make_executor(args)
    for n in nodes:
        ex.add_node(n)
    planner = nodes[2]
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    warm = []
    ending, finished, written = threading.Event(), threading.Event(), threading.Lock()

    def write_out() -> bool:
        if not written.acquire(blocking=False):
            return False   # the other thread writes it
        skip = warm[0] if warm else 0
        out = {"executor": args.executor, "latencies_ns": planner.latencies_ns[skip:]}
        if args.executor == "chain":
            out["report"] = ex.report() if ex.last_report is None else ex.last_report
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f)
        return True

    def control() -> None:
        """The run's clock, off the executor (no entity of the program's nodes): the warm-up
        ends the measurement's lead-in, the duration ends the run."""
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            # above the executor's thread (same core, same policy): a busy executor cannot
            # hold the clock back; this thread only sleeps
            prio = min(os.sched_get_priority_max(os.SCHED_FIFO), os.sched_getparam(0).sched_priority + 1)
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        time.sleep(args.warmup)
        warm.append(len(planner.latencies_ns))
        if hasattr(ex, "record_from_now"):
            ex.record_from_now()
        if args.duration > 0:
            time.sleep(args.duration)
            ending.set()
            if args.executor == "events":
                # rclpy's EventsExecutor deadlocks on a shutdown from another thread (destroying
                # a node waits on the spinning executor): the measurement is over, so the
                # program ends with what it measured
                write_out()
                os._exit(0)
            rclpy.try_shutdown()
            if finished.wait(10):
                return
            if not write_out():
                finished.wait(30)
            os._exit(0)
    threading.Thread(target=control, daemon=True).start()
    print("ready", flush=True)
    try:
        if args.executor == "events":
            # as rclpy.spin(node, executor) spins it: EventsExecutor.spin() of rclpy 9.1 runs
            # no timer at all
            while rclpy.ok():
                ex.spin_once(timeout_sec=0.5)
        else:
            ex.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    except Exception:
        # a callback racing the shutdown this program requested (rclpy's executors raise
        # InvalidHandle for a publisher destroyed under it): the run is over, not failed
        if not ending.is_set():
            raise
    write_out()
    finished.set()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
