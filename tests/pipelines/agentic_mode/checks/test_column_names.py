"""ColumnNames on the claims schema and a small SQLite database with rows: a column read off
the wrong alias is bound to the table in scope that has it, and the rewritten SQL runs; a
column no table in reach has is left for the blocker; the stage joins the chain only when asked,
and there the blocker reports only what the rewrite could not bind."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.agentic_mode.chain import CheckerChain
from pipelines.agentic_mode.checks import DEFAULT_CHECKS, ColumnNames
from pipelines.contracts import DatabaseRef
from pipelines.repair.registry import build_repairs
from pipelines.schema import introspect
from tests.pipelines.agentic_mode.conftest import context_for, rows
from tests.pipelines.conftest import sqlite_db

STAGE = ColumnNames()
WRONG_ALIAS = (
    "SELECT p.specialty, COUNT(*) FROM claims AS c JOIN providers AS pr"
    " ON c.provider_id = pr.provider_id JOIN plans AS p ON p.plan_id = c.plan_id"
    " GROUP BY p.specialty"
)


@pytest.fixture
def clinic(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "clinic.sqlite",
        """
        CREATE TABLE providers (provider_id INTEGER PRIMARY KEY, specialty TEXT);
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY,
                             provider_id INTEGER REFERENCES providers(provider_id), cost REAL);
        INSERT INTO providers VALUES (1, 'Cardiology'), (2, 'Pharmacy');
        INSERT INTO visits VALUES (10, 1, 50.0), (11, 1, 70.0), (12, 2, 5.0);
        """,
    )


def test_a_column_off_the_wrong_alias_is_bound_to_the_table_that_has_it(claims_view):
    rewrite = STAGE.rewrite(WRONG_ALIAS, context_for(claims_view))

    assert rewrite is not None and rewrite.stage == "column_names"
    assert "pr.specialty" in rewrite.after and "p.specialty" not in rewrite.after
    assert rewrite.detail == "bound p.specialty"


def test_the_rewritten_sql_runs_and_answers(clinic):
    sql = (
        "SELECT v.specialty, SUM(v.cost) FROM visits AS v JOIN providers AS p"
        " ON v.provider_id = p.provider_id GROUP BY v.specialty ORDER BY 2 DESC"
    )
    rewrite = STAGE.rewrite(sql, context_for(introspect(clinic, 0)))

    assert rewrite is not None
    assert rows(clinic, rewrite.after) == (
        ("specialty", "SUM(v.cost)"),
        [("Cardiology", 120.0), ("Pharmacy", 5.0)],
    )


def test_known_columns_and_unbindable_ones_are_left_alone(claims_view):
    context = context_for(claims_view)
    assert STAGE.rewrite("SELECT c.denial_reason FROM claims AS c", context) is None
    # no table in scope or one key away has a column like it
    assert STAGE.rewrite("SELECT c.favourite_colour FROM claims AS c", context) is None
    assert STAGE.rewrite("SELECT FROM WHERE", context) is None


# The default chain with column_names listed after the other rewriters (claims' variant).
BIND_COLUMNS = (*DEFAULT_CHECKS[:4], "column_names", *DEFAULT_CHECKS[4:])


def test_the_stage_is_in_the_chain_only_when_listed():
    assert ColumnNames.name not in DEFAULT_CHECKS
    assert ColumnNames() in build_repairs(BIND_COLUMNS)


def test_in_the_chain_the_blocker_reports_only_what_was_not_bound(claims_view):
    sql = WRONG_ALIAS.replace("COUNT(*)", "MAX(c.favourite_colour)")
    result = CheckerChain(claims_view, stages=build_repairs(BIND_COLUMNS)).check(sql)

    assert [r.stage for r in result.rewrites] == ["column_names"]
    assert [(f.error_class, f.identifier) for f in result.findings] == [
        ("column_not_found", "c.favourite_colour")
    ]
