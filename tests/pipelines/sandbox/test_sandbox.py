import asyncio
import shutil
import threading
import time
from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    Sandbox,
    SQLExecutionError,
    connect_readonly,
    result_hash,
)

RUNAWAY = {
    "recursive_cte": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "cross_join": "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d",
}
TIMEOUT_S = 0.5
MARGIN_S = 1.0  # thread start, interrupt delivery and a loaded 2-core machine


@pytest.fixture
def sandbox_under_test():
    with Sandbox(timeout_s=10, row_cap=100) as sandbox:
        yield sandbox


def test_rows_keep_engine_order_and_are_canonical(sandbox_under_test, db_ref):
    result = sandbox_under_test.execute(
        "SELECT name, rating FROM singer WHERE id IN (2, 1) ORDER BY id DESC", db_ref
    )
    assert result.ok and result.error_kind is None
    assert result.columns == ("name", "rating")
    assert result.rows == (
        ("Timbaland", 3.25),
        ("Joe Sharp", 4.5),
    )  # rstripped; Decimal -> float on DuckDB
    assert result.row_count == 2 and not result.truncated
    assert result.hash == result_hash(result.rows, n_columns=2)


def test_equivalent_queries_hash_equal_and_different_ones_differ(sandbox_under_test, db_ref):
    ascending = sandbox_under_test.execute("SELECT name FROM singer ORDER BY age", db_ref)
    descending = sandbox_under_test.execute("SELECT name FROM singer ORDER BY age DESC", db_ref)
    fewer = sandbox_under_test.execute("SELECT name FROM singer WHERE age > 30", db_ref)
    assert ascending.rows != descending.rows
    assert ascending.hash == descending.hash
    assert fewer.hash != ascending.hash


def test_both_engines_agree_on_the_same_answer(sandbox_under_test, sqlite_ref, duckdb_ref):
    sql = "SELECT country, count(*), avg(age) FROM singer GROUP BY country"
    on_sqlite = sandbox_under_test.execute(sql, sqlite_ref)
    on_duckdb = sandbox_under_test.execute(sql, duckdb_ref)
    assert on_sqlite.ok and on_duckdb.ok
    assert on_sqlite.hash == on_duckdb.hash


def test_refuses_hostile_and_database_is_unchanged(hostile, sqlite_ref, duckdb_ref, take_snapshot):
    db = {"sqlite": sqlite_ref, "duckdb": duckdb_ref}[hostile.dialect]
    before = take_snapshot(db)
    with Sandbox(timeout_s=5, row_cap=10) as sandbox:
        result = sandbox.execute(hostile.render(str(Path(db.path).parent)), db)
    assert result.error_kind == "read_only_violation", result.error
    assert result.error.startswith("read-only violation")
    assert result.hash.startswith("ERR:") and result.rows == ()
    assert take_snapshot(db) == before


def test_connection_that_saw_a_violation_is_discarded(sandbox_under_test, db_ref):
    assert sandbox_under_test.execute("SELECT count(*) FROM singer", db_ref).rows == ((6,),)
    assert sandbox_under_test.open_connections == 1
    assert (
        sandbox_under_test.execute("DELETE FROM singer", db_ref).error_kind == "read_only_violation"
    )
    assert sandbox_under_test.open_connections == 0
    assert sandbox_under_test.execute("SELECT count(*) FROM singer", db_ref).rows == ((6,),)
    assert sandbox_under_test.open_connections == 1


@pytest.mark.parametrize("kind", sorted(RUNAWAY))
def test_runaway_query_stops_at_the_timeout(sandbox_under_test, db_ref, kind):
    started = time.monotonic()
    result = sandbox_under_test.execute(RUNAWAY[kind], db_ref, timeout_s=TIMEOUT_S)
    elapsed = time.monotonic() - started
    assert result.error_kind == "timeout"
    assert TIMEOUT_S <= elapsed < TIMEOUT_S + MARGIN_S
    assert result.elapsed_ms >= TIMEOUT_S * 1000
    assert sandbox_under_test.open_connections == 0
    assert sandbox_under_test.execute("SELECT count(*) FROM singer", db_ref).rows == ((6,),)


def test_timeouts_hash_equal_whatever_the_query(sandbox_under_test, db_ref):
    first = sandbox_under_test.execute(RUNAWAY["recursive_cte"], db_ref, timeout_s=0.2)
    second = sandbox_under_test.execute(RUNAWAY["cross_join"], db_ref, timeout_s=0.2)
    assert first.hash == second.hash and first.hash.startswith("ERR:")


def test_row_cap_marks_the_result_truncated(db_ref):
    with Sandbox(timeout_s=10, row_cap=25) as sandbox:
        capped = sandbox.execute("SELECT n FROM numbers ORDER BY n", db_ref)
        exact = sandbox.execute("SELECT n FROM numbers ORDER BY n LIMIT 25", db_ref)
    assert capped.truncated and capped.row_count == 25
    assert capped.rows == tuple((n,) for n in range(25))
    assert not exact.truncated and exact.rows == capped.rows


def test_sql_error_is_a_result_and_keeps_the_connection(sandbox_under_test, db_ref):
    sandbox_under_test.execute("SELECT 1", db_ref)
    result = sandbox_under_test.execute("SELECT no_such_column FROM singer", db_ref)
    assert result.error_kind == "sql_error"
    assert "no_such_column" in result.error
    assert result.hash.startswith("ERR:")
    assert sandbox_under_test.open_connections == 1
    again = sandbox_under_test.execute("SELECT no_such_column FROM singer", db_ref)
    assert again.hash == result.hash


