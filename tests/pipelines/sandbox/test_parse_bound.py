"""The deadline covers the guard's parse on every engine: a statement whose shape makes parsing
expensive is refused before sqlglot sees it, within twice the deadline."""

from __future__ import annotations

import time

import pytest

from pipelines.sandbox import Sandbox
from pipelines.sandbox.guard import parse_seconds, sql_shape

DEADLINE_S = 0.1


def _or_chain(terms: int) -> str:
    return "SELECT count(*) FROM singer WHERE " + " OR ".join(f"id = {i}" for i in range(terms))


# (statement built to be slow to parse, the error kind it gets)
SLOW_TO_PARSE = [
    # 18,000 tokens: past max_sql_tokens, 0.1-0.3 s of parsing on a 2-core machine
    ("SELECT 1 WHERE 1 IN (" + ",".join(map(str, range(9_000))) + ")", "resource_limit"),
    # under the token cap, but its expected parse alone outlasts the deadline
    (_or_chain(2_400), "timeout"),
    # 150 parentheses deep: sqlglot recurses once per level
    ("SELECT " + "(" * 150 + "1" + ")" * 150, "resource_limit"),
]


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def any_db(request):
    if request.param == "postgres":
        return request.getfixturevalue("postgres").ref("typed")
    return request.getfixturevalue(f"{request.param}_ref")


@pytest.mark.parametrize("sql, kind", SLOW_TO_PARSE, ids=["in-list", "or-chain", "nesting"])
def test_a_statement_slow_to_parse_is_refused_within_the_deadline(any_db, sql, kind):
    with Sandbox(timeout_s=DEADLINE_S) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(sql, any_db)
        elapsed = time.monotonic() - started
    assert result.error_kind == kind, result.error
    assert elapsed < 2 * DEADLINE_S


def test_a_long_statement_within_the_bounds_still_runs(db_ref):
    sql = "SELECT count(*) FROM singer WHERE id IN (" + ",".join(map(str, range(2_000))) + ")"
    tokens, depth = sql_shape(sql)
    assert tokens > 4_000 and depth == 1 and parse_seconds(tokens) < 5
    with Sandbox(timeout_s=5) as sandbox:
        assert sandbox.execute(sql, db_ref).rows == ((6,),)
