"""StructColumnTables on the work-item DuckDB (tickets.sla: a struct): a struct read as a table is
read off its owner's column, its invented key dropped, and the rewrite returns the rows of the
query written right; what it cannot rewrite safely it leaves alone."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agentic_mode.checks import StructColumnTables
from pipelines.strategies.adaptive_settings import AdaptiveScaling
from tests.pipelines.agentic_mode.conftest import assert_rewrites_right

STAGE = StructColumnTables()


@pytest.mark.parametrize(
    ("sql", "expected", "right"),
    [
        (
            "SELECT count(*) FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.ticket_id "
            "WHERE s.status = 'running'",
            "SELECT COUNT(*) FROM tickets AS t WHERE t.sla.status = 'running'",
            "SELECT count(*) FROM tickets WHERE sla.status = 'running'",
        ),
        (  # a condition on the struct's own fields is kept as a filter; a path below it too
            "SELECT t.title, s.policy.name FROM tickets t JOIN sla s "
            "ON s.ticket_id = t.ticket_id AND s.policy.target_minutes > 100",
            "SELECT t.title, t.sla.policy.name FROM tickets AS t "
            "WHERE t.sla.policy.target_minutes > 100",
            "SELECT title, sla.policy.name FROM tickets WHERE sla.policy.target_minutes > 100",
        ),
        (  # its owner joined before it
            "SELECT u.display_name, s.status FROM users u JOIN tickets t ON t.owner_id = u.user_id "
            "JOIN sla AS s ON t.ticket_id = s.ticket_id",
            "SELECT u.display_name, t.sla.status FROM users AS u "
            "JOIN tickets AS t ON t.owner_id = u.user_id",
            "SELECT u.display_name, t.sla.status FROM users u, tickets t WHERE t.owner_id = u.user_id",
        ),
        (  # the struct first, its owner joined: the owner becomes the FROM
            "SELECT t.title FROM sla AS s JOIN tickets AS t ON s.ticket_id = t.ticket_id "
            "WHERE s.status = 'paused'",
            "SELECT t.title FROM tickets AS t WHERE t.sla.status = 'paused'",
            "SELECT title FROM tickets WHERE sla.status = 'paused'",
        ),
        (  # its owner nowhere in the query: the one table that owns a struct of that name
            "SELECT s.status, count(*) FROM sla AS s GROUP BY s.status",
            "SELECT tickets.sla.status, COUNT(*) FROM tickets GROUP BY tickets.sla.status",
            "SELECT sla.status, count(*) FROM tickets GROUP BY 1",
        ),
        (  # a struct inside the struct, read as a table
            "SELECT policy.name, count(*) FROM tickets "
            "JOIN policy ON tickets.sla.policy.name = policy.name GROUP BY policy.name",
            "SELECT tickets.sla.policy.name, COUNT(*) FROM tickets "
            "WHERE tickets.sla.policy.name = tickets.sla.policy.name "
            "GROUP BY tickets.sla.policy.name",
            "SELECT sla.policy.name, count(*) FROM tickets GROUP BY 1",
        ),
    ],
)
def test_a_struct_read_as_a_table_is_read_off_its_owner(
    work_context, work_duckdb, sql, expected, right
):
    assert_rewrites_right(STAGE, work_context, work_duckdb, sql, expected, right)


def test_the_invented_key_is_dropped_and_said(work_context):
    rewrite = STAGE.rewrite(
        "SELECT count(*) FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.ticket_id",
        work_context,
    )
    assert rewrite is not None
    assert rewrite.detail == "sla read off tickets (dropped: s.ticket_id = t.ticket_id)"


def test_the_enterprise_struct_joined_as_a_table_binds_after_the_rewrite(
    enterprise_context, enterprise_db
):
    sql = (
        "SELECT count(*) FROM tickets AS t JOIN sla_tracker AS st ON st.ticket_id = t.ticket_id "
        "WHERE st.status = 'running'"
    )
    with duckdb.connect(enterprise_db.path, read_only=True) as conn:
        with pytest.raises(duckdb.CatalogException, match="sla_tracker"):
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, enterprise_context)
        assert rewrite is not None
        conn.execute(rewrite.after)  # binds and runs


@pytest.mark.parametrize(
    "sql",
    [
        (  # a struct of the struct, joined on itself
            "SELECT policy.name, MAX(tickets.sla_tracker.policy.targets.resolution.target_minutes) "
            "FROM tickets JOIN policy ON tickets.sla_tracker.policy.name = policy.name "
            "GROUP BY policy.name"
        ),
        (  # the struct alone in FROM, joined to another table
            "SELECT sla_tracker.policy.name, COUNT(*) FROM sla_tracker "
            "JOIN parts AS p ON sla_tracker.policy.name = p.name GROUP BY sla_tracker.policy.name"
        ),
    ],
)
def test_the_enterprise_structs_read_as_tables_without_their_owner_bind(
    enterprise_context, enterprise_db, sql
):
    with duckdb.connect(enterprise_db.path, read_only=True) as conn:
        with pytest.raises(duckdb.CatalogException):
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, enterprise_context)
        assert rewrite is not None and "tickets" in rewrite.detail
        conn.execute(rewrite.after)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT s.* FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.ticket_id",  # as a whole
        "SELECT count(*) FROM tickets AS t LEFT JOIN sla AS s ON s.ticket_id = t.ticket_id",
        "SELECT count(*) FROM users AS u JOIN sla AS s ON s.owner = u.user_id",  # no owner in FROM
        "SELECT count(*) FROM tickets AS t JOIN links AS l ON l.ticket_id = t.ticket_id",  # a list
        "WITH sla AS (SELECT 1 AS x) SELECT x FROM tickets AS t, sla",  # a CTE of that name
        "SELECT t.sla.status FROM tickets AS t",  # already right
        "SELECT * FROM sla",  # alone in FROM, read as a whole
        "SELECT status, count(*) FROM sla GROUP BY status",  # its fields unqualified
        "SELECT s.status FROM sla AS s JOIN tickets AS t ON t.sla.status = s.status "
        "LEFT JOIN users AS u ON u.user_id = t.owner_id WHERE s.x IN (SELECT s.status)",
    ],
)
def test_what_it_cannot_rewrite_safely_is_left_alone(work_context, sql):
    assert STAGE.rewrite(sql, work_context) is None


def test_a_struct_two_tables_own_is_not_guessed(enterprise_context):
    # tickets and conversations both have surveys_aggregation
    sql = "SELECT s.surveys_sent FROM surveys_aggregation AS s"
    assert STAGE.rewrite(sql, enterprise_context) is None


def test_sqlite_has_no_structs(flat_context):
    sql = "SELECT count(*) FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.ticket_id"
    assert STAGE.rewrite(sql, flat_context) is None


def test_the_adaptive_pipeline_runs_it_before_every_candidate():
    assert "struct_column_tables" in AdaptiveScaling().repairs
