from __future__ import annotations

import sqlite3
from decimal import Decimal

import psycopg
import pytest
import sqlglot

from pipelines.indexing.examples.dialect import translated, translated_calls
from pipelines.indexing.examples.own_examples import example_files, own_examples_of


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT strftime('%w', paid_date) FROM claims",
            "SELECT CAST(CAST(EXTRACT(DOW FROM CAST(paid_date AS TIMESTAMP)) AS INT) AS TEXT) "
            "FROM claims",
        ),
        (
            "SELECT julianday(paid_date) - julianday(received_date) FROM claims",
            "SELECT (EXTRACT(EPOCH FROM CAST(paid_date AS TIMESTAMP)) / 86400.0 + 2440587.5) - "
            "(EXTRACT(EPOCH FROM CAST(received_date AS TIMESTAMP)) / 86400.0 + 2440587.5) "
            "FROM claims",
        ),
        (
            "SELECT IFNULL(plan_name, 'none') FROM plans WHERE strftime('%Y', start_date) = '2024'",
            "SELECT COALESCE(plan_name, 'none') FROM plans "
            "WHERE TO_CHAR(CAST(start_date AS TIMESTAMP), 'YYYY') = '2024'",
        ),
    ],
)
def test_sqlite_is_written_for_postgres(sql: str, expected: str) -> None:
    assert translated(sql, "sqlite", "postgres") == expected


def test_the_same_dialect_is_left_as_written_and_unreadable_sql_raises() -> None:
    odd = "select  strftime('%w', d)   from t"
    assert translated(odd, "sqlite", "sqlite") == odd
    with pytest.raises(sqlglot.errors.ParseError):
        translated("SELECT FROM WHERE (", "sqlite", "postgres")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # each call translated, the prose and the operators between calls kept
            "Weekday: strftime('%w', paid_date), '0' = Sunday.",
            "Weekday: CAST(CAST(EXTRACT(DOW FROM CAST(paid_date AS TIMESTAMP)) AS INT) AS TEXT), "
            "'0' = Sunday.",
        ),
        (  # a call inside a call, a parenthesis inside a string
            "Days = round(julianday(a) - julianday(b)) ('(' is literal)",
            "Days = ROUND((EXTRACT(EPOCH FROM CAST(a AS TIMESTAMP)) / 86400.0 + 2440587.5) - "
            "(EXTRACT(EPOCH FROM CAST(b AS TIMESTAMP)) / 86400.0 + 2440587.5)) ('(' is literal)",
        ),
        # calls the dialects write alike (up to case), prose that looks like one, an unclosed one
        (
            "Share = count(x) / COUNT(*), per plan (HMO or PPO)",
            "Share = count(x) / COUNT(*), per plan (HMO or PPO)",
        ),
        ("a ratio(unclosed", "a ratio(unclosed"),
        ("", ""),
    ],
)
def test_the_sql_in_evidence_is_shown_in_the_servers_dialect(text: str, expected: str) -> None:
    assert translated_calls(text, "sqlite", "postgres") == expected
    assert translated_calls(text, "sqlite", "sqlite") == text


def rounded(rows: list[tuple]) -> list[tuple]:
    return sorted(
        (tuple(round(float(v), 6) if isinstance(v, float | Decimal) else v for v in row))
        for row in rows
    )


def test_the_claims_examples_answer_on_the_server_copy_as_on_the_file(claims_pg) -> None:
    """Every solved example the claims benchmark ships, shown for its PostgreSQL copy, returns
    the rows its SQLite original returns on the file."""
    source, server = claims_pg
    beside = next(f for f in example_files(source) if f.is_file())  # says it is SQLite's
    written = own_examples_of(source)
    on_server = own_examples_of(server.model_copy(update={"examples": str(beside)}))
    assert len(on_server) == len(written) >= 20
    assert any("TO_CHAR" in e.sql for e in on_server)
    with (
        sqlite3.connect(f"file:{source.path}?mode=ro", uri=True) as file,
        psycopg.connect(server.path, autocommit=True) as conn,
    ):
        for original, shown in zip(written, on_server, strict=True):
            assert shown.question == original.question
            expected = rounded(file.execute(original.sql).fetchall())
            assert rounded(conn.execute(shown.sql).fetchall()) == expected, shown.sql
