"""A small ROS 2 application of plain rclpy nodes, started by the discover/profile tests (not by
chainrt): run as `python graph.py PROCESS` where PROCESS is `front` or `back`.

    front: sensor  --timer 20 ms-->  /scan (1000 B)  --> filter --> /filtered
           sensor  --timer 100 ms--> /status
    back:  control: /filtered --> /cmd ;  logger: /cmd, /status (sinks)

With --monitor every callback is timed (thread CPU and wall time) and the process publishes the
chainrt monitoring message on /chainrt/chain_stats, standing in for chainrt's rclpy executor.
Each callback burns a known amount of thread CPU time (WORK_NS) so a profile can be checked."""

import json
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


class Monitor:
    """Times wrapped callbacks; publishes the monitoring JSON every 200 ms."""

    def __init__(self, node):
        self.stats, self.samples = {}, {}
        self.pub = node.create_publisher(String, "/chainrt/chain_stats", 10)
        node.create_timer(0.2, self.publish)
        self.seq = 0

    def wrap(self, name, node, kind, topic, fn):
        self.stats[name] = {"instances": 0, "cpu_total_ns": 0, "cpu_max_ns": 0, "wall_max_ns": 0,
                            "exceptions": 0, "drops": 0, "node": node, "kind": kind, "topic": topic}
        self.samples[name] = {"start_ns": [], "wall_ns": [], "cpu_ns": []}

        def run(*a):
            s, c = time.monotonic_ns(), time.thread_time_ns()
            fn(*a)
            cpu, wall = time.thread_time_ns() - c, time.monotonic_ns() - s
            st = self.stats[name]
            st["instances"] += 1
            st["cpu_total_ns"] += cpu
            st["cpu_max_ns"] = max(st["cpu_max_ns"], cpu)
            st["wall_max_ns"] = max(st["wall_max_ns"], wall)
            sm = self.samples[name]
            sm["start_ns"].append(s), sm["wall_ns"].append(wall), sm["cpu_ns"].append(cpu)
        return run

    def publish(self):
        msg = {"run_id": "graph-test", "executor": sys.argv[1], "policy": "ros-default", "threads": 1,
               "seq": self.seq, "chains": {}, "callbacks": self.stats,
               "samples": {k: v for k, v in self.samples.items() if v["start_ns"]}, "samples_lost": 0}
        self.seq += 1
        self.pub.publish(String(data=json.dumps(msg)))
        self.samples = {k: {"start_ns": [], "wall_ns": [], "cpu_ns": []} for k in self.samples}


def main():
    proc = sys.argv[1]
    monitored = "--monitor" in sys.argv
    rclpy.init()
    ex = SingleThreadedExecutor()
    nodes = []
    mon = None

    def cb(name, node, kind, topic, fn):
        def work(*a):
            burn(WORK_NS[name])
            fn(*a)
        return mon.wrap(name, node.get_name(), kind, topic, work) if mon else work

    if proc == "front":
        sensor = rclpy.create_node("sensor")
        filt = rclpy.create_node("filter")
        nodes += [sensor, filt]
        mon = Monitor(sensor) if monitored else None
        scan = sensor.create_publisher(UInt8MultiArray, "/scan", 10)
        status = sensor.create_publisher(String, "/status", 10)
        filtered = filt.create_publisher(UInt8MultiArray, "/filtered", 10)
        payload = UInt8MultiArray(data=bytes(1000))
        sensor.create_timer(0.02, cb("sensor/timer", sensor, "timer", "", lambda: scan.publish(payload)))
        sensor.create_timer(0.1, cb("sensor/timer_2", sensor, "timer", "",
                                     lambda: status.publish(String(data="ok"))))
        filt.create_subscription(UInt8MultiArray, "/scan", cb("filter/on_scan", filt, "subscription", "/scan",
                                                               lambda m: filtered.publish(m)), 10)
    else:
        control = rclpy.create_node("control")
        logger = rclpy.create_node("logger")
        nodes += [control, logger]
        mon = Monitor(control) if monitored else None
        cmd = control.create_publisher(UInt8MultiArray, "/cmd", 10)
        control.create_subscription(UInt8MultiArray, "/filtered",
                                    cb("control/on_filtered", control, "subscription", "/filtered",
                                       lambda m: cmd.publish(UInt8MultiArray(data=bytes(64)))), 10)
        logger.create_subscription(UInt8MultiArray, "/cmd", cb("logger/on_cmd", logger, "subscription",
                                                               "/cmd", lambda m: None), 10)
        logger.create_subscription(String, "/status", cb("logger/on_status", logger, "subscription",
                                                          "/status", lambda m: None), 10)
    for n in nodes:
        ex.add_node(n)
    print("ready", flush=True)
    try:
        ex.spin()
    except (KeyboardInterrupt, Exception):
        pass


if __name__ == "__main__":
    main()
