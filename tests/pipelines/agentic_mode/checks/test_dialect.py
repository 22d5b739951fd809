"""DialectFunctions: other dialects' functions translated into the target's, each rewrite
executed on the real engine and compared with the answer the function means."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.agentic_mode.checks import DialectFunctions
from tests.pipelines.agentic_mode.conftest import rows

STAGE = DialectFunctions()


@pytest.mark.parametrize(
    ("sql", "after", "answer"),
    [
        (
            "SELECT IFF(reopen_count > 0, 'again', 'once') AS r FROM tickets",
            "SELECT CASE WHEN reopen_count > 0 THEN 'again' ELSE 'once' END AS r FROM tickets",
            [("again",), ("once",), ("once",)],
        ),
        (
            "SELECT NVL(closed, opened) AS d FROM tickets WHERE ticket_id = 1",
            "SELECT COALESCE(closed, opened) AS d FROM tickets WHERE ticket_id = 1",
            None,
        ),
        (  # a quoted column stays a column, not a string
            "SELECT sum(IFF(\"stage\" = 'queued', 1, 0)) AS n FROM tickets",
            "SELECT SUM(CASE WHEN \"stage\" = 'queued' THEN 1 ELSE 0 END) AS n FROM tickets",
            [(1,)],
        ),
        (
            "SELECT DATEADD(day, 7, opened) AS d FROM tickets WHERE ticket_id = 1",
            "SELECT opened + INTERVAL '7' DAY AS d FROM tickets WHERE ticket_id = 1",
            None,
        ),
        (  # nested foreign calls are translated as one
            "SELECT IFF(NVL(reopen_count, 0) > 0, 1, 0) AS r FROM tickets WHERE ticket_id = 2",
            "SELECT CASE WHEN COALESCE(reopen_count, 0) > 0 THEN 1 ELSE 0 END AS r "
            "FROM tickets WHERE ticket_id = 2",
            [(1,)],
        ),
    ],
)
def test_duckdb_rewrites_run_and_mean_the_same(work_context, work_duckdb, sql, after, answer):
    rewrite = STAGE.rewrite(sql, work_context)
    assert rewrite is not None and rewrite.after == after
    _, found = rows(work_duckdb, rewrite.after)
    if answer is not None:
        assert found == answer


@pytest.mark.parametrize(
    ("sql", "answer"),
    [
        ("SELECT DATEDIFF('day', opened, closed) FROM tickets WHERE ticket_id = 3", [(10,)]),
        ("SELECT NVL(closed, 'open') FROM tickets WHERE ticket_id = 1", [("open",)]),
        (
            "SELECT IFF(reopen_count > 0, 'again', 'once') FROM tickets WHERE ticket_id = 2",
            [("again",)],
        ),
        ("SELECT GETDATE() IS NOT NULL", [(1,)]),
    ],
)
def test_sqlite_rewrites_run_and_mean_the_same(flat_context, flat_sqlite, sql, answer):
    rewrite = STAGE.rewrite(sql, flat_context)
    assert rewrite is not None
    assert rows(flat_sqlite, rewrite.after)[1] == answer


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT coalesce(closed, opened), strftime('%Y', opened), julianday(closed) FROM tickets",
        "SELECT YEAR(opened) FROM tickets",  # no source writes it for SQLite: the blocker's
        "SELECT FROM WHERE",  # does not parse: nothing to do
    ],
)
def test_nothing_to_translate_leaves_the_sql(flat_context, sql):
    assert STAGE.rewrite(sql, flat_context) is None


def test_the_sources_are_dialects_sqlglot_has():
    with pytest.raises(ValidationError, match="snowflak"):
        DialectFunctions(sources=("snowflak",))


def test_the_sources_are_a_setting(work_context):
    postgres_only = DialectFunctions(sources=("postgres",))
    assert (
        postgres_only.rewrite("SELECT IFF(stage = 'queued', 1, 0) FROM tickets", work_context)
        is None
    )
    rewrite = STAGE.rewrite("SELECT IFF(stage = 'queued', 1, 0) FROM tickets", work_context)
    assert rewrite.detail == "IFF (snowflake) → CASE WHEN stage = 'queued' THEN 1 ELSE 0 END"
