"""ValueRepair through the real sandbox, on SQLite and DuckDB: a string filter that matches no row
is grounded in the column that holds its literal, doubtful cases propose nothing, and the
database file is never written."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import duckdb
import pytest

from pipelines.contracts import DatabaseRef
from pipelines.repair.values import ValueRepair
from pipelines.sandbox import Sandbox
from pipelines.schema import introspect

SCHEMA = """
CREATE TABLE airlines (uid INTEGER PRIMARY KEY, Airline TEXT, Abbreviation TEXT, Country TEXT);
CREATE TABLE airports (AirportCode TEXT PRIMARY KEY, City TEXT, AirportName TEXT);
CREATE TABLE flights (Airline INTEGER REFERENCES airlines(uid), FlightNo INTEGER,
                      DestAirport TEXT REFERENCES airports(AirportCode));
INSERT INTO airlines VALUES (1, 'JetBlue Airways', 'JetBlue', 'USA'),
                            (2, 'Virgin America', 'Virgin', 'USA'),
                            (3, 'Aer Lingus', 'Aer Lingus', 'Ireland');
INSERT INTO airports VALUES ('ABZ', 'Aberdeen ', 'Aberdeen Dyce'), ('ALN', 'Alton', 'Alton '),
                            ('APG', 'Aberdeen', 'Phillips AAF'), ('ORK', 'Cork', 'O''Brien Field');
