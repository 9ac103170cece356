"""The campaign folder: ``<out>/campaign-<kind>-<key>/``.

- ``manifest.json``: the run id (one per campaign, kept across resumes), the kind, the identity
  (the parameters that determine the results), the plan (batches, batch size, systems), the
  build that computes them, when and by which command line it was started. Written once,
  atomically, before any batch runs.
- ``batches/b000017.json``: one file per finished batch, written atomically (temporary file,
  rename; not fsynced: a file a power loss leaves empty is ignored) as the batch's result arrives: the run id, the batch (group, first, count,
  seed), where and how long it ran, its result. A batch is whole or absent; a file is never
  replaced, so no system is counted twice, and a re-run computes only the missing batches.
- ``result.json``: the merged result, once every batch is in.
- ``cluster.log``: the embedded cluster's log (when one ran).

A folder whose manifest names another kind, identity or build is refused (``--restart``
discards it); a batch file of another run id (or one that is not whole JSON: a power loss) is
ignored and its batch computed again. A batch file of this run carries a checksum of its content;
one whose checksum, batch or system count does not hold, and a manifest that is not one chainrt
writes, stop the command with one line naming the file: nothing damaged or edited is merged.

One command at a time: a command holds an exclusive lock (flock) on the campaign folder while it
runs; a second command on the same folder is refused at once (the kernel drops the lock when its
holder ends, kill -9 included).
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import uuid
from pathlib import Path

from .. import cliargs
from .plan import FORMAT, Batch, Spec


class CampaignError(Exception):
    """A campaign folder that cannot be used (one line for the user)."""


# Folders this process holds the lock of (resolved path -> the locked descriptor): a command
# opens its folder once; a library caller opening it again in the same process is no second
# command.
_LOCKED: dict[str, int] = {}


def _lock(folder: Path) -> None:
    """Takes the folder's exclusive lock for the rest of this process, or raises CampaignError
    when another process holds it."""
    key = str(folder.resolve())
    if key in _LOCKED:
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise CampaignError(f"{folder}: another chainrt command is running this campaign; wait for it to end "
                            f"(then the same command resumes or reprints it), or give this one another --out") from None
    except OSError as e:  # a file system without locks
        os.close(fd)
        raise CampaignError(f"{folder}: cannot lock the campaign folder ({e.strerror})") from None
    _LOCKED[key] = fd


def checksum(record: dict) -> str:
    """The digest a batch file carries of its own content (every field but ``sha256``)."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _manifest_problem(manifest) -> str | None:
    """What makes `manifest` not one that chainrt writes (None: it is)."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    run_id = manifest.get("run_id")
    if not isinstance(run_id, str) or not re.fullmatch(r"[0-9a-f]{12}", run_id):
        return "no run_id of 12 hex digits"
    for name in ("batch_size", "batches", "systems"):
        if not _is_count(manifest.get(name)) or manifest[name] < (1 if name == "batch_size" else 0):
            return f"{name} is not a {'positive' if name == 'batch_size' else 'whole'} number"
    return None


class Store:
    def __init__(self, folder: Path, manifest: dict):
        self.folder = folder
        self.manifest = manifest
        self.run_id: str = manifest["run_id"]
        self._done: dict[int, dict] = {}

    @staticmethod
    def folder_for(out: str, spec: Spec) -> Path:
        return Path(out) / f"campaign-{spec.kind}-{spec.key()}"

    @classmethod
    def open(cls, folder: Path, spec: Spec, build: str, restart: bool = False) -> "Store":
        """Opens the campaign in `folder` (resumed) or starts it there."""
        manifest_path = folder / "manifest.json"
        if folder.exists() and not folder.is_dir():
            raise CampaignError(f"{folder}: exists and is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        _lock(folder)
        if restart and manifest_path.exists():
            for entry in folder.iterdir():  # the folder itself stays: it carries the lock
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        if manifest_path.exists():
            try:
                manifest = json.loads(manifest_path.read_text())
            except (OSError, ValueError, UnicodeDecodeError) as e:
                raise CampaignError(f"{manifest_path}: unreadable ({e}); --restart starts the campaign over") from None
            problem = _manifest_problem(manifest)
            if problem:
                raise CampaignError(f"{manifest_path}: damaged ({problem}); --restart starts the campaign over")
            cls._check(manifest, folder, spec, build)
            store = cls(folder, manifest)
            store._load()
            return store
        if folder.exists() and any(folder.iterdir()):
            raise CampaignError(f"{folder}: not a campaign folder (no manifest.json) and not empty")
        (folder / "batches").mkdir(parents=True, exist_ok=True)
        manifest = {
            "format": FORMAT, "kind": spec.kind, "run_id": uuid.uuid4().hex[:12], "identity": spec.identity,
            "batches": len(spec.batches), "batch_size": spec.batch_size, "systems": spec.systems,
            "groups": spec.groups, "build": build,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["chainrt"] + sys.argv[1:]) if sys.argv else "",
        }
        cliargs.write_atomic(manifest_path, json.dumps(manifest, indent=1) + "\n")
        return cls(folder, manifest)

    @staticmethod
    def _check(manifest: dict, folder: Path, spec: Spec, build: str) -> None:
        if manifest.get("format") != FORMAT or manifest.get("kind") != spec.kind:
            raise CampaignError(f"{folder} holds a campaign of another kind or format; --restart discards it")
        if manifest.get("identity") != spec.identity:
            raise CampaignError(f"{folder} holds a campaign of other parameters; --restart discards it")
        if manifest.get("build") != build:
            raise CampaignError(f"{folder} was started by another chainrt build ({manifest.get('build')}, this is "
                                f"{build}): finish it with that build, or --restart to start over")

    def _load(self) -> None:
        for path in sorted((self.folder / "batches").glob("b*.json")):
            try:
                rec = json.loads(path.read_text())
            except (OSError, ValueError, UnicodeDecodeError):
                continue  # not whole (a power loss): the batch runs again
            if not isinstance(rec, dict) or rec.get("run_id") != self.run_id:
                continue  # another run's: the batch runs again
            problem = self._record_problem(path, rec)
            if problem:
                raise CampaignError(f"{path}: damaged or edited ({problem}); delete it to compute its batch again, "
                                    f"or --restart to start the campaign over")
            self._done[rec["batch"]["index"]] = rec

    @staticmethod
    def _record_problem(path: Path, rec: dict) -> str | None:
        """What makes a batch file of this run unusable (None: it is whole and consistent)."""
        if rec.get("sha256") != checksum(rec):
            return "its checksum does not match its content"
        batch, result = rec.get("batch"), rec.get("result")
        if not isinstance(batch, dict) or not _is_count(batch.get("index")) or not _is_count(batch.get("count")):
            return "no batch"
        if path.name != f"b{batch['index']:06d}.json":
            return f"it holds batch {batch['index']}"
        if not isinstance(result, dict):
            return "no result"
        if "systems" in result and result["systems"] != batch["count"]:
            return f"{result['systems']!r} systems in a batch of {batch['count']}"
        return None

    def done(self, plan: list[Batch]) -> dict[int, dict]:
        """Finished batches of `plan` (index -> record); a record that does not match its
        batch in the plan is not counted."""
        return {b.index: self._done[b.index] for b in plan
                if b.index in self._done and self._done[b.index]["batch"] == b.as_dict()}

    def save(self, batch: Batch, record: dict) -> bool:
        """Keeps a finished batch; False (and nothing written) when it is already kept."""
        if batch.index in self._done and self._done[batch.index]["batch"] == batch.as_dict():
            return False
        rec = {"format": FORMAT, "run_id": self.run_id, "batch": batch.as_dict(), **record}
        rec["sha256"] = checksum(rec)
        # Whole or absent; not fsynced: one a power loss leaves empty is ignored and runs again.
        cliargs.write_atomic(self.folder / "batches" / f"b{batch.index:06d}.json", json.dumps(rec) + "\n",
                             durable=False)
        self._done[batch.index] = rec
        return True

    def write_result(self, result: dict) -> Path:
        path = self.folder / "result.json"
        cliargs.write_atomic(path, json.dumps({"run_id": self.run_id, "kind": self.manifest["kind"],
                                               "identity": self.manifest["identity"], **result}, indent=1) + "\n")
        return path

    def log_path(self) -> Path:
        return self.folder / "cluster.log"

