"""`chainrt trace-report` on a trace folder that is damaged or not a trace at all ends with one
line and exit 1 — never Babeltrace's SIGABRT (rc 134) or a hang: the metadata is checked first,
and Babeltrace reads in a child process watched for progress (chainrt.tracing.read_trace)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from chainrt import tracing


def _packets(text: bytes) -> bytes:
    """CTF 1.8 packetized metadata holding `text` (little-endian headers, 4000-byte packets)."""
    out = b""
    for i in range(0, len(text), 4000):
        body = text[i:i + 4000]
        size = (37 + len(body) + 7) // 8 * 64
        hdr = struct.pack("<I16sIII5B", 0x75D11D57, b"\x11" * 16, 0, (37 + len(body)) * 8, size, 0, 0, 0, 1, 8)
        out += (hdr + body).ljust(size // 8, b"\0")
    return out


TSDL = (b"/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le; };\n"
        b"clock { name = monotonic; freq = 1000000000; };\n")


def _trace(root: Path, metadata: bytes) -> Path:
    d = root / "ust/uid/0/64-bit"
    d.mkdir(parents=True)
    (d / "metadata").write_bytes(metadata)
    (d / "chan_0").write_bytes(os.urandom(4096))
    return root


def _report(path: Path) -> subprocess.CompletedProcess:
    # the timeout is a bound against the old hang (minutes), not a timing assertion
    return subprocess.run([sys.executable, "-m", "chainrt.cli", "trace-report", str(path)], capture_output=True,
                          text=True, timeout=120)


def _one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chainrt trace-report: ") and "Traceback" not in r.stderr, lines
    return lines[0]


def test_folders_that_hold_no_trace(tmp_path):
    assert "no metadata" in _one_line_error(_report(tmp_path))
    f = tmp_path / "file"
    f.write_text("x")
    assert "not a folder" in _one_line_error(_report(f))
    assert "no such file" in _one_line_error(_report(tmp_path / "missing"))


def test_garbage_metadata(tmp_path):
    trace = _trace(tmp_path / "t", os.urandom(5000))
    assert "not CTF trace metadata" in _one_line_error(_report(trace))


def test_truncated_metadata_packet(tmp_path):
    # (Babeltrace spun for minutes, deaf to SIGINT, on a metadata file cut in half)
    whole = _packets(TSDL + b"/* " + b"x" * 9000 + b" */\n")
    trace = _trace(tmp_path / "t", whole[:len(whole) // 2 + 100])
    assert "cut short" in _one_line_error(_report(trace))


def test_metadata_text_cut_in_a_declaration(tmp_path):
    trace = _trace(tmp_path / "t", _packets(TSDL + b"stream { event.header := struct {"))
    assert "middle of a declaration" in _one_line_error(_report(trace))


def test_babeltrace_abort_is_one_line(tmp_path):
    # Whole packets around TSDL garbage: Babeltrace aborts the process that reads it (SIGABRT).
    try:
        tracing._import_bt2()
    except tracing.TraceError as e:
        pytest.skip(str(e))
    rnd = bytes(x % 94 + 33 for x in os.urandom(3000))
    for c in b"{};":
        rnd = rnd.replace(bytes([c]), b"(")
    trace = _trace(tmp_path / "t", _packets(b"/* CTF 1.8 */\n" + rnd + b";\n"))
    line = _one_line_error(_report(trace))
    assert "Babeltrace" in line or "not a readable CTF trace" in line


def test_a_reader_that_makes_no_progress_is_stopped(tmp_path, monkeypatch):
    trace = _trace(tmp_path / "t", _packets(TSDL))
    monkeypatch.setattr(tracing, "_import_bt2", lambda: None)
    monkeypatch.setattr(tracing, "READER", ["-c", "import time; time.sleep(600)"])
    with pytest.raises(tracing.TraceError, match="no progress"):
        list(tracing.read_trace(str(trace)))
