"""JoinRepair on a real SQLite database: a JOIN whose ON condition names no key between the new
table and those before it gets the schema's one join key, and a condition that joins, or a
doubtful one, is left as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.repair.joins import JoinRepair
from pipelines.schema import introspect
from tests.pipelines.conftest import read_sorted as run
from tests.pipelines.conftest import sqlite_db


@pytest.fixture
def cars_db(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "cars.sqlite",
        """
        CREATE TABLE car_makers (Id INTEGER PRIMARY KEY, Maker TEXT);
        CREATE TABLE car_names (MakeId INTEGER PRIMARY KEY, Model TEXT,
                                Maker INTEGER REFERENCES car_makers(Id));
        CREATE TABLE cars_data (Id INTEGER PRIMARY KEY REFERENCES car_names(MakeId),
                                Accelerate REAL, Year INTEGER);
        CREATE TABLE dealers (DealerId INTEGER PRIMARY KEY, Home INTEGER REFERENCES car_makers(Id),
                              Away INTEGER REFERENCES car_makers(Id));
        INSERT INTO car_makers VALUES (1, 'amc'), (2, 'ford');
        INSERT INTO car_names VALUES (1, 'hornet', 1), (2, 'pinto', 2), (3, 'gremlin', 1);
        INSERT INTO cars_data VALUES (1, 12.0, 1970), (2, 15.5, 1971), (3, 13.5, 1970);
        INSERT INTO dealers VALUES (1, 1, 2);
        """,
    )


@pytest.fixture
def repair(cars_db) -> JoinRepair:
    return JoinRepair(introspect(cars_db, 0))


def test_a_condition_on_the_tables_before_gets_the_join_key(repair, cars_db):
    sql = (
        "SELECT T2.Accelerate FROM car_names AS T1 JOIN cars_data AS T2 "
        "ON T1.MakeId = T1.Maker WHERE T1.Model = 'hornet'"
    )
    assert run(cars_db, sql) == [(12.0,), (13.5,), (15.5,)]  # every car's: a cross join
    fixed = repair.propose(sql)
    assert fixed is not None and "ON T1.MakeId = T2.Id" in fixed
    assert run(cars_db, fixed) == [(12.0,)]


def test_a_condition_on_the_new_table_alone_gets_the_join_key(repair, cars_db):
    sql = (
        "SELECT DISTINCT T1.Maker FROM car_makers AS T1 JOIN car_names AS T2 ON T1.Id = T2.Maker "
        "JOIN cars_data AS T3 ON T3.Id = T3.Id WHERE T3.Year = 1971"
    )
    fixed = repair.propose(sql)
    assert fixed is not None and "ON T2.MakeId = T3.Id" in fixed
    assert "ON T1.Id = T2.Maker" in fixed  # the join that joins stays
    assert run(cars_db, fixed) == [("ford",)]


@pytest.mark.parametrize(
    "sql",
    [
        # joins already
        "SELECT Model FROM car_names AS T1 JOIN cars_data AS T2 ON T1.MakeId = T2.Id",
        # an unqualified column: which table it names is the engine's to say
        "SELECT Model FROM car_names JOIN cars_data ON MakeId = Id",
        # two keys between dealers and car_makers (Home, Away): no single one to choose
        "SELECT T2.Maker FROM dealers AS T1 JOIN car_makers AS T2 ON T1.DealerId = T1.Home",
        # no key at all between the tables
        "SELECT T1.Maker FROM car_makers AS T1 JOIN cars_data AS T2 ON T1.Id = T1.Id",
        # a derived table: its columns are not the schema's
        "SELECT * FROM (SELECT MakeId FROM car_names) AS T1 JOIN cars_data AS T2 ON T2.Id = T2.Id",
        "SELECT (((",
    ],
)
def test_joins_that_join_and_doubtful_ones_are_left_as_written(repair, sql):
    assert repair.propose(sql) is None


def test_a_join_in_a_subquery_is_repaired_in_place(repair, cars_db):
    sql = (
        "SELECT Maker FROM car_makers WHERE Id IN (SELECT T1.Maker FROM car_names AS T1 "
        "JOIN cars_data AS T2 ON T1.Model = T1.Model WHERE T2.Year = 1971)"
    )
    fixed = repair.propose(sql)
    assert fixed is not None and run(cars_db, fixed) == [("ford",)]
