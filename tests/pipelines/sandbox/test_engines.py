"""Each engine on its own, with the guard bypassed: read-only must hold anyway.

``engine`` runs a test once per engine, over the same small database (``conftest.py``) in that
engine's format; ``@pytest.mark.parametrize("engine", [...], indirect=True)`` keeps a test to
the engine whose behaviour it is.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import DatabaseUnavailable, QueryTimeout, ReadOnlyViolation, SandboxError
from pipelines.sandbox import duckdb as duckdb_engine
from pipelines.sandbox import sqlite as sqlite_engine
from pipelines.sandbox.duckdb import DuckDBEngine
from pipelines.sandbox.sqlite import SQLiteEngine

SINGER_COLUMNS = ["id", "name", "country", "age", "rating", "joined"]
ONLY_DUCKDB_COLUMNS = ["active", "photo", "tags", "seen"]


@dataclass(frozen=True)
class EngineCase:
    name: str  # the dialect
    label: str  # as the engine's messages name it
    engine_class: type[SQLiteEngine] | type[DuckDBEngine]
    connect: Callable[[str], Any]  # the module's plain read-only connection
    write_error: type[Exception]  # what that connection raises on a write
    ref: DatabaseRef
    other: DatabaseRef  # the other engine's file of the same tables

    @contextmanager
    def opened(self, path: str | None = None) -> Iterator[SQLiteEngine | DuckDBEngine]:
        engine = self.engine_class(path or self.ref.path)
        try:
            yield engine
        finally:
            engine.close()

    def singer_rows(self) -> list[tuple]:
        conn = self.connect(self.ref.path)
        try:
            return conn.execute("SELECT * FROM singer ORDER BY id").fetchall()
        finally:
            conn.close()


_ENGINES = {
    "sqlite": ("SQLite", SQLiteEngine, sqlite_engine.connect, sqlite3.OperationalError),
    "duckdb": ("DuckDB", DuckDBEngine, duckdb_engine.connect, duckdb.Error),
}


def engine_case(request: pytest.FixtureRequest, name: str) -> EngineCase:
    other = "duckdb" if name == "sqlite" else "sqlite"
    return EngineCase(
        name,
        *_ENGINES[name],
        ref=request.getfixturevalue(f"{name}_ref"),
        other=request.getfixturevalue(f"{other}_ref"),
    )


@pytest.fixture(params=sorted(_ENGINES))
def engine(request: pytest.FixtureRequest) -> EngineCase:
    return engine_case(request, request.param)


def test_reads_rows_and_columns(engine):
    with engine.opened() as running:
        result = running.run(
            "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age",
            timeout_s=5,
            row_cap=100,
        )
    assert result.columns == ("name", "age")
    assert result.rows == (("Tribal King", 25), ("Justin Brown", 29), ("Rose White", 41))
    assert not result.truncated


@pytest.mark.parametrize("engine", ["duckdb"], indirect=True)
def test_reads_typed_values(engine):
    with engine.opened() as running:
        result = running.run(
            "SELECT name, rating, joined, active, photo, tags FROM singer WHERE id = 2",
            timeout_s=5,
            row_cap=10,
        )
    assert result.columns == ("name", "rating", "joined", "active", "photo", "tags")
    assert result.rows == (
        ("Timbaland  ", Decimal("3.250"), dt.date(2016, 11, 20), True, b"\x02\xff", ["pop", "t2"]),
    )


def test_row_cap_truncates(engine):
    with engine.opened() as running:
        result = running.run("SELECT n FROM numbers", timeout_s=5, row_cap=7)
        exact = running.run("SELECT n FROM numbers LIMIT 7", timeout_s=5, row_cap=7)
    assert len(result.rows) == 7 and result.truncated
    assert len(exact.rows) == 7 and not exact.truncated


def test_row_cap_truncates_a_streamed_cross_join(engine):
    with engine.opened() as running:
        started = time.monotonic()
        result = running.run(
            "SELECT a.n, b.n FROM numbers a, numbers b, numbers c", timeout_s=10, row_cap=50
        )
        elapsed = time.monotonic() - started
    assert len(result.rows) == 50 and result.truncated
    assert elapsed < 5  # streamed: 8e9 rows are never materialised


def test_engine_alone_stays_read_only(hostile, request, take_snapshot):
    case = engine_case(request, hostile.dialect)
    # file bytes and folder listing, and the rows as the engine reads them
    before, rows_before = take_snapshot(case.ref), case.singer_rows()
    sql = hostile.render(str(Path(case.ref.path).parent))
    with case.opened() as running:
        if hostile.writes:
            with pytest.raises(SandboxError):
                running.run(sql, timeout_s=5, row_cap=10)
        else:
            try:
                running.run(sql, timeout_s=5, row_cap=10)
            except SandboxError:
                pass  # refused or failed: either way nothing may change
    assert take_snapshot(case.ref) == before
    assert case.singer_rows() == rows_before


@pytest.mark.parametrize(
    ("engine", "sql"),
    [
        *(
            (name, sql)
            for name in ("sqlite", "duckdb")
            for sql in (
                "INSERT INTO singer (id, name) VALUES (99, 'Mallory')",
                "DELETE FROM singer",
            )
        ),
        ("sqlite", "ATTACH DATABASE ':memory:' AS scratch"),
        ("sqlite", "PRAGMA query_only = OFF"),
        ("sqlite", "SELECT load_extension('evil')"),
        ("duckdb", "SELECT * FROM read_csv('/etc/passwd')"),
        ("duckdb", "COPY singer TO '/tmp/sandbox-should-not-exist.csv'"),
        ("duckdb", "SET enable_external_access = true"),
        ("duckdb", "LOAD httpfs"),
    ],
    indirect=["engine"],
)
def test_engine_refusals_are_read_only_violations(engine, sql):
    with engine.opened() as running, pytest.raises(ReadOnlyViolation):
        running.run(sql, timeout_s=5, row_cap=10)
    assert not Path("/tmp/sandbox-should-not-exist.csv").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d",
    ],
)
def test_timeout_interrupts_the_engine(engine, sql):
    with engine.opened() as running:
        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            running.run(sql, timeout_s=0.5, row_cap=10)
        assert time.monotonic() - started < 0.5 + 1.0
        # The deadline is per query: the next one runs normally.
        assert running.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)


def test_a_deadline_racing_the_end_of_its_query_never_hits_the_next_one(engine):
    with engine.opened() as running:
        for _ in range(30):
            try:  # a deadline about as long as the query: it fires before, during or after the end
                running.run("SELECT sum(n) FROM numbers", timeout_s=0.002, row_cap=1)
            except QueryTimeout:
                pass
            after = running.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=1)
            assert after.rows == ((6,),)


def test_missing_file_is_unavailable_and_not_created(engine, tmp_path):
    with pytest.raises(DatabaseUnavailable, match="no such file"):
        engine.engine_class(str(tmp_path / f"missing.{engine.name}"))
    assert list(tmp_path.iterdir()) == []


JUNK = b"this is not a database\n"


@pytest.mark.parametrize(
    "content",
    [b"", JUNK * 100, JUNK * 300],  # empty; shorter and longer than a DuckDB header block
    ids=["empty", "short_junk", "long_junk"],
)
def test_non_database_file_is_unavailable(engine, tmp_path, content):
    path = tmp_path / f"bad.{engine.name}"
    path.write_bytes(content)
    reason = "empty file" if not content else f"not a readable {engine.label} database"
    with pytest.raises(DatabaseUnavailable, match=reason):
        engine.engine_class(str(path))
    assert path.read_bytes() == content


def test_the_other_engines_file_is_unavailable(engine, tmp_path):
    copy = tmp_path / Path(engine.other.path).name  # a copy: the fixture stays untouched
    shutil.copy(engine.other.path, copy)
    with pytest.raises(DatabaseUnavailable):
        engine.engine_class(str(copy))


@pytest.mark.parametrize("engine", ["duckdb"], indirect=True)
def test_truncated_database_is_unavailable(engine, tmp_path):
    path = tmp_path / "cut.duckdb"
    path.write_bytes(Path(engine.ref.path).read_bytes()[:5000])
    with pytest.raises(DatabaseUnavailable):
        engine.engine_class(str(path))


def test_directory_is_unavailable(engine, tmp_path):
    with pytest.raises(DatabaseUnavailable, match="not a regular file"):
        engine.engine_class(str(tmp_path))


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # SQLite opens a file: URI
def test_path_with_uri_characters_opens(engine, tmp_path):
    odd = tmp_path / f"a b?c#d%20.{engine.name}"
    odd.write_bytes(Path(engine.ref.path).read_bytes())
    with engine.opened(str(odd)) as running:
        assert running.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_invalid_utf8_text_is_replaced_not_fatal(engine, tmp_path):
    path = tmp_path / "latin1.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (s TEXT)")
    conn.execute("INSERT INTO t VALUES (CAST(X'436166E9' AS TEXT))")  # 'Café' in Latin-1
    conn.commit()
    conn.close()
    with engine.opened(str(path)) as running:
        assert running.run("SELECT s FROM t", timeout_s=5, row_cap=10).rows == (("Caf\ufffd",),)


def test_connect_readonly_allows_introspection_but_not_writes(engine, take_snapshot):
    before = take_snapshot(engine.ref)
    conn = engine.connect(engine.ref.path)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info('singer')").fetchall()]
        extra = ONLY_DUCKDB_COLUMNS if engine.name == "duckdb" else []
        assert columns == SINGER_COLUMNS + extra
        with pytest.raises(engine.write_error, match="read-?only"):
            conn.execute("DELETE FROM singer")
    finally:
        conn.close()
    assert take_snapshot(engine.ref) == before
