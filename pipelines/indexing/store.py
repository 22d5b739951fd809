"""Versioned index directories: build beside the live one, then swap a pointer atomically.

    <root>/<kind>/<name>/
        CURRENT.json        Manifest of the live version (replaced with os.replace: atomic)
        v-<fp>-<rand>/      one built version (schema.json, lance/ ...)
    <root>/<kind>/<name>.lock   held while building (filelock; works across processes)

A reader follows CURRENT.json and sees either the old or the new version, never a partial
one: a version directory is complete before CURRENT.json names it. Publishing keeps the
version it replaced (a reader may still have it open) and deletes older and abandoned ones.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock
from pydantic import Field

from core.types import Frozen

SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
FORMAT_VERSION = 1  # bump when the on-disk layout changes: every index is rebuilt


class Manifest(Frozen):
    """What is live for one index, and how it was made."""

    name: str
    version: str  # directory name under the index's folder
    fingerprint: str
    format_version: int = FORMAT_VERSION
    built_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    build_seconds: float = 0.0
    counts: dict[str, int] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()


class VersionedStore:
    def __init__(self, root: str | Path, kind: str, name: str) -> None:
        if not SAFE_NAME.match(name):
            raise ValueError(f"index name {name!r} is not a safe directory name")
        self.name = name
        self.base = Path(root) / kind / name
        self.lock_path = Path(root) / kind / f"{name}.lock"
        self.pointer = self.base / "CURRENT.json"

    def current(self) -> Manifest | None:
        try:
            manifest = Manifest.model_validate_json(self.pointer.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        if manifest.format_version != FORMAT_VERSION or not (self.base / manifest.version).is_dir():
            return None
        return manifest

    def current_dir(self) -> Path | None:
        manifest = self.current()
        return self.base / manifest.version if manifest else None

    def lock(self, timeout_s: float) -> FileLock:
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.lock_path), timeout=timeout_s)

    def new_version(self, fingerprint: str) -> Path:
        path = self.base / f"v-{fingerprint[:12]}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        return path

    def publish(self, version_dir: Path, manifest: Manifest) -> None:
        """Make ``version_dir`` live (call with the lock held)."""
        previous = self.current()
        staged = self.base / f".CURRENT.{uuid.uuid4().hex[:8]}.tmp"
        staged.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        os.replace(staged, self.pointer)
        self._prune(keep={version_dir.name, previous.version if previous else ""})

    def retract(self) -> None:
        """No version is live any more (e.g. the database became empty)."""
        self.pointer.unlink(missing_ok=True)
        self._prune(keep=set())

    def discard(self, version_dir: Path) -> None:
        shutil.rmtree(version_dir, ignore_errors=True)

    def _prune(self, keep: set[str]) -> None:
        for path in self.base.iterdir():
            if path.is_dir() and path.name.startswith("v-") and path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)
            elif path.name.startswith(".CURRENT.") and path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)
