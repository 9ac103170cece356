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
discards it); a batch file that does not match the plan or the run id is ignored and its batch
computed again.
"""

from __future__ import annotations

import datetime
import json
import shutil
import sys
import uuid
from pathlib import Path

from .. import cliargs
from .plan import FORMAT, Batch, Spec


class CampaignError(Exception):
    """A campaign folder that cannot be used (one line for the user)."""


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
        if restart and manifest_path.exists():
            shutil.rmtree(folder)
        if manifest_path.exists():
            try:
                manifest = json.loads(manifest_path.read_text())
            except (OSError, ValueError) as e:
                raise CampaignError(f"{manifest_path}: unreadable ({e}); --restart starts the campaign over") from None
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
                if rec.get("run_id") == self.run_id and isinstance(rec.get("batch"), dict):
                    self._done[int(rec["batch"]["index"])] = rec
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not ours or not whole: the batch runs again

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