@pytest.mark.parametrize("sql", ["SELEC name FROM singer", "SELECT name FROM", ""])
def test_unparsable_sql_is_an_engine_sql_error(sandbox_under_test, db_ref, sql):
    result = sandbox_under_test.execute(sql, db_ref)
    assert result.error_kind == "sql_error"


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_missing_database_is_unavailable_and_not_created(sandbox_under_test, tmp_path, dialect):
    db = DatabaseRef(db_id="gone", path=str(tmp_path / f"gone.{dialect}"), dialect=dialect)
    result = sandbox_under_test.execute("SELECT 1", db)
    assert result.error_kind == "database_unavailable"
    assert "no such file" in result.error
    assert list(tmp_path.iterdir()) == []
    assert sandbox_under_test.open_connections == 0


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_corrupt_database_is_unavailable(sandbox_under_test, tmp_path, dialect):
    path = tmp_path / f"junk.{dialect}"
    path.write_bytes(b"definitely not a database\n" * 500)
    result = sandbox_under_test.execute(
        "SELECT 1", DatabaseRef(db_id="junk", path=str(path), dialect=dialect)
    )
    assert result.error_kind == "database_unavailable"
    assert "not a readable" in result.error


def test_database_unavailable_hash_ignores_the_path(sandbox_under_test, tmp_path):
    results = [
        sandbox_under_test.execute(
            "SELECT 1", DatabaseRef(db_id=name, path=str(tmp_path / name / "x.sqlite"))
        )
        for name in ("a", "b")
    ]
    assert results[0].error != results[1].error
    assert results[0].hash == results[1].hash


def test_execute_strict_raises_typed_errors(sandbox_under_test, sqlite_ref, tmp_path):
    assert sandbox_under_test.execute_strict("SELECT count(*) FROM singer", sqlite_ref).rows == (
        (6,),
    )
    with pytest.raises(ReadOnlyViolation) as violation:
        sandbox_under_test.execute_strict("DROP TABLE singer", sqlite_ref)
    assert violation.value.offender == "DROP"
    with pytest.raises(QueryTimeout):
        sandbox_under_test.execute_strict(RUNAWAY["recursive_cte"], sqlite_ref, timeout_s=0.2)
    with pytest.raises(SQLExecutionError):
        sandbox_under_test.execute_strict("SELECT nope FROM singer", sqlite_ref)
    with pytest.raises(DatabaseUnavailable):
        sandbox_under_test.execute_strict(
            "SELECT 1", DatabaseRef(db_id="x", path=str(tmp_path / "x.sqlite"))
        )


def test_engine_level_refusal_also_discards_the_connection(
    sandbox_under_test, sqlite_ref, monkeypatch
):
    # With the guard disabled, the engine's own read-only wall answers, as a violation.
    from sqlglot.errors import ParseError

    def unparsable(sql, dialect):
        raise ParseError("pretend sqlglot cannot parse this")

    monkeypatch.setattr("pipelines.sandbox.sandbox.check_read_only", unparsable)
    sandbox_under_test.execute("SELECT 1", sqlite_ref)
    result = sandbox_under_test.execute("DELETE FROM singer", sqlite_ref)
    assert result.error_kind == "read_only_violation"
    assert sandbox_under_test.open_connections == 0


@pytest.mark.parametrize(("timeout_s", "row_cap"), [(0, 10), (-1, 10), (1, 0)])
def test_bad_limits_are_value_errors(timeout_s, row_cap):
    with pytest.raises(ValueError):
        Sandbox(timeout_s=timeout_s, row_cap=row_cap)


def test_one_connection_per_thread_and_correct_results_under_concurrency(sqlite_ref, duckdb_ref):
    expected = {ref.dialect: ref for ref in (sqlite_ref, duckdb_ref)}
    failures: list[str] = []
    with Sandbox(timeout_s=10, row_cap=100) as sandbox:

        def worker(offset: int) -> None:
            for step in range(15):
                db = expected["sqlite" if (offset + step) % 2 else "duckdb"]
                result = sandbox.execute(
                    f"SELECT count(*) FROM numbers WHERE n < {offset * 10 + step}", db
                )
                if result.rows != ((offset * 10 + step,),):
                    failures.append(f"{db.dialect}: {result.error or result.rows}")

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert sandbox.open_connections == 4 * 2


async def test_aexecute_runs_concurrently_from_asyncio(sqlite_ref):
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        results = await asyncio.gather(
            *(sandbox.aexecute(f"SELECT {n} + count(*) FROM singer", sqlite_ref) for n in range(8))
        )
    assert [r.rows for r in results] == [((n + 6,),) for n in range(8)]


def test_connect_readonly_reads_each_dialect(db_ref, take_snapshot):
    before = take_snapshot(db_ref)
    conn = connect_readonly(db_ref)
    assert conn.execute("SELECT count(*) FROM singer").fetchall() == [(6,)]
    conn.close()
    assert take_snapshot(db_ref) == before


def test_connect_readonly_missing_file(tmp_path):
    with pytest.raises(DatabaseUnavailable):
        connect_readonly(DatabaseRef(db_id="x", path=str(tmp_path / "x.duckdb"), dialect="duckdb"))
    assert list(tmp_path.iterdir()) == []


def test_a_copied_database_gives_the_same_hashes(sandbox_under_test, sqlite_ref, tmp_path):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(sqlite_ref.path, copy)
    copy_ref = DatabaseRef(db_id="copy", path=str(copy))
    for sql in ("SELECT * FROM singer", "SELECT nope FROM singer"):
        assert (
            sandbox_under_test.execute(sql, sqlite_ref).hash
            == sandbox_under_test.execute(sql, copy_ref).hash
        )
