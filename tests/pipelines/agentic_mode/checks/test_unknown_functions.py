"""UnknownFunctions, and the engine probe it rests on: a name is a function exactly when the
engine runs it."""

from __future__ import annotations

from contextlib import closing

import pytest

from pipelines.agentic_mode.checks import UnknownFunctions
from pipelines.agentic_mode.functions import has_function
from pipelines.sandbox import connect_readonly
from pipelines.schema import introspect
from tests.pipelines.agentic_mode.conftest import context_for, findings_of, rows

STAGE = UnknownFunctions()

# (call, runs on SQLite, runs on DuckDB) over the flat and the work-item tickets
CALLS = [
    ("coalesce(closed, opened)", True, True),
    ("nullif(reopen_count, 0)", True, True),
    ("iif(reopen_count > 0, 1, 0)", True, False),
    ("if(reopen_count > 0, 1, 0)", False, True),
    ("julianday(opened)", True, False),
    ("date_trunc('month', opened)", False, True),
    ("year(opened)", False, True),
    ("group_concat(title)", True, True),
    ("string_agg(title, ',')", False, True),
    ("NVL(closed, opened)", False, False),
    ("IFF(reopen_count > 0, 1, 0)", False, False),
]


@pytest.mark.parametrize(("call", "on_sqlite", "on_duckdb"), CALLS)
def test_a_function_is_reported_exactly_when_the_engine_lacks_it(
    flat_context, flat_sqlite, work_context, work_duckdb, call, on_sqlite, on_duckdb
):
    sql = f"SELECT {call} FROM tickets"
    name = call.split("(")[0]
    for context, db, runs in (
        (flat_context, flat_sqlite, on_sqlite),
        (work_context, work_duckdb, on_duckdb),
    ):
        expected = [] if runs else [("function_not_in_dialect", name)]
        assert findings_of(STAGE, sql, context) == expected, db.dialect
        assert has_function(db.dialect, name) is runs
        if runs:
            rows(db, sql)
        else:
            with pytest.raises(Exception, match="(?i)function"):
                rows(db, sql)


def test_star_forms_are_known(work_context, work_duckdb):
    sql = "SELECT COLUMNS('st.*') FROM tickets"
    assert findings_of(STAGE, sql, work_context) == []
    rows(work_duckdb, sql)


def test_syntax_forms_are_no_calls(work_context):
    sql = "SELECT CAST(reopen_count AS DOUBLE), EXTRACT(year FROM opened), CASE WHEN 1 = 1 THEN 2 END FROM tickets"
    assert findings_of(STAGE, sql, work_context) == []


def test_on_postgres_the_servers_list_decides(postgres):
    db = postgres.ref("typed")
    context = context_for(introspect(db, 0))
    runs = (
        "SELECT to_char(joined, 'YYYY'), fiscal_year(joined), age(joined), "
        "coalesce(plan, 'none'), CAST(member_id AS text), "
        "(SELECT string_agg(full_name, ',') FROM members), "
        "(SELECT count(*) FROM generate_series(1, 3)) FROM members"
    )
    assert findings_of(STAGE, runs, context) == []
    with closing(connect_readonly(db)) as conn:
        conn.execute(runs).fetchall()
    sql = "SELECT epoch_ms(member_id), list_aggregate(tags, 'count'), to_char(joined, 'Y') FROM members"
    assert findings_of(STAGE, sql, context) == [
        ("function_not_in_dialect", "epoch_ms"),
        ("function_not_in_dialect", "list_aggregate"),
    ]
