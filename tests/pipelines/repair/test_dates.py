"""SqliteDates: SQLite's date calls a PostgreSQL server refuses, rewritten for the server; on the
claims copy, the rewrite gives what the SQLite file gives for the SQLite SQL."""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import psycopg
import pytest

from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import load_taxonomy
from pipelines.contracts import Dialect, SchemaView
from pipelines.repair.base import RepairContext
from pipelines.repair.dates import SqliteDates


def context(error: str, dialect: Dialect = "postgres") -> RepairContext:
    index = SchemaIndex.from_view(SchemaView(db_id="claims", dialect=dialect, tables=()))
    return RepairContext(index=index, taxonomy=load_taxonomy(), error=error)


REFUSED = "function julianday(text) does not exist"


@pytest.mark.parametrize(
    ("sql", "rewritten"),
    [
        (
            "SELECT julianday(b) - julianday(a) FROM t",
            "SELECT (EXTRACT(EPOCH FROM CAST(b AS TIMESTAMP)) / 86400.0 + 2440587.5)"
            " - (EXTRACT(EPOCH FROM CAST(a AS TIMESTAMP)) / 86400.0 + 2440587.5) FROM t",
        ),
        (
            "SELECT strftime('%Y-%m-%d %H:%M', d) FROM t",
            "SELECT TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY-MM-DD HH24:MI') FROM t",
        ),
        (
            "SELECT COUNT(*) FROM t GROUP BY strftime('%w', d)",
            "SELECT COUNT(*) FROM t GROUP BY CAST(CAST(EXTRACT(DOW FROM CAST(d AS TIMESTAMP)) AS INT) AS TEXT)",
        ),
        (
            "SELECT julianday(strftime('%Y-%m-%d', d)) FROM t",
            "SELECT (EXTRACT(EPOCH FROM CAST(TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY-MM-DD') AS"
            " TIMESTAMP)) / 86400.0 + 2440587.5) FROM t",
        ),
        (
            "SELECT 1 FROM t WHERE EXTRACT(YEAR FROM t.d) = 2024",
            "SELECT 1 FROM t WHERE EXTRACT(YEAR FROM CAST(t.d AS TIMESTAMP)) = 2024",
        ),
        (  # PostgreSQL's own TO_CHAR, on a date kept as text
            "SELECT 1 FROM t WHERE TO_CHAR(t.d, 'YYYY') = '2024'",
            "SELECT 1 FROM t WHERE TO_CHAR(CAST(t.d AS TIMESTAMP), 'YYYY') = '2024'",
        ),
    ],
)
def test_sqlite_date_calls_are_written_for_the_server(sql: str, rewritten: str) -> None:
    rewrite = SqliteDates().rewrite(sql, context(REFUSED))
    assert rewrite is not None and rewrite.after == rewritten


@pytest.mark.parametrize(
    ("sql", "ctx"),
    [
        ("SELECT julianday(d) FROM t", context(REFUSED, dialect="sqlite")),  # SQLite has it
        ("SELECT julianday(d) FROM t", context('column "d" does not exist')),  # another error
        # no exact TO_CHAR pattern: week of year, a letter, a modifier
        ("SELECT strftime('%W', d) FROM t", context("function strftime(unknown, text)")),
        ("SELECT strftime('%Y T', d) FROM t", context("function strftime(unknown, text)")),
        ("SELECT strftime('%Y', d, '+1 day') FROM t", context("function strftime(unknown, text)")),
        # TO_CHAR of what is already a timestamp
        (
            "SELECT TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY') FROM t",
            context("function to_char(text, unknown) does not exist"),
        ),
        # EXTRACT of an expression that is not a column or a string
        (
            "SELECT EXTRACT(DAY FROM b - a) FROM t",
            context("function pg_catalog.extract(unknown, text)"),
        ),
    ],
)
def test_anything_else_is_left_as_written(sql: str, ctx: RepairContext) -> None:
    assert SqliteDates().rewrite(sql, ctx) is None


# Answers the 1.5B wrote for the claims benchmark, refused by the server, each beside the SQL
# whose rows on the SQLite file are the right ones: the same SQL where the 1.5B wrote SQLite's
# date calls, a strftime where it wrote TO_CHAR of a date the copy keeps as ISO text.
TO_CHAR_ON_TEXT = (
    "SELECT termination_reason, COUNT(*) FROM member_enrollments "
    "WHERE TO_CHAR(end_date, 'YYYY') = '2024' GROUP BY termination_reason"
)
REFUSED_BY_THE_SERVER = [
    (sql, sql)
    for sql in (
        "SELECT claim_type, AVG(julianday(received_date) - julianday(service_end_date)) AS lag "
        "FROM claims GROUP BY claim_type",
        "SELECT strftime('%w', paid_date) AS day_of_week, COUNT(*) AS num_claims FROM claims "
        "WHERE paid_date IS NOT NULL GROUP BY strftime('%w', paid_date) ORDER BY day_of_week",
        "SELECT strftime('%Y-%m', service_start_date) AS month, COUNT(*) FROM claims "
        "GROUP BY strftime('%Y-%m', service_start_date)",
    )
] + [
    (
        TO_CHAR_ON_TEXT,
        TO_CHAR_ON_TEXT.replace("TO_CHAR(end_date, 'YYYY')", "strftime('%Y', end_date)"),
    )
]


def rounded(rows: list[tuple]) -> list[tuple]:
    return sorted(
        tuple(round(float(v), 6) if isinstance(v, float | Decimal) else v for v in row)
        for row in rows
    )


@pytest.mark.parametrize(("on_server", "on_file"), REFUSED_BY_THE_SERVER)
def test_on_the_claims_copy_the_rewrite_answers_as_the_file_does(
    claims_pg, on_server: str, on_file: str
) -> None:
    source, server = claims_pg
    with sqlite3.connect(f"file:{source.path}?mode=ro", uri=True) as file:
        expected = rounded(file.execute(on_file).fetchall())
    assert expected
    with psycopg.connect(server.path, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedFunction) as refused:
            conn.execute(on_server)
        rewrite = SqliteDates().rewrite(on_server, context(str(refused.value)))
        assert rewrite is not None
        assert rounded(conn.execute(rewrite.after).fetchall()) == expected
