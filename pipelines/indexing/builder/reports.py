"""What a build run says about each index, and the cheap check that skips unchanged ones.

    job (DatabaseRef | None for the example index) ──unchanged_report──► BuildReport("unchanged")
                                                                     └─► None: build it

The check runs in the driver before any worker starts, so a run with nothing to do never
starts Ray or loads the embedding model; the build itself re-checks under the lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from core.types import Frozen
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.fingerprint import fingerprint
from pipelines.indexing.examples.example_source import source_fingerprint
from pipelines.indexing.settings import IndexSettings
from pipelines.indexing.store import VersionedStore
from pipelines.sandbox.errors import DatabaseUnavailable

SCHEMA_FILE = "schema.json"
EXAMPLES_NAME = "spider_train"
Status = Literal["built", "unchanged", "skipped", "failed"]


class BuildReport(Frozen):
    """The outcome for one index."""

    name: str  # db_id, or the example index's name
    kind: Literal["database", "examples"]
    status: Status
    reason: str = ""
    seconds: float = 0.0
    bytes_on_disk: int = 0
    counts: dict[str, int] = Field(default_factory=dict)


def index_size(path: Path | None) -> int:
    if path is None or not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def unchanged_report(job: DatabaseRef | None, settings: IndexSettings) -> BuildReport | None:
    """``unchanged`` when the live index matches the source's fingerprint now; else None."""
    if settings.force:
        return None
    if job is None:
        store = VersionedStore(settings.root, "examples", EXAMPLES_NAME)
        live = store.current()
        if live is None or live.fingerprint != source_fingerprint(
            settings.examples.train_file, settings.examples.tables_file
        ):
            return None
        name, kind = EXAMPLES_NAME, "examples"
    else:
        store = VersionedStore(settings.root, "databases", job.db_id)
        live = store.current()
        try:
            if (
                live is None
                or live.fingerprint
                != fingerprint(job, settings.fingerprint, settings.content_settings_hash()).digest
            ):
                return None
        except DatabaseUnavailable:
            return None  # the build reports why
        name, kind = job.db_id, "database"
    return BuildReport(
        name=name,
        kind=kind,
        status="unchanged",
        bytes_on_disk=index_size(store.current_dir()),
        counts=live.counts,
    )
