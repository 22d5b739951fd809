"""ListFieldReads on the work-item DuckDB (tickets.links: a list of structs): a field read off the
list, which DuckDB refuses, is read off its items — a test on constants as a filter over the
items (the row count kept), any other read through a lateral unnest — and the rewrite returns the
rows of the query written right; what it cannot rewrite safely it leaves alone."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agentic_mode.checks import DEFAULT_CHECKS, ListFieldReads
from pipelines.repair.registry import build_repairs
from pipelines.strategies.adaptive_settings import AdaptiveScaling
from tests.pipelines.agentic_mode.conftest import assert_rewrites_right, rows

STAGE = ListFieldReads()


@pytest.mark.parametrize(
    ("sql", "expected", "right"),
    [
        (  # a test on constants: some item has it
            "SELECT count(*) FROM tickets AS t WHERE t.links.type = 'blocks'",
            "SELECT COUNT(*) FROM tickets AS t "
            "WHERE LENGTH(LIST_FILTER(t.links, LAMBDA item : item.type = 'blocks')) > 0",
            "SELECT count(*) FROM tickets AS t "
            "WHERE EXISTS (SELECT 1 FROM UNNEST(t.links) AS u(l) WHERE l.type = 'blocks')",
        ),
        (  # unqualified, IN, inside CASE: each row counted once
            "SELECT sum(CASE WHEN links.type IN ('blocks', 'resolves') THEN 1 ELSE 0 END) "
            "FROM tickets AS t",
            "SELECT SUM(CASE WHEN LENGTH(LIST_FILTER(t.links, LAMBDA item : item.type IN "
            "('blocks', 'resolves'))) > 0 THEN 1 ELSE 0 END) FROM tickets AS t",
            "SELECT count(*) FROM tickets AS t WHERE EXISTS (SELECT 1 FROM UNNEST(t.links) AS "
            "u(l) WHERE l.type IN ('blocks', 'resolves'))",
        ),
        (  # a projection: each item
            "SELECT t.title, t.links.display_id FROM tickets AS t",
            "SELECT t.title, links_item.display_id FROM tickets AS t CROSS JOIN "
            "(SELECT UNNEST(t.links, max_depth := 2)) AS links_item",
            "SELECT t.title, l.display_id FROM tickets AS t, UNNEST(t.links) AS u(l)",
        ),
        (  # a join key: each item, unnested right after its owner, before the join that reads it
            "SELECT t.title, i.title AS other FROM tickets AS t "
            "JOIN tickets AS i ON t.links.display_id = 'TKT-' || i.ticket_id",
            "SELECT t.title, i.title AS other FROM tickets AS t CROSS JOIN "
            "(SELECT UNNEST(t.links, max_depth := 2)) AS links_item "
            "JOIN tickets AS i ON links_item.display_id = 'TKT-' || i.ticket_id",
            "SELECT t.title, i.title AS other FROM tickets AS t, UNNEST(t.links) AS u(l), "
            "tickets AS i WHERE l.display_id = 'TKT-' || i.ticket_id",
        ),
    ],
)
def test_a_field_read_off_a_list_is_read_off_its_items(
    work_context, work_duckdb, sql, expected, right
):
    assert_rewrites_right(STAGE, work_context, work_duckdb, sql, expected, right)


def test_the_rewrite_says_how_each_list_was_read(work_context):
    rewrite = STAGE.rewrite(
        "SELECT t.links.display_id FROM tickets AS t WHERE t.links.type = 'blocks'", work_context
    )
    assert rewrite is not None
    assert rewrite.detail == (
        "tickets.links unnested as links_item; tickets.links.type tested on any item"
    )


def test_a_name_in_use_is_not_taken_for_the_items(work_context, work_duckdb):
    sql = (
        "SELECT links_item.title, links_item.links.display_id FROM tickets AS links_item "
        "WHERE links_item.severity = 'low'"
    )
    rewrite = STAGE.rewrite(sql, work_context)
    assert rewrite is not None and "AS links_item_2" in rewrite.after
    assert rows(work_duckdb, rewrite.after)[1] == [("Typo", "ISS-2"), ("Typo", "TKT-9")]


def test_the_enterprise_schemas_lists_of_owners_bind_after_the_rewrite(
    enterprise_context, enterprise_db
):
    # The 1.5B's commonest nested error there: an owner's field read off accounts.owned_by.
    sql = (
        "SELECT a.display_name, count(*) FROM accounts AS a JOIN users AS u "
        "ON a.owned_by.user_id = u.user_id WHERE a.tags.name = 'expansion-target' "
        "GROUP BY a.display_name"
    )
    with duckdb.connect(enterprise_db.path, read_only=True) as conn:
        with pytest.raises(duckdb.BinderException, match="not a struct"):
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, enterprise_context)
        assert rewrite is not None
        conn.execute(rewrite.after)  # binds and runs


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT t.sla.policy.name FROM tickets AS t",  # a struct, not a list
        "SELECT count(*) FROM tickets AS t WHERE t.links.kind = 'blocks'",  # the items lack it
        "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(l) WHERE l.type = 'blocks'",
        "SELECT count(*) FROM users AS u LEFT JOIN tickets AS t ON t.owner_id = u.user_id "
        "WHERE t.links.type = 'blocks'",  # the owner on the inner side of an outer join
        "SELECT count(*) FROM users AS u WHERE u.title = 'support_lead'",
    ],
)
def test_what_it_cannot_rewrite_safely_is_left_alone(work_context, sql):
    assert STAGE.rewrite(sql, work_context) is None


def test_sqlite_has_no_lists(flat_context):
    assert STAGE.rewrite("SELECT t.links.type FROM tickets AS t", flat_context) is None


def test_the_adaptive_pipeline_runs_it_by_default_and_the_chain_on_request():
    assert "list_field_reads" in AdaptiveScaling().repairs
    assert "list_field_reads" not in DEFAULT_CHECKS
    assert [r.name for r in build_repairs(["list_column_tables", "list_field_reads"])] == [
        "list_column_tables",
        "list_field_reads",
    ]
