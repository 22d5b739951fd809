"""UnknownNames on the work-item DuckDB and the flat SQLite: what it reports, the engine
refuses too; what it passes, the engine runs."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agentic_mode.checks import UnknownNames
from pipelines.agentic_mode.checks.base import parse
from tests.pipelines.agentic_mode.conftest import findings_of, rows

STAGE = UnknownNames()
JOIN = "FROM tickets JOIN users ON tickets.owner_id = users.user_id"


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM ticket", [("table_not_found", "ticket")]),
        # a nested column read as a table: the list one must be unnested
        ("SELECT l.type FROM tickets AS t JOIN links AS l ON 1 = 1", [("unnest_missing", "links")]),
        ("SELECT s.status FROM sla AS s", [("table_not_found", "sla")]),
        ("SELECT x.stage FROM tickets AS t", [("unresolved_alias", "x")]),
        ("SELECT users.title FROM tickets", [("unresolved_alias", "users")]),
        ("SELECT t.stagee FROM tickets AS t", [("column_not_found", "t.stagee")]),
        ("SELECT stagee FROM tickets", [("column_not_found", "stagee")]),
        (f"SELECT title {JOIN}", [("ambiguous_column", "title")]),
        (
            "SELECT t.title FROM tickets AS t WHERE EXISTS "
            "(SELECT 1 FROM users AS u WHERE u.user_id = t.owner_id AND u.nmae = 'Ada')",
            [("column_not_found", "u.nmae")],
        ),
        (
            "WITH c AS (SELECT stage FROM tickets) SELECT severity FROM c",
            [("column_not_found", "severity")],
        ),
        (
            "SELECT s.x FROM (SELECT * FROM archive) AS s",
            [("table_not_found", "archive")],
        ),
    ],
)
def test_unknown_names_are_reported_and_the_engine_agrees(work_context, work_duckdb, sql, expected):
    assert findings_of(STAGE, sql, work_context) == expected
    with pytest.raises(duckdb.Error):
        rows(work_duckdb, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT STAGE, Severity FROM TICKETS",
        "SELECT t.stage AS s, count(*) AS n FROM tickets AS t GROUP BY s HAVING n > 1 ORDER BY n",
        f"SELECT tickets.title, users.title AS owner_title {JOIN}",
        "SELECT link.type FROM tickets AS t, UNNEST(t.links) AS u(link)",
        "SELECT u.type FROM tickets, UNNEST(links) AS u",
        "SELECT title FROM tickets AS t WHERE reopen_count > "
        "(SELECT avg(reopen_count) FROM tickets AS x WHERE x.severity = t.severity)",
        "SELECT len(list_filter(links, lambda x: x.type = 'blocks')) FROM tickets",
        "WITH c AS (SELECT stage, count(*) AS n FROM tickets GROUP BY stage) "
        "SELECT c.stage, n FROM c WHERE n > 0",
        "SELECT stage FROM tickets UNION SELECT title FROM users ORDER BY 1",
    ],
)
def test_resolvable_names_pass_and_run(work_context, work_duckdb, sql):
    assert findings_of(STAGE, sql, work_context) == []
    rows(work_duckdb, sql)


def test_sqlite_pseudo_columns_pass(flat_context, flat_sqlite):
    sql = "SELECT rowid, stage FROM tickets"
    assert findings_of(STAGE, sql, flat_context) == []
    rows(flat_sqlite, sql)


def test_findings_name_what_to_use_instead(work_context, work_view):
    from pipelines.agentic_mode.checks import parse

    def suggestions(sql):
        return [f.suggestion for f in STAGE.check(parse(sql, work_context.index), work_context)]

    assert suggestions("SELECT * FROM ticket") == ["tickets"]
    assert suggestions("SELECT t.stagee FROM tickets AS t") == ["stage"]
    assert suggestions(f"SELECT title {JOIN}") == ["tickets.title, users.title"]
    assert suggestions("SELECT x.stage FROM tickets AS t") == ["t"]


def test_a_nested_column_read_as_a_table_is_named_with_its_owner(work_context):
    def check(sql):
        return STAGE.check(parse(sql, work_context.index), work_context)

    (listed,) = check("SELECT * FROM tickets JOIN links ON true")
    assert "list column of tickets" in listed.detail and "UNNEST(x.links)" in listed.detail
    (struct,) = check("SELECT * FROM sla")
    assert struct.suggestion == "tickets" and "x.sla.field" in struct.detail
