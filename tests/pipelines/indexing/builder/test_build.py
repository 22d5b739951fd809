from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder import build as build_module
from pipelines.indexing.builder.build import build_database, load_schema_view
from pipelines.indexing.cell_values.cell_index import CellRetriever
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.indexing.store import VersionedStore
from pipelines.schema import introspect

pytestmark = pytest.mark.usefixtures("embedder")


def _insert(db: DatabaseRef, sql: str, *params) -> None:
    with sqlite3.connect(db.path) as conn:
        conn.execute(sql, params)
    conn.close()


def test_build_then_unchanged_then_only_the_modified_database(zoo_db, numbers_db, settings):
    first = [build_database(db, settings) for db in (zoo_db, numbers_db)]
    assert [r.status for r in first] == ["built", "built"]
    assert first[0].counts["values"] > 0 and first[0].bytes_on_disk > 0
    assert [build_database(db, settings).status for db in (zoo_db, numbers_db)] == [
        "unchanged",
        "unchanged",
    ]
    _insert(
        zoo_db, "INSERT INTO animal VALUES (6, 'Snow Leopard', 'Ghost', '2', 'mountains', 40.0)"
    )
    third = [build_database(db, settings) for db in (zoo_db, numbers_db)]
    assert [r.status for r in third] == ["built", "unchanged"]
    hits = CellRetriever(settings.root).search("zoo", "snow leopard", k=1, mode="bm25")
    assert [h.value for h in hits] == ["Snow Leopard"]


def test_settings_change_rebuilds(zoo_db, settings):
    assert build_database(zoo_db, settings).status == "built"
    capped = settings.model_copy(
        update={"cells": settings.cells.model_copy(update={"max_values_per_column": 1})}
    )
    report = build_database(zoo_db, capped)
    assert report.status == "built" and report.counts["values"] == 5  # one per indexed column


def test_force_rebuilds_an_unchanged_database(zoo_db, settings):
    build_database(zoo_db, settings)
    assert build_database(zoo_db, settings.model_copy(update={"force": True})).status == "built"


@pytest.mark.parametrize(
    "content", [b"", b"definitely not sqlite" * 50], ids=["empty-file", "text-file"]
)
def test_corrupt_file_fails_with_reason_and_writes_nothing(tmp_path, settings, content):
    path = tmp_path / "broken.sqlite"
    path.write_bytes(content)
    report = build_database(DatabaseRef(db_id="broken", path=str(path)), settings)
    assert report.status == "failed" and "database unavailable" in report.reason
    assert VersionedStore(settings.root, "databases", "broken").current() is None
    assert path.read_bytes() == content


def test_database_turning_corrupt_keeps_the_last_good_index(zoo_db, settings):
    build_database(zoo_db, settings)
    with open(zoo_db.path, "r+b") as f:
        f.write(b"garbage garbage garbage!")  # destroys the SQLite header
    assert build_database(zoo_db, settings).status == "failed"
    assert (
        CellRetriever(settings.root).search("zoo", "penguin", k=1, mode="bm25")[0].value
        == "Emperor Penguin"
    )


def test_empty_database_is_skipped(tmp_path, settings):
    path = tmp_path / "empty.sqlite"
    sqlite3.connect(path).execute("PRAGMA user_version = 7").connection.close()
    report = build_database(DatabaseRef(db_id="empty", path=str(path)), settings)
    assert report.status == "skipped" and report.reason == "database has no tables"
    with pytest.raises(IndexNotBuilt):
        CellRetriever(settings.root).search("empty", "anything")


def test_database_without_text_values_builds_an_empty_cell_index(numbers_db, settings):
    report = build_database(numbers_db, settings)
    assert report.status == "built" and report.counts["values"] == 0
    assert CellRetriever(settings.root).search("numbers", "2.5") == []
    assert [t.name for t in load_schema_view(settings.root, "numbers").tables] == ["reading"]


def test_non_utf8_values_are_skipped_and_counted(tmp_path, settings):
    path = tmp_path / "dirty.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE city (name TEXT)")
        conn.execute(
            "INSERT INTO city VALUES ('Zürich'), (CAST(X'5AFC72696368' AS TEXT))"
        )  # latin-1 bytes
    conn.close()
    report = build_database(DatabaseRef(db_id="dirty", path=str(path)), settings)
    assert report.status == "built"
    assert report.counts["values"] == 1 and report.counts["skipped_values:not UTF-8"] == 1
    assert [
        h.value for h in CellRetriever(settings.root).search("dirty", "zurich", mode="bm25")
    ] == ["Zürich"]


def test_database_modified_during_build_is_discarded(zoo_db, settings, monkeypatch):
    build_database(zoo_db, settings)
    live = VersionedStore(settings.root, "databases", "zoo").current()
    original = build_module.extract_cell_values

    def extract_while_someone_writes(*args, **kwargs):
        _insert(zoo_db, "INSERT INTO keeper VALUES (9, 'Late Writer', NULL, 'K-9')")
        return original(*args, **kwargs)

    monkeypatch.setattr(build_module, "extract_cell_values", extract_while_someone_writes)
    report = build_database(zoo_db, settings.model_copy(update={"force": True}))
    assert report.status == "failed" and "changed during the build" in report.reason
    store = VersionedStore(settings.root, "databases", "zoo")
    assert store.current() == live  # the previous index is still the live one ...
    assert [p.name for p in store.base.iterdir() if p.is_dir()] == [
        live.version
    ]  # ... and nothing half-built remains
    monkeypatch.setattr(build_module, "extract_cell_values", original)
    assert build_database(zoo_db, settings).status == "built"  # a later run picks the change up


def test_concurrent_builds_of_one_database_build_once(zoo_db, settings):
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(lambda _: build_database(zoo_db, settings), range(2)))
    assert sorted(r.status for r in reports) == ["built", "unchanged"]
    store = VersionedStore(settings.root, "databases", "zoo")
    assert len([p for p in store.base.iterdir() if p.is_dir()]) == 1


def test_published_schema_view_is_the_introspected_one(zoo_db, settings):
    build_database(zoo_db, settings)
    assert load_schema_view(settings.root, "zoo") == introspect(zoo_db, settings.sample_values)
    with pytest.raises(IndexNotBuilt):
        load_schema_view(settings.root, "never_built")


def test_duckdb_nested_sub_fields_are_indexed(nested_duckdb, settings):
    report = build_database(nested_duckdb, settings)
    assert report.status == "built"
    retriever = CellRetriever(settings.root)
    (hit,) = retriever.search("tickets", "payment outage", k=1, mode="bm25")
    assert (hit.table, hit.column, hit.value) == ("tickets", "links.target", "Payment outage")
    (stage,) = retriever.search("tickets", "resolved", k=1, mode="bm25")
    assert stage.column == "meta.stage"
    assert retriever.search("tickets", "u1", k=5, mode="bm25") == []  # meta.owner_id is id-like


def test_a_postgres_database_builds_and_rebuilds_when_its_tables_are_written(postgres, settings):
    typed = postgres.ref("typed")
    first = build_database(typed, settings)
    assert first.status == "built", first.reason
    hits = CellRetriever(settings.root).search("typed", "Ben Ortiz", k=1, mode="bm25")
    assert [(h.table, h.column, h.value) for h in hits] == [("members", "full_name", "Ben Ortiz")]
    assert build_database(typed, settings).status == "unchanged"
    with postgres.admin("typed") as conn:  # a write, undone: the counters still move
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("INSERT INTO billing.invoices VALUES (101, 11, false)")
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("DELETE FROM billing.invoices WHERE invoice_id = 101")
    assert build_database(typed, settings).status == "built"
