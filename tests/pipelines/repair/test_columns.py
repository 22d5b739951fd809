"""ColumnRepair on a real SQLite database: each kind of unbound column the engine reports is
rewritten to SQL that executes and means the obvious thing, and doubtful cases propose nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.repair.columns import ColumnRepair, words
from pipelines.schema import introspect
from tests.pipelines.conftest import read_sorted as run
from tests.pipelines.conftest import sqlite_db


@pytest.fixture
def pets_db(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "pets.sqlite",
        """
        CREATE TABLE Student (StuID INTEGER PRIMARY KEY, LName TEXT, Age INTEGER);
        CREATE TABLE Pets (PetID INTEGER PRIMARY KEY, PetType TEXT, pet_age INTEGER, weight REAL);
        CREATE TABLE Has_Pet (StuID INTEGER REFERENCES Student(StuID), PetID INTEGER REFERENCES Pets(PetID));
        CREATE TABLE Treatment_Types (treatment_type_code TEXT PRIMARY KEY, treatment_type_description TEXT);
        CREATE TABLE Treatments (treatment_id INTEGER PRIMARY KEY, PetID INTEGER REFERENCES Pets(PetID),
                                 treatment_type_code TEXT REFERENCES Treatment_Types(treatment_type_code));
        INSERT INTO Student VALUES (1,'Smith',18),(2,'Kim',20);
        INSERT INTO Pets VALUES (1,'cat',3,12.0),(2,'dog',2,13.4),(3,'dog',1,9.3);
        INSERT INTO Has_Pet VALUES (1,1),(1,2),(2,3);
        INSERT INTO Treatment_Types VALUES ('EXAM','Physical examination'),('VAC','Vaccination');
        INSERT INTO Treatments VALUES (1,1,'EXAM'),(2,2,'VAC');
        """,
    )


@pytest.fixture
def repair(pets_db) -> ColumnRepair:
    return ColumnRepair(introspect(pets_db, 0))


def error_of(db: DatabaseRef, sql: str) -> str:
    with pytest.raises(sqlite3.Error) as caught:
        run(db, sql)
    return str(caught.value)


def repaired(repair: ColumnRepair, db: DatabaseRef, sql: str, rounds: int = 3) -> str | None:
    """Propose-and-execute until the SQL runs, as the pipeline does."""
    for _ in range(rounds):
        try:
            run(db, sql)
            return sql
        except sqlite3.Error as exc:
            proposal = repair.propose(sql, str(exc))
            if proposal is None:
                return None
            sql = proposal
    return None


def test_words_of_both_spellings_agree():
    assert words("PetType") == words("pet_type") == {"pet", "type"}
    assert words("StuID") == {"stu", "id"}


def test_a_spelling_of_the_same_letters_binds_to_the_schema_column(repair, pets_db):
    sql = "SELECT pet_type, count(*) FROM pets GROUP BY pet_type"
    assert error_of(pets_db, sql) == "no such column: pet_type"
    fixed = repaired(repair, pets_db, sql)
    assert fixed is not None
    assert run(pets_db, fixed) == [("cat", 1), ("dog", 2)]


def test_a_column_named_by_one_of_its_words_binds_when_one_column_has_it(repair, pets_db):
    fixed = repaired(
        repair, pets_db, "SELECT PetType, avg(age), max(age) FROM Pets GROUP BY PetType"
    )
    assert fixed is not None
    assert run(pets_db, fixed) == [("cat", 3.0, 3), ("dog", 1.5, 2)]


def test_the_wrong_alias_moves_to_the_one_table_in_scope_that_has_the_column(repair, pets_db):
    sql = "SELECT T2.LName FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID WHERE T2.PetID = 3"
    fixed = repaired(repair, pets_db, sql)
    assert fixed is not None and "T1.LName" in fixed
    assert run(pets_db, fixed) == [("Kim",)]


def test_a_wrong_alias_in_a_join_condition_proposes_nothing_when_the_move_compares_a_column_with_itself(
    repair, pets_db
):
    # Only Pets has PetType: moving S.PetType there gives ON P.PetType = P.PetType, a cross join
    sql = "SELECT count(*) FROM Student AS S JOIN Pets AS P ON S.PetType = P.PetType"
    assert error_of(pets_db, sql) == "no such column: S.PetType"
    assert repair.propose(sql, "no such column: S.PetType") is None
    # the same move outside a comparison with its own column still binds
    assert repair.propose(
        "SELECT S.PetType FROM Student AS S JOIN Has_Pet AS H ON S.StuID = H.StuID "
        "JOIN Pets AS P ON H.PetID = P.PetID",
        "no such column: S.PetType",
    ) == (
        "SELECT P.PetType FROM Student AS S JOIN Has_Pet AS H ON S.StuID = H.StuID "
        "JOIN Pets AS P ON H.PetID = P.PetID"
    )


def test_a_column_of_a_table_not_joined_is_reached_through_its_join_key(repair, pets_db):
    sql = "SELECT T2.treatment_type_description FROM Pets AS T1 JOIN Treatments AS T2 ON T1.PetID = T2.PetID"
    fixed = repaired(repair, pets_db, sql)
    assert fixed is not None and "JOIN Treatment_Types" in fixed
    assert run(pets_db, fixed) == [("Physical examination",), ("Vaccination",)]


def test_an_ambiguous_column_is_qualified_with_the_first_table_in_from(repair, pets_db):
    sql = "SELECT count(*) FROM Has_Pet JOIN Pets ON Has_Pet.PetID = Pets.PetID WHERE PetID > 1"
    assert "ambiguous" in error_of(pets_db, sql)
    fixed = repaired(repair, pets_db, sql)
    assert fixed is not None and "Has_Pet.PetID > 1" in fixed
    assert run(pets_db, fixed) == [(2,)]


def test_equally_good_columns_propose_nothing(repair, pets_db):
    # "id" is a word of StuID and PetID alike: the LLM fixer decides, not a guess.
    sql = "SELECT id FROM Has_Pet"
    assert repair.propose(sql, error_of(pets_db, sql)) is None


def test_other_errors_and_unparsable_sql_propose_nothing(repair, pets_db):
    assert repair.propose("SELECT PetType FROM Pets", "misuse of aggregate: count()") is None
    assert repair.propose("SELECT (((", "no such column: x") is None
    assert (
        repair.propose("SELECT nothing_like_it FROM Pets", "no such column: nothing_like_it")
        is None
    )
    # one alias for two tables: sqlglot's scope analysis refuses it; no exception escapes
    twice = "SELECT s.LName, count(s.PetID) FROM Student s JOIN Has_Pet s ON s.StuID = s.StuID GROUP BY s.LName"
    assert repair.propose(twice, "no such column: s.PetID") is None


def test_duckdb_messages_are_read_too(repair):
    assert (
        repair.propose(
            'SELECT "pet_type" FROM Pets',
            'Binder Error: Referenced column "pet_type" not found in FROM clause!',
        )
        is not None
    )
    assert (
        repair.propose(
            "SELECT T1.LName FROM Has_Pet AS T1 JOIN Student AS T2 ON T1.StuID = T2.StuID",
            'Binder Error: Table "T1" does not have a column named "LName"',
        )
        is not None
    )


@pytest.fixture
def world_db(tmp_path: Path) -> DatabaseRef:
    """Countries with many language rows each (one with none), cities with one country each,
    and a 1:1 table keyed by the country code."""
    return sqlite_db(
        tmp_path / "world.sqlite",
        """
        CREATE TABLE country (Code TEXT PRIMARY KEY, Name TEXT, Continent TEXT, GovernmentForm TEXT);
        CREATE TABLE countrylanguage (CountryCode TEXT REFERENCES country(Code), Language TEXT,
                                      Percentage REAL, PRIMARY KEY (CountryCode, Language));
        CREATE TABLE city (ID INTEGER PRIMARY KEY, CityName TEXT, CountryCode TEXT REFERENCES country(Code));
        CREATE TABLE capital (Code TEXT PRIMARY KEY REFERENCES country(Code), Capital TEXT);
        INSERT INTO country VALUES ('GBR','United Kingdom','Europe','Monarchy'),
            ('FRA','France','Europe','Republic'), ('CAN','Canada','America','Monarchy'),
            ('ATA','Antarctica','Antarctica','Co-administrated');
        INSERT INTO countrylanguage VALUES ('GBR','English',97.3),('GBR','Welsh',0.9),
            ('FRA','French',93.6),('CAN','English',60.4),('CAN','French',23.4);
        INSERT INTO city VALUES (1,'London','GBR'),(2,'Paris','FRA'),(3,'Ottawa','CAN');
        INSERT INTO capital VALUES ('GBR','London'),('FRA','Paris');
        """,
    )


@pytest.fixture
def world_repair(world_db) -> ColumnRepair:
    return ColumnRepair(introspect(world_db, 0))


def test_a_negated_filter_on_the_many_side_means_no_such_row(world_repair, world_db):
    # A join would keep the UK and Canada (each has a non-English row); the question means the
    # countries with no English row, Antarctica (no rows at all) among them.
    sql = "SELECT Code FROM country WHERE Language != 'English' AND GovernmentForm <> 'Republic'"
    fixed = repaired(world_repair, world_db, sql)
    assert fixed is not None and "NOT EXISTS" in fixed and "JOIN" not in fixed
    assert run(world_db, fixed) == [("ATA",)]
    for negated in ("Language NOT IN ('English')", "NOT Language = 'English'"):
        fixed = repaired(world_repair, world_db, f"SELECT Code FROM country WHERE {negated}")
        assert fixed is not None and run(world_db, fixed) == [("ATA",), ("FRA",)]
    fixed = repaired(
        world_repair, world_db, "SELECT Name FROM country WHERE Language NOT LIKE 'Eng%'"
    )
    assert fixed is not None and run(world_db, fixed) == [("Antarctica",), ("France",)]


def test_a_many_side_column_used_otherwise_keeps_the_join(world_repair, world_db):
    positive = repaired(
        world_repair, world_db, "SELECT Name FROM country WHERE Language = 'French'"
    )
    assert positive is not None and "JOIN countrylanguage" in positive
    assert run(world_db, positive) == [("Canada",), ("France",)]
    selected = repaired(
        world_repair,
        world_db,
        "SELECT Name, Language FROM country WHERE Language <> 'English'",
    )
    assert selected is not None and "NOT EXISTS" not in selected
    assert run(world_db, selected) == [
        ("Canada", "French"),
        ("France", "French"),
        ("United Kingdom", "Welsh"),
    ]


def test_a_negated_filter_across_a_to_one_key_keeps_the_join(world_repair, world_db):
    # Each city has one country, each capital row one country: "not in Europe" is a plain filter.
    to_one = repaired(
        world_repair, world_db, "SELECT CityName FROM city WHERE Continent <> 'Europe'"
    )
    assert to_one is not None and "NOT EXISTS" not in to_one
    assert run(world_db, to_one) == [("Ottawa",)]
    one_to_one = repaired(
        world_repair, world_db, "SELECT Name FROM country WHERE Capital != 'Paris'"
    )
    assert one_to_one is not None and "NOT EXISTS" not in one_to_one
    assert run(world_db, one_to_one) == [("United Kingdom",)]


def test_a_second_join_to_the_same_table_takes_a_fresh_alias(world_repair, world_db):
    # Round 1: the negated Language filter becomes NOT EXISTS (alias j1 inside it); round 2
    # joins countrylanguage again for Percentage, under another alias than the subquery's.
    sql = "SELECT Code FROM country WHERE Language NOT LIKE 'Eng%' AND Percentage > 50"
    fixed = repaired(world_repair, world_db, sql)
    assert fixed is not None and "NOT EXISTS" in fixed and "AS j2" in fixed
    assert run(world_db, fixed) == [("FRA",)]


def test_a_key_named_after_its_table_leads_to_that_tables_column(tmp_path):
    # "T2.course" where T2 (course_arrange) holds Course_ID: the words match the key, but the
    # course itself is Course of the table the key references.
    db = sqlite_db(
        tmp_path / "course.sqlite",
        """
        CREATE TABLE course (Course_ID INTEGER PRIMARY KEY, Course TEXT);
        CREATE TABLE teacher (Teacher_ID INTEGER PRIMARY KEY, Name TEXT);
        CREATE TABLE course_arrange (Course_ID INTEGER REFERENCES course(Course_ID),
                                     Teacher_ID INTEGER REFERENCES teacher(Teacher_ID), Grade INTEGER);
        INSERT INTO course VALUES (1, 'Math'), (2, 'Art');
        INSERT INTO teacher VALUES (1, 'Joseph'), (2, 'Anne');
        INSERT INTO course_arrange VALUES (1, 1, 5), (2, 2, 3), (2, 1, 4);
        """,
    )
    repair = ColumnRepair(introspect(db, 0))
    sql = "SELECT T1.Name, T2.course FROM teacher AS T1 JOIN course_arrange AS T2 ON T1.Teacher_ID = T2.Teacher_ID"
    fixed = repaired(repair, db, sql)
    assert fixed is not None and "JOIN course AS" in fixed
    assert run(db, fixed) == [("Anne", "Art"), ("Joseph", "Art"), ("Joseph", "Math")]
    # a column whose words contain the name and that is no key still binds in scope
    fixed = repaired(
        repair,
        db,
        "SELECT T1.Name, T2.grade_value FROM teacher AS T1 JOIN course_arrange AS T2 "
        "ON T1.Teacher_ID = T2.Teacher_ID WHERE T2.Course_ID = 1",
    )
    assert fixed is not None and "T2.Grade" in fixed
    assert run(db, fixed) == [("Joseph", 5)]


def test_a_subquerys_column_that_binds_there_is_left_alone(tmp_path):
    # The engine cannot bind the outer visitor_id (visitor has ID); the subquery's visitor_id
    # binds in visit and must not become the outer ID (a correlated reference to the outer row).
    db = sqlite_db(
        tmp_path / "museum.sqlite",
        """
        CREATE TABLE visitor (ID INTEGER PRIMARY KEY, Name TEXT);
        CREATE TABLE museum (Museum_ID INTEGER PRIMARY KEY, Open_Year TEXT);
        CREATE TABLE visit (Museum_ID INTEGER REFERENCES museum(Museum_ID),
                            visitor_ID INTEGER REFERENCES visitor(ID));
        INSERT INTO visitor VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy');
        INSERT INTO museum VALUES (1, '2008'), (2, '2012');
        INSERT INTO visit VALUES (1, 1), (2, 2);
        """,
    )
    sql = (
        "SELECT count(*) FROM visitor WHERE visitor_id NOT IN (SELECT visitor_id FROM visit "
        "WHERE museum_id IN (SELECT museum_id FROM museum WHERE open_year > '2010'))"
    )
    fixed = repaired(ColumnRepair(introspect(db, 0)), db, sql)
    assert fixed is not None and "SELECT visitor_id FROM visit" in fixed
    assert run(db, fixed) == [(2,)]  # Ann and Cy; Bo visited the museum opened in 2012


# PostgreSQL names the column it could not bind in its own words; the claims copy on the test
# server, with answers the model wrote for it.
@pytest.mark.parametrize(
    ("sql", "rewritten"),
    [
        (
            "SELECT SUM(plan_paid) FROM pharmacy_fills WHERE drug_name = 'Eliquis'",
            "SELECT SUM(plan_paid) FROM pharmacy_fills JOIN drugs AS j1 "
            "ON pharmacy_fills.ndc = j1.ndc WHERE j1.drug_name = 'Eliquis'",
        ),
        (
            "SELECT COUNT(DISTINCT m.member_id) FROM members m JOIN claims c "
            "ON m.member_id = c.member_id WHERE c.pcp_provider_id IS NOT NULL",
            "SELECT COUNT(DISTINCT m.member_id) FROM members AS m JOIN claims AS c "
            "ON m.member_id = c.member_id WHERE m.pcp_provider_id IS NOT NULL",
        ),
    ],
)
def test_postgres_messages_are_read(claims_pg, sql: str, rewritten: str) -> None:
    import psycopg

    _, server = claims_pg
    with psycopg.connect(server.path, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn) as refused:
            conn.execute(sql)
        fix = ColumnRepair(introspect(server, sample_values=0)).propose(sql, str(refused.value))
        assert fix == rewritten
        assert conn.execute(fix).fetchall()  # runs on the server
