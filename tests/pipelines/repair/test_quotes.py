"""QuoteRepair against the engines' own messages: an apostrophe that ends a string early, or one
escaped with a backslash, is doubled, and the rewrite finds the stored name; anything else is
left alone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from pipelines.contracts import DatabaseRef
from pipelines.repair.quotes import QuoteRepair
from pipelines.sandbox.errors import UncheckableSQL
from pipelines.sandbox.sandbox import admit
from tests.pipelines.conftest import read_sorted, sqlite_db

NAMES = [(1, "St. Luke's Hospital"), (2, "O'Brien Clinic"), (3, "Mercy")]


def sqlite_error(db: DatabaseRef, sql: str) -> str:
    with pytest.raises(sqlite3.Error) as caught:
        read_sorted(db, sql)
    return str(caught.value)


@pytest.fixture
def providers(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "providers.sqlite",
        "CREATE TABLE providers (id INTEGER, name TEXT);"
        "INSERT INTO providers VALUES (1, 'St. Luke''s Hospital'), (2, 'O''Brien Clinic'), (3, 'Mercy');",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM providers WHERE name = 'St. Luke\\'s Hospital'",
        "SELECT id FROM providers WHERE name = 'St. Luke's Hospital'",
    ],
)
def test_a_broken_name_in_sqlite_is_repaired_and_finds_its_row(providers, sql):
    fixed = QuoteRepair("sqlite").propose(sql, sqlite_error(providers, sql))
    assert fixed == "SELECT id FROM providers WHERE name = 'St. Luke''s Hospital'"
    assert read_sorted(providers, fixed) == [(1,)]


def test_a_broken_name_in_duckdb_is_repaired_and_finds_its_row():
    conn = duckdb.connect()
    conn.execute("CREATE TABLE providers (id INTEGER, name TEXT)")
    conn.executemany("INSERT INTO providers VALUES (?, ?)", NAMES)
    sql = "SELECT id FROM providers WHERE name IN ('O'Brien Clinic', 'Mercy') ORDER BY id"
    with pytest.raises(duckdb.Error) as caught:
        conn.execute(sql)
    fixed = QuoteRepair("duckdb").propose(sql, str(caught.value))
    assert fixed is not None
    assert conn.execute(fixed).fetchall() == [(2,), (3,)]


def test_identifiers_and_blob_literals_keep_their_quotes(providers):
    sql = "SELECT \"O'Brien\", x'0A' FROM providers WHERE name = 'O'Brien Clinic'"
    fixed = QuoteRepair("sqlite").propose(sql, sqlite_error(providers, sql))
    assert fixed == "SELECT \"O'Brien\", x'0A' FROM providers WHERE name = 'O''Brien Clinic'"


def test_other_errors_and_sql_without_a_stray_apostrophe_are_left_alone(providers):
    repair = QuoteRepair("sqlite")
    broken_name = "SELECT id FROM providers WHERE name = 'O'Brien Clinic'"
    assert repair.propose(broken_name, "no such column: name") is None
    no_apostrophe = "SELECT id FROM providers WHERE name = 'Mercy' AND"
    assert repair.propose(no_apostrophe, sqlite_error(providers, no_apostrophe)) is None


def test_a_rewrite_that_does_not_parse_is_not_proposed(providers):
    # 'KY'AND: the apostrophe closes a string; doubling it leaves one open
    sql = "SELECT id FROM providers WHERE name='KY'AND id = 'x"
    assert QuoteRepair("sqlite").propose(sql, sqlite_error(providers, sql)) is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM claims WHERE provider_name = 'St. Luke\\'s Hospital'",
        "SELECT count(*) FROM claims WHERE provider_name = 'St. Luke's Hospital'",
    ],
)
def test_the_guards_refusal_on_a_server_is_repaired_as_a_syntax_error(sql):
    # a server's statement the guard cannot tokenize is refused unrun, with no engine message
    with pytest.raises(UncheckableSQL) as caught:
        admit(sql, "postgres")
    fixed = QuoteRepair("postgres").propose(sql, str(caught.value))
    assert fixed == "SELECT count(*) FROM claims WHERE provider_name = 'St. Luke''s Hospital'"
    admit(fixed, "postgres")  # the guard reads it now
