"""Campaign tasks for tests/python/test_campaign.py that need no C++: importable by the workers
of a cluster the tests start (the tests put this folder on their PYTHONPATH)."""

from __future__ import annotations

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The campaign command as a user runs it, with this folder (the workers import these tasks by
# this module's name) and the checkout's package on the path.
CHAINRT = [sys.executable, "-m", "chainrt.cli"]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT / "python"),
                                                   os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))


def numbered(identity: dict, batch: dict) -> dict:
    """The batch's system numbers (to count each system exactly once) and their sum; raises for
    the batches whose first system is in identity["fail"]."""
    systems = list(range(batch["first"], batch["first"] + batch["count"]))
    if batch["first"] in identity.get("fail", []):
        raise ValueError(f"system {batch['first']} is broken on purpose")
    return {"systems": batch["count"], "numbers": systems, "total": sum(systems),
            "max_number": float(max(systems))}


def numbered_ok(identity: dict, batch: dict) -> dict:
    """`numbered` with nothing broken (the same campaign, fixed)."""
    return numbered({}, batch)
