"""SubtypeTables: a kind of row named as a table (``blockers``: tickets whose documented
``severity`` is ``blocker``; ``capabilities``: the enterprise schema's parts of that
``part_type``) is read as its table's rows of that kind, and the rewrite returns the rows of the
query written right; a name no vocabulary holds, or more than one does, is left alone."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agentic_mode.checks import DEFAULT_CHECKS, SubtypeTables
from pipelines.strategies.adaptive_settings import AdaptiveScaling
from tests.pipelines.agentic_mode.conftest import assert_rewrites_right

STAGE = SubtypeTables()


@pytest.mark.parametrize(
    ("sql", "expected", "right"),
    [
        (  # plural, no alias: the kind keeps the name the query reads it by
            "SELECT title FROM blockers",
            "SELECT title FROM (SELECT * FROM tickets WHERE severity = 'blocker') AS blockers",
            "SELECT title FROM tickets WHERE severity = 'blocker'",
        ),
        (  # joined, under an alias; the singular as written
            "SELECT u.display_name, r.title FROM users AS u "
            "JOIN resolved AS r ON r.owner_id = u.user_id",
            "SELECT u.display_name, r.title FROM users AS u "
            "JOIN (SELECT * FROM tickets WHERE stage = 'resolved') AS r ON r.owner_id = u.user_id",
            "SELECT u.display_name, t.title FROM users AS u JOIN tickets AS t "
            "ON t.owner_id = u.user_id WHERE t.stage = 'resolved'",
        ),
    ],
)
def test_a_kind_read_as_a_table_is_read_as_its_rows(
    work_context, work_duckdb, sql, expected, right
):
    assert_rewrites_right(STAGE, work_context, work_duckdb, sql, expected, right)


def test_the_rewrite_says_what_it_read(work_context):
    rewrite = STAGE.rewrite("SELECT count(*) FROM highs", work_context)
    assert rewrite is not None
    assert rewrite.detail == "highs read as tickets WHERE severity = 'high'"


def test_the_enterprise_part_types_bind_after_the_rewrite(enterprise_context, enterprise_db):
    sql = (
        "SELECT f.name, f.lifecycle FROM parts AS f JOIN capabilities AS c "
        "ON f.parent_part_id = c.part_id WHERE c.name = 'Single Sign-On'"
    )
    with duckdb.connect(enterprise_db.path, read_only=True) as conn:
        with pytest.raises(duckdb.CatalogException, match="capabilities"):
            conn.execute(sql)
        rewrite = STAGE.rewrite(sql, enterprise_context)
        assert rewrite is not None and "part_type = 'capability'" in rewrite.after
        conn.execute(rewrite.after)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM widgets",  # no vocabulary holds it
        "SELECT count(*) FROM tickets",  # a table
        "WITH blockers AS (SELECT 1 AS x) SELECT x FROM blockers",  # a CTE of that name
        "SELECT count(*) FROM links",  # a column's name (the nested rewriters' case)
    ],
)
def test_what_it_cannot_read_is_left_alone(work_context, sql):
    assert STAGE.rewrite(sql, work_context) is None


def test_a_kind_two_columns_hold_is_not_guessed(enterprise_context):
    # 'enterprise' is a tier of accounts.tier and of sla_policies.account_tier
    assert STAGE.rewrite("SELECT count(*) FROM enterprises", enterprise_context) is None


def test_undocumented_kinds_are_not_guessed(flat_context):
    # the flat SQLite twin has no comments, so no vocabulary: nothing to read the name against
    assert STAGE.rewrite("SELECT title FROM blockers", flat_context) is None


def test_the_adaptive_pipeline_runs_it_by_default_and_the_chain_on_request():
    assert "subtype_tables" in AdaptiveScaling().repairs
    assert "subtype_tables" not in DEFAULT_CHECKS
