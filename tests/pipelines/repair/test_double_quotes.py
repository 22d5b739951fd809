"""DoubleQuotedStrings: SQLite's double-quoted string, refused as a column by DuckDB and by a
PostgreSQL server, read as the string, and the rewrite answers as the file does; a name that is a
column, or not a value, or SQLite, is left alone."""

from __future__ import annotations

import sqlite3

import duckdb
import psycopg
import pytest

from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import load_taxonomy
from pipelines.contracts import SchemaView
from pipelines.repair.base import RepairContext
from pipelines.repair.double_quotes import DoubleQuotedStrings
from pipelines.schema import introspect
from pipelines.strategies.adaptive_settings import AdaptiveScaling

STAGE = DoubleQuotedStrings()


def context(view: SchemaView, error: str) -> RepairContext:
    return RepairContext(index=SchemaIndex.from_view(view), taxonomy=load_taxonomy(), error=error)


@pytest.mark.parametrize(
    ("sql", "expected", "right"),
    [
        (
            'SELECT count(*) FROM tickets WHERE severity = "high"',
            "SELECT COUNT(*) FROM tickets WHERE severity = 'high'",
            "SELECT count(*) FROM tickets WHERE severity = 'high'",
        ),
        (  # in a list beside a string written right, and in <>
            'SELECT title FROM tickets WHERE stage IN ("queued", \'resolved\') AND severity <> "low"',
            "SELECT title FROM tickets WHERE stage IN ('queued', 'resolved') AND severity <> 'low'",
            "SELECT title FROM tickets WHERE stage IN ('queued', 'resolved') AND severity <> 'low'",
        ),
    ],
)
def test_duckdb_reads_a_double_quoted_string_as_the_string(work_duckdb, sql, expected, right):
    view = introspect(work_duckdb, 0)
    with duckdb.connect(work_duckdb.path, read_only=True) as conn:
        with pytest.raises(duckdb.BinderException) as refused:
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, context(view, str(refused.value)))
        assert rewrite is not None and rewrite.after == expected
        assert conn.execute(rewrite.after).fetchall() == conn.execute(right).fetchall()


def test_on_the_claims_copy_the_rewrite_answers_as_the_file_does(claims_pg):
    source, server = claims_pg
    sql = 'SELECT count(*) FROM members WHERE state = "OH"'
    with sqlite3.connect(f"file:{source.path}?mode=ro", uri=True) as file:
        expected = file.execute(sql).fetchall()  # SQLite reads "OH" as a string
    assert expected[0][0] > 0
    with psycopg.connect(server.path, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn) as refused:
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, context(introspect(server, 0), str(refused.value)))
        assert rewrite is not None and rewrite.detail == 'read as strings: "OH"'
        assert conn.execute(rewrite.after).fetchall() == expected


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        # a column of the schema, quoted: the refusal is about something else
        ('SELECT "title" FROM tickets WHERE "severity" = \'x\'', 'column "severity" not found'),
        # not a value: selected, or the tested side of IN
        ('SELECT "high" FROM tickets', 'Referenced column "high" not found'),
        ("SELECT 1 FROM tickets WHERE \"high\" IN ('a')", 'Referenced column "high" not found'),
        # the error names another column
        ('SELECT 1 FROM tickets WHERE severity = "high"', 'Referenced column "low" not found'),
    ],
)
def test_what_is_not_a_double_quoted_value_is_left_alone(work_duckdb, sql, error):
    assert STAGE.rewrite(sql, context(introspect(work_duckdb, 0), error)) is None


def test_sqlite_reads_them_itself(flat_sqlite):
    sql = 'SELECT 1 FROM tickets WHERE severity = "high"'
    view = introspect(flat_sqlite, 0)
    assert STAGE.rewrite(sql, context(view, 'column "high" does not exist')) is None


def test_the_adaptive_pipeline_runs_it_before_the_column_repair():
    repairs = list(AdaptiveScaling().repairs)
    assert repairs.index("double_quoted_strings") < repairs.index("columns")
