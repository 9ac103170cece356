"""The configurations CROS-RT is evaluated in, one descriptor each (the paper's baselines, slide
"Baselines", plus the layer-by-layer steps between them). Every one but ``emulated`` runs the
same program: the model's nodes generated as plain rclcpp nodes (chainrt.stock,
``chainrt_rclcpp_nodes``), one per model process, under rclcpp's stock executor or chainrt's
rclcpp ChainExecutor:

* ``vanilla`` — stock ROS 2: rclcpp's stock executor (SingleThreaded unless chosen otherwise), no
  thread priorities or pinning, Fast DDS threads at their defaults, the kernel's receive path at
  SCHED_OTHER (its processing follows the network load);
* ``preempt-rt`` — the paper's Preempt-RT baseline on this unmodified kernel: the same stock
  executor with its thread at the chain's SCHED_FIFO priority and core, the DDS threads at their
  executor's priority (P4), and every receive-path kernel thread (NAPI, ksoftirqd) at one fixed
  real-time priority for every packet (:class:`~chainrt.crosslayer.kernel.FixedRxThreads`) — no
  message selection;
* ``app-dds`` — chainrt's ChainExecutor with PiCAS priorities (SCHED_FIFO, pinned) and the DDS
  threads as in preempt-rt, the receive path left as it is (what PiCAS-style priorities give
  without the kernel);
* ``full`` — CROS-RT's C1–C3: app-dds plus the XDP message selector steering each priority class
  to its own kernel threads at the class's priority, non-RT packets below every RT thread;
* ``full-server`` — full plus C4: non-RT packet processing as a polling server;
* ``emulated`` — not a baseline: chainrt's own runtime (chainrt-run) emulating ROS 2's default
  executor (policy ``ros-default``) in vanilla's setting, run beside vanilla only to give the
  emulation's fidelity (its ratio to stock rclcpp in the same run).

So ``app-dds`` → ``preempt-rt`` is what a fixed real-time priority of the receive path adds, and
``preempt-rt`` → ``full`` what selecting by chain priority in the kernel adds beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kernel import PREEMPT_RT_PRIORITY

RECEIVE_PATHS = ("default", "fixed", "selector")
# what runs the model's nodes: rclcpp's stock executor or chainrt's rclcpp ChainExecutor on the
# generated rclcpp nodes, or chainrt's runtime emulating ROS 2's default executor
EXECUTORS = ("stock", "chain", "emulated")
# rclcpp's stock executor of the stock configurations (chainrt.stock's name), unless one is chosen
STOCK_EXECUTOR = "single"


@dataclass(frozen=True)
class Stack:
    """How far the chains' priorities reach down the stack in one configuration.

    ``executor_priorities``: PiCAS executors at the model's SCHED_FIFO priorities and pinning
    (False: ROS 2's default executor order, no thread parameters); ``dds_priorities``: DDS
    threads at their executor's priority (P4); ``receive_path``: "default" (the kernel's own,
    SCHED_OTHER), "fixed" (every receive kernel thread at one SCHED_FIFO priority) or "selector"
    (C1–C3); ``server``: non-RT packet processing as a polling server (C4, needs "selector");
    ``executor``: what runs the nodes (EXECUTORS)."""
    name: str
    executor_priorities: bool
    dds_priorities: bool
    receive_path: str
    server: bool = False
    label: str = ""
    executor: str = "chain"

    def __post_init__(self):
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor {self.executor!r}: want one of {', '.join(EXECUTORS)}")
        if self.receive_path not in RECEIVE_PATHS:
            raise ValueError(f"receive path {self.receive_path!r}: want one of {', '.join(RECEIVE_PATHS)}")
        if self.server and self.receive_path != "selector":
            raise ValueError("the non-RT server needs the selector's receive path")


STACKS: dict[str, Stack] = {s.name: s for s in (
    Stack("vanilla", False, False, "default", label="vanilla: stock rclcpp executor", executor="stock"),
    Stack("preempt-rt", True, True, "fixed", label="Preempt-RT-style: stock rclcpp executor, thread priorities, "
                                                   "fixed kernel-thread priority", executor="stock"),
    Stack("app-dds", True, True, "default", label="ChainExecutor, application + DDS priorities"),
    Stack("full", True, True, "selector", label="CROS-RT (ChainExecutor) without the non-RT server"),
    Stack("full-server", True, True, "selector", server=True, label="CROS-RT (ChainExecutor) with the non-RT server"),
    Stack("emulated", False, False, "default", label="chainrt's emulation of ROS 2's default executor "
                                                     "(fidelity column, not a baseline)", executor="emulated"),
)}


def stack(name: str) -> Stack:
    """The configuration called ``name``; ValueError naming the known ones otherwise."""
    try:
        return STACKS[name]
    except KeyError:
        raise ValueError(f"unknown configuration {name!r} (known: {', '.join(STACKS)})") from None


def run_arguments(s: Stack, *, server: tuple[int, int] | None = None,
                  rx_priority: int | None = None, stock_executor: str = STOCK_EXECUTOR) -> dict:
    """The keyword arguments of :func:`chainrt.crosslayer.session.run_on_hosts` that realise
    configuration ``s``: ``server`` (budget, period ns) is used by a configuration with the
    non-RT server (required there), ``rx_priority`` by the fixed receive path (default:
    PREEMPT_RT_PRIORITY), ``stock_executor`` (chainrt.stock's name) by the stock ones."""
    kw: dict = {"kernel": s.receive_path == "selector", "dds_priorities": s.dds_priorities}
    if s.executor == "stock":
        kw["nodes"] = stock_executor
    elif s.executor == "chain":
        kw["nodes"] = "chainrt"
    if not s.executor_priorities:
        kw["thread_params"] = False
    if s.executor == "emulated":
        kw["policy"] = "ros-default"
    if s.receive_path == "fixed":
        kw["rx_priority"] = rx_priority or PREEMPT_RT_PRIORITY
    if s.server:
        if not server:
            raise ValueError(f"configuration {s.name} needs the non-RT server's budget and period")
        kw["server"] = server
    return kw
