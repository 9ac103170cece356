"""bench/gpu/device_check.sh --dry-run: the GPU check's steps on the emulated device, with the
build under test (CHAINRT_BUILD_DIR): the CUDA tests are reported skipped with their reason
(this build has no CUDA toolkit, or the machine no GPU), the benchmark fills every row but the
other-process one for 3 runs, both tables land in $OUT and the summary says what ran. No
wall-clock figure is asserted."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("CHAINRT_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "bench" / "gpu" / "chainrt-gpu-bench"


@pytest.mark.skipif(not BENCH.exists(), reason="chainrt-gpu-bench is not built in CHAINRT_BUILD_DIR")
def test_dry_run_writes_the_tables_and_reports_the_cuda_tests(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), CHAINRT_GPU_BUILD_DIR=str(BUILD))
    r = subprocess.run([str(ROOT / "bench/gpu/device_check.sh"), "--dry-run"], env=env, capture_output=True,
                       text=True, timeout=600)
    summary = (tmp_path / "summary.txt").read_text()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ctest -L cuda: 100% tests passed" in summary
    assert "skipped: no " in summary  # the one-line reason of the skipped CUDA test
    assert "status 0" in summary
    result = json.loads((tmp_path / "gpu_bench.json").read_text())
    assert result["device"] == "emulated" and result["runs"] == 3
    rows = {row["name"]: row for row in result["rows"]}
    gpu_only = {"short-other-process", "packed-same", "packed-greatest"}
    assert all(rows[name]["skipped"] for name in gpu_only)
    for name, row in rows.items():
        if name not in gpu_only:
            assert len(row["runs"]) == 3 and all(run["bound_ms"] > 0 for run in row["runs"]), name
    table = (tmp_path / "gpu_bench.md").read_text()
    assert "| short-greatest |" in table and "worst ≤ bound" in table
    assert (tmp_path / "machine.txt").exists()


def test_bad_argument_is_one_line(tmp_path):
    r = subprocess.run([str(ROOT / "bench/gpu/device_check.sh"), "--gpu"], env=dict(os.environ, OUT=str(tmp_path)),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "usage" in r.stderr
