"""The SQLite engine on its own, with the guard bypassed: read-only must hold anyway."""

import sqlite3
import time
from pathlib import Path

import pytest

from pipelines.sandbox import DatabaseUnavailable, QueryTimeout, ReadOnlyViolation, SandboxError
from pipelines.sandbox.sqlite import SQLiteEngine, connect


def _singer_rows(path: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT * FROM singer ORDER BY id").fetchall()
    finally:
        conn.close()


def test_reads_rows_and_columns(sqlite_ref):
    engine = SQLiteEngine(sqlite_ref.path)
    result = engine.run(
        "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age",
        timeout_s=5,
        row_cap=100,
    )
    engine.close()
    assert result.columns == ("name", "age")
    assert result.rows == (("Tribal King", 25), ("Justin Brown", 29), ("Rose White", 41))
    assert not result.truncated


def test_row_cap_truncates(sqlite_ref):
    engine = SQLiteEngine(sqlite_ref.path)
    result = engine.run("SELECT n FROM numbers", timeout_s=5, row_cap=7)
    exact = engine.run("SELECT n FROM numbers LIMIT 7", timeout_s=5, row_cap=7)
    engine.close()
    assert len(result.rows) == 7 and result.truncated
    assert len(exact.rows) == 7 and not exact.truncated


def test_engine_alone_stays_read_only(hostile_sqlite, sqlite_ref, take_snapshot):
    before, rows_before = take_snapshot(sqlite_ref), _singer_rows(sqlite_ref.path)
    engine = SQLiteEngine(sqlite_ref.path)
    sql = hostile_sqlite.render(str(Path(sqlite_ref.path).parent))
    try:
        if hostile_sqlite.writes:
            with pytest.raises(SandboxError):
                engine.run(sql, timeout_s=5, row_cap=10)
        else:
            try:
                engine.run(sql, timeout_s=5, row_cap=10)
            except SandboxError:
                pass  # refused or failed: either way nothing may change
    finally:
        engine.close()
    assert take_snapshot(sqlite_ref) == before
    assert _singer_rows(sqlite_ref.path) == rows_before


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO singer (id, name) VALUES (99, 'Mallory')",
        "ATTACH DATABASE ':memory:' AS scratch",
        "PRAGMA query_only = OFF",
        "SELECT load_extension('evil')",
    ],
)
def test_engine_refusals_are_read_only_violations(sqlite_ref, sql):
    engine = SQLiteEngine(sqlite_ref.path)
    with pytest.raises(ReadOnlyViolation):
        engine.run(sql, timeout_s=5, row_cap=10)
    engine.close()


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d",
    ],
)
def test_timeout_interrupts_the_engine(sqlite_ref, sql):
    engine = SQLiteEngine(sqlite_ref.path)
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        engine.run(sql, timeout_s=0.5, row_cap=10)
    assert time.monotonic() - started < 0.5 + 1.0
    # The deadline is per query: the next one runs normally.
    assert engine.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)
    engine.close()


def test_missing_file_is_unavailable_and_not_created(tmp_path):
    path = tmp_path / "missing.sqlite"
    with pytest.raises(DatabaseUnavailable, match="no such file"):
        SQLiteEngine(str(path))
    assert not path.exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "empty file"), (b"this is not a database\n" * 100, "not a readable SQLite database")],
)
def test_non_database_file_is_unavailable(tmp_path, content, reason):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    with pytest.raises(DatabaseUnavailable, match=reason):
        SQLiteEngine(str(path))
    assert path.read_bytes() == content


def test_duckdb_file_is_not_a_sqlite_database(duckdb_ref):
    with pytest.raises(DatabaseUnavailable):
        SQLiteEngine(duckdb_ref.path)


def test_directory_is_unavailable(tmp_path):
    with pytest.raises(DatabaseUnavailable, match="not a regular file"):
        SQLiteEngine(str(tmp_path))


def test_path_with_uri_characters_opens(tmp_path, sqlite_ref):
    odd = tmp_path / "a b?c#d%20.sqlite"
    odd.write_bytes(Path(sqlite_ref.path).read_bytes())
    engine = SQLiteEngine(str(odd))
    assert engine.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)
    engine.close()


def test_invalid_utf8_text_is_replaced_not_fatal(tmp_path):
    path = tmp_path / "latin1.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (s TEXT)")
    conn.execute("INSERT INTO t VALUES (CAST(X'436166E9' AS TEXT))")  # 'Café' in Latin-1
    conn.commit()
    conn.close()
    engine = SQLiteEngine(str(path))
    assert engine.run("SELECT s FROM t", timeout_s=5, row_cap=10).rows == (("Caf\ufffd",),)
    engine.close()


def test_connect_readonly_allows_introspection_but_not_writes(sqlite_ref, take_snapshot):
    before = take_snapshot(sqlite_ref)
    conn = connect(sqlite_ref.path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(singer)").fetchall()]
    assert columns == ["id", "name", "country", "age", "rating", "joined"]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM singer")
    conn.close()
    assert take_snapshot(sqlite_ref) == before
