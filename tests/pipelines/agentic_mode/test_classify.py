"""The classifier on real messages: each broken query is run on a real in-memory SQLite or
DuckDB database, and the engine's own message must land in the expected class with the name
it blames; results and sandbox errors are classified from real ExecutionResults."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest

from pipelines.agentic_mode import Classifier
from pipelines.sandbox import Sandbox
from tests.pipelines.agentic_mode.conftest import flat_sqlite_memory, work_duckdb_memory

JOIN = "FROM tickets JOIN users ON tickets.owner_id = users.user_id"

# (engine, broken SQL, class, identifier the message names or None to skip)
UNION = "SELECT ticket_id FROM tickets UNION SELECT user_id, title FROM users"
CASES = [
    ("sqlite", "SELECT * FROM ticket", "table_not_found", "ticket"),
    ("sqlite", "SELECT stagee FROM tickets", "column_not_found", "stagee"),
    ("sqlite", "SELECT t.stagee FROM tickets AS t", "column_not_found", "t.stagee"),
    ("sqlite", f"SELECT title {JOIN}", "ambiguous_column", "title"),
    ("sqlite", "SELECT stage FROM tickets WHER stage = 1", "syntax_error", "stage"),
    ("sqlite", "SELECT stage FROM tickets WHERE", "syntax_error", None),
    ("sqlite", "SELECT 'abc FROM tickets", "syntax_error", None),
    (
        "sqlite",
        "SELECT DATEDIFF('day', opened, closed) FROM tickets",
        "function_not_in_dialect",
        "DATEDIFF",
    ),
    ("sqlite", "SELECT substr() FROM tickets", "wrong_function_arguments", "substr"),
    ("sqlite", "SELECT stage FROM tickets HAVING count(*) > 1", "group_by_missing", None),
    ("sqlite", "SELECT stage FROM tickets WHERE count(*) > 1", "aggregate_in_where", "count"),
    (
        "sqlite",
        "SELECT stage FROM tickets WHERE row_number() OVER () = 1",
        "window_in_where",
        "row_number",
    ),
    ("sqlite", UNION, "set_operation_mismatch", "UNION"),
    ("sqlite", "SELECT stage FROM tickets ORDER BY 3", "order_by_out_of_range", None),
    ("sqlite", "SELECT abs(-9223372036854775808)", "numeric_overflow", None),
    ("duckdb", "SELECT * FROM ticket", "table_not_found", "ticket"),
    ("duckdb", "SELECT stagee FROM tickets", "column_not_found", "stagee"),
    ("duckdb", "SELECT t.stagee FROM tickets AS t", "column_not_found", "stagee"),
    ("duckdb", "SELECT x.stage FROM tickets AS t", "unresolved_alias", "x"),
    ("duckdb", f"SELECT title {JOIN}", "ambiguous_column", "title"),
    ("duckdb", "SELECT sla.statuss FROM tickets", "missing_subfield", "statuss"),
    ("duckdb", "SELECT l.typo FROM tickets, UNNEST(links) AS u(l)", "missing_subfield", "typo"),
    (
        "duckdb",
        "SELECT count(*) FROM tickets WHERE links.type = 'blocks'",
        "unnest_missing",
        "links",
    ),
    (
        "duckdb",
        "SELECT count(*) FROM tickets AS t WHERE t.links.type = 'blocks'",
        "unnest_missing",
        "links",
    ),
    ("duckdb", "SELECT count(*) FROM tickets WHERE links = 'blocks'", "unnest_missing", "blocks"),
    ("duckdb", "SELECT stage FROM tickets WHER stage = 1", "syntax_error", "stage"),
    ("duckdb", "SELECT 'abc FROM tickets", "syntax_error", None),
    ("duckdb", "SELECT IFF(reopen_count > 1, 1, 0) FROM tickets", "function_not_in_dialect", "iff"),
    ("duckdb", "SELECT substr() FROM tickets", "wrong_function_arguments", "substr"),
    ("duckdb", "SELECT stage, count(*) FROM tickets", "group_by_missing", "stage"),
    ("duckdb", "SELECT stage FROM tickets WHERE count(*) > 1", "aggregate_in_where", None),
    ("duckdb", "SELECT max(count(*)) FROM tickets", "aggregate_in_where", None),
    ("duckdb", "SELECT stage FROM tickets WHERE row_number() OVER () = 1", "window_in_where", None),
    ("duckdb", UNION, "set_operation_mismatch", None),
    ("duckdb", "SELECT stage FROM tickets ORDER BY 3", "order_by_out_of_range", None),
    ("duckdb", "SELECT * FROM tickets WHERE opened > 5", "type_mismatch", "DATE"),
    ("duckdb", "SELECT CAST(stage AS INTEGER) FROM tickets", "conversion_error", "queued"),
    ("duckdb", "SELECT reopen_count // 0 FROM tickets", "division_by_zero", None),
    ("duckdb", "SELECT abs(-9223372036854775808)", "numeric_overflow", None),
]


def engine_message(engine: str, sql: str) -> str:
    conn = flat_sqlite_memory() if engine == "sqlite" else work_duckdb_memory()
    try:
        conn.execute(sql).fetchall()
    except (sqlite3.Error, duckdb.Error) as exc:
        return str(exc)
    finally:
        conn.close()
    raise AssertionError(f"{engine} ran {sql!r} without an error")


@pytest.fixture(scope="module")
def classifier() -> Classifier:
    return Classifier()


@pytest.mark.parametrize(("engine", "sql", "expected", "identifier"), CASES)
def test_a_real_engine_message_lands_in_its_class(classifier, engine, sql, expected, identifier):
    message = engine_message(engine, sql)
    found = classifier.classify_error(message, engine)
    assert found.error_class == expected, message
    if identifier is not None:
        assert found.identifier == identifier, message
    assert found.source == engine
    assert found.detail == message.splitlines()[0]
    assert found.directive == classifier.taxonomy[expected].directive


def test_the_engine_suggestions_are_kept(classifier):
    table = classifier.classify_error(engine_message("duckdb", "SELECT * FROM ticket"), "duckdb")
    assert table.suggestion == "tickets"
    field = classifier.classify_error(
        engine_message("duckdb", "SELECT sla.statuss FROM tickets"), "duckdb"
    )
    assert field.suggestion == '"status"'
    alias = classifier.classify_error(
        engine_message("duckdb", "SELECT x.stage FROM tickets AS t"), "duckdb"
    )
    assert alias.suggestion == '"t"'
    ambiguous = classifier.classify_error(
        engine_message("duckdb", f"SELECT title {JOIN}"), "duckdb"
    )
    assert ambiguous.suggestion == "'tickets.title' or 'users.title'"


def test_a_pattern_matches_only_its_own_engine(classifier):
    message = engine_message("duckdb", "SELECT * FROM ticket")
    assert classifier.classify_error(message, "sqlite").error_class == "unclassified"


@pytest.mark.parametrize("message", ["", "the moon is made of cheese", "\n\n", "x" * 10_000])
def test_an_unknown_message_falls_into_the_fallback(classifier, message):
    found = classifier.classify_error(message, "duckdb")
    assert found.error_class == "unclassified"
    assert found.detail  # never empty, even for an empty message
    assert found.identifier == ""


def test_the_sandbox_error_kind_wins_over_the_message(classifier):
    found = classifier.classify_error("no such table: x", "sqlite", "database_unavailable")
    assert (found.error_class, found.action) == ("engine_failure", "stop")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout_s=5, row_cap=100, isolation="inline") as box:
        yield box


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM ticket", "table_not_found"),
        ("DELETE FROM tickets", "not_read_only"),
        ("SELECT ticket_id FROM tickets WHERE stage = 'closed'", "empty_result"),
        ("SELECT max(closed) FROM tickets WHERE stage = 'queued'", "null_only_result"),
        ("SELECT count(*) FROM tickets WHERE stage = 'queued'", None),
    ],
)
def test_sandbox_results_are_classified(classifier, sandbox, flat_sqlite, sql, expected):
    result = sandbox.execute(sql, flat_sqlite)
    found = classifier.classify_result(result, "sqlite")
    assert (found.error_class if found else None) == expected


def test_a_real_timeout_is_classified_by_its_kind(classifier, flat_sqlite):
    endless = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    with Sandbox(timeout_s=0.3, row_cap=10, isolation="inline") as box:
        result = box.execute(endless, flat_sqlite)
    assert result.error_kind == "timeout"
    found = classifier.classify_result(result, "sqlite")
    assert (found.error_class, found.phase) == ("timeout", "runtime")


def test_duckdb_sandbox_messages_pass_through_to_their_class(classifier, sandbox, work_duckdb):
    result = sandbox.execute(
        "SELECT count(*) FROM tickets WHERE links.type = 'blocks'", work_duckdb
    )
    assert result.error_kind == "sql_error"
    assert classifier.classify_result(result, "duckdb").error_class == "unnest_missing"
