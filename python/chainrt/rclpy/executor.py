"""chainrt.rclpy.ChainExecutor: a drop-in rclpy executor with chain-aware scheduling.

It follows ``rclpy.executors.Executor`` (add_node, remove_node, spin, spin_once,
spin_until_future_complete, shutdown, create_task, context manager) and runs the entities
rclpy's executors run: timers, subscriptions, services, clients, guard conditions, waitables
and tasks/futures, with rclpy's callback-group semantics (a mutually exclusive group never runs
two callbacks at once, a reentrant one may).

Mechanism apart from policy: readiness, the ready queue and the selection live in C++
(``chainrt._rclpy_exec.Loop``: rcl event callbacks, the sched::Dispatcher of the C++ runtime and
the simulator, Algorithm 1 of the EDF ready-queue paper, the runtime's monitor). This file only
takes the data of the selected entity, calls the user's callback and reports its end.

Deviations from rclpy's executors (documented in docs/rclpy.md):
  - an exception raised by a user callback is reported (with the callback's name) and counted,
    and the executor goes on; ``raise_exceptions=True`` re-raises it from spin as rclpy does;
  - a timer callback's TimerInfo argument is detected once, when the entity is bound, not at
    every call;
  - coroutine callbacks and tasks run when the executor is woken, without chain priority.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
import time
from typing import Any

import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.exceptions import InvalidHandle
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.clock_type import ClockType

from chainrt import output
from chainrt.model import policy_names
from chainrt.rclpy.binding import (KIND_CLIENT, KIND_EVENT, KIND_EXTERNAL, KIND_SERVICE,
                                   KIND_SUBSCRIPTION, KIND_TIMER, ModelView, UnboundModelCallbacks,
                                   _infrastructure, _load_loop_module, load_view)
from chainrt.rclpy.marks import Marks, MarksMixin
from chainrt import monitor_msg
from chainrt.model import load_model
from chainrt.monitor_msg import events_topic

# Differences between the rclpy of the ROS 2 lines chainrt runs on, in one place:
try:  # Kilted's rclpy 9: timer callbacks may take a TimerInfo (rcl_timer_call_with_info)
    from rclpy.timer import TimerInfo
except ImportError:  # Jazzy's rclpy 7: no TimerInfo, timers are called with call_timer()
    TimerInfo = None

try:
    from rclpy.event_handler import EventHandler as _EventHandler
except ImportError:  # older rclpy
    _EventHandler = None

try:
    from rclpy.exceptions import TimerCancelledError
except ImportError:  # Jazzy's rclpy 7 (and older)
    class TimerCancelledError(Exception):
        pass

_RCLError = getattr(_rclpy_impl, "RCLError", RuntimeError)
_WAKE_SLICE_NS = 100_000_000   # spin re-checks shutdown/context at least this often
DEFAULT_POLICY = "arrival"   # without a model: rclpy's EventsExecutor's order (earliest ready first)
# The model's policies (the C++ descriptors, sched/policy.hpp) and, first, rclpy's own order.
POLICIES = (DEFAULT_POLICY, *policy_names())
TAKE_ORDERS = ("kind", "node")   # ros-default: ROS 2's default order, or rclpy's node by node
# rclpy's SingleThreadedExecutor within one node: timers, subscriptions, guard conditions,
# clients, services (waitables of every node before all of them)
_RCLPY_TAKE_RANK = {KIND_TIMER: 0, KIND_SUBSCRIPTION: 1, KIND_SERVICE: 4, KIND_CLIENT: 3}


_PLACE_KIND = {KIND_TIMER: "timer", KIND_SUBSCRIPTION: "subscription", KIND_SERVICE: "service",
               KIND_CLIENT: "client", KIND_EVENT: "event", KIND_EXTERNAL: "external"}



class _Entities:
    """What one build of the loop collects of the nodes' entities, in registration order: the
    loop's entity specs, callback groups, the rcl handles held, rclpy's own take order, the
    monitor's places and the model-bound timers of the release grid."""

    def __init__(self, view, explicit: dict, node_order: list):
        self.view, self.explicit, self.node_order = view, explicit, node_order
        self.groups: dict[int, int] = {}
        self.reentrant: list[bool] = []
        self.ents, self.specs, self.unmatched, self.ext = [], [], [], {}
        self.names_used: dict[str, int] = {}
        self.held = []
        self.takes = []    # CallbackId -> its place in rclpy's own take order
        self.places = []   # CallbackId -> (node, kind, topic) for the monitor
        self.grid = []     # model-bound timers: (CallbackId, period, model offset)

    def group_of(self, entity) -> int:
        g = entity.callback_group
        key = id(g)
        if key not in self.groups:
            self.groups[key] = len(self.reentrant)
            self.reentrant.append(isinstance(g, ReentrantCallbackGroup))
        return self.groups[key]

    def add(self, kind, entity, node, run, handle, detail, period_ns=0, topic="", take=None):
        pointer = 0
        if handle is not None:
            # Held "in use" while the loop knows its rcl address: rclpy defers the
            # destruction of a destroyed entity until the loop has let it go.
            try:
                handle.__enter__()
            except InvalidHandle:  # being destroyed: not added
                return None
            self.held.append(handle)
            pointer = handle.pointer
        name, prio, aff = self._identity(kind, entity, node, detail, period_ns, topic)
        self.specs.append((kind, pointer, self.group_of(entity), prio, aff, name))
        node_index = self.node_order.index(node)
        self.takes.append((1, node_index, _RCLPY_TAKE_RANK.get(kind, 2)) if take is None else (0, node_index, 0))
        self.places.append((node.get_fully_qualified_name(), _PLACE_KIND.get(kind, "other"), topic))
        self.ents.append((kind, entity, run, name))
        return len(self.ents) - 1

    def _identity(self, kind, entity, node, detail, period_ns, topic):
        """(name, priority, affinity): the model callback's when it matches one, else its own."""
        view, explicit = self.view, self.explicit
        mc = None
        if view is not None:
            if id(entity) in explicit:
                mc = view.by_name(explicit[id(entity)])
                if mc is None:
                    raise ValueError(f"bind(): the model has no callback '{explicit[id(entity)]}'")
            elif kind not in (KIND_EXTERNAL, KIND_EVENT):
                mc = view.match((node.get_fully_qualified_name().lstrip("/"), node.get_name()),
                                kind, period_ns, topic)
        if mc is not None:
            mc.used = True
            if kind == KIND_TIMER and period_ns > 0 and not _simulated_time(entity):
                self.grid.append((len(self.ents), period_ns, mc.offset_ns))  # on the release grid
            return mc.name, mc.priority, mc.affinity
        base = f"{node.get_name()}/{detail}"
        k = self.names_used.get(base, 0)
        self.names_used[base] = k + 1
        name = base if k == 0 else f"{base}#{k}"
        if kind not in (KIND_EXTERNAL, KIND_EVENT) and not _infrastructure(node, entity, kind):
            self.unmatched.append(name)
        return name, None, (1 << 64) - 1


