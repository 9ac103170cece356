"""chainrt.rclpy.accelerator from real rclpy callbacks over Fast DDS: a request carries the
priority of the chain whose callback runs (the executor supplies it), direct access is first
come, first served, a request outside a dispatch has the lowest priority, and a request whose
job raises leaves the accelerator usable.

The first request's job holds the device until the others are queued, and each callback waits
for the previous request to be issued, so the queue's order comes from the accelerator's own
state, never from wall-clock timing; the device order is read from the accelerator's trace.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("chainrt._rclpy_exec", reason="chainrt.rclpy needs the ROS 2 build (scripts/setup)")

from rclpy.node import Node  # noqa: E402

from chainrt.rclpy import ChainExecutor, accelerator  # noqa: E402
from rosutil import rclpy_context  # noqa: E402

_ids = itertools.count()

# Three chains of one timer each on three executor threads: high (chain priority 3), low2 (2),
# low1 (1); the rclcpp test's too.
MODEL = Path(__file__).resolve().parents[1] / "cpp" / "runtime" / "data" / "accelerator_client.yaml"
SITES = {1: "L1", 2: "L2", 3: "H"}


@pytest.fixture
def ctx():
    yield from rclpy_context(150 + (os.getpid() + next(_ids)) % 20)


def wait_until(cond, limit=60.0):
    end = time.monotonic() + limit
    while not cond() and time.monotonic() < end:
        time.sleep(0.002)
    return cond()


def run_nodes(ctx, bodies, requests, gpu):
    """The three nodes (plain rclpy timers) under the model; bodies[name] runs on the callback's
    first run. Returns the device order (sites named) and the executor's exceptions."""
    model = MODEL
    ran = {name: threading.Event() for name in bodies}
    nodes = []
    for node, cb in (("acc_hi", "H"), ("acc_lo1", "L1"), ("acc_lo2", "L2")):
        n = Node(node, context=ctx)

        def tick(cb=cb):
            if cb in bodies and not ran[cb].is_set():
                ran[cb].set()
                bodies[cb]()
        n.create_timer(0.02, tick)
        nodes.append(n)
    ex = ChainExecutor(model=str(model), context=ctx, report=False)
    for n in nodes:
        ex.add_node(n)
    done = threading.Event()
    th = threading.Thread(target=lambda: (ex.spin(), done.set()), daemon=True)
    th.start()
    try:
        assert wait_until(lambda: all(e.is_set() for e in ran.values()) and gpu.requests() >= requests)
        assert wait_until(lambda: len(gpu.trace()) >= requests)
    finally:
        ex.shutdown(timeout_sec=5)
        assert done.wait(20), "spin() did not return"
        for n in nodes:
            n.destroy_node()
    order = [SITES.get(r["site"], f"plain{r['site']}") for r in gpu.trace()]
    return order, list(ex.exceptions)


def holding(gpu, requests):
    """A job that holds the device until `requests` were issued, and the event it sets when the
    device starts it (the request is in service)."""
    serving = threading.Event()

    def hold():
        serving.set()
        assert wait_until(lambda: gpu.requests() >= requests)
    return hold, serving


def three_requests(gpu, first_job=None):
    """L1 asks first (its job holds the device until three requests were issued), then, once
    L1 is in service, L2, then H."""
    hold, serving = holding(gpu, 3)

    def first():
        hold()
        if first_job:
            first_job()
    return {
        "L1": lambda: gpu.run(job=first, site=1),
        "L2": lambda: (wait_until(serving.is_set), gpu.run(kernel=0.001, site=2)),
        "H": lambda: (wait_until(lambda: gpu.requests() >= 2), gpu.run(kernel=0.001, site=3)),
    }


def test_server_runs_the_high_chains_request_before_queued_lower_ones(ctx):
    with accelerator.SharedAccelerator(f"gpu_server_{os.getpid()}", "server") as gpu:
        order, errors = run_nodes(ctx, three_requests(gpu), 3, gpu)
    assert errors == []
    assert order == ["L1", "H", "L2"]


def test_direct_access_is_first_come_first_served(ctx):
    with accelerator.SharedAccelerator(f"gpu_direct_{os.getpid()}", "direct") as gpu:
        order, errors = run_nodes(ctx, three_requests(gpu), 3, gpu)
    assert errors == []
    assert order == ["L1", "L2", "H"]


def test_a_request_outside_a_dispatch_has_the_lowest_priority(ctx):
    with accelerator.SharedAccelerator(f"gpu_plain_{os.getpid()}", "server") as gpu:
        assert accelerator.dispatch_priority() == (False, None)
        seen = []
        hold, serving = holding(gpu, 3)
        blocker = threading.Thread(target=lambda: gpu.run(job=hold, site=100))
        plain = threading.Thread(target=lambda: (wait_until(serving.is_set), gpu.run(kernel=0.001, site=101)))
        blocker.start()
        plain.start()

        def low():
            seen.append(accelerator.dispatch_priority())
            wait_until(lambda: gpu.requests() >= 2)
            gpu.run(kernel=0.001, site=1)
        order, errors = run_nodes(ctx, {"L1": low}, 3, gpu)
        blocker.join(20)
        plain.join(20)
    assert errors == []
    # the effective priority of L1 (chain low1's priority 1 x 1024 + its position 0, facts.hpp),
    # which the callback never passed
    assert seen == [(True, 1024)]
    assert order == ["plain100", "L1", "plain101"]


def test_a_raising_request_leaves_the_accelerator_usable(ctx):
    def fail():
        raise RuntimeError("kernel failed")
    with accelerator.SharedAccelerator(f"gpu_raise_{os.getpid()}", "server") as gpu:
        order, errors = run_nodes(ctx, three_requests(gpu, fail), 3, gpu)
        assert gpu.run(job=lambda: 42) == 42    # still serving, from any thread
        assert wait_until(lambda: len(gpu.trace()) == 4)
    assert len(errors) == 1
    assert "kernel failed" in errors[0][1]
    assert order == ["L1", "H", "L2"]


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="kernel must be a duration"):
        accelerator.run("anything", kernel=-1)
    with pytest.raises(ValueError, match="no accelerator named 'no_such_device'"):
        accelerator.run("no_such_device", kernel=0.001)
    with pytest.raises(ValueError, match="access must be"):
        accelerator.SharedAccelerator("x_bad_access", "sometimes")


def test_a_shared_accelerator_serves_the_requests_of_another_process():
    # This process serves the device (shared memory, docs/accelerator.md); a second Python process
    # is its client: its request is served here, its job runs in its own process (the result is
    # that process's pid), and the segment is gone once both closed it.
    import subprocess
    import sys
    shared = f"pytest-{os.getpid()}-{next(_ids)}"
    gpu = accelerator.SharedAccelerator("gpu-shared", access="server", shared=shared, serve=True)
    try:
        child = subprocess.run(
            [sys.executable, "-c",
             "import os\nfrom chainrt.rclpy import accelerator\n"
             f"a = accelerator.SharedAccelerator('gpu-shared', access='server', shared={shared!r}, serve=False)\n"
             "print(os.getpid(), a.run(kernel=0.001, job=os.getpid, site=5))\n"
             "a.close()\n"],
            capture_output=True, text=True, timeout=120, env=dict(os.environ))
        assert child.returncode == 0, child.stderr
        pid, ran_in = child.stdout.split()
        assert pid == ran_in  # the job ran in the client's process
        assert [r["site"] for r in gpu.trace()] == [5]
    finally:
        gpu.close()
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"chainrt-acc-{shared}")]
