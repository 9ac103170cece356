"""A small ROS 2 application of plain rclpy nodes, started by the discover/profile tests (not by
chainrt): run as `python graph.py PROCESS` where PROCESS is `front` or `back`.

    front: sensor  --timer 20 ms-->  /scan (1000 B)  --> filter --> /filtered
           sensor  --timer 100 ms--> /status
    back:  control: /filtered --> /cmd ;  logger: /cmd, /status (sinks)

With --chainrt the process spins its (unchanged) nodes under chainrt's rclpy executor
(chainrt.rclpy.ChainExecutor) instead of rclpy's SingleThreadedExecutor -- the one line a user's
launcher changes -- with monitoring on, so that `chainrt profile` can read the executor's
monitoring topic. Each callback burns a known amount of thread CPU time (WORK_NS) so a profile
can be checked."""

import sys
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String, UInt8MultiArray

WORK_NS = {"sensor/timer": 1_000_000, "sensor/timer_2": 500_000, "filter/on_scan": 3_000_000,
           "control/on_filtered": 2_000_000, "logger/on_cmd": 500_000, "logger/on_status": 500_000}


def burn(ns):
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


def main():
    proc = sys.argv[1]
    rclpy.init()
    if "--chainrt" in sys.argv:
        from chainrt.rclpy import ChainExecutor
        ex = ChainExecutor(stats_period=0.2, report=False)
    else:
        ex = SingleThreadedExecutor()
    nodes = []

    def cb(name, fn):
        def work(*a):
            burn(WORK_NS[name])
            fn(*a)
        return work

    if proc == "front":
        sensor = rclpy.create_node("sensor")
        filt = rclpy.create_node("filter")
        nodes += [sensor, filt]
        scan = sensor.create_publisher(UInt8MultiArray, "/scan", 10)
        status = sensor.create_publisher(String, "/status", 10)
        filtered = filt.create_publisher(UInt8MultiArray, "/filtered", 10)
        payload = UInt8MultiArray(data=bytes(1000))
        sensor.create_timer(0.02, cb("sensor/timer", lambda: scan.publish(payload)))
        sensor.create_timer(0.1, cb("sensor/timer_2", lambda: status.publish(String(data="ok"))))
        filt.create_subscription(UInt8MultiArray, "/scan", cb("filter/on_scan", lambda m: filtered.publish(m)), 10)
    else:
        control = rclpy.create_node("control")
        logger = rclpy.create_node("logger")
        nodes += [control, logger]
        cmd = control.create_publisher(UInt8MultiArray, "/cmd", 10)
        control.create_subscription(UInt8MultiArray, "/filtered",
                                    cb("control/on_filtered", lambda m: cmd.publish(UInt8MultiArray(data=bytes(64)))), 10)
        logger.create_subscription(UInt8MultiArray, "/cmd", cb("logger/on_cmd", lambda m: None), 10)
        logger.create_subscription(String, "/status", cb("logger/on_status", lambda m: None), 10)
    for n in nodes:
        ex.add_node(n)
    print("ready", flush=True)
    try:
        ex.spin()
    except (KeyboardInterrupt, Exception):
        pass


if __name__ == "__main__":
    main()