class ChainExecutor(MarksMixin, Executor):
    """An rclpy executor that orders ready callbacks by chainrt's ready queue.

    :param model: a chainrt model (path or :class:`chainrt.model.Model`) that says which real
        callback is which model callback, which chains exist and the executor's threads; None:
        no chains, every callback unmatched — unless entities are marked in code (``mark``,
        ``set_callback_priority``, ``add_chain``, ``set_callback_group_thread``;
        chainrt.rclpy.marks), which the executor then schedules by as by a model; with a model,
        the model wins where both speak.
    :param executor: which executor of the model this is (default: the only one, or the one
        hosting the first added node).
    :param policy: ``arrival`` (earliest ready first, the order of rclpy's EventsExecutor),
        ``ros-default`` (ROS 2's default executor as the C++ runtime and the simulator run it:
        polling points, then timers, subscriptions, services, clients; rclpy's own executor takes
        node by node instead: ``take_order``), or any other policy of chainrt._core.policies(); default: the
        model executor's policy, else ``arrival``.
    :param threads: number of executor threads (overrides the model's threads; thread 0 is
        the thread that calls spin).
    :param take_order: under ``ros-default``, the order in which one polling point's callbacks
        are taken: ``kind`` (ROS 2's default executor as the C++ runtime, the rclcpp executor
        and the simulator run it and the analyses model it: timers, subscriptions, services,
        clients across all nodes) or ``node`` (rclpy's own SingleThreadedExecutor: waitables
        first, then node by node its timers, subscriptions, guard conditions, clients,
        services). No effect under the other policies.
    :param stats_period: seconds between monitor messages on ``stats_topic``
        (``chainrt_msgs/msg/ChainStats``, the C++ executors' message, with the dispatches since
        the previous message: what ``chainrt profile`` reads); None: not published.
    :param run_id: the ``run_id`` of the monitor messages (default: one per process).
    :param report: print a summary of the monitor to stderr when spin() returns.
    :param header_stamp: for chains whose first callback is a subscription, take the chain
        instance's release from the message's ``header.stamp`` (the cross-process mechanism).
    :param raise_exceptions: re-raise an exception of a user callback from spin (as rclpy's
        executors do) instead of reporting it and going on.
    :param lame_controller: run LaME's adaptive controller every this many seconds (and at once,
        at most every 0.5 s, when an RT chain misses its deadline): the model's chains are
        planned (thread classes, SCHED_DEADLINE budgets), the executor runs one RT and one BE
        thread per core, and the controller re-plans with the execution times it measures and
        applies new budgets and callback affinities to the running threads (the C++ runtime's
        ``lame::Controller``; docs/lame.md). Needs ``model``. None: no controller.
    :param lame_reservation_period: SCHED_DEADLINE period of the thread classes (seconds).
    :param lame_capacity_permille: share of a core the reservations may take (0: the kernel's
        admission limit less the fair server's 5 %).
    :param lame_on_miss: activate the controller at once on an RT deadline miss (else only
        every period).
    :param allow_unbound: run although model callbacks of the executor have no real
        counterpart (they are listed in the report's warnings); by default the executor
        refuses to start with :class:`chainrt.rclpy.UnboundModelCallbacks` naming each.
    """

    def __init__(self, *, model: Any = None, executor: str | None = None, policy: str | None = None,
                 threads: int | None = None, context=None, stats_period: float | None = None,
                 stats_topic: str = "/chainrt/chain_stats", report: bool = True,
                 header_stamp: bool = False, raise_exceptions: bool = False,
                 sample_capacity: int = 100_000, run_id: str | None = None,
                 lame_controller: float | None = None, lame_reservation_period: float = 0.01,
                 lame_capacity_permille: int = 0, lame_on_miss: bool = True,
                 allow_unbound: bool = False, take_order: str = "kind") -> None:
        self._sigint_gc = None  # rclpy's Executor.__del__ reads it even when __init__ failed
        if policy is not None and policy not in POLICIES:
            raise ValueError(f"unknown policy '{policy}' (one of: {', '.join(POLICIES)})")
        if take_order not in TAKE_ORDERS:
            raise ValueError(f"unknown take_order '{take_order}' (one of: {', '.join(TAKE_ORDERS)})")
        if threads is not None and not 1 <= int(threads) <= 64:
            raise ValueError("threads must be 1..64")
        if lame_controller is not None:
            if model is None:
                raise ValueError("lame_controller needs a model (the chains to plan)")
            if not float(lame_controller) > 0 or not float(lame_reservation_period) > 0:
                raise ValueError("lame_controller and lame_reservation_period must be positive (seconds)")
            if policy not in (None, "lame"):
                raise ValueError("lame_controller runs the lame policy")
            if not 0 <= int(lame_capacity_permille) <= 1000:
                raise ValueError("lame_capacity_permille must be 0..1000")
        self._mod = _load_loop_module()
        if lame_controller is not None and not getattr(self._mod, "HAVE_LAME", False):
            raise RuntimeError("this build of chainrt has no LaME controller for rclpy (lame/ not built)")
        super().__init__(context=context)
        _weak_shutdown_hook(self)
        self._model_arg = model
        self._model_executor = executor
        self._file_model_arg = model       # marks in code are built on it (chainrt.rclpy.marks)
        self._executor_arg = executor
        self._marks = Marks()
        self._code_names: dict[int, str] = {}  # id(entity) -> its callback in the model of the marks
        self._policy_arg = policy
        self._take_order = take_order
        self._threads_arg = threads
        self._stats_period = stats_period
        self._stats_topic = stats_topic
        self._run_id = run_id or f"rclpy-{os.getpid()}"
        self._stats_seq = 0                # monitor message counter, kept when the loop is rebuilt
        self._print_report = report
        self._header_stamp = header_stamp
        self._raise = raise_exceptions
        self._sample_capacity = sample_capacity
        self._node_order: list = []
        self._explicit: dict[str, Any] = {}
        self._loop = None
        self._state = (None, [])
        self._force_build = False
        self._held: list = []              # rcl handles held in use by the loop
        self._signature: tuple = ()
        self._ents: list = []              # CallbackId -> (kind, entity, run function, name)
        self._ext_ids: dict[int, int] = {}  # id(guard/waitable) -> CallbackId
        self._build_lock = threading.RLock()
        self._busy = [False] * 64          # per executor thread: a callback is running
        self._rebuild_pending = False
        self._spinning = False
        self._pending_error: BaseException | None = None
        self.unmatched: list[str] = []
        self.unused_model_callbacks: list[str] = []
        self.exceptions: list[tuple[str, str]] = []
        self.last_report: dict | None = None
        self._view: ModelView | None = None
        self._watcher = None
        self._stats_stop = threading.Event()
        self._stats_thread = None
        self._clock_offset = time.time_ns() - self._mod.monotonic_ns()
        self._lame_period_ns = int(float(lame_controller) * 1e9) if lame_controller is not None else 0
        self._lame_res_ns = int(float(lame_reservation_period) * 1e9)
        self._lame_capacity = int(lame_capacity_permille)
        self._lame_on_miss = bool(lame_on_miss)
        self._lame = None                  # _rclpy_exec.LameControl: plan, decisions, applying
        self._lame_thread = None
        self._lame_stop = threading.Event()
        self.lame_log: list[dict] = []     # every controller activation (the event dicts)
        self._lame_node = None             # publishes the decisions on the monitoring topic
        self._lame_pub = None              # (publisher, String)
        self._allow_unbound = bool(allow_unbound)
        self._binding_checked = False      # the first build with nodes checks the binding

    # ---- rclpy Executor contract --------------------------------------------------------
    def add_node(self, node) -> bool:
        added = super().add_node(node)
        if added:
            with self._build_lock:
                self._node_order.append(node)
            self.wake()
        return added

    def remove_node(self, node) -> None:
        super().remove_node(node)
        with self._build_lock:
            if node in self._node_order:
                self._node_order.remove(node)
        self.wake()

    def wake(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.wake()
        if self._watcher is not None:
            self._watcher.poke()

    def create_task(self, callback, *args, **kwargs):
        task = super().create_task(callback, *args, **kwargs)
        self.wake()
        return task

    def create_future(self):
        """A Future attached to this executor (rclpy's Executor.create_future; Jazzy's rclpy has
        none of its own)."""
        from rclpy.task import Future
        return Future(executor=self)

    def bind(self, model_callback: str, entity) -> None:
        """Bind an rclpy timer/subscription/service/client to a model callback by name."""
        self._explicit[model_callback] = entity
        self._force_build = True   # rebuild at the next spin_once
        self.wake()

    def spin_once(self, timeout_sec: float | None = None) -> None:
        self._spin_once_impl(timeout_sec, 0)

    def spin_once_until_future_complete(self, future, timeout_sec=None) -> None:
        future.add_done_callback(lambda _f: self.wake())
        self._spin_once_impl(timeout_sec, 0, future.done)

    def _spin_once_until_future_complete(self, future, timeout_sec=None) -> None:
        self._spin_once_impl(timeout_sec, 0, future.done)

    def spin(self) -> None:
        """Execute callbacks on the executor's threads until shutdown (or the context ends)."""
        self._ensure_built()
        loop = self._loop
        loop.restart()
        saved = self._save_thread_params()
        extra = [threading.Thread(target=self._thread_main, args=(t,), daemon=True,
                                  name=f"chainrt.rclpy/t{t}") for t in range(1, loop.thread_count())]
        self._start_stats()
        self._spinning = True
        try:
            for th in extra:
                th.start()
            self._start_lame()
            # Only now: a SCHED_DEADLINE thread may not create threads (clone fails with EAGAIN),
            # so this thread takes thread 0's parameters after the others exist.
            loop.apply_thread(0)
            while self._context.ok() and not self._is_shutdown:
                try:
                    self._spin_once_impl(None, 0)
                except (rclpy.executors.ShutdownException, ExternalShutdownException):
                    # shutdown() or the context's end while a callback was selected or the thread
                    # waited: spin returns, as its docstring says and rclpy's MultiThreadedExecutor
                    # does (rclpy's SingleThreadedExecutor raises the external case only when it
                    # lands in its wait, and returns when it lands anywhere else)
                    break
        finally:
            self._stop_lame()
            self._spinning = False
            self._loop.stop()
            for th in extra:
                th.join()
            self._stop_stats()
            self._restore_thread_params(saved)
            self.last_report = self.report()
            if self._print_report:
                self._print_summary(self.last_report)

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        loop = self._loop
        if loop is not None:
            loop.stop()
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        ok = super().shutdown(timeout_sec)
        self._stop_stats()
        if self._loop is not None:
            self.last_report = self.report()
            self._loop.detach()
            self._release_handles()
        return ok

    # ---- monitoring ---------------------------------------------------------------------
    def report(self, with_samples: bool = True) -> dict:
        """The monitor's report: the C++ runtime's JSON keys (policy, threads, duration_ns,
        dispatches, chains{...}, callbacks{...}, warnings[...]) plus ``unmatched``."""
        if self._loop is None:
            return {"policy": self._policy_arg or DEFAULT_POLICY, "threads": 0, "duration_ns": 0,
                    "dispatches": 0, "chains": {}, "callbacks": {}, "warnings": [], "unmatched": []}
        r = json.loads(self._loop.report_json(with_samples, self._sample_capacity))
        r["unmatched"] = list(self.unmatched)
        if self._lame is not None:
            r["lame_controller"] = list(self.lame_log)
        return r

    def record_from_now(self) -> None:
        """Drop the chain instances released before now from the response-time statistics
        (a warm-up)."""
        self._ensure_built()
        self._loop.set_record_from(self._mod.monotonic_ns())

    @property
    def policy(self) -> str:
        self._ensure_built()
        return self._loop.policy()

    def _print_summary(self, r: dict) -> None:
        out = [f"chainrt.rclpy: policy {r['policy']}, {r['threads']} thread(s), "
               f"{r['dispatches']} callbacks in {r['duration_ns'] / 1e9:.1f} s"]
        for name, c in r["chains"].items():
            out.append(f"  chain {name}: {c['instances']} instances, mean {output.ms(c['mean_ns'], unit=True)}, "
                       f"p99 {output.ms(c['p99_ns'], unit=True)}, max {output.ms(c['wcrt_ns'], unit=True)}, "
                       f"{c['deadline_misses']} deadline misses, {c['drops']} drops")
        failed = {n: c["exceptions"] for n, c in r["callbacks"].items() if c["exceptions"]}
        for n, k in failed.items():
            out.append(f"  callback {n}: raised {k} time(s)")
        if self.unmatched:
            out.append("  not in the model (default: lowest priority, no deadline): " + ", ".join(self.unmatched))
        for w in r["warnings"]:
            out.append("  warning: " + w)
        print("\n".join(out), file=sys.stderr)

    def _start_stats(self) -> None:
        if not self._stats_period or self._stats_thread is not None:
            return
        chain_stats = monitor_msg.message_type()
        self._stats_stop.clear()
        node = rclpy.create_node(f"chainrt_monitor_{os.getpid()}_{id(self) & 0xffff}", context=self._context)
        pub = node.create_publisher(chain_stats, self._stats_topic, 10)

        def publish() -> None:
            try:
                while True:
                    stopping = self._stats_stop.wait(self._stats_period)
                    loop = self._loop
                    if loop is not None:
                        # the C++ executors' message, serialized by the loop (runtime/monitor_msg.hpp)
                        pub.publish(loop.monitor_message(self._run_id, self._monitor_name(), self._stats_seq))
                        self._stats_seq += 1
                    if stopping:
                        return
            except Exception:  # the context went away: nothing left to publish to
                pass
            finally:
                try:
                    node.destroy_node()
                except Exception:
                    pass

        self._stats_thread = threading.Thread(target=publish, daemon=True, name="chainrt.rclpy/monitor")
        self._stats_thread.start()

    def _monitor_name(self) -> str:
        """The ``executor`` of the monitor messages: the model's executor, else one per process."""
        return self._model_executor or f"rclpy-{os.getpid()}-{id(self) & 0xffff:x}"

    def _stop_stats(self) -> None:
        if self._stats_thread is not None:
            self._stats_stop.set()
            self._stats_thread.join()
            self._stats_thread = None

    # ---- LaME's controller -------------------------------------------------------------------
    def _lame_view(self, view) -> None:
        """Plan the model once (Algorithms 1-3) and run it as LaME's controller runs it: one RT
        and one BE thread per core with the plan's reservations, the callbacks' priorities and
        affinities from the plan (what the controller changes later)."""
        if self._lame is None:
            self._lame = self._mod.LameControl(self._loaded_model(), self._lame_period_ns, self._lame_res_ns,
                                               self._lame_capacity)
            if self._model_executor not in (None, self._lame.executor()):
                raise ValueError(f"LaME plans the chains of executor '{self._lame.executor()}', "
                                 f"not '{self._model_executor}'")
        view.policy = "lame"
        view.threads = list(self._lame.threads())
        params = {name: (prio, aff) for name, prio, aff in self._lame.callbacks()}
        for c in view.callbacks:
            if c.name in params:
                c.priority, c.affinity = params[c.name]

    def _start_lame(self) -> None:
        if self._lame is None or self._lame_thread is not None:
            return
        self._lame_stop.clear()
        # Every decision also goes to the events topic beside the monitoring topic as a
        # "lame_decision" event (the C++ runtime's format, docs/lame.md), with or without
        # periodic stats.
        try:
            from std_msgs.msg import String

            self._lame_node = rclpy.create_node(f"chainrt_lame_{os.getpid()}_{id(self) & 0xffff}", context=self._context)
            self._lame_pub = (self._lame_node.create_publisher(String, events_topic(self._stats_topic), 10), String)
        except Exception as err:  # no topic (a context that is going away): decisions stay in the report
            self._lame_node, self._lame_pub = None, None
            print(f"chainrt.rclpy: warning: LaME decisions are not published ({err})", file=sys.stderr)
        self._lame_thread = threading.Thread(target=self._lame_main, daemon=True, name="chainrt.rclpy/lame")
        self._lame_thread.start()

    def _stop_lame(self) -> None:
        if self._lame_thread is not None:
            self._lame_stop.set()
            self._lame_thread.join()
            self._lame_thread = None
        if self._lame_node is not None:
            try:
                self._lame_node.destroy_node()
            except Exception:
                pass
            self._lame_node, self._lame_pub = None, None

    def _publish_decision(self, ev: dict) -> None:
        if self._lame_pub is None:
            return
        publisher, msg_type = self._lame_pub
        try:
            publisher.publish(msg_type(data=json.dumps({"event": "lame_decision", "run_id": self._run_id,
                                                        "executor": self._monitor_name(), **ev})))
        except Exception:  # the context went away (shutdown): the report keeps the decision
            pass

    def _lame_main(self) -> None:
        """The controller thread (normal scheduling): every period, and at once (at most every
        0.5 s) after an RT chain's deadline miss, one activation (measure, decide, apply)."""
        mono = self._mod.monotonic_ns
        start = mono()
        period, min_gap = self._lame_period_ns, 500_000_000
        next_at, last_miss, last_act = start + period, start - min_gap, start
        loop, seen, pending = None, [], False
        while not self._lame_stop.wait(0.05):
            try:
                if self._loop is not loop:   # (re)built: its counters start at zero
                    loop, seen = self._loop, list(self._loop.chain_misses())
                misses = list(loop.chain_misses())
                rt = set(self._lame.rt_chains())
                pending = pending or any(n in rt and m > (seen[i] if i < len(seen) else 0)
                                         for i, (n, m) in enumerate(zip(loop.chain_names(), misses)))
                seen = misses
                now = mono()
                by_miss = pending and self._lame_on_miss and now - last_miss >= min_gap
                due = self._lame.demotion_due_ns()  # a deferred demotion is re-checked when due
                by_due = not by_miss and due > 0 and last_act < start + due <= now and start + due < next_at
                if by_miss:
                    pending, last_miss = False, now
                elif by_due:
                    pass
                elif now < next_at:
                    continue
                else:
                    while next_at <= now:
                        next_at += period
                last_act = now
                ev = dict(self._lame.step(loop, by_miss, now - start))
                if by_due:
                    ev["trigger"] = "demotion due"
            except Exception as err:  # the loop went away (shutdown): stop quietly
                if self._lame_stop.is_set() or not self._spinning:
                    return
                ev = {"at_ns": mono() - start, "trigger": "period", "decision": "failed", "kind": "failed",
                      "why": str(err), "chains": [], "classes": [], "demoted": [], "errors": [],
                      "decide_cpu_ms": 0.0, "apply_cpu_ms": 0.0, "analyses": 0}
            self.lame_log.append(ev)
            self._publish_decision(ev)
            if self._print_report:
                classes = "; ".join(f"{c['name']} {c['budget_ns'] / 1e6:.2f}ms/{c['period_ns'] / 1e6:.0f}ms"
                                    for c in ev.get("classes", [])) if ev["decision"] == "reallocated" else ""
                print(f"chainrt.rclpy: lame controller +{ev['at_ns'] / 1e9:.2f} s ({ev['trigger']}): "
                      f"{ev['decision']} [{ev['kind']}] - {ev['why']} [{ev['decide_cpu_ms']:.2f} ms CPU]"
                      + (f"; classes: {classes}" if classes else "")
                      + "".join(f"; refused: {e}" for e in ev.get("errors", [])), file=sys.stderr)

    # ---- threads --------------------------------------------------------------------------
    @staticmethod
    def _save_thread_params():
        try:
            return (os.sched_getaffinity(0), os.sched_getscheduler(0), os.sched_getparam(0))
        except OSError:
            return None

    @staticmethod
    def _restore_thread_params(saved) -> None:
        if saved is None:
            return
        try:
            os.sched_setscheduler(0, saved[1], saved[2])
            os.sched_setaffinity(0, saved[0])
        except OSError:
            pass

    def _thread_main(self, t: int) -> None:
        self._loop.apply_thread(t)
        # a stopped loop (-3) is either the end of spin or a rebuilt loop: go on with the new one
        while self._spinning and self._context.ok() and not self._is_shutdown:
            try:
                self._spin_once_impl(None, t)
            except (rclpy.executors.ShutdownException, ExternalShutdownException):
                break

    # ---- the dispatch path ------------------------------------------------------------------
    def _spin_once_impl(self, timeout_sec, t: int, done=None) -> bool:
        """One selection and dispatch on thread t. False when the loop was stopped."""
        self._ensure_built()
        loop, ents = self._state
        if isinstance(timeout_sec, rclpy.executors.TimeoutObject):
            timeout_sec = timeout_sec.timeout
        if timeout_sec is None or timeout_sec < 0:
            end = None
        else:
            end = self._mod.monotonic_ns() + int(timeout_sec * 1e9)
        while True:
            if end is None:
                slice_ns = _WAKE_SLICE_NS
            else:
                slice_ns = max(0, min(_WAKE_SLICE_NS, end - self._mod.monotonic_ns()))
            cb = loop.next(t, slice_ns)
            if cb >= 0:
                if self._is_shutdown or not self._context.ok():
                    # Ctrl-C or rclpy.shutdown() while this thread waited: run nothing more
                    # (a timer taken now raises RCLError: its context is gone)
                    loop.done(t, cb, False, False)
                    if self._is_shutdown:
                        raise rclpy.executors.ShutdownException()
                    raise ExternalShutdownException()
                self._dispatch(t, cb, loop, ents)
                if self._tasks:
                    self._run_tasks()
                if self._rebuild_pending:
                    self._maybe_rebuild()
                return True
            if cb == -3:
                if self._state[0] is not loop and not self._is_shutdown:  # rebuilt: go on
                    loop, ents = self._state
                    continue
                return False
            if cb == -2:  # woken: nodes, entities, tasks or futures changed
                if self._tasks:
                    self._run_tasks()
                self._maybe_rebuild()
                loop, ents = self._state
                if t == 0:
                    return True
                continue
            # slice over
            if self._is_shutdown:
                raise rclpy.executors.ShutdownException()
            if not self._context.ok():
                raise ExternalShutdownException()
            if done is not None and done():
                return True
            if end is not None and self._mod.monotonic_ns() >= end:
                return True

    def _dispatch(self, t: int, cb: int, loop, ents) -> None:
        kind, entity, run, name = ents[cb]
        ran = threw = False
        self._busy[t] = True
        try:
            ran = run(t)
        except (InvalidHandle, TimerCancelledError):
            ran = False
        except Exception as err:  # a user callback raised
            if isinstance(err, _RCLError) and not self._context.ok():
                ran = False  # the context went away during the take or the callback: shutdown
            else:
                ran = threw = True
                self._user_exception(name, err)
        finally:
            loop.done(t, cb, ran, threw)
            self._busy[t] = False
            if kind == KIND_EXTERNAL and self._watcher is not None:
                self._watcher.release(entity)
        if self._pending_error is not None and t == 0:
            err, self._pending_error = self._pending_error, None
            raise err

    def _user_exception(self, name: str, err: Exception) -> None:
        text = f"{type(err).__name__}: {err}"
        self.exceptions.append((name, text))
        if self._raise:
            self._pending_error = err
        else:
            print(f"chainrt.rclpy: callback '{name}' raised {text} (the executor goes on)", file=sys.stderr)

    def _run_tasks(self) -> None:
        with self._tasks_lock:
            tasks = list(self._tasks)
        for task, _entity, node in tasks:
            if not task.executing() and not task.done() and (node is None or node in self._nodes):
                try:
                    task()
                except Exception as err:
                    self._user_exception("task", err)
        with self._tasks_lock:
            self._tasks = [x for x in self._tasks if not x[0].done() and not x[0].cancelled()]

    def _start(self, coro) -> None:
        """Run a waitable's execute() coroutine now, up to its first await; the rest as a task."""
        if not inspect.iscoroutine(coro):
            return
        try:
            coro.send(None)
        except StopIteration:
            return
        self._spawn(coro)

    def _spawn(self, coro, after=None) -> None:
        async def run():
            result = await coro
            if after is not None:
                after(result)
        self.create_task(run)

    # ---- binding rclpy entities to the loop --------------------------------------------------
    def _entity_signature(self) -> tuple:
        sig = []
        for node in self._node_order:
            sig.append((id(node), tuple(id(x) for x in node.timers), tuple(id(x) for x in node.subscriptions),
                        tuple(id(x) for x in node.services), tuple(id(x) for x in node.clients),
                        tuple(id(x) for x in node.guards), tuple(id(x) for x in node.waitables)))
        return tuple(sig)

    def _ensure_built(self) -> None:
        if self._loop is None or self._force_build:
            with self._build_lock:
                self._build()

    def _maybe_rebuild(self) -> None:
        with self._build_lock:
            if self._is_shutdown or not self._context.ok():
                # rclpy.shutdown() destroys the nodes: the loop that ran keeps its figures for
                # the end-of-spin report instead of an empty one over no entities
                self._rebuild_pending = False
            elif self._entity_signature() == self._signature:
                self._rebuild_pending = False
            elif any(self._busy):  # not while a callback runs: the finishing thread rebuilds
                self._rebuild_pending = True
            else:
                self._rebuild_pending = False
                self._build()

    def _loaded_model(self):
        """The executor's model (the model argument, or that of the marks), a model file parsed
        once, at the first use, and kept (the file model the marks are built on too)."""
        m = self._model_arg
        if isinstance(m, (str, bytes)) or hasattr(m, "__fspath__"):
            self._model_arg = load_model(m)
            if self._file_model_arg is m:
                self._file_model_arg = self._model_arg
        return self._model_arg

    def _build(self) -> None:
        if self._marks.dirty and self._node_order:
            self._apply_marks()
        view = self._view
        if view is None and self._model_arg is not None:
            names = [x for n in self._node_order
                     for x in (n.get_fully_qualified_name().lstrip("/"), n.get_name())]
            view = self._view = load_view(self._loaded_model(), self._model_executor, self._policy_arg,
                                          self._threads_arg, names)
        if view is not None and self._lame_period_ns:
            self._lame_view(view)
        if view is not None:
            view.reset()
        policy = self._policy_arg or (view.policy if view else DEFAULT_POLICY)
        if view and view.threads:
            thread_specs = view.threads
        else:
            thread_specs = [(f"t{i}", [], None, 0, 0, True) for i in range(self._threads_arg or 1)]
        found = self._collect(view)
        self._check_binding(view, found.held)
        chains = []
        if view is not None:
            index = {e[3]: i for i, e in enumerate(found.ents)}
            for cname, period, deadline, paths in view.chains:
                ids = [[index[c] for c in p if c in index] for p in paths]
                chains.append((cname, period, deadline, [p for p in ids if p]))
            self.unused_model_callbacks = [c.name for c in view.callbacks if not c.used]
        self._start_loop(policy, thread_specs, found, chains)

    def _collect(self, view) -> "_Entities":
        """Every entity of the added nodes, in registration order, matched to the model."""
        explicit = dict(self._code_names)
        explicit.update({id(e): n for n, e in self._explicit.items()})
        found = _Entities(view, explicit, self._node_order)
        add, ents, ext = found.add, found.ents, found.ext
        for node in self._node_order:
            for tmr in node.timers:
                period = tmr.timer_period_ns
                add(KIND_TIMER, tmr, node, self._timer_runner(tmr), tmr.handle,
                    f"timer@{period / 1e6:g}ms", period_ns=period)
            for sub in node.subscriptions:
                add(KIND_SUBSCRIPTION, sub, node, self._subscription_runner(sub), sub.handle,
                    f"sub:{sub.topic_name}", topic=sub.topic_name)
            for srv in node.services:
                add(KIND_SERVICE, srv, node, self._service_runner(srv), srv.handle,
                    f"service:{srv.service_name}", topic=srv.service_name)
            for cli in node.clients:
                add(KIND_CLIENT, cli, node, self._client_runner(cli), cli.handle,
                    f"client:{cli.service_name}", topic=cli.service_name)
            for gc in node.guards:
                ext[id(gc)] = add(KIND_EXTERNAL, gc, node, self._guard_runner(gc), None, "guard_condition")
                if gc.callback is not None:
                    found.unmatched.append(ents[-1][3])
            for wt in node.waitables:
                event = _event_handle(wt)
                if event is not None:
                    add(KIND_EVENT, wt, node, self._event_runner(wt), event, "qos_event", take="waitable")
                    continue
                ext[id(wt)] = add(KIND_EXTERNAL, wt, node, self._waitable_runner(wt), None,
                                  f"waitable:{type(wt).__name__}", take="waitable")
                found.unmatched.append(ents[-1][3])
        return found

    def _check_binding(self, view, held: list) -> None:
        """The first build with nodes: every model callback must have a real counterpart."""
        if view is None or not self._node_order or self._binding_checked:
            return
        self._binding_checked = True
        if view.unbound() and not self._allow_unbound:
            for h in held:
                try:
                    h.__exit__(None, None, None)
                except Exception:
                    pass
            raise UnboundModelCallbacks(
                "chainrt.rclpy: model callbacks without a real counterpart (a model that does not "
                "describe these nodes would be monitored and scheduled wrongly; "
                "ChainExecutor(allow_unbound=True) runs anyway):\n" + view.explain_unbound())

    def _start_loop(self, policy: str, thread_specs: list, found: "_Entities", chains: list) -> None:
        """Replace the dispatch loop by one over `found` (the old one stopped and detached)."""
        old = self._loop
        if old is not None:
            old.stop()
            old.detach()
        self._release_handles()
        self._held = found.held
        takes = found.takes
        positions = []
        if self._take_order == "node":
            ranked = sorted(range(len(takes)), key=lambda i: (takes[i], i))
            positions = [0] * len(takes)
            for pos, i in enumerate(ranked):
                positions[i] = pos
        loop = self._mod.Loop(policy, found.reentrant, found.specs, chains, thread_specs,
                              self._sample_capacity, positions)
        for i, (pnode, pkind, ptopic) in enumerate(found.places):
            loop.set_place(i, pnode, pkind, ptopic)
        for i, period_ns, offset_ns in found.grid:
            loop.arm_timer(i, period_ns, offset_ns)
        loop.trace_registration(self._monitor_name())  # LTTng: a no-op unless being traced
        for note in self._marks.notes:
            loop.add_warning("marks in code: " + note)
        if self.unused_model_callbacks:
            loop.add_warning("model callbacks without a real counterpart: " + ", ".join(self.unused_model_callbacks))
        ext = found.ext
        self._ents, self._ext_ids, self.unmatched = found.ents, ext, found.unmatched
        self._loop = loop
        self._state = (loop, found.ents)
        self._signature = self._entity_signature()
        self._force_build = False
        if ext:
            if self._watcher is None:
                self._watcher = _ExternalWatcher(self)
            self._watcher.reset(loop, ext)
        elif self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def _release_handles(self) -> None:
        held, self._held = self._held, []
        for h in held:
            try:
                h.__exit__(None, None, None)
            except Exception:
                pass

    # ---- per-kind take and call (rclpy's _take_* contract) -----------------------------------
    def _timer_runner(self, tmr):
        handle = tmr.handle
        cb = tmr.callback
        arg = None
        if cb is not None and TimerInfo is not None:
            try:
                for p in inspect.signature(cb).parameters.values():
                    if p.annotation is TimerInfo or p.annotation == "TimerInfo":
                        arg = p.name
                        break
            except (TypeError, ValueError):
                pass
        clock_type = tmr.clock.clock_type
        spawn = self._spawn
        loop_ref = self
        steady = clock_type == ClockType.STEADY_TIME

        call = handle.call_timer_with_info if TimerInfo is not None else handle.call_timer

        def run(t: int) -> bool:
            with handle:
                info = call()
            fn = tmr.callback
            if fn is None:
                return False
            if arg is None:
                r = fn()
            else:
                expected = info["expected_call_time"]
                # on the release grid, not at rcl's next call time (which keeps the phase of the
                # timer's creation): the release the callback is told is the grid instant this
                # executor released it at, on the timer's clock
                release = loop_ref._loop.current_grid_release(t)
                if release:
                    expected = release if steady else release + loop_ref._clock_offset
                r = fn(**{arg: TimerInfo(expected_call_time=expected,
                                         actual_call_time=info["actual_call_time"], clock_type=clock_type)})
            return _ran(r, spawn)
        return run

    def _subscription_runner(self, sub):
        handle = sub.handle
        msg_type = sub.msg_type
        raw = sub.raw
        with_info = sub._callback_type is not type(sub).CallbackType.MessageOnly
        spawn = self._spawn
        stamp = self._header_stamp
        offset = self._clock_offset
        loop_ref = self

        def run(t: int) -> bool:
            with handle:
                mi = handle.take_message(msg_type, raw)
            if mi is None:
                return False
            if stamp:
                msg = mi[0]
                h = getattr(msg, "header", None)
                if h is None and hasattr(msg, "stamp") and hasattr(msg, "frame_id"):
                    h = msg  # a std_msgs/Header itself
                if h is not None:
                    s = h.stamp
                    loop_ref._loop.set_input_release(t, s.sec * 1_000_000_000 + s.nanosec - offset)
            r = sub.callback(*mi) if with_info else sub.callback(mi[0])
            return _ran(r, spawn)
        return run

    def _service_runner(self, srv):
        handle = srv.handle
        spawn = self._spawn

        def run(t: int) -> bool:
            with handle:
                request, header = handle.service_take_request(srv.srv_type.Request)
            if header is None:
                return False
            response = srv.callback(request, srv.srv_type.Response())
            if inspect.iscoroutine(response):
                spawn(response, lambda resp: srv.send_response(resp, header))
            else:
                srv.send_response(response, header)
            return True
        return run

    def _client_runner(self, cli):
        handle = cli.handle
        executor = self

        def run(t: int) -> bool:
            with handle:
                header, response = handle.take_response(cli.srv_type.Response)
            if header is None:
                return False
            try:
                future = cli.get_pending_request(header.request_id.sequence_number)
            except KeyError:  # the request was cancelled
                return True
            # The client's continuation runs in this dispatch, on the chain: the future's done
            # callbacks are called here (rclpy's executors queue them as tasks), then the tasks
            # that await it resume (a coroutine callback's `await client.call_async(...)`).
            callbacks = _take_done_callbacks(future)
            future._set_executor(executor)
            future.set_result(response)
            failed = None
            for fn in callbacks:
                try:
                    fn(future)
                except Exception as err:  # the others still run; the first is reported
                    failed = failed or err
            if executor._tasks:
                executor._run_tasks()
            if failed is not None:
                raise failed
            return True
        return run

    def _guard_runner(self, gc):
        spawn = self._spawn

        def run(t: int) -> bool:
            gc._executor_triggered = False
            if gc.callback is None:
                return False
            r = gc.callback()
            return _ran(r, spawn)
        return run

    def _event_runner(self, wt):
        executor = self

        def run(t: int) -> bool:
            wt._ready_to_take_data = True  # what is_ready() says after a wait set saw the event
            executor._start(wt.execute(wt.take_data()))
            return True
        return run

    def _waitable_runner(self, wt):
        executor = self

        def run(t: int) -> bool:
            data = self._watcher.take(wt) if self._watcher is not None else None
            if data is None:
                data = wt.take_data()
            for future in getattr(wt, "_futures", ()):
                future._set_executor(executor)
            executor._start(wt.execute(data))
            return True
        return run


def _weak_shutdown_hook(executor) -> None:
    """rclpy's Executor registers its bound ``wake`` with the context as a WeakMethod whose
    finaliser removes it from the context's list; after the context was shut down that list is
    empty, so an executor collected later (at interpreter exit, without an explicit shutdown())
    prints "Exception ignored in: <function WeakMethod...>" (ValueError). The hook is replaced
    by a plain function holding a weak reference: the same wake-up on shutdown, nothing to
    remove at collection."""
    import weakref
    ctx = executor._context
    cbs = getattr(ctx, "_callbacks", None)
    lock = getattr(ctx, "_lock", None)
    if not isinstance(cbs, list) or lock is None:
        return
    with lock:
        ours = [w for w in cbs if isinstance(w, weakref.WeakMethod) and w() == executor.wake]
        if not ours:
            return
        for w in ours:
            cbs.remove(w)
        ref = weakref.ref(executor)

        def wake() -> None:
            ex = ref()
            if ex is not None:
                ex.wake()
        cbs.append(wake)


def _take_done_callbacks(future) -> list:
    """The done callbacks of an rclpy Future, removed from it (none when this rclpy keeps them
    elsewhere: it then schedules them itself, as a task)."""
    lock = getattr(future, "_lock", None)
    if lock is None or not isinstance(getattr(future, "_callbacks", None), list):
        return []
    with lock:
        callbacks, future._callbacks = future._callbacks, []
    return callbacks


def _ran(result, spawn) -> bool:
    """A callback ran: a coroutine it returned is spawned as a task (rclpy's rule)."""
    if result is not None and inspect.iscoroutine(result):
        spawn(result)
    return True


def _simulated_time(timer) -> bool:
    """A timer on a ROS clock under simulated time (released by /clock, not on the release grid)."""
    try:
        return bool(timer.clock.ros_time_is_active)
    except AttributeError:
        return False


def _event_handle(wt):
    """The rcl event of one of rclpy's QoS EventHandler waitables, else None."""
    if _EventHandler is None or type(wt) is not _EventHandler:
        return None
    ev = getattr(wt, "_EventHandler__event", None)
    return ev if ev is not None and hasattr(ev, "pointer") and hasattr(wt, "_ready_to_take_data") else None


class _ExternalWatcher:
    """Waits, with rclpy's own WaitSet, for the entities rcl cannot report by event (guard
    conditions with callbacks, waitables such as action servers and clients) and queues them
    in the loop. An entity is not waited on again until its callback has run."""

    def __init__(self, executor: ChainExecutor) -> None:
        from rclpy.guard_condition import GuardCondition
        self._ex = executor
        self._lock = threading.Lock()
        self._busy: set[int] = set()
        self._data: dict[int, Any] = {}
        self._loop = None
        self._ext: dict[int, int] = {}
        self._closed = False
        self._reported = False
        self._gc = GuardCondition(callback=None, callback_group=None, context=executor.context)
        self._thread = threading.Thread(target=self._main, daemon=True, name="chainrt.rclpy/watcher")
        self._started = False

    def reset(self, loop, ext: dict[int, int]) -> None:
        with self._lock:
            self._loop, self._ext = loop, dict(ext)
            self._busy.clear()
            self._data.clear()
        if not self._started:
            self._started = True
            self._thread.start()
        self.poke()

    def poke(self) -> None:
        try:
            self._gc.trigger()
        except Exception:
            pass

    def release(self, entity) -> None:
        with self._lock:
            self._busy.discard(id(entity))
        self.poke()

    def take(self, wt):
        with self._lock:
            return self._data.pop(id(wt), None)

    def close(self) -> None:
        self._closed = True
        self.poke()
        if self._started and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2)
        try:
            self._gc.destroy()
        except Exception:
            pass

    def _main(self) -> None:
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        ex = self._ex
        while not self._closed and ex.context.ok():
            with self._lock:
                loop, busy = self._loop, set(self._busy)
            guards, waitables = [], []
            for node in list(ex._node_order):
                for gc in node.guards:
                    if id(gc) in self._ext and id(gc) not in busy:
                        guards.append(gc)
                for wt in node.waitables:
                    if id(wt) in self._ext and id(wt) not in busy:
                        waitables.append(wt)
            try:
                n_gc = len(guards) + 1
                counts = [0, n_gc, 0, 0, 0, 0]
                for wt in waitables:
                    e = wt.get_num_entities()
                    counts = [counts[0] + e.num_subscriptions, counts[1] + e.num_guard_conditions,
                              counts[2] + e.num_timers, counts[3] + e.num_clients,
                              counts[4] + e.num_services, counts[5] + e.num_events]
                with ex.context.handle:
                    ws = _rclpy.WaitSet(*counts, ex.context.handle)
                    ws.clear_entities()
                    ws.add_guard_condition(self._gc.handle)
                    for gc in guards:
                        ws.add_guard_condition(gc.handle)
                    for wt in waitables:
                        wt.add_to_wait_set(ws)
                    ws.wait(-1)
                    ready = ws.get_ready_entities("guard_condition")
                    fired = [gc for gc in guards if gc.handle.pointer in ready]
                    fired_wt = [wt for wt in waitables if wt.is_ready(ws)]
                    taken = {id(wt): wt.take_data() for wt in fired_wt}
            except Exception as err:
                if self._closed or not ex.context.ok():
                    return
                if not self._reported:  # once: guard conditions/waitables are not served
                    self._reported = True
                    print(f"chainrt.rclpy: waiting for guard conditions and waitables failed: {err!r}",
                          file=sys.stderr)
                time.sleep(0.01)
                continue
            with self._lock:
                if loop is not self._loop:
                    continue
                for gc in fired:
                    self._busy.add(id(gc))
                for wt in fired_wt:
                    self._busy.add(id(wt))
                    self._data[id(wt)] = taken[id(wt)]
            for e in fired + fired_wt:
                loop.push_external(self._ext[id(e)])
