"""ListColumnTables on the work-item DuckDB (tickets.links: a list of structs): a list read as a
table becomes a lateral unnest of its owner's list, and the rewrite returns the rows of the
query written right; what it cannot rewrite safely it leaves alone."""

from __future__ import annotations

import pytest

from pipelines.agentic_mode.checks import DEFAULT_CHECKS, ListColumnTables
from tests.pipelines.agentic_mode.conftest import assert_rewrites_right

STAGE = ListColumnTables()


@pytest.mark.parametrize(
    ("sql", "expected", "right"),
    [
        (
            "SELECT count(*) FROM tickets AS t JOIN links AS l ON l.ticket_id = t.ticket_id "
            "AND l.type = 'blocks'",
            "SELECT COUNT(*) FROM tickets AS t CROSS JOIN "
            "(SELECT UNNEST(t.links, max_depth := 2)) AS l WHERE l.type = 'blocks'",
            "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(l) WHERE l.type = 'blocks'",
        ),
        (  # the list first: its owner becomes the FROM
            "SELECT l.display_id FROM links AS l JOIN tickets AS t ON l.ticket_id = t.ticket_id "
            "WHERE t.stage = 'resolved'",
            "SELECT l.display_id FROM tickets AS t CROSS JOIN "
            "(SELECT UNNEST(t.links, max_depth := 2)) AS l WHERE t.stage = 'resolved'",
            "SELECT l.display_id FROM tickets AS t, UNNEST(t.links) AS u(l) "
            "WHERE t.stage = 'resolved'",
        ),
        (  # a comma join, no condition; the list named in another case
            "SELECT t.title, l.type FROM tickets t, LINKS l WHERE t.severity = 'blocker'",
            "SELECT t.title, l.type FROM tickets AS t CROSS JOIN "
            "(SELECT UNNEST(t.links, max_depth := 2)) AS l WHERE t.severity = 'blocker'",
            "SELECT t.title, l.type FROM tickets AS t, UNNEST(t.links) AS u(l) "
            "WHERE t.severity = 'blocker'",
        ),
    ],
)
def test_a_list_read_as_a_table_is_unnested_from_its_owner(
    work_context, work_duckdb, sql, expected, right
):
    assert_rewrites_right(STAGE, work_context, work_duckdb, sql, expected, right)


def test_the_invented_key_is_dropped_and_said(work_context):
    rewrite = STAGE.rewrite(
        "SELECT count(*) FROM tickets AS t JOIN links AS l ON l.ticket_id = t.ticket_id",
        work_context,
    )
    assert rewrite is not None
    assert rewrite.detail == "links unnested from tickets (dropped: l.ticket_id = t.ticket_id)"


def test_an_unqualified_condition_is_dropped(work_context):
    rewrite = STAGE.rewrite(
        "SELECT count(*) FROM tickets AS t JOIN links AS l ON ticket_id = t.ticket_id",
        work_context,
    )
    assert rewrite is not None and "WHERE" not in rewrite.after


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM tickets AS t LEFT JOIN links AS l ON l.ticket_id = t.ticket_id",
        "SELECT count(*) FROM links",  # no owner in FROM
        "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(l)",  # already right
        "SELECT count(*) FROM users AS u JOIN tickets AS t ON t.owner_id = u.user_id",
        "WITH links AS (SELECT 1 AS x) SELECT x FROM tickets AS t, links",  # a CTE of that name
        "SELECT count(*) FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.ticket_id",  # a struct
    ],
)
def test_what_it_cannot_rewrite_safely_is_left_alone(work_context, sql):
    assert STAGE.rewrite(sql, work_context) is None


def test_sqlite_has_no_lists_to_unnest(flat_context):
    sql = "SELECT count(*) FROM tickets AS t JOIN links AS l ON l.ticket_id = t.ticket_id"
    assert STAGE.rewrite(sql, flat_context) is None


def test_the_chain_runs_it_among_the_rewriters():
    names = list(DEFAULT_CHECKS)
    assert names.index("list_column_tables") < names.index("unknown_names")