INSERT INTO flights VALUES (1, 28, 'ABZ'), (1, 29, 'ALN'), (2, 44, 'ORK');
"""


@pytest.fixture(params=["sqlite", "duckdb"])
def db(request, tmp_path: Path) -> DatabaseRef:
    if request.param == "sqlite":
        path = tmp_path / "flights.sqlite"
        conn = sqlite3.connect(path)
        conn.executescript(SCHEMA)
        conn.commit()
    else:
        path = tmp_path / "flights.duckdb"
        conn = duckdb.connect(str(path))
        for statement in filter(str.strip, SCHEMA.split(";")):
            conn.execute(statement)
    conn.close()
    return DatabaseRef(db_id="flights", path=str(path), dialect=request.param)


def propose(db: DatabaseRef, sql: str) -> str | None:
    sandbox = Sandbox()
    repair = ValueRepair(introspect(db, 0))
    return asyncio.run(repair.propose(sql, lambda probe: sandbox.aexecute(probe, db)))


def rows(db: DatabaseRef, sql: str) -> list[tuple]:
    result = Sandbox().execute(sql, db)
    assert result.ok, result.error
    return sorted(result.rows)


def test_a_literal_in_the_wrong_column_moves_to_the_one_that_holds_it(db):
    fixed = propose(db, "SELECT Country FROM airlines WHERE Abbreviation = 'JetBlue Airways'")

    assert fixed is not None and "Airline = 'JetBlue Airways'" in fixed
    assert rows(db, fixed) == [("USA",)]


def test_a_literal_with_another_case_takes_the_stored_spelling(db):
    fixed = propose(
        db, "SELECT T1.Country FROM airlines AS T1 WHERE T1.Airline = 'jetblue airways'"
    )

    assert fixed is not None and "T1.Airline = 'JetBlue Airways'" in fixed


def test_the_stored_value_keeps_its_padding(db):
    fixed = propose(db, "SELECT City FROM airports WHERE AirportName = 'Alton'")

    assert fixed is not None and "AirportName = 'Alton '" in fixed
    assert rows(db, fixed) == [("Alton",)]  # the sandbox trims cells, the filter must not


def test_a_filter_in_a_joined_table_is_qualified_with_its_alias(db):
    sql = (
        "SELECT count(*) FROM flights AS T1 JOIN airlines AS T2 ON T1.Airline = T2.uid "
        "WHERE T2.Country = 'virgin america'"
    )
    fixed = propose(db, sql)

    assert fixed is not None and "T2.Airline = 'Virgin America'" in fixed
    assert rows(db, fixed) == [(1,)]


def test_a_filter_inside_a_subquery_is_grounded_in_its_own_scope(db):
    sql = (
        "SELECT FlightNo FROM flights WHERE Airline IN "
        "(SELECT uid FROM airlines WHERE Abbreviation = 'Virgin America')"
    )
    fixed = propose(db, sql)

    assert fixed is not None and rows(db, fixed) == [(44,)]


def test_a_quote_in_the_literal_stays_a_literal(db):
    fixed = propose(db, "SELECT City FROM airports WHERE City = 'o''brien field'")

    assert fixed is not None and rows(db, fixed) == [("Cork",)]


def test_a_key_filtered_by_its_rows_name_takes_the_key(db):
    # City 'Alton' and AirportName 'Alton ' both name airport ALN: one row, one key.
    fixed = propose(db, "SELECT FlightNo FROM flights WHERE DestAirport = 'alton'")

    assert fixed is not None and "DestAirport = 'ALN'" in fixed
    assert rows(db, fixed) == [(29,)]


def test_an_integer_key_named_by_its_row_takes_the_number(db):
    fixed = propose(db, "SELECT count(*) FROM flights WHERE Airline = 'Virgin America'")

    if db.dialect == "sqlite":
        assert fixed is not None and "Airline = 2" in fixed
        assert rows(db, fixed) == [(1,)]
    else:  # DuckDB cannot compare an INTEGER with that text: the query errors, nothing to ground
        assert fixed is None


def test_a_key_that_excludes_its_rows_name_excludes_the_key(db):
    sql = "SELECT FlightNo FROM flights WHERE Airline != 'Virgin America'"  # excludes nothing
    fixed = asyncio.run(
        ValueRepair(introspect(db, 0)).propose(
            sql, lambda probe: Sandbox().aexecute(probe, db), negated_only=True
        )
    )

    if db.dialect == "sqlite":
        assert fixed is not None and "Airline <> 2" in fixed
        assert rows(db, fixed) == [(28,), (29,)]
    else:  # DuckDB cannot compare an INTEGER with that text: nothing to ground
        assert fixed is None


def test_an_excluded_literal_moves_to_the_column_that_holds_it(db):
    fixed = propose(db, "SELECT Country FROM airlines WHERE Abbreviation != 'JetBlue Airways'")

    assert fixed is not None and "Airline <> 'JetBlue Airways'" in fixed
    assert rows(db, fixed) == [("Ireland",), ("USA",)]


def test_negated_only_leaves_equality_filters_alone(db):
    repair = ValueRepair(introspect(db, 0))
    sql = "SELECT Country FROM airlines WHERE Abbreviation = 'JetBlue Airways'"

    assert not repair.excludes_a_literal(sql)
    assert repair.excludes_a_literal("SELECT Country FROM airlines WHERE Country <> 'USA'")
    assert not repair.excludes_a_literal("SELECT Country FROM airlines WHERE")
    fixed = asyncio.run(
        repair.propose(sql, lambda probe: Sandbox().aexecute(probe, db), negated_only=True)
    )
    assert fixed is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT Country FROM airlines WHERE Country != 'Ireland'",  # the column holds it
        "SELECT Country FROM airlines WHERE Country != 'Germany'",  # no column holds it
        "SELECT FlightNo FROM flights WHERE DestAirport = 'Aberdeen'",  # names two airports
        "SELECT Country FROM airlines WHERE Airline = 'JetBlue Airways' AND uid = 3",  # holds it
        "SELECT Country FROM airlines WHERE Airline = 'Lufthansa'",  # no column holds it
        "SELECT AirportCode FROM airports WHERE AirportName = 'aberdeen'",  # City: two spellings
        "SELECT Country FROM airlines WHERE Country = 'aer lingus'",  # two columns hold it
        "SELECT Country FROM airlines WHERE uid = 1",  # no string filter
        "SELECT Country FROM airlines WHERE",  # does not parse
    ],
)
def test_doubtful_cases_propose_nothing(db, sql):
    assert propose(db, sql) is None


def test_a_failing_probe_leaves_the_filter_as_written(db):
    repair = ValueRepair(introspect(db, 0))

    async def broken(probe: str):
        return Sandbox().execute("SELECT * FROM no_such_table", db)

    sql = "SELECT Country FROM airlines WHERE Abbreviation = 'JetBlue Airways'"
    assert asyncio.run(repair.propose(sql, broken)) is None


def test_probes_never_write_the_database(db):
    before = hashlib.sha256(Path(db.path).read_bytes()).hexdigest()
    propose(db, "SELECT Country FROM airlines WHERE Abbreviation = 'x''); DROP TABLE airlines; --'")
    propose(db, "SELECT Country FROM airlines WHERE Abbreviation = 'JetBlue Airways'")

    assert hashlib.sha256(Path(db.path).read_bytes()).hexdigest() == before
    assert rows(db, "SELECT count(*) FROM airlines") == [(3,)]


def test_each_filter_has_one_probe_over_the_text_columns_in_scope(db):
    repair = ValueRepair(introspect(db, 0))
    (probe,) = repair.probes(
        "SELECT T1.FlightNo FROM flights AS T1 JOIN airlines AS T2 ON T1.Airline = T2.uid "
        "WHERE T2.Abbreviation = 'Virgin America' AND T2.Abbreviation = 'Virgin America'"
    )

    assert (probe.column, probe.literal) == ("Abbreviation", "Virgin America")
    assert [s.alias for s in probe.sources] == ["T1", "T2"]
    for column in ("Airline", "Abbreviation", "Country", "DestAirport"):
        assert f"'{column}'" in probe.sql
    assert "'FlightNo'" not in probe.sql  # an integer column cannot hold the literal


def test_a_double_quoted_string_on_sqlite_is_grounded_as_a_literal(db):
    fixed = propose(db, 'SELECT Country FROM airlines WHERE Abbreviation = "JetBlue Airways"')

    if db.dialect == "sqlite":  # SQLite reads "JetBlue Airways" as a string: no such column
        assert fixed is not None and "Airline = 'JetBlue Airways'" in fixed
        assert rows(db, fixed) == [("USA",)]
    else:  # DuckDB binds it as a column: the query errors, nothing to ground
        assert fixed is None


def test_a_double_quoted_column_name_is_not_read_as_a_string(db):
    # "Airline" names a column in scope: a column comparison, not a filter on a value
    assert propose(db, 'SELECT Country FROM airlines WHERE Abbreviation = "Airline"') is None
