"""StrayApostrophes on a SQLite database whose names hold apostrophes: a string an apostrophe
broke reads again and finds its row; an SQL sqlglot reads is left alone; in the chain it runs
first, so the other stages see the repaired SQL instead of one syntax error."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.agentic_mode.chain import CheckerChain
from pipelines.agentic_mode.checks import StrayApostrophes
from pipelines.contracts import DatabaseRef
from pipelines.schema import introspect
from tests.pipelines.agentic_mode.conftest import context_for, rows
from tests.pipelines.conftest import sqlite_db

STAGE = StrayApostrophes()


@pytest.fixture
def providers(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "providers.sqlite",
        """
        CREATE TABLE Providers (provider_id INTEGER PRIMARY KEY, provider_name TEXT);
        INSERT INTO Providers VALUES (1, 'St. Luke''s Hospital'), (2, 'O''Brien Clinic');
        """,
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT provider_id FROM Providers WHERE provider_name = 'St. Luke\\'s Hospital'",
        "SELECT provider_id FROM Providers WHERE provider_name = 'St. Luke's Hospital'",
    ],
)
def test_a_broken_string_reads_again_and_finds_its_row(providers, sql):
    rewrite = STAGE.rewrite(sql, context_for(introspect(providers, 0)))
    assert rewrite is not None and rewrite.before == sql
    assert rows(providers, rewrite.after) == (("provider_id",), [(1,)])


def test_an_sql_sqlglot_reads_is_left_alone(providers):
    context = context_for(introspect(providers, 0))
    assert (
        STAGE.rewrite("SELECT 1 FROM Providers WHERE provider_name = 'O''Brien'", context) is None
    )
    assert STAGE.rewrite("SELECT FROM WHERE", context) is None  # broken, but not by a quote


def test_in_the_chain_the_other_stages_check_the_repaired_sql(providers):
    result = CheckerChain(introspect(providers, 0)).check(
        "SELECT PROVIDER_ID FROM providers WHERE provider_name = 'O'Brien Clinic'"
    )
    assert [r.stage for r in result.rewrites] == ["stray_apostrophes", "identifier_casing"]
    assert result.passed
    assert rows(providers, result.sql)[1] == [(2,)]
