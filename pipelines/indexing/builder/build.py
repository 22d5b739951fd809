"""Build the L0 indexes of databases (schema view + cell index) and the example index.

    build_database(db, settings)  one database, under its lock:
        fingerprint ──unchanged──► "unchanged"
                    └─changed──► new version dir: schema.json + LanceDB cells (+ FTS)
                                 ──fingerprint again──► same: publish (atomic) | moved: discard
    build_examples(settings)      the global example index, same protocol
    load_schema_view(root, db_id) the published SchemaView of a database

Every failure is a ``BuildReport`` with a reason; no failure leaves a partial index behind
(the version directory is deleted and the previously published one stays live).
"""

from __future__ import annotations

import logging
import time
from contextlib import closing
from pathlib import Path
from typing import Literal, NamedTuple

from filelock import Timeout

from pipelines.contracts import DatabaseRef, SchemaView
from pipelines.indexing.builder.fingerprint import fingerprint
from pipelines.indexing.builder.reports import (
    EXAMPLES_NAME,
    SCHEMA_FILE,
    BuildReport,
    Status,
    index_size,
)
from pipelines.indexing.cell_values.cell_index import write_cell_table
from pipelines.indexing.cell_values.cells import extract_cell_values
from pipelines.indexing.errors import DatabaseChangedDuringBuild, IndexingError, IndexNotBuilt
from pipelines.indexing.examples.example_index import write_example_table
from pipelines.indexing.examples.example_source import load_examples, source_fingerprint
from pipelines.indexing.settings import IndexSettings
from pipelines.indexing.store import Manifest, VersionedStore
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema.introspect import engine_for, introspect

log = logging.getLogger(__name__)


def _build_database_version(
    version: Path, db: DatabaseRef, settings: IndexSettings
) -> tuple[dict[str, int], tuple[str, ...]]:
    view = introspect(db, settings.sample_values)
    (version / SCHEMA_FILE).write_text(view.model_dump_json(), encoding="utf-8")
    with closing(connect_readonly(db)) as conn:
        extraction = extract_cell_values(conn, engine_for(db), view, settings.cells)
    if extraction.values:
        write_cell_table(version, extraction.values, batch_size=settings.embed_batch_size)
    counts = {
        "tables": len(view.tables),
        "values": len(extraction.values),
        "skipped_columns": len(extraction.skipped_columns),
    }
    counts.update({f"skipped_values:{reason}": n for reason, n in extraction.skipped_values})
    notes = tuple(f"skipped column {name}: {reason}" for name, reason in extraction.skipped_columns)
    return counts, notes


class Reporter(NamedTuple):
    """A build's report at any of its exits: the status, the seconds since it started and the
    published index's size."""

    name: str
    kind: Literal["database", "examples"]
    store: VersionedStore
    started: float

    def __call__(
        self, status: Status, reason: str = "", counts: dict[str, int] | None = None
    ) -> BuildReport:
        return BuildReport(
            name=self.name,
            kind=self.kind,
            status=status,
            reason=reason,
            seconds=time.perf_counter() - self.started,
            bytes_on_disk=index_size(self.store.current_dir()),
            counts=counts or {},
        )


def build_database(db: DatabaseRef, settings: IndexSettings) -> BuildReport:
    """(Re)build one database's indexes when its fingerprint changed; never raises."""
    started = time.perf_counter()
    store = VersionedStore(settings.root, "databases", db.db_id)
    report = Reporter(db.db_id, "database", store, started)

    try:
        with store.lock(settings.lock_timeout_s):
            before = fingerprint(db, settings.fingerprint, settings.content_settings_hash())
            live = store.current()
            if live is not None and live.fingerprint == before.digest and not settings.force:
                return report("unchanged", counts=live.counts)
            version = store.new_version(before.digest)
            try:
                counts, notes = _build_database_version(version, db, settings)
                if (
                    fingerprint(db, settings.fingerprint, settings.content_settings_hash())
                    != before
                ):
                    raise DatabaseChangedDuringBuild(db.db_id)
            except BaseException:
                store.discard(version)
                raise
            if counts["tables"] == 0:
                store.discard(version)
                store.retract()
                return report("skipped", "database has no tables")
            manifest = Manifest(
                name=db.db_id,
                version=version.name,
                fingerprint=before.digest,
                build_seconds=time.perf_counter() - started,
                counts=counts,
                notes=notes,
            )
            store.publish(version, manifest)
            return report("built", counts=counts)
    except Timeout:
        return report(
            "failed",
            f"another build holds {store.lock_path} (waited {settings.lock_timeout_s:g} s)",
        )
    except (DatabaseUnavailable, IndexingError) as exc:
        return report("failed", str(exc))
    except Exception as exc:  # one database's unexpected failure must not stop the others
        log.exception("index build failed for %s", db.db_id)
        return report("failed", f"{type(exc).__name__}: {exc}")


def build_examples(settings: IndexSettings) -> BuildReport:
    """(Re)build the example index when its training files (or the skeletoniser) changed."""
    started = time.perf_counter()
    store = VersionedStore(settings.root, "examples", EXAMPLES_NAME)
    source = settings.examples
    report = Reporter(EXAMPLES_NAME, "examples", store, started)

    try:
        with store.lock(settings.lock_timeout_s):
            digest = source_fingerprint(source.train_file, source.tables_file)
            live = store.current()
            if live is not None and live.fingerprint == digest and not settings.force:
                return report("unchanged", counts=live.counts)
            examples = load_examples(source.train_file, source.tables_file)
            if not examples:
                return report("skipped", f"no training questions in {source.train_file}")
            version = store.new_version(digest)
            try:
                write_example_table(version, examples, batch_size=settings.embed_batch_size)
            except BaseException:
                store.discard(version)
                raise
            counts = {"examples": len(examples)}
            manifest = Manifest(
                name=EXAMPLES_NAME,
                version=version.name,
                fingerprint=digest,
                build_seconds=time.perf_counter() - started,
                counts=counts,
                notes=(f"source: {source.train_file}",),
            )
            store.publish(version, manifest)
            return report("built", counts=counts)
    except Timeout:
        return report("failed", f"another build holds {store.lock_path}")
    except IndexingError as exc:
        return report("failed", str(exc))
    except Exception as exc:
        log.exception("example index build failed")
        return report("failed", f"{type(exc).__name__}: {exc}")


def load_schema_view(root: str | Path, db_id: str) -> SchemaView:
    """The SchemaView published with a database's index (no database access)."""
    version = VersionedStore(root, "databases", db_id).current_dir()
    if version is None:
        raise IndexNotBuilt(f"database {db_id!r}", str(root))
    return SchemaView.model_validate_json((version / SCHEMA_FILE).read_text(encoding="utf-8"))
