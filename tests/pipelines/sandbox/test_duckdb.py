"""The DuckDB engine on its own, with the guard bypassed: read-only must hold anyway."""

import datetime as dt
import shutil
import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.sandbox import DatabaseUnavailable, QueryTimeout, ReadOnlyViolation, SandboxError
from pipelines.sandbox.duckdb import DuckDBEngine, connect


def test_reads_typed_values(duckdb_ref):
    engine = DuckDBEngine(duckdb_ref.path)
    result = engine.run(
        "SELECT name, rating, joined, active, photo, tags FROM singer WHERE id = 2",
        timeout_s=5,
        row_cap=10,
    )
    engine.close()
    assert result.columns == ("name", "rating", "joined", "active", "photo", "tags")
    assert result.rows == (
        ("Timbaland  ", Decimal("3.250"), dt.date(2016, 11, 20), True, b"\x02\xff", ["pop", "t2"]),
    )


def test_row_cap_truncates_a_streamed_cross_join(duckdb_ref):
    engine = DuckDBEngine(duckdb_ref.path)
    started = time.monotonic()
    result = engine.run(
        "SELECT a.n, b.n FROM numbers a, numbers b, numbers c", timeout_s=10, row_cap=50
    )
    engine.close()
    assert len(result.rows) == 50 and result.truncated
    assert time.monotonic() - started < 5  # streamed: 8e9 rows are never materialised


def test_engine_alone_stays_read_only(hostile_duckdb, duckdb_ref, take_snapshot):
    before = take_snapshot(
        duckdb_ref
    )  # file bytes and folder listing: stronger than re-reading rows
    engine = DuckDBEngine(duckdb_ref.path)
    sql = hostile_duckdb.render(str(Path(duckdb_ref.path).parent))
    try:
        if hostile_duckdb.writes:
            with pytest.raises(SandboxError):
                engine.run(sql, timeout_s=5, row_cap=10)
        else:
            try:
                engine.run(sql, timeout_s=5, row_cap=10)
            except SandboxError:
                pass  # refused or failed: either way nothing may change
    finally:
        engine.close()
    assert take_snapshot(duckdb_ref) == before


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM singer",
        "SELECT * FROM read_csv('/etc/passwd')",
        "COPY singer TO '/tmp/sandbox-should-not-exist.csv'",
        "SET enable_external_access = true",
        "LOAD httpfs",
    ],
)
def test_engine_refusals_are_read_only_violations(duckdb_ref, sql):
    engine = DuckDBEngine(duckdb_ref.path)
    with pytest.raises(ReadOnlyViolation):
        engine.run(sql, timeout_s=5, row_cap=10)
    engine.close()
    assert not Path("/tmp/sandbox-should-not-exist.csv").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d",
    ],
)
def test_timeout_interrupts_the_engine(duckdb_ref, sql):
    engine = DuckDBEngine(duckdb_ref.path)
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        engine.run(sql, timeout_s=0.5, row_cap=10)
    assert time.monotonic() - started < 0.5 + 1.0
    # A late watchdog never interrupts the next query.
    assert engine.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)
    engine.close()


def test_a_watchdog_racing_the_end_of_its_query_never_hits_the_next_one(duckdb_ref):
    engine = DuckDBEngine(duckdb_ref.path)
    for _ in range(30):
        try:  # a deadline about as long as the query: it fires before, during or after the end
            engine.run("SELECT sum(n) FROM numbers", timeout_s=0.002, row_cap=1)
        except QueryTimeout:
            pass
        assert engine.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=1).rows == ((6,),)
    engine.close()


def test_missing_file_is_unavailable_and_not_created(tmp_path):
    path = tmp_path / "missing.duckdb"
    with pytest.raises(DatabaseUnavailable, match="no such file"):
        DuckDBEngine(str(path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "empty file"), (b"this is not a database\n" * 300, "not a readable DuckDB database")],
)
def test_non_database_file_is_unavailable(tmp_path, content, reason):
    path = tmp_path / "bad.duckdb"
    path.write_bytes(content)
    with pytest.raises(DatabaseUnavailable, match=reason):
        DuckDBEngine(str(path))
    assert path.read_bytes() == content


def test_truncated_database_is_unavailable(tmp_path, duckdb_ref):
    path = tmp_path / "cut.duckdb"
    path.write_bytes(Path(duckdb_ref.path).read_bytes()[:5000])
    with pytest.raises(DatabaseUnavailable):
        DuckDBEngine(str(path))


def test_sqlite_file_is_not_a_duckdb_database(sqlite_ref, tmp_path):
    copy = tmp_path / "concert.sqlite"
    shutil.copy(sqlite_ref.path, copy)
    with pytest.raises(DatabaseUnavailable):
        DuckDBEngine(str(copy))


def test_connect_readonly_allows_introspection_but_not_writes(duckdb_ref, take_snapshot):
    before = take_snapshot(duckdb_ref)
    conn = connect(duckdb_ref.path)
    columns = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'singer' ORDER BY ordinal_position"
    ).fetchall()
    assert [c[0] for c in columns][:3] == ["id", "name", "country"]
    with pytest.raises(duckdb.Error, match="read-only"):
        conn.execute("DELETE FROM singer")
    conn.close()
    assert take_snapshot(duckdb_ref) == before
